// BM_Loader/<pipeline>/workers:<w>: the whole oneTBB flow-graph loader alone (sampler ->
// read -> decode + transforms -> collate), no training step: one batch per iteration,
// --steps iterations after a warm-up of prefetch depth + 1 batches. Real time (the work
// runs on TBB threads). items_per_second = images/s; data_ms = loader time per batch;
// wall_us_per_image = loader wall time per image produced (us); batch_bytes = host bytes of
// one batch in the spec's collate dtype and layout (uint8 is a quarter of float32), with
// batch_uint8 = 1 for a uint8 batch;
// read_ms, decode_ms, transform_ms, collate_ms, batch_ops_ms, h2d_ms = per-sample stage means from the
// loader's own stage timers; consumer_wait_ms = time next() blocked, per batch;
// worker_wait_ms = all workers' idle time, per batch.
//
// BM_StageTimers/<pipeline>/workers:1: what the stage timers cost. Each iteration runs the
// loader with timers on and off, in alternating order (a fresh, warmed-up loader each),
// --steps batches each; on_ms and off_ms are the loader's time per batch, overhead_pct =
// 100 * (on - off) / off. A ratio within one run: on a shared machine noise of a percent
// or two shows, negative overheads included.
#include <benchmark/benchmark.h>

#include <functional>

#include "bench/benchmarks.h"
#include "bench/loader_util.h"
#include "pipeline/stage_timers.h"

#include <stdexcept>

namespace pipebench::bench {
namespace {

void BM_Loader(benchmark::State& state, BenchContext& ctx, const std::shared_ptr<const Pipeline>& pipeline,
               int workers) {
  const CaseMarker marker(ctx.trace(),
                          "BM_Loader/" + pipeline->name() + "/workers:" + std::to_string(workers));
  std::unique_ptr<Loader> loader;
  try {
    loader = make_loader(ctx, pipeline, workers);
    warm_up(ctx, *loader, nullptr);
  } catch (const std::exception& e) {
    ctx.fail_case(state, e.what());
    return;
  }
  LoaderWindow window(*loader, /*sample_system=*/true, ctx.config().data.string());
  for (auto _ : state) {
    std::optional<BatchHandle> batch;
    if (!next_batch(ctx, state, *loader, batch)) break;
    benchmark::DoNotOptimize((*batch)->host_data());
  }
  window.finish(*loader);
  // What the workers produced in the window, not what the consumer took (backlog).
  state.SetItemsProcessed(window.produced);
  state.counters["workers"] = workers;
  state.counters["data_ms"] = window.wall_ms / std::max(1e-9, window.produced_batches(ctx.config().batch));
  add_stage_counters(ctx, state, window);
}

/// ms per batch over `batches` batches of a fresh, warmed-up loader.
double loader_ms_per_batch(BenchContext& ctx, const std::shared_ptr<const Pipeline>& pipeline,
                           int workers, bool timers, int batches) {
  auto loader = make_loader(ctx, pipeline, workers, timers);
  warm_up(ctx, *loader, nullptr);
  return ms_per_batch(*loader, batches, ctx.config().batch);
}

void BM_StageTimers(benchmark::State& state, BenchContext& ctx,
                    const std::shared_ptr<const Pipeline>& pipeline) {
  const auto& c = ctx.config();
  double on_ms = 0, off_ms = 0;
  bool on_first = true;
  for (auto _ : state) {
    try {
      // Alternate which goes first, so drift in the machine's speed cancels out.
      for (bool timers : {on_first, !on_first})
        (timers ? on_ms : off_ms) += loader_ms_per_batch(ctx, pipeline, 1, timers, c.steps);
      on_first = !on_first;
    } catch (const std::exception& e) {
      ctx.fail_case(state, e.what());
      return;
    }
  }
  const double n = static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations() * 2 * c.steps * c.batch);
  state.counters["on_ms"] = on_ms / n;
  state.counters["off_ms"] = off_ms / n;
  state.counters["overhead_pct"] = 100.0 * (on_ms - off_ms) / off_ms;
}

}  // namespace

void register_loader_benchmarks(BenchContext& ctx) {
  const auto& c = ctx.config();
  const auto& pipeline = c.pipeline;
  register_case(ctx, "BM_StageTimers/" + pipeline->name() + "/workers:1", BM_StageTimers,
                pipeline)
      ->UseRealTime()
      ->Iterations(2)  // on-off then off-on (A B B A): linear drift cancels; 4 loaders
      ->Unit(benchmark::kMillisecond);
  for (int w : c.workers) {
    const std::string name =
        "BM_Loader/" + pipeline->name() + "/workers:" + std::to_string(w);
    register_case(ctx, name.c_str(), BM_Loader, pipeline, w)
        ->UseRealTime()
        ->Iterations(c.steps)
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace pipebench::bench
