// The resampling engine's passes (resize_kernels.h).
//
// No fused multiply-adds: transforms/CMakeLists.txt compiles this file with
// -ffp-contract=off, so the AVX-512 kernels give the scalar loops' bits (a fused
// multiply-add rounds once where the scalar code rounds twice).
#include "transforms/resize_kernels.h"
#include "transforms/x86_avx512.h"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace pipebench::detail {
namespace {

std::atomic<bool> g_simd{true};  // set_simd (tests)

// ---- Scalar passes (every CPU; the AVX-512 ones perform the same operations) ----------

inline uint8_t to_u8(float v, Round r) {
  if (r == Round::kHalfUp) {  // pipebench's earlier rule for some area outputs: (int)(v + 0.5)
    const int i = static_cast<int>(v + 0.5f);
    return static_cast<uint8_t>(i > 255 ? 255 : i < 0 ? 0 : i);
  }
  if (!(v < 256.0f)) return 255;  // (also keeps round_even's int in range)
  const long n = round_even(v);
  return static_cast<uint8_t>(n <= 0 ? 0 : n >= 255 ? 255 : n);
}

// One lane of block b: acc = w0 * v0, then acc += wk * vk in tap order.
inline float lane_sum(const float* row, const LanePlan& p, int b, int j) {
  const float* v = row + p.base[b] + p.index[static_cast<size_t>(b) * kLanes + j];
  const float* w = p.weight.data() + static_cast<size_t>(b) * p.taps * kLanes + j;
  float acc = w[0] * v[0];
  for (int k = 1; k < p.taps; ++k) acc = acc + w[k * kLanes] * v[k * p.channels];
  return acc;
}

void hpass_block_scalar(const float* row, const LanePlan& p, int b, Round r, const HOut& o) {
  const int n = std::min(kLanes, p.lanes - b * kLanes);
  for (int j = 0; j < n; ++j) {
    const float acc = lane_sum(row, p, b, j);
    const int i = b * kLanes + j;
    if (r == Round::kRaw) {
      o.f[i] = acc;
    } else if (r == Round::kShift4) {
      o.d[i] = static_cast<int16_t>(static_cast<int>(acc) >> 4);
    } else {
      o.q[i] = to_u8(acc, r);
    }
  }
}

void hpass_scalar(const float* row, const LanePlan& p, Round r, const HOut& o) {
  for (int b = 0; b < p.blocks; ++b) hpass_block_scalar(row, p, b, r, o);
}

// Area vertical pass over n values: t = w0 * r0, then t += wk * rk for each non-zero wk.
void vpass_area_scalar(const uint8_t* const* rows, const float* w, int K, size_t n, float* t) {
  {
    const uint8_t* __restrict in = rows[0];
    const float w0 = w[0];
    for (size_t i = 0; i < n; ++i) t[i] = w0 * in[i];
  }
  for (int k = 1; k < K; ++k) {
    const float wk = w[k];
    if (wk == 0.0f) continue;
    const uint8_t* __restrict in = rows[k];
    for (size_t i = 0; i < n; ++i) t[i] += wk * in[i];
  }
}

void to_float_scalar(const uint8_t* in, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i) out[i] = in[i];
}

// OpenCV's VResizeCubicVec_32s8u: D the horizontal pass's integer sums (as floats, exact),
// b = w * 2^-22 (exact), the float operations in OpenCV's order.
inline uint8_t cubic_vector_value(const float* const* D, const float* b, size_t i) {
  float v = D[3][i] * b[3];
  v = D[2][i] * b[2] + v;
  v = D[1][i] * b[1] + v;
  v = D[0][i] * b[0] + v;
  return to_u8(v, Round::kHalfEven);
}

// OpenCV's scalar tail, FixedPtCast<int, uchar, 22>: (sum D_int * w + 2^21) >> 22, saturated.
inline uint8_t cubic_tail(const float* const* D, const int16_t* w, size_t i) {
  int64_t v = 0;
  for (int k = 0; k < 4; ++k) v += static_cast<int64_t>(D[k][i]) * w[k];
  const int64_t r = (v + (int64_t{1} << 21)) >> 22;
  return static_cast<uint8_t>(r < 0 ? 0 : r > 255 ? 255 : r);
}

// OpenCV's VResizeLinearVec_32s8u, which it applies to every value of the row, on
// D = (integer sum) >> 4: ((D0 * b0) >> 16) + ((D1 * b1) >> 16), then (+ 2) >> 2, saturated.
inline uint8_t linear_value(const int16_t* const* D, const int16_t* w, size_t i) {
  const int s = (((D[0][i] * w[0]) >> 16) + ((D[1][i] * w[1]) >> 16) + 2) >> 2;
  return static_cast<uint8_t>(s < 0 ? 0 : s > 255 ? 255 : s);
}

void vpass_cubic_scalar(const float* const* D, const float* b, size_t n, uint8_t* q) {
  for (size_t i = 0; i < n; ++i) q[i] = cubic_vector_value(D, b, i);
}

void vpass_linear_scalar(const int16_t* const* D, const int16_t* w, size_t n, uint8_t* q) {
  for (size_t i = 0; i < n; ++i) q[i] = linear_value(D, w, i);
}

// One uint8 RGB row (n pixels) into the three planes: q * scale[c] + bias[c].
void emit_chw_scalar(const uint8_t* q, int n, const ChannelAffine& a, float* r, float* g,
                     float* b) {
  for (int x = 0; x < n; ++x) {
    r[x] = static_cast<float>(q[3 * x]) * a.scale[0] + a.bias[0];
    g[x] = static_cast<float>(q[3 * x + 1]) * a.scale[1] + a.bias[1];
    b[x] = static_cast<float>(q[3 * x + 2]) * a.scale[2] + a.bias[2];
  }
}

// ---- AVX-512 kernels -------------------------------------------------------------------

#if defined(PB_X86_AVX512)

bool have_avx512() { return cpu_has_avx512() && g_simd.load(std::memory_order_relaxed); }

PB_AVX512 inline __mmask16 tail_mask(int n) {
  return n >= kLanes ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
}

PB_AVX512 inline __m512 load_u8_ps(const uint8_t* p) {
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}

PB_AVX512 inline __m512 load_u8_ps_masked(const uint8_t* p, __mmask16 m) {
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, p)));
}

// Rounds 16 sums to uint8 (saturating) and stores the first n.
PB_AVX512 inline void store_u8(__m512 acc, Round r, uint8_t* q, __mmask16 m) {
  // (r is a constant wherever this is inlined.)
  __m512i i32 = r == Round::kHalfUp ? _mm512_cvttps_epi32(_mm512_add_ps(acc, _mm512_set1_ps(0.5f)))
                                    : _mm512_cvtps_epi32(acc);  // MXCSR: nearest, ties to even
  i32 = _mm512_max_epi32(i32, _mm512_setzero_si512());
  _mm512_mask_cvtusepi32_storeu_epi8(q, m, i32);
}

// Block b of the horizontal pass with K taps (0: p.taps, read at run time): 16 lanes'
// sums, w0 * v0 + w1 * v1 + ... in tap order.
template <int K>
PB_AVX512 inline __attribute__((always_inline)) __m512 block_sum(const float* row, const LanePlan& p, int b) {
  const int taps = K > 0 ? K : p.taps;
  if (p.reach[b] == 2) {  // wider than 64 floats: lane by lane (same operations)
    alignas(64) float lanes[kLanes] = {};
    const int n = std::min(kLanes, p.lanes - b * kLanes);
    for (int j = 0; j < n; ++j) lanes[j] = lane_sum(row, p, b, j);
    return _mm512_load_ps(lanes);
  }
  const __m512i step = _mm512_set1_epi32(p.channels);
  const float* weight = p.weight.data() + static_cast<size_t>(b) * taps * kLanes;
  const float* v = row + p.base[b];
  __m512i idx = _mm512_loadu_si512(p.index.data() + static_cast<size_t>(b) * kLanes);
  const __m512 r0 = _mm512_loadu_ps(v), r1 = _mm512_loadu_ps(v + 16);
  __m512 acc;
  if (p.reach[b] == 0) {
    acc = _mm512_mul_ps(_mm512_loadu_ps(weight), _mm512_permutex2var_ps(r0, idx, r1));
#pragma GCC unroll 16
    for (int k = 1; k < taps; ++k) {
      idx = _mm512_add_epi32(idx, step);
      acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_loadu_ps(weight + k * kLanes),
                                             _mm512_permutex2var_ps(r0, idx, r1)));
    }
    return acc;
  }
  const __m512 r2 = _mm512_loadu_ps(v + 32), r3 = _mm512_loadu_ps(v + 48);
  const __m512i bit5 = _mm512_set1_epi32(32);
  const auto pick = [&](__m512i i) PB_AVX512 {  // clang does not pass the target on to lambdas
    return _mm512_mask_blend_ps(_mm512_test_epi32_mask(i, bit5), _mm512_permutex2var_ps(r0, i, r1),
                                _mm512_permutex2var_ps(r2, i, r3));
  };
  acc = _mm512_mul_ps(_mm512_loadu_ps(weight), pick(idx));
#pragma GCC unroll 16
  for (int k = 1; k < taps; ++k) {
    idx = _mm512_add_epi32(idx, step);
    acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_loadu_ps(weight + k * kLanes), pick(idx)));
  }
  return acc;
}

// The horizontal pass into the row R names (HOut).
template <int K, Round R>
PB_AVX512 void hpass_avx512_k(const float* row, const LanePlan& p, const HOut& o) {
  const int full = p.lanes / kLanes;  // blocks whose 16 lanes are all outputs
  for (int b = 0; b < p.blocks; ++b) {
    const __m512 acc = block_sum<K>(row, p, b);
    const __mmask16 m = b < full ? static_cast<__mmask16>(0xFFFF) : tail_mask(p.lanes - b * kLanes);
    if constexpr (R == Round::kRaw) {
      _mm512_mask_storeu_ps(o.f + b * kLanes, m, acc);
    } else if constexpr (R == Round::kShift4) {
      const __m512i d = _mm512_srai_epi32(_mm512_cvttps_epi32(acc), 4);
      _mm512_mask_cvtepi32_storeu_epi16(o.d + b * kLanes, m, d);
    } else {
      store_u8(acc, R, o.q + b * kLanes, m);
    }
  }
}

// Three interleaved RGB vectors (16 pixels) into the three planes through the affine map:
// plane c's lane p is value 3p + c of the 48, picked from the first two vectors, then from
// the third.
struct Planes {
  __m512i first[3], second[3];
  __m512 scale[3], bias[3];
  float* out[3];
  PB_AVX512 Planes(const ChannelAffine& a, float* r, float* g, float* b) : out{r, g, b} {
    alignas(64) int32_t i1[3][16], i2[3][16];
    for (int c = 0; c < 3; ++c) {
      for (int j = 0; j < 16; ++j) {
        const int v = 3 * j + c;
        i1[c][j] = v < 32 ? v : 0;
        i2[c][j] = v < 32 ? j : 16 + (v - 32);
      }
      first[c] = _mm512_load_si512(i1[c]);
      second[c] = _mm512_load_si512(i2[c]);
      scale[c] = _mm512_set1_ps(a.scale[c]);
      bias[c] = _mm512_set1_ps(a.bias[c]);
    }
  }
  // q0..q2: 48 interleaved values (pixels x .. x + 15); stores the pixels in mask m,
  // streaming where all 16 are stored on one cache line (fence_streaming_stores after).
  PB_AVX512 void store(__m512 q0, __m512 q1, __m512 q2, int x, __mmask16 m) const {
    for (int c = 0; c < 3; ++c) {
      const __m512 t = _mm512_permutex2var_ps(q0, first[c], q1);
      const __m512 plane = _mm512_permutex2var_ps(t, second[c], q2);
      const __m512 v = _mm512_add_ps(_mm512_mul_ps(plane, scale[c]), bias[c]);
      float* d = out[c] + x;
      if (m == 0xFFFF && (reinterpret_cast<uintptr_t>(d) & 63) == 0) {
        _mm512_stream_ps(d, v);
      } else {
        _mm512_mask_storeu_ps(d, m, v);
      }
    }
  }
};

// to_u8's value as a float, for the area filter's sums: rounded (R), no saturation needed
// (the weights are >= 0 and sum to 1 within float rounding, so a sum lies in [0, 255.001]
// and rounds into 0..255).
template <Round R>
PB_AVX512 inline __m512 round_u8_ps(__m512 v) {
  if constexpr (R == Round::kHalfUp) {
    return _mm512_roundscale_ps(_mm512_add_ps(v, _mm512_set1_ps(0.5f)), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  } else {
    return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
}

// The area filter's horizontal pass of a 3-channel row straight into the planes: 16 pixels (3 blocks) at
// a time, the same values as hpass_avx512_k's uint8 row mapped by emit_chw.
template <int K, Round R>
PB_AVX512 void hpass_chw_avx512_k(const float* row, const LanePlan& p, const Planes& planes) {
  const int pixels = p.lanes / 3;
  for (int b = 0, x = 0; b < p.blocks; b += 3, x += kLanes) {
    const __m512 q0 = round_u8_ps<R>(block_sum<K>(row, p, b));
    const __m512 q1 = b + 1 < p.blocks ? round_u8_ps<R>(block_sum<K>(row, p, b + 1)) : _mm512_setzero_ps();
    const __m512 q2 = b + 2 < p.blocks ? round_u8_ps<R>(block_sum<K>(row, p, b + 2)) : _mm512_setzero_ps();
    planes.store(q0, q1, q2, x, tail_mask(pixels - x));
  }
}

template <Round R>
PB_AVX512 void hpass_chw_avx512_r(const float* row, const LanePlan& p, const Planes& planes) {
  switch (p.taps) {
    case 1: return hpass_chw_avx512_k<1, R>(row, p, planes);
    case 2: return hpass_chw_avx512_k<2, R>(row, p, planes);
    case 3: return hpass_chw_avx512_k<3, R>(row, p, planes);
    case 4: return hpass_chw_avx512_k<4, R>(row, p, planes);
    case 5: return hpass_chw_avx512_k<5, R>(row, p, planes);
    default: return hpass_chw_avx512_k<0, R>(row, p, planes);
  }
}

PB_AVX512 void hpass_chw_avx512(const float* row, const LanePlan& p, Round r, const ChannelAffine& a,
                                float* red, float* green, float* blue) {
  const Planes planes(a, red, green, blue);
  if (r == Round::kHalfUp) return hpass_chw_avx512_r<Round::kHalfUp>(row, p, planes);
  hpass_chw_avx512_r<Round::kHalfEven>(row, p, planes);
}

template <Round R>
PB_AVX512 void hpass_avx512_r(const float* row, const LanePlan& p, const HOut& o) {
  switch (p.taps) {
    case 1: return hpass_avx512_k<1, R>(row, p, o);
    case 2: return hpass_avx512_k<2, R>(row, p, o);
    case 3: return hpass_avx512_k<3, R>(row, p, o);
    case 4: return hpass_avx512_k<4, R>(row, p, o);
    case 5: return hpass_avx512_k<5, R>(row, p, o);
    case 6: return hpass_avx512_k<6, R>(row, p, o);
    default: return hpass_avx512_k<0, R>(row, p, o);
  }
}

PB_AVX512 void hpass_avx512(const float* row, const LanePlan& p, Round r, const HOut& o) {
  switch (r) {
    case Round::kRaw: return hpass_avx512_r<Round::kRaw>(row, p, o);
    case Round::kHalfEven: return hpass_avx512_r<Round::kHalfEven>(row, p, o);
    case Round::kHalfUp: return hpass_avx512_r<Round::kHalfUp>(row, p, o);
    case Round::kShift4: return hpass_avx512_r<Round::kShift4>(row, p, o);
  }
}

// The area vertical pass with K taps (0: read at run time), 32 values per step. Taps with
// weight 0 are added, not skipped as the scalar pass does: the sums are >= +0, so adding
// +0 * x changes no bit.
template <int K>
PB_AVX512 void vpass_area_avx512_k(const uint8_t* const* rows, const float* w, int taps_rt,
                                   size_t n, float* t) {
  const int taps = K > 0 ? K : taps_rt;
  // Weights and rows in registers for the fixed tap counts (GCC would reload them: t might
  // alias them, for all it knows).
  constexpr int kHeld = K > 0 ? K : 1;
  __m512 wv[kHeld];
  const uint8_t* rv[kHeld];
  for (int k = 0; k < kHeld; ++k) wv[k] = _mm512_set1_ps(w[k]), rv[k] = rows[k];
  size_t i = 0;
  if constexpr (K > 0) {
    for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
      __m512 a = _mm512_mul_ps(wv[0], load_u8_ps(rv[0] + i));
      __m512 b = _mm512_mul_ps(wv[0], load_u8_ps(rv[0] + i + kLanes));
#pragma GCC unroll 16
      for (int k = 1; k < K; ++k) {
        a = _mm512_add_ps(a, _mm512_mul_ps(wv[k], load_u8_ps(rv[k] + i)));
        b = _mm512_add_ps(b, _mm512_mul_ps(wv[k], load_u8_ps(rv[k] + i + kLanes)));
      }
      _mm512_storeu_ps(t + i, a);
      _mm512_storeu_ps(t + i + kLanes, b);
    }
  }
  for (; i < n; i += kLanes) {
    const __mmask16 m = tail_mask(static_cast<int>(n - i));
    __m512 a = _mm512_mul_ps(_mm512_set1_ps(w[0]), load_u8_ps_masked(rows[0] + i, m));
    for (int k = 1; k < taps; ++k)
      a = _mm512_add_ps(a, _mm512_mul_ps(_mm512_set1_ps(w[k]), load_u8_ps_masked(rows[k] + i, m)));
    _mm512_mask_storeu_ps(t + i, m, a);
  }
}

PB_AVX512 void vpass_area_avx512(const uint8_t* const* rows, const float* w, int K, size_t n,
                                 float* t) {
  switch (K) {
    case 1: return vpass_area_avx512_k<1>(rows, w, K, n, t);
    case 2: return vpass_area_avx512_k<2>(rows, w, K, n, t);
    case 3: return vpass_area_avx512_k<3>(rows, w, K, n, t);
    case 4: return vpass_area_avx512_k<4>(rows, w, K, n, t);
    case 5: return vpass_area_avx512_k<5>(rows, w, K, n, t);
    default: return vpass_area_avx512_k<0>(rows, w, K, n, t);
  }
}

PB_AVX512 void to_float_avx512(const uint8_t* in, size_t n, float* out) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) _mm512_storeu_ps(out + i, load_u8_ps(in + i));
  if (i < n) {
    const __mmask16 m = tail_mask(static_cast<int>(n - i));
    _mm512_mask_storeu_ps(out + i, m, load_u8_ps_masked(in + i, m));
  }
}

PB_AVX512 void vpass_cubic_avx512(const float* const* D, const float* b, size_t n, uint8_t* q) {
  const __m512 b0 = _mm512_set1_ps(b[0]), b1 = _mm512_set1_ps(b[1]), b2 = _mm512_set1_ps(b[2]),
               b3 = _mm512_set1_ps(b[3]);
  for (size_t i = 0; i < n; i += kLanes) {
    const __mmask16 m = tail_mask(static_cast<int>(n - i));
    __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, D[3] + i), b3);
    v = _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, D[2] + i), b2), v);
    v = _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, D[1] + i), b1), v);
    v = _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, D[0] + i), b0), v);
    store_u8(v, Round::kHalfEven, q + i, m);
  }
}

PB_AVX512 void vpass_linear_avx512(const int16_t* const* D, const int16_t* w, size_t n, uint8_t* q) {
  // OpenCV's own 16-bit operations, 32 values at a time (no sum saturates: D <= 32640).
  const __m512i w0 = _mm512_set1_epi16(w[0]), w1 = _mm512_set1_epi16(w[1]);
  const __m512i two = _mm512_set1_epi16(2), zero = _mm512_setzero_si512();
  for (size_t i = 0; i < n; i += 32) {
    const __mmask32 m = n - i >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << (n - i)) - 1);
    const __m512i d0 = _mm512_maskz_loadu_epi16(m, D[0] + i), d1 = _mm512_maskz_loadu_epi16(m, D[1] + i);
    __m512i s = _mm512_adds_epi16(_mm512_mulhi_epi16(d0, w0), _mm512_mulhi_epi16(d1, w1));
    s = _mm512_srai_epi16(_mm512_adds_epi16(s, two), 2);
    _mm512_mask_cvtusepi16_storeu_epi8(q + i, m, _mm512_max_epi16(s, zero));
  }
}

// One uint8 RGB row (n pixels, kPad readable bytes past it) into the three planes.
PB_AVX512 void emit_chw_avx512(const uint8_t* q, int n, const ChannelAffine& a, float* r,
                               float* g, float* b) {
  const Planes planes(a, r, g, b);
  for (int x = 0; x < n; x += kLanes) {
    const uint8_t* s = q + 3 * x;
    planes.store(load_u8_ps(s), load_u8_ps(s + 16), load_u8_ps(s + 32), x, tail_mask(n - x));
  }
}

#define PB_VBMI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi")))

// The linear / cubic horizontal pass on the source bytes: per block, a vpermi2b gathers two
// taps of each of the 16 lanes from the 128 bytes at its base, zero-extended to int16 (the
// mask clears every odd byte), vpmaddwd multiplies them by the int16 weights and adds each
// lane's pair; four taps take a second gather and a second vpmaddwd. OpenCV's exact integer
// sums, as the float pass's. Stores them as floats (R == kRaw) or int16 >> 4 (kShift4).
template <Round R, bool kFourTaps>
PB_VBMI void hpass_bytes_vbmi_k(const uint8_t* row, const LanePlan& p, const HOut& o) {
  const int full = p.lanes / kLanes;
  const __mmask64 even = 0x5555555555555555ull;  // zero-extends the gathered bytes to int16
  const uint8_t* index = p.bindex.data();
  const int16_t* weight = p.bweight.data();
  for (int b = 0; b < p.blocks; ++b, index += 128, weight += 64) {
    const uint8_t* v = row + p.base[b];
    const __m512i lo = _mm512_loadu_si512(v), hi = _mm512_loadu_si512(v + 64);
    const __m512i taps01 = _mm512_maskz_permutex2var_epi8(even, lo, _mm512_load_si512(index), hi);
    __m512i sum = _mm512_madd_epi16(taps01, _mm512_load_si512(weight));
    if constexpr (kFourTaps) {
      const __m512i taps23 = _mm512_maskz_permutex2var_epi8(even, lo, _mm512_load_si512(index + 64), hi);
      sum = _mm512_add_epi32(sum, _mm512_madd_epi16(taps23, _mm512_load_si512(weight + 32)));
    }
    const __mmask16 m = b < full ? static_cast<__mmask16>(0xFFFF) : tail_mask(p.lanes - b * kLanes);
    if constexpr (R == Round::kRaw) {
      _mm512_mask_storeu_ps(o.f + b * kLanes, m, _mm512_cvtepi32_ps(sum));
    } else {
      _mm512_mask_cvtepi32_storeu_epi16(o.d + b * kLanes, m, _mm512_srai_epi32(sum, 4));
    }
  }
}

template <Round R>
PB_VBMI void hpass_bytes_vbmi(const uint8_t* row, const LanePlan& p, const HOut& o) {
  if (p.taps > 2) return hpass_bytes_vbmi_k<R, true>(row, p, o);
  hpass_bytes_vbmi_k<R, false>(row, p, o);
}

#endif  // PB_X86_AVX512

}  // namespace

void set_simd(bool on) { g_simd.store(on, std::memory_order_relaxed); }
bool simd_enabled() { return g_simd.load(std::memory_order_relaxed); }

bool have_vbmi() {
#if defined(PB_X86_AVX512)
  static const bool yes = __builtin_cpu_supports("avx512vbmi");
  return yes && have_avx512();
#else
  return false;
#endif
}

uint8_t cubic_tail_value(const float* const* D, const int16_t* w, size_t i) {
  return cubic_tail(D, w, i);
}

void hpass_bytes(const uint8_t* row, const LanePlan& p, Round r, const HOut& o) {
#if defined(PB_X86_AVX512)
  if (r == Round::kRaw) return hpass_bytes_vbmi<Round::kRaw>(row, p, o);
  hpass_bytes_vbmi<Round::kShift4>(row, p, o);
#else
  (void)row, (void)p, (void)r, (void)o;
#endif
}

void hpass(const float* row, const LanePlan& p, Round r, const HOut& o) {
#if defined(PB_X86_AVX512)
  if (have_avx512()) return hpass_avx512(row, p, r, o);
#endif
  hpass_scalar(row, p, r, o);
}

// The horizontal pass of a 3-channel row into row y of the planes (rounding r); false where
// it is not available (then: hpass into a uint8 row, and emit_chw).
bool hpass_chw(const float* row, const LanePlan& p, Round r, const ChannelAffine& a, float* red,
               float* green, float* blue) {
#if defined(PB_X86_AVX512)
  if (have_avx512()) {
    hpass_chw_avx512(row, p, r, a, red, green, blue);
    return true;
  }
#endif
  (void)row, (void)p, (void)r, (void)a, (void)red, (void)green, (void)blue;
  return false;
}

void vpass_area(const uint8_t* const* rows, const float* w, int K, size_t n, float* t) {
#if defined(PB_X86_AVX512)
  if (have_avx512()) return vpass_area_avx512(rows, w, K, n, t);
#endif
  vpass_area_scalar(rows, w, K, n, t);
}

void to_float(const uint8_t* in, size_t n, float* out) {
#if defined(PB_X86_AVX512)
  if (have_avx512()) return to_float_avx512(in, n, out);
#endif
  to_float_scalar(in, n, out);
}

void vpass_cubic(const float* const* D, const float* b, size_t n, uint8_t* q) {
#if defined(PB_X86_AVX512)
  if (have_avx512()) return vpass_cubic_avx512(D, b, n, q);
#endif
  vpass_cubic_scalar(D, b, n, q);
}

void vpass_linear(const int16_t* const* D, const int16_t* w, size_t n, uint8_t* q) {
#if defined(PB_X86_AVX512)
  if (have_avx512()) return vpass_linear_avx512(D, w, n, q);
#endif
  vpass_linear_scalar(D, w, n, q);
}

void emit_chw(const uint8_t* q, int n, const ChannelAffine& a, float* r, float* g, float* b) {
#if defined(PB_X86_AVX512)
  if (have_avx512()) return emit_chw_avx512(q, n, a, r, g, b);
#endif
  emit_chw_scalar(q, n, a, r, g, b);
}

void fence_streaming_stores() {
#if defined(PB_X86_AVX512)
  if (have_avx512()) _mm_sfence();
#endif
}

}  // namespace pipebench::detail
