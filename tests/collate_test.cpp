// Collate: samples into one NCHW batch. References are independent of collate.cpp: an
// element-by-element index formula and OpenCV's cv::split for the HWC -> CHW change.
#include "pipeline/collate.h"

#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include <cstring>
#include <stdexcept>
#include <vector>

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

}  // namespace
}  // namespace pipebench
