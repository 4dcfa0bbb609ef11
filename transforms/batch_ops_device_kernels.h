// The launchers of the device batch operators' kernels (transforms/crop.cu,
// transforms/batch_mix.cu), called by batch_ops_device.cpp after it has checked the
// arguments and made the device current; built only with CUDA (PIPEBENCH_HAVE_CUDA).
// Shapes as DeviceBatch (batch_ops_device.h); `stream` a cudaStream_t. Each throws
// CudaError when its launch fails.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pipebench::device_kernels {

/// Sample i flips where bit i of the mask is set (kDeviceFlipMaxBatch bits).
struct FlipMask {
  uint64_t bits[64];
};

void flip_u8_nhwc(uint8_t* data, int n, int h, int w, int c, const FlipMask& mask, void* stream);
void flip_f32_nchw(float* data, int n, int c, int h, int w, const FlipMask& mask, void* stream);
/// n samples of `elements` values each.
void mixup_u8(uint8_t* data, int n, size_t elements, float lam, void* stream);
void mixup_f32(float* data, int n, size_t elements, float lam, void* stream);
/// The box x0, y0, bw x bh (already checked to lie inside h x w).
void cutmix_u8_nhwc(uint8_t* data, int n, int h, int w, int c, int x0, int y0, int bw, int bh, void* stream);
void cutmix_f32_nchw(float* data, int n, int c, int h, int w, int x0, int y0, int bw, int bh, void* stream);

}  // namespace pipebench::device_kernels
