// The step model: the one place pipebench predicts a training loop's step (issue 34, the
// design notes' "The step model"). From the distribution of per-sample costs and the shape
// of the loader and the loop, it predicts the mean step and its p50 / p95 / p99, the
// accelerator utilisation (AU) and the stall, the loader's own time per batch, and the
// workers needed for a target AU. It sees the tail, not only the mean: one slow sample
// holds its batch, in-order delivery holds every later batch behind it, and a shallow
// prefetch cannot absorb it (MinatoLoader, arXiv 2509.10712: head-of-line blocking in the
// PyTorch DataLoader).
//
// Form: a discrete-event simulation replaying the costs through the loader's structure
// (pipeline/loader.cpp) and the end-to-end loop (bench/cases/end_to_end_bench.cpp one_step()):
//   loader   batch j is dispatched when fewer than prefetch_depth batches are in flight
//            (dispatched and not yet released by the loop; the limiter_node): at time
//            max(dispatch of j - 1, release of the (j - depth)-th batch taken). Its
//            batch samples join ONE first-in first-out queue shared by every worker (the
//            samples node, concurrency = workers; not PyTorch's batch per worker): a free
//            worker takes the oldest queued sample, so a slow sample holds one worker while
//            the others go on with the rest of its batch and the next batches' samples.
//            The worker that finishes a batch's last sample then runs batch_ms (batch
//            operators). A sample costs sample_ms x contention (below).
//   deliver  in order (the sequencer_node: batch j waits for every batch before it), or
//            out of order (PyTorch's DataLoader(in_order=False): the loop takes whichever
//            complete batch is ready first); then a serial deliver_ms (the H2D copy).
//   loop     step m: the loop's thread fetches batch m (waiting for it), hands it to the
//            accelerator, which starts when the previous step has ended (step() waits for
//            it: one step in flight, train_step.h) and computes compute_ms; the batch is
//            released at that start (a prefetch slot frees); then the callbacks due at
//            step m run on the loop's thread before the next fetch: a sync one for its ms
//            (after waiting for the step to end when waits_for_step, as `metric`, i.e.
//            `.item()`, does), an async one only for its hand-off, which waits while the
//            background thread's queue holds kCallbackQueueDepth tasks (callbacks.h).
//            So a sync callback overlaps the accelerator's current step unless it waits
//            for it: it lengthens the step only by what the loop's thread spends beyond
//            the accelerator's step and the data's wait.
//   ranks    synchronous data parallelism: `ranks` loaders, each drawing its own costs
//            (its own vector, or its own draws from the shared one), release together;
//            step m starts when every rank's batch m is ready (the max over the ranks, as
//            pipeline/dist/straggler.h's queue_ms, which this generalises: per-batch data
//            times with batch 1 and workers 1 are that model).
//   contention  workers share `cores` with the loop's own thread: every sample costs
//            max(1, workers / (cores - loop_cpu_share)) times its uncontended cost (cores
//            0: as many as needed). So workers beyond the cores slow data proportionally
//            (report/whatif.cpp's min(workers, cores) at loop_cpu_share 0).
// Assumed, not modelled: the sampler's order is a shuffle of the costs (CostOrder), the
// workers take samples strictly first in, first out (oneTBB's queueing policy; its
// spawned tasks are approximately so), dispatch and the consumer's bookkeeping take no
// time, costs are independent of the worker and of one another beyond their order, skips
// (OnError::kSkip) do not happen, the collective takes no time beyond the wait for the
// slowest rank, the compute time is the same every step, and the CPU that callbacks (sync
// ones, the async ones' background thread) take from the workers counts only through
// loop_cpu_share. A rate-limited read (a throttled link: one token bucket for every
// worker) is close to a serial stage, not a per-sample cost: given as deliver_ms (batch
// bytes / rate), its rate is right (a serial stage's place in the pipe changes the latency,
// not the rate), while the worker held waiting for tokens is left out.
// Reported: after warmup_steps, the loop's step intervals (start of step m + 1 minus start
// of step m) over `steps` steps: their mean and percentiles (linear interpolation between
// order statistics). AU = 100 x compute_ms / mean step, clamped to [0, 100] (100 when the
// step is 0); stall = 100 - AU: model/bound.h's definitions.
//
// The closed form (FastAI.jl, "Performant data pipelines"; model/bound.h): with every
// sample at the mean cost m, the loader makes a batch in
//   data_ms = (batch x m + batch_ms) x contention / workers   (max with deliver_ms)
// (depth 1: ceil(batch / workers) x m x contention + batch_ms x contention + deliver_ms:
// nothing is dispatched before the previous batch is released) and the step is
// max(data_ms, compute_ms): compute_bound()'s bound_ms. The simulation gives it back for
// constant costs (tests/step_model_test.cpp); mean_workers_for_target() is its inverse,
// the one "workers needed" formula, and the lower bound workers_for_target() starts from.
//
// Determinism: one seed (SimOptions::seed) gives the same prediction on every run; rank r
// draws from its own generator (seed, r).
// Units: every time in ms (per sample, per batch or per step as named); AU and stall in %.
// Errors: std::invalid_argument naming the bad input: no costs, a cost not a finite
// ms >= 0, batch / workers / prefetch_depth / ranks / block < 1, steps < 0, warmup_steps
// < -1, cores or loop_cpu_share negative or not finite, loop_cpu_share >= cores (cores >
// 0), a time (compute_ms, batch_ms, deliver_ms, a callback's ms) not a finite ms >= 0, a
// callback's every < 1, an async callback that waits for the step, rank_sample_ms not one
// vector per rank, a target AU outside (0, 100], max_workers < 1.
#pragma once

#include <cstdint>
#include <vector>

#include "model/constants.h"

namespace pipebench::model {

/// How the loop receives complete batches (loader.h delivers in order).
enum class Delivery { kInOrder, kOutOfOrder };

/// The order in which the simulated loader meets the costs.
enum class CostOrder {
  kShuffle,   ///< each pass over the costs a fresh permutation (the sampler's shuffle)
  kReplay,    ///< the costs in the order given, cycled (e.g. the files in sampler order)
  kResample,  ///< with replacement, in runs of SimOptions::block consecutive costs
};

/// The async callbacks' queue (pipeline/callbacks.h CallbackRunner::kQueueDepth).
inline constexpr int kCallbackQueueDepth = 4;

/// One training extra on the loop's thread (pipeline/callbacks.h).
struct Callback {
  double ms = 0;                ///< per run: the loop's time (sync) or the background work (async)
  int every = 1;                ///< runs at steps 0, every, 2 x every, ...
  bool async = false;           ///< handed to the background thread
  bool waits_for_step = false;  ///< sync only: waits for the accelerator first (metric)
};

/// The loader (pipeline/loader.h LoaderOptions) and the cores it runs on.
struct LoaderShape {
  int batch = 64;
  int workers = 1;
  int prefetch_depth = 2;        ///< LoaderOptions::prefetch_depth_batches
  Delivery delivery = Delivery::kInOrder;
  double cores = 0;              ///< cores for the workers and the loop's thread; 0: enough
  double loop_cpu_share = 0;     ///< cores the loop's own thread keeps busy, in [0, cores)
  double batch_ms = 0;           ///< per batch, on the worker finishing it (batch operators)
  double deliver_ms = 0;         ///< per batch, serial, before delivery (the H2D copy)
};

/// The training loop around the loader.
struct LoopShape {
  double compute_ms = 0;          ///< the accelerator's step, per batch (the slowest rank's)
  std::vector<Callback> callbacks;
  int ranks = 1;                  ///< synchronised data-parallel ranks, one loader each
};

struct StepModelInput {
  /// Per-sample cost, one worker, uncontended, ms (the loader's read + decode + transform
  /// + collate of each sample; a measured list, or costs predicted per file). Every rank
  /// draws from it unless rank_sample_ms is given.
  std::vector<double> sample_ms;
  /// Empty, or one cost vector per rank (then sample_ms may be empty).
  std::vector<std::vector<double>> rank_sample_ms;
  LoaderShape loader;
  LoopShape loop;
};

struct SimOptions {
  int steps = 0;          ///< measured steps; 0: 2 passes over the costs, within [4000, 10000]
  int warmup_steps = -1;  ///< dropped first; -1: 4 x prefetch_depth + 8
  CostOrder order = CostOrder::kShuffle;
  int block = 1;          ///< kResample: consecutive costs per draw (a moving-block bootstrap)
  uint64_t seed = 12345;
};

struct StepPrediction {
  double step_ms = 0;       ///< mean step
  double p50_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;
  double au_pct = 0;        ///< 100 x compute / mean step, in [0, 100]
  double stall_pct = 0;     ///< 100 - au_pct
  double data_wait_ms = 0;  ///< mean time the loop's thread waited for a batch, per step
  double data_ms = 0;       ///< the loader alone (one rank, no compute, no callbacks), per batch
  double mean_bound_ms = 0; ///< the closed form max(mean_data_ms(mean cost), compute_ms)
  double contention = 1;    ///< the factor on every sample's cost
  int steps = 0;            ///< steps measured
};

/// The loop's step, simulated (two runs: the loop, and the loader alone for data_ms).
StepPrediction predict_step(const StepModelInput& in, const SimOptions& options = {});

/// The loader alone, as bench's loader windows measure it: mean ms per batch.
double predict_data_ms(const std::vector<double>& sample_ms, const LoaderShape& loader,
                       const SimOptions& options = {});

struct WorkersForTarget {
  int workers = 0;           ///< the smallest count reaching the target; see reached
  bool reached = false;      ///< false: no count <= max_workers reaches it; workers is then
                             ///< the fewest giving the highest AU simulated (bisected below it)
  StepPrediction at;         ///< the prediction at `workers` (data_ms not filled: 0)
};

/// The fewest workers whose predicted AU >= target_au_pct (in.loader.workers ignored).
/// Starts at mean_workers_for_target (a lower bound: a tail only adds), widens by
/// doubling and bisects, assuming AU does not fall as workers are added; the answer w
/// is checked to reach the target and w - 1 not to (unless w is the lower bound).
WorkersForTarget workers_for_target(const StepModelInput& in,
                                    double target_au_pct = kAuTargetPct, int max_workers = 256,
                                    const SimOptions& options = {});

/// The factor on every sample's cost: max(1, workers / (cores - loop_cpu_share)), 1 when
/// cores is 0.
double contention_factor(const LoaderShape& loader);

/// The closed form: the loader's ms per batch when every sample costs mean_sample_ms.
double mean_data_ms(double mean_sample_ms, const LoaderShape& loader);

/// The closed form's step: max(mean_data_ms, compute_ms), compute_bound()'s bound_ms.
double mean_bound_ms(double mean_sample_ms, const LoaderShape& loader, double compute_ms);

/// The closed form's workers for a target AU, without contention:
///   max(1, ceil(target_au_pct / 100 x (batch x mean_sample_ms + batch_ms) / compute_ms))
/// (model/bound.h predict_workers at 100 %, report/whatif.cpp and --workers=auto at 90 %,
/// with their scaling efficiency or overhead folded into mean_sample_ms). 0 when
/// compute_ms is 0 and there is work (no count makes the loader keep up with nothing).
int mean_workers_for_target(double mean_sample_ms, int batch, double compute_ms,
                            double target_au_pct = kAuTargetPct, double batch_ms = 0);

/// The one prediction error, %: 100 x (predicted_ms - measured_ms) / measured_ms; 0 when
/// measured_ms is not > 0 (nothing to be off from). Every prediction error pipebench
/// writes or prints (bench's counters, the ranks' straggler error, the report's checks).
double prediction_error_pct(double predicted_ms, double measured_ms);

/// Per-sample costs as the record keeps them (ms; percentiles as predict_step's: linear
/// interpolation between order statistics). Throws std::invalid_argument for no costs or a
/// cost not a finite ms >= 0.
struct CostSummary {
  double mean_ms = 0, p50_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;
  int samples = 0;
};
CostSummary summarise_costs(const std::vector<double>& sample_ms);

/// The share of the predicted stall that the `costliest` most expensive samples cause, %:
/// 100 x (stall(costs) - stall(costs with those samples at the median)) / stall(costs),
/// both by predict_step on `in` (same seed); 0 when the loop does not stall (stall < 0.05
/// points). In [0, 100]. Errors: predict_step's; costliest < 0.
double tail_stall_share_pct(const StepModelInput& in, int costliest, const SimOptions& options = {});

}  // namespace pipebench::model
