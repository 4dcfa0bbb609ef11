// The two kernels of the `cuda:cnn` step that cuDNN does not provide (train_step_cnn.cpp
// drives them): the softmax cross-entropy loss with its gradient, and the SGD-with-momentum
// update. Never run on a device as of the commit that added them.
#include <cuda_runtime.h>

#include <cstddef>

#include "device/cuda.h"
#include "device/launch.h"

namespace pipebench::cuda_kernels {
namespace {

// One thread per sample i of n, k logits each (contiguous): p = softmax(logits) (max
// subtracted), loss[i] = -log p[label], dlogits = (p - onehot(label)) / n (the gradient
// of the batch mean). label = i % classes: the step's fixed labels (StepInput has none).
__global__ void softmax_xent_kernel(const float* logits, int n, int k, int classes, float* dlogits,
                                    float* loss) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float* z = logits + static_cast<size_t>(i) * k;
    float* dz = dlogits + static_cast<size_t>(i) * k;
    const int label = i % classes;
    float top = z[0];
    for (int j = 1; j < k; ++j) top = fmaxf(top, z[j]);
    float sum = 0.0f;
    for (int j = 0; j < k; ++j) sum += expf(z[j] - top);
    const float log_sum = logf(sum);
    loss[i] = log_sum - (z[label] - top);
    const float inv_n = 1.0f / static_cast<float>(n);
    for (int j = 0; j < k; ++j) {
      const float p = expf(z[j] - top - log_sum);
      dz[j] = (p - (j == label ? 1.0f : 0.0f)) * inv_n;
    }
  }
}

// torch.optim.SGD with momentum, no dampening or weight decay: v = momentum v + g; w -= lr v.
__global__ void sgd_momentum_kernel(float* w, float* v, const float* g, size_t count, float lr,
                                    float momentum) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    const float vi = momentum * v[i] + g[i];
    v[i] = vi;
    w[i] -= lr * vi;
  }
}

}  // namespace

void softmax_xent(const float* logits, int n, int k, int classes, float* dlogits, float* loss,
                  void* stream) {
  softmax_xent_kernel<<<blocks_for(static_cast<size_t>(n)), kThreadsPerBlock, 0,
                        static_cast<cudaStream_t>(stream)>>>(logits, n, k, classes, dlogits, loss);
  PIPEBENCH_CUDA_CHECK(cudaGetLastError());
}

void sgd_momentum(float* w, float* v, const float* g, size_t count, float lr, float momentum,
                  void* stream) {
  sgd_momentum_kernel<<<blocks_for(count), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      w, v, g, count, lr, momentum);
  PIPEBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace pipebench::cuda_kernels
