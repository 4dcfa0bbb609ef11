// The transforms of the PyTorch Profiler input-pipeline case study (C. Rand, "Solving
// Bottlenecks on the Data Input Pipeline with PyTorch Profiler and TensorBoard", 2023;
// shared/seeds/002): RandomCrop(256) (crop.h), RandomMask, ConvertColor (RGB -> YUV),
// Scale.
#pragma once

#include <cstdint>
#include <vector>

#include "transforms/image.h"
#include "transforms/rng.h"

namespace pipebench {

/// How the 4-neighbour dilation of the mask is computed; all give the same mask.
enum class DilationMethod {
  kConvolution,    ///< 2-D convolution with the cross kernel [[0,1,0],[1,1,1],[0,1,0]],
                   ///< 'same' size, then != 0: the study's scipy.signal.convolve2d version
  kBooleanShifts,  ///< OR of the mask and its four one-pixel shifts: the study's fix
  kOpenCV,         ///< cv::dilate with a 3x3 cross structuring element
};
const char* dilation_method_name(DilationMethod m);  ///< "conv", "shifts", "opencv"

/// 4-neighbour dilation of an H x W mask of 0/1 bytes; out is H x W of 0/1 bytes.
/// Outside the image counts as 0. in and out must not alias.
void dilate4(const uint8_t* in, int height, int width, DilationMethod method, uint8_t* out);

/// Scratch for random_mask, reused across samples.
struct MaskScratch {
  std::vector<uint8_t> mask;
  std::vector<uint8_t> dilated;
  std::vector<int32_t> conv;  ///< convolution accumulator (kConvolution only)
};

/// RandomMask(ratio): a mask with each pixel set with probability `ratio`, dilated by
/// dilate4, and every pixel under the dilated mask set to 0 in all channels.
void random_mask(Image& img, double ratio, DilationMethod method, Rng& rng,
                 MaskScratch& scratch);

/// ConvertColor: RGB uint8 HWC -> YUV float32 CHW with the study's BT.601 (JPEG full
/// range) matrix: Y = .299R + .587G + .114B; U = -.16874R - .33126G + .5B + 128;
/// V = .5R - .41869G - .08131B + 128. out holds 3*H*W floats.
void rgb_to_yuv_chw(const Image& src, float* out);

/// Scale: x / 255 in place over n floats.
void scale_unit(float* data, size_t n);

}  // namespace pipebench
