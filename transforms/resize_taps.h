// Internal to the resampling engine (resize.cpp, resize_kernels.cpp): the tap tables of
// one axis (which source pixels each output reads, with which weights) and the horizontal
// pass's per-lane tables. Built per call into storage that only grows (no allocation once
// the largest image and output were seen).
//
// Lanes: lane j of an output row is pixel j / C, channel j % C (interleaved HWC), in the
// output's order (a mirrored output is another table); blocks of 16 lanes. Positions are
// in values of the row segment that starts at source column c0 of the window.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "transforms/aligned_vector.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace pipebench::detail {

// Tables and rows the kernels read 64 bytes at a time start on a cache line
// (transforms/aligned_vector.h).
using pipebench::AlignedVector;

constexpr int kLanes = 16;  // values per block of the horizontal pass
constexpr int kPad = 64;    // floats (or bytes) readable past a row's end

// The tables hold the outputs first .. last - 1 only (index i = d - first): the whole axis
// for the area filter (a downscale, so no more entries than source pixels), the kept ones
// for linear / cubic, whose upscales may be hundreds of times the source (a 65000 x 1 image
// resized to 256 rows is 16.6 million columns: tables of the whole axis took 0.7 GB).
struct AxisTaps {
  int taps = 0;               // K
  std::vector<int> start;     // contiguous form: output d reads [start[i], start[i] + K)
  std::vector<float> weight;  // [i * K + k]
  std::vector<int> rows;      // row form (vertical axis of linear / cubic): [i * K + k]
  std::vector<int16_t> fixed; // row form: OpenCV's fixed-point weights, [i * K + k]
  std::vector<int16_t> wint;  // contiguous form of linear / cubic: the weights as int16
  // What the tables hold (kind 0: none yet), so that a repeated call reuses them.
  int kind = 0, src = 0, dst = 0, first = 0, last = 0;
  // area_taps' scratch: per output its first tap, count and (left, middle, right) weights.
  struct Footprint {
    int first, count;
    float left, middle, right;
    bool has_left, has_right;
  };
  std::vector<Footprint> footprint;
  bool holds(int k, int s, int d, int f, int l) {
    if (kind == k && src == s && dst == d && first == f && last == l) return true;
    kind = k, src = s, dst = d, first = f, last = l;
    return false;
  }
};

struct LanePlan {
  int taps = 0, channels = 0, lanes = 0, blocks = 0;
  int c0 = 0, c1 = 0;            // source columns read, relative to the window: [c0, c1)
  std::vector<int32_t> base;     // per block: first float of the row it reads
  std::vector<uint8_t> reach;    // per block: 0 = 32 floats, 1 = 64, 2 = wider (scalar)
  AlignedVector<int32_t> index;  // [block * 16 + lane]: tap 0's float, relative to base
  AlignedVector<float> weight;   // [(block * K + k) * 16 + lane]
  // Byte form, for linear / cubic with AVX-512 VBMI (bytes = true when built and every
  // block's taps lie within 128 bytes of its base): per block, two 64-byte index vectors
  // (taps 0, 1 and taps 2, 3: lane j's first tap at byte 4j, its second at 4j + 2, relative
  // to base) and the matching int16 weights (lane j's at int16 2j and 2j + 1; 0 past K).
  bool bytes = false;
  AlignedVector<uint8_t> bindex;   // [block * 128 + 64 * pair + byte]
  AlignedVector<int16_t> bweight;  // [block * 64 + 32 * pair + 2j + tap % 2]
  std::vector<int> pos;          // scratch: [lane] tap 0's float in the row
  // What the tables hold, so that a repeated call reuses them (kind 0: none yet).
  int kind = 0, src = 0, dst = 0, keep_x = 0, width = 0;
  bool mirror = false, want_bytes = false;
};

// Lanes of the kept outputs keep_x .. keep_x + width - 1 (mirrored: in reverse), C channels.

// cvRound: to nearest, ties to even (the default rounding mode), as OpenCV's own
// _mm_cvtss_si32; std::lrint is a libm call on baseline x86-64.
inline long round_even(float v) {
#if defined(__x86_64__)
  return _mm_cvtss_si32(_mm_set_ss(v));
#else
  return std::lrint(v);
#endif
}

/// OpenCV's computeResizeAreaTab for one axis, padded to K taps per output (contiguous
/// form); pipebench's earlier area weights, bit for bit. Reuses t when it holds (src, dst).
void area_taps(int src, int dst, AxisTaps& t);
/// OpenCV 4.6's INTER_LINEAR (K = 2) / INTER_CUBIC (K = 4) taps for 8-bit images, of the
/// outputs first .. last - 1 only (each output's taps depend on its own index alone): the
/// horizontal axis in the contiguous form, replicated borders merged, weights as integer
/// floats and int16 (wint); the vertical axis in the row form (rows, fixed).
void fixed_point_columns(int src, int dst, int first, int last, bool cubic, AxisTaps& t);
void fixed_point_rows(int src, int dst, int first, int last, bool cubic, AxisTaps& t);
/// The lane tables of the kept outputs keep_x .. keep_x + width - 1 (mirrored: in reverse;
/// t must hold them), C channels; want_bytes: the byte form too (linear / cubic: t holds wint, K <= 4), and then
/// not the float tables when every block fits the byte form. Reuses p when it holds them.
void build_plan(const AxisTaps& t, int keep_x, int width, int C, bool mirror, bool want_bytes,
                LanePlan& p);

}  // namespace pipebench::detail
