#include "pipeline/dist/straggler.h"

#include "model/step_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

namespace pipebench::dist {
namespace {

void check(const std::vector<std::vector<double>>& data_ms, double compute_ms, int prefetch) {
  if (data_ms.empty()) throw std::invalid_argument("straggler prediction: no ranks");
  for (size_t r = 0; r < data_ms.size(); ++r) {
    if (data_ms[r].empty())
      throw std::invalid_argument("straggler prediction: rank " + std::to_string(r) +
                                  " has no data-time samples");
    for (double v : data_ms[r])
      if (!std::isfinite(v) || v < 0)
        throw std::invalid_argument("straggler prediction: rank " + std::to_string(r) +
                                    " has a data time that is not a finite ms >= 0");
  }
  if (!std::isfinite(compute_ms) || compute_ms < 0)
    throw std::invalid_argument("straggler prediction: compute must be a finite ms >= 0");
  if (prefetch < 1) throw std::invalid_argument("straggler prediction: prefetch must be >= 1");
}

}  // namespace

StragglerPrediction predict_synchronised_step(const std::vector<std::vector<double>>& data_ms,
                                              double compute_ms, int prefetch,
                                              const StragglerOptions& o) {
  check(data_ms, compute_ms, prefetch);
  StragglerPrediction p;
  double slowest_mean = -1;
  for (size_t r = 0; r < data_ms.size(); ++r) {
    const double mean = std::accumulate(data_ms[r].begin(), data_ms[r].end(), 0.0) /
                        static_cast<double>(data_ms[r].size());
    if (mean > slowest_mean) {
      slowest_mean = mean;
      p.slowest_rank = static_cast<int>(r);
    }
  }
  p.naive_ms = std::max(slowest_mean, compute_ms);
  std::mt19937_64 rng(o.seed);
  double sum = 0;
  for (int i = 0; i < o.draws; ++i) {
    double step = compute_ms;
    for (const auto& samples : data_ms) {
      std::uniform_int_distribution<size_t> pick(0, samples.size() - 1);
      step = std::max(step, samples[pick(rng)]);
    }
    sum += step;
  }
  p.iid_max_ms = o.draws > 0 ? sum / o.draws : p.naive_ms;
  // The loop: the step model (model/step_model.h), each interval one cost (batch 1, one
  // worker), drawn in runs of `block`, as many steps as the sequences held.
  if (o.sequences > 0 && o.steps > 0) {
    model::StepModelInput in;
    in.rank_sample_ms = data_ms;
    in.loader.batch = 1;
    in.loader.workers = 1;
    in.loader.prefetch_depth = prefetch;
    in.loop.compute_ms = compute_ms;
    in.loop.ranks = static_cast<int>(data_ms.size());
    model::SimOptions sim;
    sim.order = model::CostOrder::kResample;
    sim.block = std::max(1, o.block);
    sim.steps = o.sequences * o.steps;
    sim.seed = o.seed;
    p.queue_ms = model::predict_step(in, sim).step_ms;
  } else {
    p.queue_ms = p.naive_ms;
  }
  return p;
}

double prediction_error_pct(double predicted_ms, double measured_ms) {
  return model::prediction_error_pct(predicted_ms, measured_ms);
}

}  // namespace pipebench::dist
