// Internal to the resampling engine (resize.cpp): its passes, each with a scalar version
// for every CPU and an AVX-512 one (VBMI for the byte pass) picked at run time, both with
// the same operations in the same order, so the same bits. Rows are interleaved HWC values
// (C channels) unless named planes; "lanes" as in resize_taps.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transforms/resize.h"
#include "transforms/resize_taps.h"

namespace pipebench::detail {

// How the horizontal pass stores its sums: kRaw as floats; kHalfEven / kHalfUp rounded to
// uint8; kShift4 as int16 sum >> 4, the first step of OpenCV's linear vertical pass (the
// linear sums are integers in [0, 255 * 2048]).
enum class Round { kRaw, kHalfEven, kHalfUp, kShift4 };

// Where the horizontal pass writes: q (uint8), f (float) or d (int16), as its Round says.
struct HOut {
  uint8_t* q = nullptr;
  float* f = nullptr;
  int16_t* d = nullptr;
};

/// The switch behind resample_use_simd (resize.h): false runs the scalar passes.
void set_simd(bool on);
bool simd_enabled();
/// AVX-512 with VBMI present and the switch on: the byte pass (hpass_bytes) may run.
bool have_vbmi();

/// The horizontal pass of a float row (positions from p's float tables) into o.
void hpass(const float* row, const LanePlan& p, Round r, const HOut& o);
/// The area filter's horizontal pass of a 3-channel float row straight into one row of the
/// three planes, out = q * a.scale[c] + a.bias[c]; false (nothing written) where only the
/// scalar passes run (then: hpass into a uint8 row and emit_chw: the same values).
bool hpass_chw(const float* row, const LanePlan& p, Round r, const ChannelAffine& a, float* red,
               float* green, float* blue);
/// The linear / cubic horizontal pass on a source row's bytes (128 readable past the row's
/// end) with p's byte tables: kRaw stores the integer sums as floats, kShift4 as int16 >> 4.
/// Only where have_vbmi() and p.bytes.
void hpass_bytes(const uint8_t* row, const LanePlan& p, Round r, const HOut& o);
/// The area vertical pass: t[i] = w[0] * rows[0][i] + ... + w[K-1] * rows[K-1][i], i < n.
void vpass_area(const uint8_t* const* rows, const float* w, int K, size_t n, float* t);
void to_float(const uint8_t* in, size_t n, float* out);
/// OpenCV's cubic vertical pass (float, on D the horizontal integer sums, b = w * 2^-22) and
/// its integer rounding of a row's last values (cubic_tail_value).
void vpass_cubic(const float* const* D, const float* b, size_t n, uint8_t* q);
uint8_t cubic_tail_value(const float* const* D, const int16_t* w, size_t i);
/// OpenCV's linear vertical pass on D = integer sums >> 4 (int16).
void vpass_linear(const int16_t* const* D, const int16_t* w, size_t n, uint8_t* q);
/// One uint8 RGB row (n pixels, 64 readable bytes past it) into the three planes.
void emit_chw(const uint8_t* q, int n, const ChannelAffine& a, float* r, float* g, float* b);
/// hpass_chw and emit_chw write each plane's 64-byte-aligned 16-value runs with streaming
/// stores (the tensor goes to memory, not this core's cache); this orders them (sfence)
/// before whatever hands the tensor to another thread. Call once after the passes.
void fence_streaming_stores();

}  // namespace pipebench::detail
