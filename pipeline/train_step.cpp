// Training-step baselines (see train_step.h): the emulated step (a timed sleep) and the
// CUDA step (a 3-layer MLP with cuBLAS, kernels in train_step_cuda.cu).
#include "pipeline/train_step.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

#include "device/cublas.h"
#include "device/cuda.h"
#include "model/catalogue.h"
#include "pipeline/cuda_step_base.h"
#include "pipeline/train_step_cnn.h"
#include "transforms/batch_ops_device.h"

#ifdef PIPEBENCH_HAVE_CUDA
#include <cuda_runtime.h>

#include <climits>
#include <memory>
#endif

namespace pipebench {
namespace detail {

void check_shape(const char* where, int n, int c, int h, int w) {
  if (n <= 0 || c <= 0 || h <= 0 || w <= 0) {
    throw std::invalid_argument(std::string(where) + ": batch shape N x C x H x W must be > 0, got " +
                                std::to_string(n) + " x " + std::to_string(c) + " x " +
                                std::to_string(h) + " x " + std::to_string(w));
  }
}

void check_input(const char* where, const StepInput& in) {
  check_shape(where, in.n, in.c, in.h, in.w);
  if (in.data == nullptr) throw std::invalid_argument(std::string(where) + ": the host batch is null");
  if (in.normalize != nullptr && (in.dtype != SampleDtype::kUint8 || in.c != 3))
    throw std::invalid_argument(std::string(where) + ": a deferred normalize needs a uint8 batch of 3 "
                                "channels, got " + dtype_name(in.dtype) + " with " + std::to_string(in.c));
  if ((in.flips != nullptr || !in.mixes.empty()) &&
      (in.dtype != SampleDtype::kUint8 || in.layout != BatchLayout::kNHWC))
    throw std::invalid_argument(std::string(where) + ": deferred flips or mixing need a uint8 NHWC batch, got " +
                                dtype_name(in.dtype) + " " + layout_name(in.layout));
  if (in.flips != nullptr && in.n > kDeviceFlipMaxBatch)  // before any copy is queued
    throw std::invalid_argument(std::string(where) + ": the device flips at most " +
                                std::to_string(kDeviceFlipMaxBatch) + " samples per batch, got " + std::to_string(in.n));
}

void check_iters(const char* where, int iters) {
  if (iters < 1) {
    throw std::invalid_argument(std::string(where) + ": iters must be >= 1, got " +
                                std::to_string(iters));
  }
}

}  // namespace detail

namespace {

using detail::check_input;
using detail::check_iters;
using detail::check_shape;

// --- emulated ---------------------------------------------------------------------------

// Holds the "accelerator" for ms_per_batch from the start of each step by sleeping until a
// steady_clock deadline: the calling thread blocks without using a core, and step() returns
// when the step is done (the emulated device is synchronous). The batch is not read.
class EmulatedStep final : public TrainStep {
 public:
  explicit EmulatedStep(double ms_per_batch)
      : duration_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double, std::milli>(ms_per_batch))) {}

  const std::string& name() const override { return name_; }

  // Like a GPU with one step in flight: step() waits for the previous step to finish,
  // starts this one and returns at once (the batch counts as copied, so the host buffer
  // may be reused, as after a pinned H2D copy), while the consumer goes on to fetch the
  // next batch. The "accelerator" is busy until busy_until_; no CPU core is used.
  // The batch's bytes are not read, whatever its dtype (see train_step.h).
  void step(const StepInput& batch) override {
    check_input("emulated step", batch);
    std::this_thread::sleep_until(busy_until_);
    busy_until_ = std::chrono::steady_clock::now() + duration_;
  }
  void synchronize() override { std::this_thread::sleep_until(busy_until_); }

  double measure_compute_ms(int n, int c, int h, int w, int iters) override {
    check_shape("emulated measure_compute_ms", n, c, h, w);
    check_iters("emulated measure_compute_ms", iters);
    synchronize();
    hold();  // warm-up
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) hold();
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::milli>(t1 - t0).count() / iters;
  }
  double compute_gflop(int n, int c, int h, int w) const override {
    check_shape("emulated compute_gflop", n, c, h, w);
    return 0.0;
  }

 private:
  void hold() const {
    const auto deadline = std::chrono::steady_clock::now() + duration_;
    std::this_thread::sleep_until(deadline);
  }
  std::chrono::steady_clock::duration duration_;
  std::chrono::steady_clock::time_point busy_until_{};
  std::string name_ = "emulated";
};

}  // namespace

std::unique_ptr<TrainStep> make_emulated_step(double ms_per_batch) {
  if (!std::isfinite(ms_per_batch) || ms_per_batch < 0.0) {
    throw std::invalid_argument("emulated step: ms_per_batch must be finite and >= 0, got " +
                                std::to_string(ms_per_batch));
  }
  return std::make_unique<EmulatedStep>(ms_per_batch);
}

// --- cuda (the MLP) ----------------------------------------------------------------------

#ifdef PIPEBENCH_HAVE_CUDA
namespace {

#define PIPEBENCH_CUBLAS_CHECK(call)                                                     \
  do {                                                                                   \
    const cublasStatus_t pipebench_cublas_status_ = (call);                              \
    if (pipebench_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                             \
      throw CudaError(std::string(#call) + " failed at " + __FILE__ + ":" +              \
                      std::to_string(__LINE__) + ": " +                                  \
                      cublas().status_string(pipebench_cublas_status_));                  \
    }                                                                                    \
  } while (0)

constexpr int kHidden1 = kMlpHidden1;
constexpr int kHidden2 = kMlpHidden2;
constexpr int kClasses = kMlpClasses;

double mlp_gflop(int n, int c, int h, int w) {
  const double in = static_cast<double>(c) * h * w;
  const double params = in * kHidden1 + double{kHidden1} * kHidden2 + double{kHidden2} * kClasses;
  const double forward = 2.0 * n * params;
  // Backward: weight gradients of all three layers plus input gradients of layers 3 and 2
  // (the input's own gradient is not needed).
  const double backward =
      2.0 * n * (params + double{kHidden2} * kClasses + double{kHidden1} * kHidden2);
  const double update = 2.0 * params;  // saxpy: a multiply and an add per weight
  return (forward + backward + update) / 1e9;
}

// The arithmetic of train_step.h (kMlpHidden1 ...) as a detail::CudaStepBase: streams,
// input slots, copies and timing there (cuda_step_base.h).
class MlpImpl final : public detail::CudaStepBase {
 public:
  explicit MlpImpl(float lr) : CudaStepBase("cuda"), lr_(lr) {
    PIPEBENCH_CUBLAS_CHECK(api_.create(&handle_));
    cublasStatus_t s = api_.set_stream(handle_, static_cast<cudaStream_t>(compute_handle()));
    if (s != CUBLAS_STATUS_SUCCESS) {
      api_.destroy(handle_);
      PIPEBENCH_CUBLAS_CHECK(s);
    }
  }
  ~MlpImpl() override {
    synchronize_quietly();
    if (handle_ != nullptr) api_.destroy(handle_);
  }

  double compute_gflop(int n, int c, int h, int w) const override {
    detail::check_shape("cuda compute_gflop", n, c, h, w);
    return mlp_gflop(n, c, h, w);
  }

  MlpTensors tensors() {
    synchronize();
    MlpTensors t;
    if (n_ == 0) return t;
    t.n = n_;
    t.in = c_ * h_ * w_;
    const size_t in = static_cast<size_t>(t.in), n = static_cast<size_t>(n_);
    const auto read = [](const DeviceBuffer& b, size_t floats) {
      std::vector<float> v(floats);
      copy_to_host(v.data(), b.data(), floats * sizeof(float), nullptr);
      return v;
    };
    t.w1 = read(w1_, in * kHidden1), t.dw1 = read(dw1_, in * kHidden1);
    t.w2 = read(w2_, size_t{kHidden1} * kHidden2), t.dw2 = read(dw2_, size_t{kHidden1} * kHidden2);
    t.w3 = read(w3_, size_t{kHidden2} * kClasses), t.dw3 = read(dw3_, size_t{kHidden2} * kClasses);
    t.y = read(y_, n * kClasses);
    return t;
  }

 private:
  // Weights (new, and initialised, when C*H*W changes) and activations (grown only) for a
  // batch shape.
  void reshape(int n, int c, int h, int w) override {
    const int64_t in = static_cast<int64_t>(c) * h * w;
    // cuBLAS's 32-bit sizes: W1 (in x 1024) and the batch (n x in) must fit an int.
    if (in * kHidden1 > INT32_MAX || static_cast<int64_t>(n) * in > INT32_MAX) {
      throw std::invalid_argument("cuda step: batch " + std::to_string(n) + " x " +
                                  std::to_string(in) + " inputs is too large for 32-bit cuBLAS "
                                  "sizes (need C*H*W*1024 and N*C*H*W <= 2^31 - 1; --size <= 836)");
    }
    // Every allocation first (any may throw), then the moves (noexcept): strongly safe.
    const bool new_weights = in != static_cast<int64_t>(c_) * h_ * w_;
    const size_t w1 = static_cast<size_t>(in) * kHidden1;
    const size_t w2 = size_t{kHidden1} * kHidden2;
    const size_t w3 = size_t{kHidden2} * kClasses;
    const size_t weight_floats[3] = {w1, w2, w3};
    DeviceBuffer weights[6];  // w1, w2, w3, dw1, dw2, dw3
    if (new_weights)
      for (int i = 0; i < 6; ++i) weights[i] = DeviceBuffer(weight_floats[i % 3] * 4);
    // Activations depend on n only, and are kept when large enough (a short batch).
    const size_t nn = static_cast<size_t>(n);
    const bool grow = nn > batch_capacity_;
    const size_t act_floats[5] = {nn * kHidden1, nn * kHidden2, nn * kClasses, nn * kHidden1, nn * kHidden2};
    DeviceBuffer acts[5];  // a1, a2, y, da1, da2
    if (grow)
      for (int i = 0; i < 5; ++i) acts[i] = DeviceBuffer(act_floats[i] * 4);
    if (new_weights) {
      w1_ = std::move(weights[0]), w2_ = std::move(weights[1]), w3_ = std::move(weights[2]);
      dw1_ = std::move(weights[3]), dw2_ = std::move(weights[4]), dw3_ = std::move(weights[5]);
      // He-style uniform init: scale sqrt(6 / fan_in).
      void* s = compute_handle();
      cuda_kernels::fill_uniform(f(w1_), w1, 1, static_cast<float>(std::sqrt(6.0 / in)), s);
      cuda_kernels::fill_uniform(f(w2_), w2, 2, static_cast<float>(std::sqrt(6.0 / kHidden1)), s);
      cuda_kernels::fill_uniform(f(w3_), w3, 3, static_cast<float>(std::sqrt(6.0 / kHidden2)), s);
    }
    if (grow) {
      a1_ = std::move(acts[0]), a2_ = std::move(acts[1]), y_ = std::move(acts[2]);
      da1_ = std::move(acts[3]), da2_ = std::move(acts[4]);
      batch_capacity_ = nn;
    }
  }

  void gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float* a,
            int lda, const float* b, int ldb, float* c, int ldc) {
    const float one = 1.0f, zero = 0.0f;
    PIPEBENCH_CUBLAS_CHECK(api_.sgemm(handle_, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc));
  }

  void run_step(const float* x) override {
    const int n = n_, in = c_ * h_ * w_;
    constexpr auto N = CUBLAS_OP_N;
    constexpr auto T = CUBLAS_OP_T;
    void* s = compute_handle();
    float *a1 = f(a1_), *a2 = f(a2_), *y = f(y_), *da1 = f(da1_), *da2 = f(da2_);
    // Forward.
    gemm(N, N, kHidden1, n, in, f(w1_), kHidden1, x, in, a1, kHidden1);
    cuda_kernels::relu_forward(a1, size_t(n) * kHidden1, s);
    gemm(N, N, kHidden2, n, kHidden1, f(w2_), kHidden2, a1, kHidden1, a2, kHidden2);
    cuda_kernels::relu_forward(a2, size_t(n) * kHidden2, s);
    gemm(N, N, kClasses, n, kHidden2, f(w3_), kClasses, a2, kHidden2, y, kClasses);
    // Backward, dY = Y.
    gemm(N, T, kClasses, kHidden2, n, y, kClasses, a2, kHidden2, f(dw3_), kClasses);
    gemm(T, N, kHidden2, n, kClasses, f(w3_), kClasses, y, kClasses, da2, kHidden2);
    cuda_kernels::relu_backward(da2, a2, size_t(n) * kHidden2, s);
    gemm(N, T, kHidden2, kHidden1, n, da2, kHidden2, a1, kHidden1, f(dw2_), kHidden2);
    gemm(T, N, kHidden1, n, kHidden2, f(w2_), kHidden2, da2, kHidden2, da1, kHidden1);
    cuda_kernels::relu_backward(da1, a1, size_t(n) * kHidden1, s);
    gemm(N, T, kHidden1, in, n, da1, kHidden1, x, in, f(dw1_), kHidden1);
    // SGD update.
    const float minus_lr = -lr_;
    PIPEBENCH_CUBLAS_CHECK(api_.saxpy(handle_, in * kHidden1, &minus_lr, f(dw1_), 1, f(w1_), 1));
    PIPEBENCH_CUBLAS_CHECK(api_.saxpy(handle_, kHidden1 * kHidden2, &minus_lr, f(dw2_), 1, f(w2_), 1));
    PIPEBENCH_CUBLAS_CHECK(api_.saxpy(handle_, kHidden2 * kClasses, &minus_lr, f(dw3_), 1, f(w3_), 1));
  }

  float lr_;
  const CublasApi& api_ = cublas();  // loaded on first use (device/cublas.h); throws CudaError
  cublasHandle_t handle_ = nullptr;
  DeviceBuffer w1_, w2_, w3_, dw1_, dw2_, dw3_, a1_, a2_, y_, da1_, da2_;
  size_t batch_capacity_ = 0;  // the batch the activations hold room for
};

// The MlpTrainStep: MlpImpl behind detail::CudaStepFacade, which forwards TrainStep's calls.
class MlpStep final : public detail::CudaStepFacade<MlpTrainStep, MlpImpl> {
 public:
  using CudaStepFacade::CudaStepFacade;
  MlpTensors tensors() override { return impl_.tensors(); }
};

void check_learning_rate(float learning_rate) {
  if (!(learning_rate > 0.0f) || !std::isfinite(learning_rate)) {
    throw std::invalid_argument("cuda step: learning_rate must be finite and > 0, got " +
                                std::to_string(learning_rate));
  }
}

}  // namespace

std::unique_ptr<MlpTrainStep> make_mlp_step(float learning_rate) {
  check_learning_rate(learning_rate);
  require_cuda();
  return std::make_unique<MlpStep>(learning_rate);
}

std::unique_ptr<TrainStep> make_cuda_step() { return make_mlp_step(kMlpLearningRate); }
#else
std::unique_ptr<MlpTrainStep> make_mlp_step(float learning_rate) {
  if (!(learning_rate > 0.0f) || !std::isfinite(learning_rate)) {
    throw std::invalid_argument("cuda step: learning_rate must be finite and > 0, got " +
                                std::to_string(learning_rate));
  }
  require_cuda();  // throws: built without CUDA
  throw CudaUnavailable("CUDA unavailable: built without CUDA");
}

std::unique_ptr<TrainStep> make_cuda_step() { return make_mlp_step(kMlpLearningRate); }
#endif

const std::vector<std::string>& train_step_baselines() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& b : model::baselines()) v.emplace_back(b.name);  // the catalogue's order
    return v;
  }();
  return names;
}

bool is_cuda_baseline(const std::string& baseline) {
  const model::Baseline* b = model::find_baseline(baseline);
  return b != nullptr && b->on_device;
}

std::unique_ptr<TrainStep> make_train_step(const std::string& baseline, double ms_per_batch) {
  if (baseline == "emulated") return make_emulated_step(ms_per_batch);
  if (baseline == "cuda" || baseline == "cuda:mlp") return make_cuda_step();
  if (baseline == "cuda:cnn") return make_cnn_step();
  throw std::invalid_argument("train step baseline must be \"emulated\", \"cuda\" (or \"cuda:mlp\") "
                              "or \"cuda:cnn\", got \"" + baseline + "\"");
}

std::vector<float> host_fill_uniform(size_t count, uint64_t seed, float scale) {
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i) {
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const float u = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
    x[i] = (2.0f * u - 1.0f) * scale;
  }
  return x;
}

}  // namespace pipebench
