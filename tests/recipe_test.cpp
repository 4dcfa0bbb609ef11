// Why this file exists: a recipe is what a benchmark's images/s is measured on, so its
// output must be the right shape, a pure function of (bytes, seed, epoch, index), and the
// ROI shortcut must show (nearly) the same pixels as the full decode it replaces.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/test_data.h"
#include "transforms/crop.h"
#include "transforms/jpeg_decode.h"
#include "transforms/normalize.h"
#include "transforms/recipes.h"
#include "transforms/spec.h"

namespace pipebench {
namespace {

using pipebench::testing::make_jpeg;
using pipebench::testing::psnr;

std::vector<float> run_recipe(const Pipeline& r, const std::vector<uint8_t>& jpeg, Rng rng,
                              PipelineWorkspace& ws, SampleTimes* times = nullptr) {
  std::vector<float> out(r.output_floats(), std::nanf(""));
  r.run(jpeg, "test.jpg", rng, ws, out.data(), times);
  return out;
}

// Normalized CHW floats back to uint8-scale values (0..255, unclamped) for PSNR.
std::vector<double> denormalize(const std::vector<float>& chw, int hw) {
  std::vector<double> v(chw.size());
  for (size_t i = 0; i < chw.size(); ++i) {
    const int c = static_cast<int>(i / hw);
    v[i] = (chw[i] * double(kImageNetStd[c]) + kImageNetMean[c]) * 255.0;
  }
  return v;
}

double psnr_d(const std::vector<double>& a, const std::vector<double>& b) {
  double se = 0;
  for (size_t i = 0; i < a.size(); ++i) se += (a[i] - b[i]) * (a[i] - b[i]);
  return 10 * std::log10(255.0 * 255.0 / (se / a.size()));
}

TEST(Recipe, NamesShapesAndErrors) {
  const std::vector<std::string> want = {"casestudy", "casestudy_shifts", "deit_train",
                                         "imagenet_train", "imagenet_train_roi", "imagenet_val",
                                         "torchvision_v2_train"};
  EXPECT_EQ(recipe_names(), want);
  for (const auto& n : recipe_names()) {
    auto r = build_recipe(n);
    EXPECT_EQ(r->name(), n);
    const int s = n.rfind("casestudy", 0) == 0 ? 256 : n == "torchvision_v2_train" ? 176 : 224;
    EXPECT_EQ(r->output_shape(), (std::array<int, 3>{3, s, s})) << n;
    EXPECT_EQ(r->output_floats(), size_t(3) * s * s);
  }
  EXPECT_EQ(build_recipe("imagenet_train_roi", 160)->output_shape(),
            (std::array<int, 3>{3, 160, 160}));
  try {
    build_recipe("imagenet_tran");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("imagenet_tran"), std::string::npos) << msg;
    for (const auto& n : want) EXPECT_NE(msg.find(n), std::string::npos) << msg;
  }
  EXPECT_THROW(build_recipe("imagenet_train", 0), SpecError);
  // The training recipes with mixing end in batch operators.
  EXPECT_EQ(build_recipe("deit_train")->batch_operator_count(), 2u);
  EXPECT_EQ(build_recipe("torchvision_v2_train")->batch_operator_count(), 2u);
  EXPECT_EQ(build_recipe("imagenet_train")->batch_operator_count(), 0u);
  // Every declared faster variant is a shipped recipe (the report compares BM_Sample/<it>).
  for (const auto& n : recipe_names())
    for (const auto& v : recipe_spec(n).variants)
      EXPECT_NE(std::find(want.begin(), want.end(), v.recipe), want.end()) << n << " -> " << v.recipe;
  ASSERT_EQ(recipe_spec("imagenet_train").variants.size(), 1u);
  EXPECT_EQ(recipe_spec("imagenet_train").variants[0].fixes, "decode");
}

TEST(Recipe, DeterministicPerSampleAndInRange) {
  const auto jpeg = make_jpeg(500, 375, 3);
  for (const auto& n : recipe_names()) {
    auto r = build_recipe(n);
    PipelineWorkspace ws1(*r), ws2(*r);
    const auto a = run_recipe(*r, jpeg, Rng::for_sample(1, 0, 5), ws1);
    // A second workspace, warmed on another sample first, gives the same bits.
    run_recipe(*r, jpeg, Rng::for_sample(1, 0, 9), ws2);
    const auto b = run_recipe(*r, jpeg, Rng::for_sample(1, 0, 5), ws2);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << n;
    const auto c = run_recipe(*r, jpeg, Rng::for_sample(1, 0, 6), ws1);
    if (n == "imagenet_val") {
      EXPECT_EQ(0, std::memcmp(a.data(), c.data(), a.size() * sizeof(float))) << n;
    } else {
      EXPECT_NE(0, std::memcmp(a.data(), c.data(), a.size() * sizeof(float))) << n;
    }
    const bool unit = n.rfind("casestudy", 0) == 0;
    const float lo = unit ? 0.f : (0.f - 0.485f) / 0.229f - 1e-4f;
    const float hi = unit ? 1.f : (1.f - 0.406f) / 0.225f + 1e-4f;
    for (float v : a) {
      ASSERT_TRUE(std::isfinite(v)) << n;
      ASSERT_GE(v, lo) << n;
      ASSERT_LE(v, hi) << n;
    }
  }
}

// Paired cases exchange two workspaces' scratch between blocks (swap_scratch): each side
// must still give the bits it gave before, whatever the other pipeline left in the memory
// it now works in (a larger image, the ROI decoder's rows, RandAugment's state).
TEST(Recipe, SwappedScratchGivesTheSameBits) {
  const auto small = make_jpeg(320, 240, 3);
  const auto large = make_jpeg(900, 700, 4);
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"imagenet_train", "imagenet_train_roi"}, {"imagenet_train", "deit_train"},
      {"imagenet_val", "torchvision_v2_train"}};
  for (const auto& [na, nb] : pairs) {
    SCOPED_TRACE(na + " / " + nb);
    auto a = build_recipe(na);
    auto b = build_recipe(nb);
    PipelineWorkspace wa(*a), wb(*b);
    const auto a0 = run_recipe(*a, small, Rng::for_sample(1, 0, 5), wa);
    const auto b0 = run_recipe(*b, large, Rng::for_sample(1, 0, 7), wb);
    wa.swap_scratch(wb);
    EXPECT_EQ(a0, run_recipe(*a, small, Rng::for_sample(1, 0, 5), wa));
    EXPECT_EQ(b0, run_recipe(*b, large, Rng::for_sample(1, 0, 7), wb));
    wb.swap_scratch(wa);
    EXPECT_EQ(b0, run_recipe(*b, large, Rng::for_sample(1, 0, 7), wb));
    EXPECT_EQ(a0, run_recipe(*a, small, Rng::for_sample(1, 0, 5), wa));
  }
}

// The fused recipes write q * (1 / (255 std)) - mean / std for the uint8 value q the
// operators produce (normalize_affine): exactly that, and within float rounding of
// normalize's table (1e-6 of the larger term, 1 / std; normalize.h).
void expect_normalized(const std::vector<float>& got, const Image& img) {
  const ChannelAffine a = normalize_affine();
  std::vector<float> table(got.size());
  normalize_to_chw(img, table.data());
  const size_t plane = static_cast<size_t>(img.height) * img.width;
  for (size_t i = 0; i < got.size(); ++i) {
    const size_t c = i / plane;
    const float q = img.data[(i % plane) * 3 + c];
    ASSERT_EQ(got[i], q * a.scale[c] + a.bias[c]) << i;
    ASSERT_LE(std::fabs(double(got[i]) - table[i]), 1e-6 / kImageNetStd[c]) << i;
  }
}

TEST(Recipe, ImagenetTrainIsDecodeRrcFlipNormalize) {
  const auto jpeg = make_jpeg(480, 320, 8);
  auto r = build_recipe("imagenet_train");
  PipelineWorkspace ws(*r);
  TurboDecoder dec;
  Image full, crop;
  dec.decode(jpeg, "x.jpg", full);
  for (uint64_t idx = 0; idx < 8; ++idx) {
    const auto got = run_recipe(*r, jpeg, Rng::for_sample(3, 1, idx), ws);
    // Each operator draws from its own stream (transforms/rng.h, Rng::stream).
    const Rng rng = Rng::for_sample(3, 1, idx);
    Rng crop_rng = rng.stream(Rng::stream_salt("random_resized_crop", 1));
    Rng flip_rng = rng.stream(Rng::stream_salt("horizontal_flip", 1));
    const CropWindow w = random_resized_crop_window(full.height, full.width, crop_rng);
    resized_crop(full, w, 224, 224, crop);
    if (flip_rng.bernoulli(0.5)) horizontal_flip(crop);
    SCOPED_TRACE(idx);
    expect_normalized(got, crop);
  }
}

TEST(Recipe, ImagenetValIsResizeCenterCrop) {
  const auto jpeg = make_jpeg(333, 500, 4);  // portrait
  auto r = build_recipe("imagenet_val");
  PipelineWorkspace ws(*r);
  const auto got = run_recipe(*r, jpeg, Rng(0), ws);
  TurboDecoder dec;
  Image full, resized, crop;
  dec.decode(jpeg, "x.jpg", full);
  resize_shorter(full, 256, resized);
  EXPECT_EQ(resized.width, 256);
  EXPECT_EQ(resized.height, 384);  // int(256 * 500 / 333) = int(384.4)
  center_crop(resized, 224, crop);
  expect_normalized(got, crop);
}

// The ROI recipe draws the same window as imagenet_train (same Rng, same draws in the same
// order) but decodes only that window, DCT scaled, and resizes from there. DCT scaling and
// a shorter resize path change the pixels a little; 25 dB PSNR (RMS error ~14 of 255) is a
// bound that a wrong window (other content) or a wrong flip fails by far, while both paths
// typically agree to well above 30 dB on photo-like content.
TEST(Recipe, RoiCloseToFullDecodeForTheSameWindow) {
  const std::vector<std::pair<int, int>> sizes = {{500, 375}, {375, 500}, {640, 480}, {1200, 900}};
  auto full = build_recipe("imagenet_train");
  auto roi = build_recipe("imagenet_train_roi");
  PipelineWorkspace ws(*full), ws_roi(*roi);
  double worst = 1e9;
  for (const auto& [w, h] : sizes) {
    const auto jpeg = make_jpeg(w, h, 17 + w);
    for (uint64_t idx = 0; idx < 12; ++idx) {
      const int hw = 224 * 224;
      const auto a = denormalize(run_recipe(*full, jpeg, Rng::for_sample(2, 0, idx), ws), hw);
      const auto b = denormalize(run_recipe(*roi, jpeg, Rng::for_sample(2, 0, idx), ws_roi), hw);
      const double p = psnr_d(a, b);
      EXPECT_GT(p, 25.0) << w << "x" << h << " sample " << idx;
      worst = std::min(worst, p);
      // A different sample's crop is far from this one: the bound means something.
      const auto other =
          denormalize(run_recipe(*full, jpeg, Rng::for_sample(2, 0, idx + 100), ws), hw);
      EXPECT_LT(psnr_d(a, other), 25.0) << w << "x" << h << " sample " << idx;
    }
  }
  RecordProperty("worst_psnr_db", std::to_string(worst));
}

TEST(Recipe, CaseStudyVariantsAgreeAndTimesAreFilled) {
  const auto jpeg = make_jpeg(500, 375, 6);
  SampleTimes t1, t2;
  auto conv = build_recipe("casestudy"), shifts = build_recipe("casestudy_shifts");
  PipelineWorkspace ws1(*conv), ws2(*shifts);
  const auto a = run_recipe(*conv, jpeg, Rng::for_sample(0, 0, 1), ws1, &t1);
  const auto b = run_recipe(*shifts, jpeg, Rng::for_sample(0, 0, 1), ws2, &t2);
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
  EXPECT_GT(t1.decode_ns, 0);
  EXPECT_GT(t1.transform_ns, 0);
  EXPECT_GT(t2.decode_ns, 0);
  // Masked pixels are YUV (0, 128, 128) / 255; roughly 76% of pixels are masked.
  const size_t plane = 256 * 256;
  size_t masked = 0;
  for (size_t i = 0; i < plane; ++i) {
    masked += a[i] == 0.f && std::abs(a[plane + i] - 128.f / 255) < 1e-6f &&
              std::abs(a[2 * plane + i] - 128.f / 255) < 1e-6f;
  }
  EXPECT_NEAR(double(masked) / plane, 1 - std::pow(0.75, 5), 0.03);
}

TEST(Recipe, BadInputNamesTheFile) {
  const std::vector<uint8_t> junk = {'n', 'o', 't', ' ', 'j', 'p', 'e', 'g'};
  std::vector<float> out(3 * 256 * 256);
  for (const auto& n : recipe_names()) {
    auto r = build_recipe(n);
    PipelineWorkspace ws(*r);
    Rng rng(1);
    try {
      r->run(junk, "junk.jpg", rng, ws, out.data());
      FAIL() << n << ": no exception";
    } catch (const DecodeError& e) {
      EXPECT_NE(std::string(e.what()).find("junk.jpg"), std::string::npos) << e.what();
    }
  }
  const auto small = make_jpeg(300, 200, 1);
  for (const char* n : {"casestudy", "casestudy_shifts"}) {
    Rng rng(1);
    auto r = build_recipe(n);
    PipelineWorkspace ws(*r);
    try {
      r->run(small, "small.jpg", rng, ws, out.data());
      FAIL() << n << ": no exception";
    } catch (const std::runtime_error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("small.jpg"), std::string::npos) << msg;
      EXPECT_NE(msg.find("300 x 200"), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace pipebench

namespace pipebench {
namespace {

// Common random numbers (issue 26): every operator draws from its own stream (Rng::stream,
// keyed by its name and occurrence), so adding or removing one operator leaves the others'
// draws as they were. random_grayscale with p 0 draws (a Bernoulli) and never changes a
// pixel: inserted anywhere, it must leave the output bit for bit the same. With one shared
// stream its draw would shift every later operator's (the crop windows, the flips, the
// RandAugment choices), which the first assertion shows.
// Planned without the normalize fusion, whose float rounding differs from normalize's table
// (tests/fused_test.cpp): the comparison is of draws, bit for bit.
std::vector<float> run_spec(const std::string& spec, const std::vector<uint8_t>& jpeg, uint64_t idx) {
  const auto p = Pipeline::build(parse_pipeline_spec(spec, "t"), {}, PlanOptions{false});
  PipelineWorkspace ws(*p);
  return run_recipe(*p, jpeg, Rng::for_sample(5, 0, idx), ws);
}

TEST(CommonRandomNumbers, AnOperatorAddedOrRemovedLeavesTheOthersDrawsUnchanged) {
  const auto jpeg = make_jpeg(320, 240, 12);
  const std::string tail = "{normalize: {}}]";
  const std::vector<std::pair<std::string, std::string>> pairs = {
      // crop windows and flips, fused into one step or not
      {"[{random_resized_crop: {size: 48}}, {horizontal_flip: {}}, " + tail,
       "[{random_grayscale: {p: 0.0}}, {random_resized_crop: {size: 48}}, {random_grayscale: {p: 0.0}}, "
       "{horizontal_flip: {}}, " + tail},
      // RandAugment's operation choices and magnitudes, after a crop
      {"[{random_resized_crop: {size: 48}}, {rand_augment: {}}, " + tail,
       "[{random_resized_crop: {size: 48}}, {random_grayscale: {p: 0.0}}, {rand_augment: {}}, " + tail},
      // the ROI decode's window: decode auto plans it from the crop's own stream
      {"{decode: {mode: auto}, transforms: [{random_resized_crop: {size: 48}}, {horizontal_flip: {}}, " + tail + "}",
       "{decode: {mode: auto}, transforms: [{random_resized_crop: {size: 48}}, {horizontal_flip: {}}, "
       "{random_grayscale: {p: 0.0}}, " + tail + "}"},
  };
  for (const auto& [without, with] : pairs) {
    int differing_draws = 0;
    for (uint64_t idx = 0; idx < 8; ++idx) {
      const auto a = run_spec(without, jpeg, idx), b = run_spec(with, jpeg, idx);
      ASSERT_EQ(a.size(), b.size());
      EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << with << " sample " << idx;
      // The samples themselves differ from one another: the draws are random, not fixed.
      if (idx > 0 && run_spec(without, jpeg, idx - 1) != a) ++differing_draws;
    }
    EXPECT_GE(differing_draws, 6) << without;
  }
}

TEST(CommonRandomNumbers, TheStreamsAreTheOperatorsOwn) {
  const Rng base = Rng::for_sample(5, 0, 3);
  const uint64_t crop = Rng::stream_salt("random_resized_crop", 1), flip = Rng::stream_salt("horizontal_flip", 1);
  Rng a = base.stream(crop), b = base.stream(crop), c = base.stream(flip);
  EXPECT_EQ(a.next_u64(), b.next_u64());  // the same operator: the same stream
  EXPECT_NE(base.stream(crop).next_u64(), c.next_u64());
  EXPECT_NE(Rng::stream_salt("horizontal_flip", 1), Rng::stream_salt("horizontal_flip", 2));
  Rng copy = base;
  EXPECT_EQ(copy.next_u64(), Rng(base).next_u64());  // stream() did not advance the base
}

}  // namespace
}  // namespace pipebench
