// Batch operators on the GPU: horizontal flip, mixup and cutmix of a batch already in device
// memory, the split DALI, FFCV and timm use (the loader delivers uint8 batches, the device
// finishes flip, normalize and mixup / cutmix after the copy). The kernels are in
// transforms/crop.cu (flip) and transforms/batch_mix.cu (mixup, cutmix), beside their CPU
// versions, which are their references (bit-exact for uint8, within 1e-6 for float32;
// tests/device_ops_test.cpp):
//   device_horizontal_flip   horizontal_flip (crop.h) of every sample whose flag is set
//   device_mixup             mix_batch (float32) / mix_batch_u8 (uint8; timm's
//                            FastCollateMixup: rint, half to even)
//   device_cutmix            cut_batch (float32 NCHW) / cut_batch_u8_nhwc (uint8 NHWC)
// Pairing as on the CPU (batch_op.h): sample i with N-1-i, in place; with an odd N the middle
// sample keeps its pixels. The soft labels are not touched: they are N x classes floats,
// mixed on the host with the same lam (mix_soft_labels; cutmix: cut_lam of the box).
//
// Randomness: drawn on the host, exactly as the CPU operators draw, and passed to the kernel:
// the flips by draw_horizontal_flips (the horizontal_flip operator's own draw on each
// sample's Rng), mixup's lam and cutmix's box by draw_mix (batch_mix.h, which the mixup,
// cutmix and mixup_cutmix operators call): the same Rng gives the same batch on either side.
//
// Shapes (DeviceBatch): n samples of c x h x w, uint8 NHWC (the loader's uint8 collate) or
// float32 NCHW (its float collate), `data` a device pointer (cudaMalloc, DeviceBuffer in
// device/cuda.h). The work is queued on `stream` (a cudaStream_t, e.g.
// CudaStream::handle(); nullptr: the legacy default stream) and runs asynchronously: the
// batch is changed once the stream reaches it.
//
// Errors: std::invalid_argument (checked on the host before anything is queued) for a null
// batch, n < 1, c, h or w < 1, flags not one per sample, more than kDeviceFlipMaxBatch
// samples to flip, lam outside [0, 1] or NaN, a box outside the image; CudaUnavailable
// without a device or in a build without CUDA (device_batch_ops_built()); CudaError for a
// failed launch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "transforms/batch_mix.h"
#include "transforms/image.h"
#include "transforms/rng.h"

namespace pipebench {

enum class DeviceBatchFormat {
  kUint8Nhwc,    ///< n x h x w x c uint8
  kFloat32Nchw,  ///< n x c x h x w float32
};
/// "uint8_nhwc", "float32_nchw".
const char* device_batch_format_name(DeviceBatchFormat f);

/// A batch in device memory (not owned).
struct DeviceBatch {
  void* data = nullptr;  ///< device pointer
  int n = 0, c = 0, h = 0, w = 0;
  DeviceBatchFormat format = DeviceBatchFormat::kUint8Nhwc;
  size_t element_bytes() const { return format == DeviceBatchFormat::kUint8Nhwc ? 1 : 4; }
  size_t sample_elements() const { return static_cast<size_t>(c) * h * w; }
  size_t bytes() const { return static_cast<size_t>(n) * sample_elements() * element_bytes(); }
};

/// The most samples device_horizontal_flip takes in one call (the flags travel as a bit
/// mask in the kernel's parameters).
constexpr int kDeviceFlipMaxBatch = 4096;

/// One flag per sample, flags[i] = 1 where the horizontal_flip operator with probability p
/// flips sample i: its draw (torchvision: rand < p) on rngs[i], each sample's stream for
/// that operator; advances each Rng as the operator does. std::invalid_argument for p
/// outside [0, 1].
std::vector<uint8_t> draw_horizontal_flips(double p, std::vector<Rng>& rngs);

/// Mirrors left-right every sample i with flips[i] != 0 (flips: n host bytes).
void device_horizontal_flip(const DeviceBatch& b, std::span<const uint8_t> flips, void* stream);
/// mixup's pixels: x_i = lam x_i + (1 - lam) x_{N-1-i} (uint8: rint, clamped).
void device_mixup(const DeviceBatch& b, float lam, void* stream);
/// cutmix's pixels: the box (pixel coordinates of one sample) swaps between x_i and
/// x_{N-1-i}, every channel.
void device_cutmix(const DeviceBatch& b, const CropWindow& box, void* stream);
/// A draw of draw_mix applied as apply_mix applies it on the CPU: nothing, device_mixup(lam)
/// or device_cutmix(box). Returns the weight for mix_soft_labels: 1 when not applied, lam
/// for mixup, cut_lam(box) for cutmix.
float device_apply_mix(const DeviceBatch& b, const MixDraw& d, void* stream);

/// True when built with CUDA (the kernels exist; a device is still needed to run them).
bool device_batch_ops_built();

}  // namespace pipebench
