#include "pipeline/dist/straggler.h"

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

// One rank's resampled sequence: runs of `block` consecutive samples, each run from a
// random start (a moving-block bootstrap; block 1 draws each sample independently).
class BlockDraws {
 public:
  BlockDraws(const std::vector<double>& samples, int block)
      : samples_(samples), block_(std::min(static_cast<size_t>(std::max(1, block)), samples.size())) {}
  double next(std::mt19937_64& rng) {
    if (left_ == 0) {
      std::uniform_int_distribution<size_t> start(0, samples_.size() - block_);
      at_ = start(rng);
      left_ = block_;
    }
    --left_;
    return samples_[at_++];
  }

 private:
  const std::vector<double>& samples_;
  size_t block_, at_ = 0, left_ = 0;
};

// The simulated loop of straggler.h over one resampled sequence: mean step time, ms.
double simulate(const std::vector<std::vector<double>>& data_ms, double compute_ms,
                int prefetch, int steps, int block, std::mt19937_64& rng) {
  const size_t ranks = data_ms.size();
  std::vector<BlockDraws> draws;
  for (const auto& samples : data_ms) draws.emplace_back(samples, block);
  std::vector<double> made(ranks, 0.0);     // when each rank's loader finished its last batch
  std::vector<double> released(static_cast<size_t>(steps), 0.0);  // step k's start
  double end = 0, warm_end = 0;
  const int warm = std::min(steps - 1, 2 * prefetch);
  for (int k = 0; k < steps; ++k) {
    const double slot = k >= prefetch ? released[static_cast<size_t>(k - prefetch)] : 0.0;
    double ready = 0;
    for (size_t r = 0; r < ranks; ++r) {
      made[r] = std::max(made[r], slot) + draws[r].next(rng);
      ready = std::max(ready, made[r]);
    }
    const double start = std::max(end, ready);
    released[static_cast<size_t>(k)] = start;
    end = start + compute_ms;
    if (k == warm) warm_end = end;
  }
  return (end - warm_end) / std::max(1, steps - 1 - warm);
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
  double queue = 0;
  for (int s = 0; s < o.sequences; ++s)
    queue += simulate(data_ms, compute_ms, prefetch, o.steps, o.block, rng);
  p.queue_ms = o.sequences > 0 ? queue / o.sequences : p.naive_ms;
  return p;
}

double prediction_error_pct(double predicted_ms, double measured_ms) {
  return measured_ms > 0 ? 100.0 * (predicted_ms - measured_ms) / measured_ms : 0.0;
}

}  // namespace pipebench::dist
