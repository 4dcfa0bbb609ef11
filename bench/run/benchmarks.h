// The bench families, one register function per bench/cases/*_bench.cpp. Each registers its
// cases with Google Benchmark, capturing `ctx`, which must outlive the run
// (benchmark::RunSpecifiedBenchmarks).
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <string>
#include <utility>

#include "bench/run/bench_context.h"
#include "model/case_key.h"

namespace pipebench::bench {

/// Registers the case of `key` under key.name() (model/case_key.h) running
/// fn(state, ctx, args...), and notes the key in the context (the run's JSON carries it on
/// every row of the case; the progress display counts the cases a filter selects). Each run
/// of the case first tells the context which case runs (ctx.begin_case: the per-image costs
/// are keyed by it).
template <class Fn, class... Args>
benchmark::internal::Benchmark* register_case(BenchContext& ctx, const model::CaseKey& key, Fn&& fn,
                                              Args&&... args) {
  const std::string name = key.name();
  ctx.note_case(key);
  return benchmark::RegisterBenchmark(
      name.c_str(),
      [name, fn = std::forward<Fn>(fn)](benchmark::State& state, BenchContext& c, auto&... a) {
        c.begin_case(name);
        fn(state, c, a...);
      },
      std::ref(ctx), std::forward<Args>(args)...);
}

void register_read_benchmarks(BenchContext& ctx);
void register_decode_benchmarks(BenchContext& ctx);
void register_transform_benchmarks(BenchContext& ctx);
void register_sample_benchmarks(BenchContext& ctx);
void register_collate_benchmarks(BenchContext& ctx);
void register_h2d_benchmarks(BenchContext& ctx);
void register_device_op_benchmarks(BenchContext& ctx);  // device batch operators (CUDA)
void register_loader_benchmarks(BenchContext& ctx);
void register_sampler_cost_benchmarks(BenchContext& ctx);  // BM_SystemSampler
void register_train_step_benchmarks(BenchContext& ctx);  // BM_TrainStep
void register_end_to_end_benchmarks(BenchContext& ctx);

/// All of the above, in the order the run lists them.
inline void register_all_benchmarks(BenchContext& ctx) {
  register_read_benchmarks(ctx);
  register_decode_benchmarks(ctx);
  register_transform_benchmarks(ctx);
  register_sample_benchmarks(ctx);
  register_collate_benchmarks(ctx);
  register_h2d_benchmarks(ctx);
  register_device_op_benchmarks(ctx);
  register_loader_benchmarks(ctx);
  register_sampler_cost_benchmarks(ctx);
  register_train_step_benchmarks(ctx);
  register_end_to_end_benchmarks(ctx);
}

}  // namespace pipebench::bench
