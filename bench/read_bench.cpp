// BM_Read: a file's bytes into memory, one file per iteration, cycling over the dataset.
//   warm  the page cache holds the files (a first pass reads them all)
//   cold  each file's pages are dropped with posix_fadvise(POSIX_FADV_DONTNEED) before it
//         is read (outside the timed region); needs no root. On a filesystem that ignores
//         the advice (tmpfs, some overlays) cold reads stay warm: compare the two.
#include <benchmark/benchmark.h>

#include <functional>

#include "bench/benchmarks.h"
#include "datasets/file_io.h"

namespace pipebench::bench {
namespace {

void BM_Read(benchmark::State& state, BenchContext& ctx, bool cold) {
  const auto& ds = ctx.disk();
  std::vector<uint8_t> buf;
  if (!cold) {
    for (size_t i = 0; i < ds.size(); ++i) {
      if (ctx.bad_files().known_bad(i)) continue;
      try {
        read_file(ds.sample(i).path, buf);
      } catch (const std::exception& e) {
        if (!ctx.on_bad_file(state, i, e.what())) return;
      }
    }
  }
  DatasetCursor cursor(ds.size(), ctx.bad_files());
  size_t i = 0;
  int64_t bytes = 0;
  for (auto _ : state) {
    if (!cursor.good(i)) {
      ctx.fail_case(state, "every file of the dataset is bad (see the skipped files)");
      break;
    }
    const auto& path = ds.sample(i).path;
    if (cold) {
      state.PauseTiming();
      drop_page_cache(path);
      state.ResumeTiming();
    }
    try {
      bytes += static_cast<int64_t>(read_file(path, buf));
    } catch (const std::exception& e) {
      if (!ctx.on_bad_file(state, i, e.what())) break;
    }
    benchmark::DoNotOptimize(buf.data());
    cursor.advance();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(bytes);
}

}  // namespace

void register_read_benchmarks(BenchContext& ctx) {
  // Real time: a cold read waits on the device, which CPU time would not count.
  benchmark::RegisterBenchmark("BM_Read/warm", BM_Read, std::ref(ctx), false)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_Read/cold", BM_Read, std::ref(ctx), true)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace pipebench::bench
