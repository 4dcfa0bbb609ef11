// Correctness of the four JPEG decoders on valid input (decode_bad_input_test.cpp covers
// bad input). Independent references: the rendered pixels the JPEG was made from, OpenCV's
// decoder, a full decode then crop (for ROI), and a full decode then cv::resize INTER_AREA
// (for DCT scaling). Each JPEG comes from datasets/synthetic.h, made on the fly.
//
// Tolerances, and why:
// * TurboJPEG vs cv::imdecode: exact (max abs diff 0). Both run libjpeg-turbo 2.1.5's
//   decoder with the same defaults (accurate integer IDCT, smooth chroma upsampling), and
//   OpenCV's BGR output is only reordered.
// * ROI vs full decode + crop: exact. The ROI decode asks libjpeg for a crop two columns
//   wider than the window on each side, so smooth chroma upsampling sees every window
//   column's neighbours (without that margin the first and last column differed by up to 7
//   levels where they lay on a crop boundary inside the image).
// * DCT scaled vs full + INTER_AREA over the whole-block part (two
//   different low-pass filters; measured 45-52 dB, printed by the test) -> assert >= 40.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "datasets/synthetic.h"
#include "tests/test_data.h"
#include "transforms/jpeg_decode.h"

namespace pipebench {
namespace {

using testing::make_jpeg;
using testing::psnr;

struct Case {
  int width;
  int height;
  const char* subsampling;
  bool progressive;
};

std::string case_name(const Case& c) {
  return std::to_string(c.width) + "x" + std::to_string(c.height) + " " + c.subsampling +
         (c.progressive ? " progressive" : "");
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {320, 240, "4:2:0", false}, {320, 240, "4:4:4", false}, {320, 240, "4:2:2", false},
      {320, 240, "4:4:0", false}, {320, 240, "4:2:0", true},  {320, 240, "gray", false},
      {333, 257, "4:2:0", false}, {333, 257, "4:2:2", true},  {333, 257, "gray", true},
      {17, 9, "4:2:0", false},
  };
  return all;
}

std::vector<uint8_t> jpeg_for(const Case& c, uint64_t seed = 7) {
  return make_jpeg(c.width, c.height, seed, 90, c.subsampling, c.progressive);
}

int max_abs_diff(const uint8_t* a, const uint8_t* b, size_t n) {
  int m = 0;
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::abs(int(a[i]) - int(b[i])));
  return m;
}

std::vector<uint8_t> crop(const Image& img, const CropWindow& w) {
  std::vector<uint8_t> out(static_cast<size_t>(w.width) * w.height * 3);
  for (int r = 0; r < w.height; ++r)
    std::copy_n(img.row(w.y + r) + static_cast<size_t>(w.x) * 3, static_cast<size_t>(w.width) * 3,
                out.data() + static_cast<size_t>(r) * w.width * 3);
  return out;
}

// --- read_jpeg_info -----------------------------------------------------------------

TEST(ReadJpegInfo, ReportsDimensionsProgressiveAndSubsampling) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(case_name(c));
    const auto jpeg = jpeg_for(c);
    const JpegInfo info = read_jpeg_info(jpeg, "info.jpg");
    EXPECT_EQ(info.width, c.width);
    EXPECT_EQ(info.height, c.height);
    EXPECT_EQ(info.progressive, c.progressive);
    EXPECT_STREQ(info.subsampling, c.subsampling);
    EXPECT_EQ(info.components, std::string(c.subsampling) == "gray" ? 1 : 3);
  }
}

// --- full decode ----------------------------------------------------------------------

TEST(TurboDecoder, MatchesOpenCvExactlyAndSourcePixels) {
  TurboDecoder turbo;
  Image a, b;
  for (const Case& c : cases()) {
    SCOPED_TRACE(case_name(c));
    const auto jpeg = jpeg_for(c);
    turbo.decode(jpeg, "t.jpg", a);
    decode_opencv(jpeg, "t.jpg", b);
    ASSERT_EQ(a.height, c.height);
    ASSERT_EQ(a.width, c.width);
    ASSERT_EQ(a.channels, 3);
    ASSERT_EQ(b.height, c.height);
    ASSERT_EQ(b.width, c.width);
    EXPECT_EQ(max_abs_diff(a.ptr(), b.ptr(), a.size_bytes()), 0);

    // Against the pixels the JPEG was encoded from (quality 90).
    const auto rgb = render_synthetic_rgb(c.width, c.height, 7);
    if (std::string(c.subsampling) == "gray") {
      for (size_t i = 0; i < a.size_bytes(); i += 3) {
        ASSERT_EQ(a.ptr()[i], a.ptr()[i + 1]);
        ASSERT_EQ(a.ptr()[i], a.ptr()[i + 2]);
      }
      cv::Mat src(c.height, c.width, CV_8UC3, const_cast<uint8_t*>(rgb.data())), gray, gray3;
      cv::cvtColor(src, gray, cv::COLOR_RGB2GRAY);
      cv::cvtColor(gray, gray3, cv::COLOR_GRAY2RGB);
      EXPECT_GT(psnr(a.ptr(), gray3.data, a.size_bytes()), 30.0);
    } else {
      EXPECT_GT(psnr(a.ptr(), rgb.data(), a.size_bytes()), 30.0);
    }
  }
}

TEST(TurboDecoder, ProgressiveDecodesToTheSamePixelsAsBaseline) {
  // Progressive coding reorders the same quantized coefficients, so pixels are identical.
  TurboDecoder turbo;
  Image base, prog, roi;
  RoiDecoder roi_decoder;
  for (const char* ss : {"4:2:0", "4:4:4", "gray"}) {
    SCOPED_TRACE(ss);
    turbo.decode(make_jpeg(200, 150, 3, 85, ss, false), "b.jpg", base);
    const auto pj = make_jpeg(200, 150, 3, 85, ss, true);
    turbo.decode(pj, "p.jpg", prog);
    EXPECT_EQ(max_abs_diff(base.ptr(), prog.ptr(), base.size_bytes()), 0);
    roi_decoder.decode(pj, "p.jpg", {0, 0, 200, 150}, 0, 0, roi);
    EXPECT_EQ(max_abs_diff(base.ptr(), roi.ptr(), base.size_bytes()), 0);
  }
}

TEST(TurboDecoder, ReusesOutputBufferAcrossSizes) {
  TurboDecoder turbo;
  Image out;
  turbo.decode(make_jpeg(300, 200), "big.jpg", out);
  const uint8_t* data = out.ptr();
  turbo.decode(make_jpeg(100, 80), "small.jpg", out);
  EXPECT_EQ(out.ptr(), data);  // capacity kept, no reallocation
  EXPECT_EQ(out.width, 100);
  EXPECT_EQ(out.height, 80);
}

// --- ROI --------------------------------------------------------------------------------

TEST(RoiDecoder, FullWindowEqualsFullDecodeExactly) {
  TurboDecoder turbo;
  RoiDecoder roi;
  Image full, part;
  for (const Case& c : cases()) {
    SCOPED_TRACE(case_name(c));
    const auto jpeg = jpeg_for(c);
    turbo.decode(jpeg, "f.jpg", full);
    const ScalingFactor f = roi.decode(jpeg, "f.jpg", {0, 0, c.width, c.height}, 0, 0, part);
    EXPECT_EQ(f.num, 1);
    EXPECT_EQ(f.denom, 1);
    ASSERT_EQ(part.width, c.width);
    ASSERT_EQ(part.height, c.height);
    EXPECT_EQ(max_abs_diff(full.ptr(), part.ptr(), full.size_bytes()), 0);
  }
}

TEST(RoiDecoder, WindowMatchesFullDecodeThenCrop) {
  TurboDecoder turbo;
  RoiDecoder roi;
  Image full, part;
  for (const Case& c : cases()) {
    if (c.width < 64) continue;
    const auto jpeg = jpeg_for(c);
    turbo.decode(jpeg, "w.jpg", full);
    const int W = c.width, H = c.height;
    const std::vector<CropWindow> windows = {
        {16, 16, 64, 64},             // iMCU aligned
        {5, 7, 100, 50},              // unaligned
        {33, 41, 1, 1},               // one pixel
        {0, 0, 33, 17},               // top-left corner
        {W - 37, H - 29, 37, 29},     // bottom-right corner
        {0, 100, W, 20},              // full-width band
        {W / 2 + 3, 0, W - (W / 2 + 3), H},  // full-height band at the right edge
        {17, 9, W - 40, H - 30},      // most of the image
    };
    for (const CropWindow& w : windows) {
      SCOPED_TRACE(case_name(c) + " window " + std::to_string(w.x) + "," +
                   std::to_string(w.y) + " " + std::to_string(w.width) + "x" +
                   std::to_string(w.height));
      const ScalingFactor f = roi.decode(jpeg, "w.jpg", w, 0, 0, part);
      EXPECT_EQ(f.num, 1);
      ASSERT_EQ(part.width, w.width);
      ASSERT_EQ(part.height, w.height);
      const auto ref = crop(full, w);
      EXPECT_EQ(max_abs_diff(part.ptr(), ref.data(), ref.size()), 0);
    }
  }
}

TEST(RoiDecoder, ScaledWindowMatchesScaledFullDecodeThenCrop) {
  TurboDecoder turbo;
  RoiDecoder roi;
  Image full, part;
  const auto jpeg = make_jpeg(400, 300, 11);
  const CropWindow w{37, 21, 240, 200};
  for (const int denom : {2, 4, 8}) {
    SCOPED_TRACE("1/" + std::to_string(denom));
    const int min_w = (w.width + denom - 1) / denom, min_h = (w.height + denom - 1) / denom;
    const ScalingFactor f = roi.decode(jpeg, "s.jpg", w, min_w, min_h, part);
    ASSERT_EQ(f.num, 1);
    ASSERT_EQ(f.denom, denom);
    ASSERT_EQ(part.width, min_w);
    ASSERT_EQ(part.height, min_h);
    const ScalingFactor g =
        turbo.decode_scaled(jpeg, "s.jpg", f.scaled(400), f.scaled(300), full);
    ASSERT_EQ(g.denom, denom);
    // The window in scaled pixels: origin rounded down (inside the image here).
    const CropWindow sw{w.x / denom, w.y / denom, min_w, min_h};
    const auto ref = crop(full, sw);
    EXPECT_EQ(max_abs_diff(part.ptr(), ref.data(), ref.size()), 0);
  }
}

TEST(RoiDecoder, WindowOutsideImageIsBadArgument) {
  RoiDecoder roi;
  Image out;
  const auto jpeg = make_jpeg(64, 48);
  for (const CropWindow& w : {CropWindow{-1, 0, 10, 10}, CropWindow{0, 0, 65, 10},
                              CropWindow{60, 40, 5, 5}, CropWindow{0, 0, 0, 10},
                              CropWindow{10, 10, 10, -3}}) {
    try {
      roi.decode(jpeg, "bad_window.jpg", w, 0, 0, out);
      ADD_FAILURE() << "no error for window " << w.x << "," << w.y << " " << w.width << "x"
                    << w.height;
    } catch (const DecodeError& e) {
      EXPECT_EQ(e.reason(), DecodeError::Reason::kBadArgument);
      EXPECT_NE(std::string(e.what()).find("bad_window.jpg"), std::string::npos);
    }
  }
  // The decoder is still usable afterwards.
  roi.decode(jpeg, "ok.jpg", {0, 0, 64, 48}, 0, 0, out);
  EXPECT_EQ(out.width, 64);
}

// --- DCT scaling --------------------------------------------------------------------------

TEST(TurboDecoder, ScaledDecodeMatchesFullDecodeThenAreaResize) {
  TurboDecoder turbo;
  Image full, scaled;
  for (const Case& c : {Case{512, 384, "4:2:0", false}, Case{333, 257, "4:4:4", false},
                        Case{333, 257, "4:2:0", true}}) {
    const auto jpeg = jpeg_for(c, 5);
    turbo.decode(jpeg, "full.jpg", full);
    for (const int denom : {2, 4, 8}) {
      SCOPED_TRACE(case_name(c) + " 1/" + std::to_string(denom));
      const int min_w = (c.width + denom - 1) / denom, min_h = (c.height + denom - 1) / denom;
      const ScalingFactor f = turbo.decode_scaled(jpeg, "s.jpg", min_w, min_h, scaled);
      ASSERT_EQ(f.num, 1);
      ASSERT_EQ(f.denom, denom);
      ASSERT_EQ(scaled.width, min_w);
      ASSERT_EQ(scaled.height, min_h);
      // Compare the part made of whole denom x denom blocks: there both are box filters
      // on the same grid (the last, partial output column/row of a size not divisible by
      // denom covers fewer source pixels, which INTER_AREA would spread differently).
      const int fw = c.width / denom, fh = c.height / denom;
      cv::Mat src(full.height, full.width, CV_8UC3, full.ptr()), ref;
      cv::resize(src(cv::Rect(0, 0, fw * denom, fh * denom)), ref, cv::Size(fw, fh), 0, 0,
                 cv::INTER_AREA);
      cv::Mat got = cv::Mat(scaled.height, scaled.width, CV_8UC3, scaled.ptr())(
                        cv::Rect(0, 0, fw, fh)).clone();
      const double db = psnr(got.data, ref.data, got.total() * 3);
      std::printf("%s 1/%d: PSNR %.1f dB vs INTER_AREA\n", case_name(c).c_str(), denom, db);
      EXPECT_GE(db, 40.0);
    }
  }
}

TEST(ChooseScaling, PicksSmallestFactorNotBelowTarget) {
  struct Row {
    int width, height, min_width, min_height, num, denom;
  };
  const Row rows[] = {
      {1000, 800, 500, 400, 1, 2},   // exactly half
      {1000, 800, 501, 400, 5, 8},   // half is one pixel short in width
      {1000, 800, 126, 0, 1, 4},     // 1/8 gives 125
      {1000, 800, 125, 100, 1, 8},   // 1/8 exactly
      {1000, 800, 0, 0, 1, 8},       // no limit: smallest factor
      {1000, 800, -5, 400, 1, 2},    // negative = no limit on width
      {1000, 800, 751, 0, 7, 8},     // 3/4 gives 750
      {1000, 800, 1000, 800, 1, 1},  // full size
      {1000, 800, 2000, 100, 1, 1},  // never upscale
      {333, 257, 42, 33, 1, 8},      // ceil(333/8) = 42, ceil(257/8) = 33
      {333, 257, 43, 0, 1, 4},
      {333, 257, 0, 97, 3, 8},       // ceil(257*3/8) = 97
      {500, 375, 224, 224, 5, 8},    // 1/2 gives 188 rows < 224
      {224, 224, 224, 224, 1, 1},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(std::to_string(r.width) + "x" + std::to_string(r.height) + " min " +
                 std::to_string(r.min_width) + "x" + std::to_string(r.min_height));
    const ScalingFactor f = choose_scaling(r.width, r.height, r.min_width, r.min_height);
    EXPECT_EQ(f.num, r.num);
    EXPECT_EQ(f.denom, r.denom);
  }
  EXPECT_EQ((ScalingFactor{3, 8}.scaled(257)), 97);
  EXPECT_EQ((ScalingFactor{1, 8}.scaled(1)), 1);
}

}  // namespace
}  // namespace pipebench
