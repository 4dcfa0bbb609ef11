// Why this file exists: the geometric transforms and Normalize decide which pixels a model
// sees, so each is checked against values worked out by hand on tiny images, and the
// RandomResizedCrop window against a line-by-line transcription of torchvision's
// get_params (Python rounding included) driven by the same random numbers.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "transforms/crop.h"
#include "transforms/image.h"
#include "transforms/normalize.h"
#include "transforms/resize.h"
#include "transforms/rng.h"

namespace pipebench {
namespace {

// A 4 x 6 x 3 image with pixel (y, x, c) = 20y + 2x + 50c (every 2 x 2 block has an
// integer mean, so an exact 2x area shrink has exact expected values).
uint8_t px(int y, int x, int c) { return static_cast<uint8_t>(20 * y + 2 * x + 50 * c); }

Image make_4x6() {
  Image img;
  img.resize(4, 6, 3);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 6; ++x)
      for (int c = 0; c < 3; ++c) img.row(y)[x * 3 + c] = px(y, x, c);
  return img;
}

Image make_random(int h, int w, uint64_t seed) {
  Image img;
  img.resize(h, w, 3);
  Rng rng(seed);
  for (size_t i = 0; i < img.size_bytes(); ++i) img.data[i] = static_cast<uint8_t>(rng.next_u64());
  return img;
}

uint8_t at(const Image& img, int y, int x, int c) { return img.row(y)[x * img.channels + c]; }

// Python 3 round(): half to even.
int py_round(double v) {
  const double f = std::floor(v);
  const double d = v - f;
  if (d > 0.5) return static_cast<int>(f) + 1;
  if (d < 0.5) return static_cast<int>(f);
  return static_cast<int>(std::fmod(f, 2.0) == 0.0 ? f : f + 1);
}

// torchvision.transforms.RandomResizedCrop.get_params, transcribed, with torch's
// uniform_(a, b) = a + (b - a) * U and randint(0, n + 1) = uniform_int(0, n).
CropWindow reference_rrc(int height, int width, Rng& rng, double s0 = 0.08, double s1 = 1.0,
                         double r0 = 3.0 / 4, double r1 = 4.0 / 3) {
  const double area = double(height) * width;
  for (int k = 0; k < 10; ++k) {
    const double target_area = area * rng.uniform(s0, s1);
    const double aspect_ratio = std::exp(rng.uniform(std::log(r0), std::log(r1)));
    const int w = py_round(std::sqrt(target_area * aspect_ratio));
    const int h = py_round(std::sqrt(target_area / aspect_ratio));
    if (0 < w && w <= width && 0 < h && h <= height) {
      const int i = int(rng.uniform_int(0, height - h));
      const int j = int(rng.uniform_int(0, width - w));
      return {j, i, w, h};
    }
  }
  const double in_ratio = double(width) / height;
  int w, h;
  if (in_ratio < r0) {
    w = width;
    h = py_round(w / r0);
  } else if (in_ratio > r1) {
    h = height;
    w = py_round(h * r1);
  } else {
    w = width;
    h = height;
  }
  return {(width - w) / 2, (height - h) / 2, w, h};
}

TEST(CenterCrop, OffsetsFollowPythonRounding) {
  const Image src = make_4x6();
  Image out;
  // size 3: top = round(0.5) = 0, left = round(1.5) = 2.
  center_crop(src, 3, out);
  ASSERT_EQ(out.height, 3);
  ASSERT_EQ(out.width, 3);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 3; ++x)
      for (int c = 0; c < 3; ++c) EXPECT_EQ(at(out, y, x, c), px(y, x + 2, c));
  // size 2: top = 1, left = 2.
  center_crop(src, 2, out);
  ASSERT_EQ(out.height, 2);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 2; ++x) EXPECT_EQ(at(out, y, x, 1), px(y + 1, x + 2, 1));
  // size 1: top = round(1.5) = 2, left = round(2.5) = 2.
  center_crop(src, 1, out);
  EXPECT_EQ(at(out, 0, 0, 2), px(2, 2, 2));
}

TEST(CenterCrop, OddSizes) {
  Image src = make_random(7, 9, 3);
  Image out;
  center_crop(src, 4, out);  // top = round(1.5) = 2, left = round(2.5) = 2
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) EXPECT_EQ(at(out, y, x, 0), at(src, y + 2, x + 2, 0));
  center_crop(src, 6, out);  // top = round(0.5) = 0, left = round(1.5) = 2
  EXPECT_EQ(at(out, 0, 0, 1), at(src, 0, 2, 1));
  EXPECT_EQ(at(out, 5, 5, 2), at(src, 5, 7, 2));
  EXPECT_THROW(center_crop(src, 8, out), std::invalid_argument);
  EXPECT_THROW(center_crop(src, 0, out), std::invalid_argument);
}

TEST(HorizontalFlip, MirrorsEvenAndOddWidths) {
  Image img = make_4x6();
  horizontal_flip(img);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 6; ++x)
      for (int c = 0; c < 3; ++c) EXPECT_EQ(at(img, y, x, c), px(y, 5 - x, c));
  const Image src = make_random(3, 5, 9);
  Image odd = src;
  horizontal_flip(odd);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x)
      for (int c = 0; c < 3; ++c) EXPECT_EQ(at(odd, y, x, c), at(src, y, 4 - x, c));
  Image gray;
  gray.resize(2, 3, 1);
  for (int i = 0; i < 6; ++i) gray.data[i] = static_cast<uint8_t>(i);
  horizontal_flip(gray);
  EXPECT_EQ(std::vector<uint8_t>(gray.data.begin(), gray.data.begin() + 6),
            (std::vector<uint8_t>{2, 1, 0, 5, 4, 3}));
}

TEST(ResizedCrop, SameSizeIsACopyOfTheWindow) {
  const Image src = make_4x6();
  Image out;
  resized_crop(src, CropWindow{1, 2, 4, 2}, 2, 4, out);
  ASSERT_EQ(out.height, 2);
  ASSERT_EQ(out.width, 4);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 4; ++x)
      for (int c = 0; c < 3; ++c) EXPECT_EQ(at(out, y, x, c), px(y + 2, x + 1, c));
}

TEST(ResizedCrop, HalvingAveragesTwoByTwoBlocks) {
  const Image src = make_4x6();
  Image out;
  resized_crop(src, CropWindow{0, 0, 6, 4}, 2, 3, out);
  ASSERT_EQ(out.height, 2);
  ASSERT_EQ(out.width, 3);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int c = 0; c < 3; ++c) {
        // mean of 20y + 2x + 50c over y in {2i, 2i+1}, x in {2j, 2j+1}
        const int expected = 40 * i + 10 + 4 * j + 1 + 50 * c;
        EXPECT_EQ(at(out, i, j, c), expected) << i << "," << j << "," << c;
      }
}

TEST(ResizedCrop, EnlargingIsBilinearWithHalfPixelCentres) {
  Image src;
  src.resize(2, 2, 3);
  for (int y = 0; y < 2; ++y) {
    uint8_t* r = src.row(y);
    for (int c = 0; c < 3; ++c) {
      r[c] = 0;
      r[3 + c] = 200;
    }
  }
  Image out;
  resized_crop(src, CropWindow{0, 0, 2, 2}, 2, 4, out);
  // source x = (x + 0.5) / 2 - 0.5, clamped: -0.25, 0.25, 0.75, 1.25.
  const int expected[4] = {0, 50, 150, 200};
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 4; ++x)
      for (int c = 0; c < 3; ++c) EXPECT_EQ(at(out, y, x, c), expected[x]);
}

// The separable area resampler against OpenCV's own INTER_AREA on random content, for
// shrink factors from barely below 1 to over 4 and windows anywhere in the image.
TEST(ResizedCrop, ShrinkingMatchesOpenCvInterArea) {
  const Image src = make_random(375, 500, 77);
  const cv::Mat whole(src.height, src.width, CV_8UC3, const_cast<uint8_t*>(src.ptr()));
  Rng rng(3);
  const int outs[][2] = {{224, 224}, {100, 37}, {1, 1}, {223, 224}, {50, 200}, {7, 5}};
  Image out;
  int n_diff = 0;
  for (const auto& o : outs) {
    for (int k = 0; k < 20; ++k) {
      const int w = static_cast<int>(rng.uniform_int(o[1], 500));
      const int h = static_cast<int>(rng.uniform_int(o[0], 375));
      const CropWindow win{static_cast<int>(rng.uniform_int(0, 500 - w)),
                           static_cast<int>(rng.uniform_int(0, 375 - h)), w, h};
      resized_crop(src, win, o[0], o[1], out);
      cv::Mat want;
      cv::resize(whole(cv::Rect(win.x, win.y, w, h)), want, cv::Size(o[1], o[0]), 0, 0,
                 cv::INTER_AREA);
      ASSERT_TRUE(want.isContinuous());
      for (size_t i = 0; i < out.size_bytes(); ++i) {
        const int d = std::abs(int(out.data[i]) - int(want.data[i]));
        ASSERT_LE(d, 1) << w << "x" << h << " -> " << o[1] << "x" << o[0] << " byte " << i;
        n_diff += d;
      }
    }
  }
  RecordProperty("bytes_off_by_one", n_diff);
}

TEST(ResizedCrop, MirrorEqualsFlipAfterwards) {
  const Image src = make_random(60, 80, 5);
  const CropWindow wins[] = {{3, 4, 70, 50}, {0, 0, 80, 60}, {10, 10, 20, 20}, {5, 5, 30, 12}};
  const int outs[][2] = {{24, 24}, {20, 20}, {31, 17}, {12, 30}};
  Image a, b;
  for (const auto& w : wins) {
    for (const auto& o : outs) {
      resized_crop(src, w, o[0], o[1], a);
      horizontal_flip(a);
      resized_crop(src, w, o[0], o[1], b, /*mirror=*/true);
      ASSERT_EQ(a.height, b.height);
      ASSERT_EQ(0, std::memcmp(a.ptr(), b.ptr(), a.size_bytes()));
    }
  }
}

TEST(ResizedCrop, RejectsBadWindows) {
  const Image src = make_4x6();
  Image out;
  EXPECT_THROW(resized_crop(src, CropWindow{3, 0, 4, 2}, 2, 2, out), std::invalid_argument);
  EXPECT_THROW(resized_crop(src, CropWindow{0, -1, 2, 2}, 2, 2, out), std::invalid_argument);
  EXPECT_THROW(resized_crop(src, CropWindow{0, 0, 0, 2}, 2, 2, out), std::invalid_argument);
  EXPECT_THROW(resized_crop(src, CropWindow{0, 0, 2, 2}, 0, 2, out), std::invalid_argument);
}

TEST(ResizeShorter, OutputSizeRule) {
  Image out;
  // Landscape 375 x 500 (H x W): H -> 256, W = int(256 * 500 / 375) = int(341.33) = 341.
  resize_shorter(make_random(375, 500, 1), 256, out);
  EXPECT_EQ(out.height, 256);
  EXPECT_EQ(out.width, 341);
  // Portrait: the mirror.
  resize_shorter(make_random(500, 375, 2), 256, out);
  EXPECT_EQ(out.height, 341);
  EXPECT_EQ(out.width, 256);
  // Square.
  resize_shorter(make_random(300, 300, 3), 256, out);
  EXPECT_EQ(out.height, 256);
  EXPECT_EQ(out.width, 256);
  // Enlarging: 3 x 7 -> short 5, long int(5 * 7 / 3) = int(11.67) = 11.
  resize_shorter(make_random(3, 7, 4), 5, out);
  EXPECT_EQ(out.height, 5);
  EXPECT_EQ(out.width, 11);
  // A uniform image stays uniform whatever the resampling.
  Image flat;
  flat.resize(10, 13, 3);
  std::fill(flat.data.begin(), flat.data.end(), 77);
  resize_shorter(flat, 4, out);
  EXPECT_EQ(out.height, 4);
  EXPECT_EQ(out.width, 5);
  for (size_t i = 0; i < out.size_bytes(); ++i) ASSERT_EQ(out.data[i], 77);
  EXPECT_THROW(resize_shorter(flat, 0, out), std::invalid_argument);
}

TEST(ResizeShorterCenterCrop, SameBitsAsTheTwoSteps) {
  // Shrinking (the fused area path), enlarging (two steps), odd offsets, exact size.
  const int cases[][4] = {{375, 500, 256, 224}, {500, 375, 256, 224}, {333, 500, 256, 224},
                          {301, 299, 150, 101}, {100, 80, 160, 150}, {64, 64, 64, 63},
                          {64, 90, 64, 64}};
  Image resized, want, got;
  uint64_t seed = 40;
  for (const auto& c : cases) {
    const Image src = make_random(c[0], c[1], seed++);
    resize_shorter(src, c[2], resized);
    center_crop(resized, c[3], want);
    resize_shorter_center_crop(src, c[2], c[3], got);
    ASSERT_EQ(got.height, c[3]);
    ASSERT_EQ(got.width, c[3]);
    EXPECT_EQ(0, std::memcmp(want.ptr(), got.ptr(), want.size_bytes()))
        << c[0] << "x" << c[1] << " resize " << c[2] << " crop " << c[3];
  }
  const Image src = make_random(40, 50, 1);
  EXPECT_THROW(resize_shorter_center_crop(src, 30, 31, got), std::invalid_argument);
  EXPECT_THROW(resize_shorter_center_crop(src, 0, 1, got), std::invalid_argument);
}

TEST(RandomResizedCrop, MatchesTorchvisionTranscription) {
  const int sizes[][2] = {{375, 500}, {500, 375}, {1, 1}, {7, 3}, {1000, 10}, {10, 1000},
                          {224, 224}, {480, 640}};
  for (const auto& s : sizes) {
    Rng a(42), b(42);
    for (int k = 0; k < 1000; ++k) {
      const CropWindow got = random_resized_crop_window(s[0], s[1], a);
      const CropWindow want = reference_rrc(s[0], s[1], b);
      ASSERT_EQ(got, want) << s[0] << "x" << s[1] << " draw " << k;
    }
  }
}

TEST(RandomResizedCrop, WindowsInsideAndInRange) {
  const int H = 375, W = 500;
  Rng rng(7);
  int touches_left = 0, touches_right = 0, touches_top = 0, touches_bottom = 0;
  double area_sum = 0;
  for (int k = 0; k < 10000; ++k) {
    const CropWindow w = random_resized_crop_window(H, W, rng);
    ASSERT_GT(w.width, 0);
    ASSERT_GT(w.height, 0);
    ASSERT_GE(w.x, 0);
    ASSERT_GE(w.y, 0);
    ASSERT_LE(w.x + w.width, W);
    ASSERT_LE(w.y + w.height, H);
    // Rounding moves each side by at most half a pixel.
    const double area = double(H) * W;
    EXPECT_GE((w.width + 0.5) * (w.height + 0.5), 0.08 * area);
    EXPECT_LE((w.width - 0.5) * (w.height - 0.5), area);
    EXPECT_LE((w.width - 0.5) / (w.height + 0.5), 4.0 / 3);
    EXPECT_GE((w.width + 0.5) / (w.height - 0.5), 3.0 / 4);
    touches_left += w.x == 0;
    touches_right += w.x + w.width == W;
    touches_top += w.y == 0;
    touches_bottom += w.y + w.height == H;
    area_sum += double(w.width) * w.height / area;
  }
  EXPECT_GT(touches_left, 0);
  EXPECT_GT(touches_right, 0);
  EXPECT_GT(touches_top, 0);
  EXPECT_GT(touches_bottom, 0);
  // Accepted area fractions are uniform on [0.08, 1] minus those that do not fit (the
  // large ones with extreme ratios), so the mean lies a little under 0.54.
  const double mean_area = area_sum / 10000;
  EXPECT_GT(mean_area, 0.40);
  EXPECT_LT(mean_area, 0.56);
}

TEST(RandomResizedCrop, DeterministicPerSeed) {
  Rng a(123), b(123), c(124);
  int differ = 0;
  for (int k = 0; k < 100; ++k) {
    const CropWindow wa = random_resized_crop_window(375, 500, a);
    EXPECT_EQ(wa, random_resized_crop_window(375, 500, b));
    differ += !(wa == random_resized_crop_window(375, 500, c));
  }
  EXPECT_GT(differ, 90);
}

TEST(RandomResizedCrop, FallbackForExtremeShapes) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Rng rng(seed);
    // 10 x 1000 (H x W): no draw fits (h >= sqrt(800 / (4/3)) > 10), so the central crop
    // with the ratio clamped to 4/3: h = 10, w = round(13.33) = 13.
    EXPECT_EQ(random_resized_crop_window(10, 1000, rng), (CropWindow{493, 0, 13, 10}));
    // 1000 x 10: w = 10, h = round(10 / 0.75) = 13.
    EXPECT_EQ(random_resized_crop_window(1000, 10, rng), (CropWindow{0, 493, 10, 13}));
  }
  Rng rng(1);
  EXPECT_THROW(random_resized_crop_window(0, 10, rng), std::invalid_argument);
  RandomResizedCropParams bad;
  bad.scale_min = 0.9;
  bad.scale_max = 0.1;
  EXPECT_THROW(random_resized_crop_window(10, 10, rng, bad), std::invalid_argument);
}

TEST(RandomCrop, WindowsCoverAllOffsetsAndExactSizeDrawsNothing) {
  Rng rng(5);
  std::vector<int> seen_x(5 - 3 + 1), seen_y(4 - 3 + 1);
  for (int k = 0; k < 1000; ++k) {
    const CropWindow w = random_crop_window(4, 5, 3, rng);
    ASSERT_EQ(w.width, 3);
    ASSERT_EQ(w.height, 3);
    ASSERT_GE(w.x, 0);
    ASSERT_LE(w.x, 2);
    ASSERT_GE(w.y, 0);
    ASSERT_LE(w.y, 1);
    seen_x[w.x]++;
    seen_y[w.y]++;
  }
  for (int n : seen_x) EXPECT_GT(n, 250);
  for (int n : seen_y) EXPECT_GT(n, 400);
  Rng a(9), b(9);
  EXPECT_EQ(random_crop_window(3, 3, 3, a), (CropWindow{0, 0, 3, 3}));
  EXPECT_EQ(a.next_u64(), b.next_u64());  // torchvision draws nothing in that case

  const Image src = make_4x6();
  Image out;
  Rng c(11), d(11);
  random_crop(src, 3, c, out);
  const CropWindow w = random_crop_window(4, 6, 3, d);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 3; ++x) EXPECT_EQ(at(out, y, x, 0), px(y + w.y, x + w.x, 0));
  EXPECT_THROW(random_crop(src, 5, c, out), std::invalid_argument);
}

TEST(Normalize, HandComputedValues) {
  const Image src = make_4x6();
  std::vector<float> out(3 * 4 * 6);
  normalize_to_chw(src, out.data());
  const double mean[3] = {0.485, 0.456, 0.406};
  const double sd[3] = {0.229, 0.224, 0.225};
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 6; ++x) {
        const double want = (px(y, x, c) / 255.0 - mean[c]) / sd[c];
        EXPECT_NEAR(out[(c * 4 + y) * 6 + x], want, 1e-5);
      }
  // One value worked out by hand: pixel (3, 5) channel 2 is 60 + 10 + 100 = 170;
  // (170 / 255 - 0.406) / 0.225 = 1.158519.
  EXPECT_NEAR(out[(2 * 4 + 3) * 6 + 5], 1.158519, 1e-5);
}

TEST(Normalize, CustomStatisticsAndErrors) {
  const Image src = make_random(5, 7, 21);
  std::vector<float> out(3 * 5 * 7);
  normalize_to_chw(src, out.data(), {0.f, 0.f, 0.f}, {1.f, 1.f, 1.f});
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 35; ++i) EXPECT_NEAR(out[c * 35 + i], src.data[i * 3 + c] / 255.0, 1e-7);
  EXPECT_THROW(normalize_to_chw(src, out.data(), {0.f, 0.f, 0.f}, {1.f, 0.f, 1.f}),
               std::invalid_argument);
  Image gray;
  gray.resize(2, 2, 1);
  EXPECT_THROW(normalize_to_chw(gray, out.data()), std::invalid_argument);
}

TEST(Normalize, BatchFormIsIdentical) {
  const int n = 3, h = 9, w = 11;
  std::vector<Image> imgs;
  std::vector<uint8_t> nchw(static_cast<size_t>(n) * 3 * h * w);
  for (int s = 0; s < n; ++s) {
    imgs.push_back(make_random(h, w, 100 + s));
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          nchw[((s * 3 + c) * h + y) * w + x] = at(imgs.back(), y, x, c);
  }
  std::vector<float> batch(nchw.size()), single(nchw.size());
  normalize_batch_nchw(nchw.data(), n, h, w, batch.data());
  for (int s = 0; s < n; ++s) normalize_to_chw(imgs[s], single.data() + s * 3 * h * w);
  EXPECT_EQ(0, std::memcmp(batch.data(), single.data(), batch.size() * sizeof(float)));
  EXPECT_THROW(normalize_batch_nchw(nchw.data(), -1, h, w, batch.data()), std::invalid_argument);
}

// The vectorised table lookup (16 values at a time, AVX-512) against the formula in float,
// as torchvision computes it, value by value; on sizes that leave a scalar tail, and with
// the scalar path forced (the same bits on every CPU).
TEST(Normalize, EveryValueIsTheFormulaInFloat) {
  const std::array<float, 3> mean = {0.485f, 0.456f, 0.406f}, sd = {0.229f, 0.224f, 0.225f};
  for (const bool simd : {true, false}) {
    resample_use_simd(simd);
    for (const auto& [h, w] : std::vector<std::pair<int, int>>{{224, 224}, {17, 23}, {1, 5}, {37, 101}}) {
      const Image src = make_random(h, w, 7 + h);
      std::vector<float> out(3 * static_cast<size_t>(h) * w);
      normalize_to_chw(src, out.data(), mean, sd);
      const size_t plane = static_cast<size_t>(h) * w;
      for (int c = 0; c < 3; ++c)
        for (size_t i = 0; i < plane; ++i) {
          const float want = (static_cast<float>(src.data[i * 3 + c]) / 255.0f - mean[c]) / sd[c];
          ASSERT_EQ(out[c * plane + i], want) << (simd ? "simd " : "scalar ") << h << "x" << w << " c" << c << " i" << i;
        }
      // The batch form, on the same values laid out as one NCHW sample.
      std::vector<uint8_t> nchw(3 * plane);
      for (int c = 0; c < 3; ++c)
        for (size_t i = 0; i < plane; ++i) nchw[c * plane + i] = src.data[i * 3 + c];
      std::vector<float> batch(3 * plane);
      normalize_batch_nchw(nchw.data(), 1, h, w, batch.data(), mean, sd);
      ASSERT_EQ(0, std::memcmp(batch.data(), out.data(), batch.size() * sizeof(float)));
    }
  }
  resample_use_simd(true);
}

}  // namespace
}  // namespace pipebench
