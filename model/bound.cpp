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

// The loader as one cost per batch: batch 1, one worker (model/step_model.h).
model::LoaderShape one_worker(int prefetch_depth) {
  model::LoaderShape l;
  l.batch = 1;
  l.workers = 1;
  l.prefetch_depth = prefetch_depth;
  return l;
}

}  // namespace

Bound compute_bound(double data_ms, double compute_ms, double step_ms, double predicted_ms) {
  require_time("data_ms", data_ms);
  require_time("compute_ms", compute_ms);
  require_time("step_ms", step_ms);
  require_time("predicted_ms", predicted_ms);
  if (step_ms <= 0) throw std::invalid_argument("step_ms must be > 0 ms, got 0");
  Bound b;
  b.data_ms = data_ms;
  b.compute_ms = compute_ms;
  b.step_ms = step_ms;
  b.bound_ms = predicted_ms;
  b.au_pct = std::clamp(100.0 * compute_ms / step_ms, 0.0, 100.0);
  b.stall_pct = 100.0 - b.au_pct;
  b.prediction_error_pct = model::prediction_error_pct(b.bound_ms, step_ms);
  return b;
}

Bound compute_bound(double data_ms, double compute_ms, double step_ms) {
  require_time("data_ms", data_ms);
  require_time("compute_ms", compute_ms);
  return compute_bound(data_ms, compute_ms, step_ms, model::mean_bound_ms(data_ms, one_worker(1), compute_ms));
}

model::StepPrediction predict_from_parts(double data_ms, double compute_ms, int prefetch_depth,
                                         const std::vector<model::Callback>& callbacks) {
  model::StepModelInput in;
  in.sample_ms = {data_ms};
  in.loader = one_worker(prefetch_depth);
  in.loop.compute_ms = compute_ms;
  in.loop.callbacks = callbacks;
  if (!callbacks.empty()) return model::predict_step(in);
  // Constant costs: the simulation gives back the closed form (tests/step_model_test.cpp).
  model::StepPrediction p;
  p.data_ms = model::mean_data_ms(data_ms, in.loader);
  p.step_ms = p.p50_ms = p.p95_ms = p.p99_ms = p.max_ms = p.mean_bound_ms =
      model::mean_bound_ms(data_ms, in.loader, compute_ms);
  p.au_pct = p.step_ms > 0 ? std::clamp(100.0 * compute_ms / p.step_ms, 0.0, 100.0) : 100.0;
  p.stall_pct = 100.0 - p.au_pct;
  p.data_wait_ms = p.step_ms - compute_ms;
  return p;
}

CostPrediction predict_from_costs(const std::vector<double>& sample_ms, const model::LoaderShape& loader,
                                  double measured_data_ms, const model::LoopShape& loop, int costliest,
                                  double loop_cost_factor) {
  return predict_at_scale(sample_ms, loader, cost_scale(sample_ms, loader, measured_data_ms), loop, costliest,
                          loop_cost_factor);
}

double cost_scale(const std::vector<double>& sample_ms, const model::LoaderShape& loader, double measured_data_ms) {
  require_time("measured_data_ms", measured_data_ms);
  const double alone = model::predict_data_ms(sample_ms, loader);
  return alone > 0 && measured_data_ms > 0 ? measured_data_ms / alone : 1.0;
}

CostPrediction predict_at_scale(const std::vector<double>& sample_ms, const model::LoaderShape& loader,
                                double scale, const model::LoopShape& loop, int costliest, double loop_cost_factor) {
  if (!(loop_cost_factor > 0) || !std::isfinite(loop_cost_factor))
    throw std::invalid_argument("loop_cost_factor must be a finite number > 0, got " +
                                std::to_string(loop_cost_factor));
  if (!(scale > 0) || !std::isfinite(scale))
    throw std::invalid_argument("scale must be a finite number > 0, got " + std::to_string(scale));
  model::StepModelInput in;
  in.sample_ms = sample_ms;
  in.loader = loader;
  in.loop = loop;
  CostPrediction p;
  p.scale = scale;
  p.loop_cost_factor = loop_cost_factor;
  for (double& ms : in.sample_ms) ms *= p.scale * loop_cost_factor;
  p.step = model::predict_step(in);
  p.tail_stall_share_pct = model::tail_stall_share_pct(in, costliest);
  model::StepModelInput fix = in;  // the tail fixes, each alone
  fix.loader.prefetch_depth = 2 * in.loader.prefetch_depth;
  p.deep_prefetch_step_ms = model::predict_step(fix).step_ms;
  fix = in;
  fix.loader.delivery = model::Delivery::kOutOfOrder;
  p.out_of_order_step_ms = model::predict_step(fix).step_ms;
  return p;
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
    v.predicted_workers = model::mean_workers_for_target(per_sample_ms / v.scaling_efficiency, batch,
                                                         v.sweep.front().bound.compute_ms, model::kAuTargetPct);
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
