// Normalize: uint8 HWC -> float32 CHW, out[c][y][x] = (in[y][x][c] / 255 - mean[c]) / std[c]
// (torchvision ToTensor + Normalize in one pass). Also the batch form, on NCHW uint8.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "transforms/image.h"

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
