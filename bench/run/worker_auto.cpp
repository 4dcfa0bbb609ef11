#include "bench/run/worker_auto.h"

#include <stdexcept>

#include "bench/run/loader_util.h"
#include "pipeline/train_step.h"

namespace pipebench::bench {
namespace {

constexpr int kProbeBatches = 5;

// CPU per sample (ms) of a 1-worker loader over kProbeBatches batches after its warm-up.
double probe_per_sample_ms(BenchContext& ctx, const std::shared_ptr<const Pipeline>& pipeline) {
  auto loader = make_loader(ctx, pipeline, 1);
  warm_up(ctx, *loader, nullptr);
  LoaderWindow w(*loader);
  for (int i = 0; i < kProbeBatches; ++i)
    if (!loader->next()) throw std::runtime_error("the loader ran out of batches");
  w.finish(*loader);
  const double cpu_ms = w.sample_cpu_ms();
  if (cpu_ms <= 0) throw std::runtime_error("the 1-worker probe produced no sample");
  return cpu_ms;
}

}  // namespace

AutoWorkers choose_workers(BenchContext& ctx, int budget) {
  const auto& c = ctx.config();
  const CaseMarker marker(ctx.trace(), "workers=auto search");
  AutoWorkers a;
  a.per_sample_ms = probe_per_sample_ms(ctx, c.pipeline);
  const auto shape = c.pipeline->output_shape();
  auto step = make_train_step(c.baseline, c.compute_ms);
  a.compute_ms = step->measure_compute_ms(c.batch, shape[0], shape[1], shape[2], kComputeMeasureSteps);
  a.search = search_workers(
      [&](int w) {
        auto loader = make_loader(ctx, c.pipeline, w);
        warm_up(ctx, *loader, nullptr);
        return ms_per_batch(*loader, c.steps, c.batch);
      },
      a.per_sample_ms, c.batch, a.compute_ms, budget);
  a.sweep = {1};
  if (a.search.chosen > 1) a.sweep.push_back(a.search.chosen);
  return a;
}

}  // namespace pipebench::bench
