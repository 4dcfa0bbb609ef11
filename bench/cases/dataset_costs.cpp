#include "bench/cases/dataset_costs.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <fstream>
#include <random>
#include <string>
#include <utility>

#include "transforms/image_format.h"

namespace pipebench::bench {
namespace {

// "jpeg/baseline/4:2:0", "jpeg/progressive/4:4:4", "png", ...: what sets a decode's cost
// per pixel besides the pixels (model/cost_fit.h).
std::string header_class(const ImageInfo& info) {
  std::string k = format_name(info.format);
  if (info.format == ImageFormat::kJpeg)
    k += std::string(info.jpeg.progressive ? "/progressive/" : "/baseline/") + info.jpeg.subsampling;
  return k;
}

}  // namespace

std::optional<model::FileHeader> read_file_header(const ImageFolder& folder, size_t i) {
  const std::filesystem::path& path = folder.sample(i).path;
  std::vector<uint8_t> head(DatasetCosts::kHeadBytes);
  {
    std::ifstream f(path, std::ios::binary);
    if (!f) return std::nullopt;
    f.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(f.gcount()));
  }
  ImageInfo info;
  try {
    info = read_image_info(head, path.string());
  } catch (const std::exception&) {
    if (head.size() < DatasetCosts::kHeadBytes) return std::nullopt;  // that was the whole file
    try {  // a header past the first kHeadBytes (a large EXIF thumbnail, say)
      std::vector<uint8_t> all;
      folder.read(i, all);
      info = read_image_info(all, path.string());
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  model::FileHeader h;
  h.megapixels = static_cast<double>(info.width) * static_cast<double>(info.height) / 1e6;
  h.klass = header_class(info);
  return h;
}

DatasetCosts dataset_costs(const ImageFolder& folder, const std::map<size_t, double>& file_ms, uint64_t seed) {
  DatasetCosts d;
  const size_t n = folder.size();
  std::vector<std::pair<size_t, double>> timed;
  for (const auto& [index, ms] : file_ms)
    if (index < n) timed.emplace_back(index, ms);
  if (timed.empty()) return d;
  std::mt19937_64 rng(seed);
  std::shuffle(timed.begin(), timed.end(), rng);
  std::vector<std::pair<model::FileHeader, double>> points;
  for (size_t j = 0; j < timed.size() && j < DatasetCosts::kMaxFiles; ++j)
    if (const auto h = read_file_header(folder, timed[j].first)) points.emplace_back(*h, timed[j].second);
  d.fit_files = static_cast<int>(points.size());
  d.fits = model::fit_costs(points);
  const double covered = static_cast<double>(timed.size()) / static_cast<double>(n);
  if (covered >= DatasetCosts::kFullCoverage || !d.fits.pooled) return d;
  // The dataset's costs: each part in its share of the files, at most kMaxFiles in all.
  std::vector<size_t> untimed;
  for (size_t i = 0; i < n; ++i)
    if (file_ms.find(i) == file_ms.end()) untimed.push_back(i);
  std::shuffle(untimed.begin(), untimed.end(), rng);
  const size_t total = std::min(n, DatasetCosts::kMaxFiles);
  const size_t want_timed = std::clamp<size_t>(static_cast<size_t>(std::lround(covered * static_cast<double>(total))),
                                               1, timed.size());
  const size_t want_untimed = total > want_timed ? total - want_timed : 0;
  std::vector<double> costs;
  costs.reserve(total);
  for (size_t j = 0; j < want_timed; ++j) costs.push_back(timed[j].second);
  size_t priced = 0;
  for (size_t j = 0; j < untimed.size() && priced < want_untimed; ++j) {
    const auto h = read_file_header(folder, untimed[j]);
    if (!h) continue;
    if (const auto ms = d.fits.predict(*h)) {
      costs.push_back(*ms);
      ++priced;
    }
  }
  if (priced == 0) return d;
  d.sample_ms = std::move(costs);
  d.fitted_pct = 100.0 * static_cast<double>(untimed.size()) / static_cast<double>(n);
  return d;
}

}  // namespace pipebench::bench
