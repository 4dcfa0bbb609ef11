// What the loader and end-to-end cases share: building the loader from the flags, the
// warm-up, and the stage counters.
#pragma once

#include <benchmark/benchmark.h>

#include <memory>
#include <optional>
#include <string>

#include "bench/bench_context.h"
#include "pipeline/loader.h"
#include "pipeline/train_step.h"

namespace pipebench::bench {

/// A loader over ctx.disk() with the flags' batch, size, seed, prefetch depth and
/// --on-error policy, shuffled, with effectively endless epochs, tracing to --trace; batch
/// buffers pinned when the baseline is cuda (as a DataLoader with pin_memory=True). A short
/// last batch is dropped (--drop-last, default true) unless the dataset is smaller than one
/// batch: then every epoch is one short batch. Throws what Loader throws.
std::unique_ptr<Loader> make_loader(BenchContext& ctx, const std::shared_ptr<const Pipeline>& pipeline,
                                    int workers, bool stage_timers = true);

/// The loader's next batch inside a timed loop. On a loader error (a bad file under
/// --on-error=stop names itself) or an exhausted loader: fail_case() and false, so the
/// case ends and the run goes on.
bool next_batch(BenchContext& ctx, benchmark::State& state, Loader& loader,
                std::optional<BatchHandle>& batch);

/// Loader time per batch over `batches` batches, ms. Throws when the loader runs out.
double ms_per_batch(Loader& loader, int batches);

/// Takes prefetch depth + 1 batches (and runs the step on them when step != nullptr), so
/// that the timed part starts in steady state.
void warm_up(const BenchContext& ctx, Loader& loader, TrainStep* step);

/// Per-sample stage means (read_ms, decode_ms, transform_ms, collate_ms; batch_ops_ms only
/// with batch operators, h2d_ms only when the loader copies to the device), and consumer_wait_ms and worker_wait_ms (all workers'
/// idle time) per batch, from the difference of two stats snapshots; items processed =
/// samples delivered. Adds the loader's skipped files to the run's list.
void add_stage_counters(BenchContext& ctx, benchmark::State& state, const LoaderStats& before,
                        const LoaderStats& after);

}  // namespace pipebench::bench
