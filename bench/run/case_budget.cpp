#include "bench/run/case_budget.h"

#include <cmath>
#include <stdexcept>
#include <string>


namespace pipebench::bench {

void check_budget(const CaseBudget& b) {
  if (!(b.budget_s > 0) || !std::isfinite(b.budget_s))
    throw std::invalid_argument("--budget must be > 0 seconds, got " + std::to_string(b.budget_s));
  if (!(b.sample_ms >= 0) || !std::isfinite(b.sample_ms))
    throw std::invalid_argument("the budget's probe must be >= 0 ms per sample, got " + std::to_string(b.sample_ms));
  if (b.images_per_batch < 1)
    throw std::invalid_argument("the budget needs at least one image per batch, got " +
                                std::to_string(b.images_per_batch));
  if (b.max_steps < 1) throw std::invalid_argument("--steps must be >= 1, got " + std::to_string(b.max_steps));
}

double CaseBudget::batch_ms(int workers) const {
  const double parallel = workers <= 1 ? 1.0
      : std::max(1.0, kParallelEfficiency * std::min(static_cast<double>(workers), cores));
  return std::max(sample_ms * images_per_batch / parallel, compute_ms);
}

int CaseBudget::steps(int workers, int windows, int warmups, int min_steps) const {
  if (fixed) return max_steps;
  const double per_batch = batch_ms(workers);
  if (!(per_batch > 0)) return max_steps;
  const double batches = budget_s * 1000 / per_batch - static_cast<double>(warmups) * (prefetch + 1);
  const double per_window = std::floor(batches / std::max(1, windows));
  if (!(per_window >= min_steps)) return std::min(std::max(1, min_steps), max_steps);
  return static_cast<int>(std::min<double>(per_window, max_steps));
}

double CaseBudget::forecast_s(int workers, int windows, int warmups, int steps) const {
  const double batches = static_cast<double>(warmups) * (prefetch + 1) + static_cast<double>(windows) * steps;
  return batches * batch_ms(workers) / 1000;
}

}  // namespace pipebench::bench
