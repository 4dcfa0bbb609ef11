#include "model/bound.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace pipebench {
namespace {

void require_time(const char* name, double ms) {
  if (!std::isfinite(ms) || ms < 0) {
    throw std::invalid_argument(std::string(name) + " must be a finite time >= 0 ms, got " +
                                std::to_string(ms));
  }
}

}  // namespace

Bound compute_bound(double data_ms, double compute_ms, double step_ms) {
  require_time("data_ms", data_ms);
  require_time("compute_ms", compute_ms);
  require_time("step_ms", step_ms);
  if (step_ms <= 0) throw std::invalid_argument("step_ms must be > 0 ms, got 0");
  Bound b;
  b.data_ms = data_ms;
  b.compute_ms = compute_ms;
  b.step_ms = step_ms;
  b.bound_ms = std::max(data_ms, compute_ms);
  b.au_pct = std::clamp(100.0 * compute_ms / step_ms, 0.0, 100.0);
  b.stall_pct = 100.0 - b.au_pct;
  b.prediction_error_pct = 100.0 * (b.bound_ms - step_ms) / step_ms;
  return b;
}

int predict_workers(double per_sample_ms, int batch, double compute_ms, double scaling_efficiency) {
  if (!(per_sample_ms > 0) || !std::isfinite(per_sample_ms))
    throw std::invalid_argument("per_sample_ms must be > 0, got " + std::to_string(per_sample_ms));
  if (batch <= 0) throw std::invalid_argument("batch must be >= 1, got " + std::to_string(batch));
  if (!(compute_ms > 0) || !std::isfinite(compute_ms))
    throw std::invalid_argument("compute_ms must be > 0, got " + std::to_string(compute_ms));
  if (!(scaling_efficiency > 0) || scaling_efficiency > 1)
    throw std::invalid_argument("scaling_efficiency must be in (0, 1], got " +
                                std::to_string(scaling_efficiency));
  const double w = per_sample_ms * batch / (compute_ms * scaling_efficiency);
  // A hair of tolerance so that an exact fit (w = 2.0000000001 from rounding) stays 2.
  return std::max(1, static_cast<int>(std::ceil(w - 1e-9)));
}

Verdict make_verdict(std::vector<SweepPoint> sweep, double per_sample_ms, int batch,
                     std::vector<StageCost> stages, const std::vector<Alternative>& alternatives) {
  Verdict v;
  std::sort(sweep.begin(), sweep.end(),
            [](const SweepPoint& a, const SweepPoint& b) { return a.workers < b.workers; });
  v.sweep = std::move(sweep);
  v.per_sample_ms = per_sample_ms;

  for (const auto& p : v.sweep) {
    if (!p.bound.data_bound()) {
      v.first_compute_bound = p.workers;
      break;
    }
  }

  // Scaling efficiency: the best measured speed-up per worker over w = 1, among sweep
  // points that were still data-bound (a compute-bound point is capped by the step, not
  // by the workers). Linear (1) when the sweep cannot tell.
  const SweepPoint* one = nullptr;
  for (const auto& p : v.sweep) if (p.workers == 1) one = &p;
  if (one && one->images_per_second > 0) {
    double eff = 0;
    for (const auto& p : v.sweep) {
      if (p.workers <= 1 || !p.bound.data_bound() || p.images_per_second <= 0) continue;
      eff = std::max(eff, p.images_per_second / one->images_per_second / p.workers);
    }
    if (eff > 0) v.scaling_efficiency = std::min(1.0, eff);
  }

  if (!v.first_compute_bound && per_sample_ms > 0 && !v.sweep.empty() &&
      v.sweep.front().bound.compute_ms > 0) {
    v.predicted_workers = predict_workers(per_sample_ms, batch, v.sweep.front().bound.compute_ms,
                                          v.scaling_efficiency);
  }

  std::sort(stages.begin(), stages.end(), [](const StageCost& a, const StageCost& b) {
    return a.ms_per_sample > b.ms_per_sample;
  });
  v.stages = std::move(stages);

  const Alternative* best = nullptr;
  const std::string top = v.stages.empty() ? std::string() : v.stages.front().stage;
  for (const auto& a : alternatives) {
    if (a.saving_ms() <= 0) continue;
    const bool a_top = a.stage == top;
    const bool best_top = best && best->stage == top;
    if (!best || (a_top && !best_top) || (a_top == best_top && a.saving_ms() > best->saving_ms()))
      best = &a;
  }
  if (best) v.best_alternative = *best;
  return v;
}

}  // namespace pipebench
