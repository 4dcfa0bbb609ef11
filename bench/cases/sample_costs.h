// The distribution of per-sample costs an end-to-end case timed (issue 34 item 2): each
// sample the loader finished during its loader-alone windows (before and after the loop;
// Loader::record_sample_costs), its wall cost on its worker (read + pipeline + collate,
// ns -> ms), kept in the run record and fed to the step model for the case's prediction.
//
// Counters (model/counters.h, family loader and loop), on BM_EndToEnd cases with at least
// kMinSamples costs timed:
//   samples_timed, sample_mean_ms, sample_p50_ms / _p95_ms / _p99_ms, sample_max_ms (ms per
//     sample, as measured);
//   costliest:<file>_ms: the kNamed costliest files (SampleSource::name, their mean cost
//     per visit, ms), costliest first;
//   pred_step_p50_ms / _p95_ms / _p99_ms, pred_au_pct, pred_stall_pct: the step model's
//     prediction from these costs (model/bound.h predict_from_costs), whose mean is the
//     case's bound_ms;
//   tail_stall_share_pct: the share of the predicted stall the costliest 1 % of the timed
//     samples (at least one) cause (model::tail_stall_share_pct), %;
//   pred_step_deep_prefetch_ms, pred_step_out_of_order_ms: the tail fixes priced by the
//     model on the same costs (twice the prefetch depth; out-of-order delivery).
// Errors: none thrown here beyond the model's std::invalid_argument (a cost not finite).
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench/run/counter_put.h"
#include "datasets/sample_source.h"
#include "model/bound.h"
#include "pipeline/loader.h"

namespace pipebench::bench {

struct TimedCosts {
  static constexpr size_t kNamed = 5;        ///< costliest files named in the record
  static constexpr size_t kMinSamples = 16;  ///< fewer: no distribution (the closed form)
  std::vector<double> visit_ms;              ///< every sample timed, ms, as finished
  std::vector<std::pair<std::string, double>> costliest;  ///< file -> mean ms per visit
  std::map<size_t, double> file_ms;          ///< dataset index -> mean ms per visit (every file timed)
  bool enough() const { return visit_ms.size() >= kMinSamples; }
};

// timed_costs(costs, dataset, root): the costs recorded by the loader, by dataset index of
// `dataset` (out-of-range indices are kept as costs but not named), files named under
// `root` (file_under).
// put_cost_counters(state, costs, prediction, price_fixes): the counters above (nothing when
// !costs.enough(); without the two fixes' prices when !price_fixes: a tail fix's own case).
// Header-only (inline): bench/cases/end_to_end_bench.cpp is its one user.

// A file's name as the record keeps it: under `root` (--data, or a presized copy's folder)
// when it lies there, else as the dataset names it (a shard member: "shard.tar:member").
inline std::string file_under(const std::string& name, const std::filesystem::path& root) {
  const std::string prefix = root.lexically_normal().string();
  if (prefix.empty() || name.size() <= prefix.size() + 1 || name.compare(0, prefix.size(), prefix) != 0 ||
      (name[prefix.size()] != '/' && prefix.back() != '/'))
    return name;
  return name.substr(prefix.size() + (prefix.back() == '/' ? 0 : 1));
}

inline TimedCosts timed_costs(const std::vector<Loader::SampleCost>& costs, const SampleSource& dataset,
                              const std::filesystem::path& root) {
  TimedCosts t;
  std::map<int64_t, std::pair<double, int>> per_index;  // index -> (sum ms, visits)
  for (const auto& c : costs) {
    const double ms = static_cast<double>(c.ns) / 1e6;
    t.visit_ms.push_back(ms);
    auto& [sum, visits] = per_index[c.index];
    sum += ms;
    ++visits;
  }
  std::vector<std::pair<double, int64_t>> by_cost;
  for (const auto& [index, v] : per_index) {
    if (index < 0 || static_cast<size_t>(index) >= dataset.size()) continue;
    by_cost.emplace_back(v.first / v.second, index);
    t.file_ms.emplace(static_cast<size_t>(index), v.first / v.second);
  }
  const size_t named = std::min(TimedCosts::kNamed, by_cost.size());
  std::partial_sort(by_cost.begin(), by_cost.begin() + static_cast<std::ptrdiff_t>(named), by_cost.end(),
                    [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; i < named; ++i)
    t.costliest.emplace_back(file_under(dataset.name(static_cast<size_t>(by_cost[i].second)), root), by_cost[i].first);
  return t;
}

inline void put_cost_counters(benchmark::State& state, const TimedCosts& costs, const CostPrediction& p,
                              bool price_fixes = true) {
  if (!costs.enough()) return;
  const model::CostSummary s = model::summarise_costs(costs.visit_ms);
  put(state, CounterId::kSamplesTimed, s.samples);
  put(state, CounterId::kSampleMsMean, s.mean_ms);
  put(state, CounterId::kSampleMsP50, s.p50_ms);
  put(state, CounterId::kSampleMsP95, s.p95_ms);
  put(state, CounterId::kSampleMsP99, s.p99_ms);
  put(state, CounterId::kSampleMsMax, s.max_ms);
  for (const auto& [file, ms] : costs.costliest) put(state, CounterId::kCostliestMs, file, ms);
  put(state, CounterId::kPredStepP50Ms, p.step.p50_ms);
  put(state, CounterId::kPredStepP95Ms, p.step.p95_ms);
  put(state, CounterId::kPredStepP99Ms, p.step.p99_ms);
  put(state, CounterId::kPredAuPct, p.step.au_pct);
  put(state, CounterId::kPredStallPct, p.step.stall_pct);
  put(state, CounterId::kTailStallSharePct, p.tail_stall_share_pct);
  if (!price_fixes) return;  // a tail fix's own case: its prices would be of another fix
  put(state, CounterId::kPredStepDeepPrefetchMs, p.deep_prefetch_step_ms);
  put(state, CounterId::kPredStepOutOfOrderMs, p.out_of_order_step_ms);
}


}  // namespace pipebench::bench
