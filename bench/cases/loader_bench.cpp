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
// BM_Loader/<pipeline>/<layout>/<cache>/workers:<w>: the same on another storage (the
// storage study of --cache=cold / --read-throttle-mib-s: the warm loader, and the packed
// shards cold; see register_loader_benchmarks). read_throttle_mib_s marks a throttled run.
//
// BM_StageTimers/<pipeline>/workers:1: what the stage timers cost. Each iteration runs the
// loader with timers on and off, in alternating order (a fresh, warmed-up loader each),
// --steps batches each; on_ms and off_ms are the loader's time per batch, overhead_pct =
// 100 * (on - off) / off, overhead_ci_pct its 95 % t half width over the iterations' pairs
// (model/paired.h), pairs. A ratio within one run: on a shared machine noise of a percent
// or two shows, negative overheads included. --steps batches per loader, or what
// --budget allows (bench/run/case_budget.h); batches = all loaders' batches.
#include <benchmark/benchmark.h>

#include <functional>

#include "bench/run/benchmarks.h"
#include "bench/run/counter_put.h"
#include "model/paired.h"
#include "bench/run/loader_util.h"
#include "bench/run/packed_copy.h"
#include "measure/stage_timers.h"

#include <stdexcept>

namespace pipebench::bench {
namespace {

// Where a loader case reads: null for the sweep's storage (ctx.loader_source()). Throws
// when the source cannot be had (a packed copy that failed).
using SourceGetter = std::function<const SampleSource*(BenchContext&)>;

void BM_Loader(benchmark::State& state, BenchContext& ctx, const std::shared_ptr<const Pipeline>& pipeline,
               int workers, const std::string& name, const SourceGetter& source) {
  const CaseMarker marker(ctx.trace(), name);
  std::unique_ptr<Loader> loader;
  try {
    loader = make_loader(ctx, pipeline, workers, true, source ? source(ctx) : nullptr);
    warm_up(ctx, *loader, nullptr);
  } catch (const std::exception& e) {
    ctx.fail_case(state, e.what());
    return;
  }
  LoaderWindow window(*loader, system_sampling(ctx));
  for (auto _ : state) {
    std::optional<BatchHandle> batch;
    if (!next_batch(ctx, state, *loader, batch)) break;
    benchmark::DoNotOptimize((*batch)->host_data());
  }
  window.finish(*loader);
  // What the workers produced in the window, not what the consumer took (backlog).
  state.SetItemsProcessed(window.produced);
  put(state, CounterId::kWorkers, workers);
  put(state, CounterId::kDataMs, window.wall_ms / std::max(1e-9, window.produced_batches(ctx.config().batch)));
  add_stage_counters(ctx, state, window);
  if (ctx.throttle()) put(state, CounterId::kReadThrottleMibS, ctx.throttle()->mib_per_s());
}

/// ms per batch over `batches` batches of a fresh, warmed-up loader; adds the images they
/// held to `images`.
double loader_ms_per_batch(BenchContext& ctx, const std::shared_ptr<const Pipeline>& pipeline,
                           int workers, bool timers, int batches, int64_t* images) {
  auto loader = make_loader(ctx, pipeline, workers, timers);
  warm_up(ctx, *loader, nullptr);
  return ms_per_batch(*loader, batches, ctx.config().batch, images);
}

void BM_StageTimers(benchmark::State& state, BenchContext& ctx,
                    const std::shared_ptr<const Pipeline>& pipeline) {
  // Two iterations of two fresh loaders each: 4 windows, 4 warm-ups (bench/run/case_budget.h);
  // one iteration on slow batches (register_loader_benchmarks).
  const int steps = ctx.budget().steps(1, 4, 4, 1);
  double on_ms = 0, off_ms = 0;
  int64_t images = 0;
  std::vector<double> pair_pct;  // per iteration: on / off - 1, %
  bool on_first = true;
  for (auto _ : state) {
    try {
      // Alternate which goes first, so drift in the machine's speed cancels out.
      double on = 0, off = 0;
      for (bool timers : {on_first, !on_first})
        (timers ? on : off) = loader_ms_per_batch(ctx, pipeline, 1, timers, steps, &images);
      on_ms += on;
      off_ms += off;
      if (off > 0) pair_pct.push_back(100.0 * (on / off - 1));
      on_first = !on_first;
    } catch (const std::exception& e) {
      ctx.fail_case(state, e.what());
      return;
    }
  }
  const double n = static_cast<double>(state.iterations());
  state.SetItemsProcessed(images);  // as delivered: short batches count what they held
  put(state, CounterId::kBatches, static_cast<double>(state.iterations() * 2 * steps));
  put(state, CounterId::kOnMs, on_ms / n);
  put(state, CounterId::kOffMs, off_ms / n);
  put(state, CounterId::kOverheadPct, 100.0 * (on_ms - off_ms) / off_ms);
  // The pairs' 95 % t interval (model/paired.h): with two pairs, wide (t = 12.7).
  if (pair_pct.size() >= 2) put(state, CounterId::kOverheadCiPct, model::mean_interval(pair_pct).half);
  put(state, CounterId::kPairs, static_cast<double>(pair_pct.size()));
}

}  // namespace

void register_loader_benchmarks(BenchContext& ctx) {
  const auto& c = ctx.config();
  const auto& pipeline = c.pipeline;
  const auto key = [&](model::Family family, int workers, const std::string& layout = "",
                       const std::string& cache = "", int shards = 0) {
    model::CaseKey k = model::loader_case(pipeline->name(), workers, layout, cache, shards);
    k.family = family;  // the stage timers' case has the loader's key fields
    return k;
  };
  // Two pairs, on-off then off-on (A B B A: linear drift cancels; 4 loaders), or one pair
  // (2 loaders, no interval: pairs 1) where two forecast more than the case's budget,
  // or none where even one does (CaseBudget::overhead_fits: large originals, where one pair
  // took 21 s of a 6-minute run on photos-full); a stage timer's few clock reads per sample
  // are nothing against a sample of tens of ms.
  const CaseBudget& plan = ctx.budget();
  if (plan.overhead_fits(1, 2, 2))
    register_case(ctx, key(model::Family::kStageTimers, 1), BM_StageTimers, pipeline)
        ->UseRealTime()
        ->Iterations(plan.overhead_fits(1, 4, 4) ? 2 : 1)
        ->Unit(benchmark::kMillisecond);
  const auto add = [&](const model::CaseKey& k, SourceGetter source) {
    register_case(ctx, k, BM_Loader, pipeline, k.workers, k.name(), std::move(source))
        ->UseRealTime()
        ->Iterations(ctx.budget().steps(k.workers, 1, 1))
        ->Unit(benchmark::kMillisecond);
  };
  for (int w : c.workers) add(key(model::Family::kLoader, w), nullptr);
  // The storage study (issue 12; --cache=cold or --read-throttle-mib-s): DS-Analyzer's
  // fetch/prep split needs the prep-bound rate, the same loader with the page cache warm
  // and no throttle (every byte in memory),
  // beside the sweep's cold one; and the same loader cold on each packed copy (--shards),
  // at the table's worker count. BM_Read/<layout>/cold is the fetch rate alone.
  const int at = ctx.table_workers();
  if (!ctx.storage_study() || at == 0) return;
  add(key(model::Family::kLoader, at, ctx.disk().layout(), "warm"),
      [](BenchContext& x) -> const SampleSource* { return &x.stored(CacheMode::kWarm, /*throttled=*/false); });
  for (const auto& copy : ctx.packed_copies()) {
    add(key(model::Family::kLoader, at, "shards", "cold", copy->shard_size()), [copy](BenchContext& x) -> const SampleSource* {
      const PackedCopy::Ready* ready = copy->get(x);
      if (!ready) throw std::runtime_error(copy->error());
      return &ready->stored(CacheMode::kCold);
    });
  }
}

}  // namespace pipebench::bench
