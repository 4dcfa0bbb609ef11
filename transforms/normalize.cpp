// Normalize (normalize.h). Each channel's 256 possible outputs are computed once per call
// into a lookup table with exactly torchvision's float arithmetic, (v / 255 - mean) / std,
// so the per-pixel work is one table load per value and the results are bit-identical to
// the formula (and identical between the HWC and the NCHW forms).
#include "transforms/normalize.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace pipebench {
namespace {

struct Lut {
  alignas(64) float v[3][256];
};

void make_lut(const std::array<float, 3>& mean, const std::array<float, 3>& std, Lut& lut,
              const char* what) {
  for (int c = 0; c < 3; ++c) {
    if (!(std[c] != 0.0f) || !std::isfinite(std[c]) || !std::isfinite(mean[c])) {
      throw std::invalid_argument(std::string(what) + ": std must be finite and non-zero and "
                                  "mean finite, got mean[" + std::to_string(c) + "] = " +
                                  std::to_string(mean[c]) + ", std[" + std::to_string(c) +
                                  "] = " + std::to_string(std[c]));
    }
    for (int v = 0; v < 256; ++v) {
      lut.v[c][v] = (static_cast<float>(v) / 255.0f - mean[c]) / std[c];
    }
  }
}

}  // namespace

void normalize_to_chw(const Image& src, float* out, const std::array<float, 3>& mean,
                      const std::array<float, 3>& std) {
  if (src.channels != 3 || src.height <= 0 || src.width <= 0 ||
      src.data.size() < src.size_bytes()) {
    throw std::invalid_argument("normalize_to_chw: need a non-empty H x W x 3 image, got " +
                                std::to_string(src.height) + " x " + std::to_string(src.width) +
                                " x " + std::to_string(src.channels));
  }
  if (out == nullptr) throw std::invalid_argument("normalize_to_chw: out is null");
  Lut lut;
  make_lut(mean, std, lut, "normalize_to_chw");
  const size_t n = static_cast<size_t>(src.height) * src.width;
  const uint8_t* __restrict p = src.ptr();
  float* __restrict o0 = out;
  float* __restrict o1 = out + n;
  float* __restrict o2 = out + 2 * n;
  const float* l0 = lut.v[0];
  const float* l1 = lut.v[1];
  const float* l2 = lut.v[2];
  for (size_t i = 0; i < n; ++i, p += 3) {
    o0[i] = l0[p[0]];
    o1[i] = l1[p[1]];
    o2[i] = l2[p[2]];
  }
}

void normalize_batch_nchw(const uint8_t* in, int n, int height, int width, float* out,
                          const std::array<float, 3>& mean, const std::array<float, 3>& std) {
  if (n < 0 || height <= 0 || width <= 0) {
    throw std::invalid_argument("normalize_batch_nchw: need n >= 0 and positive H, W, got n = " +
                                std::to_string(n) + ", " + std::to_string(height) + " x " +
                                std::to_string(width));
  }
  if (n > 0 && (in == nullptr || out == nullptr)) {
    throw std::invalid_argument("normalize_batch_nchw: in and out must not be null");
  }
  Lut lut;
  make_lut(mean, std, lut, "normalize_batch_nchw");
  const size_t plane = static_cast<size_t>(height) * width;
  for (int s = 0; s < n; ++s) {
    for (int c = 0; c < 3; ++c) {
      const size_t off = (static_cast<size_t>(s) * 3 + c) * plane;
      const uint8_t* __restrict p = in + off;
      float* __restrict o = out + off;
      const float* l = lut.v[c];
      for (size_t i = 0; i < plane; ++i) o[i] = l[p[i]];
    }
  }
}

}  // namespace pipebench
