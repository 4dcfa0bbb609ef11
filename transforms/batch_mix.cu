// The device mixup and cutmix (device_mixup, device_cutmix: transforms/batch_ops_device.h),
// the pixels of batch_mix.cpp's mix_batch / mix_batch_u8 and cut_batch / cut_batch_u8_nhwc
// on a batch already on the GPU: sample i with N-1-i, in place, one thread per pair of
// values (grid-stride). mixup rounds each product and the sum on its own (__fmul_rn,
// __fadd_rn: no fused multiply-add), as the CPU computes lam x + (1 - lam) y, so the
// float32 results are the CPU's bits, and uint8's rint (half to even) is the same too.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "device/cuda.h"
#include "device/launch.h"
#include "transforms/batch_ops_device_kernels.h"

namespace pipebench::device_kernels {
namespace {

__device__ float mix(float lam, float x, float mu, float y) { return __fadd_rn(__fmul_rn(lam, x), __fmul_rn(mu, y)); }

__device__ uint8_t mix_u8(float lam, uint8_t x, float mu, uint8_t y) {
  const float v = rintf(mix(lam, static_cast<float>(x), mu, static_cast<float>(y)));
  return static_cast<uint8_t>(fminf(fmaxf(v, 0.0f), 255.0f));
}

__global__ void mixup_f32_kernel(float* data, int n, size_t m, float lam, float mu) {
  const size_t total = static_cast<size_t>(n / 2) * m;
  for (size_t t = blockIdx.x * size_t{blockDim.x} + threadIdx.x; t < total; t += size_t{gridDim.x} * blockDim.x) {
    const size_t i = t / m, k = t % m, j = static_cast<size_t>(n - 1) - i;
    const float x = data[i * m + k], y = data[j * m + k];
    data[i * m + k] = mix(lam, x, mu, y);
    data[j * m + k] = mix(lam, y, mu, x);
  }
}

__global__ void mixup_u8_kernel(uint8_t* data, int n, size_t m, float lam, float mu) {
  const size_t total = static_cast<size_t>(n / 2) * m;
  for (size_t t = blockIdx.x * size_t{blockDim.x} + threadIdx.x; t < total; t += size_t{gridDim.x} * blockDim.x) {
    const size_t i = t / m, k = t % m, j = static_cast<size_t>(n - 1) - i;
    const uint8_t x = data[i * m + k], y = data[j * m + k];
    data[i * m + k] = mix_u8(lam, x, mu, y);
    data[j * m + k] = mix_u8(lam, y, mu, x);
  }
}

// Box bw x bh at (x0, y0) of each channel plane of n x c x h x w floats.
__global__ void cutmix_f32_nchw_kernel(float* data, int n, int c, int h, int w, int x0, int y0, int bw, int bh) {
  const size_t sample = static_cast<size_t>(c) * h * w;
  const size_t total = static_cast<size_t>(n / 2) * c * bh * bw;
  for (size_t t = blockIdx.x * size_t{blockDim.x} + threadIdx.x; t < total; t += size_t{gridDim.x} * blockDim.x) {
    size_t r = t;
    const int xx = static_cast<int>(r % bw);
    r /= bw;
    const int yy = static_cast<int>(r % bh);
    r /= bh;
    const int ch = static_cast<int>(r % c);
    const size_t i = r / c, j = static_cast<size_t>(n - 1) - i;
    const size_t off = (static_cast<size_t>(ch) * h + (y0 + yy)) * w + (x0 + xx);
    const float v = data[i * sample + off];
    data[i * sample + off] = data[j * sample + off];
    data[j * sample + off] = v;
  }
}

// Box bw x bh at (x0, y0), every channel, of n x h x w x c bytes.
__global__ void cutmix_u8_nhwc_kernel(uint8_t* data, int n, int h, int w, int c, int x0, int y0, int bw, int bh) {
  const size_t sample = static_cast<size_t>(h) * w * c, box_row = static_cast<size_t>(bw) * c;
  const size_t total = static_cast<size_t>(n / 2) * bh * box_row;
  for (size_t t = blockIdx.x * size_t{blockDim.x} + threadIdx.x; t < total; t += size_t{gridDim.x} * blockDim.x) {
    const size_t k = t % box_row, r = t / box_row;
    const int yy = static_cast<int>(r % bh);
    const size_t i = r / bh, j = static_cast<size_t>(n - 1) - i;
    const size_t off = (static_cast<size_t>(y0 + yy) * w + x0) * c + k;
    const uint8_t v = data[i * sample + off];
    data[i * sample + off] = data[j * sample + off];
    data[j * sample + off] = v;
  }
}

}  // namespace

void mixup_u8(uint8_t* data, int n, size_t elements, float lam, void* stream) {
  const float mu = 1.0f - lam;  // as the CPU: 1 - lam rounded to float first
  mixup_u8_kernel<<<blocks_for((n / 2) * elements), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      data, n, elements, lam, mu);
  PIPEBENCH_CUDA_CHECK(cudaGetLastError());
}

void mixup_f32(float* data, int n, size_t elements, float lam, void* stream) {
  const float mu = 1.0f - lam;
  mixup_f32_kernel<<<blocks_for((n / 2) * elements), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      data, n, elements, lam, mu);
  PIPEBENCH_CUDA_CHECK(cudaGetLastError());
}

void cutmix_u8_nhwc(uint8_t* data, int n, int h, int w, int c, int x0, int y0, int bw, int bh, void* stream) {
  const size_t total = static_cast<size_t>(n / 2) * bh * bw * c;
  cutmix_u8_nhwc_kernel<<<blocks_for(total), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      data, n, h, w, c, x0, y0, bw, bh);
  PIPEBENCH_CUDA_CHECK(cudaGetLastError());
}

void cutmix_f32_nchw(float* data, int n, int c, int h, int w, int x0, int y0, int bw, int bh, void* stream) {
  const size_t total = static_cast<size_t>(n / 2) * c * bh * bw;
  cutmix_f32_nchw_kernel<<<blocks_for(total), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      data, n, c, h, w, x0, y0, bw, bh);
  PIPEBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace pipebench::device_kernels
