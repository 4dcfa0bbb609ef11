// The bound arithmetic and the verdict: the numbers pipebench-report prints come from here,
// so each formula is checked against values worked out by hand.
#include "model/bound.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace pipebench {
namespace {

TEST(ComputeBound, DataBoundLoopStallsTheAccelerator) {
  // Loader 40 ms per batch, step 25 ms: the loop runs at ~40 ms, AU = 25 / 41.
  Bound b = compute_bound(40, 25, 41);
  EXPECT_TRUE(b.data_bound());
  EXPECT_DOUBLE_EQ(b.bound_ms, 40);
  EXPECT_NEAR(b.au_pct, 100.0 * 25 / 41, 1e-12);
  EXPECT_NEAR(b.stall_pct, 100.0 - 100.0 * 25 / 41, 1e-12);
  EXPECT_NEAR(b.prediction_error_pct, 100.0 * (40 - 41) / 41, 1e-12);
}

TEST(ComputeBound, ComputeBoundLoopIsFullyUtilised) {
  Bound b = compute_bound(10, 25, 25);
  EXPECT_FALSE(b.data_bound());
  EXPECT_DOUBLE_EQ(b.bound_ms, 25);
  EXPECT_DOUBLE_EQ(b.au_pct, 100);
  EXPECT_DOUBLE_EQ(b.stall_pct, 0);
  EXPECT_DOUBLE_EQ(b.prediction_error_pct, 0);
}

TEST(ComputeBound, AuIsClampedWhenTheStepIsFasterThanCompute) {
  // Measurement noise can make step_ms a hair below compute_ms; AU must not exceed 100.
  Bound b = compute_bound(10, 25, 24.5);
  EXPECT_DOUBLE_EQ(b.au_pct, 100);
  EXPECT_GT(b.prediction_error_pct, 0);
}

TEST(ComputeBound, RejectsBadTimes) {
  EXPECT_THROW(compute_bound(-1, 25, 25), std::invalid_argument);
  EXPECT_THROW(compute_bound(10, std::nan(""), 25), std::invalid_argument);
  EXPECT_THROW(compute_bound(10, 25, 0), std::invalid_argument);
  EXPECT_THROW(compute_bound(std::numeric_limits<double>::infinity(), 25, 25),
               std::invalid_argument);
}

TEST(PredictWorkers, CeilOfCostOverBudget) {
  // 2 ms per sample, batch 64: 128 ms of worker time per batch; 25 ms step -> 5.12 -> 6.
  EXPECT_EQ(predict_workers(2.0, 64, 25.0, 1.0), 6);
  // At 80% scaling efficiency: 128 / (25 * 0.8) = 6.4 -> 7.
  EXPECT_EQ(predict_workers(2.0, 64, 25.0, 0.8), 7);
  // Exact fit stays exact.
  EXPECT_EQ(predict_workers(1.0, 50, 25.0, 1.0), 2);
  // Cheap samples: one worker is enough.
  EXPECT_EQ(predict_workers(0.01, 64, 25.0, 1.0), 1);
}

TEST(PredictWorkers, RejectsBadInputs) {
  EXPECT_THROW(predict_workers(0, 64, 25, 1), std::invalid_argument);
  EXPECT_THROW(predict_workers(1, 0, 25, 1), std::invalid_argument);
  EXPECT_THROW(predict_workers(1, 64, 0, 1), std::invalid_argument);
  EXPECT_THROW(predict_workers(1, 64, 25, 1.5), std::invalid_argument);
  EXPECT_THROW(predict_workers(1, 64, 25, 0), std::invalid_argument);
}

SweepPoint point(int w, double data_ms, double compute_ms, double step_ms, double ips) {
  return {w, compute_bound(data_ms, compute_ms, step_ms), ips};
}

TEST(MakeVerdict, FindsTheFirstComputeBoundWorkerCount) {
  std::vector<SweepPoint> sweep = {point(4, 20, 25, 25.5, 2510), point(1, 80, 25, 81, 790),
                                   point(2, 41, 25, 42, 1524)};
  Verdict v = make_verdict(sweep, 1.25, 64, {}, {});
  ASSERT_EQ(v.sweep.size(), 3u);
  EXPECT_EQ(v.sweep.front().workers, 1);  // sorted
  ASSERT_TRUE(v.first_compute_bound.has_value());
  EXPECT_EQ(*v.first_compute_bound, 4);
  EXPECT_FALSE(v.predicted_workers.has_value());
}

TEST(MakeVerdict, PredictsWorkersBeyondTheSweepWithMeasuredEfficiency) {
  // All data-bound; w=2 gives 1.8x w=1 -> efficiency 0.9.
  std::vector<SweepPoint> sweep = {point(1, 160, 25, 161, 400), point(2, 89, 25, 90, 720)};
  Verdict v = make_verdict(sweep, 2.5, 64, {}, {});
  EXPECT_FALSE(v.first_compute_bound.has_value());
  EXPECT_NEAR(v.scaling_efficiency, 0.9, 1e-12);
  ASSERT_TRUE(v.predicted_workers.has_value());
  // 2.5 * 64 / (25 * 0.9) = 7.11 -> 8
  EXPECT_EQ(*v.predicted_workers, 8);
}

TEST(MakeVerdict, RanksStagesAndPrefersAnAlternativeForTheTopStage) {
  std::vector<StageCost> stages = {{"read", 0.05}, {"decode", 1.2}, {"transform", 0.4}};
  std::vector<Alternative> alts = {
      {"transform", "BM_Sample/casestudy", "BM_Sample/casestudy_shifts", 5.0, 2.0},
      {"decode", "BM_Sample/imagenet_train", "BM_Sample/imagenet_train_roi", 1.6, 0.9},
      {"decode", "BM_Decode/turbo_full", "BM_Decode/opencv", 1.2, 1.5},  // slower: ignored
  };
  Verdict v = make_verdict({point(1, 80, 25, 81, 790)}, 1.6, 64, stages, alts);
  ASSERT_EQ(v.stages.size(), 3u);
  EXPECT_EQ(v.stages[0].stage, "decode");
  EXPECT_EQ(v.stages[2].stage, "read");
  ASSERT_TRUE(v.best_alternative.has_value());
  EXPECT_EQ(v.best_alternative->variant, "BM_Sample/imagenet_train_roi");
  EXPECT_NEAR(v.best_alternative->saving_ms(), 0.7, 1e-12);
}

}  // namespace
}  // namespace pipebench
