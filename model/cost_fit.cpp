#include "model/cost_fit.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pipebench::model {

double CostLine::predict(double megapixels) const {
  return std::max(floor_ms, intercept_ms + ms_per_megapixel * megapixels);
}

std::optional<CostLine> fit_line(const std::vector<std::pair<double, double>>& points) {
  for (const auto& [mp, ms] : points) {
    if (!std::isfinite(mp) || mp < 0)
      throw std::invalid_argument("a file's megapixels must be finite and >= 0, got " + std::to_string(mp));
    if (!std::isfinite(ms) || ms < 0)
      throw std::invalid_argument("a file's cost must be a finite ms >= 0, got " + std::to_string(ms));
  }
  if (points.size() < 2) return std::nullopt;
  const double n = static_cast<double>(points.size());
  double mx = 0, my = 0;
  for (const auto& [x, y] : points) {
    mx += x;
    my += y;
  }
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0, syy = 0;
  for (const auto& [x, y] : points) {
    sxx += (x - mx) * (x - mx);
    sxy += (x - mx) * (y - my);
    syy += (y - my) * (y - my);
  }
  if (!(sxx > 1e-18 * std::max(1.0, mx * mx))) return std::nullopt;  // one size: no slope
  if (!(sxy > 0)) return std::nullopt;  // a cost that does not grow with the pixels: no line to extrapolate
  CostLine l;
  l.ms_per_megapixel = sxy / sxx;
  l.intercept_ms = my - l.ms_per_megapixel * mx;
  l.floor_ms = std::min_element(points.begin(), points.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; })->second;
  double residual = 0;
  for (const auto& [x, y] : points) {
    const double e = y - (l.intercept_ms + l.ms_per_megapixel * x);
    residual += e * e;
  }
  l.r2 = syy > 0 ? 1.0 - residual / syy : 1.0;
  l.files = static_cast<int>(points.size());
  return l;
}

CostFits fit_costs(const std::vector<std::pair<FileHeader, double>>& timed) {
  CostFits f;
  std::map<std::string, std::vector<std::pair<double, double>>> by_class;
  std::vector<std::pair<double, double>> all;
  for (const auto& [h, ms] : timed) {
    by_class[h.klass].emplace_back(h.megapixels, ms);
    all.emplace_back(h.megapixels, ms);
  }
  f.pooled = fit_line(all);
  for (const auto& [klass, points] : by_class) {
    if (points.size() < static_cast<size_t>(kMinFitFiles)) continue;
    if (auto line = fit_line(points)) f.by_class.emplace(klass, *line);
  }
  return f;
}

std::optional<double> CostFits::predict(const FileHeader& h) const {
  if (const auto it = by_class.find(h.klass); it != by_class.end()) return it->second.predict(h.megapixels);
  if (pooled) return pooled->predict(h.megapixels);
  return std::nullopt;
}

}  // namespace pipebench::model
