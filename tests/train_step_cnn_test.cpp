// The `cuda:cnn` step (pipeline/train_step_cnn.h). The layer and FLOP arithmetic runs
// anywhere, against figures worked by hand; the step itself needs a CUDA device and cuDNN,
// and those tests skip with the reason where there is none. As of the commit that added
// them the device tests have never run (no GPU was available).
#include "pipeline/train_step_cnn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "pipeline/cuda.h"
#include "pipeline/train_step.h"

namespace pipebench {
namespace {

// S = 224: floor(log2 224) = 7 blocks; convs at 224 (conv_in), then 224, 112, 56, 28, 14,
// 7, 3 (each block's conv runs before its pool), conv_out at 1.
//   conv_in  2 x 30 x 224^2 x 3 x 9          =    81,285,120
//   blocks   2 x 30 x 30 x 9 x (224^2 + 112^2 + 56^2 + 28^2 + 14^2 + 7^2 + 3^2)
//            = 16,200 x 66,894                 = 1,083,682,800
//   conv_out 2 x 10 x 1 x 30 x 9              =         5,400
//   forward F                                  = 1,164,973,320
//   per sample 3F - conv_in                    = 3,413,634,840
//   params   (810 + 30) + 7 x (8,100 + 30) + (2,700 + 10) = 60,460
//   N = 64:  64 x 3,413,634,840 + 4 x 60,460   = 218,472,871,600 FLOPs
TEST(CnnShapes, HandWorked224) {
  const CnnShapes s = cnn_shapes(3, 224, 224);
  EXPECT_EQ(s.blocks, 7);
  ASSERT_EQ(s.convs.size(), 9u);
  const int spatial[9] = {224, 224, 112, 56, 28, 14, 7, 3, 1};
  for (size_t i = 0; i < s.convs.size(); ++i) {
    const CnnConv& v = s.convs[i];
    EXPECT_EQ(v.h, spatial[i]) << i;
    EXPECT_EQ(v.w, spatial[i]) << i;
    EXPECT_EQ(v.k, 3) << i;
    EXPECT_EQ(v.cin, i == 0 ? 3 : 30) << i;
    EXPECT_EQ(v.cout, i == 8 ? 10 : 30) << i;
    EXPECT_EQ(v.relu, i != 8) << i;
    EXPECT_EQ(v.pool, i != 0 && i != 8) << i;
  }
  EXPECT_EQ(s.out_c, 10);
  EXPECT_EQ(s.out_h, 1);
  EXPECT_EQ(s.out_w, 1);
  EXPECT_EQ(s.logits(), 10);
  EXPECT_EQ(s.params, 60460);
  EXPECT_DOUBLE_EQ(s.convs[0].forward_flop(), 81285120.0);
  EXPECT_DOUBLE_EQ(s.forward_flop, 1164973320.0);
  EXPECT_DOUBLE_EQ(s.step_flop_per_sample, 3413634840.0);
  EXPECT_DOUBLE_EQ(s.step_gflop(64), 218.4728716);
}

// S = 256: 8 blocks at 256 .. 2, sum of squares 87,380; conv_in 2 x 30 x 256^2 x 27 =
// 106,168,320; F = 106,168,320 + 16,200 x 87,380 + 5,400 = 1,521,729,720; per sample
// 3F - conv_in = 4,459,020,840; params 840 + 8 x 8,130 + 2,710 = 68,590.
TEST(CnnShapes, HandWorked256) {
  const CnnShapes s = cnn_shapes(3, 256, 256);
  EXPECT_EQ(s.blocks, 8);
  ASSERT_EQ(s.convs.size(), 10u);
  EXPECT_EQ(s.convs[8].h, 2);
  EXPECT_EQ(s.convs[9].h, 1);
  EXPECT_EQ(s.logits(), 10);
  EXPECT_EQ(s.params, 68590);
  EXPECT_DOUBLE_EQ(s.forward_flop, 1521729720.0);
  EXPECT_DOUBLE_EQ(s.step_flop_per_sample, 4459020840.0);
  EXPECT_DOUBLE_EQ(s.step_gflop(64), 285.37760812);
}

// floor(log2(min(H, W))) blocks always leave the smaller side at 1 (S < 2^(B+1)).
TEST(CnnShapes, BlocksLeaveTheSmallerSideAtOne) {
  for (int s : {1, 2, 3, 63, 64, 65, 127, 160, 255, 257, 384, 511, 512}) {
    const CnnShapes shapes = cnn_shapes(3, s, s);
    EXPECT_EQ(shapes.blocks, static_cast<int>(std::floor(std::log2(s)))) << s;
    EXPECT_EQ(shapes.out_h, 1) << s;
    EXPECT_EQ(shapes.logits(), 10) << s;
    EXPECT_EQ(shapes.convs.size(), static_cast<size_t>(shapes.blocks) + 2) << s;
  }
  // Non-square: the blocks follow the smaller side, the logits are 10 x H' x W'.
  const CnnShapes wide = cnn_shapes(3, 224, 448);
  EXPECT_EQ(wide.blocks, 7);
  EXPECT_EQ(wide.out_h, 1);
  EXPECT_EQ(wide.out_w, 3);
  EXPECT_EQ(wide.logits(), 30);
  // One channel in: only conv_in's weights and FLOPs change.
  const CnnShapes gray = cnn_shapes(1, 224, 224), rgb = cnn_shapes(3, 224, 224);
  EXPECT_EQ(rgb.params - gray.params, 2 * 30 * 9);
  EXPECT_DOUBLE_EQ(rgb.forward_flop - gray.forward_flop, 2.0 * 30 * 224 * 224 * 2 * 9);
}

TEST(CnnShapes, RejectsEmptyShapes) {
  EXPECT_THROW(cnn_shapes(0, 224, 224), std::invalid_argument);
  EXPECT_THROW(cnn_shapes(3, 0, 224), std::invalid_argument);
  EXPECT_THROW(cnn_shapes(3, 224, -1), std::invalid_argument);
}

TEST(CnnStepFactory, NamesAndRefusals) {
  const auto& names = train_step_baselines();
  for (const char* name : {"emulated", "cuda", "cuda:mlp", "cuda:cnn"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  EXPECT_TRUE(is_cuda_baseline("cuda:cnn"));
  EXPECT_TRUE(is_cuda_baseline("cuda:mlp"));
  EXPECT_FALSE(is_cuda_baseline("emulated"));
  EXPECT_THROW(make_train_step("cuda:resnet", 1.0), std::invalid_argument);
  EXPECT_THROW(make_cnn_step(0.0f), std::invalid_argument);
  EXPECT_THROW(make_cnn_step(-1.0f), std::invalid_argument);
}

TEST(CudaCnnStep, UnavailableWithoutDevice) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: " << cuda_info().device_name;
  try {
    make_cnn_step();
    FAIL() << "expected CudaUnavailable";
  } catch (const CudaUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find(cuda_info().reason), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_train_step("cuda:cnn", 0.0), CudaUnavailable);
  EXPECT_THROW(make_train_step("cuda:mlp", 0.0), CudaUnavailable);
}

// The reason a device test cannot run here, or empty.
std::string no_cnn_device() {
  if (!cuda_available()) return "no CUDA device: " + cuda_info().reason;
  if (!cnn_step_built()) return "built without cuDNN";
  return "";
}

TEST(CudaCnnStep, LossDecreasesOnAFixedBatch) {
  if (const std::string why = no_cnn_device(); !why.empty()) GTEST_SKIP() << why;
  auto step = make_cnn_step();
  EXPECT_EQ(step->name(), "cuda:cnn");
  EXPECT_TRUE(std::isnan(step->last_loss()));
  const int n = 16, c = 3, h = 64, w = 64;
  std::vector<float> batch(static_cast<size_t>(n) * c * h * w);
  for (size_t i = 0; i < batch.size(); ++i) batch[i] = static_cast<float>((i * 2654435761u) % 1000) / 500.0f - 1.0f;
  std::vector<double> losses;
  for (int i = 0; i < 20; ++i) {
    step->step(batch.data(), n, c, h, w);
    losses.push_back(step->last_loss());
    ASSERT_TRUE(std::isfinite(losses.back())) << "step " << i;
  }
  EXPECT_LT(losses.back(), losses.front());
}

TEST(CudaCnnStep, ReportsTheFormulaFlops) {
  if (const std::string why = no_cnn_device(); !why.empty()) GTEST_SKIP() << why;
  auto step = make_cnn_step();
  EXPECT_DOUBLE_EQ(step->compute_gflop(64, 3, 224, 224), 218.4728716);
  EXPECT_DOUBLE_EQ(step->compute_gflop(8, 3, 96, 96), cnn_shapes(3, 96, 96).step_gflop(8));
  EXPECT_THROW(step->compute_gflop(0, 3, 224, 224), std::invalid_argument);
}

TEST(CudaCnnStep, Uint8AndFloatBatchesRun) {
  if (const std::string why = no_cnn_device(); !why.empty()) GTEST_SKIP() << why;
  auto step = make_cnn_step();
  const int n = 4, c = 3, h = 40, w = 40;
  const size_t count = static_cast<size_t>(n) * c * h * w;
  std::vector<float> floats(count, 0.25f);
  std::vector<uint8_t> bytes(count);
  for (size_t i = 0; i < count; ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  const DeferredNormalize norm{{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}};
  StepInput u8;
  u8.data = bytes.data();
  u8.n = n, u8.c = c, u8.h = h, u8.w = w;
  u8.dtype = SampleDtype::kUint8;
  u8.layout = BatchLayout::kNHWC;
  u8.normalize = &norm;
  for (int i = 0; i < 3; ++i) {
    step->step(floats.data(), n, c, h, w);
    step->step(u8);
  }
  EXPECT_TRUE(std::isfinite(step->last_loss()));
  u8.layout = BatchLayout::kNCHW;
  u8.normalize = nullptr;
  step->step(u8);
  EXPECT_TRUE(std::isfinite(step->last_loss()));
  EXPECT_GT(step->measure_compute_ms(n, c, h, w, 3), 0.0);
}

}  // namespace
}  // namespace pipebench
