// Geometric transforms (crop.h). Pixels are handed to OpenCV through cv::Mat headers over
// the Images' own storage, so nothing is copied or allocated once an output Image has the
// capacity for its shape.
#include "transforms/crop.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "transforms/opencv_serial.h"

namespace pipebench {
namespace {

std::string shape_str(int h, int w) { return std::to_string(h) + " x " + std::to_string(w); }

void check_image(const Image& img, const char* what) {
  if (img.height <= 0 || img.width <= 0 || (img.channels != 1 && img.channels != 3) ||
      img.data.size() < img.size_bytes()) {
    throw std::invalid_argument(std::string(what) +
                                ": source image must be non-empty with 1 or 3 channels, got " +
                                shape_str(img.height, img.width) + " x " +
                                std::to_string(img.channels));
  }
}

void check_window(const Image& src, const CropWindow& w, const char* what) {
  if (w.width <= 0 || w.height <= 0 || w.x < 0 || w.y < 0 || w.x > src.width - w.width ||
      w.y > src.height - w.height) {
    throw std::invalid_argument(
        std::string(what) + ": window (x " + std::to_string(w.x) + ", y " + std::to_string(w.y) +
        ", " + std::to_string(w.width) + " wide, " + std::to_string(w.height) +
        " high) must be non-empty and inside the " + shape_str(src.height, src.width) +
        " (H x W) image");
  }
}

cv::Mat mat_of(const Image& img) {
  // cv::Mat never writes through a header made from const data here; the const_cast is
  // only the price of OpenCV's non-const constructor.
  return cv::Mat(img.height, img.width, CV_8UC(img.channels),
                 const_cast<uint8_t*>(img.ptr()), img.row_bytes());
}

// Copies `window` of src into out (no resampling).
void copy_window(const Image& src, const CropWindow& w, Image& out) {
  out.resize(w.height, w.width, src.channels);
  const size_t n = out.row_bytes();
  for (int y = 0; y < w.height; ++y) {
    std::memcpy(out.row(y), src.row(w.y + y) + static_cast<size_t>(w.x) * src.channels, n);
  }
}

// ---- Area resampling ----------------------------------------------------------------
// OpenCV's INTER_AREA for non-integer factors (resizeArea_) is correct but slow (~0.7 ms
// for any 224 x 224 output here, 6x its INTER_LINEAR), so shrinking uses this separable
// version of the same box filter: the per-axis weights are OpenCV's computeResizeAreaTab
// (each output pixel averages the source over its footprint, partial pixels weighted by
// coverage), padded to K taps per output; a vertical pass blends K source rows into a
// float row (contiguous, vectorised), a horizontal pass blends K pixels of that row.
// Results match cv::resize(INTER_AREA) to +-1 (float summation order).
struct AxisTaps {
  int taps = 0;               // K, the same for every output
  std::vector<int> start;     // first source index of output i
  std::vector<float> weight;  // [i * K + k], zero-padded
};

void area_taps(int src, int dst, AxisTaps& t) {
  const double scale = static_cast<double>(src) / dst;
  // Pass 1: OpenCV's table as (start, count) per output, weights into a flat list.
  thread_local std::vector<float> w;
  thread_local std::vector<int> first, count;
  w.clear();
  first.resize(dst);
  count.resize(dst);
  int k_max = 1;
  for (int d = 0; d < dst; ++d) {
    const double f1 = d * scale;
    const double f2 = f1 + scale;
    const double cell = std::min(scale, src - f1);
    int s2 = static_cast<int>(std::floor(f2));
    int s1 = static_cast<int>(std::ceil(f1));
    s2 = std::min(s2, src - 1);
    s1 = std::min(s1, s2);
    int n = 0;
    int s0 = s1;
    if (s1 - f1 > 1e-3) {
      s0 = s1 - 1;
      w.push_back(static_cast<float>((s1 - f1) / cell));
      ++n;
    }
    for (int sx = s1; sx < s2; ++sx, ++n) w.push_back(static_cast<float>(1.0 / cell));
    if (f2 - s2 > 1e-3) {
      w.push_back(static_cast<float>(std::min(std::min(f2 - s2, 1.0), cell) / cell));
      ++n;
    }
    first[d] = s0;
    count[d] = n;
    k_max = std::max(k_max, n);
  }
  // Pass 2: K taps per output; near the end the window slides left so it stays inside.
  t.taps = std::min(k_max, src);
  t.start.resize(dst);
  t.weight.assign(static_cast<size_t>(dst) * t.taps, 0.0f);
  size_t wi = 0;
  for (int d = 0; d < dst; ++d) {
    const int st = std::min(first[d], src - t.taps);
    t.start[d] = st;
    float* dw = t.weight.data() + static_cast<size_t>(d) * t.taps + (first[d] - st);
    for (int k = 0; k < count[d]; ++k) dw[k] = w[wi++];
  }
}

// Weights are non-negative and sum to 1, so only the top can overflow (by rounding).
inline uint8_t to_u8(float v) {
  const int i = static_cast<int>(v + 0.5f);
  return static_cast<uint8_t>(i > 255 ? 255 : i);
}

// Horizontal pass for 3 channels with a compile-time tap count. With SSE2 one 4-float
// vector carries R, G, B (and a 4th lane that is ignored) of a source pixel, so each tap is
// one multiply-add; `t` must have one readable float past the row's end.
template <int K>
void area_row3(const float* __restrict t, int c0, const AxisTaps& tx, int x0, int ow,
               bool mirror, uint8_t* __restrict out) {
  const int* st = tx.start.data();
  const float* wt = tx.weight.data();
#if defined(__SSE2__)
  for (int o = 0; o < ow; ++o) {
    const int d = x0 + (mirror ? ow - 1 - o : o);
    const float* p = t + (st[d] - c0) * 3;
    const float* w = wt + static_cast<size_t>(d) * K;
    __m128 acc = _mm_mul_ps(_mm_set1_ps(w[0]), _mm_loadu_ps(p));
    for (int k = 1; k < K; ++k) {
      acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(w[k]), _mm_loadu_ps(p + 3 * k)));
    }
    // Round to nearest (as cvRound), saturate to 0..255.
    const __m128i i32 = _mm_cvtps_epi32(acc);
    const __m128i u8 = _mm_packus_epi16(_mm_packs_epi32(i32, i32), _mm_setzero_si128());
    const uint32_t rgbx = static_cast<uint32_t>(_mm_cvtsi128_si32(u8));
    out[3 * o] = static_cast<uint8_t>(rgbx);
    out[3 * o + 1] = static_cast<uint8_t>(rgbx >> 8);
    out[3 * o + 2] = static_cast<uint8_t>(rgbx >> 16);
  }
#else
  for (int o = 0; o < ow; ++o) {
    const int d = x0 + (mirror ? ow - 1 - o : o);
    const float* p = t + (st[d] - c0) * 3;
    const float* w = wt + static_cast<size_t>(d) * K;
    float a0 = 0, a1 = 0, a2 = 0;
    for (int k = 0; k < K; ++k) {
      a0 += w[k] * p[3 * k];
      a1 += w[k] * p[3 * k + 1];
      a2 += w[k] * p[3 * k + 2];
    }
    out[3 * o] = to_u8(a0);
    out[3 * o + 1] = to_u8(a1);
    out[3 * o + 2] = to_u8(a2);
  }
#endif
}

void area_row_generic(const float* __restrict t, int c0, const AxisTaps& tx, int x0, int ow,
                      int ch, bool mirror, uint8_t* __restrict out) {
  const int K = tx.taps;
  for (int o = 0; o < ow; ++o) {
    const int d = x0 + (mirror ? ow - 1 - o : o);
    const float* p = t + static_cast<size_t>(tx.start[d] - c0) * ch;
    const float* w = tx.weight.data() + static_cast<size_t>(d) * K;
    for (int c = 0; c < ch; ++c) {
      float a = 0;
      for (int k = 0; k < K; ++k) a += w[k] * p[k * ch + c];
      out[o * ch + c] = to_u8(a);
    }
  }
}

// Area-resizes `win` of src to oh x ow, of which only the rectangle `keep` (in output
// coordinates) is computed, into out (keep.height x keep.width; mirrored left-right when
// asked). Every output pixel depends only on its own taps, so computing part of the output
// gives the same bits as computing all of it and cropping.
void area_resize(const Image& src, const CropWindow& win, int oh, int ow, const CropWindow& keep,
                 bool mirror, Image& out) {
  thread_local AxisTaps tx, ty;
  thread_local std::vector<float> row;
  area_taps(win.width, ow, tx);
  area_taps(win.height, oh, ty);
  out.resize(keep.height, keep.width, src.channels);
  const int ch = src.channels;
  // Source columns (relative to the window) that the kept outputs read: [c0, c1).
  const int c0 = tx.start[keep.x];
  const int c1 = tx.start[keep.x + keep.width - 1] + tx.taps;
  const size_t n = static_cast<size_t>(c1 - c0) * ch;
  if (row.size() < n + 1) row.resize(n + 1, 0.0f);  // +1: area_row3's 4th lane
  float* __restrict t = row.data();
  const size_t x_src = static_cast<size_t>(win.x + c0) * ch;
  for (int r = 0; r < keep.height; ++r) {
    const int oy = keep.y + r;
    const int sy = win.y + ty.start[oy];
    const float* wy = ty.weight.data() + static_cast<size_t>(oy) * ty.taps;
    {
      const uint8_t* __restrict in = src.row(sy) + x_src;
      const float w0 = wy[0];
      for (size_t i = 0; i < n; ++i) t[i] = w0 * in[i];
    }
    for (int k = 1; k < ty.taps; ++k) {
      const float wk = wy[k];
      if (wk == 0.0f) continue;
      const uint8_t* __restrict in = src.row(sy + k) + x_src;
      for (size_t i = 0; i < n; ++i) t[i] += wk * in[i];
    }
    uint8_t* o = out.row(r);
    const int x0 = keep.x;
    const int w = keep.width;
    if (ch == 3) {
      switch (tx.taps) {
        case 1: area_row3<1>(t, c0, tx, x0, w, mirror, o); continue;
        case 2: area_row3<2>(t, c0, tx, x0, w, mirror, o); continue;
        case 3: area_row3<3>(t, c0, tx, x0, w, mirror, o); continue;
        case 4: area_row3<4>(t, c0, tx, x0, w, mirror, o); continue;
        case 5: area_row3<5>(t, c0, tx, x0, w, mirror, o); continue;
        default: break;
      }
    }
    area_row_generic(t, c0, tx, x0, w, ch, mirror, o);
  }
}

// torchvision _compute_resized_output_size for Resize(int): new_long = int(size * long /
// short); the integer quotient equals the float one truncated for any realistic size.
void shorter_side_size(const Image& src, int size, int& out_h, int& out_w) {
  if (src.width <= src.height) {
    out_w = size;
    out_h = static_cast<int>(static_cast<int64_t>(size) * src.height / src.width);
  } else {
    out_h = size;
    out_w = static_cast<int>(static_cast<int64_t>(size) * src.width / src.height);
  }
}

// Python's round() (half to even), as torchvision uses: nearbyint under the default
// rounding mode FE_TONEAREST.
int py_round(double v) { return static_cast<int>(std::nearbyint(v)); }

}  // namespace

CropWindow random_resized_crop_window(int height, int width, Rng& rng,
                                      const RandomResizedCropParams& p) {
  if (height <= 0 || width <= 0) {
    throw std::invalid_argument("random_resized_crop_window: image size must be positive, got " +
                                shape_str(height, width) + " (H x W)");
  }
  if (!(p.scale_min > 0 && p.scale_min <= p.scale_max) ||
      !(p.ratio_min > 0 && p.ratio_min <= p.ratio_max)) {
    throw std::invalid_argument(
        "random_resized_crop_window: need 0 < scale_min <= scale_max and 0 < ratio_min <= "
        "ratio_max, got scale [" + std::to_string(p.scale_min) + ", " +
        std::to_string(p.scale_max) + "], ratio [" + std::to_string(p.ratio_min) + ", " +
        std::to_string(p.ratio_max) + "]");
  }
  const double area = static_cast<double>(height) * width;
  const double log_r0 = std::log(p.ratio_min);
  const double log_r1 = std::log(p.ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * rng.uniform(p.scale_min, p.scale_max);
    const double aspect = std::exp(rng.uniform(log_r0, log_r1));
    const int w = py_round(std::sqrt(target_area * aspect));
    const int h = py_round(std::sqrt(target_area / aspect));
    if (0 < w && w <= width && 0 < h && h <= height) {
      const int i = static_cast<int>(rng.uniform_int(0, height - h));
      const int j = static_cast<int>(rng.uniform_int(0, width - w));
      return CropWindow{j, i, w, h};
    }
  }
  // Fallback: central crop, ratio clamped to [ratio_min, ratio_max].
  const double in_ratio = static_cast<double>(width) / height;
  int w = width;
  int h = height;
  if (in_ratio < p.ratio_min) {
    h = py_round(w / p.ratio_min);
  } else if (in_ratio > p.ratio_max) {
    w = py_round(h * p.ratio_max);
  }
  // torchvision would return an empty window for a 1-pixel side and an extreme ratio
  // range; keep it at least one pixel.
  h = std::max(1, std::min(h, height));
  w = std::max(1, std::min(w, width));
  return CropWindow{(width - w) / 2, (height - h) / 2, w, h};
}

namespace {

void check_resized_crop(const Image& src, const CropWindow& window, int out_height,
                        int out_width, const Image& out) {
  check_image(src, "resized_crop");
  check_window(src, window, "resized_crop");
  if (out_height <= 0 || out_width <= 0) {
    throw std::invalid_argument("resized_crop: output size must be positive, got " +
                                shape_str(out_height, out_width) + " (H x W)");
  }
  if (&src == &out) throw std::invalid_argument("resized_crop: src and out must differ");
}

// cv::resize of the window into out with OpenCV's `flag`, then the optional mirror.
void cv_resized_crop(const Image& src, const CropWindow& window, int out_height, int out_width,
                     Image& out, bool mirror, int flag) {
  detail::opencv_serial();
  out.resize(out_height, out_width, src.channels);
  const cv::Mat roi = mat_of(src)(cv::Rect(window.x, window.y, window.width, window.height));
  cv::Mat dst(out_height, out_width, CV_8UC(src.channels), out.ptr(), out.row_bytes());
  cv::resize(roi, dst, dst.size(), 0, 0, flag);
  if (mirror) horizontal_flip(out);
}

}  // namespace

void resized_crop(const Image& src, const CropWindow& window, int out_height, int out_width,
                  Image& out, bool mirror) {
  check_resized_crop(src, window, out_height, out_width, out);
  if (out_height <= window.height && out_width <= window.width) {
    out.resize(out_height, out_width, src.channels);
    if (out_height == window.height && out_width == window.width) {
      copy_window(src, window, out);
      if (mirror) horizontal_flip(out);
    } else {
      area_resize(src, window, out_height, out_width, CropWindow{0, 0, out_width, out_height},
                  mirror, out);
    }
    return;
  }
  cv_resized_crop(src, window, out_height, out_width, out, mirror, cv::INTER_LINEAR);
}

void resized_crop(const Image& src, const CropWindow& window, int out_height, int out_width,
                  Image& out, bool mirror, Interpolation interpolation) {
  if (interpolation == Interpolation::kBilinear) {
    resized_crop(src, window, out_height, out_width, out, mirror);
    return;
  }
  check_resized_crop(src, window, out_height, out_width, out);
  const int flag = interpolation == Interpolation::kNearest ? cv::INTER_NEAREST
                   : interpolation == Interpolation::kBicubic ? cv::INTER_CUBIC
                                                              : cv::INTER_AREA;
  cv_resized_crop(src, window, out_height, out_width, out, mirror, flag);
}

void resize_shorter(const Image& src, int size, Image& out) {
  resize_shorter(src, size, out, Interpolation::kBilinear);
}

void resize_shorter(const Image& src, int size, Image& out, Interpolation interpolation) {
  check_image(src, "resize_shorter");
  if (size <= 0) {
    throw std::invalid_argument("resize_shorter: size must be positive, got " +
                                std::to_string(size));
  }
  int out_h, out_w;
  shorter_side_size(src, size, out_h, out_w);
  resized_crop(src, CropWindow{0, 0, src.width, src.height}, out_h, out_w, out, false,
               interpolation);
}

CropWindow center_crop_window(int height, int width, int size) {
  if (size <= 0 || height < size || width < size) {
    throw std::invalid_argument("center_crop: size must be in [1, min(H, W)] of the " +
                                shape_str(height, width) + " (H x W) image, got " +
                                std::to_string(size));
  }
  // torchvision CenterCrop: int(round((dim - size) / 2.0)), Python rounding.
  return CropWindow{py_round((width - size) / 2.0), py_round((height - size) / 2.0), size, size};
}

void center_crop(const Image& src, int size, Image& out) {
  check_image(src, "center_crop");
  const CropWindow w = center_crop_window(src.height, src.width, size);
  if (&src == &out) throw std::invalid_argument("center_crop: src and out must differ");
  copy_window(src, w, out);
}

void resize_shorter_center_crop(const Image& src, int resize_size, int crop_size, Image& out) {
  check_image(src, "resize_shorter_center_crop");
  if (resize_size <= 0) {
    throw std::invalid_argument("resize_shorter_center_crop: resize_size must be positive, got " +
                                std::to_string(resize_size));
  }
  if (&src == &out) {
    throw std::invalid_argument("resize_shorter_center_crop: src and out must differ");
  }
  int out_h, out_w;
  shorter_side_size(src, resize_size, out_h, out_w);
  if (crop_size <= 0 || out_h < crop_size || out_w < crop_size) {
    throw std::invalid_argument("resize_shorter_center_crop: crop_size must be in [1, " +
                                std::to_string(std::min(out_h, out_w)) + "] (the resized " +
                                shape_str(out_h, out_w) + " image), got " +
                                std::to_string(crop_size));
  }
  const bool area = out_h <= src.height && out_w <= src.width &&
                    !(out_h == src.height && out_w == src.width);
  if (!area) {
    thread_local Image resized;
    resize_shorter(src, resize_size, resized);
    center_crop(resized, crop_size, out);
    return;
  }
  const int top = py_round((out_h - crop_size) / 2.0);
  const int left = py_round((out_w - crop_size) / 2.0);
  area_resize(src, CropWindow{0, 0, src.width, src.height}, out_h, out_w,
              CropWindow{left, top, crop_size, crop_size}, false, out);
}

CropWindow random_crop_window(int height, int width, int size, Rng& rng) {
  if (size <= 0 || height < size || width < size) {
    throw std::invalid_argument("random_crop: size must be in [1, min(H, W)] of the " +
                                shape_str(height, width) + " (H x W) image, got " +
                                std::to_string(size));
  }
  // torchvision RandomCrop.get_params: no draw when the image is exactly the crop.
  if (height == size && width == size) return CropWindow{0, 0, size, size};
  const int i = static_cast<int>(rng.uniform_int(0, height - size));
  const int j = static_cast<int>(rng.uniform_int(0, width - size));
  return CropWindow{j, i, size, size};
}

void random_crop(const Image& src, int size, Rng& rng, Image& out) {
  check_image(src, "random_crop");
  if (&src == &out) throw std::invalid_argument("random_crop: src and out must differ");
  copy_window(src, random_crop_window(src.height, src.width, size, rng), out);
}

void horizontal_flip(Image& img) {
  if (img.channels != 1 && img.channels != 3) {
    throw std::invalid_argument("horizontal_flip: channels must be 1 or 3, got " +
                                std::to_string(img.channels));
  }
  if (img.height <= 0 || img.width <= 1) return;
  // cv::flip swaps mirrored pixel pairs, so it works in place; its SIMD row reversal took
  // 0.4x the time of a plain 3-byte swap loop on 224 x 224.
  detail::opencv_serial();
  cv::Mat m = mat_of(img);
  cv::flip(m, m, 1);
}

void vertical_flip(Image& img) {
  if (img.height <= 1 || img.width <= 0) return;
  detail::opencv_serial();
  cv::Mat m = mat_of(img);
  cv::flip(m, m, 0);
}

}  // namespace pipebench
