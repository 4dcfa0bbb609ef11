// The resampling engine (resize.h): argument checks, the scratch, and the two layouts of the
// work per output row, over the tap tables of resize_taps.h and the passes of
// resize_kernels.h:
//   area            vertical pass first (as pipebench's earlier version, for the same bits):
//                   K source rows blended into one float row over the columns the kept
//                   outputs read; then the horizontal pass, K taps per output value (with
//                   to_chw, straight into the planes).
//   linear, cubic   horizontal pass first (as OpenCV, for its bits): each source row the
//                   kept rows need is filtered horizontally once into OpenCV's exact integer
//                   sums (from its bytes with AVX-512 VBMI, else as floats), kept in a ring
//                   of 4 rows; then OpenCV's vertical pass.
// The horizontal pass's tables are built per call (a few microseconds for 224 outputs) in
// the output's order, so a mirrored output is just another table.
#include "transforms/resize.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "transforms/resize_kernels.h"
#include "transforms/resize_taps.h"

namespace pipebench {
namespace {

using namespace detail;

// ---- Checks ----------------------------------------------------------------------------

std::string shape_str(int h, int w) { return std::to_string(h) + " x " + std::to_string(w); }

void check_args(const Image& src, const CropWindow& win, int oh, int ow, const CropWindow& keep,
                const char* what) {
  if (src.height <= 0 || src.width <= 0 || (src.channels != 1 && src.channels != 3) ||
      src.data.size() < src.size_bytes()) {
    throw std::invalid_argument(std::string(what) +
                                ": source image must be non-empty with 1 or 3 channels, got " +
                                shape_str(src.height, src.width) + " x " +
                                std::to_string(src.channels));
  }
  if (win.width <= 0 || win.height <= 0 || win.x < 0 || win.y < 0 ||
      win.x > src.width - win.width || win.y > src.height - win.height) {
    throw std::invalid_argument(
        std::string(what) + ": window (x " + std::to_string(win.x) + ", y " +
        std::to_string(win.y) + ", " + std::to_string(win.width) + " wide, " +
        std::to_string(win.height) + " high) must be non-empty and inside the " +
        shape_str(src.height, src.width) + " (H x W) image");
  }
  if (oh <= 0 || ow <= 0) {
    throw std::invalid_argument(std::string(what) + ": output size must be positive, got " +
                                shape_str(oh, ow) + " (H x W)");
  }
  if (keep.width <= 0 || keep.height <= 0 || keep.x < 0 || keep.y < 0 ||
      keep.x > ow - keep.width || keep.y > oh - keep.height) {
    throw std::invalid_argument(
        std::string(what) + ": kept rectangle (x " + std::to_string(keep.x) + ", y " +
        std::to_string(keep.y) + ", " + std::to_string(keep.width) + " wide, " +
        std::to_string(keep.height) + " high) must be non-empty and inside the " +
        shape_str(oh, ow) + " (H x W) output");
  }
}

template <typename V>
typename V::value_type* grown(V& v, size_t n) {
  if (v.size() < n) v.resize(n, typename V::value_type{});
  return v.data();
}

// ---- The two layouts --------------------------------------------------------------------

struct ResampleScratch {
  AxisTaps tx, ty;
  LanePlan plan;
  AlignedVector<float> row;       // area: the vertical pass's row; fixed: a source row as float
  AlignedVector<float> ring;      // cubic: 4 horizontal-pass rows (float sums)
  AlignedVector<int16_t> ring16;  // linear: 4 horizontal-pass rows (sums >> 4)
  int ring_tag[4] = {-1, -1, -1, -1};
  AlignedVector<uint8_t> q;  // one uint8 output row (to_chw)
  AlignedVector<uint8_t> bytes;  // fixed, byte pass: one source row, 128 bytes of slack
  std::vector<const uint8_t*> rows;
};

// Where each resampled row goes: an image row, or (to_chw) row y of the three planes.
struct RowSink {
  Image* image = nullptr;
  const ChannelAffine* affine = nullptr;
  float* chw = nullptr;
  size_t plane = 0;  // floats per plane
  uint8_t* row(int y, ResampleScratch& s) const {
    return image != nullptr ? image->row(y) : s.q.data();
  }
  void finish(int y, int width, const uint8_t* q) const {
    if (image != nullptr) return;
    float* r = chw + static_cast<size_t>(y) * width;
    emit_chw(q, width, *affine, r, r + plane, r + 2 * plane);
  }
};

void run_area(ResampleScratch& s, const Image& src, const CropWindow& win, int oh, int ow,
              const CropWindow& keep, bool mirror, const RowSink& sink) {
  const int C = src.channels;
  area_taps(win.width, ow, s.tx);
  area_taps(win.height, oh, s.ty);
  build_plan(s.tx, keep.x, keep.width, C, mirror, false, s.plan);
  const LanePlan& p = s.plan;
  // pipebench's earlier area pass rounded ties away from zero outside its 3-channel
  // kernels for 1 to 5 taps; kept, so that no output bit changes.
  const Round round = (C != 3 || s.tx.taps > 5) ? Round::kHalfUp : Round::kHalfEven;
  const size_t n = static_cast<size_t>(p.c1 - p.c0) * C;
  float* t = grown(s.row, n + kPad);
  const int Ky = s.ty.taps;
  const uint8_t** rows = grown(s.rows, static_cast<size_t>(Ky));
  const size_t x_src = static_cast<size_t>(win.x + p.c0) * C;
  for (int r = 0; r < keep.height; ++r) {
    const int oy = keep.y + r;  // the area tables hold the whole axis (first = 0)
    const int sy = win.y + s.ty.start[oy];
    // Only the taps from the first to the last nonzero weight: the K-wide window pads a
    // row that covers fewer source rows with zero weights (at its start near the end of
    // the axis, else at its end), and a sum of terms >= +0 is the same without them.
    const float* w = s.ty.weight.data() + static_cast<size_t>(oy) * Ky;
    int first = 0, last = Ky;
    while (last - first > 1 && w[last - 1] == 0.0f) --last;
    while (last - first > 1 && w[first] == 0.0f) ++first;
    for (int k = first; k < last; ++k) rows[k - first] = src.row(sy + k) + x_src;
    vpass_area(rows, w + first, last - first, n, t);
    if (sink.image == nullptr) {
      float* red = sink.chw + static_cast<size_t>(r) * keep.width;
      if (hpass_chw(t, p, round, *sink.affine, red, red + sink.plane, red + 2 * sink.plane)) continue;
    }
    uint8_t* q = sink.row(r, s);
    hpass(t, p, round, HOut{q, nullptr, nullptr});
    sink.finish(r, keep.width, q);
  }
}

// The horizontal pass of source row sy (relative to the window) into ring slot sy % 4
// (a row's taps are consecutive rows, so they never share a slot), unless the slot holds it
// already; returns the slot's row, floats (cubic) or int16 (linear).
template <typename T>
const T* ring_row(ResampleScratch& s, AlignedVector<T>& ring, const Image& src,
                  const CropWindow& win, int sy, size_t stride) {
  const int slot = sy & 3;
  T* d = ring.data() + slot * stride;
  if (s.ring_tag[slot] == sy) return d;
  const LanePlan& p = s.plan;
  const int C = src.channels;
  const size_t n = static_cast<size_t>(p.c1 - p.c0) * C;
  const uint8_t* in = src.row(win.y + sy) + static_cast<size_t>(win.x + p.c0) * C;
  if (p.bytes) {
    std::memcpy(s.bytes.data(), in, n);  // 128 readable bytes past it, whatever the source
    if constexpr (std::is_same_v<T, float>) {
      hpass_bytes(s.bytes.data(), p, Round::kRaw, HOut{nullptr, d, nullptr});
    } else {
      hpass_bytes(s.bytes.data(), p, Round::kShift4, HOut{nullptr, nullptr, d});
    }
    s.ring_tag[slot] = sy;
    return d;
  }
  to_float(in, n, s.row.data());
  if constexpr (std::is_same_v<T, float>) {
    hpass(s.row.data(), p, Round::kRaw, HOut{nullptr, d, nullptr});
  } else {
    hpass(s.row.data(), p, Round::kShift4, HOut{nullptr, nullptr, d});
  }
  s.ring_tag[slot] = sy;
  return d;
}

// OpenCV applies its cubic vector pass to blocks of 8 values of the full output row
// (ow * C values) and its integer rounding to the rest: redo those values of the kept row.
void cubic_tail(const float* const* D, const int16_t* w, int ow, int C, const CropWindow& keep,
                bool mirror, uint8_t* q) {
  const int64_t width = static_cast<int64_t>(ow) * C;  // may pass INT_MAX (a huge upscale)
  for (int64_t x = width / 8 * 8; x < width; ++x) {
    const int64_t o = x / C - keep.x;
    if (o < 0 || o >= keep.width) continue;
    const int64_t i = (mirror ? keep.width - 1 - o : o) * C + x % C;
    q[i] = cubic_tail_value(D, w, static_cast<size_t>(i));
  }
}

void run_fixed(ResampleScratch& s, const Image& src, const CropWindow& win, int oh, int ow,
               const CropWindow& keep, bool mirror, bool cubic, const RowSink& sink) {
  const int C = src.channels;
  // Tables of the kept outputs only: an upscale's output may be far larger than the kept
  // rectangle (Resize(256) of a 65000 x 1 image is 256 x 16.6 million).
  fixed_point_columns(win.width, ow, keep.x, keep.x + keep.width, cubic, s.tx);
  fixed_point_rows(win.height, oh, keep.y, keep.y + keep.height, cubic, s.ty);
  build_plan(s.tx, keep.x, keep.width, C, mirror, have_vbmi(), s.plan);
  const LanePlan& p = s.plan;
  grown(s.row, static_cast<size_t>(p.c1 - p.c0) * C + kPad);
  // Each ring row starts on a cache line (32 int16 or 16 floats... a multiple of 32 values).
  const size_t stride = (static_cast<size_t>(p.lanes) + kPad + 31) / 32 * 32;
  if (cubic) {
    grown(s.ring, 4 * stride);
  } else {
    grown(s.ring16, 4 * stride);
  }
  for (int& tag : s.ring_tag) tag = -1;
  const int Ky = s.ty.taps;
  for (int r = 0; r < keep.height; ++r) {
    const int* rows = s.ty.rows.data() + static_cast<size_t>(r) * Ky;  // row keep.y + r
    const int16_t* w = s.ty.fixed.data() + static_cast<size_t>(r) * Ky;
    uint8_t* q = sink.row(r, s);
    if (cubic) {
      const float* D[4];
      for (int k = 0; k < 4; ++k) D[k] = ring_row(s, s.ring, src, win, rows[k], stride);
      // OpenCV's b = w * (1 / 2048^2), exact.
      constexpr float kScale = 1.0f / (2048.0f * 2048.0f);
      const float b[4] = {w[0] * kScale, w[1] * kScale, w[2] * kScale, w[3] * kScale};
      vpass_cubic(D, b, static_cast<size_t>(p.lanes), q);
      cubic_tail(D, w, ow, C, keep, mirror, q);
    } else {
      const int16_t* D[2];
      for (int k = 0; k < 2; ++k) D[k] = ring_row(s, s.ring16, src, win, rows[k], stride);
      vpass_linear(D, w, static_cast<size_t>(p.lanes), q);
    }
    sink.finish(r, keep.width, q);
  }
}

// Sizes every buffer for the largest window of this source (the whole image) and this
// output, so that the scratch grows only with the source image or the kept output, never
// with the window a sample draws, nor with the whole output of an upscale: the area filter
// (tables of the whole axis) runs only where the output is no larger than the window, and
// linear / cubic hold the kept outputs' taps alone.
void reserve(ResampleScratch& s, const Image& src, int oh, int ow, const CropWindow& keep) {
  const size_t C = static_cast<size_t>(src.channels);
  // Taps per output: at most ceil(source / output) + 1 for the box filter, 4 for cubic.
  const size_t kx = std::max<size_t>(5, static_cast<size_t>(src.width / ow) + 2);
  const size_t ky = std::max<size_t>(5, static_cast<size_t>(src.height / oh) + 2);
  const int nx = ow <= src.width ? ow : keep.width;
  const int ny = oh <= src.height ? oh : keep.height;
  s.tx.weight.reserve(static_cast<size_t>(nx) * kx);
  s.ty.weight.reserve(static_cast<size_t>(ny) * ky);
  const size_t blocks = (static_cast<size_t>(keep.width) * C + kLanes - 1) / kLanes;
  s.plan.weight.reserve(blocks * kx * kLanes);
  grown(s.row, static_cast<size_t>(src.width) * C + kPad);
  grown(s.bytes, static_cast<size_t>(src.width) * C + 128);
  grown(s.rows, ky);
  grown(s.q, static_cast<size_t>(keep.width) * C + kPad);
}

void run(ResampleScratch& s, const Image& src, const CropWindow& win, int oh, int ow,
         const CropWindow& keep, bool mirror, ResampleFilter filter, const RowSink& sink) {
  reserve(s, src, oh, ow, keep);
  if (filter == ResampleFilter::kArea) {
    run_area(s, src, win, oh, ow, keep, mirror, sink);
  } else {
    run_fixed(s, src, win, oh, ow, keep, mirror, filter == ResampleFilter::kCubic, sink);
  }
}

}  // namespace

// ---- Resampler -----------------------------------------------------------------------

struct Resampler::Scratch : ResampleScratch {};

Resampler::Resampler() : s_(std::make_unique<Scratch>()) {}
Resampler::~Resampler() = default;
Resampler::Resampler(Resampler&&) noexcept = default;
Resampler& Resampler::operator=(Resampler&&) noexcept = default;

void resample_use_simd(bool on) { detail::set_simd(on); }
bool resample_simd() { return detail::simd_enabled(); }

ResampleFilter bilinear_filter(const CropWindow& window, int out_height, int out_width) {
  return out_height <= window.height && out_width <= window.width ? ResampleFilter::kArea
                                                                  : ResampleFilter::kLinear;
}

void Resampler::to_image(const Image& src, const CropWindow& window, int out_height,
                         int out_width, const CropWindow& keep, bool mirror,
                         ResampleFilter filter, Image& out) {
  check_args(src, window, out_height, out_width, keep, "resample");
  if (&src == &out) throw std::invalid_argument("resample: src and out must differ");
  out.resize(keep.height, keep.width, src.channels);
  RowSink sink;
  sink.image = &out;
  run(*s_, src, window, out_height, out_width, keep, mirror, filter, sink);
}

void Resampler::to_chw(const Image& src, const CropWindow& window, int out_height, int out_width,
                       const CropWindow& keep, bool mirror, ResampleFilter filter,
                       const ChannelAffine& affine, float* out) {
  check_args(src, window, out_height, out_width, keep, "resample to CHW");
  if (src.channels != 3) {
    throw std::invalid_argument("resample to CHW: needs a 3-channel (RGB) image, got " +
                                std::to_string(src.channels) + " channel(s)");
  }
  if (out == nullptr) throw std::invalid_argument("resample to CHW: out is null");
  RowSink sink;
  sink.affine = &affine;
  sink.chw = out;
  sink.plane = static_cast<size_t>(keep.height) * keep.width;
  run(*s_, src, window, out_height, out_width, keep, mirror, filter, sink);
  fence_streaming_stores();  // the planes' streaming stores, before the tensor is handed on
}

}  // namespace pipebench
