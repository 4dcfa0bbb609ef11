// Affine warps (affine.h): torchvision 0.14's geometry and grid_sample's arithmetic.
//
// Why not cv::warpAffine: it quantises the sample position to 1/1024 pixel for nearest and
// to 1/32 pixel for bilinear. Measured against a double-precision grid_sample reference on
// 224 x 224 noise, that picked the neighbouring pixel for 0.1% of nearest samples and was off
// by more than 1 level on 18% of bilinear samples (worst 7 levels; on smooth images within
// 1). The loops below keep the position to 2^-32 pixel (fixed point, stepped along a row)
// and blend in float32 as grid_sample does, so they agree with torchvision within 1 level,
// at 1.0-1.4x warpAffine's time on a 224 x 224 RGB image (SSE2 blend for 3 and 4 channels).
//
// Nearest sampling, the AutoAugment family's default, has faster paths that pick exactly
// the pixels of the per-pixel loop (each says why): rows that are the input's rows shifted
// by whole pixels (translations, ShearX) are one memcpy; maps that keep columns (ShearY)
// copy runs of columns; the rest gather 8 pixels at a time with AVX2 where the CPU has it.
// Bilinear: a translation by whole pixels is a copy too (it weighs one tap by 1), and rows
// that step one input pixel (ShearX, translations) blend whole row segments with their one
// set of weights, vectorised. Where a nearest sample lies within a small margin of a
// rounding tie, the general loop runs instead.
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
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
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

// Pixels [0, n) of a row set to the fill.
template <int C>
void fill_pixels(uint8_t* __restrict o, int n, const uint8_t* fill) {
  if (n <= 0) return;
  bool uniform = true;
  for (int c = 1; c < C; ++c) uniform = uniform && fill[c] == fill[0];
  if (uniform) {
    std::memset(o, fill[0], static_cast<size_t>(n) * C);
    return;
  }
  for (int x = 0; x < n; ++x)
    for (int c = 0; c < C; ++c) o[static_cast<size_t>(x) * C + c] = fill[c];
}

// The in-span loop of warp_nearest: output pixels [0, n) of `o` from the fixed-point position
// (fx, fy) stepped by (dx, dy), rounded half to even and clamped (the clamps only guard
// against rounding at the span's ends).
template <int C>
void nearest_run(const uint8_t* __restrict in, size_t stride, int w, int h, int64_t fx,
                 int64_t fy, int64_t dx, int64_t dy, int n, uint8_t* __restrict o) {
  for (int x = 0; x < n; ++x, fx += dx, fy += dy) {
    const int xi = std::clamp(fixed_round_half_even(fx), 0, w - 1);
    const int yi = std::clamp(fixed_round_half_even(fy), 0, h - 1);
    const uint8_t* p = in + static_cast<size_t>(yi) * stride + static_cast<size_t>(xi) * C;
    for (int c = 0; c < C; ++c) o[static_cast<size_t>(x) * C + c] = p[c];
  }
}

#if defined(__GNUC__) && defined(__x86_64__)
#define PB_AVX2 __attribute__((target("avx2")))

// nearest_run for 3 channels with AVX2, 8 pixels at a time, choosing the same source pixels:
// the fixed-point positions, scaled by 2^-32, are exact doubles (integers times 2^-32 below
// 2^21 pixels need at most 53 bits), so stepping them in double adds exactly as the 64-bit
// integers do, and converting with the default rounding mode (nearest, ties to even) is
// fixed_round_half_even. The pixels are then gathered 4 bytes each and packed to 3.
// Returns how many pixels it wrote (a multiple of 8); the caller does the rest, from
// fx + k dx. `in_bytes` is the source's size: a 4-byte read at its last pixel would pass the
// end, so that pixel is copied separately. Needs in_bytes < 2^31 (32-bit gather offsets)
// and every position of the run inside the image (the span), w and h below 2^20.
PB_AVX2 int nearest_run_rgb_avx2(const uint8_t* __restrict in, size_t stride, size_t in_bytes,
                                 int w, int h, int64_t fx, int64_t fy, int64_t dx, int64_t dy,
                                 int n, uint8_t* __restrict o) {
  if (n < 8) return 0;
  constexpr double kUnit = 1.0 / static_cast<double>(kFixOne);
  auto pos = [](int64_t f) { return static_cast<double>(f) * kUnit; };
  __m256d x0 = _mm256_setr_pd(pos(fx), pos(fx + dx), pos(fx + 2 * dx), pos(fx + 3 * dx));
  __m256d y0 = _mm256_setr_pd(pos(fy), pos(fy + dy), pos(fy + 2 * dy), pos(fy + 3 * dy));
  __m256d x1 = _mm256_setr_pd(pos(fx + 4 * dx), pos(fx + 5 * dx), pos(fx + 6 * dx), pos(fx + 7 * dx));
  __m256d y1 = _mm256_setr_pd(pos(fy + 4 * dy), pos(fy + 5 * dy), pos(fy + 6 * dy), pos(fy + 7 * dy));
  const __m256d step_x = _mm256_set1_pd(pos(8 * dx)), step_y = _mm256_set1_pd(pos(8 * dy));
  const __m256i zero = _mm256_setzero_si256();
  const __m256i max_x = _mm256_set1_epi32(w - 1), max_y = _mm256_set1_epi32(h - 1);
  const __m256i stride_v = _mm256_set1_epi32(static_cast<int32_t>(stride));
  const __m256i last = _mm256_set1_epi32(static_cast<int32_t>(in_bytes - 3));
  // Per 128-bit half: bytes 0-2 of each of its four 32-bit words, packed into 12 bytes;
  // then the two halves' 12 bytes side by side (words 0-2 and 4-6).
  const __m256i pack = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
                                        0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
  const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
  const int* base = reinterpret_cast<const int*>(in);
  int x = 0;
  for (; x + 8 <= n; x += 8) {
    __m256i xi = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm256_cvtpd_epi32(x0)),
                                         _mm256_cvtpd_epi32(x1), 1);
    __m256i yi = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm256_cvtpd_epi32(y0)),
                                         _mm256_cvtpd_epi32(y1), 1);
    // The clamps only guard against rounding at the span's ends, as nearest_run's.
    xi = _mm256_min_epi32(_mm256_max_epi32(xi, zero), max_x);
    yi = _mm256_min_epi32(_mm256_max_epi32(yi, zero), max_y);
    const __m256i off = _mm256_add_epi32(_mm256_mullo_epi32(yi, stride_v),
                                         _mm256_add_epi32(_mm256_add_epi32(xi, xi), xi));
    const __m256i safe = _mm256_cmpgt_epi32(last, off);  // not the last pixel
    __m256i v = _mm256_mask_i32gather_epi32(zero, base, off, safe, 1);
    v = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, pack), join);
    uint8_t* dst = o + static_cast<size_t>(x) * 3;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm256_castsi256_si128(v));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + 16), _mm256_extracti128_si256(v, 1));
    if (_mm256_movemask_ps(_mm256_castsi256_ps(safe)) != 0xFF) {
      alignas(32) int32_t offs[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(offs), off);
      for (int k = 0; k < 8; ++k) std::memcpy(dst + 3 * k, in + offs[k], 3);
    }
    x0 = _mm256_add_pd(x0, step_x);
    x1 = _mm256_add_pd(x1, step_x);
    y0 = _mm256_add_pd(y0, step_y);
    y1 = _mm256_add_pd(y1, step_y);
  }
  return x;
}

bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

// One output row of warp_nearest whose samples (rx + m0 x, ry + m3 x) stay on the input row
// round(ry) and step by one input pixel (m0 == 1, m3 == 0: translations, ShearX): the row is
// the input row shifted by round(rx), filled where that leaves the input. Returns false, to
// take the general path, unless rx and ry lie clear of a rounding tie: then the fixed-point
// span and the checked edges (which round rx + x and ry, the same values up to 2^-30 pixel)
// pick exactly these pixels, whereas at a tie the fixed-point path rounds by the parity of
// each position, which is no longer a shift.
template <int C>
bool shifted_row(const Image& src, double rx, double ry, const uint8_t* fill, uint8_t* o) {
  constexpr double kTieMargin = 1.0 / 65536;
  constexpr double kMaxShift = 1 << 24;
  const double sx = std::nearbyint(rx), sy = std::nearbyint(ry);
  if (!(std::fabs(rx - sx) < 0.5 - kTieMargin && std::fabs(ry - sy) < 0.5 - kTieMargin &&
        std::fabs(sx) < kMaxShift && std::fabs(sy) < kMaxShift))
    return false;
  const int w = src.width;
  const int64_t shift = static_cast<int64_t>(sx), row = static_cast<int64_t>(sy);
  if (row < 0 || row >= src.height) {
    fill_pixels<C>(o, w, fill);
    return true;
  }
  // Output x reads input x + shift: inside for x in [lo, hi).
  const int lo = static_cast<int>(std::clamp<int64_t>(-shift, 0, w));
  const int hi = static_cast<int>(std::clamp<int64_t>(w - shift, lo, w));
  fill_pixels<C>(o, lo, fill);
  // Only when some input pixel is read: a shift of more than the width left of the row
  // (lo == hi == w) made lo + shift negative, and the source pointer, formed for a copy of
  // 0 bytes, wrapped around (clang's UBSan: pointer overflow; Affine.NearestShearsAndShifts).
  if (hi > lo)
    std::memcpy(o + static_cast<size_t>(lo) * C,
                src.row(static_cast<int>(row)) + static_cast<size_t>(lo + shift) * C,
                static_cast<size_t>(hi - lo) * C);
  fill_pixels<C>(o + static_cast<size_t>(hi) * C, w - hi, fill);
  return true;
}

// warp_nearest for a map whose columns stay columns: m[0] == 1, m[1] == 0, m[4] == 1 (ShearY,
// translations), so output (x, y) samples (x + rx, y + ry(x)) with rx = m[2] and
// ry(x) = m[5] + m[3] x: each column is an input column shifted by round(rx) across and by
// round(ry(x)) down, a shift constant over runs of columns. Every output row is then a few
// copies of input row segments. Returns false, to take the general path, when rx or some
// ry(x) lies within kTieMargin of a rounding tie (the fixed-point span accumulates up to
// W * 2^-33 pixel of step rounding, and rounds exact ties by parity) or when the runs do
// not fit the fixed table (kMaxRuns: a steep shear of a wide image).
template <int C>
bool warp_nearest_columns(const Image& src, Image& out, const std::array<double, 6>& m,
                          const uint8_t* fill) {
  constexpr double kTieMargin = 1.0 / 4096;
  constexpr int kMaxRuns = 256;
  constexpr double kMaxShift = 1 << 24;
  const int w = src.width, h = src.height;
  if (!(m[0] == 1.0 && m[1] == 0.0 && m[4] == 1.0) || w > (1 << 16)) return false;
  const double sx = std::nearbyint(m[2]);
  if (!(std::fabs(m[2] - sx) < 0.5 - kTieMargin && std::fabs(sx) < kMaxShift)) return false;
  const int64_t shift = static_cast<int64_t>(sx);
  // Output columns [lo, hi) read input columns inside the image.
  const int lo = static_cast<int>(std::clamp<int64_t>(-shift, 0, w));
  const int hi = static_cast<int>(std::clamp<int64_t>(w - shift, lo, w));
  struct Run {
    int first, last;  // output columns [first, last)
    int64_t down;     // input row = output row + down
  };
  Run runs[kMaxRuns];
  int n = 0;
  for (int x = lo; x < hi; ++x) {
    // The rows' ry + m[3] x differ from y + (m[5] + m[3] x) by a rounding of 2^-40 pixel.
    const double v = m[5] + m[3] * x, r = std::nearbyint(v);
    if (!(std::fabs(v - r) < 0.5 - kTieMargin && std::fabs(r) < kMaxShift)) return false;
    const int64_t down = static_cast<int64_t>(r);
    if (n > 0 && runs[n - 1].down == down && runs[n - 1].last == x) {
      runs[n - 1].last = x + 1;
    } else {
      if (n == kMaxRuns) return false;
      runs[n++] = {x, x + 1, down};
    }
  }
  // Runs are short (1 / |m[3]| columns): copied in 16-byte blocks rather than by memcpy
  // calls, each block ending up to 15 bytes past its run, inside the next run (written
  // after it) or the fill after the last one; where that would leave either buffer, memcpy.
  const uint8_t* in_end = src.data.data() + src.data.size();
  const uint8_t* out_end = out.data.data() + out.data.size();
  constexpr size_t kBlock = 16;
  for (int y = 0; y < h; ++y) {
    uint8_t* __restrict o = out.row(y);
    int fill_from = 0;  // the fill owed to columns [fill_from, the current run)
    for (int i = 0; i < n; ++i) {
      const Run& r = runs[i];
      const int64_t row = y + r.down;
      if (row < 0 || row >= h) continue;
      fill_pixels<C>(o + static_cast<size_t>(fill_from) * C, r.first - fill_from, fill);
      fill_from = r.last;
      uint8_t* dst = o + static_cast<size_t>(r.first) * C;
      const uint8_t* from =
          src.row(static_cast<int>(row)) + static_cast<size_t>(r.first + shift) * C;
      const size_t bytes = static_cast<size_t>(r.last - r.first) * C;
      const size_t padded = (bytes + kBlock - 1) / kBlock * kBlock;
      if (padded <= static_cast<size_t>(in_end - from) &&
          padded <= static_cast<size_t>(out_end - dst)) {
        for (size_t k = 0; k < bytes; k += kBlock) std::memcpy(dst + k, from + k, kBlock);
      } else {
        std::memcpy(dst, from, bytes);
      }
    }
    fill_pixels<C>(o + static_cast<size_t>(fill_from) * C, w - fill_from, fill);
  }
  return true;
}

// Output columns outside which a row's samples lie at or beyond -1 or the far edge (W or H)
// for sure, so nearest_checked would write the fill: inside_span's interval widened by one
// pixel and a margin far above the rounding of the span's arithmetic. The whole row when the
// steps are too large to tell.
Span maybe_inside_span(double ax, double bx, double ay, double by, int width, int height) {
  constexpr double kMargin = 1.0 / 1024;
  constexpr double kMaxStep = 1 << 20;
  if (!(std::fabs(bx) < kMaxStep && std::fabs(by) < kMaxStep)) return {0, width};
  double first = 0.0, last = width - 1.0;
  narrow(ax, bx, -1.0 - kMargin, width + kMargin, first, last);
  narrow(ay, by, -1.0 - kMargin, height + kMargin, first, last);
  if (!(first <= last)) return {};
  return {static_cast<int>(std::ceil(first)), static_cast<int>(std::floor(last)) + 1};
}

template <int C>
void warp_nearest(const Image& src, Image& out, const std::array<double, 6>& m,
                  const uint8_t* fill) {
  const int w = src.width, h = src.height;
  const size_t stride = src.row_bytes();
  // Raw __restrict pointers: stores through uint8_t* may alias anything (a char type), which
  // would otherwise reload the images' fields for every pixel.
  const uint8_t* __restrict in = src.ptr();
  if (warp_nearest_columns<C>(src, out, m, fill)) return;
  const bool unit_steps = m[0] == 1.0 && m[3] == 0.0;
#if defined(__GNUC__) && defined(__x86_64__)
  const bool simd = C == 3 && have_avx2() && src.size_bytes() < (size_t{1} << 31);
#endif
  for (int y = 0; y < h; ++y) {
    const double rx = m[1] * y + m[2], ry = m[4] * y + m[5];
    uint8_t* __restrict o = out.row(y);
    if (unit_steps && shifted_row<C>(src, rx, ry, fill, o)) continue;
    // Columns [0, a) and [d, w) sample far outside: the fill. [a, b) and [c, d), near the
    // edges: checked one by one. [b, c), the span whose samples lie inside: the fixed-point
    // loop (inner lies within outer: the same interval arithmetic on a narrower interval).
    const Span inner = inside_span(rx, m[0], ry, m[3], 0.0, w - 1.0, h - 1.0, w);
    const Span outer = maybe_inside_span(rx, m[0], ry, m[3], w, h);
    const int a = outer.first, d = std::max(outer.first, outer.last);
    const int b = inner.first < inner.last ? std::clamp(inner.first, a, d) : d;
    const int c = inner.first < inner.last ? std::clamp(inner.last, b, d) : d;
    fill_pixels<C>(o, a, fill);
    for (int x = a; x < b; ++x)
      nearest_checked<C>(src, rx + m[0] * x, ry + m[3] * x, fill, o + static_cast<size_t>(x) * C);
    if (b < c) {
      int64_t fx = to_fixed(rx + m[0] * b), fy = to_fixed(ry + m[3] * b);
      const int64_t dx = to_fixed(m[0]), dy = to_fixed(m[3]);
      int done = 0;
#if defined(__GNUC__) && defined(__x86_64__)
      if (simd)
        done = nearest_run_rgb_avx2(in, stride, src.size_bytes(), w, h, fx, fy, dx, dy, c - b,
                                    o + static_cast<size_t>(b) * C);
#endif
      nearest_run<C>(in, stride, w, h, fx + done * dx, fy + done * dy, dx, dy, c - b - done,
                     o + static_cast<size_t>(b + done) * C);
    }
    for (int x = c; x < d; ++x)
      nearest_checked<C>(src, rx + m[0] * x, ry + m[3] * x, fill, o + static_cast<size_t>(x) * C);
    fill_pixels<C>(o + static_cast<size_t>(d) * C, w - d, fill);
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

// The tap weights of a fixed-point position: its fractions, as the span loop takes them.
Taps fixed_taps(int64_t fx, int64_t fy) {
  constexpr float kFrac = 1.0f / static_cast<float>(kFixOne);
  return tap_weights(static_cast<float>(static_cast<uint32_t>(fx)) * kFrac,
                     static_cast<float>(static_cast<uint32_t>(fy)) * kFrac);
}

// The span loop of warp_bilinear: output pixels [0, n) of `o` from the fixed-point position
// (fx, fy) stepped by (dx, dy); every tap inside (the clamps only guard against rounding
// at the span's ends).
template <int C>
void bilinear_span(const uint8_t* __restrict in, size_t stride, int w, int h, int64_t fx,
                   int64_t fy, int64_t dx, int64_t dy, int n, uint8_t* __restrict o) {
  constexpr bool kSimd = kSimdBlend && (C == 3 || C == 4);
  for (int x = 0; x < n; ++x, fx += dx, fy += dy) {
    const int x0 = std::clamp(static_cast<int>(fx >> kFixBits), 0, w - 2);
    const int y0 = std::clamp(static_cast<int>(fy >> kFixBits), 0, h - 2);
    const Taps t = fixed_taps(fx, fy);
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
}

// blend_inside for a run of pixels sharing one set of weights, byte by byte: out[j] from
// a[j], a[j + step], b[j], b[j + step] (step: the channel count), the same float32 sum in
// the same order and the same rounding (to_u8's clamp and half-to-even equal the SSE2
// form's rounding and saturation), vectorised by GCC. FMA would change the sums: the
// pragma keeps the clones that have it from contracting.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
void blend_rows(const uint8_t* __restrict a, const uint8_t* __restrict b, int step, size_t bytes,
                Taps t, uint8_t* __restrict out) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23, as to_u8
  const float w0 = t.w[0], w1 = t.w[1], w2 = t.w[2], w3 = t.w[3];
  for (size_t j = 0; j < bytes; ++j) {
    float acc = w0 * static_cast<float>(a[j]);
    acc += w1 * static_cast<float>(a[j + step]);
    acc += w2 * static_cast<float>(b[j]);
    acc += w3 * static_cast<float>(b[j + step]);
    acc = 0.0f < acc ? acc : 0.0f;
    acc = acc < 255.0f ? acc : 255.0f;
    out[j] = static_cast<uint8_t>(static_cast<int>((acc + kMagic) - kMagic));
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

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
  // Rows that step one input pixel at a time along one pair of input rows (ShearX,
  // translations): every pixel of the span has the same fractions, so the same tap weights,
  // and its taps are the next pixel's shifted by one: a blend of whole row segments.
  const bool unit_steps = m[0] == 1.0 && m[3] == 0.0;
  for (int y = 0; y < h; ++y) {
    const double rx = m[1] * y + m[2], ry = m[4] * y + m[5];
    uint8_t* __restrict o = out.row(y);
    const Span span = inside_span(rx, m[0], ry, m[3], 0.0, hi_x, hi_y, w);
    for (int x = 0; x < w; ++x) {
      if (x == span.first && span.first < span.last) {
        const int64_t fx = to_fixed(rx + m[0] * x), fy = to_fixed(ry + m[3] * x);
        const int64_t dx = to_fixed(m[0]), dy = to_fixed(m[3]);
        const int n = span.last - x;
        if (unit_steps) {
          // dx is exactly one pixel and dy 0: pixel k's x0 is x0(0) + k (before the clamp,
          // which only the span's ends can need: those take the per-pixel loop).
          const int64_t x0 = fx >> kFixBits;
          const int lo = static_cast<int>(std::clamp<int64_t>(-x0, 0, n));
          const int hi = static_cast<int>(std::clamp<int64_t>(w - 1 - x0, lo, n));
          const int y0 = std::clamp(static_cast<int>(fy >> kFixBits), 0, h - 2);
          bilinear_span<C>(in, stride, w, h, fx, fy, dx, dy, lo, o + static_cast<size_t>(x) * C);
          const uint8_t* p = in + static_cast<size_t>(y0) * stride + static_cast<size_t>(x0 + lo) * C;
          blend_rows(p, p + stride, C, static_cast<size_t>(hi - lo) * C, fixed_taps(fx, fy),
                     o + static_cast<size_t>(x + lo) * C);
          bilinear_span<C>(in, stride, w, h, fx + hi * dx, fy + hi * dy, dx, dy, n - hi,
                           o + static_cast<size_t>(x + hi) * C);
        } else {
          bilinear_span<C>(in, stride, w, h, fx, fy, dx, dy, n, o + static_cast<size_t>(x) * C);
        }
        x = span.last;
        if (x == w) break;
      }
      bilinear_checked<C>(src, rx + m[0] * x, ry + m[3] * x, fill, outside,
                          o + static_cast<size_t>(x) * C);
    }
  }
}

// A map that moves the image by whole pixels (translations by integers): bilinear sampling
// then weighs one tap by 1 and the others by 0, so every pixel is its source pixel, and
// outside the image to_u8(fill) (the mask path: p * 1 + 0 * fill, the fill finite), which
// is what nearest sampling writes: the two agree exactly.
bool whole_pixel_shift(const std::array<double, 6>& m, const float* fill, int channels) {
  constexpr double kMaxShift = 1 << 24;
  if (!(m[0] == 1.0 && m[1] == 0.0 && m[3] == 0.0 && m[4] == 1.0)) return false;
  if (!(m[2] == std::nearbyint(m[2]) && m[5] == std::nearbyint(m[5]) &&
        std::fabs(m[2]) < kMaxShift && std::fabs(m[5]) < kMaxShift))
    return false;
  for (int c = 0; c < channels; ++c)
    if (!std::isfinite(fill[c])) return false;
  return true;
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
  if (interpolation == WarpInterpolation::kNearest || whole_pixel_shift(map, f, C)) {
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
