// Why this file exists: each operator must do what its torchvision namesake does, run alone
// or fused by the planner. References here are independent: naive loops over pixels, or
// OpenCV called directly, never the operator's own code path.
#include <gtest/gtest.h>

#include <opencv2/imgproc.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "tests/test_data.h"
#include "transforms/crop.h"
#include "transforms/jpeg_decode.h"
#include "transforms/normalize.h"
#include "transforms/pipeline.h"
#include "transforms/registry.h"
#include "transforms/spec.h"

namespace pipebench {
namespace {

using testing::make_op;
using testing::run_op;

Image gradient(int h, int w) {
  Image img;
  img.resize(h, w, 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) img.row(y)[x * 3 + c] = static_cast<uint8_t>((x * 7 + y * 13 + c * 50) & 255);
  return img;
}


uint8_t px(const Image& img, int y, int x, int c) { return img.row(y)[x * img.channels + c]; }

TEST(Ops, VerticalFlipMirrorsRowsWhenDrawn) {
  const Image in = gradient(5, 4);
  const Image out = run_op("{vertical_flip: {p: 1.0}}", in);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 4; ++x)
      for (int c = 0; c < 3; ++c) ASSERT_EQ(px(out, y, x, c), px(in, 4 - y, x, c));
  const Image same = run_op("{vertical_flip: {p: 0.0}}", in);
  EXPECT_EQ(same.data, in.data);
}

TEST(Ops, CenterCropPadsLikeTorchvisionWhenLarger) {
  // torchvision: pad left/top (crop - dim) // 2, right/bottom the rest, with 0.
  const Image in = gradient(3, 4);
  const Image out = run_op("{center_crop: {size: 6}}", in);
  ASSERT_EQ(out.height, 6);
  ASSERT_EQ(out.width, 6);
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 6; ++x) {
      const int sy = y - 1, sx = x - 1;  // top = (6 - 3) // 2 = 1, left = (6 - 4) // 2 = 1
      const bool inside = sy >= 0 && sy < 3 && sx >= 0 && sx < 4;
      ASSERT_EQ(px(out, y, x, 0), inside ? px(in, sy, sx, 0) : 0) << y << "," << x;
    }
}

TEST(Ops, RandomCropPaddingAndPadIfNeeded) {
  const Image in = gradient(10, 12);
  // padding 2 makes a 14 x 16 canvas: a 14 x 14 crop fits, a 15 x 15 one does not.
  const Image padded = run_op("{random_crop: {size: 14, padding: 2, fill: 9}}", in);
  ASSERT_EQ(padded.height, 14);
  ASSERT_EQ(padded.width, 14);
  EXPECT_THROW(run_op("{random_crop: {size: 15, padding: 2}}", in), std::invalid_argument);
  // The whole canvas (rows 0 and 13 are padding) when the crop is its full height.
  bool saw_fill = false;
  for (int x = 0; x < 14; ++x) saw_fill |= px(padded, 0, x, 0) == 9;
  EXPECT_TRUE(saw_fill);
  const Image grown = run_op("{random_crop: {size: 15, pad_if_needed: true}}", in);
  EXPECT_EQ(grown.height, 15);
  EXPECT_EQ(grown.width, 15);
}

TEST(Ops, ResizeToHeightWidthMatchesOpenCV) {
  const Image in = gradient(40, 60);
  for (const auto& [name, flag] : std::vector<std::pair<std::string, int>>{
           {"nearest", cv::INTER_NEAREST}, {"bicubic", cv::INTER_CUBIC}, {"area", cv::INTER_AREA}}) {
    const Image out = run_op("{resize: {size: [25, 33], interpolation: " + name + "}}", in);
    cv::Mat src(40, 60, CV_8UC3, const_cast<uint8_t*>(in.ptr()));
    cv::Mat want;
    cv::resize(src, want, cv::Size(33, 25), 0, 0, flag);
    ASSERT_EQ(out.height, 25);
    ASSERT_EQ(out.width, 33);
    EXPECT_EQ(0, std::memcmp(out.ptr(), want.data, out.size_bytes())) << name;
  }
  // An int resizes the shorter side, the longer int(size * long / short): 60 * 20 / 40 = 30.
  const Image shorter = run_op("{resize: {size: 20}}", in);
  EXPECT_EQ(shorter.height, 20);
  EXPECT_EQ(shorter.width, 30);
}

TEST(Ops, NormalizeOnATensorIsAffinePerChannel) {
  // convert_color_yuv then normalize(mean, std): (yuv - mean) / std, channel by channel.
  const auto p = Pipeline::build(parse_pipeline_spec(
      "[{center_crop: {size: 8}}, convert_color_yuv, {normalize: {mean: [1, 2, 3], std: [2, 4, 8]}}]", "t"));
  const auto q = Pipeline::build(parse_pipeline_spec("[{center_crop: {size: 8}}, convert_color_yuv]", "t"));
  const auto jpeg = testing::make_jpeg(32, 24, 3);
  std::vector<float> a(p->output_floats()), b(q->output_floats());
  PipelineWorkspace wa(*p), wb(*q);
  Rng r1(0), r2(0);
  p->run(jpeg, "x.jpg", r1, wa, a.data());
  q->run(jpeg, "x.jpg", r2, wb, b.data());
  const float mean[3] = {1, 2, 3}, stdv[3] = {2, 4, 8};
  for (size_t i = 0; i < a.size(); ++i) {
    const size_t c = i / 64;
    ASSERT_FLOAT_EQ(a[i], (b[i] - mean[c]) * (1.0f / stdv[c])) << i;
  }
}

TEST(Ops, FusedStepsEqualTheOperatorsRunOneByOne) {
  // The planner fuses random_resized_crop + horizontal_flip and resize + center_crop; the
  // reference runs crop.h's functions one by one with the same draws, each operator from its
  // own stream (Rng::stream, transforms/rng.h).
  // (Without the normalize fusion, whose float rounding tests/fused_test.cpp checks.)
  const auto jpeg = testing::make_jpeg(333, 500, 11);
  const PlanOptions no_normalize{false};
  const auto fused = Pipeline::build(parse_pipeline_spec(
      "[{random_resized_crop: {size: 64}}, {horizontal_flip: {p: 0.5}}, normalize]", "t"), {},
      no_normalize);
  EXPECT_EQ(fused->plan_text(), "decode(full) -> random_resized_crop+horizontal_flip -> normalize");
  PipelineWorkspace wa(*fused);
  for (uint64_t idx = 0; idx < 6; ++idx) {
    std::vector<float> a(fused->output_floats());
    Rng r1 = Rng::for_sample(4, 0, idx);
    fused->run(jpeg, "x.jpg", r1, wa, a.data());
    const Rng r2 = Rng::for_sample(4, 0, idx);
    Rng crop_rng = r2.stream(Rng::stream_salt("random_resized_crop", 1));
    Rng flip_rng = r2.stream(Rng::stream_salt("horizontal_flip", 1));
    TurboDecoder dec;
    Image full, crop;
    dec.decode(jpeg, "x.jpg", full);
    const CropWindow w = random_resized_crop_window(full.height, full.width, crop_rng);
    resized_crop(full, w, 64, 64, crop);
    if (flip_rng.bernoulli(0.5)) horizontal_flip(crop);
    std::vector<float> want(a.size());
    normalize_to_chw(crop, want.data());
    EXPECT_EQ(a, want) << idx;
  }
  const auto val = Pipeline::build(
      parse_pipeline_spec("[{resize: {size: 80}}, {center_crop: {size: 64}}, normalize]", "t"), {}, no_normalize);
  EXPECT_EQ(val->plan_text(), "decode(full) -> resize+center_crop -> normalize");
  std::vector<float> a(val->output_floats());
  PipelineWorkspace wv(*val);
  Rng r(0);
  val->run(jpeg, "x.jpg", r, wv, a.data());
  TurboDecoder dec;
  Image full, resized, crop;
  dec.decode(jpeg, "x.jpg", full);
  resize_shorter(full, 80, resized);
  center_crop(resized, 64, crop);
  std::vector<float> want(a.size());
  normalize_to_chw(crop, want.data());
  EXPECT_EQ(a, want);
}

TEST(Ops, ScaledDecodeIsTurboJpegScalingToTheCropSize) {
  const auto p = Pipeline::build(parse_pipeline_spec(
      "{decode: {mode: scaled}, transforms: [{center_crop: {size: 100}}, normalize]}", "t"));
  EXPECT_EQ(p->decode_plan(), "scaled");
  const auto jpeg = testing::make_jpeg(800, 600, 2);
  std::vector<float> got(p->output_floats());
  PipelineWorkspace ws(*p);
  Rng r(0);
  p->run(jpeg, "x.jpg", r, ws, got.data());
  // Reference: the smallest DCT scale keeping both sides >= 100 (1/4: 200 x 150), cropped.
  TurboDecoder dec;
  Image scaled, crop;
  dec.decode_scaled(jpeg, "x.jpg", 100, 100, scaled);
  ASSERT_EQ(scaled.width, 200);
  ASSERT_EQ(scaled.height, 150);
  center_crop(scaled, 100, crop);
  std::vector<float> want(got.size());
  normalize_to_chw(crop, want.data());
  EXPECT_EQ(got, want);
}

// ROI decode serves center_crop and random_crop through WindowOp::finish: the same pixels
// as a full decode followed by the operator, including the padding of a small image.
TEST(Ops, RoiDecodedCropsEqualFullDecodeThenCrop) {
  for (const std::string op : {"{center_crop: {size: 96}}", "{center_crop: {size: 200}}",
                               "{random_crop: {size: 64}}"}) {
    const auto roi = Pipeline::build(parse_pipeline_spec(
        "{decode: {mode: roi}, transforms: [" + op + ", normalize]}", "t"));
    const auto full = Pipeline::build(parse_pipeline_spec("[" + op + ", normalize]", "t"));
    ASSERT_EQ(roi->decode_plan(), "roi");
    const auto jpeg = testing::make_jpeg(160, 120, 9, 90, "4:4:4");  // 200 > 120: padded
    std::vector<float> a(roi->output_floats()), b(full->output_floats());
    PipelineWorkspace wa(*roi), wb(*full);
    for (uint64_t idx = 0; idx < 3; ++idx) {
      Rng r1 = Rng::for_sample(5, 0, idx), r2 = Rng::for_sample(5, 0, idx);
      roi->run(jpeg, "x.jpg", r1, wa, a.data());
      full->run(jpeg, "x.jpg", r2, wb, b.data());
      EXPECT_EQ(a, b) << op << " sample " << idx;
    }
  }
}

}  // namespace
}  // namespace pipebench
