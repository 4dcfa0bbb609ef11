#include "transforms/erasing.h"

#include "transforms/normal.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace pipebench {
namespace {

void check_box(int height, int width, const CropWindow& b) {
  if (b.x < 0 || b.y < 0 || b.width < 0 || b.height < 0 || b.x + b.width > width ||
      b.y + b.height > height)
    throw std::invalid_argument("erase: the box (x " + std::to_string(b.x) + ", y " + std::to_string(b.y) +
                                ", " + std::to_string(b.width) + " x " + std::to_string(b.height) +
                                ") lies outside the " + std::to_string(height) + " x " +
                                std::to_string(width) + " tensor");
}

}  // namespace

void erase(float* chw, int channels, int height, int width, const CropWindow& box,
           std::span<const float> value) {
  check_box(height, width, box);
  if (value.size() != 1 && value.size() != static_cast<size_t>(channels))
    throw std::invalid_argument("erase: value must have 1 or " + std::to_string(channels) +
                                " entries, got " + std::to_string(value.size()));
  for (int c = 0; c < channels; ++c) {
    const float v = value[value.size() == 1 ? 0 : static_cast<size_t>(c)];
    float* plane = chw + static_cast<size_t>(c) * height * width;
    for (int y = box.y; y < box.y + box.height; ++y) {
      float* row = plane + static_cast<size_t>(y) * width + box.x;
      std::fill(row, row + box.width, v);
    }
  }
}

void erase_random(float* chw, int channels, int height, int width, const CropWindow& box, Rng& rng) {
  check_box(height, width, box);
  for (int c = 0; c < channels; ++c) {
    float* plane = chw + static_cast<size_t>(c) * height * width;
    for (int y = box.y; y < box.y + box.height; ++y) {
      float* row = plane + static_cast<size_t>(y) * width + box.x;
      for (int x = 0; x < box.width; ++x) row[x] = ziggurat_normal(rng);
    }
  }
}

CropWindow erasing_box(int height, int width, double scale_lo, double scale_hi, double ratio_lo,
                       double ratio_hi, Rng& rng) {
  const double area = static_cast<double>(height) * width;
  const double log_lo = std::log(ratio_lo), log_hi = std::log(ratio_hi);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double erase_area = area * rng.uniform(scale_lo, scale_hi);
    const double aspect = std::exp(rng.uniform(log_lo, log_hi));
    const int h = static_cast<int>(std::lround(std::sqrt(erase_area * aspect)));
    const int w = static_cast<int>(std::lround(std::sqrt(erase_area / aspect)));
    if (!(h < height && w < width)) continue;
    const int y = static_cast<int>(rng.uniform_int(0, height - h));
    const int x = static_cast<int>(rng.uniform_int(0, width - w));
    return CropWindow{x, y, w, h};
  }
  return CropWindow{0, 0, 0, 0};
}

}  // namespace pipebench
