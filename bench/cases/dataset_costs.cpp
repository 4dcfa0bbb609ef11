#include "bench/cases/dataset_costs.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>

namespace pipebench::bench {

DatasetCosts dataset_costs(size_t files, size_t share_files, const std::map<size_t, double>& file_ms,
                           const HeaderOf& header, uint64_t seed) {
  DatasetCosts d;
  std::vector<std::pair<size_t, double>> timed;
  for (const auto& [index, ms] : file_ms)
    if (index < files) timed.emplace_back(index, ms);
  if (timed.empty() || share_files == 0) return d;
  std::mt19937_64 rng(seed);
  std::shuffle(timed.begin(), timed.end(), rng);
  std::vector<std::pair<model::FileHeader, double>> points;
  for (size_t j = 0; j < timed.size() && j < DatasetCosts::kMaxFiles; ++j)
    if (const auto h = header(timed[j].first)) points.emplace_back(*h, timed[j].second);
  d.fit_files = static_cast<int>(points.size());
  d.fits = model::fit_costs(points);
  // Of the files this rank loads (its share under mpirun), the share its windows timed.
  const double covered = std::min(1.0, static_cast<double>(timed.size()) / static_cast<double>(share_files));
  if (covered >= DatasetCosts::kFullCoverage || !d.fits.pooled) return d;
  // Each timed file's cost over its fit's prediction: the spread a prediction alone lacks,
  // drawn back onto the untimed files' predictions (a smearing estimate: the residuals'
  // distribution, not a normal one; Duan 1983).
  std::vector<double> residual;
  for (const auto& [h, ms] : points)
    if (const auto fit = d.fits.predict(h); fit && *fit > 0) residual.push_back(ms / *fit);
  if (residual.empty()) return d;
  std::uniform_int_distribution<size_t> draw(0, residual.size() - 1);
  // The dataset's costs: each part in its share of the files, at most kMaxFiles in all.
  std::vector<size_t> untimed;
  for (size_t i = 0; i < files; ++i)
    if (file_ms.find(i) == file_ms.end()) untimed.push_back(i);
  std::shuffle(untimed.begin(), untimed.end(), rng);
  const size_t total = std::min(share_files, DatasetCosts::kMaxFiles);
  const size_t want_timed = std::clamp<size_t>(static_cast<size_t>(std::lround(covered * static_cast<double>(total))),
                                               1, timed.size());
  const size_t want_untimed = total > want_timed ? total - want_timed : 0;
  std::vector<double> costs;
  costs.reserve(total);
  for (size_t j = 0; j < want_timed; ++j) costs.push_back(timed[j].second);
  size_t priced = 0;
  // At most twice the headers wanted: a folder of unreadable files is not read whole.
  for (size_t j = 0; j < untimed.size() && j < 2 * want_untimed && priced < want_untimed; ++j) {
    const auto h = header(untimed[j]);
    if (!h) continue;
    if (const auto ms = d.fits.predict(*h)) {
      costs.push_back(*ms * residual[draw(rng)]);
      ++priced;
    }
  }
  if (priced == 0) return d;
  d.sample_ms = std::move(costs);
  d.fitted_pct = 100.0 * static_cast<double>(priced) / static_cast<double>(d.sample_ms.size());
  return d;
}

}  // namespace pipebench::bench
