// Training-step baselines. Timing checks are lower bounds only (a sleep never ends early;
// a loaded machine may make it end late).
#include "pipeline/train_step.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "pipeline/cuda.h"

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
  EXPECT_LT(returned_ms, 100.0);
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
  EXPECT_NO_THROW(step->step(batch.data(), 1, 3, 1, 1));
  EXPECT_GE(step->measure_compute_ms(1, 3, 1, 1, 3), 0.0);
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

}  // namespace
}  // namespace pipebench
