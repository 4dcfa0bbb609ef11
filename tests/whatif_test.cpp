// The what-if table, its recommendation and check (report/whatif.h), and the trust checks
// (report/trust.h), on runs built in memory in the shape Google Benchmark writes. Every
// expected figure is worked out by hand from the rows, in the comments beside it, with the
// model data = CPU ms per sample x batch / min(workers, cores), step = max(data, compute),
// AU = 100 x compute / step, images/s = batch x 1000 / step.
#include "report/change_note.h"
#include "report/format.h"
#include "report/peer.h"
#include "report/report.h"
#include "report/run.h"
#include "report/trust.h"
#include "report/whatif.h"

#include <gtest/gtest.h>

#include "tests/report_rows.h"
#include "tests/test_data.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace pipebench::report {
namespace {

using nlohmann::json;

using testing::report_of;
using testing::row;

json end_to_end(int workers, double data_ms, double compute_ms, double step_ms, double sample_cpu_ms = 1.0) {
  return row("BM_EndToEnd/imagenet_train/emulated/workers:" + std::to_string(workers) +
                 "/iterations:30/real_time",
             {{"workers", workers}, {"data_ms", data_ms}, {"compute_ms", compute_ms},
              {"step_ms", step_ms}, {"batch_size", 64}, {"sample_cpu_ms", sample_cpu_ms}});
}

json loader(int workers, double data_ms, std::optional<double> sample_cpu_ms = 1.0) {
  json fields = {{"workers", workers}, {"data_ms", data_ms}, {"items_per_second", 64000.0 / data_ms},
                 {"read_ms", 0.02}, {"decode_ms", 0.6}, {"transform_ms", 0.25}};
  if (sample_cpu_ms) fields["sample_cpu_ms"] = *sample_cpu_ms;
  return row("BM_Loader/imagenet_train/workers:" + std::to_string(workers) + "/iterations:30/real_time",
             fields);
}

// A BM_Sample case: one thread's CPU µs per image (items_per_second deliberately off, so a
// test fails if the table reads it instead of us_per_image).
json sample(const std::string& suffix, double us_per_image) {
  return row("BM_Sample/imagenet_train" + suffix,
             {{"us_per_image", us_per_image}, {"items_per_second", 2e6 / us_per_image}});
}

json run_doc(std::vector<json> rows, json context = json::object()) {
  json ctx = {{"recipe", "imagenet_train"}, {"baseline", "emulated"}, {"batch_size", "64"},
              {"hardware_threads", "2"}, {"cores_available", "2.000000"},
              {"dataset", "/data/photos-in"}, {"busy_machine", "false"}};
  ctx.update(context);
  return {{"context", ctx}, {"benchmarks", rows}};
}

// Today 1 ms per sample; decode:auto 0.8 ms; without normalize 0.9, without flip 0.98.
std::vector<json> samples() {
  return {sample("", 1000), sample("/decode:auto", 800), sample("/without:normalize", 900),
          sample("/without:horizontal_flip", 980)};
}

// The sweep at 1 and 2 workers against a step of `compute_ms`: data 64 and 32 ms per
// batch (1 ms x 64 / w), each measured step a little above max(data, compute).
std::vector<json> sweep_rows(double compute_ms) {
  std::vector<json> rows = samples();
  rows.push_back(end_to_end(1, 64, compute_ms, std::max(64.0, compute_ms) + 0.5));
  rows.push_back(end_to_end(2, 32, compute_ms, std::max(32.0, compute_ms) + 0.4));
  rows.push_back(loader(1, 64));
  rows.push_back(loader(2, 32));
  return rows;
}


const WhatIfRow& row_of(const WhatIf& w, const std::string& label) {
  for (const auto& r : w.rows)
    if (r.label == label) return r;
  throw std::runtime_error("no what-if row " + label);
}

bool has_warning(const Report& r, TrustWarning::Kind kind, const std::string& case_name) {
  for (const auto& w : r.trust.warnings)
    if (w.kind == kind && w.case_name == case_name) return true;
  return false;
}

// --- the model's two formulas ---------------------------------------------------------------

TEST(WhatIfModel, DataTimeAndWorkersForTheTarget) {
  EXPECT_DOUBLE_EQ(predicted_data_ms(1.0, 64, 2, 2.0), 32.0);
  EXPECT_DOUBLE_EQ(predicted_data_ms(1.0, 64, 4, 2.0), 32.0);  // 4 workers on 2 cores
  EXPECT_DOUBLE_EQ(predicted_data_ms(1.0, 64, 4, 0.0), 16.0);  // cores unknown
  EXPECT_DOUBLE_EQ(predicted_data_ms(1.0, 64, 2, 1.5), 64.0 / 1.5);
  EXPECT_EQ(workers_for_target(1.0, 64, 25), 3);   // 0.9 x 64 / 25 = 2.304
  EXPECT_EQ(workers_for_target(1.0, 64, 28.8), 2);  // 0.9 x 64 / 28.8 = 2 exactly
  EXPECT_EQ(workers_for_target(0.1, 64, 25), 1);   // 0.23: one worker is the least
}

// --- fidelity (issue 35) ---------------------------------------------------------------------

// sweep_rows with decode:auto's fidelity counters: `p5` dB at the 5th percentile, 41 dB median,
// 48 samples of which 12 identical; or every sample identical.
std::vector<json> rows_with_fidelity(std::optional<double> p5) {
  std::vector<json> rows = sweep_rows(25);
  for (json& r : rows) {
    if (r["name"] != "BM_Sample/imagenet_train/decode:auto") continue;
    r["fidelity_samples"] = 48;
    r["fidelity_ms"] = 900;
    if (!p5) {
      r["fidelity_identical_pct"] = 100.0;
      continue;
    }
    r["fidelity_identical_pct"] = 25.0;
    r["fidelity_psnr_median_db"] = 41.0;
    r["fidelity_psnr_p5_db"] = *p5;
    r["fidelity_ssim_median"] = 0.99;
    r["fidelity_ssim_p5"] = 0.95;
  }
  return rows;
}

TEST(WhatIfFidelity, AFixBelowMinPsnrIsLeftOutAndTheRecommendationSaysWhy) {
  const Report r = report_of(run_doc(rows_with_fidelity(30.0)));  // default --min-psnr: 35 dB
  const WhatIfRow& fix = row_of(r.what_if, "decode:auto");
  ASSERT_TRUE(fix.fidelity.has_value());
  EXPECT_TRUE(fix.below_min_psnr);
  EXPECT_NE(r.what_if.recommendation.label, "decode:auto");
  EXPECT_NE(r.what_if.recommendation.text.find("Left out for fidelity"), std::string::npos)
      << r.what_if.recommendation.text;
  const std::string text = format_text(r);
  EXPECT_NE(text.find("41.0 / 30.0*"), std::string::npos) << text;
  EXPECT_NE(text.find("decode:auto: decodes only the crop's window"), std::string::npos) << text;
  const json j = to_json(r);
  EXPECT_DOUBLE_EQ(j["what_if"]["rows"][2]["fidelity"]["psnr_db"]["p5"].get<double>(), 30.0);
  EXPECT_DOUBLE_EQ(j["what_if"]["min_psnr_db"].get<double>(), 35.0);
}

TEST(WhatIfFidelity, ALowerMinPsnrRecommendsTheFixAndStatesItsFidelity) {
  const Report r = report_of(run_doc(rows_with_fidelity(30.0), {{"min_psnr_db", "25"}}));
  EXPECT_FALSE(row_of(r.what_if, "decode:auto").below_min_psnr);
  EXPECT_EQ(r.what_if.recommendation.label, "decode:auto");
  EXPECT_NE(r.what_if.recommendation.fidelity.find("PSNR 41.0 dB median, 30.0 dB p5"), std::string::npos)
      << r.what_if.recommendation.fidelity;
  EXPECT_EQ(to_json(r)["recommendation"]["min_psnr_db"].get<double>(), 25.0);
}

TEST(WhatIfFidelity, ABitIdenticalFixSaysSo) {
  const Report r = report_of(run_doc(rows_with_fidelity(std::nullopt)));
  EXPECT_EQ(r.what_if.recommendation.label, "decode:auto");
  EXPECT_NE(r.what_if.recommendation.text.find("bit-identical"), std::string::npos) << r.what_if.recommendation.text;
  EXPECT_NE(format_text(r).find("identical\n"), std::string::npos);
}

// --- the table ------------------------------------------------------------------------------

TEST(WhatIfTable, ArithmeticOfADataBoundRun) {
  const Report r = report_of(run_doc(sweep_rows(25)));
  const WhatIf& w = r.what_if;
  ASSERT_FALSE(w.empty()) << w.note;
  EXPECT_EQ(w.eval_workers, 2);  // the sweep's largest count within 2 cores
  EXPECT_DOUBLE_EQ(w.compute_ms, 25);
  ASSERT_EQ(w.rows.size(), 5u);  // today, workers, decode:auto, two operators

  const WhatIfRow& today = w.rows[0];
  EXPECT_EQ(today.kind, CandidateKind::kToday);
  EXPECT_EQ(today.case_name, "BM_Sample/imagenet_train");
  EXPECT_DOUBLE_EQ(today.cpu_ms_per_sample, 1.0);  // 1000 µs, not 1000 / items_per_second
  EXPECT_EQ(today.workers, 2);
  EXPECT_DOUBLE_EQ(today.data_ms, 32);        // 1 x 64 / 2
  EXPECT_DOUBLE_EQ(today.step_ms, 32);        // max(32, 25)
  EXPECT_DOUBLE_EQ(today.au_pct, 78.125);     // 100 x 25 / 32
  EXPECT_DOUBLE_EQ(today.images_per_second, 2000);  // 64 x 1000 / 32
  EXPECT_DOUBLE_EQ(today.saving_ms_per_sample, 0);
  EXPECT_EQ(today.workers_for_target, 3);

  const WhatIfRow& fix = row_of(w, "decode:auto");
  EXPECT_EQ(fix.kind, CandidateKind::kFix);
  EXPECT_EQ(fix.case_name, "BM_Sample/imagenet_train/decode:auto");
  EXPECT_DOUBLE_EQ(fix.cpu_ms_per_sample, 0.8);
  EXPECT_EQ(fix.workers, 2);
  EXPECT_DOUBLE_EQ(fix.data_ms, 25.6);             // 0.8 x 64 / 2
  EXPECT_DOUBLE_EQ(fix.step_ms, 25.6);
  EXPECT_DOUBLE_EQ(fix.au_pct, 100.0 * 25 / 25.6);  // 97.66
  EXPECT_DOUBLE_EQ(fix.images_per_second, 2500);
  EXPECT_NEAR(fix.saving_ms_per_sample, 0.2, 1e-12);
  EXPECT_NEAR(fix.saving_pct, 20, 1e-9);
  EXPECT_EQ(fix.workers_for_target, 2);  // 0.9 x 0.8 x 64 / 25 = 1.84

  const WhatIfRow& normalize = row_of(w, "without:normalize");
  EXPECT_EQ(normalize.kind, CandidateKind::kPrice);
  EXPECT_DOUBLE_EQ(normalize.data_ms, 28.8);  // 0.9 x 64 / 2
  EXPECT_NEAR(normalize.saving_pct, 10, 1e-9);  // normalize is 10 % of the sample
  EXPECT_NEAR(row_of(w, "without:horizontal_flip").saving_ms_per_sample, 0.02, 1e-12);

  const std::string text = format_text(r);
  EXPECT_NE(text.find("What if"), std::string::npos) << text;
  EXPECT_NE(text.find("what each operator costs"), std::string::npos) << text;
  // The operator rows come after that line, the fix before it.
  EXPECT_LT(text.find("decode:auto"), text.find("what each operator costs")) << text;
  EXPECT_GT(text.find("without:normalize"), text.find("what each operator costs")) << text;
}

// A batch operator of the spec is priced on the batch (issue 26): BM_Transform/<op>/
// pipeline:<name>, 6.4 ms of CPU per batch of 64 +- 0.64 -> 0.1 ms per sample +- 0.01; a
// second occurrence keeps its #2. The parts: prices 0.1 + 0.1 (normalize) + 0.02 (flip)
// + 0.005 = 0.225 against today's operator stage, 1 ms x 0.27 / (0.03 + 0.7 + 0.27) = 0.27
// ms: -16.7 %.
TEST(WhatIfTable, ABatchOperatorIsPricedOnTheBatch) {
  std::vector<json> rows = sweep_rows(25);
  rows[0]["decode_ms"] = 0.7;  // today's BM_Sample
  rows[0]["read_ms"] = 0.03;
  rows[0]["transform_ms"] = 0.27;
  rows.push_back(row("BM_Transform/mixup/pipeline:imagenet_train",
                     {{"batch_ms", 6.4}, {"batch_ms_ci", 0.64}, {"batch_images", 64}, {"batch_iterations", 200}}));
  rows.push_back(row("BM_Transform/mixup/pipeline:imagenet_train#2",
                     {{"batch_ms", 0.32}, {"batch_ms_ci", 0.64}, {"batch_images", 64}, {"batch_iterations", 9}}));
  rows.push_back(row("BM_Transform/mixup/pipeline:other_recipe", {{"batch_ms", 64.0}, {"batch_images", 64}}));
  const Report r = report_of(run_doc(rows));
  const WhatIf& w = r.what_if;
  const WhatIfRow& mix = row_of(w, "batch:mixup");
  EXPECT_EQ(mix.kind, CandidateKind::kPrice);
  EXPECT_TRUE(mix.per_batch);
  EXPECT_NEAR(mix.saving_ms_per_sample, 0.1, 1e-12);
  ASSERT_TRUE(mix.saving_ci_ms.has_value());
  EXPECT_NEAR(*mix.saving_ci_ms, 0.01, 1e-12);
  EXPECT_NEAR(mix.cpu_ms_per_sample, 0.9, 1e-12);  // today without it
  EXPECT_FALSE(mix.within_noise);
  EXPECT_EQ(mix.paired_blocks, 200);
  const WhatIfRow& second = row_of(w, "batch:mixup#2");  // 0.005 +- 0.01: noise
  EXPECT_TRUE(second.within_noise);
  EXPECT_THROW(row_of(w, "batch:mixup/other"), std::runtime_error);  // another pipeline's
  for (const auto& x : w.rows) EXPECT_EQ(x.case_name.find("other_recipe"), std::string::npos);
  ASSERT_TRUE(w.parts.has_value());
  EXPECT_NEAR(w.parts->prices_ms, 0.225, 1e-12);
  EXPECT_NEAR(w.parts->stage_ms, 0.27, 1e-12);
  EXPECT_EQ(w.parts->priced, 4);
  EXPECT_NEAR(w.parts->off_pct(), -100.0 / 6, 1e-9);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("(batch:mixup: a batch operator, priced on the batch: "
                      "BM_Transform/mixup/pipeline:imagenet_train, its thread CPU per batch / 64 "
                      "images; +- the 95 % t interval over the 200 batches timed)"), std::string::npos) << text;
  EXPECT_NE(text.find("(the parts: the 4 priced operators account for 0.225 of the 0.270 ms per sample "
                      "today's sample spends in its operators"), std::string::npos) << text;
  EXPECT_NE(text.find("BM_Sample's wall time), 83 %;"), std::string::npos) << text;
  EXPECT_NEAR(to_json(r)["what_if"]["parts"]["off_pct"].get<double>(), -100.0 / 6, 1e-9);
}

TEST(WhatIfTable, JsonKeysCarryTheirUnits) {
  const json j = to_json(report_of(run_doc(sweep_rows(25))));
  ASSERT_TRUE(j.contains("what_if")) << j.dump(2);
  const json& fix = j["what_if"]["rows"][2];
  EXPECT_EQ(fix["candidate"], "decode:auto");
  EXPECT_EQ(fix["kind"], "fix");
  EXPECT_DOUBLE_EQ(fix["cpu_ms_per_sample"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(fix["data_ms_per_batch"].get<double>(), 25.6);
  EXPECT_DOUBLE_EQ(fix["step_ms_per_batch"].get<double>(), 25.6);
  EXPECT_DOUBLE_EQ(fix["images_per_second"].get<double>(), 2500);
  EXPECT_NEAR(fix["saving_pct"].get<double>(), 20, 1e-9);
  EXPECT_EQ(j["what_if"]["rows"][3]["kind"], "operator_cost");
  EXPECT_EQ(j["what_if"]["au_target_pct"], 90.0);
  EXPECT_EQ(j["what_if"]["compute_ms_per_batch"], 25.0);
  EXPECT_EQ(j["recommendation"]["candidate"], "decode:auto");
  EXPECT_EQ(j["recommendation"]["workers"], 2);
  EXPECT_TRUE(j["check"].contains("prediction_error_pct"));
  EXPECT_TRUE(j["trust_warnings"].is_array());
}

TEST(WhatIfTable, AnOlderRunPricesEveryCandidateFromItemsPerSecond) {
  // No us_per_image anywhere: one thread's wall time, for today and candidates alike.
  std::vector<json> rows = {row("BM_Sample/imagenet_train", {{"items_per_second", 500.0}}),
                            row("BM_Sample/imagenet_train/decode:auto", {{"items_per_second", 625.0}}),
                            end_to_end(1, 128, 25, 128.5)};
  const WhatIf w = report_of(run_doc(rows)).what_if;
  ASSERT_FALSE(w.empty()) << w.note;
  EXPECT_DOUBLE_EQ(w.rows[0].cpu_ms_per_sample, 2.0);                  // 1000 / 500
  EXPECT_DOUBLE_EQ(row_of(w, "decode:auto").cpu_ms_per_sample, 1.6);  // 1000 / 625
  EXPECT_NE(w.cost_source.find("items_per_second"), std::string::npos) << w.cost_source;
}

TEST(WhatIfTable, NoneWithoutAPerSampleCost) {
  const Report r = report_of(run_doc({end_to_end(1, 64, 25, 64.5), loader(1, 64, std::nullopt)}));
  EXPECT_TRUE(r.what_if.empty());
  EXPECT_NE(r.what_if.note.find("BM_Sample/imagenet_train"), std::string::npos) << r.what_if.note;
  EXPECT_NE(format_text(r).find("No what-if table"), std::string::npos);
}

// --- workers --------------------------------------------------------------------------------

TEST(WhatIfWorkers, TheSmallestSweptCountThatReachesTheTarget) {
  std::vector<json> rows = sweep_rows(25);
  rows.push_back(end_to_end(4, 16, 25, 25.2));  // AU 99.2 %: the first >= 90 %
  const WhatIf w = report_of(run_doc(rows, {{"cores_available", "4.0"}})).what_if;
  const WhatIfRow& workers = row_of(w, "workers");
  EXPECT_TRUE(workers.measured);
  EXPECT_EQ(workers.workers, 4);
  EXPECT_FALSE(workers.exceeds_cores);
  EXPECT_DOUBLE_EQ(workers.data_ms, 16);  // 1 x 64 / min(4, 4)
  EXPECT_DOUBLE_EQ(workers.step_ms, 25);
  // The check is the fix applied for real: the sweep's point at 4 workers.
  ASSERT_TRUE(w.check.has_value());
  EXPECT_TRUE(w.check->at_workers_candidate);
  EXPECT_EQ(w.check->workers, 4);
  EXPECT_DOUBLE_EQ(w.check->predicted_step_ms, 25);
  EXPECT_DOUBLE_EQ(w.check->measured_step_ms, 25.2);
  EXPECT_NEAR(w.check->error_pct, 100.0 * (25 - 25.2) / 25.2, 1e-9);  // -0.79 %
  EXPECT_DOUBLE_EQ(w.check->predicted_au_pct, 100);
  EXPECT_NEAR(w.check->measured_au_pct, 100.0 * 25 / 25.2, 1e-9);
  EXPECT_FALSE(w.check->over_tolerance());
}

TEST(WhatIfWorkers, PredictedBeyondTheSweepFromThePerSampleCost) {
  // Swept at 1 worker only, on 8 cores: 0.9 x 1 ms x 64 / 25 ms = 2.3 -> 3 workers.
  const WhatIf w = report_of(run_doc({sample("", 1000), end_to_end(1, 64, 25, 64.5)},
                                     {{"cores_available", "8"}, {"hardware_threads", "8"}}))
                       .what_if;
  const WhatIfRow& workers = row_of(w, "workers");
  EXPECT_FALSE(workers.measured);
  EXPECT_EQ(workers.workers, 3);
  EXPECT_FALSE(workers.model_workers.has_value());
  EXPECT_FALSE(workers.exceeds_cores);
  EXPECT_NEAR(workers.data_ms, 64.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(workers.step_ms, 25);
  EXPECT_DOUBLE_EQ(workers.au_pct, 100);
  EXPECT_DOUBLE_EQ(workers.images_per_second, 2560);
  // The recommended count was not swept: the check is the model at the sweep's point.
  ASSERT_TRUE(w.check.has_value());
  EXPECT_FALSE(w.check->at_workers_candidate);
  EXPECT_EQ(w.check->workers, 1);
  EXPECT_DOUBLE_EQ(w.check->predicted_step_ms, 64);
}

TEST(WhatIfWorkers, AboveEverySweptCountThatFellShort) {
  // The model says 3, but 3 workers were measured at AU 82 % (data 30 ms, not 21.3): the
  // answer is beyond the sweep, and the check at 3 workers shows the model 18 % off.
  std::vector<json> rows = {sample("", 1000), end_to_end(1, 64, 25, 64.5), end_to_end(2, 32, 25, 32.4),
                            end_to_end(3, 30, 25, 30.4)};
  const WhatIf w = report_of(run_doc(rows, {{"cores_available", "8"}, {"hardware_threads", "8"}})).what_if;
  const WhatIfRow& workers = row_of(w, "workers");
  EXPECT_FALSE(workers.measured);
  EXPECT_EQ(workers.workers, 4);
  EXPECT_EQ(workers.model_workers, 3);
  EXPECT_DOUBLE_EQ(workers.data_ms, 16);
  ASSERT_TRUE(w.check.has_value());
  EXPECT_EQ(w.check->workers, 3);                    // the sweep's largest within 8 cores
  EXPECT_DOUBLE_EQ(w.check->predicted_step_ms, 25);  // max(64 / 3, 25)
  EXPECT_NEAR(w.check->error_pct, 100.0 * (25 - 30.4) / 30.4, 1e-9);  // -17.8 %
  EXPECT_TRUE(w.check->over_tolerance());
  // The advice rests on that model, and says so.
  EXPECT_TRUE(w.recommendation.model_off);
  EXPECT_NE(w.recommendation.text.find("Caution: the model behind this is -18 % off"),
            std::string::npos) << w.recommendation.text;
  EXPECT_NE(format_text(report_of(run_doc(rows, {{"cores_available", "8"}}))).find("off by more than 5 %"),
            std::string::npos);
}

TEST(WhatIfWorkers, ASweptCountAboveTheCoresThatFellShortSaysNothingAboutWorkers) {
  // 4 workers on 2 cores fell short for want of cores: the answer is still the model's 3.
  std::vector<json> rows = sweep_rows(25);
  rows.push_back(end_to_end(4, 32.5, 25, 33));
  const WhatIfRow workers = row_of(report_of(run_doc(rows)).what_if, "workers");
  EXPECT_EQ(workers.workers, 3);
  EXPECT_FALSE(workers.model_workers.has_value());
}

TEST(WhatIfWorkers, AnOversubscribedSweptCountNeedsOnlyTheCoresItRanOn) {
  // 0.7 ms per sample; 2 workers measured at AU 85 %, 4 workers on the 2 cores at 98.8 %.
  std::vector<json> rows = {sample("", 700), end_to_end(1, 48, 25, 48.5, 0.7),
                            end_to_end(2, 29, 25, 29.4, 0.7), end_to_end(4, 24, 25, 25.3, 0.7)};
  const WhatIf w = report_of(run_doc(rows)).what_if;
  const WhatIfRow& workers = row_of(w, "workers");
  EXPECT_TRUE(workers.measured);
  EXPECT_EQ(workers.workers, 4);
  EXPECT_EQ(workers.cores_needed, 2);
  EXPECT_FALSE(workers.exceeds_cores);
  EXPECT_EQ(w.recommendation.kind, Recommendation::Kind::kReachesTarget);
  EXPECT_EQ(w.recommendation.cores_needed, 2);
  EXPECT_NE(w.recommendation.text.find("Run 4 workers"), std::string::npos) << w.recommendation.text;
  EXPECT_NE(w.recommendation.text.find("on 2 cores (oversubscribed)"), std::string::npos)
      << w.recommendation.text;
  ASSERT_TRUE(w.check.has_value());
  EXPECT_TRUE(w.check->at_workers_candidate);
  EXPECT_DOUBLE_EQ(w.check->predicted_step_ms, 25);  // max(0.7 x 64 / min(4, 2) = 22.4, 25)
  EXPECT_NEAR(w.check->error_pct, 100.0 * (25 - 25.3) / 25.3, 1e-9);
}

TEST(WhatIfWorkers, WarnsWhenTheWorkersNeedMoreCoresThanAvailable) {
  // 3 workers needed (0.9 x 64 / 25 = 2.3), 2 cores available: priced on 3 cores, flagged.
  const Report two = report_of(run_doc(sweep_rows(25)));
  const WhatIfRow& workers = row_of(two.what_if, "workers");
  EXPECT_EQ(workers.workers, 3);
  EXPECT_TRUE(workers.exceeds_cores);
  EXPECT_NEAR(workers.data_ms, 64.0 / 3, 1e-12);  // on 3 cores, not min(3, 2)
  const std::string text = format_text(two);
  EXPECT_NE(text.find("3 workers need 3 cores"), std::string::npos) << text;
  EXPECT_EQ(to_json(two)["what_if"]["rows"][1]["exceeds_cores_available"], true);

  const Report four = report_of(run_doc(sweep_rows(25), {{"cores_available", "4"}}));
  EXPECT_FALSE(row_of(four.what_if, "workers").exceeds_cores);
  EXPECT_EQ(format_text(four).find("need 3 cores"), std::string::npos);
}

// --- the recommendation ---------------------------------------------------------------------

TEST(Recommendation, ChangesWithTheStepTime) {
  // 25 ms: data-bound at 1 and 2 workers; workers alone need 3 cores, decode:auto 2.
  const Recommendation fast = report_of(run_doc(sweep_rows(25))).what_if.recommendation;
  EXPECT_EQ(fast.kind, Recommendation::Kind::kReachesTarget);
  EXPECT_FALSE(fast.model_off);  // the check at 2 workers: -1.2 %
  EXPECT_EQ(fast.label, "decode:auto");
  EXPECT_EQ(fast.workers, 2);
  EXPECT_DOUBLE_EQ(fast.au_pct, 100.0 * 25 / 25.6);
  EXPECT_NE(fast.text.find("decode: {mode: auto}"), std::string::npos) << fast.text;
  EXPECT_NE(fast.text.find("2 workers"), std::string::npos) << fast.text;

  // 40 ms: 2 workers measured at AU 99 %; decode:auto would need 2 as well (1.15): a tie
  // goes to workers alone, which changes nothing the model sees.
  const Recommendation mid = report_of(run_doc(sweep_rows(40))).what_if.recommendation;
  EXPECT_EQ(mid.kind, Recommendation::Kind::kReachesTarget);
  EXPECT_EQ(mid.label, "workers");
  EXPECT_EQ(mid.workers, 2);
  EXPECT_NE(mid.text.find("Run 2 workers"), std::string::npos) << mid.text;

  // 70 ms: compute-bound at 1 worker already (AU 100 x 70 / 70.5 = 99.3 %).
  const Recommendation slow = report_of(run_doc(sweep_rows(70))).what_if.recommendation;
  EXPECT_EQ(slow.kind, Recommendation::Kind::kComputeBoundAlready);
  EXPECT_EQ(slow.workers, 1);
  EXPECT_NEAR(slow.au_pct, 100.0 * 70 / 70.5, 1e-9);
  EXPECT_NE(slow.text.find("Compute-bound already"), std::string::npos) << slow.text;
  EXPECT_NE(slow.text.find("99.3 %"), std::string::npos) << slow.text;
  EXPECT_EQ(slow.text.find("Fewer workers"), std::string::npos) << slow.text;
  // Swept from 2 workers: fewer may do (0.9 x 1 ms x 64 / 70 ms = 0.82 -> 1 worker).
  const Recommendation from_two =
      report_of(run_doc({sample("", 1000), end_to_end(2, 32, 70, 70.3), end_to_end(4, 16, 70, 70.2)}))
          .what_if.recommendation;
  EXPECT_EQ(from_two.kind, Recommendation::Kind::kComputeBoundAlready);
  EXPECT_NE(from_two.text.find("the model says 1"), std::string::npos) << from_two.text;
}

TEST(Recommendation, SaysTheBestWhenNothingReachesTheTargetOnTheCores) {
  // One core: workers alone need 3, decode:auto 2. On 1 core the best is decode:auto:
  // data 0.8 x 64 = 51.2 ms, AU 100 x 25 / 51.2 = 48.8 %, 1250 images/s.
  const Report r = report_of(run_doc(sweep_rows(25), {{"cores_available", "1"}}));
  const Recommendation& rec = r.what_if.recommendation;
  EXPECT_EQ(rec.kind, Recommendation::Kind::kShortOfTarget);
  EXPECT_EQ(rec.label, "decode:auto");
  EXPECT_EQ(rec.workers, 1);
  EXPECT_DOUBLE_EQ(rec.au_pct, 100.0 * 25 / 51.2);
  EXPECT_DOUBLE_EQ(rec.images_per_second, 1250);
  EXPECT_NE(rec.text.find("Nothing reaches AU 90 % on the 1.0 cores"), std::string::npos) << rec.text;
  EXPECT_NE(rec.text.find("on 2 cores"), std::string::npos) << rec.text;
  EXPECT_EQ(to_json(r)["recommendation"]["kind"], "short_of_target");
}

TEST(FixCheck, TheDecodeFixRunEndToEndIsSetAgainstItsPrediction) {
  // decode:auto costs 0.8 ms per sample: at 2 workers on 2 cores the model says data =
  // 0.8 x 64 / 2 = 25.6 ms against a 20 ms step, so step 25.6 ms and AU 78.1 %. The run
  // measured 27 ms (the fix's own end-to-end case): error (25.6 - 27) / 27 = -5.19 %.
  std::vector<json> rows = sweep_rows(20);
  rows.push_back(row("BM_EndToEnd/imagenet_train/decode:auto/emulated/workers:2/iterations:30/real_time",
                     {{"workers", 2}, {"data_ms", 25.9}, {"compute_ms", 20.0}, {"step_ms", 27.0},
                      {"au_pct", 100.0 * 20 / 27}, {"batch_size", 64}}));
  const Report r = report_of(run_doc(rows));
  ASSERT_EQ(r.what_if.fix_checks.size(), 1u);
  const FixCheck& f = r.what_if.fix_checks[0];
  EXPECT_EQ(f.label, "decode:auto");
  EXPECT_EQ(f.check.workers, 2);
  EXPECT_NEAR(f.check.predicted_step_ms, 25.6, 1e-9);
  EXPECT_NEAR(f.check.predicted_au_pct, 100.0 * 20 / 25.6, 1e-9);
  EXPECT_NEAR(f.check.measured_step_ms, 27.0, 1e-9);
  EXPECT_NEAR(f.check.error_pct, 100.0 * (25.6 - 27) / 27, 1e-9);
  EXPECT_TRUE(f.check.over_tolerance());
  // The fix's end-to-end case is not a point of the sweep.
  EXPECT_EQ(r.verdict.sweep.size(), 2u);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("Check (the decode:auto fix ran for real, end to end at 2 workers): step "
                      "predicted 25.60 ms, measured 27.00 ms"), std::string::npos) << text;
  EXPECT_EQ(to_json(r)["fix_checks"][0]["candidate"], "decode:auto");
  // Without that case there is nothing to check.
  EXPECT_TRUE(report_of(run_doc(sweep_rows(20))).what_if.fix_checks.empty());
}

TEST(FixCheck, APriceMadeImageByImageIsTheCheckedPrediction) {
  // A presized copy's end-to-end case carries the step model's per-image price made before
  // it ran (fix_pred_step_ms 20.4 ms): the check uses it, not the row's mean price, so the
  // check and the tails section give one number (the mix: the mean price read 42.82 ms for
  // a large-only copy measured at 25.11, the per-image price 25.12).
  std::vector<json> rows = sweep_rows(20);
  rows.push_back(row("BM_EndToEnd/imagenet_train/decode:auto/emulated/workers:2/iterations:30/real_time",
                     {{"workers", 2}, {"data_ms", 25.9}, {"compute_ms", 20.0}, {"step_ms", 20.5},
                      {"au_pct", 100.0 * 20 / 20.5}, {"batch_size", 64}, {"fix_pred_step_ms", 20.4}}));
  const Report r = report_of(run_doc(rows));
  ASSERT_EQ(r.what_if.fix_checks.size(), 1u);
  const FixCheck& f = r.what_if.fix_checks[0];
  EXPECT_TRUE(f.priced_per_image);
  EXPECT_NEAR(f.check.predicted_step_ms, 20.4, 1e-12);  // not the mean price, 25.6
  EXPECT_NEAR(f.check.error_pct, 100.0 * (20.4 - 20.5) / 20.5, 1e-9);
  EXPECT_NEAR(f.check.predicted_au_pct, 100.0 * 20 / 20.4, 1e-9);
  EXPECT_NE(format_text(r).find("at 2 workers; priced before it ran from each image's cost, as in the "
                                "tails above): step predicted 20.40 ms"), std::string::npos);
  EXPECT_EQ(to_json(r)["fix_checks"][0]["priced_per_image"], true);
}

TEST(FixCheck, TheLoadersOwnOverheadMeasuredAtOneWorkerScalesThePrediction) {
  // Today 1 ms per sample, but its loader alone took 69.12 ms per batch at 1 worker, not
  // 1 x 64 = 64: k = 69.12 / 64 = 1.08. decode:auto at 0.4 ms per sample, run end to end at
  // 1 worker: predicted data 1.08 x 0.4 x 64 = 27.648 ms against a 25 ms step, measured
  // 27.9 ms: error (27.648 - 27.9) / 27.9 = -0.90 % (without k: 25.6, -8.2 %).
  std::vector<json> rows = {sample("", 1000), sample("/decode:auto", 400),
                            end_to_end(1, 69.12, 25, 69.5), end_to_end(2, 34.8, 25, 35.1)};
  rows.push_back(row("BM_EndToEnd/imagenet_train/decode:auto/emulated/workers:1/iterations:30/real_time",
                     {{"workers", 1}, {"data_ms", 27.7}, {"compute_ms", 25.0}, {"step_ms", 27.9},
                      {"au_pct", 100.0 * 25 / 27.9}, {"batch_size", 64}}));
  const Report r = report_of(run_doc(rows));
  EXPECT_NEAR(r.what_if.loader_overhead, 1.08, 1e-12);
  EXPECT_EQ(r.what_if.loader_overhead_workers, 1);
  ASSERT_EQ(r.what_if.fix_checks.size(), 1u);
  const PredictionCheck& c = r.what_if.fix_checks[0].check;
  EXPECT_NEAR(c.predicted_step_ms, 1.08 * 0.4 * 64, 1e-9);
  EXPECT_NEAR(c.error_pct, 100.0 * (1.08 * 0.4 * 64 - 27.9) / 27.9, 1e-9);
  EXPECT_FALSE(c.over_tolerance());
  // The table's rows carry k too: decode:auto at 2 workers, 1.08 x 0.4 x 64 / 2 = 13.824 ms,
  // and the workers it needs: ceil(0.9 x 1.08 x 0.4 x 64 / 25) = ceil(0.995) = 1.
  const WhatIfRow& fix = row_of(r.what_if, "decode:auto");
  EXPECT_NEAR(fix.data_ms, 13.824, 1e-9);
  EXPECT_EQ(fix.workers_for_target, 1);
  EXPECT_NE(format_text(r).find("x 1.080: today's loader alone at 1 worker measured against the CPU model"), std::string::npos);
  EXPECT_NEAR(to_json(r)["what_if"]["loader_overhead"].get<double>(), 1.08, 1e-12);
  // A cold sweep's data time holds the fetch stall: no k from it.
  const Report cold = report_of(run_doc(rows, {{"cache_mode", "cold"}}));
  EXPECT_DOUBLE_EQ(cold.what_if.loader_overhead, 1.0);
  EXPECT_EQ(cold.what_if.loader_overhead_workers, 0);
  EXPECT_NE(cold.what_if.cold_sweep_note.find("the gap includes the fetch stall"), std::string::npos);
  EXPECT_TRUE(r.what_if.cold_sweep_note.empty());
  // A throttled sweep is read through the link: the same.
  const Report throttled = report_of(run_doc(rows, {{"read_throttle_mib_s", "20.000000"}}));
  EXPECT_DOUBLE_EQ(throttled.what_if.loader_overhead, 1.0);
  EXPECT_FALSE(throttled.what_if.cold_sweep_note.empty());
}

TEST(FixCheck, AtTheRecommendedWorkerCountWhenThatRan) {
  // decode:auto at 0.3 ms per sample reaches AU 90 % with 1 worker (0.3 x 64 = 19.2 ms
  // against a 25 ms step) while today needs 3 (more than the 2 cores): the recommendation
  // is decode:auto at 1 worker, and the check uses the fix's 1-worker case.
  std::vector<json> rows = {sample("", 1000), sample("/decode:auto", 300),
                            end_to_end(1, 64, 25, 64.5), end_to_end(2, 32, 25, 32.4),
                            loader(1, 64), loader(2, 32)};
  for (int w : {1, 2})
    rows.push_back(row("BM_EndToEnd/imagenet_train/decode:auto/emulated/workers:" + std::to_string(w) +
                           "/iterations:30/real_time",
                       {{"workers", w}, {"data_ms", 19.2 / w}, {"compute_ms", 25.0},
                        {"step_ms", w == 1 ? 25.6 : 25.2}, {"au_pct", w == 1 ? 97.66 : 99.2},
                        {"batch_size", 64}}));
  const Report r = report_of(run_doc(rows));
  ASSERT_EQ(r.what_if.recommendation.label, "decode:auto");
  ASSERT_EQ(r.what_if.recommendation.workers, 1);
  ASSERT_EQ(r.what_if.fix_checks.size(), 1u);
  const PredictionCheck& c = r.what_if.fix_checks[0].check;
  EXPECT_EQ(c.workers, 1);
  EXPECT_NEAR(c.predicted_step_ms, 25.0, 1e-9);  // max(0.3 x 64 / 1, 25)
  EXPECT_NEAR(c.measured_step_ms, 25.6, 1e-9);
  EXPECT_NEAR(c.error_pct, 100.0 * (25.0 - 25.6) / 25.6, 1e-9);
  EXPECT_FALSE(c.over_tolerance());
}

TEST(WhatIfTable, TheUint8HandOffIsAFixWhoseAcceleratorShareIsLabelledEstimated) {
  std::vector<json> rows = sweep_rows(25);
  rows.push_back(sample("/collate:uint8", 940));
  const Report r = report_of(run_doc(rows));
  const WhatIfRow& u8 = row_of(r.what_if, "collate:uint8");
  EXPECT_EQ(u8.kind, CandidateKind::kFix);
  EXPECT_NEAR(u8.cpu_ms_per_sample, 0.94, 1e-12);
  EXPECT_NEAR(u8.saving_ms_per_sample, 0.06, 1e-12);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("(collate:uint8: batches of uint8"), std::string::npos) << text;
  EXPECT_NE(text.find("is estimated, not measured without a GPU"), std::string::npos) << text;
}

// --- on the accelerator (issue 29) -----------------------------------------------------------

// A device case as bench writes it: BM_Transform/<op>/device/uint8_nhwc/batch:<n>, its
// CUDA-event ms per batch in batch_ms.
json device_op(const std::string& op, int n, double batch_ms, const std::string& format = "uint8_nhwc") {
  return row("BM_Transform/" + op + "/device/" + format + "/batch:" + std::to_string(n) +
                 "/iterations:100/manual_time",
             {{"batch_ms", batch_ms}, {"batch_images", n}, {"us_per_image", 1000 * batch_ms / n}});
}

json with_device(json context = json::object()) {
  json ctx = {{"gpu_available", "true"}, {"gpu", "NVIDIA H100 80GB HBM3"}};
  ctx.update(context);
  return ctx;
}

// Today 1 ms of CPU per sample, its stages read 0.05 + decode 0.6 + transform 0.35 ms wall:
// decode is 0.6 of it, 0.6 ms of CPU. nvJPEG: 32000 images/s (0.03125 ms per image) and 50 µs
// of host CPU per image. The row: CPU 1 - 0.6 + 0.05 = 0.45 ms per sample, data 0.45 x 64 / 2 =
// 14.4 ms; the GPU 64 x 0.03125 = 2 ms per batch on top of compute 25: step max(14.4, 27) =
// 27, AU 100 x 25 / 27 = 92.59 %, 64000 / 27 = 2370.4 images/s; saving 0.55 ms (55 %), not
// paired; for 90 %: 25 / 27 = 92.6 % >= 90, and ceil(0.9 x 0.45 x 64 / 25) = ceil(1.04) = 2.
// At 3200 images/s the GPU takes 20 ms per batch: step max(14.4, 45) = 45, AU 55.6 %, never 90 %.
TEST(WhatIfDevice, DecodeOnTheAcceleratorFromNvjpegWorkedByHand) {
  const auto doc = [](double nvjpeg_images_per_second) {
    std::vector<json> rows = sweep_rows(25);
    rows[0]["read_ms"] = 0.05;  // today's BM_Sample
    rows[0]["decode_ms"] = 0.6;
    rows[0]["transform_ms"] = 0.35;
    rows.push_back(row("BM_Decode/nvjpeg/real_time",
                       {{"items_per_second", nvjpeg_images_per_second}, {"us_per_image", 50.0}}));
    rows.push_back(row("BM_Decode/turbo_full", {{"items_per_second", 1600.0}, {"us_per_image", 625.0}}));
    return run_doc(rows, with_device());
  };
  const Report r = report_of(doc(32000));
  const WhatIf& w = r.what_if;
  const WhatIfRow& d = row_of(w, "decode on the accelerator");
  EXPECT_EQ(d.kind, CandidateKind::kDevice);
  EXPECT_EQ(d.case_name, "BM_Decode/nvjpeg");
  EXPECT_NEAR(d.cpu_ms_per_sample, 0.45, 1e-12);
  EXPECT_EQ(d.workers, 2);
  EXPECT_NEAR(d.data_ms, 14.4, 1e-9);
  EXPECT_NEAR(d.device_ms, 2.0, 1e-12);
  EXPECT_NEAR(d.step_ms, 27.0, 1e-9);
  EXPECT_NEAR(d.au_pct, 100.0 * 25 / 27, 1e-9);
  EXPECT_NEAR(d.images_per_second, 64000.0 / 27, 1e-9);
  EXPECT_NEAR(d.saving_ms_per_sample, 0.55, 1e-12);
  EXPECT_NEAR(d.saving_pct, 55, 1e-9);
  EXPECT_FALSE(d.saving_ci_ms.has_value());  // two cases, not paired
  EXPECT_EQ(d.workers_for_target, 2);
  ASSERT_TRUE(w.device_decode.has_value());
  EXPECT_NEAR(w.device_decode->cpu_decode_ms, 0.6, 1e-12);
  EXPECT_NEAR(w.device_decode->host_cpu_ms, 0.05, 1e-12);
  EXPECT_TRUE(w.device_not_measured.size() == 1 && w.device_not_measured[0].label == "finish on the accelerator");
  // After the fixes, before the operators' prices; never the recommendation.
  EXPECT_EQ(w.rows[3].label, "decode on the accelerator");
  EXPECT_EQ(w.recommendation.label, "decode:auto");
  const std::string text = format_text(r);
  EXPECT_NE(text.find("(decode on the accelerator: BM_Decode/nvjpeg measured 32000 images/s (real time, "
                      "the round's images queued on one stream); BM_Decode/turbo_full on one CPU thread, "
                      "the same files: 1600 images/s (nvJPEG 20.0x). CPU: 0.550 ms per sample saved, "
                      "today's decode 0.600 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU: 0.031 ms per image x 64 images = 2.00 ms per batch, added to the step: "
                      "compute 25.00 + 2.000 = 27.00 ms per batch, AU at most 92.6 %."), std::string::npos) << text;
  const json j = to_json(r);
  const json& jd = j["what_if"]["rows"][3];
  EXPECT_EQ(jd["kind"], "device");
  EXPECT_DOUBLE_EQ(jd["device_ms_per_batch"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["what_if"]["device_decode"]["images_per_second"].get<double>(), 32000);

  const WhatIfRow slow = row_of(report_of(doc(3200)).what_if, "decode on the accelerator");
  EXPECT_NEAR(slow.device_ms, 20.0, 1e-9);  // 64 x 1000 / 3200
  EXPECT_NEAR(slow.step_ms, 45.0, 1e-9);
  EXPECT_NEAR(slow.au_pct, 100.0 * 25 / 45, 1e-9);
  EXPECT_EQ(slow.workers_for_target, 0);  // 25 / 45 < 90 % whatever the workers
  const std::string slow_text = format_text(report_of(doc(3200)));
  EXPECT_NE(slow_text.find("55.6      1422"), std::string::npos) << slow_text;
  EXPECT_NE(slow_text.find("     never               -\n"), std::string::npos) << slow_text;
  EXPECT_TRUE(to_json(report_of(doc(3200)))["what_if"]["rows"][3]["workers_for_au_target"].is_null());
}

// uint8 batches (collate:uint8: 0.06 +- 0.004 ms per sample, 20 blocks), the flip (its
// without: 0.02 +- 0.003, 16 blocks) and mixup_cutmix (6.4 +- 0.32 ms per batch of 64: 0.1 +-
// 0.005 per sample) moved to the device. Saving 0.06 + 0.02 + 0.1 = 0.18 ms per sample, +-
// sqrt(0.004^2 + 0.003^2 + 0.005^2) = sqrt(5e-5) = 0.00707; CPU 1 - 0.18 = 0.82, data 0.82 x 64 /
// 2 = 26.24 ms. GPU per batch of 64, uint8: flip 0.05, mixup_cutmix the slower of mixup 0.12
// and cutmix 0.15 = 0.15, together 0.2 ms: step max(26.24, 25.2) = 26.24, AU 100 x 25 / 26.24
// = 95.27 %, 64000 / 26.24 = 2439.0 images/s; for 90 %: ceil(0.9 x 0.82 x 64 / 25) =
// ceil(1.889) = 2. label_smoothing stays (no device version); normalize has no device case.
std::vector<json> finish_rows() {
  std::vector<json> rows = sweep_rows(25);
  rows[3]["paired_blocks"] = 16;  // without:horizontal_flip
  rows[3]["paired_saving_ms"] = 0.02;
  rows[3]["paired_saving_ci_ms"] = 0.003;
  json u8 = sample("/collate:uint8", 940);
  u8["paired_blocks"] = 20;
  u8["paired_saving_ms"] = 0.06;
  u8["paired_saving_ci_ms"] = 0.004;
  rows.push_back(u8);
  rows.push_back(row("BM_Transform/mixup_cutmix/pipeline:imagenet_train",
                     {{"batch_ms", 6.4}, {"batch_ms_ci", 0.32}, {"batch_images", 64}, {"batch_iterations", 200}}));
  rows.push_back(row("BM_Transform/label_smoothing/pipeline:imagenet_train",
                     {{"batch_ms", 0.064}, {"batch_ms_ci", 0.0064}, {"batch_images", 64}, {"batch_iterations", 200}}));
  rows.push_back(device_op("horizontal_flip", 64, 0.05));
  rows.push_back(device_op("horizontal_flip", 256, 0.2));  // another batch: not read
  rows.push_back(device_op("horizontal_flip", 64, 0.5, "float32_nchw"));  // another format: not read
  rows.push_back(device_op("mixup", 64, 0.12));
  rows.push_back(device_op("cutmix", 64, 0.15));
  return rows;
}

TEST(WhatIfDevice, FinishOnTheAcceleratorWorkedByHand) {
  const Report r = report_of(run_doc(finish_rows(), with_device()));
  const WhatIf& w = r.what_if;
  const WhatIfRow& f = row_of(w, "finish on the accelerator");
  EXPECT_EQ(f.kind, CandidateKind::kDevice);
  EXPECT_NEAR(f.saving_ms_per_sample, 0.18, 1e-12);
  ASSERT_TRUE(f.saving_ci_ms.has_value());
  EXPECT_NEAR(*f.saving_ci_ms, std::sqrt(5e-5), 1e-12);
  EXPECT_FALSE(f.within_noise);
  EXPECT_EQ(f.paired_blocks, 16);
  EXPECT_NEAR(f.cpu_ms_per_sample, 0.82, 1e-12);
  EXPECT_NEAR(f.data_ms, 26.24, 1e-9);
  EXPECT_NEAR(f.device_ms, 0.2, 1e-12);
  EXPECT_NEAR(f.step_ms, 26.24, 1e-9);
  EXPECT_NEAR(f.au_pct, 100.0 * 25 / 26.24, 1e-9);
  EXPECT_NEAR(f.images_per_second, 64000.0 / 26.24, 1e-9);
  EXPECT_NEAR(f.saving_pct, 18, 1e-9);
  EXPECT_EQ(f.workers_for_target, 2);
  ASSERT_TRUE(w.device_finish.has_value());
  ASSERT_EQ(w.device_finish->device.size(), 2u);
  EXPECT_EQ(w.device_finish->device[1].what, "mixup_cutmix");
  EXPECT_EQ(w.device_finish->device[1].case_name, "BM_Transform/cutmix/device/uint8_nhwc/batch:64");
  // collate:uint8 itself keeps its own cost, and no device time: its normalize is not timed.
  const WhatIfRow& u8 = row_of(w, "collate:uint8");
  EXPECT_DOUBLE_EQ(u8.device_ms, 0);
  EXPECT_NEAR(u8.step_ms, 30.08, 1e-9);  // 0.94 x 64 / 2
  const std::string text = format_text(r);
  EXPECT_NE(text.find("finish on the accelerator     0.820       2     26.24     26.24   95.3      2439     "
                      "0.180 +-0.007     18.0         2               -\n"), std::string::npos) << text;
  EXPECT_NE(text.find("CPU: collate:uint8 + without:horizontal_flip + batch:mixup_cutmix, each measured "
                      "paired against today, the intervals added in quadrature. GPU, per batch of 64, uint8 "
                      "NHWC, CUDA events: horizontal_flip 0.050 ms (BM_Transform/horizontal_flip/device/"
                      "uint8_nhwc/batch:64), mixup_cutmix 0.150 ms (BM_Transform/cutmix/device/uint8_nhwc/"
                      "batch:64: the slowest of its device operators: each batch runs one); 0.200 ms in all, added to the step: compute 25.00 + 0.200 = 25.20 ms per "
                      "batch, AU at most 99.2 %."), std::string::npos) << text;
  EXPECT_NE(text.find("Not priced here: normalize (on the device after the copy"), std::string::npos) << text;
  EXPECT_NE(text.find("label_smoothing (no device version: stays on the CPU)"), std::string::npos) << text;
  EXPECT_NE(text.find("the normalize on the accelerator is not measured (this run has no device normalize "
                      "at batch 64)"), std::string::npos) << text;
  EXPECT_NE(text.find("decode on the accelerator not measured: BM_Decode/nvjpeg not in this run "
                      "(gpu: NVIDIA H100 80GB HBM3; filtered out, or it failed)\n"), std::string::npos) << text;
  const json j = to_json(r);
  EXPECT_EQ(j["what_if"]["device_finish"]["device_ops"].size(), 2u);
  EXPECT_EQ(j["what_if"]["device_not_measured"].size(), 1u);
}

// A device normalize of uint8 batches at the run's batch (0.3 ms) is collate:uint8's
// accelerator share, measured: with compute 29.9 its step is max(0.94 x 64 / 2 = 30.08, 29.9 +
// 0.3 = 30.2) = 30.2 ms, AU 100 x 29.9 / 30.2 = 99.01 % (30.08 without it); the finish row
// adds it too: 0.3 + 0.05 + 0.15 = 0.5 ms.
TEST(WhatIfDevice, AMeasuredDeviceNormalizeIsCollateUint8sAcceleratorShare) {
  std::vector<json> rows = finish_rows();
  for (auto& x : rows)  // the same run against a step of 29.9 ms
    if (x.contains("compute_ms")) x["compute_ms"] = 29.9;
  rows.push_back(device_op("normalize", 64, 0.3));
  const Report r = report_of(run_doc(rows, with_device()));
  const WhatIf& w = r.what_if;
  EXPECT_NEAR(w.compute_ms, 29.9, 1e-12);
  const WhatIfRow& u8 = row_of(w, "collate:uint8");
  EXPECT_EQ(u8.kind, CandidateKind::kFix);
  EXPECT_NEAR(u8.device_ms, 0.3, 1e-12);
  EXPECT_NEAR(u8.data_ms, 30.08, 1e-9);
  EXPECT_NEAR(u8.step_ms, 30.2, 1e-9);
  EXPECT_NEAR(u8.au_pct, 100.0 * 29.9 / 30.2, 1e-9);
  EXPECT_NEAR(row_of(w, "finish on the accelerator").device_ms, 0.5, 1e-12);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("the normalize on the accelerator is measured too: 0.300 ms per batch of 64 "
                      "(BM_Transform/normalize/device/uint8_nhwc/batch:64, CUDA events), added to the step: "
                      "compute 29.90 + 0.300 = 30.20 ms per batch"), std::string::npos) << text;
  EXPECT_EQ(text.find("estimated, not measured without a GPU"), std::string::npos) << text;
}

// Without a device (every run on a machine without one) the two rows are one line each saying
// so, and no number stands in for them; with a device, what is missing is named.
TEST(WhatIfDevice, WithoutDeviceCasesTheRowsReadNotMeasuredWithTheReason) {
  std::vector<json> rows = sweep_rows(25);
  rows.push_back(sample("/collate:uint8", 940));
  const Report r = report_of(run_doc(rows, {{"gpu_available", "false"}, {"gpu", "none (no CUDA driver)"}}));
  const WhatIf& w = r.what_if;
  for (const auto& x : w.rows) EXPECT_NE(x.kind, CandidateKind::kDevice) << x.label;
  ASSERT_EQ(w.device_not_measured.size(), 2u);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("decode on the accelerator not measured: no device in this run (gpu: none (no CUDA "
                      "driver)): BM_Decode/nvjpeg skipped\n"), std::string::npos) << text;
  EXPECT_NE(text.find("finish on the accelerator not measured: no device in this run (gpu: none (no CUDA "
                      "driver)): the device batch operators (BM_Transform/horizontal_flip/device/uint8_nhwc/"
                      "batch:64, ...) skipped\n"), std::string::npos) << text;
  EXPECT_NE(text.find("is estimated, not measured without a GPU"), std::string::npos) << text;
  EXPECT_EQ(text.find("(decode on the accelerator:"), std::string::npos) << text;
  // In the table after the fixes, before the operators' prices.
  EXPECT_LT(text.find("collate:uint8    "), text.find("decode on the accelerator"));
  EXPECT_LT(text.find("finish on the accelerator"), text.find("what each operator costs"));
  const json j = to_json(r);
  ASSERT_EQ(j["what_if"]["device_not_measured"].size(), 2u);
  EXPECT_EQ(j["what_if"]["device_not_measured"][0]["candidate"], "decode on the accelerator");
  for (const auto& x : j["what_if"]["rows"]) EXPECT_NE(x["kind"], "device");

  // A device, but nvJPEG did not load, and the spec has no uint8 batches.
  const WhatIf d = report_of(run_doc(sweep_rows(25), with_device({{"nvjpeg", "libnvjpeg.so.13: cannot open shared object file"}}))).what_if;
  ASSERT_EQ(d.device_not_measured.size(), 2u);
  EXPECT_EQ(d.device_not_measured[0].reason,
            "BM_Decode/nvjpeg not in this run (nvjpeg: libnvjpeg.so.13: cannot open shared object file; filtered out, or it failed)");
  EXPECT_EQ(d.device_not_measured[1].reason,
            "no uint8 batches in this run: no BM_Sample/imagenet_train/collate:uint8 (the spec does not build "
            "with uint8 batches, or collates uint8 already)");
}

TEST(TrainingExtras, ShareCostliestAndTheMeasuredAsyncSaving) {
  const auto extras_row = [](const std::string& set, bool async, double step, double cb_ms) {
    return row("BM_EndToEnd/imagenet_train/emulated/workers:2/callbacks:" + set + "/iterations:30/real_time",
               {{"workers", 2}, {"data_ms", 32.0}, {"compute_ms", 25.0}, {"step_ms", step},
                {"au_pct", 100.0 * 25 / step}, {"stall_pct", 100.0 - 100.0 * 25 / step},
                {"batch_size", 64}, {"callbacks_ms", cb_ms}, {"callbacks_pct", 100 * cb_ms / step},
                {"callbacks_async", async ? 1 : 0}, {"callback:" + set + "_ms", cb_ms}});
  };
  std::vector<json> rows = sweep_rows(25);
  rows.push_back(extras_row("checkpoint-sync", false, 40.0, 9.0));
  rows.push_back(extras_row("checkpoint-async", true, 33.0, 0.2));
  const Report r = report_of(run_doc(rows));
  // Not sweep points: the sweep is still 1 and 2 workers from sweep_rows.
  ASSERT_EQ(r.verdict.sweep.size(), 2u);
  EXPECT_NEAR(r.verdict.sweep[1].bound.step_ms, 32.4, 1e-9);
  ASSERT_EQ(r.extras.cases.size(), 2u);
  EXPECT_EQ(r.extras.costliest, "checkpoint-sync");
  EXPECT_NEAR(r.extras.costliest_ms, 9.0, 1e-12);
  ASSERT_TRUE(r.extras.async_saving_ms.has_value());
  EXPECT_NEAR(*r.extras.async_saving_ms, 7.0, 1e-12);
  EXPECT_NEAR(*r.extras.async_saving_pct, 17.5, 1e-12);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("callbacks:checkpoint-sync: step 40.00 ms; 22.5 % in callbacks (9.00 ms), AU 62.5 %"),
            std::string::npos) << text;
  // No step intervals in these rows: the difference is given, not judged.
  EXPECT_NE(text.find("Made async, the callbacks: +7.00 ms per step between the two cases, not judged: "
                      "no interval"), std::string::npos) << text;
  EXPECT_EQ(to_json(r)["training_extras"]["costliest"], "checkpoint-sync");
  EXPECT_TRUE(report_of(run_doc(sweep_rows(25))).extras.empty());
}

// The async saving with its interval (issue 26 item 4): the two cases' step intervals
// combined, sqrt(3^2 + 4^2) = 5; a 7 ms saving is an effect, a 4 ms one within noise.
TEST(TrainingExtras, TheAsyncSavingCarriesItsIntervalAndNoiseIsSaidToBeNoise) {
  const auto extras_row = [](const std::string& set, bool async, double step, double ci) {
    return row("BM_EndToEnd/imagenet_train/emulated/workers:2/callbacks:" + set + "/iterations:30/real_time",
               {{"workers", 2}, {"data_ms", 32.0}, {"compute_ms", 25.0}, {"step_ms", step}, {"step_ms_ci", ci},
                {"au_pct", 100.0 * 25 / step}, {"batch_size", 64}, {"callbacks_ms", 1.0},
                {"callbacks_async", async ? 1 : 0}});
  };
  std::vector<json> rows = sweep_rows(25);
  rows.push_back(extras_row("checkpoint-sync", false, 40.0, 3.0));
  rows.push_back(extras_row("checkpoint-async", true, 33.0, 4.0));
  Report r = report_of(run_doc(rows));
  ASSERT_TRUE(r.extras.async_saving_ci_ms.has_value());
  EXPECT_NEAR(*r.extras.async_saving_ci_ms, 5.0, 1e-12);
  EXPECT_FALSE(r.extras.async_within_noise());
  std::string text = format_text(r);
  EXPECT_NE(text.find("saved 7.00 +-5.00 ms per step (95 %, the two cases' step intervals combined; "
                      "17.5 % of the step)"), std::string::npos) << text;
  EXPECT_NE(text.find("step 40.00 +-3.00 ms"), std::string::npos) << text;
  rows[rows.size() - 1] = extras_row("checkpoint-async", true, 36.0, 4.0);
  r = report_of(run_doc(rows));
  EXPECT_TRUE(r.extras.async_within_noise());
  text = format_text(r);
  EXPECT_NE(text.find("Made async, the callbacks: within noise (+4.00 +-5.00 ms per step"), std::string::npos) << text;
  EXPECT_EQ(text.find("saved 4.00"), std::string::npos) << text;
  EXPECT_EQ(to_json(r)["training_extras"]["async_within_noise"], true);
}

// A check whose prediction lies within the measured step's interval is noise, not a miss.
TEST(FixCheck, APredictionWithinTheMeasuredIntervalIsNoise) {
  std::vector<json> rows = sweep_rows(25);
  rows[rows.size() - 3]["step_ms_ci"] = 0.5;  // the sweep at 2 workers: 32.4 +-0.5 ms
  const Report r = report_of(run_doc(rows));
  ASSERT_TRUE(r.what_if.check.has_value());
  const PredictionCheck& c = *r.what_if.check;
  ASSERT_TRUE(c.measured_ci_ms.has_value());
  EXPECT_NEAR(*c.measured_ci_ms, 0.5, 1e-12);
  EXPECT_EQ(c.within_noise(), std::abs(c.predicted_step_ms - c.measured_step_ms) <= 0.5);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("measured 32.40 +-0.50 ms (95 %)"), std::string::npos) << text;
}

// The sampler's cost as the run measured it: the counters pass through; its case is neither
// a loader of the sweep nor a training-extras case.
TEST(TrainingExtras, SystemSamplerCostIsReportedFromItsCase) {
  std::vector<json> rows = sweep_rows(25);
  rows.push_back(row("BM_SystemSampler/imagenet_train/workers:2/iterations:8/real_time",
                     {{"workers", 2}, {"on_ms", 20.3}, {"off_ms", 20.1}, {"overhead_pct", 0.995},
                      {"sampler_cores", 0.006}, {"sampler_cost_pct", 0.35}}));
  const Report r = report_of(run_doc(rows));
  ASSERT_TRUE(r.sampler.has_value());
  EXPECT_EQ(r.sampler->name, "BM_SystemSampler/imagenet_train/workers:2");
  EXPECT_EQ(r.sampler->workers, 2);
  EXPECT_NE(format_text(r).find("0.35 % of the loader's CPU at 2 workers"), std::string::npos);
  EXPECT_NE(format_text(r).find("+1.0 % ms per batch"), std::string::npos);
  EXPECT_DOUBLE_EQ(to_json(r)["system_sampler"]["sampler_cost_pct"].get<double>(), 0.35);
  EXPECT_EQ(r.verdict.sweep.size(), 2u);
  EXPECT_FALSE(report_of(run_doc(sweep_rows(25))).sampler.has_value());
  // With the pairs' interval: +1.0 +-2.0 % holds 0, so it is noise.
  rows.back()["overhead_ci_pct"] = 2.0;
  rows.back()["pairs"] = 4;
  EXPECT_NE(format_text(report_of(run_doc(rows))).find("paired A B B A: within noise (+1.0 +-2.0 % ms "
                                                       "per batch, 95 %, 4 pairs)"), std::string::npos);
  rows.back()["overhead_ci_pct"] = 0.5;
  EXPECT_NE(format_text(report_of(run_doc(rows))).find("paired A B B A: +1.0 +-0.5 % ms per batch"),
            std::string::npos);
}

// --- trust ----------------------------------------------------------------------------------

TEST(Trust, PhysicalFloorFiresOnADoctoredRowOnly) {
  // 2 cores, 1 ms CPU per sample: no loader can beat 1 x 64 / min(w, 2) = 32 ms per batch.
  std::vector<json> rows = {sample("", 1000), loader(1, 64), loader(2, 32),
                            loader(4, 16),                 // doctored: 50 % below 32
                            end_to_end(2, 30.5, 25, 30.9),  // 4.7 % below: within 5 %
                            end_to_end(4, 30.3, 25, 30.7)};  // 5.3 % below: fires
  const Report r = report_of(run_doc(rows));
  EXPECT_FALSE(has_warning(r, TrustWarning::Kind::kPhysicalFloor, "BM_Loader/imagenet_train/workers:1"));
  EXPECT_FALSE(has_warning(r, TrustWarning::Kind::kPhysicalFloor, "BM_Loader/imagenet_train/workers:2"));
  EXPECT_TRUE(has_warning(r, TrustWarning::Kind::kPhysicalFloor, "BM_Loader/imagenet_train/workers:4"));
  EXPECT_FALSE(has_warning(r, TrustWarning::Kind::kPhysicalFloor,
                           "BM_EndToEnd/imagenet_train/emulated/workers:2"));
  EXPECT_TRUE(has_warning(r, TrustWarning::Kind::kPhysicalFloor,
                          "BM_EndToEnd/imagenet_train/emulated/workers:4"));
  // One line for the cause, naming both cases (issue 28 item 4); --verbose: each case's own.
  const std::string text = format_text(r);
  EXPECT_NE(text.find("Physical floor (2 cases: BM_Loader/imagenet_train/workers:4, "
                      "BM_EndToEnd/imagenet_train/emulated/workers:4): data per batch up to 50 % below"),
            std::string::npos) << text;
  Report verbose = r;
  verbose.trust.verbose = true;
  const std::string all = format_text(verbose);
  EXPECT_NE(all.find("data 16.00 ms per batch is 50 % below the physical floor 32.00 ms"),
            std::string::npos) << all;
}

TEST(Trust, EndToEndFloorFromTheLoaderAloneWindows) {
  // data_ms of an end-to-end case is the loader alone; its loop's workers spent 1.2 ms per
  // sample under contention, the loader alone 1.0: 30.5 ms is 21 % below 1.2 x 64 / 2 but
  // only 4.7 % below 1.0 x 64 / 2 (within 5 %): no warning from the loop's CPU.
  json e2e = end_to_end(2, 30.5, 25, 30.9, 1.2);
  e2e["alone_sample_cpu_ms"] = 1.0;
  EXPECT_FALSE(has_warning(report_of(run_doc({e2e})), TrustWarning::Kind::kPhysicalFloor,
                           "BM_EndToEnd/imagenet_train/emulated/workers:2"));
  // Without the counter (older runs) the loop's sample_cpu_ms still makes the floor.
  EXPECT_TRUE(has_warning(report_of(run_doc({end_to_end(2, 30.5, 25, 30.9, 1.2)})),
                          TrustWarning::Kind::kPhysicalFloor, "BM_EndToEnd/imagenet_train/emulated/workers:2"));
}

TEST(Trust, PhysicalFloorFromBMSampleWhenTheRowHasNoCpuCounter) {
  // The loader's own sample_cpu_ms is absent (older run): BM_Sample's 1 ms gives the floor.
  const Report r = report_of(run_doc({sample("", 1000), loader(2, 28, std::nullopt)}));
  ASSERT_TRUE(has_warning(r, TrustWarning::Kind::kPhysicalFloor, "BM_Loader/imagenet_train/workers:2"));
  EXPECT_NE(r.trust.warnings[0].text.find("BM_Sample/imagenet_train"), std::string::npos)
      << r.trust.warnings[0].text;
  // Without either cost there is no floor to break.
  const Report none = report_of(run_doc({loader(2, 28, std::nullopt)}));
  EXPECT_TRUE(none.trust.warnings.empty());
}

TEST(Trust, ContentionWhenPerSampleCpuRisesWithinTheCores) {
  const auto warned = [](double cpu_at_2, double cpu_at_4) {
    const Report r = report_of(run_doc({loader(1, 64, 1.0), loader(2, 64.0 * cpu_at_2 / 2, cpu_at_2),
                                        loader(4, 64.0 * cpu_at_4 / 2, cpu_at_4)}));
    return std::make_pair(
        has_warning(r, TrustWarning::Kind::kContention, "BM_Loader/imagenet_train/workers:2"),
        has_warning(r, TrustWarning::Kind::kContention, "BM_Loader/imagenet_train/workers:4"));
  };
  EXPECT_EQ(warned(1.2, 1.0), std::make_pair(true, false));   // +20 % at 2 <= 2 cores
  EXPECT_EQ(warned(1.1, 1.0), std::make_pair(false, false));  // +10 %: within 15 %
  EXPECT_EQ(warned(1.0, 1.6), std::make_pair(false, false));  // 4 workers > 2 cores: expected
}

TEST(Trust, BusyMachineFromTheContext) {
  const Report busy = report_of(run_doc(sweep_rows(25), {{"busy_machine", "true"},
                                                         {"other_processes_cpu_cores", "1.380936"},
                                                         {"load_average_start", "13.19"}}));
  ASSERT_FALSE(busy.trust.warnings.empty());
  EXPECT_EQ(busy.trust.warnings[0].kind, TrustWarning::Kind::kBusyMachine);
  EXPECT_NE(busy.trust.warnings[0].text.find("1.38 cores"), std::string::npos);
  EXPECT_EQ(to_json(busy)["trust_warnings"][0]["kind"], "busy_machine");

  const Report idle = report_of(run_doc(sweep_rows(25)));
  for (const auto& w : idle.trust.warnings) EXPECT_NE(w.kind, TrustWarning::Kind::kBusyMachine);
}

TEST(Trust, CvTableOfTheStageCases) {
  const auto aggregate = [](const std::string& name, const std::string& stat, double real_time) {
    json a = row(name + "_" + stat, {{"real_time", real_time}, {"cpu_time", 0.5}});
    a["run_name"] = name;
    a["run_type"] = "aggregate";
    a["aggregate_name"] = stat;
    return a;
  };
  std::vector<json> rows = sweep_rows(25);
  rows.push_back(aggregate("BM_Decode/turbo_full", "cv", 0.02));
  rows.push_back(aggregate("BM_Decode/turbo_full", "mean", 400));
  rows.push_back(aggregate("BM_Loader/imagenet_train/workers:1/iterations:30/real_time", "cv", 0.12));
  rows.push_back(aggregate("BM_EndToEnd/imagenet_train/emulated/workers:1/iterations:30/real_time", "cv", 0.3));
  const Report r = report_of(run_doc(rows, {{"repetitions", "3"}}));
  EXPECT_EQ(r.trust.repetitions, 3);
  ASSERT_EQ(r.trust.cv.size(), 2u);  // BM_EndToEnd is not a stage case
  EXPECT_EQ(r.trust.cv[0].case_name, "BM_Decode/turbo_full");
  EXPECT_DOUBLE_EQ(r.trust.cv[0].cv_pct, 2.0);
  EXPECT_FALSE(r.trust.cv[0].noisy());
  EXPECT_EQ(r.trust.cv[1].case_name, "BM_Loader/imagenet_train/workers:1");
  EXPECT_DOUBLE_EQ(r.trust.cv[1].cv_pct, 12.0);
  EXPECT_TRUE(r.trust.cv[1].noisy());
  const std::string text = format_text(r);
  EXPECT_NE(text.find("Repeatability (3 repetitions)"), std::string::npos) << text;
  EXPECT_EQ(to_json(r)["cv_pct"][1]["noisy"], true);
  // Without repetitions, no table.
  EXPECT_TRUE(report_of(run_doc(sweep_rows(25))).trust.cv.empty());
}

// --- presizing (presized:<N>) ---------------------------------------------------------------

// BM_Sample/imagenet_train/presized:256 at `us_per_image`, with the counters pipebench writes.
json presized(double us_per_image, bool counters = true) {
  json r = sample("/presized:256", us_per_image);
  if (counters) {
    r["presize_shorter_side_px"] = 256;
    r["presize_jpeg_quality"] = 90;
  }
  return r;
}

TEST(WhatIfPresize, PricedAsAFixWithItsKeptResolution) {
  std::vector<json> rows = sweep_rows(25);
  rows.push_back(presized(500));  // 0.5 ms per sample on the presized copy
  const Report r = report_of(run_doc(rows));
  const WhatIf& w = r.what_if;
  const WhatIfRow& p = row_of(w, "presized:256");
  EXPECT_EQ(p.kind, CandidateKind::kFix);
  EXPECT_EQ(p.kept_shorter_side_px, 256);
  EXPECT_EQ(p.jpeg_quality, 90);
  EXPECT_EQ(p.workers, 2);
  EXPECT_DOUBLE_EQ(p.data_ms, 16);                // 0.5 x 64 / 2
  EXPECT_DOUBLE_EQ(p.step_ms, 25);                // max(16, 25)
  EXPECT_DOUBLE_EQ(p.au_pct, 100);
  EXPECT_DOUBLE_EQ(p.images_per_second, 2560);    // 64 x 1000 / 25
  EXPECT_DOUBLE_EQ(p.saving_ms_per_sample, 0.5);  // 1.0 - 0.5
  EXPECT_DOUBLE_EQ(p.saving_pct, 50);
  EXPECT_EQ(p.workers_for_target, 2);             // ceil(0.9 x 0.5 x 64 / 25 = 1.152)
  // decode:auto (0.8 ms) also needs 2 workers (1.84): on equal cores the fix that keeps
  // the resolution wins over the cheaper presize.
  EXPECT_EQ(w.recommendation.label, "decode:auto");

  const std::string text = format_text(r);
  EXPECT_NE(text.find("presize to 256 px"), std::string::npos) << text;
  EXPECT_NE(text.find("kept resolution: shorter side 256 px"), std::string::npos) << text;
  EXPECT_NE(text.find("JPEG quality 90"), std::string::npos) << text;
  // A fix: listed before the operators' prices.
  EXPECT_LT(text.find("presize to 256 px"), text.find("what each operator costs")) << text;

  const json j = to_json(r);
  bool found = false;
  for (const auto& row : j["what_if"]["rows"]) {
    if (row["candidate"] != "presized:256") continue;
    found = true;
    EXPECT_EQ(row["kind"], "fix");
    EXPECT_EQ(row["kept_resolution"]["shorter_side_px"], 256);
    EXPECT_EQ(row["kept_resolution"]["jpeg_quality"], 90);
    EXPECT_DOUBLE_EQ(row["data_ms_per_batch"].get<double>(), 16);
  }
  EXPECT_TRUE(found) << j.dump(2);
}

TEST(WhatIfPresize, RecommendedWhenItNeedsFewerCores) {
  std::vector<json> rows = sweep_rows(25);
  rows.push_back(presized(300));  // 0.3 ms: ceil(0.9 x 0.3 x 64 / 25 = 0.69) = 1 worker
  const Report r = report_of(run_doc(rows));
  const Recommendation& rec = r.what_if.recommendation;
  EXPECT_EQ(rec.kind, Recommendation::Kind::kReachesTarget);
  EXPECT_EQ(rec.label, "presized:256");
  EXPECT_EQ(rec.workers, 1);
  EXPECT_EQ(rec.cores_needed, 1);  // decode:auto needs 2, workers alone 3
  EXPECT_DOUBLE_EQ(rec.au_pct, 100);  // data 0.3 x 64 / 1 = 19.2 < 25
  EXPECT_DOUBLE_EQ(rec.images_per_second, 2560);
  EXPECT_NE(rec.text.find("shorter side of 256 px"), std::string::npos) << rec.text;
  EXPECT_NE(rec.text.find("--shorter-side 256 --quality 90"), std::string::npos) << rec.text;
  EXPECT_NE(rec.text.find("run 1 worker"), std::string::npos) << rec.text;
}

TEST(WhatIfPresize, TheSideFromTheLabelWhenTheCountersAreMissing) {
  std::vector<json> rows = sweep_rows(25);
  rows.push_back(presized(500, false));
  const WhatIf w = report_of(run_doc(rows)).what_if;
  const WhatIfRow& p = row_of(w, "presized:256");
  EXPECT_EQ(p.kept_shorter_side_px, 256);
  EXPECT_EQ(p.jpeg_quality, 0);
}

// presized_large:<N> (the tail fix: only the large images presized, model/large_images.h):
// priced like the whole copy, named for what it changes, and preferred over the whole copy
// on equal cores (it changes fewer images); the command to make it names the threshold.
TEST(WhatIfPresize, LargeOnlySaysWhichImagesItChangedAndIsPreferredOnEqualCores) {
  std::vector<json> rows = sweep_rows(25);
  json large = sample("/presized_large:375", 300);  // 0.3 ms: 1 worker, as the whole copy
  large["presize_shorter_side_px"] = 375;
  large["presize_jpeg_quality"] = 90;
  large["presize_min_megapixels"] = 0.75;
  large["presize_changed_pct"] = 2.5;
  rows.push_back(large);
  rows.push_back(presized(300));
  const Report r = report_of(run_doc(rows));
  const WhatIfRow& p = row_of(r.what_if, "presized_large:375");
  EXPECT_EQ(p.kind, CandidateKind::kFix);
  EXPECT_EQ(p.kept_shorter_side_px, 375);
  EXPECT_DOUBLE_EQ(p.large_min_megapixels, 0.75);
  EXPECT_DOUBLE_EQ(p.large_changed_pct, 2.5);
  const Recommendation& rec = r.what_if.recommendation;
  EXPECT_EQ(rec.label, "presized_large:375");  // both need 1 core: the smaller change wins
  EXPECT_NE(rec.text.find("resize only the images above 0.75 MP (2.5 % of the round)"), std::string::npos) << rec.text;
  EXPECT_NE(rec.text.find("--shorter-side 375 --min-megapixels 0.75 --quality 90"), std::string::npos) << rec.text;
  const std::string text = format_text(r);
  EXPECT_NE(text.find("presize large to 375 px"), std::string::npos) << text;
  EXPECT_NE(text.find("only the images above 0.75 MP, 2.5 % of the round"), std::string::npos) << text;
  EXPECT_NE(change_note(p).find("the others are the originals, byte for byte"), std::string::npos) << change_note(p);
  const json j = to_json(r);
  bool found = false;
  for (const auto& row : j["what_if"]["rows"]) {
    if (row["candidate"] != "presized_large:375") continue;
    found = true;
    EXPECT_DOUBLE_EQ(row["kept_resolution"]["only_above_megapixels"].get<double>(), 0.75);
    EXPECT_DOUBLE_EQ(row["kept_resolution"]["changed_pct"].get<double>(), 2.5);
  }
  EXPECT_TRUE(found) << j.dump(2);
}

// --- your framework's loader (report/peer.h) ------------------------------------------------

// A torch_peer.py result with `points` (num_workers, images/s), written where read_peer reads it.
std::string peer_file(const std::string& name, const std::vector<std::pair<int, double>>& points) {
  json results = json::array();
  for (const auto& [w, ips] : points) results.push_back({{"num_workers", w}, {"images_per_second", ips}});
  const json doc = {{"versions", {{"torch", "1.13.0"}, {"torchvision", "0.14.1"}}},
                    {"batch_size", 64}, {"pin_memory_effective", false}, {"results", results},
                    {"left_out", json::array({{{"operator", "mixup_cutmix"}, {"reason", "timm"}}})}};
  const std::string path = (pipebench::testing::scratch_dir("whatif_peer_" + name) / "peer.json").string();
  std::ofstream(path) << doc.dump();
  return path;
}

TEST(WhatIfPeer, ARowAtTheTablesWorkerCountBesidePipebenchsLoader) {
  const BenchRun run = parse_run(run_doc(sweep_rows(25)).dump());
  Report r = build_report(run);
  add_peer(r, run, read_peer(peer_file("eval", {{1, 1280}, {2, 2000}})));
  const WhatIfRow& p = row_of(r.what_if, "your framework's loader");
  EXPECT_EQ(p.kind, CandidateKind::kPeer);
  EXPECT_EQ(p.workers, 2);                      // the table's evaluation count
  EXPECT_DOUBLE_EQ(p.data_ms, 32);              // 64 x 1000 / 2000
  EXPECT_DOUBLE_EQ(p.step_ms, 32);              // max(32, 25)
  EXPECT_DOUBLE_EQ(p.au_pct, 78.125);           // 100 x 25 / 32
  EXPECT_DOUBLE_EQ(p.images_per_second, 2000);
  ASSERT_TRUE(r.what_if.peer.has_value());
  // BM_Loader at 2 workers: items_per_second 64000 / 32 = 2000 (loader() above).
  EXPECT_DOUBLE_EQ(r.what_if.peer->pipebench_images_per_second.value_or(0), 2000);
  // Before the operators' prices, after the fixes; the advice does not change.
  size_t peer_at = 0, price_at = 0;
  for (size_t i = 0; i < r.what_if.rows.size(); ++i) {
    if (r.what_if.rows[i].kind == CandidateKind::kPeer) peer_at = i;
    if (r.what_if.rows[i].kind == CandidateKind::kPrice && price_at == 0) price_at = i;
  }
  EXPECT_EQ(peer_at + 1, price_at);
  EXPECT_EQ(r.what_if.recommendation.label, "decode:auto");
  const std::string text = format_text(r);
  EXPECT_NE(text.find("your framework's loader"), std::string::npos) << text;
  EXPECT_NE(text.find("2000 images/s (1.00x)"), std::string::npos) << text;
  EXPECT_NE(text.find("mixup_cutmix (timm)"), std::string::npos) << text;
  const json j = to_json(r);
  EXPECT_EQ(j["what_if"]["peer_loader"]["num_workers"], 2);
  for (const auto& row : j["what_if"]["rows"]) {
    if (row["kind"] == "peer_loader") {
      EXPECT_TRUE(row["cpu_ms_per_sample"].is_null());
    }
  }
}

TEST(WhatIfPeer, ItsFastestCountWithinTheCoresWhenTheTablesCountIsMissing) {
  const BenchRun run = parse_run(run_doc(sweep_rows(25)).dump());
  Report r = build_report(run);
  add_peer(r, run, read_peer(peer_file("within", {{1, 500}, {4, 3000}})));  // 4 > 2 cores
  const WhatIfRow& p = row_of(r.what_if, "your framework's loader");
  EXPECT_EQ(p.workers, 1);
  EXPECT_DOUBLE_EQ(p.data_ms, 128);           // 64 x 1000 / 500
  EXPECT_DOUBLE_EQ(p.au_pct, 100.0 * 25 / 128);
  EXPECT_DOUBLE_EQ(p.images_per_second, 500);
}

TEST(WhatIfPeer, ABadFileIsAnErrorNamingIt) {
  const std::string empty = peer_file("empty", {});
  try {
    read_peer(empty);
    FAIL() << "no error for a peer without results";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(empty), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_peer("/nonexistent/peer.json"), std::runtime_error);
}

// One core per worker; unknown cores (0) fit every count; a fit lost to rounding is kept.
TEST(WhatIfModel, WorkersFitInTheCores) {
  EXPECT_TRUE(fits_in_cores(2, 2.0));
  EXPECT_TRUE(fits_in_cores(2, 1.9999999999));
  EXPECT_FALSE(fits_in_cores(2, 1.5));
  EXPECT_FALSE(fits_in_cores(3, 2.0));
  EXPECT_TRUE(fits_in_cores(64, 0.0));
}

// What a candidate changes in the pixels, in words (report/change_note.h): the kind's
// sentence, its fidelity, crops enlarged only where they differ from today's, the
// --min-psnr mark.
TEST(ChangeNote, SaysWhatTheCandidateChangesItsFidelityAndTheCropsEnlarged) {
  WhatIfRow presized;
  presized.label = "presized:256";
  presized.kind = CandidateKind::kFix;
  presized.variant = "presized";
  presized.kept_shorter_side_px = 256;
  EXPECT_EQ(change_note(presized),
            "presized:256: crops from a copy presized to shorter side 256 px; fidelity not measured");
  model::FidelitySummary f;
  f.samples = 48;
  f.identical = 12;  // 25 %
  f.psnr_median_db = 37.31, f.psnr_p5_db = 35.2, f.ssim_median = 0.9301, f.ssim_p5 = 0.904;
  presized.fidelity = f;
  presized.upsampled_today_pct = 33.0, presized.upsampled_pct = 83.0;
  presized.below_min_psnr = true;
  EXPECT_EQ(change_note(presized),
            "presized:256: crops from a copy presized to shorter side 256 px; PSNR 37.3 dB median, "
            "35.2 dB p5, SSIM 0.930 / 0.904, 25 % of 48 samples identical; crops enlarged (window "
            "smaller than the output) 83 % against today's 33 % (*: below --min-psnr, not recommended)");

  WhatIfRow uint8;
  uint8.label = "collate:uint8";
  uint8.kind = CandidateKind::kFix;
  uint8.variant = "collate";
  model::FidelitySummary same;
  same.samples = same.identical = 48;
  uint8.fidelity = same;
  uint8.upsampled_today_pct = uint8.upsampled_pct = 33.0;  // as today's: not mentioned
  EXPECT_EQ(change_note(uint8),
            "collate:uint8: collates uint8 and normalizes after the copy; bit-identical (48 of 48 samples)");

  WhatIfRow device;
  device.label = "finish on the accelerator";
  device.kind = CandidateKind::kDevice;
  EXPECT_EQ(change_note(device), "finish on the accelerator: moves work to the accelerator (its pixels "
                                 "not compared here); fidelity not measured");
}

}  // namespace
}  // namespace pipebench::report
