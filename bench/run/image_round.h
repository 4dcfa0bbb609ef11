// The images a per-image case measures: a round, the same for every case of a run, so
// two cases (BM_Decode/roi against BM_Decode/turbo_full, BM_Sample of two pipelines)
// average the same images and their ratio means something. One benchmark iteration is
// one whole round, so a case always covers whole rounds: on a dataset whose image costs
// spread 400x, stopping after an arbitrary number of images (as one-image iterations
// did) made each case average a different subset.
//
// The round is `--round=N` images spread evenly over the dataset's index order (class by
// class), or the whole dataset when it holds at most N images or N is 0. Files found bad
// under --on-error=skip are passed over in every later round.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "bench/run/bench_context.h"
#include "bench/run/per_image.h"
#include "measure/stage_timers.h"

namespace pipebench::bench {

/// Indices 0 <= i < dataset_size: all of them when round == 0 or dataset_size <= round,
/// else `round` indices floor(k * dataset_size / round), k = 0 .. round-1.
std::vector<size_t> round_indices(size_t dataset_size, size_t round);

/// Runs one round inside a case's timed loop: fn(index) for every index of `round` not
/// known bad. A throw from fn is a bad file (BenchContext::on_bad_file): under
/// --on-error=stop the case ends (returns false); under skip the file is passed over.
/// Adds the images done to `images`. Returns false, after fail_case, when the case must
/// stop (a bad file under stop, or no good image left in the round).
/// Each image's cost on `clock` goes to ctx.per_image() (bench/run/per_image.h); the clock
/// reads (tens of ns wall, under 1 us thread CPU) are small against an image's cost.
template <class Fn>
bool run_round(BenchContext& ctx, benchmark::State& state, const std::vector<size_t>& round,
               int64_t& images, Fn&& fn, CostClock clock = CostClock::kThreadCpu) {
  int64_t done = 0;
  PerImageCosts& costs = ctx.per_image();
  const bool per_image = costs.enabled();
  const auto read_clock = [clock] { return clock == CostClock::kWall ? now_ns() : thread_cpu_ns(); };
  for (size_t i : round) {
    if (ctx.bad_files().known_bad(i)) continue;
    try {
      const int64_t t0 = per_image ? read_clock() : 0;
      fn(i);
      if (per_image) costs.add(i, read_clock() - t0, clock);
      ++done;
    } catch (const std::exception& e) {
      if (!ctx.on_bad_file(state, i, e.what())) return false;
    }
  }
  images += done;
  if (done == 0) {
    ctx.fail_case(state, "every file of the round is bad (see the skipped files)");
    return false;
  }
  return true;
}

/// Counters every round case sets: items processed (images), images_per_round, and
/// us_per_image = `cpu_or_wall_ns` / images (thread CPU time for CPU-bound cases, wall
/// time for reads), microseconds per image.
void set_round_counters(benchmark::State& state, int64_t images, size_t round_size,
                        int64_t cpu_or_wall_ns);

}  // namespace pipebench::bench
