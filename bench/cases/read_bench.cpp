// BM_Read/<layout>/<cache>: samples' bytes into memory through the run's storage
// (datasets/storage.h), one round per iteration (bench/run/image_round.h); us_per_image = wall
// time per sample, µs; bytes_per_second = MB/s read.
//   layout  files (an ImageFolder tree, or the shards of --data), or shards-N: --data
//           packed into WebDataset shards of N images (--shards; made once into the cache
//           folder; its round is as many images spread over the copy)
//   warm    the page cache holds the bytes (a first, untimed pass reads the round)
//   cold    the round's files' pages are dropped with posix_fadvise(POSIX_FADV_DONTNEED)
//           before each round (outside the timed region); needs no root. The timed reads
//           themselves drop nothing, so files and shards pay the same per read. On a filesystem that
//           ignores the advice (tmpfs, some overlays) cold reads stay warm: the context's
//           cold_resident_pct says what mincore found right after a drop.
// With --read-throttle-mib-s every read also waits for the emulated link. The cold read is
// the fetch rate alone in the verdict's fetch/prep split (DS-Analyzer's read-only run).
#include <benchmark/benchmark.h>

#include <functional>

#include "bench/run/benchmarks.h"
#include "bench/run/counter_put.h"
#include "bench/run/image_round.h"
#include "bench/run/packed_copy.h"
#include "measure/stage_timers.h"

namespace pipebench::bench {
namespace {

// One round of reads: fn(index) for each index; false when the case must stop.
using RoundRunner = std::function<bool(benchmark::State&, int64_t&, const std::function<void(size_t)>&)>;

// `src` reads without dropping (a warm StoredSource, with the run's throttle); cold drops
// the round's files before each round.
void read_case(benchmark::State& state, BenchContext& ctx, const StoredSource& src, bool cold,
               const std::vector<size_t>& round, const RoundRunner& run_one_round) {
  std::vector<uint8_t> buf;
  if (!cold) {  // the first pass: untimed, and not counted per image; errors come in the rounds
    for (size_t i : round) {
      try {
        src.bytes(i, buf);
      } catch (const std::exception&) {
      }
    }
  } else if (&src.inner() == &ctx.disk()) {
    ctx.note_evicted();  // a later warm loader must read the dataset in again
  }
  int64_t bytes = 0, images = 0, wall_ns = 0;
  for (auto _ : state) {
    if (cold) {  // outside the timed region
      state.PauseTiming();
      src.drop_files_of(round);  // an unreadable file fails in the round, naming itself
      state.ResumeTiming();
    }
    const int64_t t0 = now_ns();
    const bool go_on = run_one_round(state, images, [&](size_t i) {
      bytes += static_cast<int64_t>(src.bytes(i, buf).size());
      benchmark::DoNotOptimize(buf.data());
    });
    wall_ns += now_ns() - t0;
    if (!go_on) break;
  }
  state.SetBytesProcessed(bytes);
  set_round_counters(state, images, round.size(), wall_ns);
  if (ctx.throttle()) put(state, CounterId::kReadThrottleMibS, ctx.throttle()->mib_per_s());
}

void BM_Read(benchmark::State& state, BenchContext& ctx, CacheMode mode) {
  const auto& round = ctx.round();
  read_case(state, ctx, ctx.stored(CacheMode::kWarm), mode == CacheMode::kCold, round,
            [&](benchmark::State& s, int64_t& images, const std::function<void(size_t)>& fn) {
              return run_round(ctx, s, round, images, fn, CostClock::kWall);
            });
}

// The packed copy: written by pipebench, so a sample that fails is the case's error.
void BM_ReadPacked(benchmark::State& state, BenchContext& ctx, CacheMode mode,
                   const std::shared_ptr<PackedCopy>& copy) {
  const PackedCopy::Ready* ready = copy->get(ctx);
  if (!ready) {
    ctx.fail_case(state, copy->error());
    return;
  }
  read_case(state, ctx, ready->stored(CacheMode::kWarm), mode == CacheMode::kCold, ready->round,
            [&](benchmark::State& s, int64_t& images, const std::function<void(size_t)>& fn) {
              for (size_t i : ready->round) {
                try {
                  fn(i);
                } catch (const std::exception& e) {
                  ctx.fail_case(s, "packed copy " + copy->dir().string() + ": " + e.what());
                  return false;
                }
              }
              images += static_cast<int64_t>(ready->round.size());
              return true;
            });
}

}  // namespace

void register_read_benchmarks(BenchContext& ctx) {
  // Real time: a cold read waits on the device, which CPU time would not count.
  const auto key = [](const std::string& layout, int shards, CacheMode mode) {
    return model::read_case(layout, to_string(mode), shards);
  };
  for (CacheMode mode : {CacheMode::kWarm, CacheMode::kCold}) {
    register_case(ctx, key(ctx.disk().layout(), 0, mode), BM_Read, mode)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  for (const auto& copy : ctx.packed_copies()) {
    for (CacheMode mode : {CacheMode::kWarm, CacheMode::kCold}) {
      register_case(ctx, key("shards", copy->shard_size(), mode), BM_ReadPacked, mode, copy)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace pipebench::bench
