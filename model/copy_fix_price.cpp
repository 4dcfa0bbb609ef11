#include "model/copy_fix_price.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace pipebench::model {

double median(std::vector<double> v) {
  if (v.empty()) throw std::invalid_argument("the median of no values");
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  return (upper + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid))) / 2;
}

void require_arg(bool ok, const std::string& what, double v) {
  if (!ok) throw std::invalid_argument(what + ", got " + std::to_string(v));
}

std::optional<CopyFixPrice> price_copy_fix(const std::map<std::size_t, double>& today_visit_ms,
                                           const std::vector<PairedImageCost>& paired, double scale,
                                           double loop_cost_factor, const LoaderShape& loader,
                                           const LoopShape& loop) {
  require_arg(std::isfinite(scale) && scale > 0, "scale must be a finite number > 0", scale);
  require_arg(std::isfinite(loop_cost_factor) && loop_cost_factor > 0, "loop_cost_factor must be a finite number > 0",
          loop_cost_factor);
  std::vector<double> ratios;
  for (const auto& [index, ms] : today_visit_ms)
    require_arg(std::isfinite(ms) && ms >= 0, "a visit cost must be a finite ms >= 0", ms);
  for (const PairedImageCost& p : paired) {
    require_arg(std::isfinite(p.a_ms) && p.a_ms >= 0, "a paired a_ms must be a finite ms >= 0", p.a_ms);
    require_arg(std::isfinite(p.b_ms) && p.b_ms >= 0, "a paired b_ms must be a finite ms >= 0", p.b_ms);
    const auto it = today_visit_ms.find(p.index);
    if (it == today_visit_ms.end() || !(p.a_ms > 0)) continue;
    ratios.push_back(it->second / p.a_ms);
  }
  if (ratios.size() < static_cast<std::size_t>(kMinMatchedImages)) return std::nullopt;
  CopyFixPrice out;
  out.matched = static_cast<int>(ratios.size());
  out.cost_ratio = median(std::move(ratios));
  out.images = static_cast<int>(paired.size());
  StepModelInput in;
  in.loader = loader;
  in.loop = loop;
  in.sample_ms.reserve(paired.size());
  const double k = out.cost_ratio * scale * loop_cost_factor;
  for (const PairedImageCost& p : paired) in.sample_ms.push_back(p.b_ms * k);
  out.step = predict_step(in);
  return out;
}

}  // namespace pipebench::model
