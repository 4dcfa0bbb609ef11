// random_erasing and to_dtype (tensor-stage operators) and the ziggurat normal generator:
// erase against a naive fill, the box rule of torchvision's RandomErasing.get_params, the
// normal variates' moments and tails against N(0, 1), and the operators through specs.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "transforms/erasing.h"
#include "transforms/normal.h"
#include "transforms/pipeline.h"
#include "transforms/registry.h"
#include "transforms/spec.h"

namespace pipebench {
namespace {

TEST(Erase, FillsExactlyTheBoxPerChannel) {
  const int c = 3, h = 5, w = 7;
  std::vector<float> t(c * h * w, -1.0f);
  const float value[3] = {0.5f, 1.5f, 2.5f};
  erase(t.data(), c, h, w, CropWindow{2, 1, 3, 2}, value);
  for (int ch = 0; ch < c; ++ch)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const bool in = x >= 2 && x < 5 && y >= 1 && y < 3;
        ASSERT_EQ(t[(ch * h + y) * w + x], in ? value[ch] : -1.0f) << ch << " " << y << " " << x;
      }
  const float one[1] = {0.0f};
  erase(t.data(), c, h, w, CropWindow{0, 0, 7, 5}, one);
  for (float v : t) ASSERT_EQ(v, 0.0f);
  EXPECT_THROW(erase(t.data(), c, h, w, CropWindow{5, 0, 3, 1}, one), std::invalid_argument);
  const float two[2] = {0.0f, 1.0f};
  EXPECT_THROW(erase(t.data(), c, h, w, CropWindow{0, 0, 1, 1}, two), std::invalid_argument);
}

TEST(Erase, BoxFollowsTorchvisionsRule) {
  Rng rng(4);
  int boxes = 0;
  double fraction = 0;
  for (int i = 0; i < 3000; ++i) {
    const CropWindow b = erasing_box(60, 80, 0.02, 0.33, 0.3, 3.3, rng);
    if (b.width == 0) continue;
    ++boxes;
    ASSERT_LT(b.height, 60);  // torchvision keeps h < img_h and w < img_w
    ASSERT_LT(b.width, 80);
    ASSERT_GE(b.x, 0);
    ASSERT_GE(b.y, 0);
    ASSERT_LE(b.x + b.width, 80);
    ASSERT_LE(b.y + b.height, 60);
    fraction += static_cast<double>(b.width) * b.height / (60.0 * 80.0);
  }
  EXPECT_GT(boxes, 2900);
  // Area fraction uniform in [0.02, 0.33]: mean 0.175 before rounding of the sides.
  EXPECT_NEAR(fraction / boxes, 0.175, 0.02);
  // Nothing fits in a 1 x 1 image: no box after ten tries.
  EXPECT_EQ(erasing_box(1, 1, 0.02, 0.33, 0.3, 3.3, rng).width, 0);
}

TEST(Normal, ZigguratHasTheMomentsAndTailsOfAStandardNormal) {
  Rng rng(17);
  const int n = 400000;
  double sum = 0, sq = 0;
  int beyond2 = 0, beyond35 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = ziggurat_normal(rng);
    sum += x;
    sq += x * x;
    beyond2 += std::fabs(x) > 2.0;
    beyond35 += std::fabs(x) > 3.5;  // past the ziggurat's tail start (3.44)
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sq / n, 1.0, 0.01);
  EXPECT_NEAR(beyond2 / static_cast<double>(n), 0.0455, 0.002);   // 2 (1 - Phi(2))
  EXPECT_NEAR(beyond35 / static_cast<double>(n), 4.65e-4, 1.5e-4);  // 2 (1 - Phi(3.5))
}

// One tensor operator from a spec on a 3 x h x w tensor.
std::vector<float> run_tensor_op(const std::string& item, std::vector<float> t, int h, int w, uint64_t seed) {
  const auto spec = parse_pipeline_spec("[" + item + "]", "test");
  auto op = OpRegistry::instance().find(spec.transforms.at(0).name)->make(spec.transforms[0].params, {});
  SampleData s;
  s.tensor = t.data();
  s.shape = op->output_shape(DataShape{true, 3, h, w});  // a tensor in, the same tensor out
  Rng rng(seed);
  op->apply(s, rng, nullptr);
  return t;
}

TEST(RandomErasingOp, ProbabilityValuesAndPlacement) {
  const int h = 32, w = 40;
  const std::vector<float> in(3 * h * w, 7.0f);
  EXPECT_EQ(run_tensor_op("{random_erasing: {p: 0.0}}", in, h, w, 1), in);
  const auto out = run_tensor_op("{random_erasing: {p: 1.0, value: [1, 2, 3]}}", in, h, w, 1);
  int erased[3] = {0, 0, 0};
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < h * w; ++i) {
      const float v = out[c * h * w + i];
      ASSERT_TRUE(v == 7.0f || v == c + 1.0f);
      erased[c] += v != 7.0f;
    }
  EXPECT_GT(erased[0], 0);
  EXPECT_EQ(erased[0], erased[1]);
  EXPECT_EQ(erased[1], erased[2]);
  // random: the box differs from the input and the same seed gives the same values.
  const auto r1 = run_tensor_op("{random_erasing: {p: 1.0, value: random}}", in, h, w, 5);
  EXPECT_NE(r1, in);
  EXPECT_EQ(r1, run_tensor_op("{random_erasing: {p: 1.0, value: random}}", in, h, w, 5));
  // Before normalize there is no tensor: the pipeline refuses, naming the operator's line.
  EXPECT_THROW(Pipeline::build(parse_pipeline_spec(
                   "[{center_crop: {size: 16}}, random_erasing, normalize]", "t")),
               SpecError);
  EXPECT_THROW(Pipeline::build(parse_pipeline_spec(
                   "[{center_crop: {size: 16}}, normalize, {random_erasing: {scale: [0.5, 0.1]}}]", "t")),
               SpecError);
}

TEST(ToDtypeOp, ScalesLikeTorchvision) {
  Image img;
  img.resize(2, 3, 3);
  for (size_t i = 0; i < img.size_bytes(); ++i) img.data[i] = static_cast<uint8_t>(i * 13);
  for (bool scale : {false, true}) {
    const auto spec = parse_pipeline_spec(std::string("[{to_dtype: {scale: ") + (scale ? "true" : "false") + "}}]", "t");
    auto op = OpRegistry::instance().find("to_dtype")->make(spec.transforms[0].params, {});
    std::vector<float> out(18);
    SampleData s;
    s.image = img;
    s.tensor = out.data();
    s.shape = op->output_shape(DataShape{false, 3, 2, 3});
    Rng rng(1);
    op->apply(s, rng, nullptr);
    for (int c = 0; c < 3; ++c)
      for (int p = 0; p < 6; ++p) {
        const float v = static_cast<float>(img.data[p * 3 + c]);
        ASSERT_EQ(out[c * 6 + p], scale ? v / 255.0f : v);  // torchvision: x.float() / 255
      }
  }
}

}  // namespace
}  // namespace pipebench
