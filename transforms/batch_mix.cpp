#include "transforms/batch_mix.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace pipebench {
namespace {

void check_lam(float lam, const char* what) {
  if (!(lam >= 0.0f && lam <= 1.0f))
    throw std::invalid_argument(std::string(what) + ": lam must be in [0, 1], got " + std::to_string(lam));
}

void need_soft_labels(const BatchData& b, const char* what) {
  if (b.soft_labels == nullptr || b.num_classes < 1)
    throw std::invalid_argument(std::string(what) + ": the batch has no soft labels");
}

// a, b -> lam a + (1 - lam) b, lam b + (1 - lam) a, over n floats.
void mix_pair(float* a, float* b, size_t n, float lam) {
  const float mu = 1.0f - lam;
  for (size_t k = 0; k < n; ++k) {
    const float x = a[k], y = b[k];
    a[k] = lam * x + mu * y;
    b[k] = lam * y + mu * x;
  }
}

void mix_labels(BatchData& b, float lam) { mix_soft_labels(b.soft_labels, b.size, b.num_classes, lam); }

void check_box(const CropWindow& box, int height, int width, const char* what) {
  if (box.x < 0 || box.y < 0 || box.width < 0 || box.height < 0 || box.x + box.width > width ||
      box.y + box.height > height)
    throw std::invalid_argument(std::string(what) + ": the box lies outside the " + std::to_string(height) +
                                " x " + std::to_string(width) + " image");
}

void check_u8(const uint8_t* data, int n, const char* what) {
  if (n < 0) throw std::invalid_argument(std::string(what) + ": batch size < 0");
  if (data == nullptr && n > 0) throw std::invalid_argument(std::string(what) + ": null batch");
}

}  // namespace

void mix_soft_labels(float* soft_labels, int n, int num_classes, float lam) {
  check_lam(lam, "mixup");
  const auto k = static_cast<size_t>(num_classes);
  for (int i = 0, j = n - 1; i < j; ++i, --j) mix_pair(soft_labels + i * k, soft_labels + j * k, k, lam);
}

float cut_lam(int height, int width, const CropWindow& box) {
  return 1.0f - static_cast<float>(box.width) * box.height / (static_cast<float>(width) * height);
}

void mix_batch_u8(uint8_t* data, int n, size_t sample_bytes, float lam) {
  check_lam(lam, "mixup");
  check_u8(data, n, "mixup");
  const float mu = 1.0f - lam;
  // Each product and the sum rounded on their own (no fused multiply-add: the x86-64
  // baseline has none, and the device kernel uses __fmul_rn / __fadd_rn to match).
  const auto mix = [&](uint8_t x, uint8_t y) {
    const float v = std::nearbyint(lam * static_cast<float>(x) + mu * static_cast<float>(y));
    return static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
  };
  for (int i = 0, j = n - 1; i < j; ++i, --j) {
    uint8_t* a = data + i * sample_bytes;
    uint8_t* b = data + j * sample_bytes;
    for (size_t k = 0; k < sample_bytes; ++k) {
      const uint8_t x = a[k], y = b[k];
      a[k] = mix(x, y);
      b[k] = mix(y, x);
    }
  }
}

void cut_batch_u8_nhwc(uint8_t* data, int n, int height, int width, int channels, const CropWindow& box) {
  check_u8(data, n, "cutmix");
  check_box(box, height, width, "cutmix");
  const size_t row = static_cast<size_t>(width) * channels, sample = row * height;
  for (int i = 0, j = n - 1; i < j; ++i, --j) {
    for (int y = box.y; y < box.y + box.height; ++y) {
      const size_t off = y * row + static_cast<size_t>(box.x) * channels;
      std::swap_ranges(data + i * sample + off, data + i * sample + off + static_cast<size_t>(box.width) * channels,
                       data + j * sample + off);
    }
  }
}

MixDraw draw_mix(const MixParams& p, int height, int width, Rng& rng) {
  MixDraw d;
  if (!rng.bernoulli(p.prob)) return d;
  d.apply = true;
  d.cut = p.cutmix_alpha > 0.0;
  if (p.mixup_alpha > 0.0 && p.cutmix_alpha > 0.0) d.cut = rng.bernoulli(p.switch_prob);
  const double alpha = d.cut ? p.cutmix_alpha : p.mixup_alpha;
  d.lam = rng.beta(alpha, alpha);
  if (d.cut) d.box = cutmix_box(height, width, d.lam, rng);
  return d;
}

void apply_mix(BatchData& b, const MixDraw& d) {
  if (!d.apply) return;
  if (d.cut) {
    cut_batch(b, d.box);
  } else {
    mix_batch(b, static_cast<float>(d.lam));
  }
}

void one_hot_labels(BatchData& b) {
  need_soft_labels(b, "one_hot_labels");
  const auto k = static_cast<size_t>(b.num_classes);
  std::fill(b.soft_labels, b.soft_labels + b.size * k, 0.0f);
  for (int i = 0; i < b.size; ++i) {
    const int32_t y = b.labels[i];
    if (y < 0 || y >= b.num_classes)
      throw std::invalid_argument("one_hot_labels: label " + std::to_string(y) + " of sample " +
                                  std::to_string(i) + " is outside [0, " +
                                  std::to_string(b.num_classes) + ")");
    b.soft_labels[i * k + static_cast<size_t>(y)] = 1.0f;
  }
}

void mix_batch(BatchData& b, float lam) {
  check_lam(lam, "mixup");
  need_soft_labels(b, "mixup");
  const size_t n = b.sample_floats();
  for (int i = 0, j = b.size - 1; i < j; ++i, --j) mix_pair(b.data + i * n, b.data + j * n, n, lam);
  mix_labels(b, lam);
}

CropWindow cutmix_box(int height, int width, double lam, Rng& rng) {
  const double ratio = std::sqrt(1.0 - lam);
  const int cut_h = static_cast<int>(height * ratio), cut_w = static_cast<int>(width * ratio);
  const int cy = static_cast<int>(rng.uniform_int(0, height - 1));
  const int cx = static_cast<int>(rng.uniform_int(0, width - 1));
  const int y0 = std::clamp(cy - cut_h / 2, 0, height), y1 = std::clamp(cy + cut_h / 2, 0, height);
  const int x0 = std::clamp(cx - cut_w / 2, 0, width), x1 = std::clamp(cx + cut_w / 2, 0, width);
  return CropWindow{x0, y0, x1 - x0, y1 - y0};
}

float cut_batch(BatchData& b, const CropWindow& box) {
  need_soft_labels(b, "cutmix");
  check_box(box, b.height, b.width, "cutmix");
  const size_t n = b.sample_floats(), plane = static_cast<size_t>(b.height) * b.width;
  for (int i = 0, j = b.size - 1; i < j; ++i, --j) {
    for (int c = 0; c < b.channels; ++c) {
      float* pa = b.data + i * n + c * plane;
      float* pb = b.data + j * n + c * plane;
      for (int y = box.y; y < box.y + box.height; ++y) {
        const size_t off = static_cast<size_t>(y) * b.width + box.x;
        std::swap_ranges(pa + off, pa + off + box.width, pb + off);
      }
    }
  }
  const float lam = cut_lam(b.height, b.width, box);
  mix_labels(b, lam);
  return lam;
}

void smooth_labels(BatchData& b, float smoothing) {
  if (!(smoothing >= 0.0f && smoothing <= 1.0f))
    throw std::invalid_argument("label_smoothing: smoothing must be in [0, 1], got " + std::to_string(smoothing));
  need_soft_labels(b, "label_smoothing");
  const float keep = 1.0f - smoothing, add = smoothing / static_cast<float>(b.num_classes);
  const size_t n = static_cast<size_t>(b.size) * b.num_classes;
  for (size_t k = 0; k < n; ++k) b.soft_labels[k] = b.soft_labels[k] * keep + add;
}

}  // namespace pipebench
