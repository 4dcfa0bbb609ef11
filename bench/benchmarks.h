// The bench families, one register function per bench/*_bench.cpp. Each registers its
// cases with Google Benchmark, capturing `ctx`, which must outlive the run
// (benchmark::RunSpecifiedBenchmarks).
#pragma once

#include "bench/bench_context.h"

namespace pipebench::bench {

void register_read_benchmarks(BenchContext& ctx);
void register_decode_benchmarks(BenchContext& ctx);
void register_transform_benchmarks(BenchContext& ctx);
void register_sample_benchmarks(BenchContext& ctx);
void register_collate_benchmarks(BenchContext& ctx);
void register_h2d_benchmarks(BenchContext& ctx);
void register_loader_benchmarks(BenchContext& ctx);
void register_end_to_end_benchmarks(BenchContext& ctx);

/// All of the above, in the order the run lists them.
inline void register_all_benchmarks(BenchContext& ctx) {
  register_read_benchmarks(ctx);
  register_decode_benchmarks(ctx);
  register_transform_benchmarks(ctx);
  register_sample_benchmarks(ctx);
  register_collate_benchmarks(ctx);
  register_h2d_benchmarks(ctx);
  register_loader_benchmarks(ctx);
  register_end_to_end_benchmarks(ctx);
}

}  // namespace pipebench::bench
