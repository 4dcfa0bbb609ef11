#include "pipeline/worker_search.h"

#include "model/bound.h"
#include "model/step_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace pipebench {
namespace {

// The step model's AU of a loop whose loader takes data_ms per batch (model/bound.h
// predict_from_parts: max(data, compute)).
double au_pct(double data_ms, double compute_ms) {
  return predict_from_parts(data_ms, compute_ms, 2).au_pct;
}

// The one "workers needed" formula (model::mean_workers_for_target) with the per-sample
// cost that `data_ms` at `w` workers implies at linear scaling: data_ms x w / batch.
int scaled_guess(int w, double data_ms, int batch, double compute_ms) {
  return model::mean_workers_for_target(data_ms * w / batch, batch, compute_ms, kTargetAuPct);
}

}  // namespace

std::string WorkerSearch::summary(double compute_ms) const {
  std::string s = "tried ";
  char buf[96];
  for (size_t i = 0; i < trials.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%d (%.1f ms/batch, AU %.0f %%)", i ? ", " : "",
                  trials[i].workers, trials[i].data_ms, trials[i].au_pct);
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "; chose %d of a budget of %d core%s", chosen, budget,
                budget == 1 ? "" : "s");
  s += buf;
  if (!reached) {
    std::snprintf(buf, sizeof buf, " (no count within the budget reaches AU >= %.0f %% at a "
                  "%.1f ms step: the highest AU)", kTargetAuPct, compute_ms);
    s += buf;
  }
  return s;
}

WorkerSearch search_workers(const std::function<double(int)>& measure, double per_sample_ms,
                            int batch, double compute_ms, int budget, int max_trials) {
  if (!(per_sample_ms > 0) || !std::isfinite(per_sample_ms))
    throw std::invalid_argument("search_workers: per_sample_ms must be > 0, got " + std::to_string(per_sample_ms));
  if (!(compute_ms > 0) || !std::isfinite(compute_ms))
    throw std::invalid_argument("search_workers: compute_ms must be > 0, got " + std::to_string(compute_ms));
  if (batch < 1) throw std::invalid_argument("search_workers: batch must be >= 1");
  if (budget < 1) throw std::invalid_argument("search_workers: the CPU budget must be >= 1 core");
  WorkerSearch r;
  r.budget = budget;
  const auto find = [&](int w) -> const WorkerTrial* {
    for (const auto& t : r.trials)
      if (t.workers == w) return &t;
    return nullptr;
  };
  const auto trial = [&](int w) -> const WorkerTrial& {
    if (const auto* t = find(w)) return *t;
    const double d = measure(w);
    r.trials.push_back({w, d, au_pct(d, compute_ms)});
    return r.trials.back();
  };
  const auto ok = [](const WorkerTrial& t) { return t.au_pct >= kTargetAuPct - 1e-9; };

  int w = std::clamp(model::mean_workers_for_target(per_sample_ms, batch, compute_ms, kTargetAuPct), 1, budget);
  // Up until AU >= 90 % or the budget.
  WorkerTrial t = trial(w);
  while (!ok(t) && w < budget && static_cast<int>(r.trials.size()) < max_trials) {
    w = std::clamp(std::max(w + 1, scaled_guess(w, t.data_ms, batch, compute_ms)), 1, budget);
    t = trial(w);
  }
  if (ok(t)) {
    // Down while the count below still reaches it (each measured once).
    while (w > 1 && static_cast<int>(r.trials.size()) < max_trials) {
      const WorkerTrial below = trial(w - 1);
      if (!ok(below)) break;
      w -= 1;
    }
    // The smallest passing count measured (a measured w - 1 may pass when a larger failed).
    for (const auto& x : r.trials)
      if (ok(x) && x.workers < w) w = x.workers;
    r.chosen = w;
    r.reached = true;
    return r;
  }
  const WorkerTrial* best = &r.trials.front();
  for (const auto& x : r.trials)
    if (x.au_pct > best->au_pct + 1e-9 || (std::abs(x.au_pct - best->au_pct) <= 1e-9 && x.workers < best->workers))
      best = &x;
  r.chosen = best->workers;
  r.reached = false;
  return r;
}

}  // namespace pipebench
