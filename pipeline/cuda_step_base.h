// What the training steps share (internal to pipeline/, not a public header):
//   - the argument checks every step makes (defined in train_step.cpp);
//   - with CUDA, the device kernels of train_step_cuda.cu and CudaStepBase, the part of a
//     real step that is not its model: the compute and copy streams, the two input slots,
//     the H2D copy of batch k+1 overlapping step k, the uint8 batch's normalize kernel on
//     the copy stream, synchronize(), and measure_compute_ms() timed with CUDA events
//     after a warm-up by time (the GPU's clocks ramp up under load).
//     The MLP (`cuda`, train_step.cpp) and the CNN (`cuda:cnn`, train_step_cnn.cpp) derive
//     from it and supply only reshape() (allocate for a batch shape) and run_step();
//   - CudaStepFacade, the public object of such a step (MlpTrainStep, CnnTrainStep), which
//     forwards TrainStep's calls to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "pipeline/train_step.h"

namespace pipebench::detail {

/// std::invalid_argument "<where>: batch shape N x C x H x W must be > 0, got ..."
void check_shape(const char* where, int n, int c, int h, int w);
/// The shape, a non-null batch, and a normalize only on 3-channel uint8.
void check_input(const char* where, const StepInput& in);
/// iters >= 1.
void check_iters(const char* where, int iters);

}  // namespace pipebench::detail

#ifdef PIPEBENCH_HAVE_CUDA
#include "device/cuda.h"

namespace pipebench {
namespace cuda_kernels {  // train_step_cuda.cu; `stream` is a cudaStream_t (null: the default)
void relu_forward(float* x, size_t n, void* stream);
void relu_backward(float* grad, const float* act, size_t n, void* stream);
/// x[i] uniform in [-scale, scale) from a hash of (seed, i).
void fill_uniform(float* x, size_t n, uint64_t seed, float scale, void* stream);
void normalize_u8(const uint8_t* in, float* out, int n, int c, int h, int w, bool nhwc,
                  const float* mean3, const float* std3, float divisor, void* stream);
}  // namespace cuda_kernels

namespace detail {

// Two streams: the copy stream moves batch k into input slot k % 2 (after the step that
// last read that slot is done, by event), the compute stream waits for that copy and runs
// step k. step() returns when batch k's copy is done, so batch k+1's copy overlaps step k.
// A uint8 batch is copied as its bytes and turned into the float32 NCHW input by the
// normalize kernel on the copy stream (train_step.h).
class CudaStepBase : public TrainStep {
 public:
  const std::string& name() const override { return name_; }
  void step(const StepInput& batch) override;
  void synchronize() override;
  /// iters steps on one resident batch (uniform in [-1, 1)) after a warm-up, timed with
  /// CUDA events on the compute stream; the mean in ms. The warm-up: steps until at least
  /// kComputeWarmupSeconds have passed when this step has been idle for more than
  /// kIdleBeforeWarmupSeconds (or never ran), else one step.
  double measure_compute_ms(int n, int c, int h, int w, int iters) override;

  /// A GPU lowers its clocks when idle and takes a while under load to raise them again
  /// (NVIDIA's boost: tens to hundreds of ms; it does not state a figure), so a step timed
  /// right after an idle phase (the loader measured alone, seconds) reads slow. 0.5 s of
  /// steps is several times that ramp and costs one measurement half a second.
  static constexpr double kComputeWarmupSeconds = 0.5;
  /// Idle for longer than this, the clocks may have dropped: warm up again. Short enough
  /// that any real pause re-warms, long enough that back-to-back measurements (BM_TrainStep
  /// calls measure_compute_ms once per iteration) do not pay the warm-up each time.
  static constexpr double kIdleBeforeWarmupSeconds = 0.1;

 protected:
  explicit CudaStepBase(std::string name);  ///< CudaUnavailable without a device
  ~CudaStepBase() override;
  /// A derived destructor calls this before releasing its library handles.
  void synchronize_quietly() noexcept;

  /// Prepares the model for a batch n x c x h x w float32 NCHW (called with the streams
  /// idle; n_.. still hold the previous shape, 0 at first). Keeps every buffer that is
  /// large enough (a short last batch must not free and reallocate the activations of the
  /// full one, GBs for the CNN) and re-describes the shape. Strongly exception-safe: when
  /// it throws (a shape the model refuses, an allocation that fails), the model is as it
  /// was.
  virtual void reshape(int n, int c, int h, int w) = 0;
  /// Enqueues one forward, backward and update on the compute stream on input x
  /// (n_ x c_ x h_ x w_ float32 NCHW, on the device).
  virtual void run_step(const float* x) = 0;

  CudaStream& compute_stream() { return compute_; }
  void* compute_handle() const { return compute_.handle(); }  ///< cudaStream_t
  static float* f(const DeviceBuffer& b) { return static_cast<float*>(b.data()); }
  size_t input_floats() const { return static_cast<size_t>(n_) * c_ * h_ * w_; }

  int n_ = 0, c_ = 0, h_ = 0, w_ = 0;

 private:
  void ensure_shape(int n, int c, int h, int w);
  void copy_u8(const StepInput& batch, int slot);
  /// The warm-up of measure_compute_ms on the resident input x.
  void warm_up(const float* x);

  std::string name_;
  CudaStream compute_;
  CudaStream copy_;
  int64_t steps_ = 0;
  int64_t last_busy_ns_ = 0;  // now_ns() when work was last submitted or measured; 0: never
  DeviceBuffer x_[2];
  DeviceBuffer u8_[2];  // uint8 batches before the normalize kernel
  std::unique_ptr<CudaEvent> copy_done_[2];
  std::unique_ptr<CudaEvent> compute_done_[2];
};

// A step's public interface (MlpTrainStep, CnnTrainStep: TrainStep with readers of the
// model's tensors) implemented by a CudaStepBase: both are TrainSteps, so the public object
// holds the implementation (impl_) and forwards TrainStep's calls to it; a step adds only
// its readers. Constructed with the implementation's arguments; throws what it throws.
template <typename Public, typename Impl>
class CudaStepFacade : public Public {
 public:
  template <typename... Args>
  explicit CudaStepFacade(Args&&... args) : impl_(std::forward<Args>(args)...) {}
  const std::string& name() const override { return impl_.name(); }
  void step(const StepInput& batch) override { impl_.step(batch); }
  void synchronize() override { impl_.synchronize(); }
  double measure_compute_ms(int n, int c, int h, int w, int iters) override {
    return impl_.measure_compute_ms(n, c, h, w, iters);
  }
  double compute_gflop(int n, int c, int h, int w) const override { return impl_.compute_gflop(n, c, h, w); }

 protected:
  Impl impl_;
};

}  // namespace detail
}  // namespace pipebench
#endif  // PIPEBENCH_HAVE_CUDA
