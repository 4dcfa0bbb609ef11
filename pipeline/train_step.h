// The training-step baseline that the loader feeds.
//
//   emulated  holds the "accelerator" for a fixed time per batch by sleeping until a
//             deadline, using no CPU core (as DLIO's and MLPerf Storage's computation_time).
//             Default 25 ms per batch of 64, about a ResNet-50 training step on a current
//             data-centre GPU. Like a GPU with one step in flight, step() waits for
//             the previous step, starts this one and returns at once (the host batch may
//             be reused), so the consumer fetches the next batch while it "computes".
//   cuda      (also named cuda:mlp) a fixed, real step on the GPU: a 3-layer MLP (input
//             C*H*W -> 1024 -> 1024 -> 1000, ReLU) forward, backward and SGD update with
//             cuBLAS SGEMM on the copied batch; compute_gflop() reports its FLOPs per step.
//             Its arithmetic is spelled out below (kMlpHidden1 ...) and checked against a
//             CPU reference on a device (tests/train_step_test.cpp).
//   cuda:cnn  the case study's toy CNN (the seed ../shared/seeds/002_f12b0381f9f0b900.txt:
//             conv 3->30, floor(log2(S)) blocks of conv 30->30 + ReLU + 2x2 max pool,
//             conv 30->10, flatten to 10 logits, softmax cross-entropy on fixed labels,
//             SGD momentum 0.9) with cuDNN; layers, labels and the FLOPs formula in
//             train_step_cnn.h. NEVER RUN ON A DEVICE as of the commit that added it.
//   Both real steps: the next batch's H2D copy runs on a copy stream while the current
//   step runs on the compute stream; step time timed with CUDA events (shared code:
//   cuda_step_base.h). The host's waits (step() for its batch's copy, synchronize())
//   sleep in the driver (blocking-sync events and device scheduling, device/cuda.h):
//   the consumer thread does not spin a core while the GPU works.
//
// Input (StepInput): the loader's batch as it comes, float32 (NCHW or NHWC) or uint8 (NHWC
// or NCHW, transforms/pipeline_output.h) with, for uint8, the normalize the spec deferred
// to after the copy (DeferredNormalize):
//   emulated  reads nothing: it needs only the shape (and a non-null pointer); the
//             deferred normalize (and with finish: device the deferred flips and mixing)
//             counts as part of its compute time (on an H100 it is tens of microseconds
//             for 64 x 3 x 224 x 224, against a 25 ms step), so it is not run on the
//             consumer's CPU, which would charge the host for the device's work.
//   cuda, cuda:cnn  copy the batch's own bytes (a quarter of float32's for uint8), then, for
//             uint8, a kernel on the copy stream writes the float32 NCHW input,
//             (q / 255 - mean) / std, or q without a normalize: the same float arithmetic as
//             normalize_u8_batch (pipeline/collate.h), its CPU reference. Before it, on
//             the same stream, the deferred flips and mixing of a finish: device batch
//             (device_horizontal_flip, device_apply_mix: transforms/batch_ops_device.h;
//             CPU reference finish_u8_batch in pipeline/collate.h). Float32 NHWC is
//             fed as is: the model sees the pixels in another fixed order (for the CNN, a
//             scrambled image of the same shape), which costs the same FLOPs.
//             measure_compute_ms() times the float32 step without that kernel.
// Units: step times in ms, compute_gflop() in GFLOP (1e9 FLOPs) per step.
//
// Errors: std::invalid_argument for a negative or non-finite step time or batch shape
// <= 0, a null batch, a normalize on other than 3 channels, deferred flips or mixing on
// other than a uint8 NHWC batch, flips of more than kDeviceFlipMaxBatch samples
// (transforms/batch_ops_device.h), an unknown baseline name;
// CudaUnavailable for "cuda" / "cuda:cnn" where no device exists, and for "cuda:cnn" in a
// build without cuDNN; CudaError for a failed CUDA, cuBLAS or cuDNN call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "transforms/batch_mix.h"
#include "transforms/pipeline_output.h"

namespace pipebench {

/// One host batch handed to a step.
struct StepInput {
  const void* data = nullptr;  ///< n samples in dtype / layout, host memory
  int n = 0, c = 0, h = 0, w = 0;
  SampleDtype dtype = SampleDtype::kFloat32;
  BatchLayout layout = BatchLayout::kNCHW;
  /// uint8 only: the normalize to apply after the copy; null: the raw values
  const DeferredNormalize* normalize = nullptr;
  /// uint8 NHWC only (`collate: {..., finish: device}`): n flags, 1 where the sample is
  /// mirrored after the copy (null: none), and the batch's mixup / cutmix draws, applied
  /// in order after the flips and before the normalize.
  const uint8_t* flips = nullptr;
  std::span<const MixDraw> mixes;

  /// n x c x h x w float32 NCHW, the default batch.
  static StepInput float_nchw(const float* data, int n, int c, int h, int w) {
    StepInput in;
    in.data = data;
    in.n = n, in.c = c, in.h = h, in.w = w;
    return in;
  }
  size_t bytes() const {
    return static_cast<size_t>(n) * c * h * w * (dtype == SampleDtype::kUint8 ? 1 : 4);
  }
};

class TrainStep {
 public:
  virtual ~TrainStep() = default;
  virtual const std::string& name() const = 0;  ///< "emulated", "cuda", "cuda:cnn"

  /// Submits one step on a host batch (see StepInput). Returns when the host batch may be
  /// reused (its H2D copy is done), which may be before the step itself finishes.
  virtual void step(const StepInput& batch) = 0;
  /// step() on a host batch N x C x H x W float32.
  void step(const float* host_batch, int n, int c, int h, int w) {
    step(StepInput::float_nchw(host_batch, n, c, h, w));
  }
  /// Waits until every submitted step has finished.
  virtual void synchronize() = 0;
  /// Compute time per step with the data already resident (the FastAI.jl recipe: n steps
  /// on one batch), in ms: the mean over `iters` steps after a warm-up. Emulated: one
  /// step. cuda, cuda:cnn: steps for at least 0.5 s when the step has been idle for more
  /// than 0.1 s or never ran (the GPU's clocks ramp up under load), else one step
  /// (detail::CudaStepBase::kComputeWarmupSeconds, cuda_step_base.h).
  virtual double measure_compute_ms(int n, int c, int h, int w, int iters) = 0;
  /// FLOPs per step / 1e9 (0 for emulated).
  virtual double compute_gflop(int n, int c, int h, int w) const = 0;
};

/// ms_per_batch >= 0: the fixed time each step holds the accelerator.
std::unique_ptr<TrainStep> make_emulated_step(double ms_per_batch);

// The `cuda` MLP (train_step.cpp): input C*H*W -> kMlpHidden1 -> kMlpHidden2 -> kMlpClasses,
// ReLU after the first two. Column-major throughout (cuBLAS): the host batch N x (C*H*W)
// row-major is X = in x N; W1 is kMlpHidden1 x in, W2 kMlpHidden2 x kMlpHidden1, W3
// kMlpClasses x kMlpHidden2, each with its rows as leading dimension. Forward A1 =
// relu(W1 X), A2 = relu(W2 A1), Y = W3 A2; loss |Y|^2 / 2 (so dY = Y: no labels needed);
// backward dW3 = dY A2^T, dA2 = relu'(W3^T dY), dW2 = dA2 A1^T, dA1 = relu'(W2^T dA2),
// dW1 = dA1 X^T; SGD W -= lr dW. Weights at construction: W_l[i] = (2u - 1) sqrt(6 /
// fan_in), u = the top 24 bits of SplitMix64(seed_l + (i + 1) x 0x9E3779B97F4A7C15) / 2^24,
// seeds 1, 2, 3 (cuda_kernels::fill_uniform, train_step_cuda.cu), in column-major order.
constexpr int kMlpHidden1 = 1024;
constexpr int kMlpHidden2 = 1024;
constexpr int kMlpClasses = 1000;
constexpr float kMlpLearningRate = 1e-6f;

/// The MLP's tensors after its last step, read back from the device (column-major as
/// above): the weights (updated), the last step's weight gradients and its output Y
/// (kMlpClasses x n). For checks against a reference (tests/train_step_test.cpp).
struct MlpTensors {
  int n = 0, in = 0;
  std::vector<float> w1, w2, w3, dw1, dw2, dw3, y;
};
/// A `cuda` step whose tensors can be read.
class MlpTrainStep : public TrainStep {
 public:
  /// Waits for the submitted steps and copies the tensors back (empty before any step).
  virtual MlpTensors tensors() = 0;
};
/// The `cuda` MLP with its learning rate (finite, > 0: std::invalid_argument otherwise).
/// Needs a CUDA device (CudaUnavailable otherwise).
std::unique_ptr<MlpTrainStep> make_mlp_step(float learning_rate = kMlpLearningRate);
/// make_mlp_step() at kMlpLearningRate. Needs a CUDA device (CudaUnavailable otherwise).
std::unique_ptr<TrainStep> make_cuda_step();
/// The `cuda:cnn` step: make_cnn_step() in train_step_cnn.h.
/// "emulated" (with ms_per_batch), "cuda" or "cuda:mlp" (the MLP), "cuda:cnn";
/// std::invalid_argument otherwise.
std::unique_ptr<TrainStep> make_train_step(const std::string& baseline, double ms_per_batch);
/// The names make_train_step() takes, in that order.
const std::vector<std::string>& train_step_baselines();
/// A baseline that runs on the GPU (its name starts with "cuda").
bool is_cuda_baseline(const std::string& baseline);

/// The initial weights the CUDA steps draw on the device (cuda_kernels::fill_uniform,
/// train_step_cuda.cu), computed on the host bit for bit: element i is
/// (2u - 1) x scale with u = SplitMix64(seed + (i + 1) x golden gamma) >> 40 over 2^24
/// (2u is exact, so a fused multiply-add on the device rounds the same). For the CPU
/// references of the device tests and tests/cnn_dump.
std::vector<float> host_fill_uniform(size_t count, uint64_t seed, float scale);

}  // namespace pipebench
