// Normalize (normalize.h). Each channel's 256 possible outputs are computed into a lookup
// table with exactly torchvision's float arithmetic, (v / 255 - mean) / std (once per
// thread and statistics), so the per-pixel work is a table lookup and the results are
// bit-identical to the formula (and identical between the HWC and the NCHW forms).
// With AVX-512 the lookup runs 16 values at a time on the table held in 16 registers:
// eight two-register permutes pick within each 32-entry eighth by the index's low
// 5 bits, three levels of blends choose among them by bits 5, 6 and 7. Same values as the
// scalar loop (it copies table entries), at about a third of its time.
#include "transforms/normalize.h"
#include "transforms/x86_avx512.h"

#include <cmath>
#include <cstring>
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


// The table of (mean, std), computed once per thread for the statistics last used.
const Lut& lut_for(const std::array<float, 3>& mean, const std::array<float, 3>& std,
                   const char* what) {
  thread_local Lut lut;
  thread_local std::array<float, 3> last_mean{}, last_std{};
  thread_local bool valid = false;
  // Compared bit for bit (a -0.0 mean gives other values than 0.0 through the formula).
  if (!valid || std::memcmp(&last_mean, &mean, sizeof mean) != 0 ||
      std::memcmp(&last_std, &std, sizeof std) != 0) {
    valid = false;
    make_lut(mean, std, lut, what);  // throws for a bad std or mean
    last_mean = mean, last_std = std, valid = true;
  }
  return lut;
}

// out[i] = table[in[i * stride]] for i < n: one channel of an HWC row (stride 3) or plane
// (stride 1).
void lookup_scalar(const uint8_t* __restrict in, size_t stride, size_t n,
                   const float* __restrict table, float* __restrict out) {
  for (size_t i = 0; i < n; ++i) out[i] = table[in[i * stride]];
}

#if defined(PB_X86_AVX512)
bool have_avx512() { return detail::cpu_has_avx512() && resample_simd(); }  // the tests' switch (resize.h)

struct Table16 {
  __m512 t[16];  // entries 16 r .. 16 r + 15
};

PB_AVX512 inline __m512 lookup16(const Table16& tab, __m512i idx) {
  __m512 v[8];
  for (int m = 0; m < 8; ++m) v[m] = _mm512_permutex2var_ps(tab.t[2 * m], idx, tab.t[2 * m + 1]);
  const __mmask16 b5 = _mm512_test_epi32_mask(idx, _mm512_set1_epi32(32));
  const __mmask16 b6 = _mm512_test_epi32_mask(idx, _mm512_set1_epi32(64));
  const __mmask16 b7 = _mm512_test_epi32_mask(idx, _mm512_set1_epi32(128));
  for (int m = 0; m < 4; ++m) v[m] = _mm512_mask_blend_ps(b5, v[2 * m], v[2 * m + 1]);
  for (int m = 0; m < 2; ++m) v[m] = _mm512_mask_blend_ps(b6, v[2 * m], v[2 * m + 1]);
  return _mm512_mask_blend_ps(b7, v[0], v[1]);
}

// Channel c of n HWC pixels (3 bytes each) into one plane.
PB_AVX512 void lookup_hwc_avx512(const uint8_t* in, int c, size_t n, const float* table, float* out) {
  Table16 tab;
  for (int r = 0; r < 16; ++r) tab.t[r] = _mm512_load_ps(table + 16 * r);
  // Lane p of the plane is byte 3p + c of the 48: from the first 32 (registers 0, 1), then
  // from register 2 (as resize.cpp's Planes).
  alignas(64) int32_t i1[16], i2[16];
  for (int p = 0; p < 16; ++p) {
    const int v = 3 * p + c;
    i1[p] = v < 32 ? v : 0;
    i2[p] = v < 32 ? p : 16 + (v - 32);
  }
  const __m512i first = _mm512_load_si512(i1), second = _mm512_load_si512(i2);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const uint8_t* s = in + 3 * i;
    const __m512i a = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
    const __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16)));
    const __m512i d = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32)));
    const __m512i idx = _mm512_permutex2var_epi32(_mm512_permutex2var_epi32(a, first, b), second, d);
    _mm512_storeu_ps(out + i, lookup16(tab, idx));
  }
  lookup_scalar(in + 3 * i + c, 3, n - i, table, out + i);
}

PB_AVX512 void lookup_plane_avx512(const uint8_t* in, size_t n, const float* table, float* out) {
  Table16 tab;
  for (int r = 0; r < 16; ++r) tab.t[r] = _mm512_load_ps(table + 16 * r);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i idx = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    _mm512_storeu_ps(out + i, lookup16(tab, idx));
  }
  lookup_scalar(in + i, 1, n - i, table, out + i);
}
#endif

void lookup_hwc(const uint8_t* in, int c, size_t n, const float* table, float* out) {
#if defined(PB_X86_AVX512)
  if (have_avx512()) return lookup_hwc_avx512(in, c, n, table, out);
#endif
  lookup_scalar(in + c, 3, n, table, out);
}

void lookup_plane(const uint8_t* in, size_t n, const float* table, float* out) {
#if defined(PB_X86_AVX512)
  if (have_avx512()) return lookup_plane_avx512(in, n, table, out);
#endif
  lookup_scalar(in, 1, n, table, out);
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
  const Lut& lut = lut_for(mean, std, "normalize_to_chw");
  const size_t n = static_cast<size_t>(src.height) * src.width;
  for (int c = 0; c < 3; ++c) lookup_hwc(src.ptr(), c, n, lut.v[c], out + c * n);
}

ChannelAffine normalize_affine(const std::array<float, 3>& mean, const std::array<float, 3>& std) {
  Lut check;  // the same validation as the table's
  make_lut(mean, std, check, "normalize");
  ChannelAffine a;
  for (int c = 0; c < 3; ++c) {
    a.scale[c] = static_cast<float>(1.0 / (255.0 * static_cast<double>(std[c])));
    a.bias[c] = static_cast<float>(-static_cast<double>(mean[c]) / static_cast<double>(std[c]));
  }
  return a;
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
  const Lut& lut = lut_for(mean, std, "normalize_batch_nchw");
  const size_t plane = static_cast<size_t>(height) * width;
  for (int s = 0; s < n; ++s) {
    for (int c = 0; c < 3; ++c) {
      const size_t off = (static_cast<size_t>(s) * 3 + c) * plane;
      lookup_plane(in + off, plane, lut.v[c], out + off);
    }
  }
}

}  // namespace pipebench
