#include "bench/loader_util.h"

#include <stdexcept>

namespace pipebench::bench {

std::unique_ptr<Loader> make_loader(BenchContext& ctx, const std::shared_ptr<const Pipeline>& pipeline,
                                    int workers, bool stage_timers) {
  const auto& c = ctx.config();
  LoaderOptions o;
  o.pipeline = pipeline;
  o.batch_size = c.batch;
  o.workers = workers;
  o.prefetch_depth_batches = c.prefetch;
  o.sampler.shuffle = true;
  o.sampler.seed = c.seed;
  o.sampler.drop_last = ctx.drop_last();  // fixed batch shape, as a training loop wants
  o.on_error = c.on_error;
  o.epochs = 1 << 20;          // never runs out within a benchmark
  o.memory = c.baseline == "cuda" ? MemoryKind::kPinned : MemoryKind::kPageable;
  o.stage_timers = stage_timers;
  o.trace = stage_timers ? ctx.trace() : nullptr;  // a trace reads the clocks too
  return std::make_unique<Loader>(ctx.disk(), o);
}

bool next_batch(BenchContext& ctx, benchmark::State& state, Loader& loader,
                std::optional<BatchHandle>& batch) {
  try {
    batch = loader.next();
  } catch (const std::exception& e) {
    ctx.fail_case(state, e.what());
    return false;
  }
  if (!batch) {
    ctx.fail_case(state, "the loader ran out of batches");
    return false;
  }
  return true;
}

double ms_per_batch(Loader& loader, int batches) {
  const int64_t t0 = now_ns();
  for (int i = 0; i < batches; ++i)
    if (!loader.next()) throw std::runtime_error("the loader ran out of batches");
  return (now_ns() - t0) / 1e6 / batches;
}

void warm_up(const BenchContext& ctx, Loader& loader, TrainStep* step) {
  for (int i = 0; i <= ctx.config().prefetch; ++i) {
    auto b = loader.next();
    if (!b) return;
    if (step) step->step((*b)->data, (*b)->size, (*b)->channels, (*b)->height, (*b)->width);
  }
  if (step) step->synchronize();
}

void add_stage_counters(BenchContext& ctx, benchmark::State& state, const LoaderStats& before,
                        const LoaderStats& after) {
  const double samples = std::max<int64_t>(1, after.samples - before.samples);
  const double batches = std::max<int64_t>(1, after.batches - before.batches);
  state.SetItemsProcessed(after.samples - before.samples);
  ctx.bad_files().record_skipped(after.skipped_samples);
  for (int s = 0; s < static_cast<int>(Stage::kCount); ++s) {
    // No copy, or no batch operators: no counter rather than a 0 that reads as "free".
    const Stage stage = static_cast<Stage>(s);
    if ((stage == Stage::kH2D || stage == Stage::kBatchOps) && after.stage_ns[s] == 0) continue;
    const std::string name = std::string(stage_name(static_cast<Stage>(s))) + "_ms";
    state.counters[name] = (after.stage_ns[s] - before.stage_ns[s]) / 1e6 / samples;
  }
  // Per-operator timers: op:<step>_ms per sample, and op:<step>_pct of the sample's time.
  double sample_ns = 0;
  for (int s = 0; s < static_cast<int>(Stage::kH2D); ++s) sample_ns += after.stage_ns[s] - before.stage_ns[s];
  for (size_t k = 0; k < after.step_labels.size() && k < before.step_ns.size(); ++k) {
    const double ns = static_cast<double>(after.step_ns[k] - before.step_ns[k]);
    state.counters["op:" + after.step_labels[k] + "_ms"] = ns / 1e6 / samples;
    if (sample_ns > 0) state.counters["op:" + after.step_labels[k] + "_pct"] = 100.0 * ns / sample_ns;
  }
  state.counters["consumer_wait_ms"] =
      (after.consumer_wait_ns - before.consumer_wait_ns) / 1e6 / batches;
  state.counters["worker_wait_ms"] =
      (after.worker_wait_ns - before.worker_wait_ns) / 1e6 / batches;
}

}  // namespace pipebench::bench
