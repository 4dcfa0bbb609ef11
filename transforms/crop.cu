// The device horizontal flip (device_horizontal_flip, transforms/batch_ops_device.h):
// horizontal_flip (crop.cpp, cv::flip: mirrored pixel pairs swapped in place) of each
// flagged sample of a batch already on the GPU, uint8 NHWC or float32 NCHW. One thread per
// mirrored pair of a row (x < w / 2; an odd width's middle column stays), grid-stride.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "device/cuda.h"
#include "device/launch.h"
#include "transforms/batch_ops_device_kernels.h"

namespace pipebench::device_kernels {
namespace {

__device__ bool flagged(const FlipMask& mask, int i) { return ((mask.bits[i >> 6] >> (i & 63)) & 1u) != 0; }

// rows = n x h rows of w pixels of c bytes; sample of row r: r / h.
__global__ void flip_u8_nhwc_kernel(uint8_t* data, size_t rows, int h, int w, int c, FlipMask mask) {
  const int half = w / 2;
  const size_t total = rows * half;
  for (size_t t = blockIdx.x * size_t{blockDim.x} + threadIdx.x; t < total; t += size_t{gridDim.x} * blockDim.x) {
    const size_t row = t / half;
    const int x = static_cast<int>(t % half);
    if (!flagged(mask, static_cast<int>(row / h))) continue;
    uint8_t* a = data + (row * w + x) * c;
    uint8_t* b = data + (row * w + (w - 1 - x)) * c;
    for (int k = 0; k < c; ++k) {
      const uint8_t v = a[k];
      a[k] = b[k];
      b[k] = v;
    }
  }
}

// rows = n x c x h rows of w floats; sample of row r: r / (c h).
__global__ void flip_f32_nchw_kernel(float* data, size_t rows, int rows_per_sample, int w, FlipMask mask) {
  const int half = w / 2;
  const size_t total = rows * half;
  for (size_t t = blockIdx.x * size_t{blockDim.x} + threadIdx.x; t < total; t += size_t{gridDim.x} * blockDim.x) {
    const size_t row = t / half;
    const int x = static_cast<int>(t % half);
    if (!flagged(mask, static_cast<int>(row / rows_per_sample))) continue;
    float* r = data + row * w;
    const float v = r[x];
    r[x] = r[w - 1 - x];
    r[w - 1 - x] = v;
  }
}

}  // namespace

void flip_u8_nhwc(uint8_t* data, int n, int h, int w, int c, const FlipMask& mask, void* stream) {
  const size_t rows = static_cast<size_t>(n) * h;
  flip_u8_nhwc_kernel<<<blocks_for(rows * (w / 2)), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      data, rows, h, w, c, mask);
  PIPEBENCH_CUDA_CHECK(cudaGetLastError());
}

void flip_f32_nchw(float* data, int n, int c, int h, int w, const FlipMask& mask, void* stream) {
  const size_t rows = static_cast<size_t>(n) * c * h;
  flip_f32_nchw_kernel<<<blocks_for(rows * (w / 2)), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      data, rows, c * h, w, mask);
  PIPEBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace pipebench::device_kernels
