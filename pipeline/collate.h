// Collate: per-sample outputs into one contiguous batch, NCHW.
//
//   collate_chw_f32      N samples of C x H x W float32 -> N x C x H x W float32 (memcpy
//                        per sample; the loader avoids even this copy: its recipe writes
//                        each sample straight into its slot of the pooled batch buffer)
//   collate_hwc_u8_to_nchw  N images H x W x C uint8 (HWC) -> N x C x H x W uint8, the
//                        layout change done in collate so that normalisation can be
//                        deferred to one batch transform (normalize_batch_nchw, normalize.h)
//
// Labels are collated by the caller (int32, N). Preconditions (std::invalid_argument):
// every sample has the given shape; out holds N * C * H * W elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "transforms/image.h"

namespace pipebench {

/// samples[i] points to C*H*W floats; out holds samples.size() * C*H*W floats.
void collate_chw_f32(std::span<const float* const> samples, size_t sample_floats, float* out);

/// images all H x W x C; out holds images.size() * C*H*W bytes, NCHW.
void collate_hwc_u8_to_nchw(std::span<const Image* const> images, uint8_t* out);

}  // namespace pipebench
