#include "model/ratio_fix_price.h"

#include <algorithm>
#include <cmath>

namespace pipebench::model {
namespace {

// The median ratio of the kRatioNeighbours files among `pool` nearest to `mp` in log
// megapixels (all of them when fewer).
double nearest_median(double mp, std::vector<std::pair<double, double>> pool) {
  const auto distance = [&](double other) { return std::abs(std::log(std::max(mp, 1e-6) / std::max(other, 1e-6))); };
  const std::size_t k = std::min<std::size_t>(pool.size(), kRatioNeighbours);
  std::partial_sort(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(k), pool.end(),
                    [&](const auto& x, const auto& y) { return distance(x.first) < distance(y.first); });
  std::vector<double> ratios;
  for (std::size_t j = 0; j < k; ++j) ratios.push_back(pool[j].second);
  return median(std::move(ratios));
}

}  // namespace

std::optional<double> predicted_ratio(const std::optional<FileHeader>& header,
                                      const std::vector<std::pair<std::optional<FileHeader>, double>>& measured) {
  if (measured.empty()) return std::nullopt;
  if (header) {
    std::vector<std::pair<double, double>> same, any;
    for (const auto& [h, ratio] : measured) {
      if (!h) continue;
      any.emplace_back(h->megapixels, ratio);
      if (h->klass == header->klass) same.emplace_back(h->megapixels, ratio);
    }
    if (!same.empty()) return nearest_median(header->megapixels, std::move(same));
    if (!any.empty()) return nearest_median(header->megapixels, std::move(any));
  }
  std::vector<double> ratios;
  for (const auto& m : measured) ratios.push_back(m.second);
  return median(std::move(ratios));
}

std::optional<RatioFixPrice> price_ratio_fix(const std::map<std::size_t, double>& today_visit_ms,
                                             const std::vector<PairedImageCost>& measured, const HeaderLookup& header,
                                             double scale, double loop_cost_factor, const LoaderShape& loader,
                                             const LoopShape& loop) {
  require_arg(std::isfinite(scale) && scale > 0, "scale must be a finite number > 0", scale);
  require_arg(std::isfinite(loop_cost_factor) && loop_cost_factor > 0, "loop_cost_factor must be a finite number > 0",
          loop_cost_factor);
  for (const auto& [index, ms] : today_visit_ms)
    require_arg(std::isfinite(ms) && ms >= 0, "a visit cost must be a finite ms >= 0", ms);
  // Each file's runs summed over the sources that timed it (the round and the probe).
  std::map<std::size_t, std::pair<double, double>> sums;
  for (const PairedImageCost& p : measured) {
    require_arg(std::isfinite(p.a_ms) && p.a_ms >= 0, "a measured a_ms must be a finite ms >= 0", p.a_ms);
    require_arg(std::isfinite(p.b_ms) && p.b_ms >= 0, "a measured b_ms must be a finite ms >= 0", p.b_ms);
    if (!(p.a_ms > 0)) continue;
    sums[p.index].first += p.a_ms;
    sums[p.index].second += p.b_ms;
  }
  if (sums.size() < static_cast<std::size_t>(kMinMatchedImages) || today_visit_ms.empty()) return std::nullopt;
  std::map<std::size_t, double> ratio_of;
  std::vector<std::pair<std::optional<FileHeader>, double>> pool;
  for (const auto& [index, ab] : sums) {
    ratio_of[index] = ab.second / ab.first;
    pool.emplace_back(header ? header(index) : std::nullopt, ratio_of[index]);
  }
  RatioFixPrice out;
  StepModelInput in;
  in.loader = loader;
  in.loop = loop;
  in.sample_ms.reserve(today_visit_ms.size());
  double today_sum = 0, fix_sum = 0, measured_sum = 0;
  for (const auto& [index, ms] : today_visit_ms) {
    double ratio = 0;
    if (const auto it = ratio_of.find(index); it != ratio_of.end()) {
      ratio = it->second;
      ++out.measured;
      measured_sum += ms;
    } else {
      ratio = *predicted_ratio(header ? header(index) : std::nullopt, pool);
    }
    today_sum += ms;
    fix_sum += ms * ratio;
    in.sample_ms.push_back(ms * ratio * scale * loop_cost_factor);
  }
  out.files = static_cast<int>(today_visit_ms.size());
  out.measured_cost_pct = today_sum > 0 ? 100.0 * measured_sum / today_sum : 0;
  out.cost_ratio = today_sum > 0 ? fix_sum / today_sum : 1;
  out.step = predict_step(in);
  return out;
}

}  // namespace pipebench::model
