// The sweep's tails in the report (report/tails.h, issue 34 item 3): the p99 step and the
// stall beside the means, the model's p99 and its predicted mean the case's own bound_ms (the
// JSON's number), the costliest files named, on hand-built runs whose answer is known.
#include "report/tails.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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

}  // namespace
}  // namespace pipebench::report
