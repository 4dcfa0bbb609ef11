// What the loader and end-to-end cases share: building the loader from the flags, the
// warm-up, and the stage counters.
#pragma once

#include <benchmark/benchmark.h>

#include <memory>
#include <optional>
#include <string>

#include "bench/bench_context.h"
#include "pipeline/loader.h"
#include "pipeline/region_timer.h"
#include "pipeline/system_metrics.h"
#include "pipeline/train_step.h"

namespace pipebench::bench {

/// A loader over `source` (default: ctx.loader_source(), the dataset with --cache and
/// --read-throttle-mib-s) with the flags' batch, size, seed, prefetch depth and
/// --on-error policy, shuffled, sharded by this process's rank and world (pipeline/dist/),
/// with effectively endless epochs, tracing to --trace; batch
/// buffers pinned when the baseline is cuda (as a DataLoader with pin_memory=True). A short
/// last batch is dropped (--drop-last, default true) unless the dataset is smaller than one
/// batch: then every epoch is one short batch. A warm source over the dataset is read
/// into the page cache first when a cold case may have evicted it (BenchContext::
/// take_evicted) and it fits in half the available memory. Throws what Loader throws.
std::unique_ptr<Loader> make_loader(BenchContext& ctx, const std::shared_ptr<const Pipeline>& pipeline,
                                    int workers, bool stage_timers = true,
                                    const SampleSource* source = nullptr);

/// The loader's next batch inside a timed loop. On a loader error (a bad file under
/// --on-error=stop names itself) or an exhausted loader: fail_case() and false, so the
/// case ends and the run goes on.
bool next_batch(BenchContext& ctx, benchmark::State& state, Loader& loader,
                std::optional<BatchHandle>& batch);

/// A timed window over a running loader. Throughput is what the workers produced in it
/// (LoaderStats::processed), not what the consumer took: batches prefetched before the
/// window started would otherwise count as speed (at prefetch 8 and 30 steps that read
/// 17.4 ms per batch where 2 cores can reach 20.3). CPU is the whole process's (every
/// worker thread), not the benchmark thread's.
class LoaderWindow {
 public:
  /// Starts now. With `sample_system`, a SystemSampler (pipeline/system_metrics.h, 20 Hz)
  /// runs until finish(), counting disk reads on the device of `dataset`.
  explicit LoaderWindow(const Loader& loader, bool sample_system = false,
                        const std::string& dataset = "");
  /// Ends the window: wall ms, process CPU ms, samples produced, stats at both ends.
  void finish(const Loader& loader);

  double wall_ms = 0;
  double process_cpu_ms = 0;
  int64_t produced = 0;  ///< samples the workers finished inside the window
  LoaderStats before, after;
  SampleFormat format;   ///< one sample of the loader's batches (dtype, layout, C, H, W)
  std::vector<SystemSample> system_samples;  ///< with sample_system, after finish()
  std::optional<SystemSummary> system;       ///< their summary
  double sampler_cpu_ms = 0;  ///< with sample_system: the sampler thread's own CPU time

  /// Samples per delivered batch in the window (short batches included), or `nominal`
  /// when none was delivered.
  double mean_batch(int nominal) const;
  /// Batches the workers produced in the window: produced / mean_batch.
  double produced_batches(int nominal) const { return produced / mean_batch(nominal); }

 private:
  int64_t t0_ = 0, cpu0_ = 0;
  std::unique_ptr<SystemSampler> sampler_;
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
/// Throws when the loader runs out.
double ms_per_batch(Loader& loader, int batches, int batch_size);

/// The step's view of a delivered batch: its bytes, shape, dtype, layout and deferred
/// normalize (pipeline/train_step.h).
StepInput step_input(const Batch& b);

/// Takes prefetch depth + 1 batches (and runs the step on them when step != nullptr), so
/// that the timed part starts in steady state.
void warm_up(const BenchContext& ctx, Loader& loader, TrainStep* step);

/// Counters of a loader window (units in their names; per sample unless "per batch"):
/// read_ms, decode_ms, transform_ms (wall); batch_ops_ms only with batch operators, h2d_ms
/// only when the loader copies to the device; sample_cpu_ms (workers' thread CPU for
/// read + decode + transform, + collate when it copies) and preempted_ms (that stage wall time minus CPU: waiting
/// for a core when workers outnumber cores, or for I/O); process_cpu_ms per batch produced
/// (every thread of the process) and cpu_cores_used (process CPU / wall); consumer_wait_ms
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
