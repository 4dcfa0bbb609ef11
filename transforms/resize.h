// The resampling engine behind crop.h's resizes and the planner's fused resize + normalize
// steps: separable filters over a window of an HWC uint8 image (image.h), computing only a
// kept rectangle of the output, optionally mirrored left-right, written either as an HWC
// uint8 image or straight into a float32 CHW tensor through a per-channel affine map (the
// normalize step fused into the resize's last pass).
//
// Filters and their bits (tests/resize_test.cpp checks each against its reference):
//   kArea    OpenCV INTER_AREA's box weights (each output averages its footprint, partial
//            pixels by coverage), computed in float, vertical pass first. The same float
//            operations in the same order as pipebench's earlier separable version, so the
//            same bits; equal to cv::resize(INTER_AREA) within +-1 (summation order).
//   kLinear  cv::resize(INTER_LINEAR) on 8-bit images, bit-identical: OpenCV 4.6's 11-bit
//            fixed-point weights, its exact integer horizontal pass and its vector vertical
//            pass ((D >> 4) * b >> 16, +2 >> 2), which OpenCV applies to every column.
//   kCubic   cv::resize(INTER_CUBIC) on 8-bit images (A = -0.75, no antialias, replicated
//            borders), bit-identical: the exact integer horizontal pass, then OpenCV's float
//            vertical pass on blocks of 8 values and its integer rounding on the row's last
//            (width * channels) % 8 values.
// Rounding to uint8 is to nearest, ties to even (cvRound), saturating to 0..255; the area
// filter keeps its earlier rule, ties away from zero, for 1-channel images and for more than
// 5 horizontal taps (an output wider than 4 source pixels), so its bits stay unchanged.
//
// Speed: on x86-64 with AVX-512 (F, BW, VL, DQ) the passes run 16 values at a time: the
// horizontal pass gathers its taps with two-register permutes from precomputed per-lane
// tables (for kLinear / kCubic, with VBMI, from the source bytes: vpermi2b + vpmaddwd on
// OpenCV's int16 weights); every other CPU runs the scalar passes, which perform the same
// operations in the same order (no fused multiply-add anywhere), so the outputs are
// identical on every CPU. Measured on one core of the 2-core development VM (AVX-512,
// shared, so only ratios mean much), per 224 x 224 RandomResizedCrop of a 500 x 375 photo:
// to_chw 56 us (1000 random windows of 230-490 x 230-370, tap tables built per call) where
// the earlier resize + normalize took about 165 us; a bicubic
// to_image 62 us where cv::resize(INTER_CUBIC) + flip took 375 us.
// Scratch (tap tables, row buffers) lives in the Resampler and only grows: no heap
// allocation per call once the largest source image and output were seen. It holds source
// rows and the taps of the kept outputs (the area filter, a downscale: of the whole output,
// no more entries than source pixels), so an upscale's memory follows the kept rectangle,
// not the whole output: 1.2 MB for the 224 x 224 centre of a 65000 x 1 image resized to
// 256 x 16.6 million (0.67 GB when the tables covered the whole output).
//
// Errors: std::invalid_argument for an empty or non-1/3-channel source, a window outside the
// source, an output size <= 0, a keep rectangle outside the output, or to_chw on a source
// that is not 3-channel.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "transforms/image.h"

namespace pipebench {

/// The engine's separable filters (see the file comment for their exact definitions).
enum class ResampleFilter { kArea, kLinear, kCubic };

/// pipebench's "bilinear" (torchvision's antialiased bilinear, as close as OpenCV gets):
/// kArea when neither side of the window grows, kLinear (both axes) otherwise.
ResampleFilter bilinear_filter(const CropWindow& window, int out_height, int out_width);

/// For tests: false makes every Resampler, and normalize (normalize.h), run the scalar
/// passes even where AVX-512 is present (process-wide), to check that both give the same
/// bits. Default true. resample_simd() says what is set.
void resample_use_simd(bool on);
bool resample_simd();

/// A per-channel affine map for to_chw: out = q * scale[c] + bias[c], q the uint8 value.
struct ChannelAffine {
  std::array<float, 3> scale{1.0f, 1.0f, 1.0f};
  std::array<float, 3> bias{0.0f, 0.0f, 0.0f};
};

/// One worker's resampling scratch and entry points. Not thread-safe: one per thread.
class Resampler {
 public:
  /// Resamples `window` of src to out_height x out_width with `filter` and writes the
  /// rectangle `keep` (output coordinates) into out: keep.height x keep.width x
  /// src.channels, mirrored left-right when `mirror`. Computing part of the output gives
  /// the same bits as computing all of it and cropping. src and out must differ.
  void to_image(const Image& src, const CropWindow& window, int out_height, int out_width,
                const CropWindow& keep, bool mirror, ResampleFilter filter, Image& out);

  /// The same, written as float32 CHW (3 x keep.height x keep.width floats at out):
  /// out[c][y][x] = q * affine.scale[c] + affine.bias[c], q the uint8 value to_image writes
  /// at (y, x, c). src must have 3 channels. With AVX-512, every 64-byte-aligned run of 16
  /// values is written with streaming (non-temporal) stores, fenced before the return: a
  /// worker's tensor is read later by collate or the H2D copy, not by this core, so it is
  /// not worth 600 KB of this core's L2, which holds the next decode's working set.
  void to_chw(const Image& src, const CropWindow& window, int out_height, int out_width,
              const CropWindow& keep, bool mirror, ResampleFilter filter,
              const ChannelAffine& affine, float* out);

  Resampler();
  ~Resampler();
  Resampler(Resampler&&) noexcept;
  Resampler& operator=(Resampler&&) noexcept;

 private:
  struct Scratch;  // tap tables and row buffers (resize.cpp)
  std::unique_ptr<Scratch> s_;
};

}  // namespace pipebench
