#include "bench/cases/fix_probe.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <span>

#include "bench/cases/paired_runner.h"
#include "measure/stage_timers.h"

namespace pipebench::bench {

std::vector<model::PairedImageCost> probe_costliest(BenchContext& ctx, const Pipeline& today, const Pipeline& fix,
                                                    const std::map<size_t, double>& file_ms,
                                                    const std::vector<model::PairedImageCost>& measured,
                                                    double budget_s) {
  if (file_ms.empty() || !(budget_s > 0)) return {};
  std::set<size_t> known;
  for (const auto& m : measured) known.insert(m.index);
  std::vector<std::pair<double, size_t>> by_cost;  // (ms, index), costliest first
  for (const auto& [index, ms] : file_ms) by_cost.emplace_back(ms, index);
  std::sort(by_cost.begin(), by_cost.end(), std::greater<>());
  const double floor_ms = kProbeFloor * by_cost[by_cost.size() / 2].first;
  // The files to try, in order: each estimated at four runs of its visit cost.
  std::vector<size_t> order;
  std::vector<double> estimate_ms;
  for (const auto& [ms, index] : by_cost) {
    if (ms <= floor_ms || order.size() == kProbeFiles) break;
    if (known.count(index) || ctx.bad_files().known_bad(index)) continue;
    order.push_back(index);
    estimate_ms.push_back(4 * ms);
  }
  const PairedSide a{&today, &ctx.disk(), order};
  const PairedSide b{&fix, &ctx.disk(), order};
  PairedRunner runner(a, b, ctx.config().seed);
  PairedTimes t;
  t.per_image = true;
  std::vector<uint8_t> buf;
  std::vector<std::span<const uint8_t>> bytes(1);
  const int64_t budget_ns = static_cast<int64_t>(budget_s * 1e9);
  const int64_t start = thread_cpu_ns();
  int probed = 0;  // A B B A and B A A B alternate over the files probed
  for (size_t k = 0; k < order.size(); ++k) {
    const int64_t left = budget_ns - (thread_cpu_ns() - start);
    if (left <= 0) break;
    if (estimate_ms[k] * 1e6 > static_cast<double>(left)) continue;  // a cheaper one may fit
    try {
      bytes[0] = ctx.disk().bytes(order[k], buf);
      runner.block(bytes, bytes, k, 1, static_cast<int>(k), /*a_first=*/probed % 2 == 0, /*swapped=*/false, t);
      ++probed;
    } catch (const std::exception&) {  // a file that does not decode: left out
    }
  }
  return image_costs(t, a);
}

}  // namespace pipebench::bench
