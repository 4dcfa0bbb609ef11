// What the loader and end-to-end cases share: building the loader from the flags, the
// warm-up, and the stage counters.
#pragma once

#include <benchmark/benchmark.h>

#include <memory>
#include <optional>
#include <string>

#include "bench/run/bench_context.h"
#include "pipeline/loader.h"
#include "measure/region_timer.h"
#include "measure/system_metrics.h"
#include "measure/thread_cpu.h"
#include "pipeline/train_step.h"

namespace pipebench::bench {

/// The steps TrainStep::measure_compute_ms averages for a case's compute_ms (BM_TrainStep,
/// BM_EndToEnd, the --workers=auto search).
inline constexpr int kComputeMeasureSteps = 10;

/// A case's change to the loader the flags describe (the tail fixes, bench/cases/tail_fixes.h).
struct LoaderChange {
  int prefetch = 0;      ///< batches in flight; 0: --prefetch
  bool in_order = true;  ///< false: out-of-order delivery (LoaderOptions::in_order)
};

/// A loader over `source` (default: ctx.loader_source(), the dataset with --cache and
/// --read-throttle-mib-s) with the flags' batch, size, seed, prefetch depth and
/// --on-error policy, shuffled, sharded by this process's rank and world (pipeline/dist/),
/// with effectively endless epochs, tracing to --trace; batch
/// buffers pinned when the baseline is cuda (as a DataLoader with pin_memory=True). A short
/// last batch is dropped (--drop-last, default true) unless the dataset is smaller than one
/// batch: then every epoch is one short batch. A warm source over the dataset is read
/// into the page cache first when a cold case may have evicted it (BenchContext::
/// take_evicted) and it fits in half the available memory. `change`: another prefetch
/// depth or delivery order. Throws what Loader throws.
std::unique_ptr<Loader> make_loader(BenchContext& ctx, const std::shared_ptr<const Pipeline>& pipeline,
                                    int workers, bool stage_timers = true,
                                    const SampleSource* source = nullptr, const LoaderChange& change = {});

/// The loader's next batch inside a timed loop. On a loader error (a bad file under
/// --on-error=stop names itself) or an exhausted loader: fail_case() and false, so the
/// case ends and the run goes on.
bool next_batch(BenchContext& ctx, benchmark::State& state, Loader& loader,
                std::optional<BatchHandle>& batch);

/// The system sampler of a loader window: its rate, Hz (0: no sampler), and the dataset
/// whose block device's reads it counts.
struct SystemSampling {
  double rate_hz = 0;
  std::string dataset;
};

/// The run's sampling: --system-sample-hz over --data (rate 0 when the flag turned it off).
SystemSampling system_sampling(const BenchContext& ctx);

/// A timed window over a running loader. Throughput is what the workers produced in it
/// (LoaderStats::processed), not what the consumer took: batches prefetched before the
/// window started would otherwise count as speed (at prefetch 8 and 30 steps that read
/// 17.4 ms per batch where 2 cores can reach 20.3). CPU is the whole process's (every
/// worker thread), split by thread role (measure/thread_cpu.h): the consumer is the
/// thread that constructed the window (the benchmark loop), the sampler its own thread.
class LoaderWindow {
 public:
  /// Starts now, on the consumer's thread. With a sampling rate above 0, a SystemSampler
  /// (measure/system_metrics.h) runs at that rate until finish(), counting disk reads on
  /// the device of the sampling's dataset.
  explicit LoaderWindow(const Loader& loader, const SystemSampling& sampling = {});
  /// Ends the window: wall ms, CPU ms by role, samples produced, stats at both ends.
  void finish(const Loader& loader);

  double wall_ms = 0;
  double process_cpu_ms = 0;   ///< every thread of the process, CPU ms in the window
  double consumer_cpu_ms = 0;  ///< the consumer thread's CPU ms in the window
  /// Every other thread but the sampler's (the loader's oneTBB workers; async callbacks'
  /// and driver threads where those run), CPU ms: process - consumer - sampler.
  double workers_cpu_ms = 0;
  int64_t produced = 0;  ///< samples the workers finished inside the window
  LoaderStats before, after;
  SampleFormat format;   ///< one sample of the loader's batches (dtype, layout, C, H, W)
  std::vector<SystemSample> system_samples;  ///< with a sampler, after finish()
  std::optional<SystemSummary> system;       ///< their summary
  /// With a sampler: its thread's CPU ms from start to stop (its cost; BM_SystemSampler).
  double sampler_cpu_ms = 0;

  /// Samples per delivered batch in the window (short batches included), or `nominal`
  /// when none was delivered.
  double mean_batch(int nominal) const;
  /// Batches the workers produced in the window: produced / mean_batch.
  double produced_batches(int nominal) const { return produced / mean_batch(nominal); }
  /// The workers' thread CPU per sample they produced in the window, ms (the loader's
  /// stage timers: LoaderStats::sample_cpu_ns); 0 when none was produced or the timers
  /// were off.
  double sample_cpu_ms() const;

 private:
  int64_t t0_ = 0;
  std::unique_ptr<SystemSampler> sampler_;
  std::unique_ptr<RoleCpuWindow> cpu_;
};

/// Marks a benchmark case in the trace: a span named after the case, from construction
/// to destruction, on the "benchmark cases" track, so Perfetto shows which worker spans
/// belong to which case. Does nothing without --trace.
class CaseMarker {
 public:
  CaseMarker(TraceRecorder* trace, const std::string& case_name);
  ~CaseMarker();
  CaseMarker(const CaseMarker&) = delete;
  CaseMarker& operator=(const CaseMarker&) = delete;

 private:
  TraceRecorder* trace_;
  const char* name_ = nullptr;
  int64_t start_ns_ = 0;
};

/// The loader's production rate over `batches` consumed batches: ms per batch produced
/// (`batch_size` nominal samples, or the mean delivered batch when batches are short).
/// Adds the samples those batches held to `*samples` when given. Throws when the loader
/// runs out.
double ms_per_batch(Loader& loader, int batches, int batch_size, int64_t* samples = nullptr);

/// The step's view of a delivered batch: its bytes, shape, dtype, layout and deferred
/// normalize (pipeline/train_step.h).
StepInput step_input(const Batch& b);

/// Takes the loader's prefetch depth + 1 batches (and runs the step on them when step != nullptr), so
/// that the timed part starts in steady state.
void warm_up(const BenchContext& ctx, Loader& loader, TrainStep* step);

/// Counters of a loader window (units in their names; per sample unless "per batch"):
/// read_ms, decode_ms, transform_ms (wall); batch_ops_ms only with batch operators, h2d_ms
/// only when the loader copies to the device; sample_cpu_ms (workers' thread CPU for
/// read + decode + transform, + collate when it copies) and preempted_ms (that stage wall time minus CPU: waiting
/// for a core when workers outnumber cores, or for I/O); process_cpu_ms per batch produced
/// (every thread of the process), split by thread role as consumer_cpu_ms (the benchmark
/// loop's thread) and workers_cpu_ms (every thread but the consumer's and the system
/// sampler's), both CPU ms per batch produced (process = consumer + workers + the sampler's
/// share), and cpu_cores_used (process CPU / wall); with the system sampler, its summary
/// (add_system_counters in loader_util.cpp: cpu_util_pct_mean, cpu_user_pct_mean,
/// cpu_system_pct_mean, cpu_core_util_pct_max, voluntary_switches_per_s, ...); consumer_wait_ms
/// and worker_wait_ms per batch; op:<step>_ms and op:<step>_pct; collate_ms only when the
/// batch is not float32 NCHW (the worker then copies each sample into its slot);
/// wall_us_per_image (loader wall time per produced image, us; BM_Sample's us_per_image
/// is CPU time), batch_bytes (the host bytes of one full batch: batch size x C x H x W x 4
/// for float32, x 1 for uint8) and batch_uint8 (1 for uint8 batches, 0 for float32). Adds
/// the loader's skipped files to the run's list.
void add_stage_counters(BenchContext& ctx, benchmark::State& state, const LoaderWindow& w);

/// The region timers of a timed loop as counters, ms: region:<key>_ms (mean per region)
/// and region:<key>_p99_ms, for every key timed; with --trace, their spans on a track per
/// key ("region: IO"). BM_EndToEnd's keys: Batch = one iteration of the loop, IO = waiting
/// for the batch (Loader::next(), Determined's dataloader_next), Forward = the step call
/// (TrainStep::step: the whole training step as the loop's thread sees it, forward,
/// backward and update being one call; for cuda it also makes the H2D copy, so there is
/// no separate ToDevice or Backward key), Other = the callbacks (only with --callback).
void add_region_counters(BenchContext& ctx, benchmark::State& state, RegionTimer& regions);

}  // namespace pipebench::bench
