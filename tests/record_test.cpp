// The run record (issue 25): every catalogue entry's case written by bench's own JSON
// writer (bench/run/run_output.h) and read back by the report (report/run.h), a verdict at the
// end; name() unique across the catalogue; the legacy adapter the inverse of name(); the
// cuda:cnn sweep that a regular expression once lost.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/run/run_output.h"
#include "model/case_key.h"
#include "model/catalogue.h"
#include "model/constants.h"
#include "model/bound.h"
#include "model/legacy.h"
#include "model/record.h"
#include "model/paired.h"
#include "report/format.h"
#include "report/report.h"
#include "report/run.h"
#include "tests/test_data.h"

namespace pipebench {
namespace {

using nlohmann::json;
using model::CaseKey;
using model::Family;

CaseKey e2e(const std::string& baseline, int workers, const std::string& variant = "",
            const std::string& param = "", const std::vector<std::string>& callbacks = {}) {
  return model::end_to_end_case("imagenet_train", baseline, workers, variant, param, callbacks);
}

CaseKey loader(int workers, const std::string& layout = "", const std::string& cache = "", int shards = 0) {
  return model::loader_case("imagenet_train", workers, layout, cache, shards);
}

CaseKey read(const std::string& layout, const std::string& cache, int shards = 0) {
  return model::read_case(layout, cache, shards);
}

// Every kind of key bench registers, one or more of each catalogue entry.
std::vector<CaseKey> catalogue_keys() {
  std::vector<CaseKey> keys;
  for (const auto& b : model::baselines()) {
    CaseKey step;
    step.family = Family::kTrainStep;
    step.baseline = std::string(b.name);
    keys.push_back(step);
    for (int w : {1, 2}) keys.push_back(e2e(std::string(b.name), w));
  }
  for (const auto& c : model::candidate_kinds()) {
    if (c.kind == "presized" || c.kind == "presized_large") {  // its side a typed field (record version 2)
      keys.push_back(model::presized(model::sample_case("imagenet_train"), 256, c.kind));
      if (c.end_to_end) keys.push_back(model::presized(e2e("emulated", 2), 256, c.kind));
      continue;
    }
    const std::string param = c.kind == "without" ? "horizontal_flip" : "auto";
    keys.push_back(model::sample_case("imagenet_train", std::string(c.kind), param));
    if (c.end_to_end) keys.push_back(e2e("emulated", 2, std::string(c.kind), param));
  }
  keys.push_back(model::sample_case("imagenet_train", "without", "horizontal_flip#2"));
  keys.push_back(model::sample_case("imagenet_train"));
  keys.push_back(e2e("emulated", 2, "", "", {"checkpoint-sync"}));
  keys.push_back(e2e("emulated", 2, "", "", {"log-async", "checkpoint-async"}));
  for (int k : {1, 2}) keys.push_back(model::batch_op_price_case("mixup", "imagenet_train", k));
  for (const char* layout : {"files", "shards"})
    for (const char* cache : {"warm", "cold"}) keys.push_back(read(layout, cache));
  for (int n : {64, 256}) {
    keys.push_back(read("shards", "cold", n));
    keys.push_back(loader(2, "shards", "cold", n));
  }
  keys.push_back(loader(2, "files", "warm"));
  for (int w : {1, 2}) keys.push_back(loader(w));
  CaseKey st = loader(1);
  st.family = Family::kStageTimers;
  keys.push_back(st);
  CaseKey sampler = loader(2);
  sampler.family = Family::kSystemSampler;
  keys.push_back(sampler);
  CaseKey decode;
  decode.family = Family::kDecode;
  decode.op = "turbo_scaled";
  decode.detail = "target:224";
  keys.push_back(decode);
  keys.push_back(model::transform_case("random_affine", "degrees:15/translate:[0.1/0.1]"));
  CaseKey nvjpeg = model::decode_case("nvjpeg");  // UseRealTime
  nvjpeg.timed_by = "real_time";
  keys.push_back(nvjpeg);
  keys.push_back(model::decode_case("turbo_full"));
  for (const std::string_view op : model::kDeviceBatchOps)
    for (const char* format : {"uint8_nhwc", "float32_nchw"})
      for (const int n : model::kDeviceOpBatches) keys.push_back(model::device_op_case(std::string(op), format, n));
  CaseKey h2d;
  h2d.family = Family::kH2D;
  h2d.op = "pinned";
  h2d.detail = "async/batch:64";
  h2d.timed_by = "manual_time";
  keys.push_back(h2d);
  CaseKey collate;
  collate.family = Family::kCollate;
  collate.op = "u8_nchw";
  collate.detail = "pageable/batch:64";
  keys.push_back(collate);
  CaseKey region;
  region.family = Family::kRegion;
  region.op = "Batch";
  keys.push_back(region);
  return keys;
}

TEST(CaseKey, NamesAreUniqueAcrossTheCatalogue) {
  std::set<std::string> names;
  for (const auto& k : catalogue_keys()) EXPECT_TRUE(names.insert(k.name()).second) << k.name();
  EXPECT_EQ(e2e("cuda:cnn", 4).name(), "BM_EndToEnd/imagenet_train/cuda:cnn/workers:4");
  EXPECT_EQ(e2e("emulated", 2, "decode", "auto").name(), "BM_EndToEnd/imagenet_train/decode:auto/emulated/workers:2");
  EXPECT_EQ(read("shards", "cold", 64).name(), "BM_Read/shards-64/cold");
  EXPECT_EQ(loader(2, "files", "warm").name(), "BM_Loader/imagenet_train/files/warm/workers:2");
  EXPECT_EQ(model::decode_case("nvjpeg").name(), "BM_Decode/nvjpeg");
  EXPECT_EQ(model::device_op_case("mixup", "uint8_nhwc", 64).name(), "BM_Transform/mixup/device/uint8_nhwc/batch:64");
  EXPECT_EQ(model::device_op_case("mixup", "uint8_nhwc", 64).timed_by, "manual_time");
  EXPECT_EQ(model::batch_op_price_case("mixup", "imagenet_train", 1).name(), "BM_Transform/mixup/pipeline:imagenet_train");
  EXPECT_EQ(model::batch_op_price_case("mixup", "imagenet_train", 2).name(), "BM_Transform/mixup/pipeline:imagenet_train#2");
  EXPECT_EQ(e2e("emulated", 2, "", "", {"log-async", "checkpoint-async"}).name(),
            "BM_EndToEnd/imagenet_train/emulated/workers:2/callbacks:log-async+checkpoint-async");
  EXPECT_EQ(model::presized(model::sample_case("imagenet_train"), 256).name(), "BM_Sample/imagenet_train/presized:256");
}

// Record version 2 made three small grammars typed fields; a version 1 key object (text)
// and a version 0 name still give the same key through the legacy adapter.
TEST(CaseKey, Version1KeysGiveTheTypedFields) {
  const CaseKey price = model::batch_op_price_case("mixup", "imagenet_train", 2);
  const CaseKey cbs = e2e("emulated", 2, "", "", {"log-async", "checkpoint-async"});
  const CaseKey pre = model::presized(e2e("emulated", 2), 256);
  EXPECT_EQ(price.occurrence, 2);
  EXPECT_TRUE(price.detail.empty());
  EXPECT_EQ(pre.presize_px, 256);
  // The version 1 form: detail "pipeline:<name>#k", callbacks one text, no typed fields.
  const auto v1 = [](const CaseKey& k) {
    json j = model::to_json(k);
    j.erase("callback_set");
    j.erase("occurrence");
    j.erase("presize_px");
    if (k.family == Family::kTransform && !k.pipeline.empty()) {
      j["detail"] = k.name().substr(k.name().find("pipeline:"));
      j["pipeline"] = "";
    }
    return j;
  };
  for (const CaseKey& k : {price, cbs, pre, model::batch_op_price_case("cutmix", "mine", 1)}) {
    EXPECT_EQ(model::legacy_key_v1(v1(k)), k) << k.name();
    EXPECT_EQ(model::row_key(json{{"key", v1(k)}}, 1), k) << k.name();
    EXPECT_EQ(model::row_key(json{{"key", model::to_json(k)}}, 2), k) << k.name();
    const std::string suffix = k.timed_by == "cpu_time" ? "" : "/iterations:30/" + k.timed_by;
    EXPECT_EQ(model::row_key(json{{"name", k.name() + suffix}}, 0), k) << k.name();
  }
  // Version 2 writes the set as an array, and its label for the scripts.
  EXPECT_EQ(model::to_json(cbs)["callback_set"], json({"log-async", "checkpoint-async"}));
  EXPECT_EQ(model::to_json(cbs)["callbacks"], "log-async+checkpoint-async");
  EXPECT_THROW(model::key_from_json(json{{"family", "EndToEnd"}, {"callback_set", "a+b"}}), std::invalid_argument);
  json bad = v1(pre);
  bad["variant_param"] = "big";
  EXPECT_THROW(model::legacy_key_v1(bad), std::invalid_argument);
}

TEST(CaseKey, TheLegacyAdapterIsTheInverseOfName) {
  // A file written before the record holds only names (plus Google Benchmark's suffixes).
  for (const auto& k : catalogue_keys()) {
    const std::string suffix = k.timed_by == "cpu_time" ? "" : "/iterations:30/" + k.timed_by;
    EXPECT_EQ(model::legacy_key(k.name() + suffix), k) << k.name() + suffix;
  }
  const CaseKey other = model::legacy_key("BM_Mine/x/real_time");
  EXPECT_EQ(other.family, Family::kOther);
  EXPECT_EQ(other.name(), "BM_Mine/x");
}

TEST(CaseKey, JsonRoundTripAndBadKeys) {
  for (const auto& k : catalogue_keys()) EXPECT_EQ(model::key_from_json(model::to_json(k)), k) << k.name();
  EXPECT_THROW(model::key_from_json(json{{"family", "Nope"}}), std::invalid_argument);
  EXPECT_THROW(model::key_from_json(json{{"family", "Loader"}, {"workers", "2"}}), std::invalid_argument);
  EXPECT_THROW(model::key_from_json(json::array()), std::invalid_argument);
}

TEST(Record, TypedContextParsesWholeNumbersOnly) {
  EXPECT_EQ(model::parse_number("25"), 25.0);
  EXPECT_EQ(model::parse_number("2.5e1"), 25.0);
  for (const char* bad : {"", "25abc", " 25", "+1", "0x10", "nan", "inf"})
    EXPECT_FALSE(model::parse_number(bad).has_value()) << bad;
  json ctx = {{"batch_size", "64"}, {"compute_ms", "25.000000"}, {"busy_machine", "true"},
              {"cold_resident_pct", "unknown"}, {"recipe", "64"}};
  model::type_context(ctx);
  EXPECT_EQ(ctx["batch_size"], 64);
  EXPECT_EQ(ctx["compute_ms"], 25);
  EXPECT_EQ(ctx["busy_machine"], true);
  EXPECT_EQ(ctx["cold_resident_pct"], "unknown");  // not a number: left as text
  EXPECT_EQ(ctx["recipe"], "64");                  // not a typed key
}

TEST(Record, ANewerRecordIsRefusedNamingWhoWroteIt) {
  const json doc = {{"context", {{"pipebench_record", model::kRecordVersion + 1}, {"pipebench_version", "9.0.0"}}},
                    {"benchmarks", json::array()}};
  try {
    report::load_run(doc);
    FAIL() << "a newer record must be refused";
  } catch (const report::ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("pipebench 9.0.0"), std::string::npos) << e.what();
  }
}

// --- round trips through bench's writer ---------------------------------------------------

struct Written {
  json rows = json::array();
  std::vector<CaseKey> keys;
  json sections = json::object();
  void add(const CaseKey& k, json fields) {
    fields["name"] = k.name();
    fields["run_name"] = k.name();
    fields["run_type"] = "iteration";
    fields["time_unit"] = "ms";
    if (!fields.contains("real_time")) fields["real_time"] = 1.0;
    if (!fields.contains("cpu_time")) fields["cpu_time"] = 1.0;
    rows.push_back(std::move(fields));
    keys.push_back(k);
  }
};

// Writes `w` with bench's own writer (strings in the context, as Google Benchmark's
// AddCustomContext gives them) and reads it back as pipebench-report does.
report::BenchRun write_and_read(const Written& w, const std::string& baseline,
                                std::vector<std::pair<std::string, std::string>> extra = {}) {
  json doc = {{"context",
               {{"recipe", "imagenet_train"}, {"baseline", baseline}, {"batch_size", "64"},
                {"hardware_threads", "2"}, {"cores_available", "2.000000"}, {"compute_ms", "25.000000"},
                {"dataset", "/data"}, {"dataset_images", "1000"}, {"dataset_bytes", "100000000"}}},
              {"benchmarks", w.rows}};
  bench::RunEpilogue epilogue;
  epilogue.context = std::move(extra);
  for (const auto& [key, value] : w.sections.items()) epilogue.sections.emplace_back(key, value.dump());
  const auto path = testing::scratch_dir("record_roundtrip") / "run.json";
  bench::write_run_json(doc.dump(), w.keys, epilogue, path);
  const report::BenchRun run = report::read_run(path);
  EXPECT_EQ(run.record_version, model::kRecordVersion);
  return run;
}

void add_sweep(Written& w, const std::string& baseline, double data_ms, double step_ms) {
  for (int wk : {1, 2}) {
    const double data = data_ms / wk, step = std::max(step_ms / wk, 25.0);
    w.add(e2e(baseline, wk), {{"workers", wk}, {"batch_size", 64}, {"data_ms", data}, {"compute_ms", 25.0},
                              {"step_ms", step}, {"au_pct", 100 * 25.0 / step}, {"items_per_second", 64000 / step}});
    w.add(loader(wk), {{"workers", wk}, {"data_ms", data}, {"items_per_second", 64000 / data},
                       {"read_ms", 0.02}, {"decode_ms", 0.6}, {"transform_ms", 0.25}, {"sample_cpu_ms", 0.9}});
  }
}

TEST(RoundTrip, EveryBaselineGetsItsSweepAndAVerdict) {
  for (const auto& b : model::baselines()) {
    Written w;
    add_sweep(w, std::string(b.name), 60, 60);
    w.add(model::sample_case("imagenet_train"), {{"items_per_second", 1100.0}, {"us_per_image", 900.0}});
    const report::Report r = report::build_report(write_and_read(w, std::string(b.name)));
    ASSERT_EQ(r.verdict.sweep.size(), 2u) << b.name;  // cuda:cnn: once lost to [a-z]+
    EXPECT_EQ(r.verdict.sweep[0].workers, 1);
    EXPECT_EQ(r.baseline, b.name);
    EXPECT_FALSE(r.what_if.empty()) << b.name;
  }
}

TEST(RoundTrip, EveryCandidateKindIsAFixOrAPriceAsTheCatalogueSays) {
  Written w;
  add_sweep(w, "emulated", 90, 90);
  w.add(model::sample_case("imagenet_train"), {{"us_per_image", 1000.0}, {"items_per_second", 1000.0}});
  for (const auto& c : model::candidate_kinds()) {
    const std::string param = c.kind == "presized" ? "256" : c.kind == "without" ? "horizontal_flip" : "auto";
    w.add(model::sample_case("imagenet_train", std::string(c.kind), param),
          {{"us_per_image", 700.0}, {"items_per_second", 1400.0}});
    if (c.end_to_end)
      w.add(e2e("emulated", 2, std::string(c.kind), param),
            {{"workers", 2}, {"data_ms", 30.0}, {"compute_ms", 25.0}, {"step_ms", 31.0}, {"au_pct", 80.6}});
  }
  const report::Report r = report::build_report(write_and_read(w, "emulated"));
  for (const auto& c : model::candidate_kinds()) {
    const auto row = std::find_if(r.what_if.rows.begin(), r.what_if.rows.end(),
                                  [&](const report::WhatIfRow& x) { return x.variant == c.kind; });
    ASSERT_NE(row, r.what_if.rows.end()) << c.kind;
    EXPECT_EQ(row->kind, c.role == model::CandidateRole::kFix     ? report::CandidateKind::kFix
                         : c.role == model::CandidateRole::kPrice ? report::CandidateKind::kPrice
                                                                  : report::CandidateKind::kControl)
        << c.kind;
    const bool checked = std::any_of(r.what_if.fix_checks.begin(), r.what_if.fix_checks.end(),
                                     [&](const report::FixCheck& f) { return f.label == row->label; });
    EXPECT_EQ(checked, c.end_to_end) << c.kind;
  }
}

TEST(RoundTrip, StorageLayoutsCacheModesAndPackedCopies) {
  Written w;
  add_sweep(w, "emulated", 120, 120);
  w.add(model::sample_case("imagenet_train"), {{"us_per_image", 1000.0}});
  w.add(loader(2, "files", "warm"), {{"workers", 2}, {"data_ms", 30.0}});
  w.add(read("files", "cold"), {{"items_per_second", 800.0}, {"bytes_per_second", 8e7}});
  for (int n : {64, 256}) {
    w.add(loader(2, "shards", "cold", n), {{"workers", 2}, {"data_ms", n == 64 ? 40.0 : 35.0}});
    w.add(read("shards", "cold", n), {{"bytes_per_second", 3e8}});
  }
  const report::Report r = report::build_report(
      write_and_read(w, "emulated", {{"cache_mode", "cold"}, {"storage_layout", "files"}}));
  EXPECT_EQ(r.storage.workers, 2);
  ASSERT_EQ(r.storage.packed.size(), 2u);
  EXPECT_EQ(r.storage.packed[0].layout, "shards-64");
  EXPECT_EQ(r.storage.packed[1].layout, "shards-256");
  EXPECT_EQ(r.storage.best_packed()->layout, "shards-256");
  ASSERT_TRUE(r.storage.fetch_mb_per_second.has_value());
  EXPECT_DOUBLE_EQ(*r.storage.fetch_mb_per_second, 80.0);
}

TEST(RoundTrip, CallbacksRanksAndRegions) {
  Written w;
  add_sweep(w, "emulated", 60, 60);
  w.add(e2e("emulated", 2, "", "", {"checkpoint-sync"}),
        {{"workers", 2}, {"callbacks_ms", 5.0}, {"step_ms", 40.0}, {"au_pct", 62.5}, {"callback:checkpoint-sync_ms", 5.0},
         {"data_ms", 20.0}, {"compute_ms", 34.0}});
  w.add(e2e("emulated", 2, "", "", {"checkpoint-async"}),
        {{"workers", 2}, {"callbacks_ms", 0.5}, {"step_ms", 36.0}, {"au_pct", 69.0}, {"callbacks_async", 1},
         {"callback:checkpoint-async_ms", 0.5}});
  const report::Report r = report::build_report(write_and_read(w, "emulated"));
  ASSERT_EQ(r.extras.cases.size(), 2u);
  EXPECT_EQ(r.extras.costliest, "checkpoint-sync");
  ASSERT_TRUE(r.extras.async_saving_ms.has_value());
  EXPECT_DOUBLE_EQ(*r.extras.async_saving_ms, 4.0);
  EXPECT_EQ(r.verdict.sweep.size(), 2u);  // the callback cases are not sweep points
  // A record without callback:<label>_every: the step model on its counters, each callback
  // every step (model/bound.h predict_from_parts): a 5 ms sync checkpoint overlaps the
  // accelerator's 34 ms step, so 34 ms against 40 measured.
  const auto sync_case = std::find_if(r.extras.cases.begin(), r.extras.cases.end(),
                                      [](const report::ExtrasCase& c) { return !c.async; });
  ASSERT_NE(sync_case, r.extras.cases.end());
  ASSERT_TRUE(sync_case->predicted_step_ms.has_value());
  EXPECT_NEAR(*sync_case->predicted_step_ms,
              predict_from_parts(20, 34, 2, {model::Callback{5.0, 1, false, false}}).step_ms, 1e-9);
  EXPECT_NEAR(*sync_case->predicted_step_ms, 34.0, 1e-6);
  EXPECT_NEAR(*sync_case->prediction_error_pct, -15.0, 1e-6);
  {
    // A record with every=N: the report prints bench's own bound_ms (the JSON's number),
    // not a second prediction.
    Written x;
    add_sweep(x, "emulated", 60, 60);
    x.add(e2e("emulated", 2, "", "", {"metric-sync"}),
          {{"workers", 2}, {"callbacks_ms", 9.0}, {"step_ms", 45.0}, {"au_pct", 75.6}, {"callback:metric-sync_ms", 9.0},
           {"callback:metric-sync_every", 1}, {"data_ms", 20.0}, {"compute_ms", 34.0}, {"bound_ms", 43.5},
           {"prediction_error_pct", model::prediction_error_pct(43.5, 45.0)}});
    const report::Report rx = report::build_report(write_and_read(x, "emulated"));
    ASSERT_EQ(rx.extras.cases.size(), 1u);
    ASSERT_TRUE(rx.extras.cases[0].predicted_step_ms.has_value());
    EXPECT_DOUBLE_EQ(*rx.extras.cases[0].predicted_step_ms, 43.5);
    EXPECT_DOUBLE_EQ(*rx.extras.cases[0].prediction_error_pct, model::prediction_error_pct(43.5, 45.0));
  }

  Written ranks;
  CaseKey k = e2e("emulated", 1);
  json f = {{"workers", 1}, {"world_size", 2}, {"data_ms", 30.0}, {"compute_ms", 25.0}, {"step_ms", 31.0},
            {"au_pct", 80.0}, {"items_per_second", 2000.0},
            // the job's figures bench aggregates once (bench/run/ranks.cpp)
            {"data_ms_mean", 30.0}, {"au_pct_min", 80.0}, {"au_pass", 0},
            {"images_per_second_total", 4000.0}, {"load_imbalance", 1.0}, {"slowest_rank", 0}};
  for (int r = 0; r < 2; ++r)
    for (const char* field : {"data_ms", "step_ms", "au_pct", "images_per_second"})
      f["rank" + std::to_string(r) + "_" + field] = f[field == std::string("images_per_second") ? "items_per_second" : field];
  ranks.add(k, f);
  ranks.add(loader(1), {{"workers", 1}, {"data_ms", 30.0}, {"items_per_second", 2100.0}});
  const report::Report rr = report::build_report(write_and_read(ranks, "emulated", {{"world_size", "2"}}));
  ASSERT_EQ(rr.ranks.cases.size(), 1u);
  EXPECT_TRUE(rr.ranks.cases[0].sweep);
  EXPECT_EQ(rr.ranks.world, 2);

  Written regions;
  for (const char* key : {"Batch", "IO", "Forward"}) {
    CaseKey rk;
    rk.family = Family::kRegion;
    rk.op = key;
    const double total = key == std::string("Batch") ? 100.0 : key == std::string("IO") ? 60.0 : 35.0;
    regions.add(rk, {{"count", 20}, {"total_ms", total}, {"mean_ms", total / 20}});
  }
  const report::Report rg = report::build_report(write_and_read(regions, "emulated"));
  EXPECT_TRUE(rg.regions_only);
  EXPECT_TRUE(rg.data_bound());  // 60 of 100 ms waiting for data
}

}  // namespace
}  // namespace pipebench

namespace pipebench {
namespace {

// The paired statistics (model/paired.h) against hand-worked blocks. A = {10, 12, 11, 13},
// B = {9, 10, 10, 11}: d = {1, 2, 1, 2}, mean 1.5, s = sqrt(((0.5^2) x 4) / 3) = 0.57735;
// t(0.975, 3) = 3.182446; half width = 3.182446 x 0.57735 / 2 = 0.918693.
TEST(Paired, TIntervalOverBlockDifferencesWorkedByHand) {
  const std::vector<double> a = {10, 12, 11, 13}, b = {9, 10, 10, 11};
  const model::PairedEstimate e = model::paired_estimate(a, b);
  EXPECT_EQ(e.blocks, 4);
  EXPECT_DOUBLE_EQ(e.diff, 1.5);
  EXPECT_NEAR(model::t_quantile_975(3), 3.182446, 1e-6);
  EXPECT_NEAR(e.diff_half, 0.918693, 1e-6);
  EXPECT_FALSE(e.within_noise());  // [0.58, 2.42] excludes 0
  // Ratio: the geometric mean of B/A = {0.9, 0.83333, 0.90909, 0.84615}.
  EXPECT_NEAR(e.ratio, std::pow(0.9 * (10.0 / 12) * (10.0 / 11) * (11.0 / 13), 0.25), 1e-12);
  EXPECT_LT(e.ratio_lo, e.ratio);
  EXPECT_GT(e.ratio_hi, e.ratio);
  // An A/A comparison: differences of both signs around 0 read as noise.
  const model::PairedEstimate aa = model::paired_estimate(std::vector<double>{10, 11, 10, 12},
                                                          std::vector<double>{10.5, 10.5, 10.2, 11.6});
  EXPECT_TRUE(aa.within_noise());
  // One block: no interval.
  EXPECT_TRUE(std::isinf(model::paired_estimate(std::vector<double>{1}, std::vector<double>{2}).diff_half));
  EXPECT_THROW(model::paired_estimate(std::vector<double>{1, 2}, std::vector<double>{1}), std::invalid_argument);
  EXPECT_THROW(model::paired_estimate(std::vector<double>{0}, std::vector<double>{1}), std::invalid_argument);
}

// By round position: two blocks of images (positions 0, 1), each measured twice, in log
// ratios l = log(B/A) = {-0.1053605, -0.2876821, -0.1541507, -0.2363888}: position means
// -0.1297556 and -0.2620354, L = -0.1958955 (ratio 0.822098); within positions
// s_w^2 = 0.0025057 / 2 = 0.00125287, between s_m^2 = 0.00874898 / 1.
// The round is the whole dataset (f = 1): var = s_w^2 / (J R) = 0.000313218, df 2,
// half = 4.302653 x 0.0176980 = 0.0761482: ratio 0.761821 .. 0.887145, and the saving's
// half width a_mean x (hi - lo) / 2 = 14.875 x 0.0626618 = 0.932094.
// Half the dataset (f = 0.5): var = 0.5 s_m^2 / 2 + 0.5 s_w^2 / 4 = 0.00234385, df by
// Satterthwaite 1.14539, t = 9.462557, half 0.458114: ratio 0.519957 .. 1.299811 (the
// images' spread counts: the other half of the dataset was not measured), noise.
TEST(Paired, ByRoundPositionWorkedByHand) {
  const std::vector<double> a = {10, 20, 10.5, 19}, b = {9, 15, 9, 15};
  const std::vector<int> pos = {0, 1, 0, 1};
  const model::PairedEstimate plain = model::paired_estimate(a, b);
  EXPECT_EQ(plain.positions, 0);
  const model::PairedEstimate e = model::paired_estimate(a, b, pos);
  EXPECT_DOUBLE_EQ(e.diff, 2.875);
  EXPECT_EQ(e.positions, 2);
  EXPECT_EQ(e.repeats, 2);
  EXPECT_NEAR(e.ratio, 0.822098, 1e-6);
  EXPECT_NEAR(e.ratio_lo, 0.761821, 1e-6);
  EXPECT_NEAR(e.ratio_hi, 0.887145, 1e-6);
  EXPECT_NEAR(e.diff_half, 0.932094, 1e-6);
  EXPECT_FALSE(e.within_noise());
  const model::PairedEstimate half = model::paired_estimate(a, b, pos, 0.5);
  EXPECT_NEAR(half.ratio_lo, 0.519957, 1e-6);
  EXPECT_NEAR(half.ratio_hi, 1.299811, 1e-6);
  EXPECT_TRUE(half.within_noise());
  // A change of the machine's speed in one round (all of round 2 10 % slower, A and B
  // alike) leaves the log ratios, and so the interval, as they were.
  const std::vector<double> a2 = {10, 20, 11.55, 20.9}, b2 = {9, 15, 9.9, 16.5};
  const model::PairedEstimate slow = model::paired_estimate(a2, b2, pos);
  EXPECT_NEAR(slow.ratio_hi / slow.ratio_lo, e.ratio_hi / e.ratio_lo, 1e-12);
  // A position never run (here 1: its blocks held a bad file) is left out of the round.
  const std::vector<double> a3 = {10, 20, 10.5, 19, 10, 20}, b3 = {9, 15, 9, 15, 9, 15};
  EXPECT_EQ(model::paired_estimate(a3, b3, std::vector<int>{0, 2, 0, 2, 3, 3}).positions, 3);
  // Unequal repeats, or one round: the plain estimate.
  EXPECT_DOUBLE_EQ(model::paired_estimate(a, b, std::vector<int>{0, 1, 0, 0}).diff_half, plain.diff_half);
  EXPECT_DOUBLE_EQ(model::paired_estimate(a, b, std::vector<int>{0, 1, 2, 3}).diff_half, plain.diff_half);
  EXPECT_THROW(model::paired_estimate(a, b, std::vector<int>{0, 1}), std::invalid_argument);
  EXPECT_THROW(model::paired_estimate(a, b, std::vector<int>{0, -1, 0, 1}), std::invalid_argument);
  EXPECT_THROW(model::paired_estimate(a, b, pos, 0.0), std::invalid_argument);
  EXPECT_THROW(model::paired_estimate(a, b, pos, 1.5), std::invalid_argument);
}

// 10, 12, 14: mean 12, s = 2, t(0.975, 2) = 4.302653: half = 4.302653 x 2 / sqrt(3) = 4.9683.
TEST(Paired, MeanIntervalAndBlockMeansWorkedByHand) {
  const std::vector<double> x = {10, 12, 14};
  const model::MeanEstimate e = model::mean_interval(x);
  EXPECT_EQ(e.n, 3);
  EXPECT_DOUBLE_EQ(e.mean, 12);
  EXPECT_NEAR(e.half, 4.302653 * 2 / std::sqrt(3.0), 1e-5);
  EXPECT_TRUE(std::isinf(model::mean_interval(std::vector<double>{5}).half));
  EXPECT_EQ(model::block_means(std::vector<double>{1, 3, 5, 7, 9}, 2), (std::vector<double>{2, 6}));
  EXPECT_TRUE(model::block_means(x, 0).empty());
  EXPECT_THROW(model::mean_interval(std::vector<double>{1, std::nan("")}), std::invalid_argument);
}

// The paired case's blocks: whole groups of four (order A B B A / B A A B by p % 2, the
// scratch exchanged by (p / 2) % 2), so that each of the four combinations covers the same
// images' count within one round. 44 photos were cut into 9 blocks of 5 (and 4) before.
TEST(Paired, BlocksComeInBalancedGroupsOfFour) {
  using V = std::vector<size_t>;
  EXPECT_EQ(model::paired_block_sizes(44, 5, 4), (V{6, 6, 6, 6, 5, 5, 5, 5}));
  EXPECT_EQ(model::paired_block_sizes(256, 16, 4), V(16, 16));
  EXPECT_EQ(model::paired_block_sizes(20, 4, 4), (V{5, 5, 5, 5}));
  EXPECT_EQ(model::paired_block_sizes(10, 4, 4), (V{5, 5}));  // below 16: blocks of >= 4
  EXPECT_EQ(model::paired_block_sizes(3, 4, 4), (V{3}));
  EXPECT_TRUE(model::paired_block_sizes(0, 4, 4).empty());
  EXPECT_THROW(model::paired_block_sizes(10, 3, 4), std::invalid_argument);
  EXPECT_THROW(model::paired_block_sizes(10, 4, 0), std::invalid_argument);
  for (size_t n = 16; n <= 600; ++n) {
    const size_t target = std::clamp<size_t>(n / 8, 4, 16);  // as bench/cases/sample_bench.cpp asks
    const V b = model::paired_block_sizes(n, target, 4);
    SCOPED_TRACE(n);
    ASSERT_EQ(b.size() % 4, 0u);
    size_t sum = 0, by[4] = {0, 0, 0, 0};
    for (size_t p = 0; p < b.size(); ++p) {
      EXPECT_GE(b[p], 4u);
      EXPECT_LE(b[p], 2 * target);
      sum += b[p];
      by[(p % 2) + 2 * ((p / 2) % 2)] += b[p];
    }
    EXPECT_EQ(sum, n);
    const size_t tip = (n % b.size()) % 4;  // the images that can tip the balance
    EXPECT_LE(*std::max_element(by, by + 4) - *std::min_element(by, by + 4), tip > 0 ? 1u : 0u);
  }
}

// A round cut after its first groups must still average images from the whole round: the
// groups' images are dealt in turn (photos-full: 44 images, 8 blocks, 2 groups of 24 / 20).
TEST(Paired, EachGroupOfBlocksIsSpreadOverTheRound) {
  using V = std::vector<size_t>;
  const V blocks = model::paired_block_sizes(44, 5, 4);
  const V order = model::group_spread_order(blocks, 4);
  ASSERT_EQ(order.size(), 44u);
  V sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < sorted.size(); ++k) EXPECT_EQ(sorted[k], k);  // a permutation
  // The first group (24 images): every other position, then the rest of its room.
  const V first(order.begin(), order.begin() + 24);
  EXPECT_EQ(first.front(), 0u);
  EXPECT_EQ(first[1], 2u);
  EXPECT_GE(*std::max_element(first.begin(), first.end()), 40u);  // reaches the round's end
  EXPECT_LE(*std::min_element(order.begin() + 24, order.end()), 1u);  // so does the second's start
  // One group: the round's own order.
  EXPECT_EQ(model::group_spread_order(V{4, 4, 4, 4}, 4), (V{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  // 256 images in 16 blocks: group g holds positions g, g + 4, g + 8, ...
  const V big = model::group_spread_order(V(16, 16), 4);
  for (size_t j = 0; j < 64; ++j) EXPECT_EQ(big[64 + j], 1 + 4 * j);
  EXPECT_TRUE(model::group_spread_order(V{}, 4).empty());
  EXPECT_THROW(model::group_spread_order(V{4}, 0), std::invalid_argument);
}

TEST(Paired, ASavingWithinNoiseIsNeverRecommendedAndTheControlIsChecked) {
  Written w;
  add_sweep(w, "emulated", 120, 120);  // data-bound: a fix would be recommended
  w.add(model::sample_case("imagenet_train"), {{"us_per_image", 1000.0}});
  // decode:auto saves 0.3 ms +- 0.4: noise; collate:uint8 saves 0.2 +- 0.05: an effect.
  w.add(model::sample_case("imagenet_train", "decode", "auto"),
        {{"us_per_image", 700.0}, {"paired_blocks", 16}, {"paired_saving_ms", 0.3}, {"paired_saving_ci_ms", 0.4}});
  w.add(model::sample_case("imagenet_train", "collate", "uint8"),
        {{"us_per_image", 800.0}, {"paired_blocks", 16}, {"paired_saving_ms", 0.2}, {"paired_saving_ci_ms", 0.05}});
  // The control reads 0.05 +- 0.01: not zero, so the run cannot rank candidates.
  w.add(model::sample_case("imagenet_train", "control", "aa"),
        {{"us_per_image", 950.0}, {"paired_blocks", 16}, {"paired_saving_ms", 0.05}, {"paired_saving_ci_ms", 0.01}});
  const report::Report r = report::build_report(write_and_read(w, "emulated"));
  const auto row = [&](const std::string& variant) {
    return *std::find_if(r.what_if.rows.begin(), r.what_if.rows.end(),
                         [&](const report::WhatIfRow& x) { return x.variant == variant; });
  };
  EXPECT_TRUE(row("decode").within_noise);
  EXPECT_FALSE(row("collate").within_noise);
  EXPECT_DOUBLE_EQ(row("collate").saving_ms_per_sample, 0.2);  // the paired difference, not 1.0 - 0.8
  EXPECT_NE(r.what_if.recommendation.label, "decode:auto");
  EXPECT_FALSE(r.what_if.control_note.empty());
  const std::string text = report::format_text(r);
  EXPECT_NE(text.find("noise +-0.400"), std::string::npos) << text;
  EXPECT_NE(text.find("0.200 +-0.050"), std::string::npos) << text;
  EXPECT_NE(text.find("cannot rank candidates"), std::string::npos) << text;
}

}  // namespace
}  // namespace pipebench
