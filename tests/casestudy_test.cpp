// Why this file exists: the case study's point is that three ways of dilating a mask cost
// very different amounts of time for the same result. These tests hold the "same result"
// half: every method against a naive 4-neighbour reference, on shapes with edges that
// trip up shifted loops (1 x N, N x 1, set pixels on borders), plus RandomMask's statistics
// and the YUV / Scale arithmetic against the formulas in double precision.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "transforms/casestudy.h"
#include "transforms/image.h"
#include "transforms/rng.h"

namespace pipebench {
namespace {

constexpr DilationMethod kMethods[] = {DilationMethod::kConvolution,
                                       DilationMethod::kBooleanShifts, DilationMethod::kOpenCV};

// out[y][x] = 1 when (y, x) or one of its 4 in-image neighbours is set.
std::vector<uint8_t> reference_dilate(const std::vector<uint8_t>& in, int h, int w) {
  std::vector<uint8_t> out(in.size(), 0);
  auto get = [&](int y, int x) { return y >= 0 && y < h && x >= 0 && x < w && in[y * w + x]; };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      out[y * w + x] = get(y, x) || get(y - 1, x) || get(y + 1, x) || get(y, x - 1) ||
                       get(y, x + 1);
  return out;
}

std::vector<uint8_t> random_bits(int h, int w, double p, uint64_t seed) {
  Rng rng(seed);
  std::vector<uint8_t> m(static_cast<size_t>(h) * w);
  for (auto& v : m) v = rng.bernoulli(p);
  return m;
}

std::vector<uint8_t> dilate(const std::vector<uint8_t>& in, int h, int w, DilationMethod m) {
  std::vector<uint8_t> out(in.size(), 0xAB);  // poison: every byte must be written
  dilate4(in.data(), h, w, m, out.data());
  return out;
}

TEST(Dilate4, AllMethodsMatchTheReference) {
  const int shapes[][2] = {{1, 1}, {1, 2}, {1, 17}, {17, 1}, {2, 2}, {3, 7},
                           {7, 3}, {17, 31}, {64, 64}, {256, 256}, {33, 100}};
  const double densities[] = {0.02, 0.25, 0.7};
  uint64_t seed = 1;
  for (const auto& s : shapes) {
    for (double p : densities) {
      const auto in = random_bits(s[0], s[1], p, seed++);
      const auto want = reference_dilate(in, s[0], s[1]);
      for (DilationMethod m : kMethods) {
        EXPECT_EQ(dilate(in, s[0], s[1], m), want)
            << dilation_method_name(m) << " " << s[0] << "x" << s[1] << " p=" << p;
      }
    }
  }
}

TEST(Dilate4, BorderPixels) {
  const int h = 6, w = 9;
  std::vector<uint8_t> in(h * w, 0);
  in[0] = 1;                    // top-left corner
  in[w - 1] = 1;                // top-right corner
  in[(h - 1) * w] = 1;          // bottom-left corner
  in[h * w - 1] = 1;            // bottom-right corner
  in[3 * w] = 1;                // left edge
  in[2 * w + w - 1] = 1;        // right edge
  in[4] = 1;                    // top edge
  in[(h - 1) * w + 5] = 1;      // bottom edge
  const auto want = reference_dilate(in, h, w);
  for (DilationMethod m : kMethods) EXPECT_EQ(dilate(in, h, w, m), want) << dilation_method_name(m);
  // 1 x N and N x 1 with both ends set.
  std::vector<uint8_t> row = {1, 0, 0, 0, 1};
  for (DilationMethod m : kMethods) {
    EXPECT_EQ(dilate(row, 1, 5, m), (std::vector<uint8_t>{1, 1, 0, 1, 1}));
    EXPECT_EQ(dilate(row, 5, 1, m), (std::vector<uint8_t>{1, 1, 0, 1, 1}));
  }
}

TEST(Dilate4, SinglePixelBecomesTheCross) {
  const int h = 5, w = 6;
  for (DilationMethod m : kMethods) {
    std::vector<uint8_t> in(h * w, 0);
    in[2 * w + 3] = 1;
    const auto out = dilate(in, h, w, m);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const bool on_cross =
            (y == 2 && std::abs(x - 3) <= 1) || (x == 3 && std::abs(y - 2) <= 1);
        EXPECT_EQ(out[y * w + x], on_cross ? 1 : 0)
            << dilation_method_name(m) << " " << y << "," << x;
      }
  }
}

TEST(Dilate4, EmptyAndFullMasks) {
  for (DilationMethod m : kMethods) {
    EXPECT_EQ(dilate(std::vector<uint8_t>(40, 0), 5, 8, m), std::vector<uint8_t>(40, 0));
    EXPECT_EQ(dilate(std::vector<uint8_t>(40, 1), 5, 8, m), std::vector<uint8_t>(40, 1));
  }
  std::vector<uint8_t> buf(4);
  EXPECT_THROW(dilate4(buf.data(), 0, 4, DilationMethod::kBooleanShifts, buf.data() + 1),
               std::invalid_argument);
  EXPECT_THROW(dilate4(buf.data(), 2, 2, DilationMethod::kOpenCV, buf.data()),
               std::invalid_argument);
}

TEST(Dilate4, MethodNames) {
  EXPECT_STREQ(dilation_method_name(DilationMethod::kConvolution), "conv");
  EXPECT_STREQ(dilation_method_name(DilationMethod::kBooleanShifts), "shifts");
  EXPECT_STREQ(dilation_method_name(DilationMethod::kOpenCV), "opencv");
}

Image nonzero_image(int h, int w, uint64_t seed) {
  Image img;
  img.resize(h, w, 3);
  Rng rng(seed);
  for (size_t i = 0; i < img.size_bytes(); ++i) img.data[i] = 1 + rng.next_u64() % 255;
  return img;
}

TEST(RandomMask, ZeroesExactlyTheDilatedMask) {
  const int h = 256, w = 256;
  const Image orig = nonzero_image(h, w, 3);
  Image img = orig;
  Rng rng(77);
  MaskScratch scratch;
  random_mask(img, 0.25, DilationMethod::kBooleanShifts, rng, scratch);
  const std::vector<uint8_t> mask(scratch.mask.begin(), scratch.mask.begin() + h * w);
  // The raw mask is Bernoulli(0.25).
  size_t set = 0;
  for (uint8_t v : mask) {
    ASSERT_LE(v, 1);
    set += v;
  }
  EXPECT_NEAR(double(set) / (h * w), 0.25, 0.01);
  const auto dilated = reference_dilate(mask, h, w);
  size_t zeroed = 0;
  for (int i = 0; i < h * w; ++i) {
    for (int c = 0; c < 3; ++c) {
      const uint8_t want = dilated[i] ? 0 : orig.data[i * 3 + c];
      ASSERT_EQ(img.data[i * 3 + c], want) << "pixel " << i << " channel " << c;
    }
    zeroed += dilated[i];
  }
  // An interior pixel survives when none of its 5 cross pixels is set: 0.75^5 = 0.237.
  EXPECT_NEAR(double(zeroed) / (h * w), 1 - std::pow(0.75, 5), 0.015);
}

TEST(RandomMask, SameSeedSameImageForEveryMethod) {
  const Image orig = nonzero_image(40, 50, 5);
  std::vector<Image> results;
  for (DilationMethod m : kMethods) {
    Image img = orig;
    Rng rng(2024);
    MaskScratch scratch;
    random_mask(img, 0.25, m, rng, scratch);
    results.push_back(img);
  }
  EXPECT_EQ(results[0].data, results[1].data);
  EXPECT_EQ(results[0].data, results[2].data);
  Image other = orig;
  Rng rng(2025);
  MaskScratch scratch;
  random_mask(other, 0.25, DilationMethod::kConvolution, rng, scratch);
  EXPECT_NE(other.data, results[0].data);
}

TEST(RandomMask, RatioExtremesAndErrors) {
  const Image orig = nonzero_image(13, 7, 9);  // 91 pixels: not a multiple of 4
  MaskScratch scratch;
  Rng rng(1);
  Image img = orig;
  random_mask(img, 0.0, DilationMethod::kConvolution, rng, scratch);
  EXPECT_EQ(img.data, orig.data);
  random_mask(img, 1.0, DilationMethod::kConvolution, rng, scratch);
  for (size_t i = 0; i < img.size_bytes(); ++i) ASSERT_EQ(img.data[i], 0);
  EXPECT_THROW(random_mask(img, -0.1, DilationMethod::kOpenCV, rng, scratch),
               std::invalid_argument);
  EXPECT_THROW(random_mask(img, 1.5, DilationMethod::kOpenCV, rng, scratch),
               std::invalid_argument);
}

TEST(ConvertColor, MatchesBt601Formula) {
  const int h = 17, w = 23;
  const Image img = nonzero_image(h, w, 11);
  std::vector<float> out(3 * h * w);
  rgb_to_yuv_chw(img, out.data());
  for (int i = 0; i < h * w; ++i) {
    const double r = img.data[i * 3], g = img.data[i * 3 + 1], b = img.data[i * 3 + 2];
    EXPECT_NEAR(out[i], 0.299 * r + 0.587 * g + 0.114 * b, 1e-3);
    EXPECT_NEAR(out[h * w + i], -0.16874 * r - 0.33126 * g + 0.5 * b + 128, 1e-3);
    EXPECT_NEAR(out[2 * h * w + i], 0.5 * r - 0.41869 * g - 0.08131 * b + 128, 1e-3);
  }
  // Grey stays on the neutral axis: Y = v, U = V = 128.
  Image grey;
  grey.resize(1, 1, 3);
  grey.data[0] = grey.data[1] = grey.data[2] = 200;
  float yuv[3];
  rgb_to_yuv_chw(grey, yuv);
  EXPECT_NEAR(yuv[0], 200, 1e-3);
  EXPECT_NEAR(yuv[1], 128, 1e-3);
  EXPECT_NEAR(yuv[2], 128, 1e-3);
  Image gray1;
  gray1.resize(2, 2, 1);
  EXPECT_THROW(rgb_to_yuv_chw(gray1, out.data()), std::invalid_argument);
}

TEST(Scale, DividesBy255) {
  std::vector<float> v = {0.f, 255.f, 127.5f, -51.f, 300.f};
  scale_unit(v.data(), v.size());
  EXPECT_FLOAT_EQ(v[0], 0.f);
  EXPECT_FLOAT_EQ(v[1], 1.f);
  EXPECT_FLOAT_EQ(v[2], 0.5f);
  EXPECT_FLOAT_EQ(v[3], -0.2f);
  EXPECT_NEAR(v[4], 300.0 / 255.0, 1e-6);
  scale_unit(nullptr, 0);  // nothing to do
}

}  // namespace
}  // namespace pipebench
