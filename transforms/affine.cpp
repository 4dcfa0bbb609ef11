// Affine warps (affine.h): torchvision 0.14's geometry and grid_sample's arithmetic.
//
// Why not cv::warpAffine: it quantises the sample position to 1/1024 pixel for nearest and
// to 1/32 pixel for bilinear. Measured against a double-precision grid_sample reference on
// 224 x 224 noise, that picked the neighbouring pixel for 0.1% of nearest samples and was off
// by more than 1 level on 18% of bilinear samples (worst 7 levels; on smooth images within
// 1). The loops below keep the position to 2^-32 pixel (fixed point, stepped along a row)
// and blend in float32 as grid_sample does, so they agree with torchvision within 1 level,
// at 1.0-1.4x warpAffine's time on a 224 x 224 RGB image (SSE2 blend for 3 and 4 channels).
#include "transforms/affine.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pipebench {
namespace {

constexpr double kPi = 3.14159265358979323846;

double radians(double degrees) { return degrees * kPi / 180.0; }

// Round half to even (torch.round, std::nearbyint) without a libm call per pixel: adding and
// subtracting 1.5 * 2^52 leaves the nearest integer under IEEE's default rounding mode.
// Valid for |v| < 2^51; callers pass sample positions already bounded to the image.
int round_half_even(double v) {
  constexpr double kMagic = 6755399441055744.0;
  return static_cast<int>((v + kMagic) - kMagic);
}

// A float in [0, 255] (after clamping) to uint8, half to even as torch.round before .to(uint8).
uint8_t to_u8(float v) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  v = std::min(255.0f, std::max(0.0f, v));
  return static_cast<uint8_t>(static_cast<int>((v + kMagic) - kMagic));
}

void check_images(const Image& src, const Image& out, const char* op) {
  if (src.height <= 0 || src.width <= 0 || src.data.size() < src.size_bytes())
    throw std::invalid_argument(std::string(op) + ": empty image (" + std::to_string(src.height) +
                                " x " + std::to_string(src.width) + " H x W)");
  if (src.channels < 1 || src.channels > 4)
    throw std::invalid_argument(std::string(op) + ": images have 1 to 4 channels, got " +
                                std::to_string(src.channels));
  if (&src == &out) throw std::invalid_argument(std::string(op) + ": src and out must differ");
}

// The input index (ix, iy) that output pixel (x, y) samples: ix = m[0] x + m[1] y + m[2],
// iy = m[3] x + m[4] y + m[5].
//
// torchvision's inverse matrix [a b c; d e f] works in centred pixel coordinates: the grid
// point of output pixel (x, y) is (x + 0.5 - W/2, y + 0.5 - H/2) (_gen_affine_grid's
// linspace with d = 0.5); the grid is divided by (W/2, H/2) to reach grid_sample's [-1, 1];
// grid_sample with align_corners=False maps g back to the input index
// i = ((g + 1) * W - 1) / 2 = g * W/2 + W/2 - 0.5, where pixel i's centre is at i. The two
// halvings cancel, so
//   ix = a (x + 0.5 - W/2) + b (y + 0.5 - H/2) + c + W/2 - 0.5
//   iy = d (x + 0.5 - W/2) + e (y + 0.5 - H/2) + f + H/2 - 0.5,
// the same 2x2 part with the offsets folded into the constant column. (This is also the
// matrix cv::warpAffine would take with WARP_INVERSE_MAP.) Output and input have the same
// size (expand=False).
std::array<double, 6> sample_map(const std::array<double, 6>& m, int height, int width) {
  const double ox = 0.5 - width * 0.5, oy = 0.5 - height * 0.5;  // output centring
  const double cx = width * 0.5 - 0.5, cy = height * 0.5 - 0.5;  // back to input indices
  return {m[0], m[1], m[0] * ox + m[1] * oy + m[2] + cx,         //
          m[3], m[4], m[3] * ox + m[4] * oy + m[5] + cy};
}

// Integer positions for the inner loops: 32 fractional bits, stepped by adding the matrix
// column (the step's rounding, 2^-33 pixel, adds up to below 2^-20 pixel across 8192
// columns), so no float-to-int conversion per pixel.
constexpr int kFixBits = 32;
constexpr int64_t kFixOne = int64_t{1} << kFixBits;

int64_t to_fixed(double v) { return std::llround(v * static_cast<double>(kFixOne)); }

// Output columns [first, last) of one row whose sample (a_x + b_x x, a_y + b_y x) lies in
// [lo, hi_x] x [lo, hi_y]: the inner loops run there without bounds checks, the rest of the
// row (the image's edges, a few pixels) takes the checked per-pixel path.
struct Span {
  int first = 0, last = 0;
};

void narrow(double a, double b, double lo, double hi, double& first, double& last) {
  if (!(lo <= hi)) {  // an image too small for the span's taps (1 pixel wide, say)
    last = -1.0;
    return;
  }
  if (b == 0.0) {
    if (!(a >= lo && a <= hi)) last = -1.0;  // never inside (also for NaN)
    return;
  }
  double t0 = (lo - a) / b, t1 = (hi - a) / b;
  if (t0 > t1) std::swap(t0, t1);
  first = std::max(first, t0);
  last = std::min(last, t1);
}

Span inside_span(double ax, double bx, double ay, double by, double lo, double hi_x, double hi_y,
                 int width) {
  // Steps larger than this cannot be stepped in fixed point; such a row (a scale below about
  // 1e-6) takes the checked path throughout.
  constexpr double kMaxStep = 1 << 20;
  if (!(std::fabs(bx) < kMaxStep && std::fabs(by) < kMaxStep)) return {};
  double first = 0.0, last = width - 1.0;
  narrow(ax, bx, lo, hi_x, first, last);
  narrow(ay, by, lo, hi_y, first, last);
  if (!(first <= last)) return {};
  return {static_cast<int>(std::ceil(first)), static_cast<int>(std::floor(last)) + 1};
}

// grid_sample(mode="nearest") at one input position, bounds checked: the pixel at
// nearbyint(ix), nearbyint(iy); outside the input the fill (torchvision: mask < 0.5 takes the
// fill; with fill None the zero padding, the same pixels).
template <int C>
void nearest_checked(const Image& src, double sx, double sy, const uint8_t* fill, uint8_t* o) {
  // Only (-1, size) can round inside; the comparison also rejects NaN and huge values.
  if (sx > -1.0 && sx < src.width && sy > -1.0 && sy < src.height) {
    const int xi = round_half_even(sx), yi = round_half_even(sy);
    if (xi >= 0 && xi < src.width && yi >= 0 && yi < src.height) {
      const uint8_t* p = src.row(yi) + static_cast<size_t>(xi) * C;
      for (int c = 0; c < C; ++c) o[c] = p[c];
      return;
    }
  }
  for (int c = 0; c < C; ++c) o[c] = fill[c];
}

// nearbyint of a non-negative fixed-point position: adding one half less one unit carries for
// fractions above one half; the integer part's low bit makes an exact half round to even.
int fixed_round_half_even(int64_t v) {
  return static_cast<int>((v + (kFixOne / 2 - 1) + ((v >> kFixBits) & 1)) >> kFixBits);
}

template <int C>
void warp_nearest(const Image& src, Image& out, const std::array<double, 6>& m,
                  const uint8_t* fill) {
  const int w = src.width, h = src.height;
  const size_t stride = src.row_bytes();
  // Raw __restrict pointers: stores through uint8_t* may alias anything (a char type), which
  // would otherwise reload the images' fields for every pixel.
  const uint8_t* __restrict in = src.ptr();
  for (int y = 0; y < h; ++y) {
    const double rx = m[1] * y + m[2], ry = m[4] * y + m[5];
    uint8_t* __restrict o = out.row(y);
    const Span span = inside_span(rx, m[0], ry, m[3], 0.0, w - 1.0, h - 1.0, w);
    for (int x = 0; x < w; ++x) {
      if (x == span.first && span.first < span.last) {
        int64_t fx = to_fixed(rx + m[0] * x), fy = to_fixed(ry + m[3] * x);
        const int64_t dx = to_fixed(m[0]), dy = to_fixed(m[3]);
        for (; x < span.last; ++x, fx += dx, fy += dy) {
          // The clamps only guard against rounding at the span's ends.
          const int xi = std::clamp(fixed_round_half_even(fx), 0, w - 1);
          const int yi = std::clamp(fixed_round_half_even(fy), 0, h - 1);
          const uint8_t* p = in + static_cast<size_t>(yi) * stride + static_cast<size_t>(xi) * C;
          for (int c = 0; c < C; ++c) o[static_cast<size_t>(x) * C + c] = p[c];
        }
        if (x == w) break;
      }
      nearest_checked<C>(src, rx + m[0] * x, ry + m[3] * x, fill, o + static_cast<size_t>(x) * C);
    }
  }
}

// The four bilinear tap weights (x0 y0, x0+1 y0, x0 y0+1, x0+1 y0+1) for fractions fx, fy,
// in float32 as grid_sample's (nw, ne, sw, se).
struct Taps {
  float w[4];
};
Taps tap_weights(float fx, float fy) {
  return {{(1.0f - fx) * (1.0f - fy), fx * (1.0f - fy), (1.0f - fx) * fy, fx * fy}};
}

// The 2 x 2 taps at p (row y0) and p + stride (row y0 + 1), all inside: sum of weight * tap
// in float32, in the order nw, ne, sw, se, then torch.round. The SSE2 form does the same
// operations on four channels at once (the same bits), reading 4 bytes per tap.
template <int C>
void blend_inside(const uint8_t* __restrict p, size_t stride, const Taps& t,
                  uint8_t* __restrict o) {
  const uint8_t* q = p + stride;
  uint8_t v[C];
  for (int c = 0; c < C; ++c) {
    float acc = t.w[0] * p[c];
    acc += t.w[1] * p[C + c];
    acc += t.w[2] * q[c];
    acc += t.w[3] * q[C + c];
    v[c] = to_u8(acc);
  }
  for (int c = 0; c < C; ++c) o[c] = v[c];
}

#if defined(__SSE2__)
__m128 load4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  const __m128i z = _mm_setzero_si128();
  const __m128i b = _mm_unpacklo_epi8(_mm_cvtsi32_si128(v), z);
  return _mm_cvtepi32_ps(_mm_unpacklo_epi16(b, z));
}

// For C = 3 the fourth byte read belongs to the next pixel: the caller keeps x0 + 2 inside.
template <int C>
void blend_inside_sse2(const uint8_t* __restrict p, size_t stride, const Taps& t,
                       uint8_t* __restrict o) {
  static_assert(C == 3 || C == 4);
  const uint8_t* q = p + stride;
  __m128 acc = _mm_mul_ps(_mm_set1_ps(t.w[0]), load4(p));
  acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(t.w[1]), load4(p + C)));
  acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(t.w[2]), load4(q)));
  acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(t.w[3]), load4(q + C)));
  __m128i r = _mm_cvtps_epi32(acc);  // half to even under the default rounding mode
  r = _mm_packs_epi32(r, r);
  r = _mm_packus_epi16(r, r);  // saturates to [0, 255] like to_u8's clamp
  const int32_t bytes = _mm_cvtsi128_si32(r);
  std::memcpy(o, &bytes, C);
}
constexpr bool kSimdBlend = true;
#else
constexpr bool kSimdBlend = false;
#endif

// One bilinear sample, bounds checked. grid_sample pads with zeros; torchvision's
// _apply_grid_transform, given a fill, also samples a ones mask and returns
// img * mask + (1 - mask) * fill, img being the zero-padded sample (so the inside taps are
// weighted by the mask twice: torchvision's arithmetic, kept to match it at the border).
template <int C>
void bilinear_checked(const Image& src, double sx, double sy, const float* fill,
                      const uint8_t* outside, uint8_t* o) {
  if (!(sx > -1.0 && sx < src.width && sy > -1.0 && sy < src.height)) {
    for (int c = 0; c < C; ++c) o[c] = outside[c];
    return;
  }
  const double x0d = std::floor(sx), y0d = std::floor(sy);
  const int x0 = static_cast<int>(x0d), y0 = static_cast<int>(y0d);
  const Taps t = tap_weights(static_cast<float>(sx - x0d), static_cast<float>(sy - y0d));
  if (x0 >= 0 && x0 + 1 < src.width && y0 >= 0 && y0 + 1 < src.height) {
    blend_inside<C>(src.row(y0) + static_cast<size_t>(x0) * C, src.row_bytes(), t, o);
    return;
  }
  float v[C] = {};
  float mask = 0.0f;
  for (int k = 0; k < 4; ++k) {
    const int xi = x0 + (k & 1), yi = y0 + (k >> 1);
    if (xi < 0 || xi >= src.width || yi < 0 || yi >= src.height) continue;
    const uint8_t* p = src.row(yi) + static_cast<size_t>(xi) * C;
    for (int c = 0; c < C; ++c) v[c] += t.w[k] * p[c];
    mask += t.w[k];
  }
  for (int c = 0; c < C; ++c)
    o[c] = to_u8(fill == nullptr ? v[c] : v[c] * mask + (1.0f - mask) * fill[c]);
}

// grid_sample(mode="bilinear").
template <int C>
void warp_bilinear(const Image& src, Image& out, const std::array<double, 6>& m,
                   const float* fill) {
  const int w = src.width, h = src.height;
  const size_t stride = src.row_bytes();
  const uint8_t* __restrict in = src.ptr();
  uint8_t outside[C];  // all four taps outside: mask 0, so the fill (or 0)
  for (int c = 0; c < C; ++c) outside[c] = to_u8(fill == nullptr ? 0.0f : fill[c]);
  // In the span every tap is inside (x0 <= w - 2, y0 <= h - 2; with the 4-byte reads of
  // 3 channels, x0 <= w - 3); the margin keeps that true after rounding.
  constexpr bool kSimd = kSimdBlend && (C == 3 || C == 4);
  constexpr double kMargin = 1.0 / 1024;
  const double hi_x = w - (kSimd && C == 3 ? 2.0 : 1.0) - kMargin, hi_y = h - 1.0 - kMargin;
  constexpr float kFrac = 1.0f / static_cast<float>(kFixOne);
  for (int y = 0; y < h; ++y) {
    const double rx = m[1] * y + m[2], ry = m[4] * y + m[5];
    uint8_t* __restrict o = out.row(y);
    const Span span = inside_span(rx, m[0], ry, m[3], 0.0, hi_x, hi_y, w);
    for (int x = 0; x < w; ++x) {
      if (x == span.first && span.first < span.last) {
        int64_t fx = to_fixed(rx + m[0] * x), fy = to_fixed(ry + m[3] * x);
        const int64_t dx = to_fixed(m[0]), dy = to_fixed(m[3]);
        for (; x < span.last; ++x, fx += dx, fy += dy) {
          // The clamps only guard against rounding at the span's ends.
          const int x0 = std::clamp(static_cast<int>(fx >> kFixBits), 0, w - 2);
          const int y0 = std::clamp(static_cast<int>(fy >> kFixBits), 0, h - 2);
          const Taps t = tap_weights(static_cast<float>(static_cast<uint32_t>(fx)) * kFrac,
                                     static_cast<float>(static_cast<uint32_t>(fy)) * kFrac);
          const uint8_t* p = in + static_cast<size_t>(y0) * stride + static_cast<size_t>(x0) * C;
          uint8_t* dst = o + static_cast<size_t>(x) * C;
#if defined(__SSE2__)
          if constexpr (kSimd) {
            blend_inside_sse2<C>(p, stride, t, dst);
            continue;
          }
#endif
          blend_inside<C>(p, stride, t, dst);
        }
        if (x == w) break;
      }
      bilinear_checked<C>(src, rx + m[0] * x, ry + m[3] * x, fill, outside,
                          o + static_cast<size_t>(x) * C);
    }
  }
}

template <int C>
void warp_channels(const Image& src, Image& out, const std::array<double, 6>& map,
                   WarpInterpolation interpolation,
                   const std::optional<std::array<float, 3>>& fill) {
  float f[C];
  uint8_t f8[C];
  for (int c = 0; c < C; ++c) {
    // One value per channel; a 4th channel (alpha) takes the last one.
    f[c] = fill ? (*fill)[std::min(c, 2)] : 0.0f;
    f8[c] = to_u8(f[c]);
  }
  if (interpolation == WarpInterpolation::kNearest) {
    warp_nearest<C>(src, out, map, f8);
  } else {
    warp_bilinear<C>(src, out, map, fill ? f : nullptr);
  }
}

void warp(const Image& src, Image& out, const std::array<double, 6>& inverse,
          WarpInterpolation interpolation, const std::optional<std::array<float, 3>>& fill,
          const char* op) {
  check_images(src, out, op);
  for (double v : inverse)
    if (!std::isfinite(v))
      throw std::invalid_argument(
          std::string(op) +
          ": the transform is not finite (scale 0, or a NaN or infinite parameter)");
  out.resize(src.height, src.width, src.channels);
  const auto map = sample_map(inverse, src.height, src.width);
  switch (src.channels) {
    case 1:
      return warp_channels<1>(src, out, map, interpolation, fill);
    case 2:
      return warp_channels<2>(src, out, map, interpolation, fill);
    case 3:
      return warp_channels<3>(src, out, map, interpolation, fill);
    default:
      return warp_channels<4>(src, out, map, interpolation, fill);
  }
}

}  // namespace

std::array<double, 6> inverse_affine_matrix(const AffineParams& p) {
  // functional.py _get_inverse_affine_matrix(center=(0, 0), angle, translate, scale, shear,
  // inverted=True), term for term: M = T * C * R(a) * S(s) * SHy(sy) * SHx(sx) * C^-1 and
  // its inverse C * RSS^-1 * C^-1 * T^-1, with det(RSS without scale) == 1.
  const double rot = radians(p.angle);
  const double sx = radians(p.shear[0]), sy = radians(p.shear[1]);
  const double tx = p.translate[0], ty = p.translate[1];
  const double a = std::cos(rot - sy) / std::cos(sy);
  const double b = -std::cos(rot - sy) * std::tan(sx) / std::cos(sy) - std::sin(rot);
  const double c = std::sin(rot - sy) / std::cos(sy);
  const double d = -std::sin(rot - sy) * std::tan(sx) / std::cos(sy) + std::cos(rot);
  const double s = p.scale;
  std::array<double, 6> m = {d / s, -b / s, 0.0, -c / s, a / s, 0.0};
  // RSS^-1 * C^-1 * T^-1 with the centre at the origin: translate by -t.
  m[2] += m[0] * -tx + m[1] * -ty;
  m[5] += m[3] * -tx + m[4] * -ty;
  return m;
}

void affine(const Image& src, Image& out, const AffineParams& p, WarpInterpolation interpolation,
            std::optional<std::array<float, 3>> fill) {
  if (!(p.scale > 0.0f))
    throw std::invalid_argument("affine: scale must be > 0, got " + std::to_string(p.scale));
  warp(src, out, inverse_affine_matrix(p), interpolation, fill, "affine");
}

void rotate(const Image& src, Image& out, float angle, WarpInterpolation interpolation,
            std::optional<std::array<float, 3>> fill) {
  // functional.py rotate(): "due to current incoherence of rotation angle direction between
  // affine and rotate implementations we need to set -angle".
  AffineParams p;
  p.angle = -angle;
  warp(src, out, inverse_affine_matrix(p), interpolation, fill, "rotate");
}

}  // namespace pipebench
