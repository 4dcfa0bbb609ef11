// Normalize: uint8 HWC -> float32 CHW, out[c][y][x] = (in[y][x][c] / 255 - mean[c]) / std[c]
// (torchvision ToTensor + Normalize in one pass). Also the batch form, on NCHW uint8.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "transforms/image.h"
#include "transforms/resize.h"

namespace pipebench {

/// ImageNet channel statistics (RGB, on [0, 1] pixels), as torchvision's references use.
inline constexpr std::array<float, 3> kImageNetMean = {0.485f, 0.456f, 0.406f};
inline constexpr std::array<float, 3> kImageNetStd = {0.229f, 0.224f, 0.225f};

/// src: H x W x 3 uint8; out: 3 x H x W float32 (H*W*3 floats, caller-owned).
void normalize_to_chw(const Image& src, float* out,
                      const std::array<float, 3>& mean = kImageNetMean,
                      const std::array<float, 3>& std = kImageNetStd);

/// Batch form of the same arithmetic: in is N x 3 x H x W uint8 (NCHW), out is
/// N x 3 x H x W float32. The case study's "batch transform" variant.
void normalize_batch_nchw(const uint8_t* in, int n, int height, int width, float* out,
                          const std::array<float, 3>& mean = kImageNetMean,
                          const std::array<float, 3>& std = kImageNetStd);

}  // namespace pipebench

namespace pipebench {

/// The same map as an affine one per channel, for the fused resize + normalize steps
/// (Resampler::to_chw): scale = 1 / (255 std), bias = -mean / std, each computed in double
/// and rounded to float, applied as q * scale + bias (two float roundings). Against
/// normalize_to_chw's (q / 255 - mean) / std (three roundings) it differs by float rounding
/// only, a few float steps of the larger term: at most 1e-6 * max(1, 1 / std, |mean| / std)
/// (4.8e-7 with ImageNet's statistics; tests/fused_test.cpp checks every q), far below one
/// uint8 step, 1 / (255 std).
/// Throws std::invalid_argument as normalize_to_chw for a zero or non-finite std or a
/// non-finite mean.
ChannelAffine normalize_affine(const std::array<float, 3>& mean = kImageNetMean,
                               const std::array<float, 3>& std = kImageNetStd);

}  // namespace pipebench
