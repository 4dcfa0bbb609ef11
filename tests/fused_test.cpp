// Why this file exists: the planner fuses a resize with the normalize after it (one pass
// writing the float32 CHW tensor) in the recipes every figure is measured on, so the fused
// output must be the unfused chain's: the same resized uint8 values, mapped by
// normalize_affine instead of normalize's table, which differs by float rounding only. The
// reference is the unfused plan (PlanOptions{false}), the chain pipebench ran before the
// fusions, on photo-like and random JPEGs of many sizes: odd sizes, windows that shrink and
// windows that grow, flips on and off, bilinear and bicubic, ROI decodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "datasets/synthetic.h"
#include "tests/alloc_counter.h"
#include "tests/test_data.h"
#include "transforms/normalize.h"
#include "transforms/pipeline.h"
#include "transforms/recipes.h"
#include "transforms/spec.h"

namespace pipebench {
namespace {

using testing::make_jpeg;

// Float rounding of two ways to compute (q / 255 - mean) / std: a few float steps of the
// largest term, 1 / std or |mean| / std (normalize.h); measured 4.8e-7 with ImageNet's
// statistics, against one uint8 step of 1 / (255 std), about 0.017.
double rounding_bound(float mean, float stdv) {
  return 1e-6 * std::max({1.0, 1.0 / stdv, std::fabs(double(mean)) / stdv});
}

std::vector<uint8_t> random_jpeg(int w, int h, uint64_t seed) {
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  Rng rng(seed);
  for (auto& v : rgb) v = static_cast<uint8_t>(rng.next_u64());
  return encode_jpeg(rgb.data(), w, h, 95, "4:4:4", false);
}

struct Jpeg {
  std::string what;
  std::vector<uint8_t> bytes;
};

// Sizes: a 500 x 375 photo (portrait too), odd sizes, smaller than the crop (every window
// grows), much larger (more than 5 taps per output), exactly the crop, and random content.
std::vector<Jpeg> test_jpegs() {
  return {{"500x375", make_jpeg(500, 375, 1)},
          {"375x500 4:4:4", make_jpeg(375, 500, 2, 90, "4:4:4")},
          {"333x251", make_jpeg(333, 251, 3)},
          {"97x61", make_jpeg(97, 61, 4)},
          {"1600x1067", make_jpeg(1600, 1067, 5)},
          {"224x224", make_jpeg(224, 224, 6)},
          {"257x300 progressive", make_jpeg(257, 300, 7, 85, "4:2:2", true)},
          {"random 401x299", random_jpeg(401, 299, 8)},
          {"random 150x120", random_jpeg(150, 120, 9)}};
}

PipelineSpec spec_of(const std::string& text) { return parse_pipeline_spec(text, "fused_test"); }

// normalize's table for (mean, std): the value of every q, per channel, to invert the
// unfused output back to its uint8 values.
struct Table {
  std::array<float, 3> mean, stdv;
  std::vector<float> value;  // [c * 256 + q]
  Table(const std::array<float, 3>& m, const std::array<float, 3>& s) : mean(m), stdv(s), value(3 * 256) {
    Image all;
    all.resize(1, 256, 3);
    for (int v = 0; v < 256; ++v)
      for (int c = 0; c < 3; ++c) all.data[v * 3 + c] = static_cast<uint8_t>(v);
    normalize_to_chw(all, value.data(), mean, stdv);
  }
  // The q whose table value is v exactly, or -1.
  int q_of(int c, float v) const {
    const long q = std::lround((double(v) * stdv[c] + mean[c]) * 255.0);
    for (long k = std::max(0L, q - 1); k <= std::min(255L, q + 1); ++k)
      if (value[c * 256 + k] == v) return static_cast<int>(k);
    return -1;
  }
};

// Runs `text` fused and unfused on every test JPEG with several seeds; every fused value
// must be the unfused value's uint8 q mapped by normalize_affine, exactly, and within float
// rounding of the unfused value. Returns how many samples ran.
int expect_fused_equals_unfused(const std::string& text, const std::array<float, 3>& mean,
                                const std::array<float, 3>& stdv, const std::string& fused_plan) {
  const auto fused = Pipeline::build(spec_of(text));
  const auto unfused = Pipeline::build(spec_of(text), {}, PlanOptions{false});
  EXPECT_EQ(fused->plan_text(), fused_plan) << text;
  EXPECT_NE(unfused->plan_text(), fused_plan) << text;
  const Table table(mean, stdv);
  const ChannelAffine a = normalize_affine(mean, stdv);
  PipelineWorkspace wf(*fused), wu(*unfused);
  std::vector<float> x(fused->output_floats()), y(unfused->output_floats());
  const size_t plane = x.size() / 3;
  int samples = 0;
  for (const Jpeg& jpeg : test_jpegs()) {
    for (uint64_t index = 0; index < 6; ++index) {
      Rng r1 = Rng::for_sample(5, 0, index), r2 = Rng::for_sample(5, 0, index);
      fused->run(jpeg.bytes, "f.jpg", r1, wf, x.data());
      unfused->run(jpeg.bytes, "u.jpg", r2, wu, y.data());
      ++samples;
      for (size_t i = 0; i < x.size(); ++i) {
        const int c = static_cast<int>(i / plane);
        const int q = table.q_of(c, y[i]);
        if (q < 0) {
          ADD_FAILURE() << text << " " << jpeg.what << ": unfused value " << y[i] << " is not in normalize's table";
          return samples;
        }
        const float want = static_cast<float>(q) * a.scale[c] + a.bias[c];
        if (x[i] != want || std::fabs(double(x[i]) - y[i]) > rounding_bound(mean[c], stdv[c])) {
          ADD_FAILURE() << text << " " << jpeg.what << " sample " << index << " value " << i
                        << ": fused " << x[i] << ", unfused " << y[i] << " (q " << q << ")";
          return samples;
        }
      }
    }
  }
  return samples;
}

TEST(Fused, NormalizeAffineIsTheTableUpToFloatRounding) {
  const std::array<std::array<float, 3>, 3> means = {kImageNetMean, std::array<float, 3>{0.5f, 0.5f, 0.5f},
                                                     std::array<float, 3>{0.0f, 0.0f, 0.0f}};
  const std::array<std::array<float, 3>, 3> stds = {kImageNetStd, std::array<float, 3>{0.5f, 0.5f, 0.5f},
                                                    std::array<float, 3>{1.0f, 1.0f, 1.0f}};
  double worst = 0;
  for (size_t s = 0; s < means.size(); ++s) {
    Image all;
    all.resize(1, 256, 3);
    for (int v = 0; v < 256; ++v)
      for (int c = 0; c < 3; ++c) all.data[v * 3 + c] = static_cast<uint8_t>(v);
    std::vector<float> table(3 * 256);
    normalize_to_chw(all, table.data(), means[s], stds[s]);
    const ChannelAffine a = normalize_affine(means[s], stds[s]);
    for (int c = 0; c < 3; ++c)
      for (int v = 0; v < 256; ++v) {
        const float want = table[c * 256 + v];
        const float got = static_cast<float>(v) * a.scale[c] + a.bias[c];
        ASSERT_LE(std::fabs(double(got) - want), rounding_bound(means[s][c], stds[s][c])) << s << " c " << c << " q " << v;
        // Far below one uint8 step: the fused values still tell every q apart.
        ASSERT_LT(std::fabs(double(got) - want), 0.01 / (255.0 * stds[s][c]));
        worst = std::max(worst, std::fabs(double(got) - want));
      }
  }
  RecordProperty("worst_abs_difference", std::to_string(worst));
  EXPECT_THROW(normalize_affine(kImageNetMean, {0.2f, 0.0f, 0.2f}), std::invalid_argument);
  EXPECT_THROW(normalize_affine({NAN, 0.0f, 0.0f}, kImageNetStd), std::invalid_argument);
}

TEST(Fused, CropFlipNormalizeIsTheUnfusedChain) {
  for (const char* flip : {"", "{horizontal_flip: {p: 0.0}}, ", "{horizontal_flip: {p: 1.0}}, ",
                           "horizontal_flip, "}) {
    const std::string text = std::string("[{random_resized_crop: {size: 224}}, ") + flip + "normalize]";
    const std::string label = std::string("random_resized_crop") + (*flip ? "+horizontal_flip" : "") + "+normalize";
    EXPECT_EQ(expect_fused_equals_unfused(text, kImageNetMean, kImageNetStd, "decode(full) -> " + label), 54);
  }
}

TEST(Fused, BicubicOddSizesAndOwnStatistics) {
  expect_fused_equals_unfused(
      "[{random_resized_crop: {size: 131, interpolation: bicubic, scale: [0.05, 1.0]}}, horizontal_flip, "
      "{normalize: {mean: [0.5, 0.25, 0.75], std: [0.3, 0.6, 0.1]}}]",
      {0.5f, 0.25f, 0.75f}, {0.3f, 0.6f, 0.1f},
      "decode(full) -> random_resized_crop+horizontal_flip+normalize");
  // Windows far wider than the output (up to 1600 / 37: the scalar blocks of the engine).
  expect_fused_equals_unfused("[{random_resized_crop: {size: 37, scale: [0.5, 1.0]}}, horizontal_flip, normalize]",
                              kImageNetMean, kImageNetStd,
                              "decode(full) -> random_resized_crop+horizontal_flip+normalize");
}

TEST(Fused, ResizeCenterCropNormalizeIsTheUnfusedChain) {
  // 256 shrinks the large images (area) and enlarges the small ones (bilinear); 257 leaves
  // the 257 x 300 image unscaled; 97 (crop 61) shrinks all but the 97 x 61 one.
  for (const char* size : {"256", "257", "97"}) {
    const std::string crop = std::string(size) == "97" ? "61" : "224";
    expect_fused_equals_unfused(std::string("[{resize: {size: ") + size + "}}, {center_crop: {size: " + crop +
                                    "}}, normalize]",
                                kImageNetMean, kImageNetStd, "decode(full) -> resize+center_crop+normalize");
  }
}

TEST(Fused, RoiDecodeCropNormalizeIsTheUnfusedChain) {
  expect_fused_equals_unfused(
      "{decode: {mode: roi}, transforms: [{random_resized_crop: {size: 224}}, horizontal_flip, normalize]}",
      kImageNetMean, kImageNetStd,
      "decode(roi of random_resized_crop's window, dct 1/2..1/8) -> random_resized_crop+horizontal_flip+normalize");
}

TEST(Fused, PlansOfTheShippedRecipes) {
  EXPECT_EQ(build_recipe("imagenet_train")->plan_text(),
            "decode(full) -> random_resized_crop+horizontal_flip+normalize");
  EXPECT_EQ(build_recipe("imagenet_val")->plan_text(), "decode(full) -> resize+center_crop+normalize");
  EXPECT_EQ(build_recipe("imagenet_train_roi")->plan_text(),
            "decode(roi of random_resized_crop's window, dct 1/2..1/8) -> "
            "random_resized_crop+horizontal_flip+normalize");
  EXPECT_EQ((build_recipe("imagenet_train")->step_labels()),
            (std::vector<std::string>{"random_resized_crop+horizontal_flip+normalize"}));
  // The unfused plans are those that ran before the fusions.
  const PlanOptions off{false};
  EXPECT_EQ(Pipeline::build(recipe_spec("imagenet_train"), {}, off)->plan_text(),
            "decode(full) -> random_resized_crop+horizontal_flip -> normalize");
  EXPECT_EQ(Pipeline::build(recipe_spec("imagenet_val"), {}, off)->plan_text(),
            "decode(full) -> resize+center_crop -> normalize");
  // Nothing to fuse: an operator between the crop and normalize (deit_train), or a filter
  // the engine does not run (nearest is cv::resize's).
  const std::string deit = build_recipe("deit_train")->plan_text();
  EXPECT_NE(deit.find("random_resized_crop+horizontal_flip -> rand_augment"), std::string::npos) << deit;
  EXPECT_EQ(Pipeline::build(spec_of("[{random_resized_crop: {size: 64, interpolation: nearest}}, normalize]"))
                ->plan_text(),
            "decode(full) -> random_resized_crop -> normalize");
}

// The fused step keeps its scratch in the workspace: after the largest image was seen, a
// sample allocates nothing (decode included).
TEST(Fused, NoHeapAllocationPerSampleOnceWarm) {
  const auto p = build_recipe("imagenet_train");
  PipelineWorkspace ws(*p);
  std::vector<float> out(p->output_floats());
  const auto jpegs = test_jpegs();
  const auto run_all = [&](uint64_t first) {
    for (uint64_t i = 0; i < 24; ++i) {
      Rng rng = Rng::for_sample(3, 0, first + i);
      p->run(jpegs[i % jpegs.size()].bytes, "x.jpg", rng, ws, out.data());
    }
  };
  run_all(0);
  run_all(100);  // a second pass: every size seen, with other windows
  const long before = testing::allocation_count();
  run_all(200);
  EXPECT_EQ(testing::allocation_count() - before, 0);
}

}  // namespace
}  // namespace pipebench
