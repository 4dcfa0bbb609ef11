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

TEST(ComputeBound, TakesTheStepModelsPredictionAsTheBound) {
  // A prediction above max(data, compute) (a tail the closed form cannot see): the error
  // is against it, from the one formula.
  Bound b = compute_bound(40, 25, 50, 48);
  EXPECT_DOUBLE_EQ(b.bound_ms, 48);
  EXPECT_NEAR(b.prediction_error_pct, -4.0, 1e-12);
  EXPECT_DOUBLE_EQ(b.prediction_error_pct, model::prediction_error_pct(48, 50));
  EXPECT_THROW(compute_bound(40, 25, 50, -1), std::invalid_argument);
}

TEST(PredictFromParts, WithoutCallbacksIsMaxOfDataAndCompute) {
  EXPECT_DOUBLE_EQ(predict_from_parts(40, 25, 2).step_ms, 40);
  EXPECT_DOUBLE_EQ(predict_from_parts(10, 25, 2).step_ms, 25);
  EXPECT_DOUBLE_EQ(predict_from_parts(10, 25, 2).au_pct, 100);
}

TEST(PredictFromParts, ASyncCallbackOnTheLoopsThreadLengthensAComputeBoundStep) {
  // Data 5 ms, compute 10 ms, a sync callback of 8 ms every step that waits for the step
  // (metric): the loop's thread waits for the step's end, then 8 ms, before the next
  // fetch: step = 10 + 8 = 18 ms (not max(5, 10) = 10).
  model::Callback metric{8.0, 1, false, true};
  EXPECT_NEAR(predict_from_parts(5, 10, 2, {metric}).step_ms, 18.0, 1e-6);
  // One that does not wait overlaps the step: max(10, 8 + 0) = 10.
  model::Callback log{8.0, 1, false, false};
  EXPECT_NEAR(predict_from_parts(5, 10, 2, {log}).step_ms, 10.0, 1e-6);
}

model::LoaderShape shape(int batch, int workers, int depth) {
  model::LoaderShape l;
  l.batch = batch;
  l.workers = workers;
  l.prefetch_depth = depth;
  return l;
}

TEST(PredictFromCosts, ConstantCostsGiveBackMaxOfDataAndCompute) {
  // 2 ms per sample, batch 8, 2 workers: 8 ms per batch; measured 12 ms (the loader's own
  // overhead): the costs are scaled to 3 ms, the step max(12, compute).
  const std::vector<double> costs(64, 2.0);
  model::LoopShape loop;
  loop.compute_ms = 10;
  CostPrediction p = predict_from_costs(costs, shape(8, 2, 2), 12.0, loop, 1);
  EXPECT_NEAR(p.scale, 1.5, 1e-9);
  EXPECT_NEAR(p.step.step_ms, 12.0, 1e-6);
  loop.compute_ms = 20;
  p = predict_from_costs(costs, shape(8, 2, 2), 12.0, loop, 1);
  EXPECT_NEAR(p.step.step_ms, 20.0, 1e-6);
  EXPECT_NEAR(p.step.au_pct, 100.0, 1e-6);
  EXPECT_NEAR(p.tail_stall_share_pct, 0.0, 1e-9);  // no stall, no share
  EXPECT_THROW(predict_from_costs({}, shape(8, 2, 2), 12.0, loop, 1), std::invalid_argument);
  EXPECT_THROW(predict_from_costs(costs, shape(8, 2, 2), -1.0, loop, 1), std::invalid_argument);
  // The workers' CPU per sample 10 % higher in the loop than alone: the loop's data time is
  // 12 x 1.1 = 13.2 ms, above a 12.5 ms step.
  loop.compute_ms = 12.5;
  p = predict_from_costs(costs, shape(8, 2, 2), 12.0, loop, 1, 1.1);
  EXPECT_NEAR(p.loop_cost_factor, 1.1, 1e-12);
  EXPECT_NEAR(p.step.step_ms, 13.2, 1e-6);
  EXPECT_NEAR(predict_from_costs(costs, shape(8, 2, 2), 12.0, loop, 1).step.step_ms, 12.5, 1e-6);
  for (double bad : {0.0, -1.0, std::nan(""), HUGE_VAL})
    EXPECT_THROW(predict_from_costs(costs, shape(8, 2, 2), 12.0, loop, 1, bad), std::invalid_argument) << bad;
}

// A known tail: 99 samples of 1 ms and one of 101 ms (mean 2 ms), batch 8, 2 workers,
// prefetch 2, in order; the compute at the closed form's data time (8 x 2 / 2 = 8 ms), so
// the closed form predicts AU 100 %. The slow sample holds its batch and, in order, the
// batches after it: the step's tail is that sample's, and without it (at the median,
// 1 ms: 4 ms per batch) the loop would never wait, so it causes all of the stall.
TEST(PredictFromCosts, OneSlowSampleMakesTheTailAndTheStall) {
  std::vector<double> costs(99, 1.0);
  costs.push_back(101.0);
  model::LoopShape loop;
  loop.compute_ms = 8.0;
  const double measured = model::predict_data_ms(costs, shape(8, 2, 2));
  const CostPrediction p = predict_from_costs(costs, shape(8, 2, 2), measured, loop, 1);
  EXPECT_NEAR(p.scale, 1.0, 1e-9);
  EXPECT_NEAR(p.step.mean_bound_ms, 8.0, 1e-9);           // the closed form
  EXPECT_GT(p.step.step_ms, 1.02 * p.step.mean_bound_ms);  // the tail costs more than the mean says
  EXPECT_LT(p.step.au_pct, 98.0);
  EXPECT_GT(p.step.p99_ms, 3 * p.step.p50_ms);             // the slow sample's batches
  EXPECT_GE(p.step.max_ms, 101.0 / 2);                     // at least half of it stalls a step
  EXPECT_GT(p.tail_stall_share_pct, 90.0);
  // The tail fixes on the same costs: a deeper prefetch absorbs part of the slow batch,
  // out-of-order delivery lets the ready batches pass it; neither is slower.
  EXPECT_LE(p.deep_prefetch_step_ms, p.step.step_ms + 1e-9);
  EXPECT_LT(p.out_of_order_step_ms, p.step.step_ms);
  EXPECT_GE(p.out_of_order_step_ms, p.step.mean_bound_ms - 1e-9);  // not below the mean's bound
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
  // For AU 90 % (model::kAuTargetPct): 0.9 x 2.5 x 64 / (25 x 0.9) = 6.4 -> 7, the step
  // model's mean_workers_for_target with the measured efficiency folded into the cost.
  EXPECT_EQ(*v.predicted_workers, 7);
  EXPECT_EQ(*v.predicted_workers, model::mean_workers_for_target(2.5 / 0.9, 64, 25, model::kAuTargetPct));
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
