// How many batches each loader and end-to-end case times (issue 26 item 8: a default run
// that ends in minutes on any dataset). Google Benchmark fixes a case's iterations when it
// is registered, so the count is planned before: a short probe measures the run's pipeline
// on a few images of the round (one thread's CPU ms per sample), and each case gets the
// batches that fit its time budget (--budget, seconds per case), at most --steps and at
// least kMinSteps (the overhead cases, BM_StageTimers and BM_SystemSampler, at least 1):
//
//   batch_ms(w) = max(sample_ms x images per batch / parallel(w), compute_ms)
//   parallel(w) = 1 at one worker, else kParallelEfficiency x min(w, cores)
//   steps       = floor((budget / batch_ms(w) - warm-up batches) / timed windows)
//
// where a case loads `timed windows` windows of `steps` batches (a loader case 1; an
// end-to-end case 3: the loader alone before, the loop, the loader alone after; the stage
// timers 4; the system sampler 8) and `warm-ups` fresh pipelines, each filling its
// prefetch queue (prefetch + 1 batches). images per batch: min(--batch, the dataset's
// images) (a dataset smaller than a batch delivers short batches). The plan is a forecast:
// a case may take longer than its budget (kMinSteps, a probe on other images), never
// fewer batches than planned. Every case's JSON row carries its batches (the iterations
// Google Benchmark records), and the report prints what each figure rests on.
// With --steps given, every case times exactly --steps batches (no budget).
// Under mpirun every rank plans from the largest probe of all ranks (the collectives need
// the same iterations on every rank).
// Units: ms, seconds (budget), counts. Errors: std::invalid_argument from plan() for a
// budget <= 0, a probe < 0 or no images per batch.
#pragma once

#include <algorithm>

namespace pipebench::bench {

class BenchContext;

/// The fewest batches a budgeted case times per window: 2, so that even on large photos an
/// end-to-end case (3 windows and its warm-ups) stays near its budget; the report then
/// says its figures rest on few batches.
inline constexpr int kMinSteps = 2;
/// The plan's speed-up per added worker: on photos-full (5120x2880 originals) 2 workers
/// on 2 cores loaded 1.46x as fast as one (memory bandwidth, a busy host); a plan that
/// assumed 2x gave cases three times their budget.
inline constexpr double kParallelEfficiency = 0.75;
/// The default --budget, seconds per loader / end-to-end case: with kMinSteps it keeps the
/// default run under 4 minutes on photos-full (44 originals up to 5120x2880: 225 s idle on
/// 2 cores; docs/paired.md).
inline constexpr double kDefaultBudgetSeconds = 8;

struct CaseBudget {
  double sample_ms = 0;       ///< the probe: one thread's wall ms per sample
  int probe_images = 0;       ///< images the probe ran
  int images_per_batch = 1;   ///< min(--batch, dataset images)
  double compute_ms = 0;      ///< the step per batch when known before the run (emulated), else 0
  double cores = 1;           ///< cores available
  int prefetch = 2;           ///< prefetch depth, batches
  double budget_s = kDefaultBudgetSeconds;
  int max_steps = 30;         ///< --steps
  bool fixed = false;         ///< --steps given: every case max_steps

  /// The forecast time of one batch at `workers`, ms.
  double batch_ms(int workers) const;
  /// The batches per window of a case at `workers` that loads `windows` timed windows and
  /// warms up `warmups` fresh pipelines, at least `min_steps` (kMinSteps; the overhead
  /// cases, a ratio of two loaders, 1); max_steps when fixed.
  int steps(int workers, int windows, int warmups, int min_steps = kMinSteps) const;
  /// The forecast seconds of such a case timing `steps` batches per window (warm-ups
  /// included).
  double forecast_s(int workers, int windows, int warmups, int steps) const;
  /// Whether a case of `windows` windows of one batch each after `warmups` warm-ups at
  /// `workers` is forecast within the budget (always true with --steps): the overhead
  /// cases' rule (BM_StageTimers, BM_SystemSampler, a ratio of the loader with an
  /// instrument on and off, not a figure of the user's pipeline). Beyond it, on batches of
  /// seconds (large originals), no budget buys a sub-percent overhead, and the case runs
  /// with fewer pairs or not at all.
  bool overhead_fits(int workers, int windows, int warmups) const {
    return within(workers, windows, warmups, 1, 1.0);
  }
  /// Whether such a case timing `steps` batches per window is forecast within `budgets`
  /// times the budget (always true with --steps).
  bool within(int workers, int windows, int warmups, int steps, double budgets) const {
    return fixed || forecast_s(workers, windows, warmups, steps) <= budgets * budget_s;
  }};

/// Checks the plan's inputs (std::invalid_argument naming the bad one).
void check_budget(const CaseBudget& b);

/// The probe: the run's pipeline on up to 8 images spread evenly over the round (at least
/// 2, stopping after 1 s), one thread, wall ms per sample (read included: on a busy host
/// the cases' batches take wall time too); files that fail are skipped (the cases report
/// them). 0 when no image could be run.
double probe_sample_ms(BenchContext& ctx, int* images = nullptr);

}  // namespace pipebench::bench
