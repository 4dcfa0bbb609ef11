// Collate: per-sample outputs into one contiguous batch, in the spec's dtype and layout
// (transforms/pipeline_output.h), and the normalize a uint8 batch gets after the copy.
//
// Batch forms (N samples at once):
//   collate_chw_f32         N samples of C x H x W float32 -> N x C x H x W float32 (memcpy
//                           per sample; the loader avoids even this copy for float32 NCHW:
//                           its pipeline writes each sample straight into its slot)
//   collate_hwc_u8_to_nchw  N images H x W x C uint8 -> N x C x H x W uint8 (de-interleave)
//   collate_hwc_u8_to_nhwc  N images H x W x C uint8 -> N x H x W x C uint8 (memcpy)
// Per-sample forms (what the loader's workers call, one sample into its slot):
//   collate_image_u8        one H x W x C uint8 image -> its slot, C x H x W (NCHW) or
//                           H x W x C (NHWC) uint8
//   collate_chw_f32_to_hwc  one C x H x W float32 tensor -> its slot, H x W x C (NHWC)
// After the copy (the accelerator's side; this is the CPU reference):
//   normalize_u8_batch      N uint8 samples (NCHW or NHWC) -> N x C x H x W float32,
//                           (q / 255 - mean[c]) / std[c] (DeferredNormalize), or q itself
//                           when there is no normalize (a uint8 batch of raw pixels)
//   finish_u8_batch         the flips and mixing a `finish: device` batch leaves for after
//                           the copy, on N x H x W x C uint8 in place: what the device
//                           kernels (transforms/batch_ops_device.h) do before normalize
//
// Labels are collated by the caller (int32, N). Errors (std::invalid_argument): a null
// pointer, a sample of another shape than the first, a dimension <= 0, a normalize with
// other than 3 channels or a zero / non-finite std.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "transforms/batch_mix.h"
#include "transforms/image.h"
#include "transforms/pipeline_output.h"

namespace pipebench {

/// samples[i] points to C*H*W floats; out holds samples.size() * C*H*W floats.
void collate_chw_f32(std::span<const float* const> samples, size_t sample_floats, float* out);

/// images all H x W x C; out holds images.size() * C*H*W bytes, NCHW.
void collate_hwc_u8_to_nchw(std::span<const Image* const> images, uint8_t* out);

/// images all H x W x C; out holds images.size() * H*W*C bytes, NHWC.
void collate_hwc_u8_to_nhwc(std::span<const Image* const> images, uint8_t* out);

/// One image into its slot: image.channels x height x width bytes, in `layout`'s order
/// for one sample (CHW for NCHW, HWC for NHWC).
void collate_image_u8(const Image& image, BatchLayout layout, uint8_t* slot);

/// One C x H x W float32 tensor into its slot as H x W x C. chw and slot must not overlap.
void collate_chw_f32_to_hwc(const float* chw, int channels, int height, int width, float* slot);

/// The normalize deferred to after the copy (CPU reference of the accelerator's kernel):
/// in is n samples of channels x height x width uint8 in `layout`; out is n x C x H x W
/// float32 (NCHW whatever the input's layout, as a model takes it): (q / 255 - mean[c]) /
/// std[c] in float32 when `norm` is given (then channels must be 3), q otherwise.
void normalize_u8_batch(const uint8_t* in, BatchLayout layout, int n, int channels, int height,
                        int width, const DeferredNormalize* norm, float* out);

/// The flips and mixing deferred to after the copy (CPU reference of the device's; the
/// loader's Batch::flips and Batch::mixes): data is n x height x width x channels uint8
/// (NHWC), changed in place: each sample whose flag in flips (n bytes; null: none) is set
/// is mirrored left-right, then each draw of mixes is applied in order as
/// device_apply_mix applies it (mix_batch_u8 / cut_batch_u8_nhwc, transforms/batch_mix.h).
/// The soft labels are not touched (the loader mixed them). Throws std::invalid_argument
/// for a null batch, n < 0 or C, H, W <= 0, channels other than 1 or 3 with flips, a box
/// outside the image or lam outside [0, 1].
void finish_u8_batch(uint8_t* data, int n, int channels, int height, int width, const uint8_t* flips,
                     std::span<const MixDraw> mixes);

}  // namespace pipebench
