// The few device kernels of the CUDA training step (train_step.cpp drives them with
// cuBLAS): ReLU forward and backward, a hash-based uniform fill for the weights, and the
// normalize a uint8 batch gets after its copy (pipeline_output.h). Kept tiny so nvcc has
// little to do; everything else is C++.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "device/cuda.h"
#include "device/launch.h"

namespace pipebench::cuda_kernels {
namespace {

__global__ void relu_forward_kernel(float* x, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    x[i] = x[i] > 0.0f ? x[i] : 0.0f;
  }
}

// grad *= (act > 0): act is the ReLU output, positive exactly where the input was.
__global__ void relu_backward_kernel(float* grad, const float* act, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    grad[i] = act[i] > 0.0f ? grad[i] : 0.0f;
  }
}

// x[i] = uniform in [-scale, scale) from a SplitMix64 hash of (seed, i).
__global__ void fill_uniform_kernel(float* x, size_t n, uint64_t seed, float scale) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const float u = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    x[i] = (2.0f * u - 1.0f) * scale;
  }
}

struct Channel3 {
  float v[3];
};

// out[i][c][y][x] (NCHW float32) = (q / divisor - mean[c]) / std[c], q the uint8 value
// at (i, c, y, x) in NCHW or NHWC order: normalize_u8_batch's arithmetic (pipeline/
// collate.cpp; IEEE division, as nvcc compiles without --use_fast_math), divisor 255 for
// a normalize, 1 (with mean 0, std 1) for the raw values.
__global__ void normalize_u8_kernel(const uint8_t* in, float* out, size_t total, size_t plane,
                                    int c, bool nhwc, Channel3 mean, Channel3 std, float divisor) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < total;
       i += size_t{gridDim.x} * blockDim.x) {
    const size_t sample = i / (plane * c), within = i % (plane * c);
    const int ch = static_cast<int>(within / plane);
    const size_t p = within % plane;
    const size_t src = nhwc ? sample * plane * c + p * c + ch : i;
    const int k = ch < 3 ? ch : 0;
    out[i] = (static_cast<float>(in[src]) / divisor - mean.v[k]) / std.v[k];
  }
}

}  // namespace

void relu_forward(float* x, size_t n, void* stream) {
  relu_forward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(x, n);
  PIPEBENCH_CUDA_CHECK(cudaGetLastError());
}

void relu_backward(float* grad, const float* act, size_t n, void* stream) {
  relu_backward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(grad, act, n);
  PIPEBENCH_CUDA_CHECK(cudaGetLastError());
}

void fill_uniform(float* x, size_t n, uint64_t seed, float scale, void* stream) {
  fill_uniform_kernel<<<blocks_for(n), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(x, n, seed, scale);
  PIPEBENCH_CUDA_CHECK(cudaGetLastError());
}

void normalize_u8(const uint8_t* in, float* out, int n, int c, int h, int w, bool nhwc,
                  const float* mean3, const float* std3, float divisor, void* stream) {
  const size_t plane = static_cast<size_t>(h) * w, total = plane * c * n;
  const Channel3 mean{{mean3[0], mean3[1], mean3[2]}}, std{{std3[0], std3[1], std3[2]}};
  normalize_u8_kernel<<<blocks_for(total), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      in, out, total, plane, c, nhwc, mean, std, divisor);
  PIPEBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace pipebench::cuda_kernels
