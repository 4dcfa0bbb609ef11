// The case study's transforms (casestudy.h): RandomMask with three dilations,
// ConvertColor (RGB -> YUV) and Scale.
#include "transforms/casestudy.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "transforms/opencv_serial.h"

// The convolution must stay a general 2-D convolution: keep the compiler from inlining or
// cloning it for the constant cross kernel (which would drop the multiplications by zero
// and turn it into the shift method the study compares it with).
#if defined(__GNUC__) && !defined(__clang__)
#define PIPEBENCH_NO_SPECIALIZE __attribute__((noinline, noclone))
#elif defined(__GNUC__)
#define PIPEBENCH_NO_SPECIALIZE __attribute__((noinline))
#else
#define PIPEBENCH_NO_SPECIALIZE
#endif

namespace pipebench {
namespace {

// The 4-neighbour cross, as the study passes it to scipy.signal.convolve2d.
constexpr int kCrossSize = 3;
const int32_t kCrossKernel[kCrossSize * kCrossSize] = {0, 1, 0, 1, 1, 1, 0, 1, 0};

// scipy.signal.convolve2d(in, kernel, mode='same', boundary='fill', fillvalue=0) for an odd
// kh x kw kernel: out[y][x] = sum_{a,b} k[a][b] * in[y + kh/2 - a][x + kw/2 - b], every tap
// multiplied and accumulated in int32 (zeros included), out-of-image taps reading 0.
PIPEBENCH_NO_SPECIALIZE void convolve2d_same(const uint8_t* in, int height, int width,
                                             const int32_t* kernel, int kh, int kw,
                                             int32_t* out) {
  const int cy = kh / 2;
  const int cx = kw / 2;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      int32_t acc = 0;
      for (int a = 0; a < kh; ++a) {
        const int sy = y + cy - a;
        if (sy < 0 || sy >= height) continue;
        const uint8_t* row = in + static_cast<size_t>(sy) * width;
        for (int b = 0; b < kw; ++b) {
          const int sx = x + cx - b;
          if (sx < 0 || sx >= width) continue;
          acc += kernel[a * kw + b] * static_cast<int32_t>(row[sx]);
        }
      }
      out[static_cast<size_t>(y) * width + x] = acc;
    }
  }
}

void dilate_shifts(const uint8_t* __restrict in, int height, int width,
                   uint8_t* __restrict out) {
  const size_t w = static_cast<size_t>(width);
  for (int y = 0; y < height; ++y) {
    const uint8_t* __restrict c = in + y * w;
    uint8_t* __restrict o = out + y * w;
    std::memcpy(o, c, w);
    if (y > 0) {
      const uint8_t* __restrict up = c - w;
      for (size_t x = 0; x < w; ++x) o[x] |= up[x];
    }
    if (y + 1 < height) {
      const uint8_t* __restrict dn = c + w;
      for (size_t x = 0; x < w; ++x) o[x] |= dn[x];
    }
    for (size_t x = 1; x < w; ++x) o[x] |= c[x - 1];
    for (size_t x = 0; x + 1 < w; ++x) o[x] |= c[x + 1];
  }
}

void dilate_opencv(const uint8_t* in, int height, int width, uint8_t* out) {
  detail::opencv_serial();
  static const cv::Mat cross =
      cv::getStructuringElement(cv::MORPH_CROSS, cv::Size(kCrossSize, kCrossSize));
  const cv::Mat src(height, width, CV_8UC1, const_cast<uint8_t*>(in));
  cv::Mat dst(height, width, CV_8UC1, out);
  cv::dilate(src, dst, cross, cv::Point(-1, -1), 1, cv::BORDER_CONSTANT, cv::Scalar::all(0));
}

void dilate4_impl(const uint8_t* in, int height, int width, DilationMethod method,
                  uint8_t* out, std::vector<int32_t>& conv) {
  if (height <= 0 || width <= 0) {
    throw std::invalid_argument("dilate4: mask size must be positive, got " +
                                std::to_string(height) + " x " + std::to_string(width));
  }
  if (in == nullptr || out == nullptr || in == out) {
    throw std::invalid_argument("dilate4: in and out must be non-null and distinct");
  }
  switch (method) {
    case DilationMethod::kConvolution: {
      const size_t n = static_cast<size_t>(height) * width;
      if (conv.size() < n) conv.resize(n);
      convolve2d_same(in, height, width, kCrossKernel, kCrossSize, kCrossSize, conv.data());
      for (size_t i = 0; i < n; ++i) out[i] = conv[i] != 0;
      return;
    }
    case DilationMethod::kBooleanShifts:
      dilate_shifts(in, height, width, out);
      return;
    case DilationMethod::kOpenCV:
      dilate_opencv(in, height, width, out);
      return;
  }
  throw std::invalid_argument("dilate4: unknown dilation method " +
                              std::to_string(static_cast<int>(method)));
}

}  // namespace

const char* dilation_method_name(DilationMethod m) {
  switch (m) {
    case DilationMethod::kConvolution: return "conv";
    case DilationMethod::kBooleanShifts: return "shifts";
    case DilationMethod::kOpenCV: return "opencv";
  }
  return "unknown";
}

void dilate4(const uint8_t* in, int height, int width, DilationMethod method, uint8_t* out) {
  // The convolution's accumulator, kept per thread so repeated calls do not allocate.
  thread_local std::vector<int32_t> conv;
  dilate4_impl(in, height, width, method, out, conv);
}

void random_mask(Image& img, double ratio, DilationMethod method, Rng& rng,
                 MaskScratch& scratch) {
  if (!(ratio >= 0.0 && ratio <= 1.0)) {
    throw std::invalid_argument("random_mask: ratio must be in [0, 1], got " +
                                std::to_string(ratio));
  }
  if (img.height <= 0 || img.width <= 0 || img.channels <= 0 ||
      img.data.size() < img.size_bytes()) {
    throw std::invalid_argument("random_mask: need a non-empty image, got " +
                                std::to_string(img.height) + " x " + std::to_string(img.width) +
                                " x " + std::to_string(img.channels));
  }
  const size_t n = static_cast<size_t>(img.height) * img.width;
  if (scratch.mask.size() < n) scratch.mask.resize(n);
  if (scratch.dilated.size() < n) scratch.dilated.resize(n);

  // Bernoulli(ratio) per pixel: each 64-bit draw gives four 16-bit uniforms u, and a pixel
  // is set when u < round(ratio * 65536), so the probability is ratio rounded to a multiple
  // of 1/65536 (exact for the study's 0.25).
  const uint32_t threshold = static_cast<uint32_t>(std::lround(ratio * 65536.0));
  uint8_t* mask = scratch.mask.data();
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint64_t u = rng.next_u64();
    mask[i + 0] = (u & 0xFFFF) < threshold;
    mask[i + 1] = ((u >> 16) & 0xFFFF) < threshold;
    mask[i + 2] = ((u >> 32) & 0xFFFF) < threshold;
    mask[i + 3] = (u >> 48) < threshold;
  }
  if (i < n) {
    uint64_t u = rng.next_u64();
    for (; i < n; ++i, u >>= 16) mask[i] = (u & 0xFFFF) < threshold;
  }

  dilate4_impl(mask, img.height, img.width, method, scratch.dilated.data(), scratch.conv);

  // img[dilated] = 0 in every channel, branch-free: keep = 0xFF where the mask is 0.
  const uint8_t* d = scratch.dilated.data();
  uint8_t* p = img.ptr();
  const int c = img.channels;
  if (c == 3) {
    for (size_t k = 0; k < n; ++k, p += 3) {
      const uint8_t keep = static_cast<uint8_t>(d[k] - 1);  // 1 -> 0x00, 0 -> 0xFF
      p[0] &= keep;
      p[1] &= keep;
      p[2] &= keep;
    }
  } else {
    for (size_t k = 0; k < n; ++k, p += c) {
      const uint8_t keep = static_cast<uint8_t>(d[k] - 1);
      for (int ch = 0; ch < c; ++ch) p[ch] &= keep;
    }
  }
}

void rgb_to_yuv_chw(const Image& src, float* out) {
  if (src.channels != 3 || src.height <= 0 || src.width <= 0 ||
      src.data.size() < src.size_bytes()) {
    throw std::invalid_argument("rgb_to_yuv_chw: need a non-empty H x W x 3 image, got " +
                                std::to_string(src.height) + " x " + std::to_string(src.width) +
                                " x " + std::to_string(src.channels));
  }
  if (out == nullptr) throw std::invalid_argument("rgb_to_yuv_chw: out is null");
  const size_t n = static_cast<size_t>(src.height) * src.width;
  float* __restrict y = out;
  float* __restrict u = out + n;
  float* __restrict v = out + 2 * n;
  // Blocks of pixels are first split into float R, G, B planes on the stack, so that the
  // matrix product runs on contiguous vectors (1.45x faster than one strided loop, same bits).
  constexpr size_t kBlock = 256;
  alignas(16) float rs[kBlock], gs[kBlock], bs[kBlock];
  for (size_t s = 0; s < n; s += kBlock) {
    const size_t m = std::min(kBlock, n - s);
    const uint8_t* __restrict p = src.ptr() + 3 * s;
    for (size_t i = 0; i < m; ++i) {
      rs[i] = p[3 * i];
      gs[i] = p[3 * i + 1];
      bs[i] = p[3 * i + 2];
    }
    for (size_t i = 0; i < m; ++i) {
      const float r = rs[i], g = gs[i], b = bs[i];
      y[s + i] = 0.299f * r + 0.587f * g + 0.114f * b;
      u[s + i] = -0.16874f * r - 0.33126f * g + 0.5f * b + 128.0f;
      v[s + i] = 0.5f * r - 0.41869f * g - 0.08131f * b + 128.0f;
    }
  }
}

void scale_unit(float* data, size_t n) {
  if (n > 0 && data == nullptr) throw std::invalid_argument("scale_unit: data is null");
  float* __restrict d = data;
  for (size_t i = 0; i < n; ++i) d[i] = d[i] / 255.0f;
}

}  // namespace pipebench
