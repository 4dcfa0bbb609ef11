#include "model/tail_forecast.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "model/step_model.h"

namespace pipebench::model {
namespace {

// Steps each of the three simulations replays: enough to meet a 1-in-30 batch many times,
// few enough that the forecast costs a fraction of a second at registration.
constexpr int kForecastSteps = 2000;

}  // namespace

TailForecast forecast_tail_fixes(const TailForecastInput& in) {
  if (in.file_bytes.empty()) throw std::invalid_argument("tail forecast: no files");
  if (!std::isfinite(in.typical_sample_ms) || !(in.typical_sample_ms > 0))
    throw std::invalid_argument("tail forecast: typical_sample_ms must be a finite ms > 0, got " +
                                std::to_string(in.typical_sample_ms));
  if (!std::isfinite(in.compute_ms) || in.compute_ms < 0)
    throw std::invalid_argument("tail forecast: compute_ms must be a finite ms >= 0, got " +
                                std::to_string(in.compute_ms));
  // An even subsample of a large dataset, then each file's cost by its bytes.
  const std::size_t n = in.file_bytes.size(), used = std::min(n, kForecastFiles);
  std::vector<double> bytes(used);
  for (std::size_t i = 0; i < used; ++i) bytes[i] = static_cast<double>(in.file_bytes[i * n / used]);
  std::vector<double> sorted = bytes;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(used / 2), sorted.end());
  const double median = sorted[used / 2];
  StepModelInput sim;
  sim.sample_ms.reserve(used);
  for (double b : bytes) sim.sample_ms.push_back(median > 0 ? in.typical_sample_ms * b / median : in.typical_sample_ms);
  sim.loader.batch = in.batch;
  sim.loader.workers = in.workers;
  sim.loader.prefetch_depth = in.prefetch_depth;
  double mean = 0;
  for (double ms : sim.sample_ms) mean += ms;
  mean /= static_cast<double>(used);
  TailForecast f;
  f.compute_ms = in.compute_ms > 0 ? in.compute_ms : mean_data_ms(mean, sim.loader);
  sim.loop.compute_ms = f.compute_ms;
  SimOptions options;
  options.steps = kForecastSteps;
  f.step_ms = predict_step(sim, options).step_ms;
  StepModelInput fix = sim;
  fix.loader.prefetch_depth = 2 * in.prefetch_depth;
  f.deep_prefetch_ms = predict_step(fix, options).step_ms;
  fix = sim;
  fix.loader.delivery = Delivery::kOutOfOrder;
  f.out_of_order_ms = predict_step(fix, options).step_ms;
  if (f.step_ms > 0)
    f.best_saving_pct = 100.0 * (1.0 - std::min(f.deep_prefetch_ms, f.out_of_order_ms) / f.step_ms);
  return f;
}

}  // namespace pipebench::model
