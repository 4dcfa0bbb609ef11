// The budget's plan (bench/run/case_budget.h) on figures worked by hand: how many batches a
// loader or end-to-end case times within its seconds.
#include <gtest/gtest.h>

#include <stdexcept>

#include "bench/run/case_budget.h"

namespace pipebench::bench {
namespace {

// photos-full-like: 30 ms per sample, 44 images per batch (a dataset smaller than a
// batch of 64), 2 cores, prefetch 2, 8 s per case, at most 30 batches.
CaseBudget large_photos() {
  CaseBudget b;
  b.sample_ms = 30;
  b.images_per_batch = 44;
  b.compute_ms = 25;
  b.cores = 2;
  b.prefetch = 2;
  b.budget_s = 8;
  b.max_steps = 30;
  return b;
}

TEST(CaseBudget, BatchTimeIsTheLargerOfDataOnTheCoresAndCompute) {
  const CaseBudget b = large_photos();
  EXPECT_DOUBLE_EQ(b.batch_ms(1), 1320);  // 30 x 44
  EXPECT_DOUBLE_EQ(b.batch_ms(2), 880);   // 1320 / (0.75 x 2)
  EXPECT_DOUBLE_EQ(b.batch_ms(4), 880);   // 2 cores
  CaseBudget tiny = b;
  tiny.sample_ms = 0.1;                   // 4.4 ms of data: the 25 ms step paces it
  EXPECT_DOUBLE_EQ(tiny.batch_ms(1), 25);
}

TEST(CaseBudget, StepsFitTheBudgetWithinTheBounds) {
  const CaseBudget b = large_photos();
  // A loader at 2 workers: 8000 / 880 = 9.09 batches, less one warm-up of 3: 6.
  EXPECT_EQ(b.steps(2, 1, 1), 6);
  // At 1 worker: 6.06 - 3 = 3.06 -> 3.
  EXPECT_EQ(b.steps(1, 1, 1), 3);
  // End to end at 1 worker: (6.06 - 6) / 3 < kMinSteps: kMinSteps.
  EXPECT_EQ(b.steps(1, 3, 2), kMinSteps);
  // An overhead case may go down to 1.
  EXPECT_EQ(b.steps(1, 4, 4, 1), 1);
  // Its forecast then: (4 x 3 warm-up + 4 x 1) batches of 1.32 s = 21.12 s, over twice the
  // budget (the stage timers then run no pair: OverheadCasesRunWhatTheBudgetHolds).
  EXPECT_DOUBLE_EQ(b.forecast_s(1, 4, 4, 1), 21.12);
  // Small images: 0.45 ms x 44 = 19.8 ms, paced by the 25 ms step: 320 - 6 = 314 / 3 = 104
  // per window, capped at --steps.
  CaseBudget fast = b;
  fast.sample_ms = 0.45;
  EXPECT_EQ(fast.steps(1, 3, 2), 30);
  // A bigger budget buys batches.
  CaseBudget more = b;
  more.budget_s = 40;
  EXPECT_EQ(more.steps(1, 3, 2), 8);  // (30.3 - 6) / 3 = 8.1
}

// The overhead cases (BM_StageTimers, BM_SystemSampler) run only the pairs their budget
// holds: on large photos the stage timers' one pair (2 warm-ups, 2 windows of a batch) is
// 8 x 1.32 = 10.56 s against 8 s, so none; the sampler at 2 workers, 4 pairs = 11 x 0.88 =
// 9.68 s, 2 pairs = 7 x 0.88 = 6.16 s.
TEST(CaseBudget, OverheadCasesRunWhatTheBudgetHolds) {
  CaseBudget b = large_photos();
  EXPECT_FALSE(b.overhead_fits(1, 2, 2));
  EXPECT_FALSE(b.overhead_fits(2, 8, 1));
  EXPECT_TRUE(b.overhead_fits(2, 4, 1));
  CaseBudget small = b;
  small.sample_ms = 0.45;  // 25 ms batches (the step): everything fits
  EXPECT_TRUE(small.overhead_fits(1, 4, 4));
  // An end-to-end case at 1 worker at its fewest batches: (2 x 3 + 3 x 2) x 1.32 = 15.84 s,
  // within twice the budget, not within once.
  EXPECT_TRUE(b.within(1, 3, 2, kMinSteps, 2.0));
  EXPECT_FALSE(b.within(1, 3, 2, kMinSteps, 1.0));
  b.fixed = true;  // --steps: no budget, every case as asked
  EXPECT_TRUE(b.overhead_fits(1, 4, 4));
  EXPECT_TRUE(b.within(1, 3, 2, 30, 1.0));
}

TEST(CaseBudget, FixedStepsIgnoreTheBudget) {
  CaseBudget b = large_photos();
  b.fixed = true;
  b.max_steps = 12;
  EXPECT_EQ(b.steps(1, 3, 2), 12);
  EXPECT_EQ(b.steps(2, 1, 1), 12);
}

TEST(CaseBudget, BadInputNamesWhatIsWrong) {
  CaseBudget b = large_photos();
  b.budget_s = 0;
  EXPECT_THROW(check_budget(b), std::invalid_argument);
  b = large_photos();
  b.images_per_batch = 0;
  EXPECT_THROW(check_budget(b), std::invalid_argument);
  b = large_photos();
  b.sample_ms = -1;
  EXPECT_THROW(check_budget(b), std::invalid_argument);
  EXPECT_NO_THROW(check_budget(large_photos()));
}

}  // namespace
}  // namespace pipebench::bench
