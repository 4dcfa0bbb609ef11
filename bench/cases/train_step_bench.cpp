// BM_TrainStep/<baseline>: one training step per iteration on one resident batch
//   (B x 3 x S x S float32): the FastAI.jl "n steps on one batch" timing. compute_ms = the
//   step's mean time per batch with the data resident (TrainStep::measure_compute_ms,
//   kComputeMeasureSteps steps); compute_gflop = its FLOPs per step / 1e9 (0 for emulated).
//   Manual time: each iteration is one step as measure_compute_ms times it (CUDA events
//   for cuda), so the H2D copy is not in it.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "bench/run/benchmarks.h"
#include "bench/run/counter_put.h"
#include "bench/run/loader_util.h"
#include "device/cuda.h"
#include "measure/trace.h"
#include "pipeline/train_step.h"
#include "transforms/rng.h"

namespace pipebench::bench {
namespace {

// The resident batch's memory: pinned for a CUDA step (its copy is then asynchronous).
MemoryKind batch_memory(const BenchConfig& c) {
  return is_cuda_baseline(c.baseline) ? MemoryKind::kPinned : MemoryKind::kPageable;
}

void BM_TrainStep(benchmark::State& state, BenchContext& ctx, const std::string& baseline) {
  const auto& c = ctx.config();
  const int n = c.batch, ch = 3, h = c.size, w = c.size;
  std::unique_ptr<TrainStep> step;
  HostBuffer batch;
  double compute_ms = 0;
  try {
    step = make_train_step(baseline, c.compute_ms);
    batch = HostBuffer(static_cast<size_t>(n) * ch * h * w * sizeof(float), batch_memory(c));
    Rng rng(c.seed);
    float* p = batch.as<float>();
    for (size_t i = 0; i < batch.bytes() / sizeof(float); ++i) p[i] = static_cast<float>(rng.uniform(-2, 2));
    compute_ms = step->measure_compute_ms(n, ch, h, w, kComputeMeasureSteps);
  } catch (const std::exception& e) {
    ctx.fail_case(state, e.what());
    return;
  }
  for (auto _ : state) {
    // One step on the resident batch, timed by the step itself (CUDA events for cuda),
    // excluding the H2D copy: the FastAI.jl "steps on one batch already on the device".
    TraceSpan span(ctx.trace(), "train_step", "step");
    state.SetIterationTime(step->measure_compute_ms(n, ch, h, w, 1) / 1e3);
  }
  state.SetItemsProcessed(state.iterations() * n);
  put(state, CounterId::kComputeMs, compute_ms);
  // FLOPs are known for a real step only; an emulated one has no counter rather than 0.
  if (const double gflop = step->compute_gflop(n, ch, h, w); gflop > 0)
    put(state, CounterId::kComputeGflop, gflop);
}

}  // namespace

void register_train_step_benchmarks(BenchContext& ctx) {
  const auto& c = ctx.config();
  model::CaseKey step;
  step.family = model::Family::kTrainStep;
  step.baseline = c.baseline;
  register_case(ctx, step, BM_TrainStep, c.baseline)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace pipebench::bench
