// The step model (model/step_model.h) against answers worked out by hand: constant costs
// give back max(data, compute) (model/bound.h's bound); a slow sample per batch, a single
// huge sample under in-order and out-of-order delivery, a sparse tail against the
// prefetch depth, workers beyond the cores, callbacks sync and async, the max over ranks;
// percentiles ordered, runs deterministic, bad input named.
#include "model/step_model.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/bound.h"
#include "model/copy_fix_price.h"
#include "model/large_images.h"
#include "model/tail_forecast.h"

namespace pipebench::model {
namespace {

StepModelInput input(std::vector<double> costs, int batch, int workers, int depth, double compute_ms) {
  StepModelInput in;
  in.sample_ms = std::move(costs);
  in.loader.batch = batch;
  in.loader.workers = workers;
  in.loader.prefetch_depth = depth;
  in.loop.compute_ms = compute_ms;
  return in;
}

// Replayed costs over a window that is a whole number of the pattern's periods.
SimOptions replay(int steps = 2000, int warmup = 40) {
  SimOptions o;
  o.order = CostOrder::kReplay;
  o.steps = steps;
  o.warmup_steps = warmup;
  return o;
}

// The extra time over compute_ms summed over the measured steps.
double extra_ms(const StepPrediction& p, double compute_ms) {
  return (p.step_ms - compute_ms) * p.steps;
}

TEST(StepModel, ConstantCostsGiveMaxOfDataAndComputeInBothRegimes) {
  const int batch = 64;
  const double cost = 0.5;
  for (int workers : {1, 2, 3, 4, 7, 8}) {
    for (int depth : {1, 2, 4}) {
      LoaderShape shape;
      shape.batch = batch;
      shape.workers = workers;
      shape.prefetch_depth = depth;
      const double data = mean_data_ms(cost, shape);
      if (depth > 1) {
        EXPECT_DOUBLE_EQ(data, batch * cost / workers);
      }
      for (double compute : {0.5 * data, 2.0 * data}) {  // data-bound, compute-bound
        SCOPED_TRACE("workers " + std::to_string(workers) + ", depth " + std::to_string(depth) +
                     ", compute " + std::to_string(compute));
        // 2100 steps: a whole number of the pattern's period (the batches' phase against
        // the workers' rounds repeats every `workers` batches).
        const StepPrediction p =
            predict_step(input({cost}, batch, workers, depth, compute), replay(2100, 42));
        const Bound b = compute_bound(data, compute, p.step_ms);
        EXPECT_NEAR(p.step_ms, b.bound_ms, 1e-6 * b.bound_ms);
        EXPECT_NEAR(p.step_ms, mean_bound_ms(cost, shape, compute), 1e-6 * b.bound_ms);
        EXPECT_NEAR(p.mean_bound_ms, b.bound_ms, 1e-9);
        EXPECT_NEAR(p.au_pct, 100.0 * compute / b.bound_ms, 1e-4);
        EXPECT_NEAR(p.au_pct + p.stall_pct, 100.0, 1e-12);
        EXPECT_NEAR(p.data_ms, data, 1e-6 * data);
      }
    }
  }
}

TEST(StepModel, DepthOneBatchRoundsUpToWholeRoundsOfTheWorkers) {
  // Nothing is dispatched before the previous batch is released: ceil(10 / 4) = 3 rounds.
  LoaderShape shape;
  shape.batch = 10;
  shape.workers = 4;
  shape.prefetch_depth = 1;
  EXPECT_DOUBLE_EQ(mean_data_ms(2.0, shape), 6.0);
  EXPECT_NEAR(predict_data_ms({2.0}, shape, replay()), 6.0, 1e-9);
  shape.prefetch_depth = 2;  // the workers go on with the next batch: 10 x 2 / 4
  EXPECT_NEAR(predict_data_ms({2.0}, shape, replay()), 5.0, 1e-6);
}

// One slow sample S first in every batch of B = 8, the others 1 ms, depth 1 (each batch
// starts when the previous one is taken), W workers, a 2 ms step. S = 20: one worker holds
// S while the other W - 1 finish the rest long before, so a batch takes S, not the mean's
// ((B - 1) + S) / W (13.5 at W = 2). S = 3, worked by hand: W = 2, the other worker does
// 3 samples by t = 3, then both share the last 4: 5; W = 3: two workers do 6 by t = 3, the
// last one runs 3..4: 4; W = 5: four workers do all 7 by t = 2: 3.
TEST(StepModel, OneSlowSamplePerBatchHoldsItsBatch) {
  const int batch = 8;
  struct Case {
    double slow;
    int workers;
    double batch_ms;
  };
  for (const Case& c : {Case{20, 2, 20}, Case{20, 3, 20}, Case{20, 5, 20}, Case{3, 2, 5},
                        Case{3, 3, 4}, Case{3, 5, 3}}) {
    SCOPED_TRACE("slow " + std::to_string(c.slow) + ", workers " + std::to_string(c.workers));
    std::vector<double> costs(batch, 1.0);
    costs[0] = c.slow;
    const StepPrediction p = predict_step(input(costs, batch, c.workers, 1, 2.0), replay());
    EXPECT_NEAR(p.step_ms, c.batch_ms, 1e-9);
    EXPECT_NEAR(p.p99_ms, c.batch_ms, 1e-9);
    EXPECT_NEAR(p.au_pct, 100.0 * 2.0 / c.batch_ms, 1e-9);
    EXPECT_GE(p.step_ms, p.mean_bound_ms - 1e-9);  // the mean never sees more than this
  }
  // A deep prefetch keeps every worker busy: the tail is absorbed, the mean holds.
  std::vector<double> costs(batch, 1.0);
  costs[0] = 20.0;
  const StepPrediction deep = predict_step(input(costs, batch, 2, 8, 2.0), replay());
  EXPECT_NEAR(deep.step_ms, (7.0 + 20.0) / 2, 1e-6);
  EXPECT_NEAR(deep.mean_bound_ms, 13.5, 1e-12);
}

// One huge sample among cheap ones, compute-bound (4 workers make a 16-sample batch in
// 0.4 ms against a 10 ms step). In order, the loader runs depth batches ahead, so the
// huge sample's batch is due depth steps after its dispatch: the loop stalls
// H - depth x compute, and every batch behind it waits. Out of order, the other batches
// go past it on the three free workers: no stall.
TEST(StepModel, HugeSampleBlocksInOrderDeliveryAndOutOfOrderGoesPastIt) {
  const int batch = 16, depth = 4;
  const double huge = 500, compute = 10;
  std::vector<double> costs(static_cast<size_t>(batch) * 1000, 0.1);
  costs[static_cast<size_t>(batch) * 50 + 3] = huge;
  StepModelInput in = input(costs, batch, 4, depth, compute);
  const StepPrediction ordered = predict_step(in, replay(300, 10));
  EXPECT_NEAR(extra_ms(ordered, compute), huge - depth * compute, 1.0);
  EXPECT_NEAR(ordered.max_ms, huge - (depth - 1) * compute, 1.0);
  EXPECT_NEAR(ordered.p50_ms, compute, 1e-9);
  in.loader.delivery = Delivery::kOutOfOrder;
  const StepPrediction unordered = predict_step(in, replay(300, 10));
  EXPECT_LT(extra_ms(unordered, compute), 1e-6);
  EXPECT_LT(unordered.stall_pct, ordered.stall_pct);
  EXPECT_NEAR(unordered.max_ms, compute, 1e-6);
}

// One worker, batches of 4 samples at 1 ms, every 20th batch with one sample of 41 ms
// (the batch takes D = 44 ms), a 10 ms step: the loader runs `depth` batches ahead, so the
// slow batch stalls the loop max(0, D - depth x compute) once every 20 steps:
//   mean step = 10 + max(0, 44 - 10 depth) / 20.
TEST(StepModel, DeeperPrefetchAbsorbsASparseTail) {
  std::vector<double> costs(80, 1.0);
  costs[0] = 41.0;
  double previous = std::numeric_limits<double>::infinity();
  for (int depth = 1; depth <= 6; ++depth) {
    SCOPED_TRACE("depth " + std::to_string(depth));
    const StepPrediction p = predict_step(input(costs, 4, 1, depth, 10.0), replay(2000, 40));
    EXPECT_NEAR(p.step_ms, 10.0 + std::max(0.0, 44.0 - 10.0 * depth) / 20.0, 1e-9);
    EXPECT_LE(p.step_ms, previous + 1e-12);
    previous = p.step_ms;
  }
  // Two workers, a random sparse tail: a deeper prefetch never makes it worse.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> tail(20000);
  for (double& c : tail) c = u(rng) < 0.01 ? 60.0 : 0.2;
  previous = std::numeric_limits<double>::infinity();
  for (int depth : {1, 2, 4, 8, 16}) {
    const StepPrediction p = predict_step(input(tail, 32, 2, depth, 6.0));
    EXPECT_LE(p.step_ms, previous * (1 + 1e-3)) << "depth " << depth;
    previous = p.step_ms;
  }
}

TEST(StepModel, WorkersBeyondTheCoresSlowDataProportionally) {
  LoaderShape shape;
  shape.batch = 32;
  shape.prefetch_depth = 2;
  shape.cores = 2;
  for (int workers : {2, 4, 8}) {
    shape.workers = workers;
    EXPECT_DOUBLE_EQ(contention_factor(shape), workers / 2.0);
    EXPECT_NEAR(predict_data_ms({1.0}, shape, replay()), 16.0, 1e-6) << workers << " workers";
  }
  shape.cores = 0;  // enough cores: four workers make it in a quarter
  shape.workers = 4;
  EXPECT_NEAR(predict_data_ms({1.0}, shape, replay()), 8.0, 1e-6);
  // The loop's thread keeps half a core busy: two workers share 1.5 cores.
  shape.cores = 2;
  shape.workers = 2;
  shape.loop_cpu_share = 0.5;
  EXPECT_NEAR(predict_data_ms({1.0}, shape, replay()), 32.0 / 1.5, 1e-6);
  // A fractional quota (cgroup): one worker on half a core takes twice as long.
  shape.cores = 0.5;
  shape.workers = 1;
  shape.loop_cpu_share = 0;
  EXPECT_NEAR(predict_data_ms({1.0}, shape, replay()), 64.0, 1e-6);
}

// Compute-bound: two workers make a batch of 8 x 0.1 ms in 0.4 ms, the step is 10 ms.
StepModelInput compute_bound_loop() { return input({0.1}, 8, 2, 2, 10.0); }

TEST(StepModel, SyncCallbackThatWaitsForTheStepAddsToIt) {
  StepModelInput in = compute_bound_loop();
  in.loop.callbacks = {{3.0, 1, false, true}};  // metric: .item() after the step
  EXPECT_NEAR(predict_step(in, replay()).step_ms, 13.0, 1e-9);
  in.loop.callbacks = {{3.0, 2, false, true}};  // every other step: 3 ms per 2 steps
  EXPECT_NEAR(predict_step(in, replay()).step_ms, 11.5, 1e-9);
}

// step() returns at once (one step in flight, train_step.h): a sync callback that does not
// wait for the accelerator runs while it computes, and lengthens the step only by what it
// takes beyond it.
TEST(StepModel, SyncCallbackOverlapsTheAcceleratorsStepUntilItIsLonger) {
  StepModelInput in = compute_bound_loop();
  in.loop.callbacks = {{3.0, 1, false, false}};
  EXPECT_NEAR(predict_step(in, replay()).step_ms, 10.0, 1e-9);
  in.loop.callbacks = {{15.0, 1, false, false}};
  EXPECT_NEAR(predict_step(in, replay()).step_ms, 15.0, 1e-9);
  // 30 ms every 10th step: that step is 30 ms, the other nine 10: 12 ms, not 10 + 3.
  in.loop.callbacks = {{30.0, 10, false, false}};
  EXPECT_NEAR(predict_step(in, replay()).step_ms, 12.0, 1e-9);
  // Data-bound (20 ms a batch): an 8 ms callback hides in the wait for data.
  StepModelInput data_bound = input({1.0}, 20, 1, 2, 5.0);
  data_bound.loop.callbacks = {{8.0, 1, false, false}};
  EXPECT_NEAR(predict_step(data_bound, replay()).step_ms, 20.0, 1e-6);
}

// Data-bound (one worker, 4 ms a batch, a 2 ms step), a 30 ms sync callback every 10th
// step. While it runs the loader fills the depth slots (depth x 4 ms of work) and then
// idles: the loop loses max(0, 30 - 4 x depth) every 10 steps (depth 2: 6.2 ms a step,
// 4: 5.4). With slots enough, the loop's own thread paces it: the callback, which
// overlaps its own step, then 9 steps of compute to drain the buffer: (30 + 9 x 2) / 10 =
// 4.8 (depth 8). Neither max(data, compute) = 4 nor data + callbacks = 7.
TEST(StepModel, PrefetchAbsorbsASyncCallbackInADataBoundLoop) {
  for (int depth : {2, 4, 8}) {
    StepModelInput in = input({1.0}, 4, 1, depth, 2.0);
    in.loop.callbacks = {{30.0, 10, false, false}};
    const double expected = std::max(4.0 + std::max(0.0, 30.0 - 4.0 * depth) / 10, (30.0 + 9 * 2.0) / 10);
    EXPECT_NEAR(predict_step(in, replay()).step_ms, expected, 1e-9) << "depth " << depth;
  }
}

TEST(StepModel, AsyncCallbackAddsNothingUntilItExceedsTheStep) {
  StepModelInput in = compute_bound_loop();
  in.loop.callbacks = {{8.0, 1, true, false}};
  EXPECT_NEAR(predict_step(in, replay()).step_ms, 10.0, 1e-9);
  // 15 ms of background work per 10 ms step: the queue fills, the hand-off waits, the
  // background thread paces the loop.
  in.loop.callbacks = {{15.0, 1, true, false}};
  EXPECT_NEAR(predict_step(in, replay()).step_ms, 15.0, 1e-6);
  // 30 ms every 10th step: 3 ms per step on average, absorbed by the queue.
  in.loop.callbacks = {{30.0, 10, true, false}};
  EXPECT_NEAR(predict_step(in, replay()).step_ms, 10.0, 1e-9);
}

// One sample per batch on one worker with depth 1: step = max(compute, max_r D_r).
TEST(StepModel, SynchronisedRanksWaitForTheSlowest) {
  StepModelInput in = input({}, 1, 1, 1, 5.0);
  in.loop.ranks = 2;
  in.rank_sample_ms = {{10, 1, 1, 1}, {1, 1, 10, 1}};
  EXPECT_NEAR(predict_step(in, replay()).step_ms, (10 + 5 + 10 + 5) / 4.0, 1e-9);
  in.loop.ranks = 1;
  in.rank_sample_ms = {{10, 1, 1, 1}};
  EXPECT_NEAR(predict_step(in, replay()).step_ms, (10 + 5 + 5 + 5) / 4.0, 1e-9);
  // Independent draws of {10 w.p. 0.1, 1 otherwise} per rank: E[max(5, max_r D_r)] =
  // 5 + 5 (1 - 0.9^R).
  std::vector<double> costs(10, 1.0);
  costs[0] = 10;
  for (int ranks : {1, 2, 4, 8}) {
    StepModelInput r = input(costs, 1, 1, 1, 5.0);
    r.loop.ranks = ranks;
    SimOptions o;
    o.order = CostOrder::kResample;
    o.steps = 10000;
    EXPECT_NEAR(predict_step(r, o).step_ms, 5 + 5 * (1 - std::pow(0.9, ranks)), 0.1) << ranks << " ranks";
  }
}

std::vector<double> lognormal_costs(size_t n, double sigma, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> d(std::log(0.5), sigma);
  std::vector<double> v(n);
  for (double& c : v) c = d(rng);
  return v;
}

TEST(StepModel, PercentilesAreOrderedAndRunsDeterministic) {
  const auto costs = lognormal_costs(5000, 1.5, 3);
  for (int workers : {1, 2, 4}) {
    for (double compute : {2.0, 10.0, 40.0}) {
      for (Delivery delivery : {Delivery::kInOrder, Delivery::kOutOfOrder}) {
        StepModelInput in = input(costs, 32, workers, 2, compute);
        in.loader.delivery = delivery;
        const StepPrediction p = predict_step(in);
        EXPECT_LE(p.p50_ms, p.p95_ms);
        EXPECT_LE(p.p95_ms, p.p99_ms);
        EXPECT_LE(p.p99_ms, p.max_ms);
        EXPECT_GE(p.step_ms, compute - 1e-9);
        EXPECT_GE(p.step_ms, p.mean_bound_ms * (1 - 1e-2));  // a tail only adds (up to the window)
        EXPECT_GE(p.data_wait_ms, 0);
        const StepPrediction again = predict_step(in);
        EXPECT_EQ(p.step_ms, again.step_ms);
        EXPECT_EQ(p.p99_ms, again.p99_ms);
      }
    }
  }
}

TEST(StepModel, WorkersForTargetIsTheClosedFormOnConstantCosts) {
  // The one formula: bound.h's predict_workers at 100 %, the what-if's and --workers=auto's
  // at 90 %.
  EXPECT_EQ(mean_workers_for_target(2.0, 64, 25.0, 100), 6);  // 128 / 25 = 5.12
  EXPECT_EQ(mean_workers_for_target(2.0, 64, 25.0, 90), 5);  // 0.9 x 128 / 25 = 4.6
  EXPECT_EQ(mean_workers_for_target(1.0, 50, 25.0, 100), 2);  // an exact fit stays exact
  EXPECT_EQ(mean_workers_for_target(2.0, 64, 0.0, 90), 0);    // nothing keeps up with no step
  for (double target : {50.0, 90.0, 100.0}) {
    const WorkersForTarget w = workers_for_target(input({2.0}, 64, 1, 2, 25.0), target, 256, replay());
    EXPECT_TRUE(w.reached);
    EXPECT_EQ(w.workers, mean_workers_for_target(2.0, 64, 25.0, target)) << target;
    EXPECT_GE(w.at.au_pct, target - 1e-6);
  }
}

TEST(StepModel, WorkersForTargetSeesTheTailAndTheCores) {
  // Every 10th batch of 32 holds large originals (4 ms each, the others 0.25 ms), a 20 ms
  // step, depth 2: the loader is two steps (40 ms) ahead, so a large batch made in
  // ceil(32 / w) x 4 ms stalls the loop by what exceeds 40 ms once every 10 steps:
  // 2 workers 64 ms, a 22.4 ms step, AU 89.3 %; 3 workers 44 ms, 20.4 ms, AU 98.0 %. The
  // mean (0.625 ms a sample) says one worker does.
  std::vector<double> costs(320, 0.25);
  std::fill(costs.begin(), costs.begin() + 32, 4.0);
  StepModelInput in = input(costs, 32, 1, 2, 20.0);
  EXPECT_EQ(mean_workers_for_target(0.625, 32, 20.0, 90), 1);
  const WorkersForTarget w = workers_for_target(in, 90, 256, replay());
  ASSERT_TRUE(w.reached);
  EXPECT_EQ(w.workers, 3);
  EXPECT_NEAR(w.at.step_ms, 20.4, 1e-9);
  in.loader.workers = 2;
  EXPECT_NEAR(predict_step(in, replay()).step_ms, 22.4, 1e-9);
  // Two cores: 4 samples of 10 ms per batch cannot beat 20 ms a batch, against a 10 ms step.
  StepModelInput bound = input({10.0}, 4, 1, 2, 10.0);
  bound.loader.cores = 2;
  const WorkersForTarget none = workers_for_target(bound, 90, 64, replay());
  EXPECT_FALSE(none.reached);
  EXPECT_EQ(none.workers, 2);  // the fewest with the highest AU (50 %)
  EXPECT_NEAR(none.at.au_pct, 50, 1e-6);
}

TEST(StepModel, ADefaultRunIsFast) {
  // 10000 steps of 64 samples on 8 workers (the longest automatic run), twice: the loop
  // and the loader alone. A run calls the model many times; this is its budget's guard.
  const auto costs = lognormal_costs(400000, 1.5, 5);
  const auto t0 = std::chrono::steady_clock::now();
  const StepPrediction p = predict_step(input(costs, 64, 8, 2, 10.0));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(p.steps, 10000);
  RecordProperty("seconds", std::to_string(s));
  EXPECT_LT(s, 10.0);
}

void expect_invalid(const std::function<void()>& f, const std::string& names) {
  try {
    f();
    ADD_FAILURE() << "no std::invalid_argument naming " << names;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

TEST(StepModel, BadInputIsNamed) {
  const auto with = [](const std::function<void(StepModelInput&)>& change) {
    return [change] {
      StepModelInput in = input({1.0, 2.0}, 8, 2, 2, 5.0);
      change(in);
      predict_step(in);
    };
  };
  const double nan = std::nan("");
  expect_invalid(with([](StepModelInput& in) { in.sample_ms.clear(); }), "sample_ms");
  expect_invalid(with([](StepModelInput& in) { in.sample_ms[1] = -1; }), "sample_ms[1]");
  expect_invalid(with([&](StepModelInput& in) { in.sample_ms[0] = nan; }), "sample_ms[0]");
  expect_invalid(with([](StepModelInput& in) { in.loader.batch = 0; }), "loader.batch");
  expect_invalid(with([](StepModelInput& in) { in.loader.workers = 0; }), "loader.workers");
  expect_invalid(with([](StepModelInput& in) { in.loader.prefetch_depth = 0; }), "loader.prefetch_depth");
  expect_invalid(with([](StepModelInput& in) { in.loader.cores = -1; }), "loader.cores");
  expect_invalid(with([](StepModelInput& in) { in.loader.cores = 1, in.loader.loop_cpu_share = 1; }),
                 "loader.loop_cpu_share");
  expect_invalid(with([](StepModelInput& in) { in.loader.deliver_ms = -1; }), "loader.deliver_ms");
  expect_invalid(with([&](StepModelInput& in) { in.loop.compute_ms = nan; }), "loop.compute_ms");
  expect_invalid(with([](StepModelInput& in) { in.loop.ranks = 0; }), "loop.ranks");
  expect_invalid(with([](StepModelInput& in) { in.loop.callbacks = {{-1, 1, false, false}}; }),
                 "loop.callbacks[0].ms");
  expect_invalid(with([](StepModelInput& in) { in.loop.callbacks = {{1, 0, false, false}}; }),
                 "loop.callbacks[0].every");
  expect_invalid(with([](StepModelInput& in) { in.loop.callbacks = {{1, 1, true, true}}; }),
                 "loop.callbacks[0]");
  expect_invalid(with([](StepModelInput& in) { in.loop.ranks = 2, in.rank_sample_ms = {{1.0}}; }),
                 "rank_sample_ms");
  expect_invalid([] { predict_step(input({1.0}, 8, 1, 1, 1), SimOptions{-1}); }, "options.steps");
  expect_invalid([] { workers_for_target(input({1.0}, 8, 1, 1, 1), 0); }, "target_au_pct");
  expect_invalid([] { workers_for_target(input({1.0}, 8, 1, 1, 1), 90, 0); }, "max_workers");
  expect_invalid([] { mean_workers_for_target(1, 0, 1); }, "batch");
  expect_invalid([] { mean_data_ms(-1, LoaderShape{}); }, "mean_sample_ms");
}

// The tail fixes' forecast (model/tail_forecast.h), which decides before the run whether
// they run end to end: yes on a heavy-tailed folder (3 % of files 100 times the bytes, in
// batches of 64), no on uniform files, and no on a dataset smaller than one batch, whose
// every batch is the whole set however much its files differ (photos-full: 44 originals of
// 0.26 to 24 MP).
TEST(TailForecast, RunsTheFixesOnAHeavyTailOnly) {
  TailForecastInput in;
  in.typical_sample_ms = 0.5;
  in.batch = 64;
  in.workers = 2;
  in.prefetch_depth = 2;
  in.compute_ms = 0;  // unknown: the balance point
  for (int i = 0; i < 1527; ++i) in.file_bytes.push_back(i % 33 == 0 ? 5'000'000 : 50'000);
  const TailForecast tail = forecast_tail_fixes(in);
  EXPECT_TRUE(tail.worth_running()) << tail.best_saving_pct;
  EXPECT_LT(tail.out_of_order_ms, tail.step_ms);
  EXPECT_LE(tail.deep_prefetch_ms, tail.step_ms * 1.001);
  EXPECT_GT(tail.compute_ms, 0);

  TailForecastInput uniform = in;
  for (auto& b : uniform.file_bytes) b = 50'000;
  EXPECT_FALSE(forecast_tail_fixes(uniform).worth_running()) << forecast_tail_fixes(uniform).best_saving_pct;

  TailForecastInput one_batch = in;  // 44 files in one short batch: every batch the whole set
  one_batch.file_bytes.clear();
  for (int i = 0; i < 44; ++i) one_batch.file_bytes.push_back(static_cast<uint64_t>(200'000 + 400'000 * (i % 11)));
  one_batch.batch = 44;
  EXPECT_FALSE(forecast_tail_fixes(one_batch).worth_running()) << forecast_tail_fixes(one_batch).best_saving_pct;

  TailForecastInput compute_bound = in;  // a step far longer than the data: nothing to fix
  compute_bound.compute_ms = 1000;
  EXPECT_FALSE(forecast_tail_fixes(compute_bound).worth_running());

  TailForecastInput bad = in;
  bad.typical_sample_ms = 0;
  EXPECT_THROW(forecast_tail_fixes(bad), std::invalid_argument);
  bad = in;
  bad.file_bytes.clear();
  EXPECT_THROW(forecast_tail_fixes(bad), std::invalid_argument);
}

// model/large_images.h: which images a large-only presize changes, worked by hand.
TEST(LargeImages, AutoTakesFourTimesTheMedianAndTheMedianSide) {
  // Nine 500 x 375 images (0.1875 MP, the median) and three originals: 800 x 600 (0.48 MP,
  // 2.6 x: not large), 1600 x 1200 (1.92 MP) and 5640 x 3172 (17.9 MP): threshold 0.75 MP.
  std::vector<std::pair<int, int>> dims(9, {500, 375});
  dims.push_back({800, 600});
  dims.push_back({1600, 1200});
  dims.push_back({5640, 3172});
  const auto plan = plan_large_images(dims);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->min_pixels, 750000u);
  EXPECT_EQ(plan->large, 2u);
  EXPECT_EQ(plan->images, 12u);
  EXPECT_EQ(plan->shorter_side, 375);  // the median image's shorter side
  EXPECT_NEAR(plan->large_pct(), 100.0 * 2 / 12, 1e-9);
  // Their pixels: (1.92 + 17.89) / (9 x 0.1875 + 0.48 + 1.92 + 17.89) MP = 19.81 / 21.98.
  EXPECT_NEAR(plan->pixel_share_pct, 100.0 * 19810080.0 / 21977580.0, 1e-6);
  // Never below the pipeline's own presize side (256 x 8/7 ... given as 400 here).
  EXPECT_EQ(plan_large_images(dims, 0, 400)->shorter_side, 400);
  // A threshold by hand, in megapixels: 0.4 MP takes the 800 x 600 one too.
  const auto by_hand = plan_large_images(dims, 0.4);
  ASSERT_TRUE(by_hand.has_value());
  EXPECT_EQ(by_hand->min_pixels, 400000u);
  EXPECT_EQ(by_hand->large, 3u);
}

TEST(LargeImages, UniformDataHasNone) {
  // photos-in: every image the same size; and an image exactly at the threshold is not large.
  EXPECT_FALSE(plan_large_images(std::vector<std::pair<int, int>>(256, {500, 375})).has_value());
  std::vector<std::pair<int, int>> at(5, {100, 100});
  at.push_back({200, 200});  // 40000 = 4 x 10000: at the threshold, not above
  EXPECT_FALSE(plan_large_images(at).has_value());
  EXPECT_FALSE(plan_large_images({}).has_value());
  // One large image among many that holds under 25 % of the pixels: auto plans nothing, a
  // threshold by hand still does (photos-full-like: originals only).
  std::vector<std::pair<int, int>> originals(40, {2560, 1600});
  originals.push_back({5640, 3172});  // 17.9 MP > 4 x 4.1 MP; 17.9 / (40 x 4.1 + 17.9) = 10 %
  EXPECT_FALSE(plan_large_images(originals).has_value());
  ASSERT_TRUE(plan_large_images(originals, 10).has_value());
  EXPECT_EQ(plan_large_images(originals, 10)->large, 1u);
  EXPECT_THROW(plan_large_images({{0, 10}}), std::invalid_argument);
  EXPECT_THROW(plan_large_images({{10, 10}}, -1), std::invalid_argument);
  EXPECT_THROW(plan_large_images({{10, 10}}, 1e-7), std::invalid_argument);  // below one pixel
  // A panorama above the threshold whose shorter side is already the plan's cannot shrink:
  // not large (the copy keeps its bytes).
  std::vector<std::pair<int, int>> pano(9, {500, 375});
  pano.push_back({8000, 300});   // 2.4 MP > 0.75 MP, shorter side 300 <= 375
  pano.push_back({4000, 3000});  // large
  const auto p = plan_large_images(pano);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->large, 1u);
  EXPECT_FALSE(is_large(8000ull * 300, 300, *p));
  EXPECT_TRUE(is_large(4000ull * 3000, 3000, *p));
}


// A presized copy priced from each image's paired costs (model/copy_fix_price.h), by hand.
TEST(CopyFixPrice, ConstantCostsByHandAndTheRatioFromTheMatchedImagesOnly) {
  // 16 round images at 1 ms of one thread's CPU today, 0.5 ms on the copy; today's loader
  // timed 10 of them (2 ms a visit: r = 2, the median of ten 2s) and 30 other files (9 ms,
  // not in the round: not in r). Loader: batch 4, one worker, depth 2; scale 1.5, loop factor 1.
  std::vector<PairedImageCost> paired;
  std::map<std::size_t, double> today;
  for (std::size_t i = 0; i < 16; ++i) {
    paired.push_back({i, 1.0, 0.5});
    if (i < 10) today[i] = 2.0;
  }
  for (std::size_t i = 100; i < 130; ++i) today[i] = 9.0;
  const StepModelInput shapes = input({}, 4, 1, 2, 0);  // the file's helper: loader and loop
  const LoaderShape& l = shapes.loader;
  LoopShape loop = shapes.loop;
  auto p = price_copy_fix(today, paired, 1.5, 1.0, l, loop);
  ASSERT_TRUE(p.has_value());
  EXPECT_DOUBLE_EQ(p->cost_ratio, 2.0);
  EXPECT_EQ(p->matched, 10);
  EXPECT_EQ(p->images, 16);
  // Data-bound: 4 samples x 0.5 ms x r 2 x scale 1.5 = 6 ms a batch.
  EXPECT_NEAR(p->step.step_ms, 6.0, 1e-9);
  // Compute-bound at 10 ms; the loop factor 1.2 only scales the costs (7.2 ms < 10).
  loop.compute_ms = 10;
  p = price_copy_fix(today, paired, 1.5, 1.2, l, loop);
  ASSERT_TRUE(p.has_value());
  EXPECT_NEAR(p->step.step_ms, 10.0, 1e-9);
  loop.compute_ms = 0;
  p = price_copy_fix(today, paired, 1.5, 1.2, l, loop);
  EXPECT_NEAR(p->step.step_ms, 7.2, 1e-9);
}

TEST(CopyFixPrice, EachImageKeepsItsOwnCostAndTooFewMatchesGiveNoPrice) {
  // One image in 16 stays costly on the copy (a large original the copy could not shrink):
  // the price is the simulation of those very costs, not of their mean.
  std::vector<PairedImageCost> paired;
  std::map<std::size_t, double> today;
  for (std::size_t i = 0; i < 16; ++i) {
    paired.push_back({i, 1.0, i == 3 ? 40.0 : 1.0});
    today[i] = 1.5;  // r = 1.5
  }
  const StepModelInput shapes = input({}, 4, 2, 2, 3);
  const LoaderShape& l = shapes.loader;
  const LoopShape& loop = shapes.loop;
  const auto p = price_copy_fix(today, paired, 1.2, 1.0, l, loop);
  ASSERT_TRUE(p.has_value());
  EXPECT_DOUBLE_EQ(p->cost_ratio, 1.5);
  StepModelInput in;
  in.loader = l;
  in.loop = loop;
  for (const auto& c : paired) in.sample_ms.push_back(c.b_ms * 1.5 * 1.2);  // b x r x scale
  EXPECT_DOUBLE_EQ(p->step.step_ms, predict_step(in).step_ms);
  // The mean cost (55 / 16 x 1.8 ms) at 4 a batch over 2 workers is 12.4 ms: the tail's
  // simulation (one 72 ms sample holding its batch and, in order, the next) is above it.
  EXPECT_GT(p->step.step_ms, mean_bound_ms(55.0 / 16 * 1.8, l, 3) + 0.5);
  // Seven images matched: no price; a bad cost or scale: named.
  std::map<std::size_t, double> few;
  for (std::size_t i = 0; i < 7; ++i) few[i] = 1.0;
  EXPECT_FALSE(price_copy_fix(few, paired, 1.0, 1.0, l, loop).has_value());
  EXPECT_THROW(price_copy_fix(today, paired, 0.0, 1.0, l, loop), std::invalid_argument);
  auto bad = paired;
  bad[0].b_ms = std::nan("");
  EXPECT_THROW(price_copy_fix(today, bad, 1.0, 1.0, l, loop), std::invalid_argument);
}

TEST(CopyFixPrice, TheRatioIsTheMedianSoOneLargeOriginalDoesNotSetIt) {
  // Nine typical images with visits 1.5 x their CPU, one large original at 1.0 x and 100
  // times the cost: a ratio of sums would read about 1.03; the median is 1.5.
  std::vector<PairedImageCost> paired;
  std::map<std::size_t, double> today;
  for (std::size_t i = 0; i < 10; ++i) {
    const double a = i == 0 ? 100.0 : 1.0;
    paired.push_back({i, a, 1.0});
    today[i] = i == 0 ? 100.0 : 1.5;
  }
  LoaderShape l;
  l.batch = 2;
  LoopShape loop;
  const auto p = price_copy_fix(today, paired, 1.0, 1.0, l, loop);
  ASSERT_TRUE(p.has_value());
  EXPECT_DOUBLE_EQ(p->cost_ratio, 1.5);
  EXPECT_NEAR(p->step.step_ms, 2 * 1.0 * 1.5, 1e-9);  // batch 2, one worker, data-bound
  // An even count with two different middles: ratios 1, 2, ..., 8 -> (4 + 5) / 2.
  paired.clear();
  today.clear();
  for (std::size_t i = 0; i < 8; ++i) {
    paired.push_back({i, 1.0, 1.0});
    today[i] = static_cast<double>(8 - i);  // in no particular order
  }
  EXPECT_DOUBLE_EQ(price_copy_fix(today, paired, 1.0, 1.0, l, loop)->cost_ratio, 4.5);
}

}  // namespace
}  // namespace pipebench::model
