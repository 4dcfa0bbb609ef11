// Training-step baselines. Timing checks are lower bounds only (a sleep never ends early;
// a loaded machine may make it end late).
#include "pipeline/train_step.h"

#include <gtest/gtest.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "pipeline/collate.h"
#include "pipeline/cuda.h"

#ifdef PIPEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

namespace pipebench::cuda_kernels {  // train_step_cuda.cu
void normalize_u8(const uint8_t* in, float* out, int n, int c, int h, int w, bool nhwc,
                  const float* mean3, const float* std3, float divisor, void* stream);
}  // namespace pipebench::cuda_kernels
#endif

namespace pipebench {
namespace {

using Clock = std::chrono::steady_clock;

TEST(EmulatedStep, HoldsAtLeastTheSetTime) {
  auto step = make_emulated_step(20.0);
  EXPECT_EQ(step->name(), "emulated");
  std::vector<float> batch(2 * 3 * 4 * 4);
  const auto t0 = Clock::now();
  step->step(batch.data(), 2, 3, 4, 4);
  step->step(batch.data(), 2, 3, 4, 4);
  step->synchronize();
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  EXPECT_GE(ms, 40.0);
}

TEST(EmulatedStep, ReturnsBeforeTheStepEndsSoTheNextBatchCanBeFetched) {
  // step() hands the batch over and returns; the next step() (or synchronize()) waits for
  // the accelerator. So the consumer overlaps fetching batch i+1 with step i.
  auto step = make_emulated_step(200.0);
  std::vector<float> batch(2 * 3 * 4 * 4);
  const auto t0 = Clock::now();
  step->step(batch.data(), 2, 3, 4, 4);
  const double returned_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  step->synchronize();
  const double done_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  // A step() that waited for its own 200 ms would return at >= 200 ms (sleeps end no
  // sooner than asked); returning earlier is the property, whatever the machine's load.
  EXPECT_LT(returned_ms, 200.0);
  EXPECT_GE(done_ms, 200.0);
}

TEST(EmulatedStep, MeasureComputeIsAtLeastTheSetTime) {
  auto step = make_emulated_step(5.0);
  EXPECT_GE(step->measure_compute_ms(64, 3, 224, 224, 4), 5.0);
  EXPECT_EQ(step->compute_gflop(64, 3, 224, 224), 0.0);
}

TEST(EmulatedStep, ZeroTimeIsAllowed) {
  auto step = make_emulated_step(0.0);
  std::vector<float> batch(3);
  // 0 ms is a valid step (a pipeline measured against an infinitely fast accelerator), not
  // refused as the negative times below are.
  EXPECT_NO_THROW(step->step(batch.data(), 1, 3, 1, 1));
  EXPECT_NO_THROW(step->synchronize());
  EXPECT_NO_THROW(step->measure_compute_ms(1, 3, 1, 1, 3));
}

TEST(EmulatedStep, RejectsBadArguments) {
  try {
    make_emulated_step(-1.0);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ms_per_batch"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_emulated_step(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  EXPECT_THROW(make_emulated_step(std::numeric_limits<double>::infinity()), std::invalid_argument);
  auto step = make_emulated_step(1.0);
  std::vector<float> batch(12);
  EXPECT_THROW(step->step(batch.data(), 0, 3, 2, 2), std::invalid_argument);
  EXPECT_THROW(step->step(nullptr, 1, 3, 2, 2), std::invalid_argument);
  EXPECT_THROW(step->measure_compute_ms(1, 3, 2, 2, 0), std::invalid_argument);
  EXPECT_THROW(step->measure_compute_ms(1, -3, 2, 2, 1), std::invalid_argument);
}

// A uint8 batch (either layout, with or without its deferred normalize) is a valid input;
// the emulated step reads none of it, so only the shape and pointer are checked.
TEST(EmulatedStep, TakesUint8Batches) {
  auto step = make_emulated_step(0.0);
  std::vector<uint8_t> batch(2 * 3 * 4 * 4, 7);
  const DeferredNormalize norm{{0.5f, 0.5f, 0.5f}, {0.25f, 0.25f, 0.25f}};
  StepInput in;
  in.data = batch.data();
  in.n = 2, in.c = 3, in.h = 4, in.w = 4;
  in.dtype = SampleDtype::kUint8;
  in.layout = BatchLayout::kNHWC;
  in.normalize = &norm;
  EXPECT_EQ(in.bytes(), batch.size());
  EXPECT_NO_THROW(step->step(in));
  in.layout = BatchLayout::kNCHW;
  in.normalize = nullptr;
  EXPECT_NO_THROW(step->step(in));
  in.normalize = &norm;
  in.c = 1;  // a normalize of 3 channels on a 1-channel batch
  EXPECT_THROW(step->step(in), std::invalid_argument);
  in.c = 3;
  in.dtype = SampleDtype::kFloat32;  // the normalize of a float32 batch ran on the CPU
  EXPECT_THROW(step->step(in), std::invalid_argument);
  in.dtype = SampleDtype::kUint8;
  in.data = nullptr;
  EXPECT_THROW(step->step(in), std::invalid_argument);
  step->synchronize();
}

TEST(TrainStepFactory, ByName) {
  EXPECT_EQ(make_train_step("emulated", 1.0)->name(), "emulated");
  try {
    make_train_step("tpu", 1.0);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tpu"), std::string::npos) << e.what();
  }
}

TEST(CudaStep, UnavailableWithoutDevice) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: " << cuda_info().device_name;
  try {
    make_cuda_step();
    FAIL() << "expected CudaUnavailable";
  } catch (const CudaUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find(cuda_info().reason), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_train_step("cuda", 0.0), CudaUnavailable);
}

TEST(CudaStep, RunsAndReportsFlops) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  auto step = make_cuda_step();
  EXPECT_EQ(step->name(), "cuda");
  const int n = 8, c = 3, h = 32, w = 32;
  // Independent FLOP count: forward 2N(in*1024 + 1024*1024 + 1024*1000); backward the
  // three weight gradients plus the input gradients of layers 3 and 2; update 2 per weight.
  const double in = c * h * w, params = in * 1024 + 1024.0 * 1024 + 1024.0 * 1000;
  const double expected = (2.0 * n * params + 2.0 * n * (params + 1024.0 * 1000 + 1024.0 * 1024) +
                           2.0 * params) / 1e9;
  EXPECT_NEAR(step->compute_gflop(n, c, h, w), expected, 1e-9);
  std::vector<float> batch(static_cast<size_t>(n) * c * h * w, 0.5f);
  for (int i = 0; i < 4; ++i) step->step(batch.data(), n, c, h, w);
  step->synchronize();
  EXPECT_GT(step->measure_compute_ms(n, c, h, w, 3), 0.0);
}

// Host waits sleep (pipeline/cuda.h: blocking-sync events and scheduling): while the GPU
// runs some hundred ms of steps, the thread that submits them and waits (step() waits for
// its batch's copy, which waits for the step two before) uses a small part of a core. A
// spinning wait would read about 100 %; 50 % leaves room for the submission's own work.
TEST(CudaStep, HostWaitsDoNotSpin) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  auto step = make_cuda_step();
  const int n = 256, c = 3, h = 224, w = 224;  // ~0.25 TFLOP per step: milliseconds on any GPU
  // Pinned: a pageable copy would be staged by this thread's CPU, which is not a wait.
  HostBuffer pinned(static_cast<size_t>(n) * c * h * w * sizeof(float), MemoryKind::kPinned);
  std::fill(pinned.as<float>(), pinned.as<float>() + pinned.bytes() / sizeof(float), 0.25f);
  const float* batch = pinned.as<float>();
  step->step(batch, n, c, h, w);  // allocation and the first launch, not measured
  step->synchronize();
  const auto thread_cpu_ns = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
  };
  const auto t0 = Clock::now();
  const long long cpu0 = thread_cpu_ns();
  int steps = 0;
  while (Clock::now() - t0 < std::chrono::milliseconds(300) || steps < 4) {
    step->step(batch, n, c, h, w);
    ++steps;
  }
  step->synchronize();
  const double cpu_ms = static_cast<double>(thread_cpu_ns() - cpu0) / 1e6;
  const double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  EXPECT_LT(cpu_ms, 0.5 * wall_ms) << steps << " steps: the waiting thread used " << cpu_ms << " ms of CPU in "
                                   << wall_ms << " ms";
}

#ifdef PIPEBENCH_HAVE_CUDA
// The device normalize of a uint8 batch equals its CPU reference (normalize_u8_batch) bit
// for bit, from either layout and for raw values; and the cuda step takes uint8 batches.
TEST(CudaStep, NormalizeKernelEqualsTheCpuReference) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  const int n = 3, c = 3, h = 9, w = 11;
  const size_t count = static_cast<size_t>(n) * c * h * w;
  std::vector<uint8_t> host(count);
  for (size_t k = 0; k < count; ++k) host[k] = static_cast<uint8_t>(k * 37 + 11);
  const DeferredNormalize norm{{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}};
  DeviceBuffer in(count), out(count * 4);
  copy_to_device(in.data(), host.data(), count, nullptr);
  const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
  for (BatchLayout layout : {BatchLayout::kNCHW, BatchLayout::kNHWC}) {
    for (bool normalized : {true, false}) {
      std::vector<float> want(count), got(count);
      normalize_u8_batch(host.data(), layout, n, c, h, w, normalized ? &norm : nullptr, want.data());
      cuda_kernels::normalize_u8(static_cast<const uint8_t*>(in.data()), static_cast<float*>(out.data()), n, c,
                                 h, w, layout == BatchLayout::kNHWC, normalized ? norm.mean.data() : zero,
                                 normalized ? norm.std.data() : one, normalized ? 255.0f : 1.0f, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(got.data(), out.data(), count * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), count * 4), 0)
          << layout_name(layout) << (normalized ? " normalized" : " raw");
    }
  }
  auto step = make_cuda_step();
  StepInput batch;
  batch.data = host.data();
  batch.n = n, batch.c = c, batch.h = h, batch.w = w;
  batch.dtype = SampleDtype::kUint8;
  batch.layout = BatchLayout::kNHWC;
  batch.normalize = &norm;
  for (int i = 0; i < 3; ++i) step->step(batch);
  step->synchronize();
}
#endif

}  // namespace
}  // namespace pipebench
