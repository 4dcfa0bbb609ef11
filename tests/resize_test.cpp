// Why this file exists: every resize pipebench runs goes through the engine of resize.h, and
// its claims are exact ones: bilinear and bicubic give cv::resize's own bits (so a user's
// numbers do not depend on which implementation ran), the area filter stays within one
// level of the exact box average, a kept rectangle and a mirror are a crop and a flip of the
// whole output, the AVX-512 and the scalar passes agree bit for bit, to_chw is the affine
// map of to_image's values, and no call allocates once the scratch has grown. The
// references are OpenCV itself and a float64 box filter written here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "tests/alloc_counter.h"
#include "tests/test_data.h"
#include "transforms/crop.h"
#include "transforms/image.h"
#include "transforms/resize.h"
#include "transforms/rng.h"

namespace pipebench {
namespace {

// Random content (every byte independent), or smooth content with sharp steps (a photo's
// mix), 1 or 3 channels.
Image make_image(int h, int w, int c, uint64_t seed, bool smooth) {
  Image img;
  img.resize(h, w, c);
  Rng rng(seed);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w * c; ++x) {
      img.row(y)[x] = smooth ? static_cast<uint8_t>((3 * y + 5 * (x / c) + 70 * (x % c) +
                                                     ((x / c) > w / 2 ? 90 : 0)) & 255)
                             : static_cast<uint8_t>(rng.next_u64());
    }
  return img;
}

cv::Mat mat_of(const Image& img) {
  return cv::Mat(img.height, img.width, CV_8UC(img.channels), const_cast<uint8_t*>(img.ptr()),
                 img.row_bytes());
}

Image from_mat(const cv::Mat& m) {
  Image img;
  img.resize(m.rows, m.cols, m.channels());
  for (int y = 0; y < m.rows; ++y) std::memcpy(img.row(y), m.ptr(y), img.row_bytes());
  return img;
}

// cv::resize of the window, then the kept rectangle, then the mirror: what the engine's
// to_image promises for kLinear / kCubic.
Image opencv_reference(const Image& src, const CropWindow& w, int oh, int ow, const CropWindow& keep,
                       bool mirror, int flag) {
  cv::Mat out;
  cv::resize(mat_of(src)(cv::Rect(w.x, w.y, w.width, w.height)), out, cv::Size(ow, oh), 0, 0, flag);
  cv::Mat kept = out(cv::Rect(keep.x, keep.y, keep.width, keep.height)).clone();
  if (mirror) cv::flip(kept, kept, 1);
  return from_mat(kept);
}

struct Case {
  Image src;
  CropWindow window, keep;
  int oh, ow;
  bool mirror;
};

// Windows anywhere, sizes from 1 pixel up, outputs that shrink, grow, or both (one side
// each), kept rectangles and mirrors.
Case random_case(Rng& rng, int k) {
  Case c;
  const int channels = k % 5 == 0 ? 1 : 3;
  const int sw = static_cast<int>(rng.uniform_int(1, k % 7 == 0 ? 600 : 90));
  const int sh = static_cast<int>(rng.uniform_int(1, k % 7 == 0 ? 450 : 90));
  c.src = make_image(sh, sw, channels, 100 + k, k % 2 == 0);
  c.window.width = static_cast<int>(rng.uniform_int(1, sw));
  c.window.height = static_cast<int>(rng.uniform_int(1, sh));
  c.window.x = static_cast<int>(rng.uniform_int(0, sw - c.window.width));
  c.window.y = static_cast<int>(rng.uniform_int(0, sh - c.window.height));
  c.ow = static_cast<int>(rng.uniform_int(1, k % 7 == 0 ? 240 : 120));
  c.oh = static_cast<int>(rng.uniform_int(1, k % 7 == 0 ? 240 : 120));
  c.keep = CropWindow{0, 0, c.ow, c.oh};
  if (k % 3 == 0) {
    c.keep.width = static_cast<int>(rng.uniform_int(1, c.ow));
    c.keep.height = static_cast<int>(rng.uniform_int(1, c.oh));
    c.keep.x = static_cast<int>(rng.uniform_int(0, c.ow - c.keep.width));
    c.keep.y = static_cast<int>(rng.uniform_int(0, c.oh - c.keep.height));
  }
  c.mirror = rng.bernoulli(0.5);
  return c;
}

std::string describe(const Case& c) {
  return std::to_string(c.src.width) + "x" + std::to_string(c.src.height) + "x" +
         std::to_string(c.src.channels) + " window (" + std::to_string(c.window.x) + "," +
         std::to_string(c.window.y) + " " + std::to_string(c.window.width) + "x" +
         std::to_string(c.window.height) + ") -> " + std::to_string(c.ow) + "x" +
         std::to_string(c.oh) + " keep (" + std::to_string(c.keep.x) + "," +
         std::to_string(c.keep.y) + " " + std::to_string(c.keep.width) + "x" +
         std::to_string(c.keep.height) + ")" + (c.mirror ? " mirrored" : "");
}

// Runs the test body with the AVX-512 passes (where the CPU has them) and the scalar ones.
class ResizeBothPaths : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam() && !testing::simd_path_available()) GTEST_SKIP() << testing::kNoSimdPath;
    resample_use_simd(GetParam());
  }
  void TearDown() override { resample_use_simd(true); }
};

TEST_P(ResizeBothPaths, LinearAndCubicAreOpenCvsBits) {
  Rng rng(11);
  Resampler r;
  Image out;
  for (int k = 0; k < 600; ++k) {
    const Case c = random_case(rng, k);
    const bool cubic = k % 2 == 1;
    r.to_image(c.src, c.window, c.oh, c.ow, c.keep, c.mirror,
               cubic ? ResampleFilter::kCubic : ResampleFilter::kLinear, out);
    const Image want = opencv_reference(c.src, c.window, c.oh, c.ow, c.keep, c.mirror,
                                        cubic ? cv::INTER_CUBIC : cv::INTER_LINEAR);
    ASSERT_EQ(out.height, want.height);
    ASSERT_EQ(out.width, want.width);
    ASSERT_EQ(0, std::memcmp(out.ptr(), want.ptr(), want.size_bytes()))
        << (cubic ? "cubic " : "linear ") << describe(c);
  }
}

// The box filter's definition in float64: output i averages source [i s, (i + 1) s),
// s = n_in / n_out, each source pixel weighted by its overlap.
std::vector<double> box_weights(int n_in, int n_out) {
  std::vector<double> w(static_cast<size_t>(n_out) * n_in, 0.0);
  const double s = static_cast<double>(n_in) / n_out;
  for (int o = 0; o < n_out; ++o) {
    double sum = 0;
    for (int i = static_cast<int>(std::floor(o * s)); i < std::min(n_in, static_cast<int>(std::ceil((o + 1) * s))); ++i) {
      const double v = std::max(0.0, std::min((o + 1) * s, i + 1.0) - std::max(o * s, double(i)));
      w[static_cast<size_t>(o) * n_in + i] = v;
      sum += v;
    }
    for (int i = 0; i < n_in; ++i) w[static_cast<size_t>(o) * n_in + i] /= sum;
  }
  return w;
}

TEST_P(ResizeBothPaths, AreaWithinOneLevelOfTheBoxAverage) {
  Rng rng(12);
  Resampler r;
  Image out;
  long off_by_one = 0;
  for (int k = 0; k < 150; ++k) {
    Case c = random_case(rng, k);
    // Shrinking on both sides (the area filter's use); up to 9x for the widest tap tables.
    c.ow = std::max(1, c.window.width * static_cast<int>(rng.uniform_int(1, 10)) / 10);
    c.oh = std::max(1, c.window.height * static_cast<int>(rng.uniform_int(1, 10)) / 10);
    if (k % 4 == 0) c.ow = std::max(1, c.window.width / 9);
    c.keep = CropWindow{0, 0, c.ow, c.oh};
    r.to_image(c.src, c.window, c.oh, c.ow, c.keep, false, ResampleFilter::kArea, out);
    const auto wx = box_weights(c.window.width, c.ow), wy = box_weights(c.window.height, c.oh);
    const int C = c.src.channels;
    for (int y = 0; y < c.oh; ++y)
      for (int x = 0; x < c.ow; ++x)
        for (int ch = 0; ch < C; ++ch) {
          double v = 0;
          for (int sy = 0; sy < c.window.height; ++sy) {
            const double a = wy[static_cast<size_t>(y) * c.window.height + sy];
            if (a == 0) continue;
            const uint8_t* row = c.src.row(c.window.y + sy) + static_cast<size_t>(c.window.x) * C;
            for (int sx = 0; sx < c.window.width; ++sx)
              v += a * wx[static_cast<size_t>(x) * c.window.width + sx] * row[sx * C + ch];
          }
          const int want = static_cast<int>(std::lround(v));
          const int got = out.row(y)[x * C + ch];
          ASSERT_LE(std::abs(got - want), 1) << describe(c) << " at " << y << "," << x << "," << ch;
          off_by_one += got != want;
        }
  }
  RecordProperty("values_off_by_one", std::to_string(off_by_one));
}

TEST_P(ResizeBothPaths, KeptRectangleAndMirrorAreACropAndAFlipOfTheWhole) {
  Rng rng(13);
  Resampler r;
  Image part, whole;
  for (int k = 0; k < 300; ++k) {
    const Case c = random_case(rng, k);
    const ResampleFilter f = k % 3 == 0 ? ResampleFilter::kArea
                             : k % 3 == 1 ? ResampleFilter::kLinear : ResampleFilter::kCubic;
    r.to_image(c.src, c.window, c.oh, c.ow, c.keep, c.mirror, f, part);
    r.to_image(c.src, c.window, c.oh, c.ow, CropWindow{0, 0, c.ow, c.oh}, false, f, whole);
    cv::Mat want = mat_of(whole)(cv::Rect(c.keep.x, c.keep.y, c.keep.width, c.keep.height)).clone();
    if (c.mirror) cv::flip(want, want, 1);
    ASSERT_EQ(0, std::memcmp(part.ptr(), from_mat(want).ptr(), part.size_bytes()))
        << int(f) << " " << describe(c);
  }
}

TEST_P(ResizeBothPaths, ToChwIsTheAffineMapOfTheImageValues) {
  Rng rng(14);
  Resampler r;
  Image img;
  const ChannelAffine a{{0.0171f, 0.0175f, 0.0174f}, {-2.1179f, -2.0357f, -1.8044f}};
  for (int k = 0; k < 200; ++k) {
    Case c = random_case(rng, k);
    if (c.src.channels != 3) c.src = make_image(c.src.height, c.src.width, 3, 900 + k, k % 2 == 0);
    const ResampleFilter f = k % 3 == 0 ? ResampleFilter::kArea
                             : k % 3 == 1 ? ResampleFilter::kLinear : ResampleFilter::kCubic;
    r.to_image(c.src, c.window, c.oh, c.ow, c.keep, c.mirror, f, img);
    std::vector<float> chw(3 * static_cast<size_t>(c.keep.height) * c.keep.width, std::nanf(""));
    r.to_chw(c.src, c.window, c.oh, c.ow, c.keep, c.mirror, f, a, chw.data());
    const size_t plane = static_cast<size_t>(c.keep.height) * c.keep.width;
    for (int y = 0; y < c.keep.height; ++y)
      for (int x = 0; x < c.keep.width; ++x)
        for (int ch = 0; ch < 3; ++ch) {
          const float want = static_cast<float>(img.row(y)[x * 3 + ch]) * a.scale[ch] + a.bias[ch];
          ASSERT_EQ(chw[ch * plane + static_cast<size_t>(y) * c.keep.width + x], want)
              << int(f) << " " << describe(c) << " at " << y << "," << x << "," << ch;
        }
  }
}

INSTANTIATE_TEST_SUITE_P(SimdAndScalar, ResizeBothPaths, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Simd" : "Scalar"; });

// The two paths against each other on the shapes the pipelines meet most (a 500 x 375
// photo's RandomResizedCrop windows to 224) and on the widest tap tables (10x shrinks).
TEST(Resize, SimdAndScalarPassesGiveTheSameBits) {
  if (!testing::simd_path_available()) GTEST_SKIP() << testing::kNoSimdPath;
  const Image photo = make_image(375, 500, 3, 5, true);
  const Image noise = make_image(375, 500, 3, 6, false);
  Resampler r;
  Image a, b;
  for (int k = 0; k < 60; ++k) {
    Rng rng = Rng::for_sample(9, 0, k);
    const CropWindow w = random_resized_crop_window(375, 500, rng);
    const int out = k % 10 == 0 ? 37 : 224;
    for (const ResampleFilter f : {bilinear_filter(w, out, out), ResampleFilter::kCubic}) {
      const Image& src = k % 2 ? photo : noise;
      resample_use_simd(true);
      r.to_image(src, w, out, out, CropWindow{0, 0, out, out}, k % 3 == 0, f, a);
      resample_use_simd(false);
      r.to_image(src, w, out, out, CropWindow{0, 0, out, out}, k % 3 == 0, f, b);
      resample_use_simd(true);
      ASSERT_EQ(0, std::memcmp(a.ptr(), b.ptr(), a.size_bytes())) << k << " filter " << int(f);
    }
  }
}

TEST(Resize, BilinearFilterRule) {
  EXPECT_EQ(bilinear_filter(CropWindow{0, 0, 300, 200}, 224, 224), ResampleFilter::kLinear);
  EXPECT_EQ(bilinear_filter(CropWindow{0, 0, 300, 250}, 224, 224), ResampleFilter::kArea);
  EXPECT_EQ(bilinear_filter(CropWindow{0, 0, 224, 224}, 224, 224), ResampleFilter::kArea);
  EXPECT_EQ(bilinear_filter(CropWindow{0, 0, 100, 300}, 224, 224), ResampleFilter::kLinear);
}

// At scale 1 every filter returns the window itself.
TEST(Resize, ScaleOneIsTheWindow) {
  const Image src = make_image(40, 50, 3, 8, false);
  const CropWindow w{3, 5, 31, 17};
  Resampler r;
  Image out;
  for (const ResampleFilter f : {ResampleFilter::kArea, ResampleFilter::kLinear, ResampleFilter::kCubic}) {
    r.to_image(src, w, 17, 31, CropWindow{0, 0, 31, 17}, false, f, out);
    for (int y = 0; y < 17; ++y)
      ASSERT_EQ(0, std::memcmp(out.row(y), src.row(w.y + y) + 3 * w.x, 31 * 3)) << int(f) << " row " << y;
  }
}

// Scratch grows to the largest job, then stays: no heap allocation per call.
TEST(Resize, NoAllocationOnceWarm) {
  const Image src = make_image(375, 500, 3, 9, true);
  Resampler r;
  Image out;
  std::vector<float> chw(3 * 224 * 224);
  const ChannelAffine a;
  const auto run_all = [&](int n) {
    for (int k = 0; k < n; ++k) {
      Rng rng = Rng::for_sample(1, 0, k);
      const CropWindow w = random_resized_crop_window(375, 500, rng);
      r.to_image(src, w, 224, 224, CropWindow{0, 0, 224, 224}, k % 2 == 0,
                 k % 3 == 0 ? ResampleFilter::kCubic : bilinear_filter(w, 224, 224), out);
      r.to_chw(src, w, 224, 224, CropWindow{0, 0, 224, 224}, k % 2 == 1,
               k % 3 == 1 ? ResampleFilter::kCubic : bilinear_filter(w, 224, 224), a, chw.data());
    }
  };
  // Warm up on the largest windows of each filter.
  for (const ResampleFilter f : {ResampleFilter::kArea, ResampleFilter::kLinear, ResampleFilter::kCubic}) {
    r.to_image(src, CropWindow{0, 0, 500, 375}, 224, 224, CropWindow{0, 0, 224, 224}, false, f, out);
    r.to_chw(src, CropWindow{0, 0, 500, 375}, 224, 224, CropWindow{0, 0, 224, 224}, false, f, a, chw.data());
    r.to_image(src, CropWindow{0, 0, 100, 100}, 224, 224, CropWindow{0, 0, 224, 224}, false, f, out);
  }
  run_all(40);
  const long before = testing::allocation_count();
  run_all(40);
  EXPECT_EQ(testing::allocation_count() - before, 0);
}

TEST(Resize, RejectsBadArguments) {
  const Image src = make_image(10, 12, 3, 1, false);
  Image gray = make_image(10, 12, 1, 1, false);
  Resampler r;
  Image out;
  std::vector<float> chw(3 * 100);
  const CropWindow all{0, 0, 10, 10};
  const auto f = ResampleFilter::kLinear;
  EXPECT_THROW(r.to_image(src, CropWindow{3, 0, 10, 2}, 5, 5, all, false, f, out), std::invalid_argument);
  EXPECT_THROW(r.to_image(src, CropWindow{0, 0, 0, 2}, 5, 5, all, false, f, out), std::invalid_argument);
  EXPECT_THROW(r.to_image(src, all, 0, 5, all, false, f, out), std::invalid_argument);
  EXPECT_THROW(r.to_image(src, all, 5, 5, CropWindow{1, 0, 5, 5}, false, f, out), std::invalid_argument);
  EXPECT_THROW(r.to_image(src, all, 5, 5, CropWindow{0, 0, 0, 5}, false, f, out), std::invalid_argument);
  EXPECT_THROW(r.to_image(src, all, 5, 5, CropWindow{0, 0, 5, 5}, false, f, const_cast<Image&>(src)),
               std::invalid_argument);
  EXPECT_THROW(r.to_chw(gray, all, 10, 10, all, false, f, ChannelAffine{}, chw.data()), std::invalid_argument);
  EXPECT_THROW(r.to_chw(src, all, 10, 10, all, false, f, ChannelAffine{}, nullptr), std::invalid_argument);
  Image empty;
  EXPECT_THROW(r.to_image(empty, all, 5, 5, CropWindow{0, 0, 5, 5}, false, f, out), std::invalid_argument);
  try {
    r.to_image(src, CropWindow{3, 0, 10, 2}, 5, 5, CropWindow{0, 0, 5, 5}, false, f, out);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("inside the 10 x 12"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pipebench
