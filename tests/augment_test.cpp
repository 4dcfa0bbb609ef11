// Why this file exists: the augmentation policies must apply torchvision's operations
// with torchvision's magnitudes and draw them with torchvision's (timm's) probabilities.
// References are independent of augment.cpp: the photometric/affine kernels called with
// torchvision's _apply_op mapping written out here, naive pixel loops, magnitudes computed
// from autoaugment.py's formulas by hand, and rates computed from its policy tables.
#include "tests/test_data.h"
#include "transforms/augment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "transforms/affine.h"
#include "transforms/photometric.h"
#include "transforms/registry.h"
#include "transforms/spec.h"

namespace pipebench {
namespace {

using testing::make_op;
using testing::run_op;

// Smooth gradients plus pseudo-random texture: every operation changes something.
Image test_image(int h, int w, uint32_t seed = 7) {
  Image img;
  img.resize(h, w, 3);
  uint32_t s = seed;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        s = s * 1664525u + 1013904223u;
        const int v = (x * 5 + y * 3 + c * 60) % 200 + static_cast<int>((s >> 24) % 56);
        img.row(y)[x * 3 + c] = static_cast<uint8_t>(v);
      }
  return img;
}

uint8_t px(const Image& img, int y, int x, int c) { return img.row(y)[x * 3 + c]; }

bool same_pixels(const Image& a, const Image& b) {
  return a.height == b.height && a.width == b.width && a.channels == b.channels &&
         std::equal(a.ptr(), a.ptr() + a.size_bytes(), b.ptr());
}

Image applied(const Image& in, AugOp op, double m, const WarpOptions& w = {}) {
  Image img = in, scratch;
  apply_augment_op(img, op, m, w, scratch);
  return img;
}


const AugOpRange& range_of(std::span<const AugOpRange> space, AugOp op) {
  for (const auto& r : space)
    if (r.op == op) return r;
  throw std::runtime_error("not in space");
}

// --- one operation: _apply_op's mapping onto the kernels --------------------------------------

TEST(AugmentOp, PhotometricOperationsCallTheKernelsWithTorchvisionsArguments) {
  const Image in = test_image(32, 40);
  Image scratch;
  auto expect_kernel = [&](AugOp op, double m, auto kernel) {
    Image want = in;
    kernel(want);
    EXPECT_TRUE(same_pixels(applied(in, op, m), want)) << aug_op_name(op) << " at " << m;
    EXPECT_FALSE(same_pixels(want, in)) << aug_op_name(op) << " at " << m << " changes nothing";
  };
  for (double m : {0.27, -0.27, 0.81}) {
    const double f = 1.0 + m;  // torchvision: 1.0 + magnitude in double (a float32 factor differs)
    expect_kernel(AugOp::kBrightness, m, [&](Image& i) { adjust_brightness(i, f); });
    expect_kernel(AugOp::kColor, m, [&](Image& i) { adjust_saturation(i, f); });
    expect_kernel(AugOp::kContrast, m, [&](Image& i) { adjust_contrast(i, f); });
    expect_kernel(AugOp::kSharpness, m, [&](Image& i) { adjust_sharpness(i, f, scratch); });
  }
  // Posterize: int(magnitude) bits (a fractional level from magnitude noise truncates).
  expect_kernel(AugOp::kPosterize, 4.0, [&](Image& i) { posterize(i, 4); });
  expect_kernel(AugOp::kPosterize, 5.9, [&](Image& i) { posterize(i, 5); });
  expect_kernel(AugOp::kSolarize, 178.5, [&](Image& i) { solarize(i, 178.5f); });
  expect_kernel(AugOp::kAutoContrast, 0.0, [&](Image& i) { autocontrast(i); });
  expect_kernel(AugOp::kEqualize, 0.0, [&](Image& i) { equalize(i); });
  expect_kernel(AugOp::kInvert, 0.0, [&](Image& i) { invert(i); });
  EXPECT_TRUE(same_pixels(applied(in, AugOp::kIdentity, 5.0), in));
}

TEST(AugmentOp, RotateAndTranslateCallTheWarpsWithTorchvisionsArguments) {
  const Image in = test_image(32, 40);
  for (const WarpOptions w :
       {WarpOptions{}, WarpOptions{WarpInterpolation::kBilinear, std::array<float, 3>{10.0f, 20.0f, 30.0f}}}) {
    Image want;
    rotate(in, want, 9.0f, w.interpolation, w.fill);
    EXPECT_TRUE(same_pixels(applied(in, AugOp::kRotate, 9.0, w), want));
    rotate(in, want, -27.0f, w.interpolation, w.fill);
    EXPECT_TRUE(same_pixels(applied(in, AugOp::kRotate, -27.0, w), want));
    // TranslateX/Y: F.affine(translate=[int(m), 0]): truncated toward zero.
    AffineParams p;
    p.translate = {13.0f, 0.0f};
    affine(in, want, p, w.interpolation, w.fill);
    EXPECT_TRUE(same_pixels(applied(in, AugOp::kTranslateX, 13.9, w), want));
    p.translate = {-13.0f, 0.0f};
    affine(in, want, p, w.interpolation, w.fill);
    EXPECT_TRUE(same_pixels(applied(in, AugOp::kTranslateX, -13.9, w), want));
    p.translate = {0.0f, 7.0f};
    affine(in, want, p, w.interpolation, w.fill);
    EXPECT_TRUE(same_pixels(applied(in, AugOp::kTranslateY, 7.5, w), want));
  }
}

TEST(AugmentOp, TranslateMovesContentRightAndFillsTheGap) {
  // torchvision: positive TranslateX moves the content right; the vacated columns get fill.
  const Image in = test_image(20, 30);
  const WarpOptions w{WarpInterpolation::kNearest, std::array<float, 3>{10.0f, 20.0f, 30.0f}};
  const Image out = applied(in, AugOp::kTranslateX, 6.0, w);
  for (int y = 0; y < 20; ++y)
    for (int x = 0; x < 30; ++x)
      for (int c = 0; c < 3; ++c)
        ASSERT_EQ(px(out, y, x, c), x < 6 ? 10 * (c + 1) : px(in, y, x - 6, c)) << y << "," << x;
}

// Nearest-neighbour shear about the top-left corner as torch's grid_sample computes it for
// _apply_op's F.affine(shear, center=[0, 0]): output (x, y) reads input column
// round(x + m * (y + 0.5)) (ShearX) or row round(y + m * (x + 0.5)) (ShearY).
Image naive_corner_shear(const Image& in, double m, bool along_x, uint8_t fill) {
  Image out;
  out.resize(in.height, in.width, 3);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      int sx = x, sy = y;
      if (along_x) {
        sx = static_cast<int>(std::nearbyint(x + m * (y + 0.5)));
      } else {
        sy = static_cast<int>(std::nearbyint(y + m * (x + 0.5)));
      }
      const bool inside = sx >= 0 && sx < in.width && sy >= 0 && sy < in.height;
      for (int c = 0; c < 3; ++c) out.row(y)[x * 3 + c] = inside ? px(in, sy, sx, c) : fill;
    }
  return out;
}

TEST(AugmentOp, ShearIsAboutTheTopLeftCornerAsTorchvisions) {
  const Image in = test_image(32, 40);
  const WarpOptions w{WarpInterpolation::kNearest, std::array<float, 3>{77.0f, 77.0f, 77.0f}};
  for (const auto& [op, m] : std::vector<std::pair<AugOp, double>>{{AugOp::kShearX, 0.09},
                                                                   {AugOp::kShearX, -0.3},
                                                                   {AugOp::kShearY, 0.27},
                                                                   {AugOp::kShearY, -0.55}}) {
    const Image out = applied(in, op, m, w);
    const Image want = naive_corner_shear(in, m, op == AugOp::kShearX, 77);
    int differ = 0;
    for (size_t i = 0; i < out.size_bytes(); ++i) differ += out.ptr()[i] != want.ptr()[i];
    // The magnitudes put no sample exactly on a rounding tie (m * (k + 0.5) is never a
    // half-integer for them), where float rounding may go either way; allow 0.5% anyway.
    EXPECT_LE(differ, static_cast<int>(out.size_bytes() / 200)) << aug_op_name(op) << " " << m;
    // The corner's row (ShearX) / column (ShearY) barely moves: pixel (0, 0) is kept.
    EXPECT_EQ(px(out, 0, 0, 0), px(in, 0, 0, 0)) << aug_op_name(op) << " " << m;
  }
}

TEST(AugmentOp, TimmOperations) {
  const Image in = test_image(20, 30);
  // SolarizeAdd(add): x < 128 -> min(255, x + add), int(add).
  const Image sa = applied(in, AugOp::kSolarizeAdd, 99.9);
  for (size_t i = 0; i < in.size_bytes(); ++i) {
    const int v = in.ptr()[i];
    ASSERT_EQ(sa.ptr()[i], v < 128 ? std::min(255, v + 99) : v) << i;
  }
  // TranslateXRel(0.2) on a 30-wide image: PIL's (1, 0, 6, 0, 1, 0), output x reads x + 6.
  const WarpOptions w{WarpInterpolation::kNearest, std::array<float, 3>{5.0f, 5.0f, 5.0f}};
  const Image tx = applied(in, AugOp::kTranslateXRel, 0.2, w);
  const Image ty = applied(in, AugOp::kTranslateYRel, -0.25, w);  // 20 * 0.25 = 5 rows down
  for (int y = 0; y < 20; ++y)
    for (int x = 0; x < 30; ++x) {
      ASSERT_EQ(px(tx, y, x, 1), x + 6 < 30 ? px(in, y, x + 6, 1) : 5) << y << "," << x;
      ASSERT_EQ(px(ty, y, x, 1), y >= 5 ? px(in, y - 5, x, 1) : 5) << y << "," << x;
    }
}

TEST(AugmentOp, SolarizeAddForEveryAdd) {
  // timm's range (0..110) and beyond it, negative adds wrapping as uint8 like timm's table.
  const Image in = test_image(9, 31);
  for (int add = -300; add <= 300; add += add >= -2 && add < 260 ? 1 : 37) {
    const Image out = applied(in, AugOp::kSolarizeAdd, add);
    for (size_t i = 0; i < in.size_bytes(); ++i) {
      const int v = in.ptr()[i];
      ASSERT_EQ(out.ptr()[i], static_cast<uint8_t>(v < 128 ? std::min(255, v + add) : v))
          << "add " << add << " byte " << i;
    }
  }
}

TEST(AugmentOp, NamesRoundTrip) {
  for (int i = 0; i < kAugOpCount; ++i) {
    const auto op = static_cast<AugOp>(i);
    EXPECT_EQ(aug_op_from_name(aug_op_name(op)), op);
  }
  EXPECT_EQ(aug_op_name(AugOp::kColor), "Color");
  EXPECT_THROW(aug_op_from_name("Saturation"), std::invalid_argument);
}

// --- the op spaces ----------------------------------------------------------------------------

// torch.linspace(lo, hi, bins)[i] in exact arithmetic; the code computes it in float32.
double lin(double lo, double hi, int bins, int i) { return lo + (hi - lo) * i / (bins - 1); }

double mag(std::span<const AugOpRange> space, AugOp op, double level, int bins, int h = 224,
           int w = 224) {
  return augment_magnitude(range_of(space, op), level, bins, h, w);
}

TEST(AugmentSpace, RandAugmentMatchesTorchvisionAtMagnitude9Of31) {
  const auto& s = kRandAugmentSpace;
  EXPECT_EQ(s.size(), 14u);
  EXPECT_EQ(s[0].op, AugOp::kIdentity);  // dict order: Identity first, Equalize last
  EXPECT_EQ(s[13].op, AugOp::kEqualize);
  EXPECT_NEAR(mag(s, AugOp::kShearX, 9, 31), 0.3 * 9 / 30, 1e-6);
  EXPECT_NEAR(mag(s, AugOp::kShearY, 9, 31), 0.3 * 9 / 30, 1e-6);
  // TranslateX scales with the width, TranslateY with the height: 150 / 331 * size.
  EXPECT_NEAR(mag(s, AugOp::kTranslateX, 9, 31, 100, 224), 150.0 / 331.0 * 224 * 9 / 30, 1e-4);
  EXPECT_NEAR(mag(s, AugOp::kTranslateY, 9, 31, 100, 224), 150.0 / 331.0 * 100 * 9 / 30, 1e-4);
  EXPECT_NEAR(mag(s, AugOp::kRotate, 9, 31), 30.0 * 9 / 30, 1e-5);
  for (AugOp op : {AugOp::kBrightness, AugOp::kColor, AugOp::kContrast, AugOp::kSharpness})
    EXPECT_NEAR(mag(s, op, 9, 31), 0.9 * 9 / 30, 1e-6) << aug_op_name(op);
  // Posterize: 8 - round(i / ((bins - 1) / 4)): 9 / 7.5 = 1.2 -> 7 bits.
  EXPECT_EQ(mag(s, AugOp::kPosterize, 9, 31), 7.0);
  EXPECT_NEAR(mag(s, AugOp::kSolarize, 9, 31), lin(255, 0, 31, 9), 1e-4);  // 178.5
  for (AugOp op : {AugOp::kIdentity, AugOp::kAutoContrast, AugOp::kEqualize})
    EXPECT_EQ(mag(s, op, 9, 31), 0.0);
  for (const auto& r : s)
    EXPECT_EQ(r.signed_magnitude, r.scale == LevelScale::kLinear ||
                                      r.scale == LevelScale::kLinearOfWidth ||
                                      r.scale == LevelScale::kLinearOfHeight)
        << aug_op_name(r.op);
}

TEST(AugmentSpace, EveryBinMatchesTorchvisionsLinspace) {
  for (int bins : {2, 10, 31, 50})
    for (int i = 0; i < bins; ++i) {
      EXPECT_NEAR(mag(kRandAugmentSpace, AugOp::kRotate, i, bins), lin(0, 30, bins, i), 2e-5);
      EXPECT_NEAR(mag(kRandAugmentSpace, AugOp::kSolarize, i, bins), lin(255, 0, bins, i), 1e-4);
      EXPECT_NEAR(mag(kTrivialAugmentWideSpace, AugOp::kTranslateX, i, bins), lin(0, 32, bins, i),
                  1e-5);
      EXPECT_NEAR(mag(kTrivialAugmentWideSpace, AugOp::kShearY, i, bins), lin(0, 0.99, bins, i),
                  1e-6);
    }
  // The ends are exact (torch.linspace hits both).
  EXPECT_EQ(mag(kRandAugmentSpace, AugOp::kSolarize, 30, 31), 0.0);
  EXPECT_EQ(mag(kRandAugmentSpace, AugOp::kSolarize, 0, 31), 255.0);
  EXPECT_EQ(mag(kTrivialAugmentWideSpace, AugOp::kRotate, 30, 31), 135.0f);
}

TEST(AugmentSpace, PosterizeRoundsHalfToEven) {
  // bins 31: i / 7.5; 11 -> 1.47 -> 7 bits, 12 -> 1.6 -> 6, 30 -> 4 -> 4.
  EXPECT_EQ(mag(kRandAugmentSpace, AugOp::kPosterize, 0, 31), 8.0);
  EXPECT_EQ(mag(kRandAugmentSpace, AugOp::kPosterize, 11, 31), 7.0);
  EXPECT_EQ(mag(kRandAugmentSpace, AugOp::kPosterize, 12, 31), 6.0);
  EXPECT_EQ(mag(kRandAugmentSpace, AugOp::kPosterize, 30, 31), 4.0);
  // bins 9: i / 2; torch.round(0.5) = 0, round(1.5) = 2, round(2.5) = 2.
  EXPECT_EQ(mag(kRandAugmentSpace, AugOp::kPosterize, 1, 9), 8.0);
  EXPECT_EQ(mag(kRandAugmentSpace, AugOp::kPosterize, 3, 9), 6.0);
  EXPECT_EQ(mag(kRandAugmentSpace, AugOp::kPosterize, 5, 9), 6.0);
  // TrivialAugmentWide: i / ((bins - 1) / 6): bin 30 -> 2 bits, 7 -> round(1.4) -> 7, 15 -> 5.
  EXPECT_EQ(mag(kTrivialAugmentWideSpace, AugOp::kPosterize, 30, 31), 2.0);
  EXPECT_EQ(mag(kTrivialAugmentWideSpace, AugOp::kPosterize, 7, 31), 7.0);
  EXPECT_EQ(mag(kTrivialAugmentWideSpace, AugOp::kPosterize, 15, 31), 5.0);
}

TEST(AugmentSpace, TrivialAugmentWideAndAutoAugmentRanges) {
  const auto& t = kTrivialAugmentWideSpace;
  EXPECT_NEAR(mag(t, AugOp::kShearX, 30, 31), 0.99, 1e-6);
  EXPECT_NEAR(mag(t, AugOp::kTranslateY, 30, 31), 32.0, 1e-5);
  EXPECT_NEAR(mag(t, AugOp::kBrightness, 30, 31), 0.99, 1e-6);
  // AutoAugment: RandAugment's ranges at 10 bins, Invert instead of Identity.
  const auto& a = kAutoAugmentSpace;
  EXPECT_NEAR(mag(a, AugOp::kRotate, 9, 10), 30.0, 1e-5);
  EXPECT_NEAR(mag(a, AugOp::kRotate, 8, 10), 30.0 * 8 / 9, 1e-5);
  EXPECT_NEAR(mag(a, AugOp::kSolarize, 5, 10), 255.0 * 4 / 9, 1e-4);
  EXPECT_EQ(mag(a, AugOp::kPosterize, 8, 10), 4.0);  // 8 / 2.25 = 3.56 -> 4
  EXPECT_EQ(mag(a, AugOp::kPosterize, 6, 10), 5.0);  // 2.67 -> 3
  EXPECT_EQ(mag(a, AugOp::kPosterize, 5, 10), 6.0);  // 2.22 -> 2
  EXPECT_NO_THROW(range_of(a, AugOp::kInvert));
  EXPECT_THROW(range_of(a, AugOp::kIdentity), std::runtime_error);
}

TEST(AugmentSpace, TimmIncreasingAtMagnitude9) {
  // timm LEVEL_TO_ARG at level 9 of 10 (rand-m9-inc1).
  const auto& s = kTimmRandIncreasingSpace;
  EXPECT_EQ(s.size(), 15u);
  EXPECT_NEAR(mag(s, AugOp::kRotate, 9, 0), 27.0, 1e-9);
  EXPECT_NEAR(mag(s, AugOp::kShearX, 9, 0), 0.27, 1e-9);
  EXPECT_NEAR(mag(s, AugOp::kTranslateXRel, 9, 0), 0.405, 1e-9);
  EXPECT_EQ(mag(s, AugOp::kPosterize, 9, 0), 1.0);     // 4 - int(3.6)
  EXPECT_EQ(mag(s, AugOp::kPosterize, 10, 0), 0.0);    // 4 - 4
  EXPECT_EQ(mag(s, AugOp::kSolarize, 9, 0), 26.0);     // 256 - int(230.4)
  EXPECT_EQ(mag(s, AugOp::kSolarize, 0, 0), 256.0);    // 256: no pixel solarized
  EXPECT_EQ(mag(s, AugOp::kSolarizeAdd, 9, 0), 99.0);  // int(99.0)
  EXPECT_NEAR(mag(s, AugOp::kColor, 9, 0), 0.81, 1e-9);
  // The enhancement factor max(0.1, 1 + signed level): 1 - 0.81 = 0.19, 1 - 0.9 = 0.1.
  const auto& color = range_of(s, AugOp::kColor);
  EXPECT_NEAR(signed_augment_magnitude(color, 9, true, 0, 0, 0), -0.81, 1e-9);
  EXPECT_NEAR(1.0 + signed_augment_magnitude(color, 10, true, 0, 0, 0), 0.1, 1e-9);
}

// --- the policies' draws ----------------------------------------------------------------------

double chi_square(const std::vector<int>& counts, double expected) {
  double x2 = 0;
  for (int c : counts) x2 += (c - expected) * (c - expected) / expected;
  return x2;
}

int index_in(std::span<const AugOpRange> space, AugOp op) {
  for (size_t i = 0; i < space.size(); ++i)
    if (space[i].op == op) return static_cast<int>(i);
  return -1;
}

TEST(AugmentPolicy, RandAugmentChoosesEveryOperationEquallyOften) {
  RandAugmentParams p;  // 2 ops, magnitude 9 of 31
  Rng rng(2024);
  std::vector<AugStep> steps;
  std::vector<int> counts(14, 0);
  int negative_rotations = 0, rotations = 0;
  for (int n = 0; n < 2000; ++n) {
    sample_rand_augment(p, 224, 224, rng, steps);
    ASSERT_EQ(steps.size(), 2u);
    for (const auto& s : steps) {
      const int i = index_in(kRandAugmentSpace, s.op);
      ASSERT_GE(i, 0) << aug_op_name(s.op);
      ++counts[i];
      if (s.op == AugOp::kRotate) {
        ++rotations;
        negative_rotations += s.magnitude < 0;
        EXPECT_NEAR(std::abs(s.magnitude), 9.0, 1e-5);  // every op at the fixed magnitude
      }
      if (s.op == AugOp::kPosterize) {
        EXPECT_EQ(s.magnitude, 7.0);
      }
    }
  }
  // 13 degrees of freedom: P(chi2 > 34.5) = 0.001.
  EXPECT_LT(chi_square(counts, 4000.0 / 14), 34.5);
  EXPECT_NEAR(static_cast<double>(negative_rotations) / rotations, 0.5, 0.12);
}

TEST(AugmentPolicy, TrivialAugmentWideDrawsOpsAndBinsUniformly) {
  Rng rng(5);
  std::vector<AugStep> steps;
  std::vector<int> ops(14, 0), rotate_bins(31, 0);
  for (int n = 0; n < 14000; ++n) {
    sample_trivial_augment_wide(31, rng, steps);
    ASSERT_EQ(steps.size(), 1u);
    const int i = index_in(kTrivialAugmentWideSpace, steps[0].op);
    ASSERT_GE(i, 0);
    ++ops[i];
    if (steps[0].op == AugOp::kRotate)
      ++rotate_bins[static_cast<int>(std::lround(std::abs(steps[0].magnitude) / 135.0 * 30))];
  }
  EXPECT_LT(chi_square(ops, 1000.0), 34.5);
  const int rotations = std::accumulate(rotate_bins.begin(), rotate_bins.end(), 0);
  EXPECT_LT(chi_square(rotate_bins, rotations / 31.0), 59.7);  // 30 dof, P = 0.001
}

TEST(AugmentPolicy, AutoAugmentAppliesEachOperationAtItsPolicyRate) {
  // Expected applications per image: sum over the 25 ImageNet sub-policies of each step's
  // p / 25, computed from autoaugment.py's table.
  const std::map<AugOp, double> want = {{AugOp::kAutoContrast, 0.048}, {AugOp::kColor, 0.152},
                                        {AugOp::kContrast, 0.08},      {AugOp::kEqualize, 0.448},
                                        {AugOp::kInvert, 0.072},       {AugOp::kPosterize, 0.112},
                                        {AugOp::kRotate, 0.144},       {AugOp::kSharpness, 0.016},
                                        {AugOp::kShearX, 0.024},       {AugOp::kSolarize, 0.144}};
  Rng rng(11);
  std::vector<AugStep> steps;
  std::map<AugOp, int> got;
  std::set<double> posterize_bits, rotate_degrees;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    sample_auto_augment(AutoAugmentPolicy::kImageNet, 224, 224, rng, steps);
    ASSERT_LE(steps.size(), 2u);
    for (const auto& s : steps) {
      ++got[s.op];
      if (s.op == AugOp::kPosterize) posterize_bits.insert(s.magnitude);
      if (s.op == AugOp::kRotate)
        rotate_degrees.insert(std::round(std::abs(s.magnitude) * 1000) / 1000);
    }
  }
  for (const auto& [op, rate] : want)
    EXPECT_NEAR(static_cast<double>(got[op]) / n, rate, 0.008) << aug_op_name(op);
  EXPECT_EQ(got.size(), want.size());
  // Posterize bins 8, 7, 6, 5 of 10 -> 4, 5, 5, 6 bits; Rotate bins 9, 8, 3 -> 30, 26.667, 10.
  EXPECT_EQ(posterize_bits, (std::set<double>{4.0, 5.0, 6.0}));
  EXPECT_EQ(rotate_degrees, (std::set<double>{10.0, 26.667, 30.0}));
}

TEST(AugmentPolicy, AutoAugmentTablesAreTorchvisions) {
  for (auto pol :
       {AutoAugmentPolicy::kImageNet, AutoAugmentPolicy::kCifar10, AutoAugmentPolicy::kSvhn})
    EXPECT_EQ(auto_augment_policy(pol).size(), 25u);
  const auto in = auto_augment_policy(AutoAugmentPolicy::kImageNet);
  EXPECT_EQ(in[0][0].op, AugOp::kPosterize);
  EXPECT_EQ(in[0][0].p, 0.4);
  EXPECT_EQ(in[0][0].magnitude_bin, 8);
  EXPECT_EQ(in[14][1].op, AugOp::kContrast);  // (("Color", 0.6, 4), ("Contrast", 1.0, 8))
  EXPECT_EQ(in[14][1].p, 1.0);
  const auto c = auto_augment_policy(AutoAugmentPolicy::kCifar10);
  EXPECT_EQ(c[1][1].op, AugOp::kTranslateX);  // (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9))
  EXPECT_EQ(c[1][1].magnitude_bin, 9);
  const auto s = auto_augment_policy(AutoAugmentPolicy::kSvhn);
  EXPECT_EQ(s[24][1].op, AugOp::kInvert);  // (("ShearX", 0.7, 2), ("Invert", 0.1, None))
  EXPECT_EQ(s[24][1].magnitude_bin, -1);
}

TEST(AugmentPolicy, MagnitudeNoiseIsGaussianAroundTheMagnitudeAndClipped) {
  RandAugmentParams p;
  p.num_ops = 1;
  p.magnitude_std = 0.5;
  Rng rng(3);
  std::vector<AugStep> steps;
  std::vector<double> levels;  // Rotate's degrees are the level (30 / 30 per bin)
  for (int n = 0; n < 40000; ++n) {
    sample_rand_augment(p, 224, 224, rng, steps);
    if (steps[0].op == AugOp::kRotate) levels.push_back(std::abs(steps[0].magnitude));
  }
  double mean = 0, var = 0;
  for (double l : levels) mean += l;
  mean /= levels.size();
  for (double l : levels) var += (l - mean) * (l - mean);
  var /= levels.size();
  EXPECT_NEAR(mean, 9.0, 0.05);
  EXPECT_NEAR(std::sqrt(var), 0.5, 0.03);
  // Clipped to the top bin (num_magnitude_bins - 1 = 30 degrees) at magnitude 30.
  p.magnitude = 30;
  p.magnitude_std = 2.0;
  int at_top = 0;
  for (int n = 0; n < 4000; ++n) {
    sample_rand_augment(p, 224, 224, rng, steps);
    if (steps[0].op != AugOp::kRotate) continue;
    EXPECT_LE(std::abs(steps[0].magnitude), 30.0f);
    at_top += std::abs(steps[0].magnitude) == 30.0f;
  }
  EXPECT_GT(at_top, 50);
  // timm: magnitude_std > 100 draws the level uniformly in [0, magnitude].
  p.magnitude = 9;
  p.magnitude_std = 1000;
  double sum = 0, hi = 0;
  int k = 0;
  for (int n = 0; n < 40000; ++n) {
    sample_rand_augment(p, 224, 224, rng, steps);
    if (steps[0].op != AugOp::kRotate) continue;
    sum += std::abs(steps[0].magnitude);
    hi = std::max(hi, std::abs(steps[0].magnitude));
    ++k;
  }
  EXPECT_NEAR(sum / k, 4.5, 0.15);
  EXPECT_LE(hi, 9.0 + 1e-5);
}

TEST(AugmentPolicy, GaussianIsStandardNormal) {
  Rng rng(99);
  double s = 0, s2 = 0;
  int within1 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double g = rng.normal();
    s += g;
    s2 += g * g;
    within1 += std::abs(g) < 1.0;
  }
  EXPECT_NEAR(s / n, 0.0, 0.01);
  EXPECT_NEAR(s2 / n, 1.0, 0.02);
  EXPECT_NEAR(static_cast<double>(within1) / n, 0.6827, 0.005);
}

TEST(AugmentPolicy, TimmIncreasingAppliesHalfTheChosenOpsFromItsSpace) {
  RandAugmentParams p;
  p.increasing = true;  // rand-m9-inc1
  Rng rng(8);
  std::vector<AugStep> steps;
  int applied_ops = 0;
  std::set<AugOp> seen;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    sample_rand_augment(p, 224, 224, rng, steps);
    applied_ops += static_cast<int>(steps.size());
    for (const auto& s : steps) {
      seen.insert(s.op);
      ASSERT_GE(index_in(kTimmRandIncreasingSpace, s.op), 0);
      if (s.op == AugOp::kPosterize) {
        EXPECT_EQ(s.magnitude, 1.0);
      } else if (s.op == AugOp::kSolarize) {
        EXPECT_EQ(s.magnitude, 26.0);
      } else if (s.op == AugOp::kBrightness) {
        EXPECT_NEAR(std::abs(s.magnitude), 0.81, 1e-9);
      }
    }
  }
  EXPECT_NEAR(applied_ops, n, 200);  // 2 ops chosen, each applied with probability 0.5
  EXPECT_EQ(seen.size(), 15u);
}

// --- the operators ------------------------------------------------------------------------------

TEST(AugmentOperators, SameSeedSameOutputDifferentSeedsDiffer) {
  const Image in = test_image(48, 56);
  for (const std::string yaml :
       {"{rand_augment: {}}", "{rand_augment: {magnitude_std: 0.5, increasing: true}}",
        "{trivial_augment_wide: {}}", "{auto_augment: {}}",
        "{auto_augment: {policy: svhn, interpolation: bilinear, fill: [1, 2, 3]}}"}) {
    const auto op = make_op(yaml);
    std::set<std::vector<uint8_t>> outputs;
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      const Image a = run_op(*op, in, seed);
      EXPECT_TRUE(same_pixels(a, run_op(*op, in, seed))) << yaml << " seed " << seed;
      EXPECT_EQ(a.height, 48);
      EXPECT_EQ(a.width, 56);
      outputs.insert(std::vector<uint8_t>(a.ptr(), a.ptr() + a.size_bytes()));
    }
    EXPECT_GE(outputs.size(), 5u) << yaml;
  }
}

TEST(AugmentOperators, ApplyTheStepsTheSamplerDraws) {
  // The operator draws exactly what sample_* draws (no more) and applies those steps.
  const Image in = test_image(40, 36);
  struct Case {
    std::string yaml;
    std::function<void(Rng&, std::vector<AugStep>&)> sample;
    WarpOptions warp;
  };
  RandAugmentParams ra;
  ra.num_ops = 3;
  ra.magnitude = 12;
  const std::vector<Case> cases = {
      {"{rand_augment: {num_ops: 3, magnitude: 12, fill: 9}}",
       [&](Rng& r, std::vector<AugStep>& s) { sample_rand_augment(ra, 40, 36, r, s); },
       WarpOptions{WarpInterpolation::kNearest, std::array<float, 3>{9.0f, 9.0f, 9.0f}}},
      {"{trivial_augment_wide: {interpolation: bilinear}}",
       [](Rng& r, std::vector<AugStep>& s) { sample_trivial_augment_wide(31, r, s); },
       WarpOptions{WarpInterpolation::kBilinear, std::nullopt}},  // the policies' default: fill none
      {"{auto_augment: {policy: cifar10}}",
       [](Rng& r, std::vector<AugStep>& s) {
         sample_auto_augment(AutoAugmentPolicy::kCifar10, 40, 36, r, s);
       },
       WarpOptions{}},
  };
  for (const auto& c : cases) {
    const auto op = make_op(c.yaml);
    auto state = op->make_state();
    for (uint64_t seed = 0; seed < 20; ++seed) {
      SampleData s;
      s.image = in;
      Rng r1(seed), r2(seed);
      op->apply(s, r1, state.get());
      std::vector<AugStep> steps;
      c.sample(r2, steps);
      Image want = in, scratch;
      apply_augment_steps(want, steps, c.warp, scratch);
      EXPECT_TRUE(same_pixels(s.image, want)) << c.yaml << " seed " << seed;
      EXPECT_EQ(r1.next_u64(), r2.next_u64()) << c.yaml << " draws differ";
    }
  }
}

TEST(AugmentOperators, ZeroOpsLeavesTheImageUnchanged) {
  const Image in = test_image(30, 30);
  const auto op = make_op("{rand_augment: {num_ops: 0}}");
  for (uint64_t seed = 0; seed < 5; ++seed) EXPECT_TRUE(same_pixels(run_op(*op, in, seed), in));
}

TEST(AugmentOperators, RejectBadParameters) {
  EXPECT_THROW(make_op("{rand_augment: {magnitude: 31}}"), std::invalid_argument);  // > bins - 1
  EXPECT_NO_THROW(make_op("{rand_augment: {magnitude: 30}}"));
  EXPECT_THROW(make_op("{rand_augment: {magnitude: 5, num_magnitude_bins: 5}}"),
               std::invalid_argument);
  EXPECT_THROW(make_op("{rand_augment: {num_magnitude_bins: 1, magnitude: 0}}"),
               std::invalid_argument);
  EXPECT_THROW(make_op("{rand_augment: {num_ops: -1}}"), std::invalid_argument);
  EXPECT_THROW(make_op("{rand_augment: {magnitude_std: -0.5}}"), std::invalid_argument);
  EXPECT_THROW(make_op("{rand_augment: {increasing: true, magnitude: 11}}"), std::invalid_argument);
  EXPECT_NO_THROW(make_op("{rand_augment: {increasing: true, magnitude: 10}}"));
  EXPECT_THROW(make_op("{rand_augment: {interpolation: bicubic}}"), std::invalid_argument);
  EXPECT_THROW(make_op("{rand_augment: {fill: [1, 2]}}"), std::invalid_argument);
  EXPECT_THROW(make_op("{rand_augment: {fill: 300}}"), std::invalid_argument);
  EXPECT_THROW(make_op("{trivial_augment_wide: {num_magnitude_bins: 1}}"), std::invalid_argument);
  EXPECT_THROW(make_op("{auto_augment: {policy: coco}}"), std::invalid_argument);
  // The message names the operator, the parameter, the range and the value.
  RandAugmentParams p;
  p.magnitude = 31;
  try {
    check_rand_augment(p);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("rand_augment"), std::string::npos) << m;
    EXPECT_NE(m.find("magnitude"), std::string::npos) << m;
    EXPECT_NE(m.find("30"), std::string::npos) << m;
    EXPECT_NE(m.find("31"), std::string::npos) << m;
  }
  EXPECT_THROW(check_trivial_augment_wide(1), std::invalid_argument);
}

TEST(AugmentOperators, RefuseATensorAndKeepTheImageShape) {
  for (const std::string yaml : {"rand_augment", "trivial_augment_wide", "auto_augment"}) {
    const auto op = make_op(yaml);
    EXPECT_EQ(op->stage(), OpStage::kImage);
    EXPECT_THROW(op->output_shape(DataShape{true, 3, 224, 224}), std::invalid_argument) << yaml;
    const DataShape out = op->output_shape(DataShape{false, 3, 224, 200});
    EXPECT_EQ(out.height, 224);
    EXPECT_EQ(out.width, 200);
    EXPECT_FALSE(out.tensor);
  }
}

}  // namespace
}  // namespace pipebench
