// The training-step baseline that the loader feeds.
//
//   emulated  holds the "accelerator" for a fixed time per batch by sleeping until a
//             deadline, using no CPU core (as DLIO's and MLPerf Storage's computation_time).
//             Default 25 ms per batch of 64, about a ResNet-50 training step on a current
//             data-centre GPU. Like a GPU with one step in flight, step() waits for
//             the previous step, starts this one and returns at once (the host batch may
//             be reused), so the consumer fetches the next batch while it "computes".
//   cuda      a fixed, real step on the GPU: a 3-layer MLP (input C*H*W -> 1024 -> 1024 ->
//             1000, ReLU) forward, backward and SGD update with cuBLAS SGEMM on the copied
//             batch; compute_gflop() reports its FLOPs per step. The next batch's H2D copy
//             runs on a copy stream while the current step runs on the compute stream.
//             Timed with CUDA events.
//
// Errors: std::invalid_argument for a negative or non-finite step time or batch shape
// <= 0; CudaUnavailable for "cuda" where no device exists.
#pragma once

#include <memory>
#include <string>

namespace pipebench {

class TrainStep {
 public:
  virtual ~TrainStep() = default;
  virtual const std::string& name() const = 0;  ///< "emulated", "cuda"

  /// Submits one step on a host batch N x C x H x W float32. Returns when the host batch
  /// may be reused (its H2D copy is done), which may be before the step itself finishes.
  virtual void step(const float* host_batch, int n, int c, int h, int w) = 0;
  /// Waits until every submitted step has finished.
  virtual void synchronize() = 0;
  /// Compute time per step with the data already resident (the FastAI.jl recipe: n steps
  /// on one batch), in ms: the mean over `iters` steps after one warm-up step.
  virtual double measure_compute_ms(int n, int c, int h, int w, int iters) = 0;
  /// FLOPs per step / 1e9 (0 for emulated).
  virtual double compute_gflop(int n, int c, int h, int w) const = 0;
};

/// ms_per_batch >= 0: the fixed time each step holds the accelerator.
std::unique_ptr<TrainStep> make_emulated_step(double ms_per_batch);
/// Needs a CUDA device (CudaUnavailable otherwise).
std::unique_ptr<TrainStep> make_cuda_step();
/// "emulated" (with ms_per_batch) or "cuda"; std::invalid_argument otherwise.
std::unique_ptr<TrainStep> make_train_step(const std::string& baseline, double ms_per_batch);

}  // namespace pipebench
