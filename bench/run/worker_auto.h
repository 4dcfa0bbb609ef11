// --workers=auto: the worker count chosen before the cases are registered, by the search of
// pipeline/worker_search.h against the run's own loader, dataset and training step, within
// --cpu-budget cores (default: the cores available to this process, bench/run/machine.h).
//
// What it measures: a 1-worker probe (warm-up, then 5 batches) gives the per-sample CPU
// cost (the workers' thread CPU per sample, ms); the training step's compute_ms comes from
// the baseline (TrainStep::measure_compute_ms on a resident batch, 10 steps); each count
// the search tries is a fresh, warmed-up loader timed over --steps batches (production-based
// ms per batch, as BM_Loader). The probe and the trials are marked in --trace as
// "workers=auto search". The loader and end-to-end cases then run at 1 worker and at the
// chosen count (one count when it is 1): not a sweep. The JSON context records the budget,
// the choice and every count tried (workers_auto_*).
// Errors: what the loader throws (a bad file under --on-error=stop names itself),
// std::invalid_argument from the search.
#pragma once

#include <vector>

#include "bench/run/bench_context.h"
#include "pipeline/worker_search.h"

namespace pipebench::bench {

struct AutoWorkers {
  WorkerSearch search;
  double per_sample_ms = 0;   ///< the probe's CPU per sample, ms
  double compute_ms = 0;      ///< the step's time per batch, ms
  std::vector<int> sweep;     ///< the counts the loader and end-to-end cases run at
};

/// Runs the search. `budget` cores (>= 1).
AutoWorkers choose_workers(BenchContext& ctx, int budget);

}  // namespace pipebench::bench
