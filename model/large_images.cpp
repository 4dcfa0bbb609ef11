#include "model/large_images.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace pipebench::model {
namespace {

// The lower median (an element of the data, so a side stays a whole pixel count).
template <class T>
T lower_median(std::vector<T> v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace

bool is_large(uint64_t pixels, int shorter_side, const LargeImages& plan) {
  return pixels > plan.min_pixels && shorter_side > plan.shorter_side;
}

std::optional<LargeImages> plan_large_images(const std::vector<std::pair<int, int>>& dims,
                                             double threshold_megapixels, int min_shorter_side) {
  if (!std::isfinite(threshold_megapixels) || threshold_megapixels < 0 ||
      (threshold_megapixels > 0 && (threshold_megapixels < kMinThresholdMegapixels ||
                                    threshold_megapixels > kMaxThresholdMegapixels)))
    throw std::invalid_argument("large images: the threshold must be 0 (auto) or within [1e-6, 1e6] "
                                "megapixels, got " + std::to_string(threshold_megapixels));
  if (dims.empty()) return std::nullopt;
  std::vector<uint64_t> pixels;
  std::vector<int> sides;
  pixels.reserve(dims.size());
  sides.reserve(dims.size());
  for (const auto& [w, h] : dims) {
    if (w <= 0 || h <= 0)
      throw std::invalid_argument("large images: an image of " + std::to_string(w) + " x " +
                                  std::to_string(h) + " px");
    pixels.push_back(static_cast<uint64_t>(w) * static_cast<uint64_t>(h));
    sides.push_back(std::min(w, h));
  }
  LargeImages plan;
  plan.images = dims.size();
  plan.min_pixels = threshold_megapixels > 0
                        ? static_cast<uint64_t>(std::llround(threshold_megapixels * 1e6))
                        : static_cast<uint64_t>(std::llround(kLargeImageFactor * static_cast<double>(lower_median(pixels))));
  plan.shorter_side = std::max(lower_median(sides), min_shorter_side);
  double all = 0, large = 0;
  for (std::size_t i = 0; i < pixels.size(); ++i) {
    all += static_cast<double>(pixels[i]);
    if (is_large(pixels[i], sides[i], plan)) {
      large += static_cast<double>(pixels[i]);
      ++plan.large;
    }
  }
  if (plan.large == 0) return std::nullopt;
  plan.pixel_share_pct = 100.0 * large / all;
  if (threshold_megapixels == 0 && plan.pixel_share_pct < kLargeMinPixelSharePct) return std::nullopt;
  return plan;
}

}  // namespace pipebench::model
