// CudaStepBase (cuda_step_base.h): streams, input slots, the overlapped H2D copy, the uint8
// normalize and the event-timed compute measurement that the CUDA steps share. Compiled
// only with CUDA.
#include "pipeline/cuda_step_base.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <exception>
#include <utility>

#include "measure/stage_timers.h"
#include "transforms/batch_ops_device.h"

namespace pipebench::detail {
namespace {

cudaEvent_t ev(const std::unique_ptr<CudaEvent>& e) { return static_cast<cudaEvent_t>(e->handle()); }

}  // namespace

CudaStepBase::CudaStepBase(std::string name) : name_(std::move(name)), compute_(), copy_() {}

CudaStepBase::~CudaStepBase() { synchronize_quietly(); }

void CudaStepBase::synchronize_quietly() noexcept {
  try {
    synchronize();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipebench: %s step: %s\n", name_.c_str(), e.what());
  }
}

void CudaStepBase::synchronize() {
  compute_.synchronize();
  copy_.synchronize();
}

void CudaStepBase::step(const StepInput& batch) {
  const std::string where = name_ + " step";
  check_input(where.c_str(), batch);
  require_cuda();  // this thread on the process's device (a step may be driven from any thread)
  ensure_shape(batch.n, batch.c, batch.h, batch.w);
  const int slot = static_cast<int>(steps_ % 2);
  auto copy_stream = static_cast<cudaStream_t>(copy_.handle());
  auto compute_stream = static_cast<cudaStream_t>(compute_.handle());
  // The slot is free once the step that last read it (two steps ago) is done.
  PIPEBENCH_CUDA_CHECK(cudaStreamWaitEvent(copy_stream, ev(compute_done_[slot]), 0));
  if (batch.dtype == SampleDtype::kUint8) {
    copy_u8(batch, slot);
  } else {  // float32 as it comes (NHWC is fed as is: see train_step.h)
    PIPEBENCH_CUDA_CHECK(cudaMemcpyAsync(x_[slot].data(), batch.data, input_floats() * sizeof(float),
                                         cudaMemcpyHostToDevice, copy_stream));
  }
  copy_done_[slot]->record(copy_);
  PIPEBENCH_CUDA_CHECK(cudaStreamWaitEvent(compute_stream, ev(copy_done_[slot]), 0));
  run_step(f(x_[slot]));
  compute_done_[slot]->record(compute_);
  ++steps_;
  last_busy_ns_ = now_ns();
  copy_done_[slot]->synchronize();  // the host batch may be reused now (sleeps: blocking sync)
}

double CudaStepBase::measure_compute_ms(int n, int c, int h, int w, int iters) {
  const std::string where = name_ + " measure_compute_ms";
  check_shape(where.c_str(), n, c, h, w);
  check_iters(where.c_str(), iters);
  ensure_shape(n, c, h, w);
  synchronize();
  float* x = f(x_[0]);
  cuda_kernels::fill_uniform(x, input_floats(), 7, 1.0f, compute_.handle());
  warm_up(x);
  CudaEvent start, stop;
  start.record(compute_);
  for (int i = 0; i < iters; ++i) run_step(x);
  stop.record(compute_);
  stop.synchronize();
  last_busy_ns_ = now_ns();
  return CudaEvent::elapsed_ms(start, stop) / iters;
}

void CudaStepBase::warm_up(const float* x) {
  const int64_t t0 = now_ns();
  const bool idle = last_busy_ns_ == 0 || t0 - last_busy_ns_ > static_cast<int64_t>(kIdleBeforeWarmupSeconds * 1e9);
  run_step(x);  // at least one step, also when the GPU is warm
  if (!idle) return;
  const int64_t until = t0 + static_cast<int64_t>(kComputeWarmupSeconds * 1e9);
  // One step at a time, each waited for, so the time counts GPU work done, not queued.
  for (compute_.synchronize(); now_ns() < until; compute_.synchronize()) run_step(x);
}

// A uint8 batch: its bytes into the slot's staging buffer, the deferred flips and mixing
// (finish: device; check_input has checked NHWC), then the float32 NCHW input by the
// normalize kernel (or q itself), all on the copy stream.
void CudaStepBase::copy_u8(const StepInput& batch, int slot) {
  if (u8_[slot].bytes() < batch.bytes()) {  // first uint8 batch, or a larger one
    synchronize();  // no copy may still read the buffer being replaced
    u8_[slot] = DeviceBuffer(batch.bytes());
  }
  void* s = copy_.handle();
  PIPEBENCH_CUDA_CHECK(cudaMemcpyAsync(u8_[slot].data(), batch.data, batch.bytes(),
                                       cudaMemcpyHostToDevice, static_cast<cudaStream_t>(s)));
  // finish: device: the flips, then the mixing, in the order the CPU operators run them.
  const DeviceBatch device{u8_[slot].data(), batch.n, batch.c, batch.h, batch.w, DeviceBatchFormat::kUint8Nhwc};
  if (batch.flips != nullptr)
    device_horizontal_flip(device, std::span<const uint8_t>(batch.flips, static_cast<size_t>(batch.n)), s);
  for (const MixDraw& d : batch.mixes) device_apply_mix(device, d, s);
  const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
  const DeferredNormalize* norm = batch.normalize;
  cuda_kernels::normalize_u8(static_cast<const uint8_t*>(u8_[slot].data()), f(x_[slot]), batch.n,
                             batch.c, batch.h, batch.w, batch.layout == BatchLayout::kNHWC,
                             norm ? norm->mean.data() : zero, norm ? norm->std.data() : one,
                             norm ? 255.0f : 1.0f, s);
}

// Prepares the model (reshape) and the input slots for a batch shape. Buffers only grow:
// a short last batch (drop_last false), and the full batch after it, keep the slots and
// the model's buffers of the largest batch seen and only describe the new shape.
void CudaStepBase::ensure_shape(int n, int c, int h, int w) {
  if (n == n_ && c == c_ && h == h_ && w == w_) return;
  synchronize();
  const size_t bytes = static_cast<size_t>(n) * c * h * w * sizeof(float);
  DeviceBuffer grown[2];
  if (bytes > x_[0].bytes())  // before reshape: a failed allocation leaves the step as it was
    for (auto& x : grown) x = DeviceBuffer(bytes);
  reshape(n, c, h, w);  // may throw (a shape the model refuses): nothing below has changed
  if (grown[0].data() != nullptr)
    for (int i = 0; i < 2; ++i) x_[i] = std::move(grown[i]);
  if (!copy_done_[0]) {  // once: order only (no timestamps); blocking sync, so step()'s wait sleeps
    for (auto& e : copy_done_) e = std::make_unique<CudaEvent>(CudaEvent::Timing::kUntimed);
    for (auto& e : compute_done_) e = std::make_unique<CudaEvent>(CudaEvent::Timing::kUntimed);
  }
  n_ = n, c_ = c, h_ = h, w_ = w;
  compute_.synchronize();  // reshape's initialisation is done
}

}  // namespace pipebench::detail
