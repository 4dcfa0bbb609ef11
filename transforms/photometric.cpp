// Photometric kernels (photometric.h), each a float32 re-enactment of torchvision 0.14's
// functional_tensor.py on a uint8 tensor: the same float32 operations in the same order,
// so the truncations and roundings land where torchvision's do.
//
// Three details decide bit-exactness:
//  - torch multiplies a uint8 tensor by a Python float in float32 (the scalar rounded to
//    float first), and `1.0 - ratio` in _blend is computed in double, then rounded;
//  - no fused multiply-add: torch runs `a * x + b * y` as three separate kernels, so the
//    compiler must not contract them (the pragma below; the build does not enable FMA,
//    but a -march=native build would);
//  - `bound / t` on a tensor is t.reciprocal() * bound (torch/_tensor.py __rdiv__).
//
// Speed: the per-pixel loops are written so GCC vectorises them. Those on interleaved RGB
// need byte shuffles (SSSE3 and up), so they are compiled three times, for x86-64-v4
// (AVX-512: 1.5 to 3 times the AVX2 clone's speed here), for AVX2 and for the baseline, and picked at
// load time (target_clones); every clone computes the same IEEE float32 operations (the
// pragma keeps FMA out of the clones that have it), so all give identical pixels.
// -fno-trapping-math (the pragma) changes no value: it only lets GCC compute both arms of
// a select, which vectorising the hue loop needs. Kernels whose output is a function of
// the input value alone (brightness, contrast, autocontrast, equalize) build a 256-entry
// table with that same expression and, where the CPU has AVX-512 VBMI, look the bytes up
// 64 at a time (see "lookup tables" below). The blur's inner loop uses GCC's generic
// vectors, which keep a block of outputs in registers across the taps.
#include "transforms/photometric.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off", "no-trapping-math")
#elif defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define PB_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define PB_VECTOR_CLONES
#endif

namespace pipebench {
namespace {

void need_rgb(const Image& img, const char* fn) {
  if (img.channels != 3)
    throw std::invalid_argument(std::string(fn) + ": needs a 3-channel (RGB) image, got " +
                                std::to_string(img.channels) + " channel(s)");
}

void need_range(const char* fn, const char* what, double v, double lo, double hi) {
  if (!(v >= lo && v <= hi))
    throw std::invalid_argument(std::string(fn) + ": " + what + " must be in [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                                std::to_string(v));
}

size_t pixel_count(const Image& img) { return static_cast<size_t>(img.height) * img.width; }

// std::min / std::max are compiled before the pragma above, with other options, so GCC
// would not inline them here: these are the same selects.
template <typename T>
inline T min_of(T a, T b) {
  return b < a ? b : a;
}
template <typename T>
inline T max_of(T a, T b) {
  return a < b ? b : a;
}

// torch: `.clamp(0, 255).to(torch.uint8)`: clamp, then C++'s float -> integer truncation.
struct ClampThenTruncate {
  static uint8_t apply(float v) {
    v = min_of(max_of(v, 0.0f), 255.0f);
    return static_cast<uint8_t>(static_cast<int32_t>(v));
  }
};
// The same value for |v| < 2^31, truncating first: vectorised, this is integer min / max
// (GCC turns the float clamp followed by a conversion into a long chain of masks).
struct TruncateThenClamp {
  static uint8_t apply(float v) {
    int32_t k = static_cast<int32_t>(v);
    k = k < 0 ? 0 : k;
    k = k > 255 ? 255 : k;
    return static_cast<uint8_t>(k);
  }
};
// Blend factors up to this keep |ratio * x + (1 - ratio) * y| <= 255 (2 ratio + 1) far below
// 2^31, so the blends may use TruncateThenClamp; larger ones take ClampThenTruncate.
constexpr float kFastBlendFactorMax = 1e6f;

// torch rgb_to_grayscale on uint8: (0.2989 * r + 0.587 * g + 0.114 * b).to(uint8), each
// product in float32 and summed left to right.
inline float gray_of(float r, float g, float b) {
  return static_cast<float>(static_cast<int32_t>(0.2989f * r + 0.587f * g + 0.114f * b));
}

// --- per-pixel loops (vectorised) ----------------------------------------------------------

PB_VECTOR_CLONES void gray_in_place(uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint8_t g = static_cast<uint8_t>(
        static_cast<int32_t>(gray_of(p[3 * i], p[3 * i + 1], p[3 * i + 2])));
    p[3 * i] = g;
    p[3 * i + 1] = g;
    p[3 * i + 2] = g;
  }
}

// Sum of the truncated gray values of n <= 2^24 pixels (fits 32 bits: 255 * 2^24 < 2^32).
PB_VECTOR_CLONES uint32_t gray_sum_chunk(const uint8_t* p, size_t n) {
  uint32_t s = 0;
  for (size_t i = 0; i < n; ++i)
    s += static_cast<uint32_t>(gray_of(p[3 * i], p[3 * i + 1], p[3 * i + 2]));
  return s;
}

uint64_t gray_sum(const uint8_t* p, size_t n) {
  constexpr size_t kChunk = size_t{1} << 24;
  uint64_t s = 0;
  for (size_t i = 0; i < n; i += kChunk) s += gray_sum_chunk(p + 3 * i, std::min(kChunk, n - i));
  return s;
}

// _blend's coefficients for a Python-float ratio: torch multiplies img1 by float32(ratio)
// and img2 by float32(1.0 - ratio), the subtraction done in double.
struct Blend {
  float self, other;
};
Blend blend_coefficients(double ratio) {
  return {static_cast<float>(ratio), static_cast<float>(1.0 - ratio)};
}

// _blend(img, c, ratio) with a constant second image: ratio * x + c, where the caller has
// already formed c = float(1 - ratio) * other.
template <typename Store>
inline void blend_constant_loop(uint8_t* p, size_t bytes, float ratio, float c) {
  for (size_t i = 0; i < bytes; ++i) p[i] = Store::apply(ratio * static_cast<float>(p[i]) + c);
}

// _blend(img, rgb_to_grayscale(img), ratio): each channel blended with its pixel's gray.
template <typename Store>
inline void blend_with_gray_loop(uint8_t* p, size_t n, float ratio, float other) {
  for (size_t i = 0; i < n; ++i) {
    const float r = p[3 * i], g = p[3 * i + 1], b = p[3 * i + 2];
    const float o = other * gray_of(r, g, b);
    p[3 * i] = Store::apply(ratio * r + o);
    p[3 * i + 1] = Store::apply(ratio * g + o);
    p[3 * i + 2] = Store::apply(ratio * b + o);
  }
}

// _blend(img, q, ratio) for two images of `bytes` bytes.
template <typename Store>
inline void blend_images_loop(uint8_t* p, const uint8_t* q, size_t bytes, float ratio, float other) {
  for (size_t i = 0; i < bytes; ++i)
    p[i] = Store::apply(ratio * static_cast<float>(p[i]) + other * static_cast<float>(q[i]));
}

PB_VECTOR_CLONES void blend_constant_fast(uint8_t* p, size_t bytes, float ratio, float c) {
  blend_constant_loop<TruncateThenClamp>(p, bytes, ratio, c);
}
PB_VECTOR_CLONES void blend_with_gray_fast(uint8_t* p, size_t n, float ratio, float other) {
  blend_with_gray_loop<TruncateThenClamp>(p, n, ratio, other);
}
PB_VECTOR_CLONES void blend_images_fast(uint8_t* p, const uint8_t* q, size_t bytes, float ratio,
                                        float other) {
  blend_images_loop<TruncateThenClamp>(p, q, bytes, ratio, other);
}

void blend_constant(uint8_t* p, size_t bytes, float ratio, float c) {
  if (ratio <= kFastBlendFactorMax) {
    blend_constant_fast(p, bytes, ratio, c);
  } else {
    blend_constant_loop<ClampThenTruncate>(p, bytes, ratio, c);
  }
}
void blend_with_gray(uint8_t* p, size_t n, float ratio, float other) {
  if (ratio <= kFastBlendFactorMax) {
    blend_with_gray_fast(p, n, ratio, other);
  } else {
    blend_with_gray_loop<ClampThenTruncate>(p, n, ratio, other);
  }
}
void blend_images(uint8_t* p, const uint8_t* q, size_t bytes, float ratio, float other) {
  if (ratio <= kFastBlendFactorMax) {
    blend_images_fast(p, q, bytes, ratio, other);
  } else {
    blend_images_loop<ClampThenTruncate>(p, q, bytes, ratio, other);
  }
}

// adjust_hue on n pixels: x / 255 -> _rgb2hsv -> h = (h + hue) % 1 -> _hsv2rgb -> * 255,
// truncated. Branch-free so that it vectorises; every select picks exactly the value
// torchvision's masked sums produce (a mask times a finite value, plus zeros). Written on
// planar float arrays (r, g, b in, the output's r, g, b * 255 out, in place).
inline void hue_shift_planar(float* rs, float* gs, float* bs, size_t n, float hue) {
  for (size_t i = 0; i < n; ++i) {
    const float r = rs[i] / 255.0f, g = gs[i] / 255.0f, b = bs[i] / 255.0f;
    // _rgb2hsv
    const float maxc = max_of(max_of(r, g), b);
    const float minc = min_of(min_of(r, g), b);
    const bool eqc = maxc == minc;
    const float cr = maxc - minc;
    const float s = cr / (eqc ? 1.0f : maxc);
    const float crd = eqc ? 1.0f : cr;
    // h = hr + hg + hb with exactly one mask set (the max channel, r before g before b), the
    // others adding zeros:  max r: bc - gc;  max g: (2 + rc) - bc;  max b: (4 + gc) - rc,
    // where xc = (maxc - x) / crd. Only that case's two quotients are computed.
    const float dr = maxc - r, dg = maxc - g, db = maxc - b;
    const bool is_r = maxc == r;
    const bool is_g = (maxc == g) & !is_r;
    const float num_a = is_r ? db : is_g ? dr : dg;
    const float num_b = is_r ? dg : is_g ? db : dr;
    const float offset = is_r ? 0.0f : is_g ? 2.0f : 4.0f;
    float h = (offset + num_a / crd) - num_b / crd;
    // fmod(h / 6 + 1, 1): the sum lies in [5/6, 11/6), where fmod is an exact h - 1 above 1.
    h = h / 6.0f + 1.0f;
    const float h_wrapped = h - 1.0f;
    h = h >= 1.0f ? h_wrapped : h;
    // (h + hue) % 1.0, torch.remainder: fmod (exact here), then + 1 when negative.
    const float hh = h + hue;
    const float hh_down = hh - 1.0f, hh_up = hh + 1.0f;
    const float hm = hh >= 1.0f ? hh_down : hh < 0.0f ? hh_up : hh;
    // _hsv2rgb; hm >= 0 (or -0), so floor is truncation.
    const float h6 = hm * 6.0f;
    const int32_t sector = static_cast<int32_t>(h6);
    const float f = h6 - static_cast<float>(sector);
    const float v = maxc;
    // torch clamps p, q, t to [0, 1]; they never leave it (0 <= s, f < 1 and v <= 1, and
    // float rounding is monotone), so the clamps are dropped.
    const float p = v * (1.0f - s);
    const float q = v * (1.0f - s * f);
    const float t = v * (1.0f - s * (1.0f - f));
    // i % 6 (hm + 1 may round up to 1.0: sector 6); the einsum picks, per channel,
    //   R (v, q, p, p, t, v)   G (t, v, v, q, p, p)   B (p, p, t, v, v, q),
    // that is (a0, a1, p) rotated right by i / 2, with (a0, a1) = (v, t) for even i and
    // (q, v) for odd i.
    const int32_t k = sector == 6 ? 0 : sector;
    const bool odd = (k & 1) != 0, rot1 = k >= 2, rot2 = k >= 4;
    const float a0 = odd ? q : v, a1 = odd ? v : t;
    const float ro = rot2 ? a1 : rot1 ? p : a0;
    const float go = rot2 ? p : rot1 ? a0 : a1;
    const float bo = rot2 ? a0 : rot1 ? a1 : p;
    rs[i] = ro * 255.0f;
    gs[i] = go * 255.0f;
    bs[i] = bo * 255.0f;
  }
}

// Interleaved pixels in blocks: split into planes, hue_shift_planar, truncate back (GCC
// vectorises the interleaved loads and stores well apart, poorly inside the long loop).
PB_VECTOR_CLONES void hue_shift(uint8_t* px, size_t n, float hue) {
  constexpr size_t kBlock = 256;
  alignas(32) float rs[kBlock], gs[kBlock], bs[kBlock];
  for (size_t i0 = 0; i0 < n; i0 += kBlock) {
    const size_t m = std::min(kBlock, n - i0);
    uint8_t* p = px + 3 * i0;
    for (size_t i = 0; i < m; ++i) {
      rs[i] = p[3 * i];
      gs[i] = p[3 * i + 1];
      bs[i] = p[3 * i + 2];
    }
    hue_shift_planar(rs, gs, bs, m, hue);
    for (size_t i = 0; i < m; ++i) {
      p[3 * i] = static_cast<uint8_t>(static_cast<int32_t>(rs[i]));
      p[3 * i + 1] = static_cast<uint8_t>(static_cast<int32_t>(gs[i]));
      p[3 * i + 2] = static_cast<uint8_t>(static_cast<int32_t>(bs[i]));
    }
  }
}

// autocontrast's ((x - min) * scale).clamp(0, 255).to(uint8), per channel.
PB_VECTOR_CLONES void scale_channels(uint8_t* p, size_t n, const float* lo, const float* scale) {
  const float l0 = lo[0], l1 = lo[1], l2 = lo[2];
  const float s0 = scale[0], s1 = scale[1], s2 = scale[2];
  for (size_t i = 0; i < n; ++i) {
    // |(x - min) * scale| <= 255 * 255: truncating first is safe.
    p[3 * i] = TruncateThenClamp::apply((static_cast<float>(p[3 * i]) - l0) * s0);
    p[3 * i + 1] = TruncateThenClamp::apply((static_cast<float>(p[3 * i + 1]) - l1) * s1);
    p[3 * i + 2] = TruncateThenClamp::apply((static_cast<float>(p[3 * i + 2]) - l2) * s2);
  }
}

PB_VECTOR_CLONES void channel_min_max(const uint8_t* p, size_t n, uint8_t* lo, uint8_t* hi) {
  uint8_t l0 = 255, l1 = 255, l2 = 255, h0 = 0, h1 = 0, h2 = 0;
  for (size_t i = 0; i < n; ++i) {
    l0 = min_of(l0, p[3 * i]);
    l1 = min_of(l1, p[3 * i + 1]);
    l2 = min_of(l2, p[3 * i + 2]);
    h0 = max_of(h0, p[3 * i]);
    h1 = max_of(h1, p[3 * i + 1]);
    h2 = max_of(h2, p[3 * i + 2]);
  }
  lo[0] = l0, lo[1] = l1, lo[2] = l2;
  hi[0] = h0, hi[1] = h1, hi[2] = h2;
}

// Sharpness's smoothing of the interior: round(n / 13) for n = the 8 neighbours + 5 x the
// centre. n / 13 is never a half (2n is even, 13 odd), and its nearest halves are 1/26
// away, far beyond float32 error, so torch's float conv + round is exactly this integer.
PB_VECTOR_CLONES void smooth_row(const uint8_t* up, const uint8_t* mid, const uint8_t* down,
                                 uint8_t* out, ptrdiff_t bytes) {
  // bytes: the row minus one pixel at each end; every pointer starts at the second pixel.
  // The index is signed: with a size_t j, j - 3 wraps to 2^64 - 3 at j < 3 and the pointer
  // addition overflows (undefined behaviour that happened to work; UBSan's pointer-overflow
  // check found it, tests/fuzz/regressions/README.md). Signed, up[j - 3] is up - 3 + j, the
  // pixel to the left, inside the row.
  for (ptrdiff_t j = 0; j < bytes; ++j) {
    // n <= 13 * 255, so 2n + 13 fits 16 bits (and a 16-bit division by a constant vectorises).
    const uint16_t n2 = static_cast<uint16_t>(
        2 * (up[j - 3] + up[j] + up[j + 3] + mid[j - 3] + 5 * mid[j] + mid[j + 3] + down[j - 3] +
             down[j] + down[j + 3]) +
        13);
    out[j] = static_cast<uint8_t>(n2 / uint16_t{26});
  }
}

void apply_channel_luts_scalar(uint8_t* p, size_t n, const uint8_t (*lut)[256]) {
  const uint8_t *l0 = lut[0], *l1 = lut[1], *l2 = lut[2];
  for (size_t i = 0; i < n; ++i) {
    p[3 * i] = l0[p[3 * i]];
    p[3 * i + 1] = l1[p[3 * i + 1]];
    p[3 * i + 2] = l2[p[3 * i + 2]];
  }
}

// --- lookup tables -------------------------------------------------------------------------
//
// A kernel whose output value depends only on the input value (per channel) can build its
// 256-entry table with the very float32 expression of its per-pixel loop and then look the
// pixels up: the same values by construction. The lookup only pays where AVX-512 VBMI's
// 128-byte table permutes (vpermi2b) do it at a few instructions per 64 bytes (Intel Ice
// Lake and later, AMD Zen 4 and later): a scalar lookup costs about twice the vectorised
// float loops it would replace, so without VBMI the kernels keep those.
#if defined(__GNUC__) && defined(__x86_64__)
#define PB_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

bool have_vbmi() {
  static const bool yes = __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vbmi");
  return yes;
}

// The 256-entry table held in four 64-byte registers.
struct LutRegs {
  __m512i t[4];
};
PB_VBMI inline LutRegs load_lut(const uint8_t* lut) {
  return {{_mm512_loadu_si512(lut), _mm512_loadu_si512(lut + 64), _mm512_loadu_si512(lut + 128),
           _mm512_loadu_si512(lut + 192)}};
}
// lut[v] for 64 bytes: the low 7 bits index two 128-entry halves, the top bit picks one.
PB_VBMI inline __m512i lookup(const LutRegs& l, __m512i v) {
  const __m512i lo = _mm512_permutex2var_epi8(l.t[0], v, l.t[1]);
  const __m512i hi = _mm512_permutex2var_epi8(l.t[2], v, l.t[3]);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi);
}

PB_VBMI void apply_lut_vbmi(uint8_t* p, size_t bytes, const uint8_t* lut) {
  const LutRegs l = load_lut(lut);
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64)
    _mm512_storeu_si512(p + i, lookup(l, _mm512_loadu_si512(p + i)));
  if (i < bytes) {
    const __mmask64 m = _cvtu64_mask64(~uint64_t{0} >> (64 - (bytes - i)));
    _mm512_mask_storeu_epi8(p + i, m, lookup(l, _mm512_maskz_loadu_epi8(m, p + i)));
  }
}

// Three tables for interleaved RGB: 192 bytes (64 pixels) per step, each 64-byte block
// looked up in all three tables and blended by the channel of each byte.
PB_VBMI void apply_channel_luts_vbmi(uint8_t* p, size_t n, const uint8_t (*lut)[256]) {
  const LutRegs l0 = load_lut(lut[0]), l1 = load_lut(lut[1]), l2 = load_lut(lut[2]);
  // Bit i of green[j] / blue[j]: byte 64 j + i of a 192-byte block is green / blue.
  __mmask64 green[3], blue[3];
  for (int j = 0; j < 3; ++j) {
    uint64_t g = 0, b = 0;
    for (int i = 0; i < 64; ++i) {
      const int c = (64 * j + i) % 3;
      g |= uint64_t{c == 1} << i;
      b |= uint64_t{c == 2} << i;
    }
    green[j] = _cvtu64_mask64(g);
    blue[j] = _cvtu64_mask64(b);
  }
  auto block = [&](__m512i v, int j) PB_VBMI {
    const __m512i r = _mm512_mask_blend_epi8(green[j], lookup(l0, v), lookup(l1, v));
    return _mm512_mask_blend_epi8(blue[j], r, lookup(l2, v));
  };
  const size_t bytes = 3 * n;
  size_t i = 0;
  for (; i + 192 <= bytes; i += 192)
    for (int j = 0; j < 3; ++j)
      _mm512_storeu_si512(p + i + 64 * j, block(_mm512_loadu_si512(p + i + 64 * j), j));
  for (int j = 0; i < bytes; ++j, i += 64) {
    const size_t left = bytes - i;
    const __mmask64 m = _cvtu64_mask64(left >= 64 ? ~uint64_t{0} : ~uint64_t{0} >> (64 - left));
    _mm512_mask_storeu_epi8(p + i, m, block(_mm512_maskz_loadu_epi8(m, p + i), j));
  }
}
#else
bool have_vbmi() { return false; }
void apply_lut_vbmi(uint8_t*, size_t, const uint8_t*) {}
void apply_channel_luts_vbmi(uint8_t*, size_t, const uint8_t (*)[256]) {}
#endif

void apply_channel_luts(uint8_t* p, size_t n, const uint8_t (*lut)[256]) {
  if (have_vbmi()) {
    apply_channel_luts_vbmi(p, n, lut);
  } else {
    apply_channel_luts_scalar(p, n, lut);
  }
}

// _blend(img, c, ratio) with a constant second image as a table: the blend_constant loop's
// expression per value (the same Store as blend_constant picks; both give the same values).
void blend_constant_lut(float ratio, float c, uint8_t* lut) {
  for (int v = 0; v < 256; ++v) {
    const float x = ratio * static_cast<float>(v) + c;
    lut[v] = ratio <= kFastBlendFactorMax ? TruncateThenClamp::apply(x) : ClampThenTruncate::apply(x);
  }
}

// blend_constant, through a table where lookups are fast.
void blend_constant_any(uint8_t* p, size_t bytes, float ratio, float c) {
  if (have_vbmi()) {
    uint8_t lut[256];
    blend_constant_lut(ratio, c, lut);
    apply_lut_vbmi(p, bytes, lut);
  } else {
    blend_constant(p, bytes, ratio, c);
  }
}

// torchvision _get_gaussian_kernel1d in float32: x = -(k-1)/2 ... (k-1)/2 (integers:
// linspace's step is exactly 1), exp(-0.5 * (x / sigma)^2), divided by its sum. The
// weights come out exactly symmetric (x and -x square alike).
void gaussian_weights(int k, float sigma, float* w) {
  const float half = static_cast<float>(k - 1) * 0.5f;
  float sum = 0.0f;
  for (int i = 0; i < k; ++i) {
    const float x = (-half + static_cast<float>(i)) / sigma;
    w[i] = std::exp(-0.5f * (x * x));
    sum += w[i];
  }
  for (int i = 0; i < k; ++i) w[i] /= sum;
}

// The blur's two passes, each a symmetric 1-D convolution of radius r = k / 2 whose taps
// t and k-1-t share a weight: out = w[r] * centre + sum over t < r of w[t] * (pair sum).
// `taps(t)` gives the pair's rows. Sixteen outputs at a time stay in registers across the
// taps (GCC keeps the fixed-size block in two AVX registers).
template <typename Taps>
inline void symmetric_taps(size_t len, const float* centre, const float* w, int r, Taps taps,
                           float* out) {
  // GCC's generic vectors: 8 floats, unaligned, plain IEEE float32 operations per lane. Four
  // of them (32 outputs) stay in registers across all the taps.
  typedef float Vec __attribute__((vector_size(32), aligned(4)));
  constexpr size_t kLanes = 8, kVecs = 4, kBlock = kLanes * kVecs;
  const float wc = w[r];
  size_t j0 = 0;
  for (; j0 + kBlock <= len; j0 += kBlock) {
    Vec acc[kVecs];
    for (size_t v = 0; v < kVecs; ++v) acc[v] = wc * *reinterpret_cast<const Vec*>(centre + j0 + v * kLanes);
    for (int t = 0; t < r; ++t) {
      const auto [a, b] = taps(t);
      const float wt = w[t];
      for (size_t v = 0; v < kVecs; ++v)
        acc[v] += wt * (*reinterpret_cast<const Vec*>(a + j0 + v * kLanes) +
                        *reinterpret_cast<const Vec*>(b + j0 + v * kLanes));
    }
    for (size_t v = 0; v < kVecs; ++v) *reinterpret_cast<Vec*>(out + j0 + v * kLanes) = acc[v];
  }
  for (; j0 < len; ++j0) {
    float acc = wc * centre[j0];
    for (int t = 0; t < r; ++t) {
      const auto [a, b] = taps(t);
      acc += w[t] * (a[j0] + b[j0]);
    }
    out[j0] = acc;
  }
}

// Horizontal: every row of `img` (uint8, H x W x 3), reflect-padded into `pad`, convolved
// into `out` (float32, H x 3W). Rows are interleaved RGB: a horizontal tap is 3 floats.
PB_VECTOR_CLONES void blur_rows(const uint8_t* img, int h, int w, const float* weights, int k,
                                float* pad, float* out) {
  const int r = k / 2;
  const size_t len = static_cast<size_t>(w) * 3;
  for (int y = 0; y < h; ++y) {
    const uint8_t* src = img + static_cast<size_t>(y) * len;
    for (size_t j = 0; j < len; ++j) pad[3 * static_cast<size_t>(r) + j] = src[j];
    for (int i = 1; i <= r; ++i)  // torch "reflect": the edge pixel is not repeated
      for (int c = 0; c < 3; ++c) {
        pad[3 * (r - i) + c] = src[3 * i + c];
        pad[3 * (r + w - 1 + i) + c] = src[3 * (w - 1 - i) + c];
      }
    auto taps = [pad, k](int t) { return std::pair{pad + 3 * t, pad + 3 * (k - 1 - t)}; };
    symmetric_taps(len, pad + 3 * r, weights, r, taps, out + static_cast<size_t>(y) * len);
  }
}

// Vertical: the rows of `rows` (float32, H x len) convolved with reflected row indices,
// rounded half to even into `out` (uint8, H x len). `acc` holds one row.
PB_VECTOR_CLONES void blur_columns(const float* rows, int h, size_t len, const float* weights,
                                   int k, float* acc, uint8_t* out) {
  const int r = k / 2;
  auto row = [rows, h, len](int y) {
    y = y < 0 ? -y : y >= h ? 2 * (h - 1) - y : y;
    return rows + static_cast<size_t>(y) * len;
  };
  for (int y = 0; y < h; ++y) {
    auto taps = [&row, y, r](int t) { return std::pair{row(y - r + t), row(y + r - t)}; };
    symmetric_taps(len, row(y), weights, r, taps, acc);
    uint8_t* o = out + static_cast<size_t>(y) * len;
    for (size_t j = 0; j < len; ++j) {
      // torch.round (half to even): adding and removing 1.5 * 2^23 rounds a float below
      // 2^22 to an integer in the current (nearest-even) mode, exactly.
      const float v = (acc[j] + 0x1.8p23f) - 0x1.8p23f;
      o[j] = TruncateThenClamp::apply(v);
    }
  }
}

}  // namespace

void adjust_brightness(Image& img, double factor) {
  need_rgb(img, "adjust_brightness");
  need_range("adjust_brightness", "factor", factor, 0, HUGE_VAL);
  // _blend(img, zeros_like(img), factor)
  const Blend k = blend_coefficients(factor);
  blend_constant_any(img.ptr(), img.size_bytes(), k.self, k.other * 0.0f);
}

void adjust_contrast(Image& img, double factor) {
  need_rgb(img, "adjust_contrast");
  need_range("adjust_contrast", "factor", factor, 0, HUGE_VAL);
  const size_t n = pixel_count(img);
  if (n == 0) return;
  // _blend(img, mean, factor), mean = torch.mean of the float32 gray image: its sum / n in
  // float32. The sum of integers is exact in float32 below 2^24 (any image up to 65793
  // pixels); above, torch's float summation may round differently from this exact sum.
  const float mean = static_cast<float>(gray_sum(img.ptr(), n)) / static_cast<float>(n);
  const Blend k = blend_coefficients(factor);
  blend_constant_any(img.ptr(), img.size_bytes(), k.self, k.other * mean);
}

void adjust_saturation(Image& img, double factor) {
  need_rgb(img, "adjust_saturation");
  need_range("adjust_saturation", "factor", factor, 0, HUGE_VAL);
  // _blend(img, rgb_to_grayscale(img), factor)
  const Blend k = blend_coefficients(factor);
  blend_with_gray(img.ptr(), pixel_count(img), k.self, k.other);
}

void adjust_hue(Image& img, float factor) {
  need_rgb(img, "adjust_hue");
  need_range("adjust_hue", "factor", factor, -0.5, 0.5);
  hue_shift(img.ptr(), pixel_count(img), factor);
}

void rgb_to_grayscale(Image& img) {
  need_rgb(img, "rgb_to_grayscale");
  gray_in_place(img.ptr(), pixel_count(img));
}

void autocontrast(Image& img) {
  need_rgb(img, "autocontrast");
  const size_t n = pixel_count(img);
  if (n == 0) return;
  uint8_t lo8[3], hi8[3];
  channel_min_max(img.ptr(), n, lo8, hi8);
  float lo[3], scale[3];
  for (int c = 0; c < 3; ++c) {
    // scale = 255.0 / (max - min) is (max - min).reciprocal() * 255.0 in torch; a channel
    // with max == min gets an infinite scale, replaced by min = 0, scale = 1 (identity).
    const float range = static_cast<float>(hi8[c]) - static_cast<float>(lo8[c]);
    const bool flat = hi8[c] == lo8[c];
    lo[c] = flat ? 0.0f : static_cast<float>(lo8[c]);
    scale[c] = flat ? 1.0f : (1.0f / range) * 255.0f;
  }
  if (have_vbmi()) {
    // scale_channels' expression per value.
    uint8_t lut[3][256];
    for (int c = 0; c < 3; ++c)
      for (int v = 0; v < 256; ++v)
        lut[c][v] = TruncateThenClamp::apply((static_cast<float>(v) - lo[c]) * scale[c]);
    apply_channel_luts_vbmi(img.ptr(), n, lut);
  } else {
    scale_channels(img.ptr(), n, lo, scale);
  }
}

void equalize(Image& img) {
  need_rgb(img, "equalize");
  const size_t n = pixel_count(img);
  const uint8_t* p = img.ptr();
  // Four histograms per channel (pixel index mod 4), so that runs of equal values (common
  // in photos) do not chain every increment through the same counter.
  std::array<std::array<uint32_t, 256>, 12> h{};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint8_t* q = p + 3 * i;
    for (int k = 0; k < 12; ++k) ++h[k][q[k]];
  }
  for (; i < n; ++i)
    for (int c = 0; c < 3; ++c) ++h[c][p[3 * i + c]];
  uint8_t lut[3][256];
  bool any = false;
  for (int c = 0; c < 3; ++c) {
    int64_t hist[256];
    int last = 0;
    for (int v = 0; v < 256; ++v) {
      hist[v] = int64_t{h[c][v]} + h[c + 3][v] + h[c + 6][v] + h[c + 9][v];
      if (hist[v] != 0) last = v;
    }
    // _scale_channel: step = (sum of the non-zero bins but the last) // 255; 0: unchanged.
    const int64_t step = (static_cast<int64_t>(n) - hist[last]) / 255;
    if (step == 0) {
      for (int v = 0; v < 256; ++v) lut[c][v] = static_cast<uint8_t>(v);
      continue;
    }
    any = true;
    // lut = (cumsum(hist) + step // 2) // step, shifted right by one (lut[0] = 0), clamped.
    int64_t cum = 0;
    lut[c][0] = 0;
    for (int v = 1; v < 256; ++v) {
      cum += hist[v - 1];
      lut[c][v] = static_cast<uint8_t>(std::min<int64_t>(255, (cum + step / 2) / step));
    }
  }
  if (any) apply_channel_luts(img.ptr(), n, lut);
}

void posterize(Image& img, int bits) {
  need_rgb(img, "posterize");
  need_range("posterize", "bits", bits, 0, 8);
  // torch: img & -int(2 ** (8 - bits)), the mask taken modulo 256 (bits 0: mask 0).
  const uint8_t mask = static_cast<uint8_t>(-(1 << (8 - bits)));
  uint8_t* p = img.ptr();
  const size_t bytes = img.size_bytes();
  for (size_t i = 0; i < bytes; ++i) p[i] &= mask;
}

void solarize(Image& img, float threshold) {
  need_rgb(img, "solarize");
  need_range("solarize", "threshold", threshold, 0, 256);
  // torch compares float32(x) >= float32(threshold): find the first value that passes.
  int first = 0;
  while (first < 256 && static_cast<float>(first) < threshold) ++first;
  if (first > 255) return;
  const uint8_t t = static_cast<uint8_t>(first);
  uint8_t* p = img.ptr();
  const size_t bytes = img.size_bytes();
  for (size_t i = 0; i < bytes; ++i) p[i] = p[i] >= t ? static_cast<uint8_t>(255 - p[i]) : p[i];
}

void invert(Image& img) {
  need_rgb(img, "invert");
  uint8_t* p = img.ptr();
  const size_t bytes = img.size_bytes();
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(255 - p[i]);
}

void adjust_sharpness(Image& img, double factor, Image& scratch) {
  need_rgb(img, "adjust_sharpness");
  need_range("adjust_sharpness", "factor", factor, 0, HUGE_VAL);
  const int h = img.height, w = img.width;
  if (h <= 2 || w <= 2) return;  // torchvision returns such an image unchanged
  // The degenerate image: the smoothed interior inside the original one-pixel border.
  scratch.resize(h, w, 3);
  const size_t row = img.row_bytes();
  std::copy(img.row(0), img.row(0) + row, scratch.row(0));
  std::copy(img.row(h - 1), img.row(h - 1) + row, scratch.row(h - 1));
  for (int y = 1; y < h - 1; ++y) {
    uint8_t* out = scratch.row(y);
    const uint8_t* mid = img.row(y);
    std::copy(mid, mid + 3, out);
    std::copy(mid + row - 3, mid + row, out + row - 3);
    smooth_row(img.row(y - 1) + 3, mid + 3, img.row(y + 1) + 3, out + 3,
               static_cast<ptrdiff_t>(row) - 6);
  }
  // _blend over the whole image, the border included (ratio * x + (1 - ratio) * x can
  // truncate to x - 1, as in torchvision).
  const Blend k = blend_coefficients(factor);
  blend_images(img.ptr(), scratch.ptr(), img.size_bytes(), k.self, k.other);
}

void gaussian_blur(Image& img, int kernel_size, float sigma, Image& scratch) {
  need_rgb(img, "gaussian_blur");
  if (kernel_size < 1 || kernel_size % 2 == 0)
    throw std::invalid_argument("gaussian_blur: kernel_size must be odd and >= 1, got " +
                                std::to_string(kernel_size));
  if (!(sigma > 0.0f))
    throw std::invalid_argument("gaussian_blur: sigma must be > 0, got " + std::to_string(sigma));
  if (img.height == 0 || img.width == 0) return;
  if (kernel_size / 2 >= std::min(img.height, img.width))
    throw std::invalid_argument(
        "gaussian_blur: kernel_size " + std::to_string(kernel_size) + " needs an image larger than " +
        std::to_string(kernel_size / 2) + " pixels on both sides (torch's reflect padding), got " +
        std::to_string(img.width) + " x " + std::to_string(img.height) + " W x H");
  // Float32 throughout, rounded at the end, as torchvision's conv2d on the float image and
  // _cast_squeeze_out (OpenCV's 8-bit path would quantise the weights to 8 bits instead).
  // Scratch holds, as floats: the weights (k < 2W), one padded row (3W + 6r < 9W), one
  // accumulator row (3W), and the horizontally blurred image (H x 3W): at most H + 5 rows of
  // 3W floats. (Its bytes come from operator new: aligned for float.)
  const int h = img.height, w = img.width, r = kernel_size / 2;
  const size_t len = static_cast<size_t>(w) * 3;
  scratch.resize(h + 5, static_cast<int>(len * sizeof(float)), 1);
  float* weights = reinterpret_cast<float*>(scratch.ptr());
  float* pad = weights + kernel_size;
  float* acc = pad + len + 6 * static_cast<size_t>(r);
  float* rows = acc + len;
  gaussian_weights(kernel_size, sigma, weights);
  blur_rows(img.ptr(), h, w, weights, kernel_size, pad, rows);
  blur_columns(rows, h, len, weights, kernel_size, acc, img.ptr());
}

}  // namespace pipebench
