// The resampling engine's tap tables (resize_taps.h).
// OpenCV computes its cubic coefficients in plain float operations, and so must this file,
// whatever the target: transforms/CMakeLists.txt compiles it with -ffp-contract=off (a
// fused multiply-add would change a weight).

#include "transforms/resize_taps.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace pipebench::detail {
namespace {

// floor and ceil of a non-negative double, exactly (without a libm call on baseline x86-64).
inline int floor_pos(double v) { return static_cast<int>(v); }
inline int ceil_pos(double v) {
  const int i = static_cast<int>(v);
  return static_cast<double>(i) < v ? i + 1 : i;
}

// OpenCV 4.6 interpolateCubic (A = -0.75), float arithmetic as written there.
void cubic_coefficients(float x, float* c) {
  const float A = -0.75f;
  c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
  c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = 1.f - c[0] - c[1] - c[2];
}

// saturate_cast<short>(v * 2048): cvRound, then saturation.
int16_t fixed_weight(float c) {
  const long r = round_even(c * 2048.0f);
  return static_cast<int16_t>(std::clamp<long>(r, SHRT_MIN, SHRT_MAX));
}

// OpenCV 4.6 hal::resize's tables for INTER_LINEAR (K = 2) and INTER_CUBIC (K = 4) on 8-bit
// images: fx = (float)((d + 0.5) * scale - 0.5) with scale = 1 / (dst / (double)src),
// sx = floor(fx), fx -= sx; linear weights (1 - fx, fx), with fx = 0 and sx clamped when
// sx < 0 or sx >= src - 1 on the horizontal axis only; cubic weights interpolateCubic(fx);
// each saturate_cast<short>(c * 2048). Taps at sx + k (linear) or sx - 1 + k (cubic),
// clamped to [0, src - 1] (replicated borders). Writes K positions and weights per output
// d of first .. last - 1, at (d - first) * K.
void fixed_point_taps(int src, int dst, int first, int last, bool cubic, bool horizontal,
                      int* pos, int16_t* w) {
  const double scale = 1.0 / (static_cast<double>(dst) / src);
  const int K = cubic ? 4 : 2;
  for (int d = first; d < last; ++d) {
    float fx = static_cast<float>((d + 0.5) * scale - 0.5);
    int sx = static_cast<int>(fx);  // floor, without a libm call on baseline x86-64
    if (static_cast<float>(sx) > fx) --sx;
    fx -= static_cast<float>(sx);
    float c[4];
    if (cubic) {
      cubic_coefficients(fx, c);
    } else {
      if (horizontal && sx < 0) fx = 0, sx = 0;
      if (horizontal && sx >= src - 1) fx = 0, sx = src - 1;
      c[0] = 1.f - fx;
      c[1] = fx;
    }
    const int tap0 = cubic ? sx - 1 : sx;
    const size_t i = static_cast<size_t>(d - first) * K;
    for (int k = 0; k < K; ++k) {
      pos[i + k] = std::clamp(tap0 + k, 0, src - 1);
      w[i + k] = fixed_weight(c[k]);
    }
  }
}

void build_byte_plan(const AxisTaps& t, int keep_x, int width, bool mirror, LanePlan& p) {
  const int K = t.taps, C = p.channels;
  p.bindex.resize(static_cast<size_t>(p.blocks) * 128);
  p.bweight.resize(static_cast<size_t>(p.blocks) * 64);
  // The last block's lanes past the outputs: index 0, weight 0.
  std::fill(p.bindex.end() - 128, p.bindex.end(), 0);
  std::fill(p.bweight.end() - 64, p.bweight.end(), 0);
  for (int o = 0; o < width; ++o) {
    const int d = keep_x + (mirror ? width - 1 - o : o) - t.first;
    const int16_t* w = t.wint.data() + static_cast<size_t>(d) * K;
    for (int c = 0; c < C; ++c) {
      const int lane = o * C + c;
      const int b = lane / kLanes, j = lane % kLanes;
      const int rel = p.pos[lane] - p.base[b];
      if (rel + C * (K - 1) >= 128) {  // beyond two registers: the float pass does this row
        p.bytes = false;
        return;
      }
      uint8_t* idx = p.bindex.data() + static_cast<size_t>(b) * 128 + 4 * j;
      int16_t* wt = p.bweight.data() + static_cast<size_t>(b) * 64 + 2 * j;
      for (int k = 0; k < 4; ++k) {
        idx[64 * (k / 2) + 2 * (k % 2)] = static_cast<uint8_t>(k < K ? rel + C * k : rel);
        idx[64 * (k / 2) + 2 * (k % 2) + 1] = 0;  // the odd bytes are zeroed by the mask
        wt[32 * (k / 2) + k % 2] = k < K ? w[k] : 0;
      }
    }
  }
}

// build_plan's float tables: every output lane's index and its K weights (K = 0: p.taps).
template <int K>
void fill_float_tables(const AxisTaps& t, int keep_x, int width, bool mirror, LanePlan& p) {
  const int taps = K > 0 ? K : p.taps;
  const int C = p.channels;
  const float* weights = t.weight.data();
  const int* pos = p.pos.data();
  const int32_t* base = p.base.data();
  int32_t* index = p.index.data();
  float* table = p.weight.data();
  for (int o = 0; o < width; ++o) {
    const int d = keep_x + (mirror ? width - 1 - o : o) - t.first;
    const float* w = weights + static_cast<size_t>(d) * taps;
    for (int c = 0; c < C; ++c) {
      const int lane = o * C + c;
      const int b = lane / kLanes, j = lane % kLanes;
      index[lane] = pos[lane] - base[b];
      float* dst = table + static_cast<size_t>(b) * taps * kLanes + j;
      for (int k = 0; k < taps; ++k) dst[k * kLanes] = w[k];
    }
  }
}

}  // namespace

// OpenCV's computeResizeAreaTab for one axis (each output averages the source over its
// footprint, partial pixels weighted by coverage), padded to K taps per output; near the
// end the K-wide window slides left so it stays inside. The arithmetic of every weight is
// pipebench's earlier area_taps (the bits of every area resize depend on it); the middle
// weights, all 1 / cell, are computed once per output.
void area_taps(int src, int dst, AxisTaps& t) {
  if (t.holds(1, src, dst, 0, dst)) return;
  const double scale = static_cast<double>(src) / dst;
  const float middle = static_cast<float>(1.0 / scale);  // 1 / cell wherever cell == scale
  t.footprint.resize(dst);
  int k_max = 1;
  for (int d = 0; d < dst; ++d) {
    const double f1 = d * scale;
    const double f2 = f1 + scale;
    const double cell = std::min(scale, src - f1);
    int s2 = floor_pos(f2);
    int s1 = ceil_pos(f1);
    s2 = std::min(s2, src - 1);
    s1 = std::min(s1, s2);
    AxisTaps::Footprint& fp = t.footprint[d];
    fp.has_left = s1 - f1 > 1e-3;
    fp.has_right = f2 - s2 > 1e-3;
    fp.left = fp.has_left ? static_cast<float>((s1 - f1) / cell) : 0.0f;
    fp.middle = cell == scale ? middle : static_cast<float>(1.0 / cell);
    fp.right = fp.has_right ? static_cast<float>(std::min(std::min(f2 - s2, 1.0), cell) / cell) : 0.0f;
    fp.first = fp.has_left ? s1 - 1 : s1;
    fp.count = (s2 - s1 > 0 ? s2 - s1 : 0) + fp.has_left + fp.has_right;
    k_max = std::max(k_max, fp.count);
  }
  t.taps = std::min(k_max, src);
  const int K = t.taps;
  t.start.resize(dst);
  t.weight.assign(static_cast<size_t>(dst) * K, 0.0f);
  for (int d = 0; d < dst; ++d) {
    const AxisTaps::Footprint& fp = t.footprint[d];
    const int st = std::min(fp.first, src - K);
    t.start[d] = st;
    float* dw = t.weight.data() + static_cast<size_t>(d) * K + (fp.first - st);
    int k = 0;
    if (fp.has_left) dw[k++] = fp.left;
    const int middle = fp.count - fp.has_left - fp.has_right;
    for (int i = 0; i < middle; ++i) dw[k++] = fp.middle;
    if (fp.has_right) dw[k++] = fp.right;
  }
}

// Horizontal axis of linear / cubic in the contiguous form: replicated taps merged (the
// integer sums are exact, so merging changes nothing). The weights are OpenCV's integers,
// as floats (the float pass's sums, below 2^24, are then OpenCV's integer sums exactly) and
// as int16 (wint, for the byte pass).
void fixed_point_columns(int src, int dst, int first, int last, bool cubic, AxisTaps& t) {
  if (t.holds(cubic ? 3 : 2, src, dst, first, last)) return;
  const int K = cubic ? 4 : 2;
  const int n = last - first;
  t.rows.resize(static_cast<size_t>(n) * K);
  t.fixed.resize(static_cast<size_t>(n) * K);
  fixed_point_taps(src, dst, first, last, cubic, true, t.rows.data(), t.fixed.data());
  t.taps = std::min(K, src);
  t.start.resize(n);
  t.weight.assign(static_cast<size_t>(n) * t.taps, 0.0f);
  t.wint.assign(static_cast<size_t>(n) * t.taps, 0);
  for (int d = 0; d < n; ++d) {
    const int* p = t.rows.data() + static_cast<size_t>(d) * K;
    const int16_t* w = t.fixed.data() + static_cast<size_t>(d) * K;
    const int st = std::clamp(p[0], 0, src - t.taps);
    t.start[d] = st;
    int sum[4] = {0, 0, 0, 0};  // |sum| <= 2816 (the cubic weights' absolute sum): an int16
    for (int k = 0; k < K; ++k) sum[p[k] - st] += w[k];
    for (int k = 0; k < t.taps; ++k) {
      t.weight[static_cast<size_t>(d) * t.taps + k] = static_cast<float>(sum[k]);
      t.wint[static_cast<size_t>(d) * t.taps + k] = static_cast<int16_t>(sum[k]);
    }
  }
}

// Vertical axis of linear / cubic in the row form (OpenCV blends replicated rows one by one).
void fixed_point_rows(int src, int dst, int first, int last, bool cubic, AxisTaps& t) {
  if (t.holds(cubic ? 5 : 4, src, dst, first, last)) return;
  t.taps = cubic ? 4 : 2;
  t.rows.resize(static_cast<size_t>(last - first) * t.taps);
  t.fixed.resize(static_cast<size_t>(last - first) * t.taps);
  fixed_point_taps(src, dst, first, last, cubic, false, t.rows.data(), t.fixed.data());
}

void build_plan(const AxisTaps& t, int keep_x, int width, int C, bool mirror, bool want_bytes,
                LanePlan& p) {
  if (p.kind == t.kind && p.src == t.src && p.dst == t.dst && p.keep_x == keep_x &&
      p.width == width && p.channels == C && p.mirror == mirror && p.want_bytes == want_bytes) {
    return;
  }
  p.kind = t.kind, p.src = t.src, p.dst = t.dst, p.keep_x = keep_x, p.width = width;
  p.mirror = mirror, p.want_bytes = want_bytes;
  const int K = t.taps;
  p.taps = K;
  p.channels = C;
  p.lanes = width * C;
  p.blocks = (p.lanes + kLanes - 1) / kLanes;
  p.c0 = INT_MAX;
  p.c1 = 0;
  const int* start = t.start.data() + (keep_x - t.first);
  for (int o = 0; o < width; ++o) {
    p.c0 = std::min(p.c0, start[o]);
    p.c1 = std::max(p.c1, start[o] + K);
  }
  p.base.resize(p.blocks);
  p.reach.resize(p.blocks);
  p.pos.resize(p.lanes);
  for (int o = 0; o < width; ++o) {
    const int first = (start[mirror ? width - 1 - o : o] - p.c0) * C;
    for (int c = 0; c < C; ++c) p.pos[o * C + c] = first + c;
  }
  for (int b = 0; b < p.blocks; ++b) {
    const int n = std::min(kLanes, p.lanes - b * kLanes);
    const int* pos = p.pos.data() + b * kLanes;
    int lo = INT_MAX, hi = 0;
    for (int j = 0; j < n; ++j) lo = std::min(lo, pos[j]), hi = std::max(hi, pos[j]);
    p.base[b] = lo;
    const int span = hi - lo + C * (K - 1) + 1;
    p.reach[b] = span <= 32 ? 0 : span <= 64 ? 1 : 2;
  }
  p.bytes = want_bytes && K <= 4;
  if (p.bytes) build_byte_plan(t, keep_x, width, mirror, p);
  if (p.bytes) return;  // the float tables are not needed
  p.index.resize(static_cast<size_t>(p.blocks) * kLanes);
  p.weight.resize(static_cast<size_t>(p.blocks) * K * kLanes);
  // Every lane of an output is written below; the last block's other lanes read 0.
  const int last = (p.blocks - 1) * kLanes;
  std::fill(p.index.begin() + last, p.index.end(), 0);
  std::fill(p.weight.begin() + static_cast<size_t>(last) * K, p.weight.end(), 0.0f);
  switch (K) {  // the tap count fixed at compile time for the common ones (unrolled copies)
    case 1: return fill_float_tables<1>(t, keep_x, width, mirror, p);
    case 2: return fill_float_tables<2>(t, keep_x, width, mirror, p);
    case 3: return fill_float_tables<3>(t, keep_x, width, mirror, p);
    case 4: return fill_float_tables<4>(t, keep_x, width, mirror, p);
    case 5: return fill_float_tables<5>(t, keep_x, width, mirror, p);
    default: return fill_float_tables<0>(t, keep_x, width, mirror, p);
  }
}

}  // namespace pipebench::detail
