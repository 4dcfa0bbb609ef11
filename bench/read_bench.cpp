// BM_Read: files' bytes into memory, one round of files per iteration (bench/image_round.h);
// us_per_image = wall time per file, µs.
//   warm  the page cache holds the files (a first pass reads them all)
//   cold  the round's pages are dropped with posix_fadvise(POSIX_FADV_DONTNEED) before each
//         round (outside the timed region); needs no root. On a filesystem that ignores
//         the advice (tmpfs, some overlays) cold reads stay warm: compare the two.
#include <benchmark/benchmark.h>

#include <functional>

#include "bench/benchmarks.h"
#include "bench/image_round.h"
#include "pipeline/stage_timers.h"
#include "datasets/file_io.h"

namespace pipebench::bench {
namespace {

void BM_Read(benchmark::State& state, BenchContext& ctx, bool cold) {
  const auto& ds = ctx.disk();
  const auto& round = ctx.round();
  std::vector<uint8_t> buf;
  if (!cold) {  // a first pass puts the round's files in the page cache
    for (size_t i : round) {
      if (ctx.bad_files().known_bad(i)) continue;
      try {
        read_file(ds.sample(i).path, buf);
      } catch (const std::exception& e) {
        if (!ctx.on_bad_file(state, i, e.what())) return;
      }
    }
  }
  int64_t bytes = 0, images = 0, wall_ns = 0;
  for (auto _ : state) {
    // Cold: every file's pages are dropped before the round, outside the timed region.
    if (cold) {
      state.PauseTiming();
      bool stop = false;
      for (size_t i : round) {
        if (stop || ctx.bad_files().known_bad(i)) continue;
        try {
          drop_page_cache(ds.sample(i).path);
        } catch (const std::exception& e) {  // unreadable or vanished: the file's fault
          stop = !ctx.on_bad_file(state, i, e.what());
        }
      }
      state.ResumeTiming();
      if (stop) break;
    }
    const int64_t t0 = now_ns();
    const bool go_on = run_round(ctx, state, round, images, [&](size_t i) {
      bytes += static_cast<int64_t>(read_file(ds.sample(i).path, buf));
      benchmark::DoNotOptimize(buf.data());
    }, CostClock::kWall);
    wall_ns += now_ns() - t0;
    if (!go_on) break;
  }
  state.SetBytesProcessed(bytes);
  set_round_counters(state, images, round.size(), wall_ns);
}

}  // namespace

void register_read_benchmarks(BenchContext& ctx) {
  // Real time: a cold read waits on the device, which CPU time would not count.
  register_case(ctx, "BM_Read/warm", BM_Read, false)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  register_case(ctx, "BM_Read/cold", BM_Read, true)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace pipebench::bench
