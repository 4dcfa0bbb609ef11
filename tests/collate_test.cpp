// Collate: samples into one batch in each dtype and layout, and the normalize a uint8
// batch gets after the copy. References are independent of collate.cpp: an
// element-by-element index formula, OpenCV's cv::split / cv::merge for the layout changes,
// and transforms/normalize.h's per-sample arithmetic for the normalize.
#include "pipeline/collate.h"

#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "transforms/normalize.h"

namespace pipebench {
namespace {

TEST(CollateChwF32, CopiesEachSampleToItsPlace) {
  const int n = 5, c = 3, h = 4, w = 7;
  const size_t floats = static_cast<size_t>(c) * h * w;
  std::vector<std::vector<float>> samples(n, std::vector<float>(floats));
  for (int i = 0; i < n; ++i) {
    for (size_t k = 0; k < floats; ++k) samples[i][k] = static_cast<float>(i * 1000 + k) * 0.5f;
  }
  std::vector<const float*> ptrs;
  for (auto& s : samples) ptrs.push_back(s.data());
  std::vector<float> out(n * floats, -1.0f);
  collate_chw_f32(ptrs, floats, out.data());
  for (int i = 0; i < n; ++i) {
    for (int ch = 0; ch < c; ++ch) {
      for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
          const size_t nchw = ((static_cast<size_t>(i) * c + ch) * h + y) * w + x;
          const size_t chw = (static_cast<size_t>(ch) * h + y) * w + x;
          ASSERT_EQ(out[nchw], static_cast<float>(i * 1000 + chw) * 0.5f);
        }
      }
    }
  }
}

TEST(CollateChwF32, RejectsNullSample) {
  std::vector<float> a(12), out(24);
  std::vector<const float*> ptrs = {a.data(), nullptr};
  try {
    collate_chw_f32(ptrs, 12, out.data());
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sample 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(collate_chw_f32(ptrs, 12, nullptr), std::invalid_argument);
}

Image make_image(int h, int w, int c, int seed) {
  Image img;
  img.resize(h, w, c);
  for (size_t k = 0; k < img.size_bytes(); ++k) img.data[k] = static_cast<uint8_t>((k * 31 + seed * 7) & 0xFF);
  return img;
}

TEST(CollateHwcU8ToNchw, MatchesOpenCvSplit) {
  const int n = 3, h = 5, w = 9, c = 3;
  std::vector<Image> images;
  for (int i = 0; i < n; ++i) images.push_back(make_image(h, w, c, i + 1));
  std::vector<const Image*> ptrs;
  for (auto& im : images) ptrs.push_back(&im);
  std::vector<uint8_t> out(static_cast<size_t>(n) * c * h * w);
  collate_hwc_u8_to_nchw(ptrs, out.data());
  for (int i = 0; i < n; ++i) {
    cv::Mat hwc(h, w, CV_8UC3, images[i].ptr());
    std::vector<cv::Mat> planes;
    cv::split(hwc, planes);
    for (int ch = 0; ch < c; ++ch) {
      const uint8_t* got = out.data() + (static_cast<size_t>(i) * c + ch) * h * w;
      ASSERT_TRUE(planes[ch].isContinuous());
      EXPECT_EQ(std::memcmp(got, planes[ch].data, static_cast<size_t>(h) * w), 0)
          << "image " << i << " channel " << ch;
    }
  }
}

TEST(CollateHwcU8ToNchw, GrayIsACopy) {
  Image a = make_image(4, 6, 1, 3);
  std::vector<const Image*> ptrs = {&a};
  std::vector<uint8_t> out(24);
  collate_hwc_u8_to_nchw(ptrs, out.data());
  EXPECT_EQ(std::memcmp(out.data(), a.ptr(), 24), 0);
}

TEST(CollateHwcU8ToNchw, RejectsMismatchedShapes) {
  Image a = make_image(4, 6, 3, 1), b = make_image(4, 5, 3, 2);
  std::vector<const Image*> ptrs = {&a, &b};
  std::vector<uint8_t> out(2 * 4 * 6 * 3);
  try {
    collate_hwc_u8_to_nchw(ptrs, out.data());
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("image 1"), std::string::npos) << e.what();
  }
}

TEST(CollateHwcU8ToNhwc, IsTheImagesBackToBack) {
  const int n = 3, h = 5, w = 9, c = 3;
  std::vector<Image> images;
  for (int i = 0; i < n; ++i) images.push_back(make_image(h, w, c, i + 4));
  std::vector<const Image*> ptrs;
  for (auto& im : images) ptrs.push_back(&im);
  std::vector<uint8_t> nhwc(static_cast<size_t>(n) * c * h * w), nchw(nhwc.size());
  collate_hwc_u8_to_nhwc(ptrs, nhwc.data());
  collate_hwc_u8_to_nchw(ptrs, nchw.data());
  for (int i = 0; i < n; ++i)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int ch = 0; ch < c; ++ch) {
          const uint8_t want = images[i].row(y)[x * c + ch];
          ASSERT_EQ(nhwc[((static_cast<size_t>(i) * h + y) * w + x) * c + ch], want);
          ASSERT_EQ(nchw[((static_cast<size_t>(i) * c + ch) * h + y) * w + x], want);  // the transpose
        }
  Image bad = make_image(h, w + 1, c, 9);
  ptrs.push_back(&bad);
  EXPECT_THROW(collate_hwc_u8_to_nhwc(ptrs, nhwc.data()), std::invalid_argument);
}

TEST(CollateImageU8, OneSampleInEitherLayout) {
  const Image img = make_image(6, 7, 3, 2);
  std::vector<uint8_t> hwc(6 * 7 * 3), chw(hwc.size());
  collate_image_u8(img, BatchLayout::kNHWC, hwc.data());
  collate_image_u8(img, BatchLayout::kNCHW, chw.data());
  EXPECT_EQ(std::memcmp(hwc.data(), img.ptr(), hwc.size()), 0);
  cv::Mat m(6, 7, CV_8UC3, const_cast<uint8_t*>(img.ptr()));
  std::vector<cv::Mat> planes;
  cv::split(m, planes);
  for (int ch = 0; ch < 3; ++ch)
    EXPECT_EQ(std::memcmp(chw.data() + ch * 42, planes[ch].data, 42), 0) << "channel " << ch;
  EXPECT_THROW(collate_image_u8(img, BatchLayout::kNHWC, nullptr), std::invalid_argument);
  EXPECT_THROW(collate_image_u8(Image{}, BatchLayout::kNHWC, hwc.data()), std::invalid_argument);
}

TEST(CollateChwF32ToHwc, MatchesOpenCvMerge) {
  const int c = 3, h = 4, w = 5;
  std::vector<float> chw(c * h * w);
  for (size_t k = 0; k < chw.size(); ++k) chw[k] = static_cast<float>(k) * 0.25f - 3.0f;
  std::vector<float> hwc(chw.size(), -99.0f);
  collate_chw_f32_to_hwc(chw.data(), c, h, w, hwc.data());
  std::vector<cv::Mat> planes;
  for (int ch = 0; ch < c; ++ch) planes.emplace_back(h, w, CV_32FC1, chw.data() + ch * h * w);
  cv::Mat merged;
  cv::merge(planes, merged);
  ASSERT_TRUE(merged.isContinuous());
  EXPECT_EQ(std::memcmp(hwc.data(), merged.data, hwc.size() * 4), 0);
  EXPECT_THROW(collate_chw_f32_to_hwc(chw.data(), 0, h, w, hwc.data()), std::invalid_argument);
}

// The accelerator-side normalize's CPU reference gives the per-sample normalize's bits
// (normalize_batch_nchw: the same table as the float32 pipeline's normalize), from either
// layout, and the raw values without a normalize.
TEST(NormalizeU8Batch, EqualsThePerSampleNormalizeFromEitherLayout) {
  const int n = 2, c = 3, h = 16, w = 16;  // 512 values per channel: every q at least once
  std::vector<Image> images;
  for (int i = 0; i < n; ++i) images.push_back(make_image(h, w, c, i + 1));
  std::vector<const Image*> ptrs = {&images[0], &images[1]};
  std::vector<uint8_t> nchw(static_cast<size_t>(n) * c * h * w), nhwc(nchw.size());
  collate_hwc_u8_to_nchw(ptrs, nchw.data());
  collate_hwc_u8_to_nhwc(ptrs, nhwc.data());
  const DeferredNormalize norm{kImageNetMean, kImageNetStd};
  std::vector<float> want(nchw.size()), a(nchw.size()), b(nchw.size()), raw(nchw.size());
  normalize_batch_nchw(nchw.data(), n, h, w, want.data(), kImageNetMean, kImageNetStd);
  normalize_u8_batch(nchw.data(), BatchLayout::kNCHW, n, c, h, w, &norm, a.data());
  normalize_u8_batch(nhwc.data(), BatchLayout::kNHWC, n, c, h, w, &norm, b.data());
  EXPECT_EQ(std::memcmp(a.data(), want.data(), a.size() * 4), 0);
  EXPECT_EQ(std::memcmp(b.data(), want.data(), b.size() * 4), 0);
  // And the formula itself, in double, within float rounding.
  for (size_t k = 0; k < a.size(); ++k) {
    const size_t ch = k / (h * w) % c;
    const double f = (nchw[k] / 255.0 - kImageNetMean[ch]) / kImageNetStd[ch];
    ASSERT_NEAR(a[k], f, 1e-6) << k;
  }
  normalize_u8_batch(nhwc.data(), BatchLayout::kNHWC, n, c, h, w, nullptr, raw.data());
  for (size_t k = 0; k < raw.size(); ++k) ASSERT_EQ(raw[k], static_cast<float>(nchw[k])) << k;
}

TEST(NormalizeU8Batch, RejectsBadArguments) {
  std::vector<uint8_t> in(4 * 2 * 2);
  std::vector<float> out(in.size());
  const DeferredNormalize norm{kImageNetMean, kImageNetStd};
  EXPECT_THROW(normalize_u8_batch(in.data(), BatchLayout::kNCHW, 1, 4, 2, 2, &norm, out.data()),
               std::invalid_argument);  // normalize needs 3 channels
  EXPECT_NO_THROW(normalize_u8_batch(in.data(), BatchLayout::kNCHW, 1, 4, 2, 2, nullptr, out.data()));
  EXPECT_THROW(normalize_u8_batch(nullptr, BatchLayout::kNCHW, 1, 3, 2, 2, &norm, out.data()),
               std::invalid_argument);
  EXPECT_THROW(normalize_u8_batch(in.data(), BatchLayout::kNCHW, 1, 3, 0, 2, &norm, out.data()),
               std::invalid_argument);
  const DeferredNormalize zero{kImageNetMean, {1.0f, 0.0f, 1.0f}};
  EXPECT_THROW(normalize_u8_batch(in.data(), BatchLayout::kNCHW, 1, 3, 2, 2, &zero, out.data()),
               std::invalid_argument);
}

// The CPU reference of the device's finish: a flag mirrors its sample (and only it), a
// mixup draw mixes the pairs with uint8 rounding, a cutmix draw swaps the box; bad
// arguments throw.
TEST(FinishU8Batch, FlipsThenMixesInPlace) {
  const int n = 2, h = 2, w = 3, c = 3;
  std::vector<uint8_t> x(static_cast<size_t>(n) * h * w * c);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<uint8_t>(k);
  std::vector<uint8_t> y = x;
  const uint8_t flips[2] = {1, 0};
  finish_u8_batch(y.data(), n, c, h, w, flips, {});
  for (int row = 0; row < h; ++row)
    for (int col = 0; col < w; ++col)
      for (int ch = 0; ch < c; ++ch) {
        const size_t at = (static_cast<size_t>(row) * w + col) * c + ch;
        const size_t mirrored = (static_cast<size_t>(row) * w + (w - 1 - col)) * c + ch;
        EXPECT_EQ(y[at], x[mirrored]);  // sample 0 mirrored
        EXPECT_EQ(y[h * w * c + at], x[h * w * c + at]);  // sample 1 as it was
      }
  MixDraw mix;
  mix.apply = true;
  mix.lam = 0.25;
  std::vector<uint8_t> m = x;
  finish_u8_batch(m.data(), n, c, h, w, nullptr, std::vector<MixDraw>{mix});
  std::vector<uint8_t> want = x;
  mix_batch_u8(want.data(), n, static_cast<size_t>(h) * w * c, 0.25f);
  EXPECT_EQ(m, want);
  EXPECT_NE(m, x);
  MixDraw cut;
  cut.apply = cut.cut = true;
  cut.box = CropWindow{1, 0, 2, 2};
  std::vector<uint8_t> k = x;
  finish_u8_batch(k.data(), n, c, h, w, nullptr, std::vector<MixDraw>{cut});
  EXPECT_EQ(k[0], x[0]);                  // outside the box
  EXPECT_EQ(k[3], x[h * w * c + 3]);      // inside: the partner's pixel
  MixDraw off;  // the prob coin came up tails: nothing
  std::vector<uint8_t> same = x;
  finish_u8_batch(same.data(), n, c, h, w, nullptr, std::vector<MixDraw>{off});
  EXPECT_EQ(same, x);
  EXPECT_THROW(finish_u8_batch(nullptr, n, c, h, w, flips, {}), std::invalid_argument);
  EXPECT_THROW(finish_u8_batch(y.data(), n, c, 0, w, flips, {}), std::invalid_argument);
  cut.box = CropWindow{2, 0, 2, 2};  // outside the 3-pixel-wide image
  EXPECT_THROW(finish_u8_batch(k.data(), n, c, h, w, nullptr, std::vector<MixDraw>{cut}), std::invalid_argument);
}

}  // namespace
}  // namespace pipebench

