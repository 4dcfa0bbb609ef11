// Why this file exists: the photometric kernels must give torchvision 0.14's pixels
// (functional_tensor.py on uint8 tensors), and the operators must draw and apply them as
// torchvision's transform classes do. References here are naive per-element loops written
// from torchvision's formulas (float32, the same operation order, torch's masks, fmod and
// floor spelled out), never the kernels' own vectorised code; blur's reference convolves in
// double with an explicit reflect padding.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/test_data.h"
#include "transforms/photometric.h"
#include "transforms/registry.h"
#include "transforms/spec.h"

namespace pipebench {
namespace {

using testing::make_op;
using testing::run_op;

// --- test images ---------------------------------------------------------------------------

// A diagonal gradient per channel plus noise, with some gray pixels (r == g == b), ties
// between two channels, and pure 0 / 255 values, so every branch of hue and the clamps run.
Image test_image(int h, int w, uint32_t seed = 7) {
  Image img;
  img.resize(h, w, 3);
  uint32_t s = seed;
  auto noise = [&s] {
    s = s * 1664525u + 1013904223u;
    return static_cast<int>(s >> 24);  // 0..255
  };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = img.row(y) + 3 * x;
      for (int c = 0; c < 3; ++c) p[c] = static_cast<uint8_t>((x * 5 + y * 3 + c * 70 + noise() / 8) & 255);
      switch ((x + 2 * y) % 11) {
        case 0: p[1] = p[2] = p[0]; break;  // gray
        case 1: p[1] = p[0]; break;         // max may tie r and g
        case 2: p[2] = p[1]; break;
        case 3: p[0] = 255; p[1] = 0; break;
        default: break;
      }
    }
  return img;
}

Image constant_image(int h, int w, uint8_t r, uint8_t g, uint8_t b) {
  Image img;
  img.resize(h, w, 3);
  for (size_t i = 0; i < img.size_bytes(); i += 3) {
    img.data[i] = r;
    img.data[i + 1] = g;
    img.data[i + 2] = b;
  }
  return img;
}

// Every (r, g, b) on a grid of step 3 (0, 3, ..., 255), one pixel each.
Image color_cube() {
  Image img;
  img.resize(86 * 86, 86, 3);
  size_t i = 0;
  for (int r = 0; r < 256; r += 3)
    for (int g = 0; g < 256; g += 3)
      for (int b = 0; b < 256; b += 3) {
        img.data[i++] = static_cast<uint8_t>(r);
        img.data[i++] = static_cast<uint8_t>(g);
        img.data[i++] = static_cast<uint8_t>(b);
      }
  return img;
}

int max_abs_diff(const Image& a, const Image& b) {
  EXPECT_EQ(a.height, b.height);
  EXPECT_EQ(a.width, b.width);
  int d = 0;
  for (size_t i = 0; i < a.size_bytes(); ++i) d = std::max(d, std::abs(int{a.data[i]} - int{b.data[i]}));
  return d;
}

::testing::AssertionResult same_pixels(const Image& got, const Image& want) {
  if (got.height != want.height || got.width != want.width || got.channels != want.channels)
    return ::testing::AssertionFailure() << "shape differs";
  for (size_t i = 0; i < got.size_bytes(); ++i)
    if (got.data[i] != want.data[i]) {
      const size_t px = i / 3;
      return ::testing::AssertionFailure()
             << "pixel (y " << px / got.width << ", x " << px % got.width << ", c " << i % 3
             << "): got " << int{got.data[i]} << ", want " << int{want.data[i]};
    }
  return ::testing::AssertionSuccess();
}

// --- references (torchvision functional_tensor.py, element by element) ----------------------

// .clamp(0, 255).to(torch.uint8)
uint8_t clamp_to_u8(float v) {
  if (v < 0.0f) v = 0.0f;
  if (v > 255.0f) v = 255.0f;
  return static_cast<uint8_t>(v);
}

// _blend(img1, img2, ratio): ratio * img1 + (1.0 - ratio) * img2, the Python float scalars
// rounded to float32 by torch, 1.0 - ratio computed in double first.
uint8_t ref_blend(float x1, float x2, double ratio) {
  const float a = static_cast<float>(ratio) * x1;
  const float b = static_cast<float>(1.0 - ratio) * x2;
  return clamp_to_u8(a + b);
}

// rgb_to_grayscale: (0.2989 * r + 0.587 * g + 0.114 * b).to(uint8)
std::vector<uint8_t> ref_gray(const Image& img) {
  std::vector<uint8_t> g(static_cast<size_t>(img.height) * img.width);
  for (size_t i = 0; i < g.size(); ++i) {
    const float r = img.data[3 * i], gg = img.data[3 * i + 1], b = img.data[3 * i + 2];
    const float t1 = static_cast<float>(0.2989) * r;
    const float t2 = static_cast<float>(0.587) * gg;
    const float t3 = static_cast<float>(0.114) * b;
    g[i] = static_cast<uint8_t>((t1 + t2) + t3);
  }
  return g;
}

Image ref_brightness(Image img, double f) {
  for (auto& v : img.data) v = ref_blend(v, 0.0f, f);
  return img;
}

Image ref_contrast(Image img, double f) {
  const auto g = ref_gray(img);
  double sum = 0;
  for (uint8_t v : g) sum += v;
  // torch.mean = sum(float32) / numel; the sum of < 2^24 integers is exact in float32.
  const float mean = static_cast<float>(sum) / static_cast<float>(g.size());
  for (size_t i = 0; i < img.size_bytes(); ++i) img.data[i] = ref_blend(img.data[i], mean, f);
  return img;
}

Image ref_saturation(Image img, double f) {
  const auto g = ref_gray(img);
  for (size_t i = 0; i < img.size_bytes(); ++i) img.data[i] = ref_blend(img.data[i], g[i / 3], f);
  return img;
}

// adjust_hue: / 255.0, _rgb2hsv, (h + hue) % 1.0, _hsv2rgb, * 255.0, .to(uint8); torch's
// masks are bools multiplied in as 0.0 / 1.0 and summed, as written there.
Image ref_hue(Image img, double hue_factor) {
  const float hue = static_cast<float>(hue_factor);
  for (size_t i = 0; i < img.size_bytes(); i += 3) {
    const float r = static_cast<float>(img.data[i]) / 255.0f;
    const float g = static_cast<float>(img.data[i + 1]) / 255.0f;
    const float b = static_cast<float>(img.data[i + 2]) / 255.0f;
    const float maxc = std::max({r, g, b}), minc = std::min({r, g, b});
    const bool eqc = maxc == minc;
    const float cr = maxc - minc;
    const float s = cr / (eqc ? 1.0f : maxc);
    const float cr_divisor = eqc ? 1.0f : cr;
    const float rc = (maxc - r) / cr_divisor, gc = (maxc - g) / cr_divisor, bc = (maxc - b) / cr_divisor;
    const float hr = static_cast<float>(maxc == r) * (bc - gc);
    const float hg = static_cast<float>(maxc == g && maxc != r) * ((2.0f + rc) - bc);
    const float hb = static_cast<float>(maxc != g && maxc != r) * ((4.0f + gc) - rc);
    float h = (hr + hg) + hb;
    h = std::fmod(h / 6.0f + 1.0f, 1.0f);
    // torch.remainder(a, b) = fmod(a, b), plus b when the signs differ.
    float hh = std::fmod(h + hue, 1.0f);
    if (hh != 0.0f && hh < 0.0f) hh += 1.0f;
    // _hsv2rgb
    const float fi = std::floor(hh * 6.0f);
    const float f = hh * 6.0f - fi;
    int sector = static_cast<int>(fi) % 6;
    const float v = maxc;
    const float p = std::clamp(v * (1.0f - s), 0.0f, 1.0f);
    const float q = std::clamp(v * (1.0f - s * f), 0.0f, 1.0f);
    const float t = std::clamp(v * (1.0f - s * (1.0f - f)), 0.0f, 1.0f);
    const float a1[6] = {v, q, p, p, t, v}, a2[6] = {t, v, v, q, p, p}, a3[6] = {p, p, t, v, v, q};
    float out[3] = {0, 0, 0};
    for (int k = 0; k < 6; ++k) {  // einsum with the one-hot mask
      const float m = k == sector ? 1.0f : 0.0f;
      out[0] += m * a1[k];
      out[1] += m * a2[k];
      out[2] += m * a3[k];
    }
    for (int c = 0; c < 3; ++c) img.data[i + c] = static_cast<uint8_t>(out[c] * 255.0f);
  }
  return img;
}

Image ref_autocontrast(Image img) {
  for (int c = 0; c < 3; ++c) {
    float lo = 255, hi = 0;
    for (size_t i = c; i < img.size_bytes(); i += 3) {
      lo = std::min(lo, static_cast<float>(img.data[i]));
      hi = std::max(hi, static_cast<float>(img.data[i]));
    }
    // scale = 255.0 / (max - min): Tensor.__rdiv__ is reciprocal() * 255.0.
    float scale = (1.0f / (hi - lo)) * 255.0f;
    if (!std::isfinite(scale)) lo = 0, scale = 1;
    for (size_t i = c; i < img.size_bytes(); i += 3)
      img.data[i] = clamp_to_u8((static_cast<float>(img.data[i]) - lo) * scale);
  }
  return img;
}

Image ref_equalize(Image img) {
  for (int c = 0; c < 3; ++c) {
    std::vector<int64_t> hist(256, 0);
    for (size_t i = c; i < img.size_bytes(); i += 3) ++hist[img.data[i]];
    std::vector<int64_t> nonzero;
    for (int64_t h : hist)
      if (h != 0) nonzero.push_back(h);
    int64_t step = 0;
    for (size_t k = 0; k + 1 < nonzero.size(); ++k) step += nonzero[k];
    step /= 255;
    if (step == 0) continue;
    std::vector<int64_t> lut(256);
    int64_t cum = 0;
    for (int v = 0; v < 256; ++v) {
      cum += hist[v];
      lut[v] = (cum + step / 2) / step;
    }
    // pad([1, 0])[:-1]: shift right by one, 0 first; then clamp(0, 255).
    std::vector<int64_t> shifted(256);
    shifted[0] = 0;
    for (int v = 1; v < 256; ++v) shifted[v] = std::min<int64_t>(255, std::max<int64_t>(0, lut[v - 1]));
    for (size_t i = c; i < img.size_bytes(); i += 3) img.data[i] = static_cast<uint8_t>(shifted[img.data[i]]);
  }
  return img;
}

Image ref_posterize(Image img, int bits) {
  const int mask = -static_cast<int>(std::pow(2, 8 - bits));
  for (auto& v : img.data) v = static_cast<uint8_t>(v & mask);
  return img;
}

Image ref_solarize(Image img, double threshold) {
  for (auto& v : img.data)
    if (static_cast<float>(v) >= static_cast<float>(threshold)) v = static_cast<uint8_t>(255 - v);
  return img;
}

// _blurred_degenerate_image: conv2d with [[1,1,1],[1,5,1],[1,1,1]] / 13 (float32 weights),
// rounded, inside the original border; then _blend(img, blurred, factor) everywhere.
Image ref_sharpness(Image img, double factor) {
  if (img.height <= 2 || img.width <= 2) return img;
  const float w_side = 1.0f / 13.0f, w_mid = 5.0f / 13.0f;
  Image blurred = img;
  for (int y = 1; y < img.height - 1; ++y)
    for (int x = 1; x < img.width - 1; ++x)
      for (int c = 0; c < 3; ++c) {
        float acc = 0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx)
            acc += (dy == 0 && dx == 0 ? w_mid : w_side) * img.row(y + dy)[3 * (x + dx) + c];
        blurred.row(y)[3 * x + c] = static_cast<uint8_t>(std::nearbyint(acc));
      }
  for (size_t i = 0; i < img.size_bytes(); ++i) img.data[i] = ref_blend(img.data[i], blurred.data[i], factor);
  return img;
}

// gaussian_blur: the 2-D kernel (outer product of torch's float32 1-D kernels), reflect
// padding, convolution in double, round half to even.
Image ref_gaussian_blur(const Image& img, int k, float sigma) {
  std::vector<float> k1(k);
  float sum = 0;
  for (int i = 0; i < k; ++i) {
    const float x = (-(k - 1) * 0.5f + i) / sigma;
    k1[i] = std::exp(-0.5f * (x * x));
    sum += k1[i];
  }
  for (auto& v : k1) v /= sum;
  auto reflect = [](int i, int n) { return i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i; };
  Image out = img;
  const int r = k / 2;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x)
      for (int c = 0; c < 3; ++c) {
        double acc = 0;
        for (int dy = -r; dy <= r; ++dy)
          for (int dx = -r; dx <= r; ++dx)
            acc += static_cast<double>(k1[dy + r] * k1[dx + r]) *
                   img.row(reflect(y + dy, img.height))[3 * reflect(x + dx, img.width) + c];
        out.row(y)[3 * x + c] = static_cast<uint8_t>(std::nearbyint(acc));
      }
  return out;
}

template <typename Kernel>
Image applied(Image img, Kernel kernel) {
  kernel(img);
  return img;
}

// --- kernels -------------------------------------------------------------------------------

TEST(Photometric, GrayscaleTruncatesTheWeightedSumIntoAllChannels) {
  for (const Image& in : {test_image(37, 53), color_cube()}) {
    const Image got = applied(in, [](Image& i) { rgb_to_grayscale(i); });
    const auto g = ref_gray(in);
    Image want = in;
    for (size_t i = 0; i < want.size_bytes(); ++i) want.data[i] = g[i / 3];
    EXPECT_TRUE(same_pixels(got, want));
  }
}

TEST(Photometric, BrightnessContrastSaturationAreExactBlends) {
  const Image in = test_image(37, 53);
  // 1.3f and 0.37f are not exact decimals: 1 - factor in double matters.
  // 3e6 takes the kernels' path for huge factors (clamp before truncating).
  for (double f : {0.0, 0.37, 1.0, 1.3, 2.5, 3e6}) {
    const float ff = static_cast<float>(f);
    EXPECT_TRUE(same_pixels(applied(in, [ff](Image& i) { adjust_brightness(i, ff); }), ref_brightness(in, ff)))
        << "brightness " << f;
    EXPECT_TRUE(same_pixels(applied(in, [ff](Image& i) { adjust_contrast(i, ff); }), ref_contrast(in, ff)))
        << "contrast " << f;
    EXPECT_TRUE(same_pixels(applied(in, [ff](Image& i) { adjust_saturation(i, ff); }), ref_saturation(in, ff)))
        << "saturation " << f;
  }
  // Factors that are not float32 values, as AutoAugment's 1.0 + magnitude (a float32
  // magnitude plus 1.0 in double): 1 - ratio must come from the double.
  const Image cube = color_cube();
  for (double f : {0.6, 1.45, 1.0 + double{0.3f}, 1.0 + double{0.7f}, 1.0 - double{0.1f}}) {
    EXPECT_TRUE(same_pixels(applied(cube, [f](Image& i) { adjust_saturation(i, f); }), ref_saturation(cube, f)))
        << "saturation " << f;
    EXPECT_TRUE(same_pixels(applied(cube, [f](Image& i) { adjust_contrast(i, f); }), ref_contrast(cube, f)))
        << "contrast " << f;
    Image scratch;
    EXPECT_TRUE(same_pixels(applied(cube, [&](Image& i) { adjust_sharpness(i, f, scratch); }), ref_sharpness(cube, f)))
        << "sharpness " << f;
  }
}

TEST(Photometric, BlendFactorsZeroAndOne) {
  const Image in = test_image(20, 30);
  EXPECT_TRUE(same_pixels(applied(in, [](Image& i) { adjust_brightness(i, 1.0f); }), in));
  EXPECT_TRUE(same_pixels(applied(in, [](Image& i) { adjust_saturation(i, 1.0f); }), in));
  EXPECT_TRUE(same_pixels(applied(in, [](Image& i) { adjust_contrast(i, 1.0f); }), in));
  const Image black = applied(in, [](Image& i) { adjust_brightness(i, 0.0f); });
  for (uint8_t v : black.data) ASSERT_EQ(v, 0);
  // Saturation 0 is the grayscale image; contrast 0 is the truncated mean gray everywhere.
  EXPECT_TRUE(same_pixels(applied(in, [](Image& i) { adjust_saturation(i, 0.0f); }),
                          applied(in, [](Image& i) { rgb_to_grayscale(i); })));
  const Image flat = applied(in, [](Image& i) { adjust_contrast(i, 0.0f); });
  for (uint8_t v : flat.data) ASSERT_EQ(v, flat.data[0]);
}

// Hue is exact too: every step is an IEEE float32 operation (division, min / max, fmod and
// floor of values where they are exact), in torchvision's order; the kernel computes only
// the quotients its case needs, the reference all of them with torch's masks.
TEST(Photometric, HueMatchesTheHsvRoundTrip) {
  const Image cube = color_cube();
  const Image noisy = test_image(37, 53);
  for (float hue : {0.0f, 0.1f, -0.27f, 0.5f, -0.5f, 0.33f}) {
    EXPECT_TRUE(same_pixels(applied(cube, [hue](Image& i) { adjust_hue(i, hue); }), ref_hue(cube, hue)))
        << "hue " << hue;
    EXPECT_TRUE(same_pixels(applied(noisy, [hue](Image& i) { adjust_hue(i, hue); }), ref_hue(noisy, hue)))
        << "hue " << hue;
  }
}

TEST(Photometric, AutocontrastStretchesEachChannel) {
  const Image in = test_image(37, 53);
  // Narrow the range first so the stretch does something.
  Image narrow = in;
  for (auto& v : narrow.data) v = static_cast<uint8_t>(40 + v / 3);
  EXPECT_TRUE(same_pixels(applied(narrow, [](Image& i) { autocontrast(i); }), ref_autocontrast(narrow)));
  EXPECT_TRUE(same_pixels(applied(in, [](Image& i) { autocontrast(i); }), ref_autocontrast(in)));
  // Every range width: 255 / d and torch's (1 / d) * 255 differ in float32 for some d
  // (7, 61, ...), which moves the top value between 254 and 255.
  for (int d = 1; d < 256; ++d) {
    Image ramp;
    ramp.resize(1, d + 1, 3);
    for (int k = 0; k <= d; ++k)
      for (int c = 0; c < 3; ++c) ramp.row(0)[3 * k + c] = static_cast<uint8_t>(c * (255 - d) / 2 + k);
    ASSERT_TRUE(same_pixels(applied(ramp, [](Image& i) { autocontrast(i); }), ref_autocontrast(ramp))) << d;
  }
  // A constant channel (here all three) is left as it is.
  const Image flat = constant_image(9, 11, 17, 200, 0);
  EXPECT_TRUE(same_pixels(applied(flat, [](Image& i) { autocontrast(i); }), flat));
}

TEST(Photometric, EqualizeFollowsTorchvisionsLookupTable) {
  const Image in = test_image(37, 53);
  EXPECT_TRUE(same_pixels(applied(in, [](Image& i) { equalize(i); }), ref_equalize(in)));
  Image narrow = in;
  for (auto& v : narrow.data) v = static_cast<uint8_t>(100 + v / 8);
  EXPECT_TRUE(same_pixels(applied(narrow, [](Image& i) { equalize(i); }), ref_equalize(narrow)));
  const Image big = test_image(224, 224, 3);
  EXPECT_TRUE(same_pixels(applied(big, [](Image& i) { equalize(i); }), ref_equalize(big)));
  // A constant image has step 0: unchanged. So has an image of two values, one pixel of
  // one of them (step = 1 // 255 = 0).
  const Image flat = constant_image(9, 11, 17, 200, 0);
  EXPECT_TRUE(same_pixels(applied(flat, [](Image& i) { equalize(i); }), flat));
  Image two = flat;
  two.data[0] = 90;
  EXPECT_TRUE(same_pixels(applied(two, [](Image& i) { equalize(i); }), two));
}

// Brightness, contrast, autocontrast and equalize may go through 256-entry tables built
// from the same float32 expression (photometric.cpp), looked up 64 or 192 bytes at a time:
// every image length modulo those, and factors on both sides of the huge-factor threshold,
// must still give the references' pixels.
TEST(Photometric, TableKernelsMatchTheReferencesAtEveryLength) {
  for (int w = 1; w <= 70; ++w) {
    const Image in = test_image(3, w, static_cast<uint32_t>(w));
    Image narrow = in;
    for (auto& v : narrow.data) v = static_cast<uint8_t>(60 + v / 4);
    for (double f : {0.0, 0.37, 1.0 + double{0.27f}, 2.5, 3e6}) {
      ASSERT_TRUE(same_pixels(applied(in, [f](Image& i) { adjust_brightness(i, f); }), ref_brightness(in, f)))
          << "brightness " << f << " width " << w;
      ASSERT_TRUE(same_pixels(applied(in, [f](Image& i) { adjust_contrast(i, f); }), ref_contrast(in, f)))
          << "contrast " << f << " width " << w;
    }
    ASSERT_TRUE(same_pixels(applied(narrow, [](Image& i) { autocontrast(i); }), ref_autocontrast(narrow)))
        << "width " << w;
    ASSERT_TRUE(same_pixels(applied(narrow, [](Image& i) { equalize(i); }), ref_equalize(narrow)))
        << "width " << w;
  }
}

TEST(Photometric, PosterizeSolarizeInvert) {
  const Image in = test_image(37, 53);
  for (int bits = 0; bits <= 8; ++bits)
    EXPECT_TRUE(same_pixels(applied(in, [bits](Image& i) { posterize(i, bits); }), ref_posterize(in, bits)))
        << "bits " << bits;
  const Image zero = applied(in, [](Image& i) { posterize(i, 0); });
  for (uint8_t v : zero.data) ASSERT_EQ(v, 0);
  EXPECT_TRUE(same_pixels(applied(in, [](Image& i) { posterize(i, 8); }), in));

  Image inverted = in;
  for (auto& v : inverted.data) v = static_cast<uint8_t>(255 - v);
  EXPECT_TRUE(same_pixels(applied(in, [](Image& i) { invert(i); }), inverted));
  for (float t : {0.0f, 1.0f, 127.5f, 128.0f, 200.3f, 255.0f, 256.0f})
    EXPECT_TRUE(same_pixels(applied(in, [t](Image& i) { solarize(i, t); }), ref_solarize(in, t)))
        << "threshold " << t;
  EXPECT_TRUE(same_pixels(applied(in, [](Image& i) { solarize(i, 0.0f); }), inverted));
  EXPECT_TRUE(same_pixels(applied(in, [](Image& i) { solarize(i, 256.0f); }), in));
}

// Sharpness is exact, not just within 1: its smoothed value is round(n / 13) for an integer
// n, never within float32 error of a half, so any summation order rounds the same way.
TEST(Photometric, SharpnessBlendsWithTheSmoothedImage) {
  const Image in = test_image(37, 53);
  Image scratch;
  for (double f : {0.0, 0.5, 1.0, 1.7, 2.0, 5.0, 3e6}) {
    const float ff = static_cast<float>(f);
    const Image got = applied(in, [&](Image& i) { adjust_sharpness(i, ff, scratch); });
    EXPECT_TRUE(same_pixels(got, ref_sharpness(in, ff))) << "factor " << f;
  }
  EXPECT_TRUE(same_pixels(applied(in, [&](Image& i) { adjust_sharpness(i, 1.0f, scratch); }), in));
  // Two rows or fewer: unchanged, as torchvision.
  const Image thin = test_image(2, 9);
  EXPECT_TRUE(same_pixels(applied(thin, [&](Image& i) { adjust_sharpness(i, 0.0f, scratch); }), thin));
  const Image small = test_image(3, 3);
  EXPECT_TRUE(same_pixels(applied(small, [&](Image& i) { adjust_sharpness(i, 0.0f, scratch); }),
                          ref_sharpness(small, 0.0)));
}

// Regression (tests/fuzz/regressions/fuzz_recipe/sharpness_pointer_overflow.jpg): the
// interior smoothing read the left neighbour as up[j - 3] with an unsigned j, so at the
// first interior pixel of every row the index wrapped to 2^64 - 3 and the pointer
// addition overflowed. It gave the right pixels by accident, so this test passed on it:
// clang's UBSan (the fuzz build, which replays that input, and the asan preset's since it
// moved to clang-14) reports the overflow, GCC 12's does not. This test keeps the behaviour
// of the fix: the fuzz input's 40 x 16 and the narrowest interiors (one and two pixels
// wide) against the reference.
TEST(Photometric, SharpnessFirstInteriorPixelOfEveryRow) {
  Image scratch;
  for (auto [h, w] : {std::pair{16, 40}, std::pair{3, 3}, std::pair{5, 4}, std::pair{4, 3}}) {
    const Image in = test_image(h, w, 11);
    for (double f : {0.0, 2.0}) {
      const float ff = static_cast<float>(f);
      EXPECT_TRUE(same_pixels(applied(in, [&](Image& i) { adjust_sharpness(i, ff, scratch); }),
                              ref_sharpness(in, ff)))
          << h << " x " << w << ", factor " << f;
    }
  }
}

// Blur is within 1 level, not exact: torch's 2-D float32 convolution and OpenCV's separable
// one sum in different orders, so a value within float error of .5 may round either way.
TEST(Photometric, GaussianBlurIsWithinOneLevelOfTheConvolution) {
  const Image in = test_image(37, 53);
  Image scratch;
  for (const auto& [k, sigma] : std::vector<std::pair<int, float>>{{1, 0.5f}, {3, 0.8f}, {5, 1.3f}, {23, 2.0f}, {9, 0.1f}}) {
    // Captured by copy under names of their own: clang 14 (the asan build) cannot capture a
    // structured binding (C++20 allows it; clang 16 does).
    const Image got = applied(in, [&, k = k, sigma = sigma](Image& i) { gaussian_blur(i, k, sigma, scratch); });
    const Image want = ref_gaussian_blur(in, k, sigma);
    EXPECT_LE(max_abs_diff(got, want), 1) << "k " << k << " sigma " << sigma;
    size_t off = 0;
    for (size_t i = 0; i < got.size_bytes(); ++i) off += got.data[i] != want.data[i];
    EXPECT_LE(off, got.size_bytes() / 100) << "k " << k << ": only ties may round differently";
  }
  // torch's reflect padding needs kernel_size / 2 < each side.
  Image tiny = test_image(11, 30);
  EXPECT_THROW(gaussian_blur(tiny, 23, 1.0f, scratch), std::invalid_argument);
  EXPECT_THROW(gaussian_blur(tiny, 4, 1.0f, scratch), std::invalid_argument);
  EXPECT_THROW(gaussian_blur(tiny, 3, 0.0f, scratch), std::invalid_argument);
}

TEST(Photometric, KernelsRejectBadArguments) {
  Image img = test_image(5, 5);
  Image gray;
  gray.resize(5, 5, 1);
  EXPECT_THROW(adjust_brightness(img, -0.1f), std::invalid_argument);
  EXPECT_THROW(adjust_hue(img, 0.6f), std::invalid_argument);
  EXPECT_THROW(posterize(img, 9), std::invalid_argument);
  EXPECT_THROW(solarize(img, 257.0f), std::invalid_argument);
  EXPECT_THROW(invert(gray), std::invalid_argument);
}

// --- operators -----------------------------------------------------------------------------


TEST(PhotometricOps, RandomOpsApplyWithProbabilityP) {
  // Values in [40, 125): every kernel changes this image (autocontrast and equalize too).
  Image in = test_image(31, 45);
  for (auto& v : in.data) v = static_cast<uint8_t>(40 + v / 3);
  Image scratch;
  struct Case {
    std::string name, params;
    std::function<void(Image&)> kernel;
  };
  const std::vector<Case> cases = {
      {"random_grayscale", "", [](Image& i) { rgb_to_grayscale(i); }},
      {"random_autocontrast", "", [](Image& i) { autocontrast(i); }},
      {"random_equalize", "", [](Image& i) { equalize(i); }},
      {"random_posterize", "bits: 3, ", [](Image& i) { posterize(i, 3); }},
      {"random_solarize", "threshold: 100, ", [](Image& i) { solarize(i, 100.0f); }},
      {"random_adjust_sharpness", "sharpness_factor: 2.5, ", [&](Image& i) { adjust_sharpness(i, 2.5f, scratch); }},
      {"random_invert", "", [](Image& i) { invert(i); }},
  };
  for (const auto& c : cases) {
    const Image never = run_op("{" + c.name + ": {" + c.params + "p: 0.0}}", in);
    EXPECT_TRUE(same_pixels(never, in)) << c.name;
    const Image always = run_op("{" + c.name + ": {" + c.params + "p: 1.0}}", in);
    EXPECT_TRUE(same_pixels(always, applied(in, c.kernel))) << c.name;
    // Default p: some of 40 seeds apply, some do not.
    const std::string def = c.params.empty() ? c.name : "{" + c.name + ": {" + c.params.substr(0, c.params.size() - 2) + "}}";
    int changed = 0;
    for (uint64_t seed = 0; seed < 40; ++seed) changed += !same_pixels(run_op(def, in, seed), in);
    EXPECT_GT(changed, 0) << c.name;
    EXPECT_LT(changed, 40) << c.name;
  }
}

TEST(PhotometricOps, ColorJitterWithFixedFactorsEqualsTheKernels) {
  const Image in = test_image(31, 45);
  EXPECT_TRUE(same_pixels(run_op("{color_jitter: {brightness: [1.3, 1.3]}}", in),
                          applied(in, [](Image& i) { adjust_brightness(i, 1.3f); })));
  EXPECT_TRUE(same_pixels(run_op("{color_jitter: {contrast: [0.6, 0.6]}}", in),
                          applied(in, [](Image& i) { adjust_contrast(i, 0.6f); })));
  EXPECT_TRUE(same_pixels(run_op("{color_jitter: {saturation: [1.7, 1.7]}}", in),
                          applied(in, [](Image& i) { adjust_saturation(i, 1.7f); })));
  EXPECT_TRUE(same_pixels(run_op("{color_jitter: {hue: [-0.2, -0.2]}}", in),
                          applied(in, [](Image& i) { adjust_hue(i, -0.2f); })));
  // All zero (the defaults), or ranges at the identity: nothing happens.
  EXPECT_TRUE(same_pixels(run_op("color_jitter", in), in));
  EXPECT_TRUE(same_pixels(run_op("{color_jitter: {brightness: [1, 1], hue: [0, 0]}}", in), in));
}

TEST(PhotometricOps, ColorJitterAppliesInARandomOrder) {
  const Image in = test_image(31, 45);
  const Image bc = applied(in, [](Image& i) { adjust_brightness(i, 1.6f); adjust_contrast(i, 0.5f); });
  const Image cb = applied(in, [](Image& i) { adjust_contrast(i, 0.5f); adjust_brightness(i, 1.6f); });
  ASSERT_FALSE(same_pixels(bc, cb));  // the order shows in the output
  int first = 0, second = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    const Image out = run_op("{color_jitter: {brightness: [1.6, 1.6], contrast: [0.5, 0.5]}}", in, seed);
    const bool is_bc = same_pixels(out, bc), is_cb = same_pixels(out, cb);
    ASSERT_TRUE(is_bc || is_cb) << "seed " << seed;
    first += is_bc;
    second += is_cb;
  }
  EXPECT_GT(first, 0);
  EXPECT_GT(second, 0);
}

TEST(PhotometricOps, SameSeedSameOutput) {
  const Image in = test_image(31, 45);
  for (const std::string op : {"{color_jitter: {brightness: 0.4, contrast: 0.4, saturation: 0.4, hue: 0.1}}",
                               "{gaussian_blur: {kernel_size: 5}}"}) {
    const Image a = run_op(op, in, 11), b = run_op(op, in, 11), c = run_op(op, in, 12);
    EXPECT_TRUE(same_pixels(a, b)) << op;
    EXPECT_FALSE(same_pixels(a, c)) << op << ": different seeds should draw different factors";
    EXPECT_FALSE(same_pixels(a, in)) << op;
  }
}

TEST(PhotometricOps, GaussianBlurWithOneSigmaEqualsTheKernel) {
  const Image in = test_image(31, 45);
  Image scratch;
  EXPECT_TRUE(same_pixels(run_op("{gaussian_blur: {kernel_size: 7, sigma: 1.5}}", in),
                          applied(in, [&](Image& i) { gaussian_blur(i, 7, 1.5f, scratch); })));
  EXPECT_TRUE(same_pixels(run_op("{gaussian_blur: {kernel_size: 3, sigma: [0.9, 0.9]}}", in),
                          applied(in, [&](Image& i) { gaussian_blur(i, 3, 0.9f, scratch); })));
}

TEST(PhotometricOps, BadParametersAreRejected) {
  for (const std::string bad : {
           "{color_jitter: {brightness: -1}}",
           "{color_jitter: {hue: 0.7}}",
           "{color_jitter: {hue: -0.2}}",
           "{color_jitter: {hue: [-0.6, 0.1]}}",
           "{color_jitter: {saturation: [1.5, 1.2]}}",
           "{color_jitter: {contrast: [0.5, 1.0, 1.5]}}",
           "{gaussian_blur: {kernel_size: 4}}",
           "{gaussian_blur: {kernel_size: 0}}",
           "gaussian_blur",
           "{gaussian_blur: {kernel_size: 3, sigma: 0}}",
           "{gaussian_blur: {kernel_size: 3, sigma: [2.0, 1.0]}}",
           "{random_posterize: {bits: 9}}",
           "random_posterize",
           "random_solarize",
           "{random_adjust_sharpness: {sharpness_factor: -0.5}}",
           "{random_invert: {p: 1.5}}",
       })
    EXPECT_THROW(make_op(bad), std::invalid_argument) << bad;
}

TEST(PhotometricOps, ImageOnlyAndShapePreserving) {
  for (const std::string op : {"color_jitter", "random_grayscale", "{gaussian_blur: {kernel_size: 5}}",
                               "random_autocontrast", "random_equalize", "{random_posterize: {bits: 2}}",
                               "{random_solarize: {threshold: 9}}",
                               "{random_adjust_sharpness: {sharpness_factor: 2}}", "random_invert"}) {
    const auto o = make_op(op);
    EXPECT_EQ(o->stage(), OpStage::kImage) << op;
    const DataShape out = o->output_shape(DataShape{false, 3, 40, 50});
    EXPECT_EQ(out.height, 40) << op;
    EXPECT_EQ(out.width, 50) << op;
    EXPECT_THROW(o->output_shape(DataShape{true, 3, 40, 50}), std::invalid_argument) << op;
  }
  EXPECT_THROW(make_op("{gaussian_blur: {kernel_size: 23}}")->output_shape(DataShape{false, 3, 11, 50}),
               std::invalid_argument);
}

}  // namespace
}  // namespace pipebench
