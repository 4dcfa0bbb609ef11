// The launch shape of pipebench's CUDA kernels, written once (transforms/crop.cu,
// transforms/batch_mix.cu, pipeline/train_step_cuda.cu, pipeline/train_step_cnn.cu): every
// kernel is a grid-stride loop over n elements (for (i = blockIdx.x * blockDim.x +
// threadIdx.x; i < n; i += gridDim.x * blockDim.x)), launched with kThreadsPerBlock threads
// per block and blocks_for(n) blocks, then PIPEBENCH_CUDA_CHECK(cudaGetLastError())
// (device/cuda.h).
//
// Units: n in elements (whatever one thread handles per step of its loop), the results in
// threads per block and blocks. Never throws. Plain C++: no CUDA header needed.
#pragma once

#include <cstddef>

namespace pipebench {

/// Threads per block of every pipebench kernel.
inline constexpr int kThreadsPerBlock = 256;

/// Blocks for n elements at kThreadsPerBlock threads each: ceil(n / kThreadsPerBlock),
/// at least 1 (n = 0 launches one block that does nothing) and at most 65535 (the
/// grid-stride loop covers the rest).
constexpr unsigned blocks_for(size_t n) {
  const size_t b = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(b < 65535 ? (b == 0 ? 1 : b) : 65535);
}

}  // namespace pipebench
