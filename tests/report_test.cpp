// The report library (report/): loading a run (means and aggregates), finding its sweep,
// the faster variants its own spec declares, and the two output rules (fix first only
// when data-bound; a worker wait never negative). The what-if table and the trust checks:
// whatif_test.cpp. Runs are built in memory with nlohmann::json in the shape Google
// Benchmark writes; every expected figure is worked out by hand from the rows.
#include "report/format.h"
#include "report/report.h"
#include "report/run.h"

#include <gtest/gtest.h>

#include "tests/report_rows.h"

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace pipebench::report {
namespace {

using nlohmann::json;

using testing::report_of;
using testing::row;

json end_to_end(int workers, double data_ms, double compute_ms, double step_ms, int batch = 64) {
  return row("BM_EndToEnd/imagenet_train/emulated/workers:" + std::to_string(workers) +
                 "/iterations:30/real_time",
             {{"workers", workers}, {"data_ms", data_ms}, {"compute_ms", compute_ms},
              {"step_ms", step_ms}, {"batch_size", batch},
              // deliberately off: the report must derive images/s from step_ms
              {"items_per_second", 1.1 * batch * 1000.0 / step_ms}});
}

json loader(int workers, double data_ms, double decode_ms = 0.6, double transform_ms = 0.25) {
  return row("BM_Loader/imagenet_train/workers:" + std::to_string(workers) + "/iterations:30/real_time",
             {{"workers", workers}, {"data_ms", data_ms}, {"items_per_second", 64000.0 / data_ms},
              {"read_ms", 0.02}, {"decode_ms", decode_ms}, {"transform_ms", transform_ms},
              {"collate_ms", 0.0}});
}

json sample(const std::string& pipeline, double items_per_second) {
  return row("BM_Sample/" + pipeline, {{"items_per_second", items_per_second}});
}

json run_doc(std::vector<json> rows, json context = json::object()) {
  json ctx = {{"recipe", "imagenet_train"}, {"baseline", "emulated"}, {"batch_size", "64"},
              {"hardware_threads", "2"}, {"dataset", "/data/photos-in"}};
  ctx.update(context);
  return {{"context", ctx}, {"benchmarks", rows}};
}

// The resolved one-line spec a real `pipebench --recipe=imagenet_train` run records.
const char* kImagenetTrainSpec =
    "{name: imagenet_train, decode: {mode: full}, transforms: [{random_resized_crop: "
    "{interpolation: bilinear, ratio: [0.75, 1.3333333333333333], scale: [0.080000000000000002, "
    "1], size: 224}}, {horizontal_flip: {p: 0.5}}, {normalize: {mean: [0.48500001430511475, "
    "0.45600000023841858, 0.40599998831748962], std: [0.22900000214576721, 0.22400000691413879, "
    "0.22499999403953552]}}], collate: {dtype: float32, layout: NCHW}, variants: [{recipe: "
    "imagenet_train_roi, fixes: decode}]}";

// A data-bound sweep (data 64 / 32 ms > compute 25 ms) with its loaders and both samples.
std::vector<json> data_bound_rows() {
  return {end_to_end(1, 64, 25, 64.5), end_to_end(2, 32, 25, 32.4), loader(1, 64), loader(2, 32),
          sample("imagenet_train", 1000), sample("imagenet_train_roi", 1250)};
}


// --- loading a run ----------------------------------------------------------------------

TEST(LoadRun, AveragesRepetitionsAndSkipsAggregatesAndErrors) {
  json a = row("BM_X", {{"real_time", 1.0}, {"items_per_second", 100.0}, {"only_some", 10.0}});
  json b = row("BM_X", {{"real_time", 2.0}, {"items_per_second", 300.0}});
  json c = row("BM_X", {{"real_time", 6.0}, {"items_per_second", 200.0}, {"only_some", 20.0}});
  json errored = row("BM_X", {{"real_time", 0.0}, {"items_per_second", 0.0}});
  errored["error_occurred"] = true;
  errored["error_message"] = "bad file";
  json mean = row("BM_X_mean", {{"real_time", 999.0}});
  mean["run_name"] = "BM_X";
  mean["run_type"] = "aggregate";
  mean["aggregate_name"] = "mean";
  const BenchRun run = parse_run(run_doc({a, errored, b, mean, c}).dump());

  const CaseMeans* x = run.find("BM_X");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->repetitions, 3);
  EXPECT_DOUBLE_EQ(x->values.at("real_time"), 3.0);          // (1 + 2 + 6) / 3
  EXPECT_DOUBLE_EQ(x->values.at("items_per_second"), 200.0);  // (100 + 300 + 200) / 3
  EXPECT_DOUBLE_EQ(x->values.at("only_some"), 15.0);          // over the 2 rows that have it
  EXPECT_DOUBLE_EQ(*run.ms_per_item("BM_X"), 5.0);            // 1000 / 200
  EXPECT_EQ(run.context_or("batch_size", "?"), "64");
  EXPECT_EQ(run.context_or("absent", "fallback"), "fallback");
}

TEST(LoadRun, KeepsAggregateRowsApartFromTheMeans) {
  const auto aggregate = [](const std::string& stat, double real_time) {
    json a = row("BM_X/real_time_" + stat, {{"real_time", real_time}});
    a["run_name"] = "BM_X/real_time";
    a["run_type"] = "aggregate";
    a["aggregate_name"] = stat;
    return a;
  };
  const BenchRun run = parse_run(run_doc({row("BM_X/real_time", {{"real_time", 4.0}}),
                                          row("BM_X/real_time", {{"real_time", 6.0}}),
                                          aggregate("mean", 999.0), aggregate("cv", 0.25)})
                                     .dump());
  EXPECT_DOUBLE_EQ(*run.value("BM_X", report::CounterId::kRealTime), 5.0);  // the aggregates do not count
  EXPECT_EQ(run.find("BM_X")->repetitions, 2);
  EXPECT_DOUBLE_EQ(*run.aggregate("BM_X", "cv", report::CounterId::kRealTime), 0.25);  // as written, a fraction
  EXPECT_DOUBLE_EQ(*run.aggregate("BM_X", "mean", report::CounterId::kRealTime), 999.0);
  EXPECT_FALSE(run.aggregate("BM_X", "stddev", report::CounterId::kRealTime).has_value());
  EXPECT_FALSE(run.aggregate("BM_X", "cv", report::CounterId::kCpuTime).has_value());
  EXPECT_FALSE(run.aggregate("BM_Y", "cv", report::CounterId::kRealTime).has_value());
}

TEST(LoadRun, AnOnlyErroredCaseIsNotMeasured) {
  json errored = row("BM_Y", {{"real_time", 0.0}});
  errored["error_occurred"] = true;
  const BenchRun run = parse_run(run_doc({errored}).dump());
  EXPECT_EQ(run.find("BM_Y"), nullptr);
  EXPECT_FALSE(run.value("BM_Y", report::CounterId::kRealTime).has_value());
}

TEST(LoadRun, AFileWithoutTheRecordIsReadThroughTheLegacyAdapter) {
  const BenchRun run = parse_run(run_doc({row("BM_Sample/mine/iterations:5/real_time", {{"items_per_second", 500.0}}),
                                     row("BM_Sample/mine_fast", {{"items_per_second", 800.0}}),
                                     row("BM_Loader/mine/workers:2", {{"items_per_second", 9.0}})})
                                .dump());
  EXPECT_DOUBLE_EQ(*run.ms_per_item("BM_Sample/mine"), 2.0);
  EXPECT_DOUBLE_EQ(*run.ms_per_item("BM_Sample/mine_fast"), 1.25);
  EXPECT_EQ(run.find("BM_Loader/mine"), nullptr);  // workers:2 is pipebench's part, not a suffix
  EXPECT_EQ(run.record_version, 0);
  ASSERT_NE(run.find("BM_Loader/mine/workers:2"), nullptr);
  EXPECT_EQ(run.find("BM_Loader/mine/workers:2")->key.workers, 2);
  EXPECT_EQ(run.find("BM_Sample/mine")->key.timed_by, "real_time");
}

TEST(LoadRun, RejectsWhatIsNotARun) {
  EXPECT_THROW(parse_run(""), ReportError);
  EXPECT_THROW(parse_run("{not json"), ReportError);
  EXPECT_THROW(parse_run(R"({"benchmarks": 3})"), ReportError);
  EXPECT_THROW(parse_run("[1, 2]"), ReportError);
  EXPECT_THROW(read_run("/nonexistent/pipebench/run.json"), ReportError);
}

// A row field of the wrong type is a ReportError naming the row and the field, never
// nlohmann's type_error escaping parse_run (pipebench-report died with "terminate called";
// the first input is tests/fuzz/regressions/fuzz_report_json/run_type_not_a_string.json).
TEST(LoadRun, AWrongTypedRowFieldIsAReportErrorNamingIt) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"benchmarks":[{"name":"BM_X","run_name":"BM_X","run_type":500.0,"real_time":1.0}]})",
       "\"run_type\""},
      {R"({"benchmarks":[{"name":7,"real_time":1.0}]})", "\"name\""},
      {R"({"benchmarks":[{"name":"BM_X","run_name":["BM_X"],"real_time":1.0}]})", "\"run_name\""},
      {R"({"benchmarks":[{"name":"BM_X","real_time":1.0},)"
       R"({"name":"BM_X_mean","run_name":"BM_X","run_type":"aggregate","aggregate_name":{}}]})",
       "benchmarks[1]: \"aggregate_name\""},
      {R"({"benchmarks":[{"name":"BM_X","error_occurred":"yes","real_time":1.0}]})",
       "\"error_occurred\""},
  };
  for (const auto& [text, field] : cases) {
    try {
      parse_run(text);
      ADD_FAILURE() << "no error for " << text;
    } catch (const ReportError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos)
          << "the error \"" << e.what() << "\" does not name " << field;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a ReportError for " << text << ": " << e.what();
    }
  }
  // The right types still load: the fallbacks are unchanged.
  const BenchRun ok = parse_run(R"({"benchmarks":[{"name":"BM_X","error_occurred":false,"real_time":2.0}]})");
  ASSERT_EQ(ok.cases.count("BM_X"), 1u);
  EXPECT_DOUBLE_EQ(ok.cases.at("BM_X").values.at("real_time"), 2.0);
}

// --- the sweep ---------------------------------------------------------------------------

TEST(BuildReport, FindsTheSweepOfTheRunsRecipeOnly) {
  std::vector<json> rows = {end_to_end(4, 16, 25, 25.2), end_to_end(1, 64, 25, 64.5),
                            end_to_end(2, 32, 25, 32.4), loader(2, 32, 0.5), loader(1, 64, 0.7)};
  // Another pipeline's case in the same run is not part of this sweep.
  rows.push_back(row("BM_EndToEnd/imagenet_val/emulated/workers:8", {{"data_ms", 1.0},
                 {"compute_ms", 25.0}, {"step_ms", 25.0}, {"items_per_second", 2560.0}}));
  const Report r = report_of(run_doc(rows));
  const auto& sweep = r.verdict.sweep;
  ASSERT_EQ(sweep.size(), 3u);
  EXPECT_EQ(sweep[0].workers, 1);
  EXPECT_EQ(sweep[1].workers, 2);
  EXPECT_EQ(sweep[2].workers, 4);
  EXPECT_DOUBLE_EQ(sweep[0].bound.data_ms, 64);
  EXPECT_DOUBLE_EQ(sweep[0].bound.step_ms, 64.5);
  EXPECT_NEAR(sweep[0].bound.au_pct, 100.0 * 25 / 64.5, 1e-12);
  EXPECT_NEAR(sweep[0].images_per_second, 64000 / 64.5, 1e-9);
  EXPECT_EQ(r.verdict.first_compute_bound, 4);
  // Stages from the loader with the fewest workers (decode 0.7 there), largest first.
  ASSERT_EQ(r.verdict.stages.size(), 3u);  // collate 0 is left out
  EXPECT_EQ(r.verdict.stages[0].stage, "decode");
  EXPECT_DOUBLE_EQ(r.verdict.stages[0].ms_per_sample, 0.7);
  EXPECT_EQ(r.verdict.stages[1].stage, "transform");
  EXPECT_EQ(r.verdict.stages[2].stage, "read");
  // Sequential vs parallel: w = 1 against the most workers <= 2 hardware threads.
  EXPECT_DOUBLE_EQ(*r.loader_w1_ips, 1000);
  EXPECT_EQ(r.loader_wn, 2);
  EXPECT_DOUBLE_EQ(*r.loader_wn_ips, 2000);
}

TEST(BuildReport, TheRecipeNameIsMatchedLiterally) {
  // A spec file's stem can hold regex characters; "a.b" must not match "aXb".
  json other = row("BM_Loader/aXb/workers:1", {{"items_per_second", 10.0}});
  json mine = row("BM_Loader/a.b/workers:1", {{"items_per_second", 20.0}, {"decode_ms", 1.0}});
  const Report r = report_of(run_doc({other, mine}, {{"recipe", "a.b"}}));
  EXPECT_DOUBLE_EQ(*r.loader_w1_ips, 20);
}

TEST(BuildReport, ErrorsNameWhatIsMissing) {
  try {
    report_of(run_doc({sample("imagenet_train", 1000)}));
    FAIL() << "a run without a sweep or loader must be refused";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("BM_EndToEnd/imagenet_train"), std::string::npos) << e.what();
  }
  json no_step = row("BM_EndToEnd/imagenet_train/emulated/workers:1",
                     {{"data_ms", 1.0}, {"compute_ms", 2.0}, {"items_per_second", 5.0}});
  try {
    report_of(run_doc({no_step}));
    FAIL() << "a sweep case without step_ms must be refused";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("step_ms"), std::string::npos) << e.what();
  }
  EXPECT_THROW(report_of(run_doc({loader(1, 64)}, {{"batch_size", "sixty"}})), ReportError);
  EXPECT_THROW(report_of(run_doc({loader(1, 64)}, {{"cores_available", "two"}})), ReportError);
  EXPECT_THROW(report_of(run_doc({loader(1, 64)}, {{"cores_available", "0"}})), ReportError);
  EXPECT_THROW(report_of(run_doc({end_to_end(1, -1, 25, 30)})), ReportError);
}

TEST(BuildReport, ABatchSizeBelowOneIsAReportError) {
  // Found by the fuzzer: "00" parsed as 0 reached model/bound.h, which throws
  // std::invalid_argument, not the ReportError pipebench-report handles.
  for (const char* batch : {"0", "00", "-64"}) {
    try {
      report_of(run_doc(data_bound_rows(), {{"batch_size", batch}}));
      FAIL() << "batch_size " << batch << " must be refused";
    } catch (const ReportError& e) {
      EXPECT_NE(std::string(e.what()).find("batch_size must be >= 1"), std::string::npos) << e.what();
    }
  }
}

// --- faster variants from the run's spec -------------------------------------------------

// bench writes the spec's declared variants as data ("pipeline_variants"): the report reads
// no YAML.
json with_variants(json doc, json variants) {
  doc["pipeline_variants"] = std::move(variants);
  return doc;
}

TEST(Variants, ComeFromTheRunsPipelineVariants) {
  const Report r = report_of(with_variants(run_doc(data_bound_rows(), {{"pipeline_spec", kImagenetTrainSpec}}),
                                           {{{"recipe", "imagenet_train_roi"}, {"fixes", "decode"}}}));
  ASSERT_EQ(r.declared_variants.size(), 1u);
  EXPECT_EQ(r.declared_variants[0].recipe, "imagenet_train_roi");
  ASSERT_EQ(r.alternatives.size(), 1u);
  ASSERT_TRUE(r.verdict.best_alternative.has_value());
  const Alternative& a = *r.verdict.best_alternative;
  EXPECT_EQ(a.stage, "decode");
  EXPECT_EQ(a.baseline, "BM_Sample/imagenet_train");
  EXPECT_EQ(a.variant, "BM_Sample/imagenet_train_roi");
  EXPECT_DOUBLE_EQ(a.baseline_ms, 1.0);  // 1000 / 1000 images/s
  EXPECT_DOUBLE_EQ(a.variant_ms, 0.8);   // 1000 / 1250 images/s
  EXPECT_TRUE(r.spec_note.empty());
  EXPECT_NE(format_text(r).find("Faster variant measured in this run: BM_Sample/imagenet_train_roi"),
            std::string::npos);
}

// A declared variant measured paired with today (BM_Sample/<pipeline>/variant:<recipe>):
// its saving and interval; one within noise is no faster variant.
TEST(Variants, PairedWithTodayCarryTheirIntervalAndNoiseIsNone) {
  std::vector<json> rows = data_bound_rows();
  rows.push_back(row("BM_Sample/imagenet_train/variant:imagenet_train_roi",
                     {{"paired_saving_ms", 0.15}, {"paired_saving_ci_ms", 0.01}, {"paired_blocks", 32}}));
  const json variants = {{{"recipe", "imagenet_train_roi"}, {"fixes", "decode"}}};
  Report r = report_of(with_variants(run_doc(rows, {{"pipeline_spec", kImagenetTrainSpec}}), variants));
  ASSERT_TRUE(r.verdict.best_alternative.has_value());
  const Alternative& a = *r.verdict.best_alternative;
  EXPECT_EQ(a.variant, "BM_Sample/imagenet_train/variant:imagenet_train_roi");
  EXPECT_NEAR(a.saving_ms(), 0.15, 1e-12);  // the paired saving, not 1.0 - 0.8 unpaired
  ASSERT_TRUE(a.saving_ci_ms.has_value());
  EXPECT_NE(format_text(r).find("paired with today (BM_Sample/imagenet_train/variant:imagenet_train_roi): "
                                "saves 0.150 +-0.010 ms per sample (95 %; 15 %"), std::string::npos)
      << format_text(r);
  rows.back() = row("BM_Sample/imagenet_train/variant:imagenet_train_roi",
                    {{"paired_saving_ms", 0.005}, {"paired_saving_ci_ms", 0.01}, {"paired_blocks", 32}});
  r = report_of(with_variants(run_doc(rows, {{"pipeline_spec", kImagenetTrainSpec}}), variants));
  EXPECT_FALSE(r.verdict.best_alternative.has_value());
  EXPECT_EQ(format_text(r).find("Faster variant"), std::string::npos);
}

TEST(Variants, NoneWithoutASpecEvenWhenBothSamplesWereMeasured) {
  // An older run: the same samples, no pipeline_spec. No table keyed by name fills in.
  const Report r = report_of(run_doc(data_bound_rows()));
  EXPECT_TRUE(r.declared_variants.empty());
  EXPECT_TRUE(r.alternatives.empty());
  EXPECT_FALSE(r.verdict.best_alternative.has_value());
  EXPECT_EQ(format_text(r).find("Faster variant"), std::string::npos);
  EXPECT_FALSE(to_json(r).contains("best_alternative"));
  EXPECT_EQ(r.fix_first(), "decode");  // the rest of the verdict is unchanged
}

TEST(Variants, AnyPipelineDeclaresItsOwn) {
  // A --pipeline run named "mine" declaring two variants; only the measured one counts.
  const std::string spec =
      "{name: mine, transforms: [{center_crop: {size: 64}}, normalize], variants: "
      "[{recipe: mine_fast, fixes: transform}, {recipe: never_run, fixes: decode}]}";
  std::vector<json> rows = {loader(1, 64), sample("mine", 400), sample("mine_fast", 500)};
  rows[0]["name"] = rows[0]["run_name"] = "BM_Loader/mine/workers:1";
  const Report r = report_of(with_variants(run_doc(rows, {{"recipe", "mine"}, {"pipeline_spec", spec}}),
                                           {{{"recipe", "mine_fast"}, {"fixes", "transform"}},
                                            {{"recipe", "never_run"}, {"fixes", "decode"}}}));
  EXPECT_EQ(r.declared_variants.size(), 2u);
  ASSERT_EQ(r.alternatives.size(), 1u);
  EXPECT_EQ(r.alternatives[0].stage, "transform");
  EXPECT_EQ(r.alternatives[0].baseline, "BM_Sample/mine");
  EXPECT_DOUBLE_EQ(r.alternatives[0].baseline_ms, 2.5);
  EXPECT_DOUBLE_EQ(r.alternatives[0].variant_ms, 2.0);
}

TEST(Variants, AFileFromBeforeTheRecordSaysWhyItHasNone) {
  // Its pipeline_spec declares a variant, but this report reads no YAML: none, and why.
  const Report r = report_of(run_doc(data_bound_rows(), {{"pipeline_spec", kImagenetTrainSpec}}));
  EXPECT_TRUE(r.alternatives.empty());
  EXPECT_NE(r.spec_note.find("before the run record"), std::string::npos) << r.spec_note;
  EXPECT_EQ(r.verdict.sweep.size(), 2u);
  EXPECT_NE(format_text(r).find("before the run record"), std::string::npos);
}

// --- fix first only when data-bound -------------------------------------------------------

TEST(FixFirst, NamedWhenDataBoundAtEverySweptCount) {
  const Report r = report_of(run_doc(data_bound_rows()));
  EXPECT_TRUE(r.data_bound());
  EXPECT_EQ(r.fix_first(), "decode");
  // decode 0.6 of 0.02 + 0.6 + 0.25 = 0.87 ms: 69 %.
  EXPECT_NE(format_text(r).find("Fix first: decode (69 % of per-sample time)."), std::string::npos)
      << format_text(r);
  EXPECT_EQ(to_json(r)["fix_first"], "decode");
  EXPECT_EQ(to_json(r)["data_bound"], true);
}

TEST(FixFirst, NotNamedWhenSomeWorkerCountIsComputeBound) {
  std::vector<json> rows = data_bound_rows();
  rows.push_back(end_to_end(4, 16, 25, 25.2));
  const Report r = report_of(run_doc(rows));
  EXPECT_FALSE(r.data_bound());
  EXPECT_FALSE(r.fix_first().has_value());
  const std::string text = format_text(r);
  EXPECT_EQ(text.find("Fix first"), std::string::npos) << text;
  EXPECT_NE(text.find("compute-bound from 4 workers"), std::string::npos) << text;
  EXPECT_TRUE(to_json(r)["fix_first"].is_null());
  EXPECT_EQ(to_json(r)["data_bound"], false);
  EXPECT_EQ(to_json(r)["stages"].size(), 3u);  // the stage costs are still shown
}

// Compute-bound by the bound (data 16 < compute 25) but AU 25 / 32.4 = 77 %: the verdict
// must not say the accelerator is kept busy (issue 26: a collective on the host's CPU).
TEST(Verdict, NeverSaysBusyBelowTheAuTarget) {
  std::vector<json> rows = data_bound_rows();
  rows.push_back(end_to_end(4, 16, 25, 32.4));
  const std::string text = format_text(report_of(run_doc(rows)));
  EXPECT_EQ(text.find("keeps the accelerator busy"), std::string::npos) << text;
  EXPECT_NE(text.find("kept the accelerator busy only 77.2 % of the time (AU target 90 %)"),
            std::string::npos) << text;
  rows.back() = end_to_end(4, 16, 25, 25.2);  // AU 99.2 %
  const std::string busy = format_text(report_of(run_doc(rows)));
  EXPECT_NE(busy.find("4 is the smallest swept worker count that keeps the accelerator busy "
                      "(compute-bound, AU 99.2 %)"), std::string::npos) << busy;
}

// Every sweep row says how many batches it rests on (issue 26 item 8), and a budgeted run
// with few batches says a larger --budget buys precision.
TEST(Verdict, TheSweepSaysWhatItRestsOn) {
  std::vector<json> rows = data_bound_rows();
  rows[0]["iterations"] = 4;
  rows[1]["iterations"] = 9;
  const Report r = report_of(run_doc(rows, {{"budget_s", 8}}));
  EXPECT_EQ(r.sweep_batches.at(1), 4);
  EXPECT_EQ(r.sweep_batches.at(2), 9);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("(each row rests on its loop's batches, and as many of the loader alone before "
                      "and after it for data ms: 1 workers: 4, 2 workers: 9; the batches that fit "
                      "--budget=8 s per case: few"), std::string::npos) << text;
  EXPECT_EQ(to_json(r)["sweep"][0]["batches"], 4);
}

// The case study's line (issue 26 item 4): from the paired case, with its interval; a
// saving inside it is noise; without the pair, no sign is claimed.
TEST(CaseStudy, ThePairedSavingWithItsIntervalOrNoise) {
  std::vector<json> rows = data_bound_rows();
  rows.push_back(row("BM_Transform/random_mask/dilation:conv", {{"items_per_second", 1000 / 0.172}}));
  rows.push_back(row("BM_Transform/random_mask/dilation:shifts", {{"items_per_second", 1000 / 0.061}}));
  rows.push_back(sample("casestudy", 1000 / 0.737));
  rows.push_back(sample("casestudy_shifts", 1000 / 0.604));
  std::string text = format_text(report_of(run_doc(rows)));
  EXPECT_NE(text.find("the casestudy sample 0.737 and with shifts 0.604 ms (two cases one after the "
                      "other, unpaired"), std::string::npos) << text;
  EXPECT_EQ(text.find("less"), std::string::npos) << text;
  rows.push_back(row("BM_Sample/casestudy/pair:casestudy_shifts",
                     {{"paired_saving_ms", 0.133}, {"paired_saving_ci_ms", 0.012}, {"paired_blocks", 16}}));
  text = format_text(report_of(run_doc(rows)));
  EXPECT_NE(text.find("the casestudy sample with shifts saves 0.133 +-0.012 ms per sample (95 %, "
                      "paired; 18 % of 0.737 ms)"), std::string::npos) << text;
  rows.back() = row("BM_Sample/casestudy/pair:casestudy_shifts",
                    {{"paired_saving_ms", -0.005}, {"paired_saving_ci_ms", 0.012}, {"paired_blocks", 16}});
  text = format_text(report_of(run_doc(rows)));
  EXPECT_NE(text.find("the casestudy sample with shifts: within noise (-0.005 +-0.012 ms per sample"),
            std::string::npos) << text;
}

TEST(FixFirst, NotNamedWithoutASweep) {
  const Report r = report_of(run_doc({loader(1, 64), loader(2, 32)}));
  EXPECT_FALSE(r.data_bound());
  EXPECT_FALSE(r.fix_first().has_value());
  EXPECT_EQ(format_text(r).find("Fix first"), std::string::npos);
}

// --- worker wait --------------------------------------------------------------------------

// The idle column of the text table for `workers`, as printed.
std::string idle_cell(const std::string& text, int workers) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream cells(line);
    std::vector<std::string> c;
    for (std::string s; cells >> s;) c.push_back(s);
    // workers images/s data compute bound step AU stall idle pred regime
    if (c.size() == 11 && c[0] == std::to_string(workers)) return c[8];
  }
  return "";
}

TEST(WorkerWait, NeverNegative) {
  // Two repetitions of w = 1 at -0.5 and +0.1 ms (mean -0.2); w = 2 at 3 ms; w = 4 absent.
  json w1a = end_to_end(1, 64, 25, 64.5), w1b = end_to_end(1, 64, 25, 64.5);
  w1a["worker_wait_ms"] = -0.5;
  w1b["worker_wait_ms"] = 0.1;
  json w2 = end_to_end(2, 32, 25, 32.4);
  w2["worker_wait_ms"] = 3.0;
  const Report r = report_of(run_doc({w1a, w1b, w2, end_to_end(4, 16, 25, 25.2), loader(1, 64)}));
  ASSERT_EQ(r.worker_wait_ms.size(), 2u);
  EXPECT_EQ(r.worker_wait_ms.at(1), 0.0);
  EXPECT_DOUBLE_EQ(r.worker_wait_ms.at(2), 3.0);

  const std::string text = format_text(r);
  EXPECT_NE(text.find("idle ms"), std::string::npos) << text;
  EXPECT_EQ(idle_cell(text, 1), "0.00") << text;
  EXPECT_EQ(idle_cell(text, 2), "3.00") << text;
  EXPECT_EQ(idle_cell(text, 4), "-") << text;

  const json j = to_json(r);
  EXPECT_EQ(j["sweep"][0]["worker_wait_ms"], 0.0);
  EXPECT_EQ(j["sweep"][1]["worker_wait_ms"], 3.0);
  EXPECT_FALSE(j["sweep"][2].contains("worker_wait_ms"));
}

TEST(StepTail, TheSweepCarriesEachCountsP99Step) {
  // BM_EndToEnd's step_p99_ms (model/counters.h) at w = 1 and 2, none at w = 4: the JSON
  // sweep point carries it where measured.
  json w1 = end_to_end(1, 64, 25, 64.5), w2 = end_to_end(2, 32, 25, 32.4);
  w1["step_p99_ms"] = 71.0;
  w2["step_p99_ms"] = 40.5;
  const Report r = report_of(run_doc({w1, w2, end_to_end(4, 16, 25, 25.2), loader(1, 64)}));
  ASSERT_EQ(r.step_p99_ms.size(), 2u);
  EXPECT_DOUBLE_EQ(r.step_p99_ms.at(1), 71.0);
  const json j = to_json(r);
  EXPECT_EQ(j["sweep"][0]["step_p99_ms"], 71.0);
  EXPECT_EQ(j["sweep"][1]["step_p99_ms"], 40.5);
  EXPECT_FALSE(j["sweep"][2].contains("step_p99_ms"));
}

TEST(WorkerWait, NoColumnWhenTheRunHasNone) {
  const std::string text = format_text(report_of(run_doc(data_bound_rows())));
  EXPECT_EQ(text.find("idle"), std::string::npos) << text;
}

}  // namespace
}  // namespace pipebench::report
