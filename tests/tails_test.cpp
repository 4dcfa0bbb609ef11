// The sweep's tails in the report (report/tails.h, issue 34 item 3): the p99 step and the
// stall beside the means, the model's p99 and its predicted mean the case's own bound_ms (the
// JSON's number), the costliest files named, on hand-built runs whose answer is known.
#include "report/tails.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/case_key.h"
#include "model/legacy.h"

namespace pipebench::report {
namespace {

const std::string kE2 = "BM_EndToEnd/p/emulated/workers:2";

BenchRun run_with(std::map<std::string, double> values) {
  BenchRun r;
  const model::CaseKey key = model::legacy_key(kE2);
  r.cases[key.name()] = CaseMeans{key, std::move(values), 1};
  r.keys[key.name()] = key;
  return r;
}

std::map<std::string, double> tail_case() {
  return {{"step_ms", 21.0}, {"au_pct", 77.0}, {"stall_pct", 23.0}, {"step_p99_ms", 240.0},
          {"bound_ms", 20.6}, {"pred_step_p99_ms", 231.0}, {"pred_stall_pct", 21.5},
          {"tail_stall_share_pct", 88.0}, {"samples_timed", 1280}, {"sample_p50_ms", 0.5},
          {"sample_p99_ms", 190.0}, {"sample_max_ms", 455.0},
          {"costliest:big/IMG_0001.jpg_ms", 455.0}, {"costliest:big/IMG_0002.jpg_ms", 241.0},
          {"pred_step_deep_prefetch_ms", 18.54}, {"pred_step_out_of_order_ms", 16.48}, {"batch_bytes", 1048576.0}};
}

TEST(Tails, P99AndStallBesideTheMeansAndTheCostliestFilesNamed) {
  const BenchRun run = run_with(tail_case());
  const Tails t = sweep_tails(run, {{2, model::legacy_key(kE2).name()}});
  ASSERT_EQ(t.points.size(), 1u);
  const TailPoint& p = t.points[0];
  EXPECT_DOUBLE_EQ(p.pred_step_ms, 20.6);  // the case's bound_ms: the JSON's prediction
  ASSERT_EQ(p.costliest.size(), 2u);
  EXPECT_EQ(p.costliest[0].first, "big/IMG_0001.jpg");  // costliest first
  std::string text;
  append_tails_text(text, t);
  EXPECT_NE(text.find("240.00"), std::string::npos) << text;  // measured p99
  EXPECT_NE(text.find("231.00"), std::string::npos) << text;  // predicted p99
  EXPECT_NE(text.find("cause 88 % of the predicted stall"), std::string::npos) << text;
  EXPECT_NE(text.find("big/IMG_0001.jpg (455.0 ms), big/IMG_0002.jpg (241.0 ms)"), std::string::npos) << text;
  // The tail fixes priced: 18.54 / 20.6 - 1 = -10.0 %, 16.48 / 20.6 - 1 = -20.0 %.
  EXPECT_NE(text.find("a prefetch twice as deep 18.54 ms (-10.0 %"), std::string::npos) << text;
  EXPECT_NE(text.find("out-of-order delivery 16.48 ms (-20.0 %"), std::string::npos) << text;
  const nlohmann::json j = tails_json(t);
  EXPECT_DOUBLE_EQ(j["points"][0]["out_of_order_step_ms"].get<double>(), 16.48);
  EXPECT_DOUBLE_EQ(j["points"][0]["predicted_step_ms"].get<double>(), 20.6);
  EXPECT_DOUBLE_EQ(j["points"][0]["step_p99_ms"].get<double>(), 240.0);
  EXPECT_EQ(j["points"][0]["costliest"][1]["file"], "big/IMG_0002.jpg");
}

TEST(Tails, TheTailExplainsAStallOnlyWhereTheModelPredictsIt) {
  const Tails t = sweep_tails(run_with(tail_case()), {{2, model::legacy_key(kE2).name()}});
  // Predicted 21.5 % against 23 % measured: the tail, naming the costliest file.
  const auto why = tail_explains_stall(t, 2, 23.0);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("predicts a stall of 21.5 % (measured 23.0 %)"), std::string::npos) << *why;
  EXPECT_NE(why->find("big/IMG_0001.jpg, 455.0 ms"), std::string::npos) << *why;
  EXPECT_FALSE(tail_explains_stall(t, 2, 60.0).has_value()) << "21.5 of 60: something else stalls";
  EXPECT_FALSE(tail_explains_stall(t, 4, 23.0).has_value()) << "no such point";
}

TEST(Tails, NoRowWithoutTheDistributionAndNoFilesForASmallShare) {
  auto values = tail_case();
  values.erase("samples_timed");  // a run from before the distribution
  EXPECT_TRUE(sweep_tails(run_with(values), {{2, model::legacy_key(kE2).name()}}).empty());
  values = tail_case();
  values["tail_stall_share_pct"] = 0.4;
  std::string text;
  append_tails_text(text, sweep_tails(run_with(values), {{2, model::legacy_key(kE2).name()}}));
  EXPECT_NE(text.find("Tails"), std::string::npos);
  EXPECT_EQ(text.find("IMG_0001"), std::string::npos) << "a share under 1 % names no file";
}

// The tail fixes run end to end (issue 34 item 4): each one's measured step against the
// prediction today's case made of it, with the error, the interval, the memory a deeper
// prefetch adds and out-of-order's changed order; the priced-only line gives way to them.
BenchRun run_with_fixes() {
  BenchRun r = run_with(tail_case());
  const auto add = [&](const model::CaseKey& key, std::map<std::string, double> values) {
    r.cases[key.name()] = CaseMeans{key, std::move(values), 1};
    r.keys[key.name()] = key;
  };
  // Predicted 18.54 against 19.0 measured: -2.4 %, within +-0.8; 16.48 against 18.0: -8.4 %,
  // outside +-0.5.
  add(model::end_to_end_case("p", "emulated", 2, "prefetch", "4"),
      {{"step_ms", 19.0}, {"step_ms_ci", 0.8}, {"au_pct", 90.0}, {"fix_pred_step_ms", 18.54},
       {"fix_prediction_error_pct", -2.42}, {"prefetch_depth_batches", 4}, {"fix_host_mib", 2.0}});
  add(model::end_to_end_case("p", "emulated", 2, "delivery", "out_of_order"),
      {{"step_ms", 18.0}, {"step_ms_ci", 0.5}, {"au_pct", 95.0}, {"fix_pred_step_ms", 16.48},
       {"fix_prediction_error_pct", -8.44}, {"prefetch_depth_batches", 2}});
  // Another pipeline's fix, and a fix with callbacks: not today's.
  add(model::end_to_end_case("q", "emulated", 2, "prefetch", "4"), {{"step_ms", 5.0}});
  add(model::end_to_end_case("p", "emulated", 2, "delivery", "out_of_order", {"log-async"}), {{"step_ms", 5.0}});
  return r;
}

TEST(Tails, FixesRunEndToEndPrintMeasuredAgainstPredicted) {
  const Tails t = sweep_tails(run_with_fixes(), {{2, model::legacy_key(kE2).name()}});
  ASSERT_EQ(t.fixes.size(), 2u);
  EXPECT_EQ(t.fixes[0].label, "prefetch:4");  // the catalogue's order
  EXPECT_EQ(t.fixes[1].label, "delivery:out_of_order");
  EXPECT_TRUE(t.fixes[0].within_interval());
  EXPECT_FALSE(t.fixes[1].within_interval());
  ASSERT_TRUE(t.fixes[0].today_step_ms.has_value());
  EXPECT_DOUBLE_EQ(*t.fixes[0].today_step_ms, 21.0);
  std::string text;
  append_tails_text(text, t);
  EXPECT_NE(text.find("Tail fixes run end to end at 2 workers"), std::string::npos) << text;
  EXPECT_NE(text.find("(today measured 21.00 ms)"), std::string::npos) << text;
  EXPECT_NE(text.find("prefetch:4               measured 19.00 +-0.80 ms, predicted 18.54 ms, error -2.4 % "
                      "(within the measured interval); 4 batches in flight: 2.0 MiB more host memory."),
            std::string::npos) << text;
  EXPECT_NE(text.find("delivery:out_of_order    measured 18.00 +-0.50 ms, predicted 16.48 ms, error -8.4 % "
                      "(outside the measured interval); changes the order in which samples reach the model, "
                      "not their pixels."),
            std::string::npos) << text;
  EXPECT_EQ(text.find("priced by the step model (not run"), std::string::npos) << "they ran: " << text;
  const nlohmann::json j = tails_json(t);
  ASSERT_EQ(j["fixes"].size(), 2u);
  EXPECT_EQ(j["fixes"][1]["label"], "delivery:out_of_order");
  EXPECT_DOUBLE_EQ(j["fixes"][1]["predicted_step_ms"].get<double>(), 16.48);
  EXPECT_DOUBLE_EQ(j["fixes"][1]["prediction_error_pct"].get<double>(), -8.44);
  EXPECT_DOUBLE_EQ(j["fixes"][1]["step_ms_ci"].get<double>(), 0.5);
  EXPECT_FALSE(j["fixes"][1]["within_interval"].get<bool>());
  EXPECT_DOUBLE_EQ(j["fixes"][0]["host_mib"].get<double>(), 2.0);
  EXPECT_NE(j["fixes"][1]["note"].get<std::string>().find("not their pixels"), std::string::npos);
}

// The what-if fixes run end to end change the tail too (decode:auto's effect on it, issue
// 34 item 4): each one's measured mean and p99 against today's at the same workers.
TEST(Tails, PixelFixesRunEndToEndShowTheirMeanAndP99AgainstTodays) {
  BenchRun r = run_with(tail_case());  // today: 21.0 ms mean, 240.0 ms p99
  const auto add = [&](const model::CaseKey& key, std::map<std::string, double> values) {
    r.cases[key.name()] = CaseMeans{key, std::move(values), 1};
    r.keys[key.name()] = key;
  };
  add(model::presized(model::end_to_end_case("p", "emulated", 2), 375, "presized_large"),
      {{"step_ms", 14.0}, {"step_p99_ms", 60.0}, {"fix_pred_step_ms", 13.3}, {"fix_prediction_error_pct", -5.0}});
  add(model::end_to_end_case("p", "emulated", 2, "decode", "auto"), {{"step_ms", 18.9}, {"step_p99_ms", 216.0}});
  add(model::end_to_end_case("p", "emulated", 4, "decode", "auto"), {{"step_ms", 9.0}});  // no today at 4
  const Tails t = sweep_tails(r, {{2, model::legacy_key(kE2).name()}});
  ASSERT_EQ(t.pixel_fixes.size(), 2u);
  EXPECT_EQ(t.pixel_fixes[0].label, "decode:auto");  // the catalogue's order
  EXPECT_EQ(t.pixel_fixes[1].label, "presized_large:375");
  std::string text;
  append_tails_text(text, t);
  EXPECT_NE(text.find("decode:auto at 2 workers, run end to end: mean step 18.90 ms against today's 21.00 ms "
                      "(-10.0 %), p99 216.00 ms against 240.00 ms (-10.0 %)"), std::string::npos) << text;
  EXPECT_NE(text.find("presized_large:375 at 2 workers, run end to end: mean step 14.00 ms against today's "
                      "21.00 ms (-33.3 %), p99 60.00 ms against 240.00 ms (-75.0 %) (measured, one run each: a "
                      "difference within the steps' own spread is noise); the step model priced it at 13.30 ms "
                      "before it ran, from each image's cost in its paired case (-5.0 % off the measured).\n"),
            std::string::npos) << text;
  // decode:auto has no such price: its line ends with the measurement.
  EXPECT_NE(text.find("(-10.0 %) (measured, one run each: a difference within the steps' own spread is noise).\n"),
            std::string::npos) << text;
  const nlohmann::json j = tails_json(t);
  ASSERT_EQ(j["pixel_fixes"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["pixel_fixes"][1]["step_p99_ms"].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(j["pixel_fixes"][1]["today_step_p99_ms"].get<double>(), 240.0);
  EXPECT_DOUBLE_EQ(j["pixel_fixes"][1]["predicted_step_ms"].get<double>(), 13.3);
  EXPECT_DOUBLE_EQ(j["pixel_fixes"][1]["prediction_error_pct"].get<double>(), -5.0);
  EXPECT_TRUE(j["pixel_fixes"][0]["predicted_step_ms"].is_null());
}

// A fix case of a default run's few steps: its interval (+-25 % of the step) is wider than
// the model's 5 % tolerance, so the report gives no verdict on the prediction either way.
TEST(Tails, AFixMeasuredTooShortToCheckSaysSo) {
  BenchRun r = run_with_fixes();
  const std::string pre = model::end_to_end_case("p", "emulated", 2, "prefetch", "4").name();
  r.cases[pre].values["step_ms"] = 140.0;
  r.cases[pre].values["step_ms_ci"] = 35.0;
  r.cases[pre].values["fix_pred_step_ms"] = 93.9;
  r.cases[pre].values["fix_prediction_error_pct"] = -32.9;
  const Tails t = sweep_tails(r, {{2, model::legacy_key(kE2).name()}});
  ASSERT_EQ(t.fixes.size(), 2u);
  ASSERT_TRUE(t.fixes[0].half_width_pct().has_value());
  EXPECT_DOUBLE_EQ(*t.fixes[0].half_width_pct(), 25.0);
  std::string text;
  append_tails_text(text, t);
  EXPECT_NE(text.find("predicted 93.90 ms, error -32.9 % (the measured step's +-25 % is wider than the model's "
                      "5 % tolerance: too few steps to check it; --steps=200 measures it)"),
            std::string::npos) << text;
  const size_t begin = text.find("prefetch:4 "), end = text.find('\n', begin);
  ASSERT_NE(begin, std::string::npos) << text;
  EXPECT_EQ(text.substr(begin, end - begin).find("measured interval"), std::string::npos) << text;
  EXPECT_NE(text.find("(outside the measured interval); changes the order"), std::string::npos) << text;
  const nlohmann::json j = tails_json(t);
  EXPECT_FALSE(j["fixes"][0]["checkable"].get<bool>());
  EXPECT_TRUE(j["fixes"][1]["checkable"].get<bool>());
}

TEST(Tails, AFixWithoutTodaysPredictionSaysSo) {
  BenchRun r = run_with_fixes();
  const std::string ooo = model::end_to_end_case("p", "emulated", 2, "delivery", "out_of_order").name();
  r.cases[ooo].values.erase("fix_pred_step_ms");
  r.cases[ooo].values.erase("fix_prediction_error_pct");
  std::string text;
  append_tails_text(text, sweep_tails(r, {{2, model::legacy_key(kE2).name()}}));
  EXPECT_NE(text.find("delivery:out_of_order    measured 18.00 +-0.50 ms, not predicted (today's case at 2 "
                      "workers did not run before it)"),
            std::string::npos) << text;
  // Not run: the priced line, which says how to run them.
  text.clear();
  append_tails_text(text, sweep_tails(run_with(tail_case()), {{2, model::legacy_key(kE2).name()}}));
  EXPECT_NE(text.find("priced by the step model (not run; --tail-fixes=on runs them)"), std::string::npos) << text;
}

}  // namespace
}  // namespace pipebench::report
