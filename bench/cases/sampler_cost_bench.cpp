// BM_SystemSampler/<pipeline>/workers:<w>: what the system sampler (measure/system_metrics.h,
// at --system-sample-hz, default 20, on in every loader and end-to-end case; with 0 the
// sampler is off and this case is not registered) costs the loader, issue 10's "< 1 % of
// loader throughput". One warmed-up loader at w workers (the most swept workers within the
// cores: where the sampler's thread competes for a core with them); each iteration times
// --steps batches with the sampler on, then --steps with it off, alternating A B A B over
// the iterations as A B B A A B B A (4 pairs; 2 or 1 on batches of seconds, below): linear drift in the machine's speed cancels,
// and neither side always comes first.
// Counters: on_ms, off_ms (the loader's ms per batch produced, means over the pairs),
// overhead_pct = 100 x (on - off) / off (a ratio inside one run; on a shared machine noise
// of a percent or two shows, negative values included), overhead_ci_pct (the 95 % t half
// width over the pairs' on / off - 1, model/paired.h) and pairs; sampler_cores = the sampler
// thread's own CPU time / wall time while on (measured directly, CLOCK_THREAD_CPUTIME_ID),
// and sampler_cost_pct = 100 x sampler_cores / cpu_cores_used: the share of the loader's
// CPU the sampler takes, the overhead to expect when the cores are the bottleneck, without
// the A/B noise. Its own family, not BM_Loader/.../sampler:on|off: the report reads every
// BM_Loader/<pipeline>/workers:<w>... case as a loader of the sweep.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "bench/run/benchmarks.h"
#include "bench/run/counter_put.h"
#include "model/paired.h"
#include "bench/run/loader_util.h"
#include "bench/run/machine.h"

namespace pipebench::bench {
namespace {

constexpr int kPairs = 4;

void BM_SystemSampler(benchmark::State& state, BenchContext& ctx,
                      const std::shared_ptr<const Pipeline>& pipeline, int workers, int pairs) {
  const auto& c = ctx.config();
  std::unique_ptr<Loader> loader;
  try {
    loader = make_loader(ctx, pipeline, workers, /*stage_timers=*/false);
    warm_up(ctx, *loader, nullptr);
  } catch (const std::exception& e) {
    ctx.fail_case(state, e.what());
    return;
  }
  double on_ms = 0, off_ms = 0, sampler_cpu_ms = 0, on_wall_ms = 0, on_cpu_ms = 0;
  const int steps = ctx.budget().steps(workers, 2 * pairs, 1, 1);  // 2 x pairs windows, one warm-up
  int64_t i = 0, images = 0;
  std::vector<double> on_each, off_each;  // per window, ms per batch, in pair order
  for (auto _ : state) {
    const bool on = i % 4 == 0 || i % 4 == 3;  // A B B A
    ++i;
    LoaderWindow w(*loader, on ? system_sampling(ctx) : SystemSampling{});
    for (int k = 0; k < steps; ++k)
      if (!loader->next()) {
        ctx.fail_case(state, "the loader ran out of batches");
        return;
      }
    w.finish(*loader);
    images += w.produced;
    const double ms = w.wall_ms / std::max(1e-9, w.produced_batches(c.batch));
    (on ? on_each : off_each).push_back(ms);
    if (on) {
      on_ms += ms;
      sampler_cpu_ms += w.sampler_cpu_ms;
      on_wall_ms += w.wall_ms;
      on_cpu_ms += w.process_cpu_ms;
    } else {
      off_ms += ms;
    }
  }
  const double ran_pairs = static_cast<double>(state.iterations()) / 2;
  state.SetItemsProcessed(images);  // as delivered: short batches count what they held
  put(state, CounterId::kBatches, static_cast<double>(state.iterations() * steps));
  put(state, CounterId::kWorkers, workers);
  put(state, CounterId::kOnMs, on_ms / ran_pairs);
  put(state, CounterId::kOffMs, off_ms / ran_pairs);
  put(state, CounterId::kOverheadPct, 100.0 * (on_ms - off_ms) / std::max(1e-9, off_ms));
  // Per pair (A B, then B A, ...): on / off - 1, %, and its 95 % t interval (model/paired.h).
  std::vector<double> pair_pct;
  for (size_t k = 0; k < std::min(on_each.size(), off_each.size()); ++k)
    if (off_each[k] > 0) pair_pct.push_back(100.0 * (on_each[k] / off_each[k] - 1));
  if (pair_pct.size() >= 2) put(state, CounterId::kOverheadCiPct, model::mean_interval(pair_pct).half);
  put(state, CounterId::kPairs, static_cast<double>(pair_pct.size()));
  const double sampler_cores = sampler_cpu_ms / std::max(1e-9, on_wall_ms);
  put(state, CounterId::kSamplerCores, sampler_cores);
  put(state, CounterId::kSamplerCostPct, 100.0 * sampler_cpu_ms / std::max(1e-9, on_cpu_ms));
}

}  // namespace

void register_sampler_cost_benchmarks(BenchContext& ctx) {
  const auto& c = ctx.config();
  if (c.system_sample_hz <= 0) return;  // --system-sample-hz=0: no sampler to cost
  int at = ctx.table_workers();
  if (at == 0) at = c.workers.empty() ? 1 : *std::min_element(c.workers.begin(), c.workers.end());
  model::CaseKey key;
  key.family = model::Family::kSystemSampler;
  key.pipeline = c.pipeline->name();
  key.workers = at;
  // kPairs pairs, or fewer where they forecast more than the case's budget
  // (CaseBudget::overhead_fits: large originals; 4 pairs took 17 s on photos-full), none where
  // even one does.
  const CaseBudget& plan = ctx.budget();
  int pairs = kPairs;
  while (pairs > 1 && !plan.overhead_fits(at, 2 * pairs, 1)) pairs /= 2;
  if (!plan.overhead_fits(at, 2 * pairs, 1)) return;
  register_case(ctx, key, BM_SystemSampler, c.pipeline, at, pairs)
      ->UseRealTime()
      ->Iterations(2 * pairs)  // on, off, off, on, ...
      ->Unit(benchmark::kMillisecond);
}

}  // namespace pipebench::bench
