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
#include <thread>
#include <vector>

#include "device/cuda.h"
#include "pipeline/collate.h"

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
  // Deferred flips and mixing (finish: device) only on uint8 NHWC.
  const uint8_t flips[2] = {1, 0};
  in.dtype = SampleDtype::kUint8;
  in.flips = flips;
  EXPECT_THROW(step->step(in), std::invalid_argument);  // NCHW
  in.layout = BatchLayout::kNHWC;
  EXPECT_NO_THROW(step->step(in));
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

// --- the MLP against a CPU reference ---------------------------------------------------------

// cuda_kernels::fill_uniform (train_step_cuda.cu) on the host: the same SplitMix64 hash and
// float expression, so the initial weights are the device's bit for bit (2u is exact, so a
// fused multiply-add there rounds the same).
std::vector<float> mlp_init(size_t count, uint64_t seed, float scale) {
  return host_fill_uniform(count, seed, scale);
}

// C (m x n) = op(A) op(B), column-major as cuBLAS, in double: A is m x k (lda m) or, with
// ta, k x m (lda k), transposed; B is k x n (ldb k) or, with tb, n x k (ldb n).
std::vector<double> ref_gemm(bool ta, bool tb, int m, int n, int k, const std::vector<double>& a,
                             const std::vector<double>& b) {
  std::vector<double> c(static_cast<size_t>(m) * n, 0.0);
  for (int j = 0; j < n; ++j)
    for (int p = 0; p < k; ++p) {
      const double bv = tb ? b[j + static_cast<size_t>(p) * n] : b[p + static_cast<size_t>(j) * k];
      if (bv == 0.0) continue;
      for (int i = 0; i < m; ++i)
        c[i + static_cast<size_t>(j) * m] += (ta ? a[p + static_cast<size_t>(i) * k] : a[i + static_cast<size_t>(p) * m]) * bv;
    }
  return c;
}

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// Elementwise |got - want| <= kRtol |want| + kAtol max|want|. float32 sums of up to 1024
// products in another order than the reference's (double) differ by about sqrt(K) x 2^-24
// of the sum of |terms|: ~1e-4 of a typical element after three layers; the bound is about
// ten times that, and a GEMM with a transposed or mis-strided operand is wrong by O(1) of
// the tensor's scale, a thousand times the bound.
constexpr double kRtol = 1e-3, kAtol = 1e-4;

void expect_close(const char* what, const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  ASSERT_GT(scale, 0.0) << what << " is all zeros: the check would prove nothing";
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(got[i] - want[i]);
    worst = std::max(worst, err / scale);
    if (!(err <= kRtol * std::abs(want[i]) + kAtol * scale)) {
      if (bad++ == 0) first = i;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " elements off; first at " << first
                     << ": " << got[first] << " against " << want[first] << " (largest error "
                     << worst << " of the tensor's scale " << scale << ")";
}

// One step of the cuBLAS MLP against the same step in double on the CPU (train_step.h has
// the arithmetic): the output Y, the three weight gradients, and the SGD update read as
// (W_before - W_after) / lr. A transposed GEMM with legal leading dimensions runs fine on
// the device and fails here.
TEST(CudaStep, OneStepMatchesACpuReference) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  const int n = 4, c = 3, h = 4, w = 4, in = c * h * w;
  const int h1 = kMlpHidden1, h2 = kMlpHidden2, out = kMlpClasses;
  const float lr = 1e-2f;  // large enough that the update shows in float32 weights
  auto step = make_mlp_step(lr);
  EXPECT_TRUE(step->tensors().w1.empty());  // nothing before the first step
  std::vector<float> batch(static_cast<size_t>(n) * in);
  uint32_t state = 12345;
  for (float& v : batch) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / 8388608.0f - 1.0f;  // [-1, 1)
  }
  step->step(batch.data(), n, c, h, w);
  const MlpTensors t = step->tensors();
  ASSERT_EQ(t.n, n);
  ASSERT_EQ(t.in, in);

  const std::vector<float> w1f = mlp_init(size_t(in) * h1, 1, static_cast<float>(std::sqrt(6.0 / in)));
  const std::vector<float> w2f = mlp_init(size_t(h1) * h2, 2, static_cast<float>(std::sqrt(6.0 / h1)));
  const std::vector<float> w3f = mlp_init(size_t(h2) * out, 3, static_cast<float>(std::sqrt(6.0 / h2)));
  const auto w1 = to_double(w1f), w2 = to_double(w2f), w3 = to_double(w3f), x = to_double(batch);
  const auto relu = [](std::vector<double> v) {
    for (double& e : v) e = std::max(e, 0.0);
    return v;
  };
  const auto relu_grad = [](std::vector<double> g, const std::vector<double>& act) {
    for (size_t i = 0; i < g.size(); ++i) g[i] = act[i] > 0 ? g[i] : 0.0;
    return g;
  };
  // Forward, loss |Y|^2 / 2 so dY = Y, backward: train_step.h's formulas.
  const auto a1 = relu(ref_gemm(false, false, h1, n, in, w1, x));
  const auto a2 = relu(ref_gemm(false, false, h2, n, h1, w2, a1));
  const auto y = ref_gemm(false, false, out, n, h2, w3, a2);
  const auto dw3 = ref_gemm(false, true, out, h2, n, y, a2);
  const auto da2 = relu_grad(ref_gemm(true, false, h2, n, out, w3, y), a2);
  const auto dw2 = ref_gemm(false, true, h2, h1, n, da2, a1);
  const auto da1 = relu_grad(ref_gemm(true, false, h1, n, h2, w2, da2), a1);
  const auto dw1 = ref_gemm(false, true, h1, in, n, da1, x);

  expect_close("Y", t.y, y);
  expect_close("dW3", t.dw3, dw3);
  expect_close("dW2", t.dw2, dw2);
  expect_close("dW1", t.dw1, dw1);
  // The update, as the gradient it applied: (W_before - W_after) / lr, W_before being the
  // initial weights above (exact). W_after's float32 rounding adds 2^-24 |W| / lr at most,
  // ~1e-6 of these gradients' scale: inside the bound.
  const auto applied = [lr](const std::vector<float>& before, const std::vector<float>& after) {
    std::vector<float> g(before.size());
    for (size_t i = 0; i < g.size(); ++i) g[i] = (before[i] - after[i]) / lr;
    return g;
  };
  expect_close("update of W3", applied(w3f, t.w3), dw3);
  expect_close("update of W2", applied(w2f, t.w2), dw2);
  expect_close("update of W1", applied(w1f, t.w1), dw1);
}

TEST(CudaStep, MlpRejectsBadLearningRates) {
  EXPECT_THROW(make_mlp_step(0.0f), std::invalid_argument);
  EXPECT_THROW(make_mlp_step(-1.0f), std::invalid_argument);
  EXPECT_THROW(make_mlp_step(std::numeric_limits<float>::quiet_NaN()), std::invalid_argument);
  EXPECT_THROW(make_mlp_step(std::numeric_limits<float>::infinity()), std::invalid_argument);
}

// Host waits sleep (device/cuda.h: blocking-sync events and scheduling): while the GPU
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

// measure_compute_ms warms the GPU up for 0.5 s when the step was idle (a fresh step is),
// and not again right after: BM_TrainStep calls it once per iteration.
TEST(CudaStep, MeasureComputeWarmsUpByTimeAfterIdle) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  auto step = make_cuda_step();
  const auto seconds = [&] {
    const auto t0 = Clock::now();
    EXPECT_GT(step->measure_compute_ms(8, 3, 32, 32, 2), 0.0);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  EXPECT_GE(seconds(), 0.5);  // fresh: warmed up by time
  EXPECT_LT(seconds(), 0.5);  // right after: one warm-up step (~ms)
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // idle past 0.1 s
  EXPECT_GE(seconds(), 0.5);
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
