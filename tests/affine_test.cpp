// Why this file exists: affine / rotate must sample exactly where torchvision 0.14's tensor
// backend samples (functional.py _get_inverse_affine_matrix, functional_tensor.py
// _gen_affine_grid + grid_sample(align_corners=False)), and random_rotation / random_affine
// must draw like RandomRotation / RandomAffine.get_params. References here are independent:
// matrices worked out by hand, exact pixel permutations, and a naive double-precision
// sampler that builds the forward matrix from torchvision's documented factors
// R * S * SHy * SHx and inverts it numerically.
#include "tests/test_data.h"
#include "transforms/affine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "transforms/registry.h"
#include "transforms/spec.h"

namespace pipebench {
namespace {

using testing::make_op;
using testing::run_op;

constexpr double kPi = 3.14159265358979323846;

uint8_t px(const Image& img, int y, int x, int c) { return img.row(y)[x * img.channels + c]; }

Image noise(int h, int w, int c, uint64_t seed) {
  Image img;
  img.resize(h, w, c);
  Rng rng(seed);
  for (size_t i = 0; i < img.size_bytes(); ++i)
    img.data[i] = static_cast<uint8_t>(rng.next_u64() >> 56);
  return img;
}

Image smooth(int h, int w) {
  Image img;
  img.resize(h, w, 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        img.row(y)[x * 3 + c] =
            static_cast<uint8_t>(127.5 + 120.0 * std::sin(x * 0.05 + c) * std::cos(y * 0.04));
  return img;
}

// --- the naive reference ----------------------------------------------------------------------

struct Mat2 {
  double a, b, c, d;  // [[a, b], [c, d]]
  Mat2 operator*(const Mat2& o) const {
    return {a * o.a + b * o.c, a * o.b + b * o.d, c * o.a + d * o.c, c * o.b + d * o.d};
  }
};

// The input position (pixel index, centre of pixel i at i) that output pixel (x, y) samples:
// the forward map about the centre is q -> RSS q + t (torchvision's comment in
// _get_inverse_affine_matrix: RSS = R(a) * S(s) * SHy(sy) * SHx(sx), SHx(s) = [1, -tan s;
// 0, 1], SHy(s) = [1, 0; -tan s, 1]), so the sample is RSS^-1 (p - t) for the output pixel's
// centre p, in coordinates centred on the image (pixel centres at i + 0.5 - size / 2).
struct Reference {
  double inv[4];
  double tx, ty;
  int h, w;
  Reference(const AffineParams& p, int height, int width)
      : tx(p.translate[0]), ty(p.translate[1]), h(height), w(width) {
    const double r = p.angle * kPi / 180, sx = p.shear[0] * kPi / 180, sy = p.shear[1] * kPi / 180;
    const Mat2 rot{std::cos(r), -std::sin(r), std::sin(r), std::cos(r)};
    const Mat2 scale{p.scale, 0, 0, p.scale};
    const Mat2 shy{1, 0, -std::tan(sy), 1}, shx{1, -std::tan(sx), 0, 1};
    const Mat2 f = rot * scale * shy * shx;
    const double det = f.a * f.d - f.b * f.c;
    inv[0] = f.d / det;
    inv[1] = -f.b / det;
    inv[2] = -f.c / det;
    inv[3] = f.a / det;
  }
  void position(int x, int y, double& ix, double& iy) const {
    const double u = x + 0.5 - w / 2.0 - tx, v = y + 0.5 - h / 2.0 - ty;
    ix = inv[0] * u + inv[1] * v + w / 2.0 - 0.5;
    iy = inv[2] * u + inv[3] * v + h / 2.0 - 0.5;
  }
};

// grid_sample(nearest) with fill outside.
double ref_nearest(const Image& s, double ix, double iy, int c, double fill) {
  const double xr = std::nearbyint(ix), yr = std::nearbyint(iy);
  if (xr < 0 || yr < 0 || xr >= s.width || yr >= s.height) return fill;
  return px(s, static_cast<int>(yr), static_cast<int>(xr), c);
}

// grid_sample(bilinear, zeros padding), then torchvision's fill blend through the mask
// (_apply_grid_transform): img * mask + (1 - mask) * fill.
double ref_bilinear(const Image& s, double ix, double iy, int c, std::optional<double> fill,
                    bool* all_inside = nullptr) {
  const double x0 = std::floor(ix), y0 = std::floor(iy);
  const double fx = ix - x0, fy = iy - y0;
  double v = 0, mask = 0;
  int inside = 0;
  for (int k = 0; k < 4; ++k) {
    const int xi = static_cast<int>(x0) + (k & 1), yi = static_cast<int>(y0) + (k >> 1);
    const double wt = ((k & 1) ? fx : 1 - fx) * ((k >> 1) ? fy : 1 - fy);
    if (xi < 0 || yi < 0 || xi >= s.width || yi >= s.height) continue;
    v += wt * px(s, yi, xi, c);
    mask += wt;
    ++inside;
  }
  if (all_inside) *all_inside = inside == 4;
  return fill ? v * mask + (1 - mask) * *fill : v;
}

// --- inverse_affine_matrix ---------------------------------------------------------------------

void expect_matrix(const AffineParams& p, const std::array<double, 6>& want) {
  const auto m = inverse_affine_matrix(p);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(m[i], want[i], 1e-6) << "element " << i;
}

TEST(InverseAffineMatrix, HandComputedCases) {
  // Identity.
  expect_matrix(AffineParams{}, {1, 0, 0, 0, 1, 0});
  // angle 90: a = cos 90 = 0, b = -sin 90 = -1, c = sin 90 = 1, d = 0; inverse [d, -b, -c, a].
  AffineParams r90;
  r90.angle = 90;
  expect_matrix(r90, {0, 1, 0, -1, 0, 0});
  // Translation (5, -3): the inverse translates by (-5, 3).
  AffineParams t;
  t.translate = {5, -3};
  expect_matrix(t, {1, 0, -5, 0, 1, 3});
  // Shear x 45: a = 1, b = -tan 45 = -1, c = 0, d = 1 -> [1, 1, 0, 0, 1, 0].
  AffineParams shx;
  shx.shear = {45, 0};
  expect_matrix(shx, {1, 1, 0, 0, 1, 0});
  // Shear y 30, scale 2: a = 1, b = 0, c = -tan 30, d = 1 -> [1, 0, 0, tan 30, 1, 0] / 2.
  AffineParams shy;
  shy.shear = {0, 30};
  shy.scale = 2;
  expect_matrix(shy, {0.5, 0, 0, std::tan(kPi / 6) / 2, 0.5, 0});
  // Rotation 30 with translation (2, 1): [cos, sin, -2 cos - sin, -sin, cos, 2 sin - cos].
  AffineParams rt;
  rt.angle = 30;
  rt.translate = {2, 1};
  const double c = std::cos(kPi / 6), s = 0.5;
  expect_matrix(rt, {c, s, -2 * c - s, -s, c, 2 * s - c});
}

TEST(InverseAffineMatrix, InvertsTheDocumentedForwardFactors) {
  Rng rng(7);
  for (int i = 0; i < 20; ++i) {
    AffineParams p;
    p.angle = static_cast<float>(rng.uniform(-180, 180));
    p.translate = {static_cast<float>(rng.uniform(-20, 20)),
                   static_cast<float>(rng.uniform(-20, 20))};
    p.scale = static_cast<float>(rng.uniform(0.5, 2));
    p.shear = {static_cast<float>(rng.uniform(-40, 40)), static_cast<float>(rng.uniform(-40, 40))};
    const Reference ref(p, 0, 0);
    const auto m = inverse_affine_matrix(p);
    EXPECT_NEAR(m[0], ref.inv[0], 1e-5);
    EXPECT_NEAR(m[1], ref.inv[1], 1e-5);
    EXPECT_NEAR(m[3], ref.inv[2], 1e-5);
    EXPECT_NEAR(m[4], ref.inv[3], 1e-5);
    // The constant column: the pre-image of the centre, RSS^-1 (-t).
    EXPECT_NEAR(m[2], ref.inv[0] * -p.translate[0] + ref.inv[1] * -p.translate[1], 1e-4);
    EXPECT_NEAR(m[5], ref.inv[2] * -p.translate[0] + ref.inv[3] * -p.translate[1], 1e-4);
  }
}

// --- exact cases ---------------------------------------------------------------------------------

TEST(Rotate, QuarterAndHalfTurnsAreExactPermutations) {
  // With the pixel-centre convention every sample of a 90/180-degree turn of a square lands
  // on a pixel centre, for odd and even sides alike (and for 180 degrees on any rectangle):
  // rotate(90) is torch.rot90 (counter-clockwise): out(y, x) = in(x, N - 1 - y).
  for (const int n : {5, 6, 7, 8}) {
    const Image in = noise(n, n, 3, n);
    for (const auto interp : {WarpInterpolation::kNearest, WarpInterpolation::kBilinear}) {
      Image r90, r180, r270;
      rotate(in, r90, 90, interp, std::array<float, 3>{1, 2, 3});
      rotate(in, r180, 180, interp, std::array<float, 3>{1, 2, 3});
      rotate(in, r270, -90, interp);
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x)
          for (int c = 0; c < 3; ++c) {
            ASSERT_EQ(px(r90, y, x, c), px(in, x, n - 1 - y, c)) << n << " " << y << "," << x;
            ASSERT_EQ(px(r180, y, x, c), px(in, n - 1 - y, n - 1 - x, c)) << n;
            ASSERT_EQ(px(r270, y, x, c), px(in, n - 1 - x, y, c)) << n;
          }
    }
  }
  const Image rect = noise(4, 7, 1, 3);
  Image r180;
  rotate(rect, r180, 180, WarpInterpolation::kNearest);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 7; ++x) ASSERT_EQ(px(r180, y, x, 0), px(rect, 3 - y, 6 - x, 0));
}

TEST(Affine, PositiveAngleIsClockwise) {
  // torchvision affine(): clockwise positive, the opposite of rotate().
  const Image in = noise(6, 6, 3, 11);
  Image out;
  AffineParams p;
  p.angle = 90;
  affine(in, out, p, WarpInterpolation::kNearest);
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 6; ++x) ASSERT_EQ(px(out, y, x, 0), px(in, 5 - x, y, 0));
}

TEST(Affine, IdentityReturnsTheInput) {
  for (const int c : {1, 3}) {
    const Image in = noise(9, 13, c, 5);
    for (const auto interp : {WarpInterpolation::kNearest, WarpInterpolation::kBilinear}) {
      Image out;
      affine(in, out, AffineParams{}, interp, std::array<float, 3>{50, 60, 70});
      ASSERT_EQ(out.height, 9);
      ASSERT_EQ(out.width, 13);
      ASSERT_EQ(out.channels, c);
      EXPECT_EQ(std::vector<uint8_t>(out.data.begin(), out.data.begin() + out.size_bytes()),
                in.data);
    }
  }
}

TEST(Affine, IntegerTranslationShiftsAndFills) {
  const Image in = noise(10, 12, 3, 9);
  AffineParams p;
  p.translate = {3, -2};  // content moves right 3, up 2
  const std::array<float, 3> fill = {7, 8, 9};
  for (const auto interp : {WarpInterpolation::kNearest, WarpInterpolation::kBilinear}) {
    Image out;
    affine(in, out, p, interp, fill);
    for (int y = 0; y < 10; ++y)
      for (int x = 0; x < 12; ++x)
        for (int c = 0; c < 3; ++c) {
          const int sx = x - 3, sy = y + 2;
          const bool inside = sx >= 0 && sy >= 0 && sx < 12 && sy < 10;
          ASSERT_EQ(px(out, y, x, c), inside ? px(in, sy, sx, c) : fill[c]) << y << "," << x;
        }
  }
}

// --- against the naive sampler -------------------------------------------------------------------

AffineParams random_params(Rng& rng) {
  AffineParams p;
  p.angle = static_cast<float>(rng.uniform(-180, 180));
  p.translate = {static_cast<float>(rng.uniform(-10, 10)),
                 static_cast<float>(rng.uniform(-10, 10))};
  p.scale = static_cast<float>(rng.uniform(0.7, 1.4));
  p.shear = {static_cast<float>(rng.uniform(-20, 20)), static_cast<float>(rng.uniform(-10, 10))};
  return p;
}

TEST(Affine, BilinearWithinOneLevelOfTheNaiveSampler) {
  // Smooth and noise images (noise: the hardest case for position rounding), interior and
  // border (the fill blended through the mask), fill given and not.
  Rng rng(21);
  for (const bool textured : {false, true}) {
    const Image in = textured ? noise(61, 74, 3, 2) : smooth(61, 74);
    for (int trial = 0; trial < 12; ++trial) {
      const AffineParams p = random_params(rng);
      const std::optional<std::array<float, 3>> fill =
          trial % 2 ? std::optional<std::array<float, 3>>({200, 30, 90}) : std::nullopt;
      Image out;
      affine(in, out, p, WarpInterpolation::kBilinear, fill);
      const Reference ref(p, in.height, in.width);
      int interior = 0;
      for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x) {
          double ix, iy;
          ref.position(x, y, ix, iy);
          bool all_inside = false;
          for (int c = 0; c < 3; ++c) {
            const double want =
                ref_bilinear(in, ix, iy, c, fill ? std::optional<double>((*fill)[c]) : std::nullopt,
                             &all_inside);
            ASSERT_LE(std::fabs(px(out, y, x, c) - want), 1.0)
                << "trial " << trial << " pixel " << y << "," << x << " at " << ix << "," << iy;
          }
          interior += all_inside;
        }
      EXPECT_GT(interior, in.height * in.width / 4);  // the warp kept most of the image
    }
  }
}

TEST(Affine, BilinearRowShiftsWithinOneLevelOfTheNaiveSampler) {
  // ShearX and fractional translations: whole row segments blended with one set of
  // weights (affine.cpp blend_rows), for 1, 3 and 4 channels.
  Rng rng(23);
  for (const int channels : {1, 3, 4}) {
    const Image in = noise(45, 131, channels, static_cast<uint64_t>(channels));
    for (int trial = 0; trial < 8; ++trial) {
      AffineParams p;
      p.translate = {static_cast<float>(rng.uniform(-20, 20)), static_cast<float>(rng.uniform(-9, 9))};
      if (trial % 2) p.shear = {static_cast<float>(rng.uniform(-30, 30)), 0.0f};
      const std::optional<std::array<float, 3>> fill =
          trial % 4 < 2 ? std::optional<std::array<float, 3>>({200, 30, 90}) : std::nullopt;
      Image out;
      affine(in, out, p, WarpInterpolation::kBilinear, fill);
      const Reference ref(p, in.height, in.width);
      for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x) {
          double ix, iy;
          ref.position(x, y, ix, iy);
          for (int c = 0; c < channels; ++c) {
            const std::optional<double> f =
                fill ? std::optional<double>((*fill)[std::min(c, 2)]) : std::nullopt;
            ASSERT_LE(std::fabs(px(out, y, x, c) - ref_bilinear(in, ix, iy, c, f)), 1.0)
                << channels << " channels, trial " << trial << " pixel " << y << "," << x;
          }
        }
    }
  }
}

TEST(Affine, NearestMatchesTheNaiveSampler) {
  Rng rng(5);
  const Image in = noise(57, 64, 3, 8);
  for (int trial = 0; trial < 12; ++trial) {
    const AffineParams p = random_params(rng);
    Image out;
    affine(in, out, p, WarpInterpolation::kNearest, std::array<float, 3>{1, 2, 3});
    const Reference ref(p, in.height, in.width);
    int differ = 0;
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < in.width; ++x) {
        double ix, iy;
        ref.position(x, y, ix, iy);
        for (int c = 0; c < 3; ++c) differ += px(out, y, x, c) != ref_nearest(in, ix, iy, c, c + 1);
      }
    // Only a sample within ~1e-9 pixel of a half-pixel boundary could pick the other pixel.
    EXPECT_EQ(differ, 0) << "trial " << trial;
  }
}

TEST(Affine, TinyImagesMatchTheNaiveSampler) {
  // Images too small for the fast inner loops' taps (1 pixel wide or tall, 2 x 2).
  Rng rng(17);
  for (const auto& [h, w] : {std::pair{1, 1}, {1, 5}, {5, 1}, {2, 2}, {2, 3}, {3, 2}}) {
    for (const int channels : {1, 3}) {
      const Image in = noise(h, w, channels, static_cast<uint64_t>(h * 10 + w));
      for (int trial = 0; trial < 8; ++trial) {
        const AffineParams p = random_params(rng);
        const Reference ref(p, h, w);
        Image near, lin;
        affine(in, near, p, WarpInterpolation::kNearest, std::array<float, 3>{9, 9, 9});
        affine(in, lin, p, WarpInterpolation::kBilinear, std::array<float, 3>{9, 9, 9});
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x) {
            double ix, iy;
            ref.position(x, y, ix, iy);
            for (int c = 0; c < channels; ++c) {
              ASSERT_EQ(px(near, y, x, c), ref_nearest(in, ix, iy, c, 9)) << h << "x" << w;
              ASSERT_LE(std::fabs(px(lin, y, x, c) - ref_bilinear(in, ix, iy, c, 9.0)), 1.0)
                  << h << "x" << w;
            }
          }
      }
    }
  }
}

// The nearest paths that copy whole runs (affine.cpp: rows shifted by whole pixels for
// ShearX and translations, column runs for ShearY, the vectorised in-span loop for the
// rest) must pick the naive sampler's pixel everywhere: on noise, a wrong source pixel
// shows. Exact half-pixel translations put every sample on a rounding tie (ties to even,
// which no run copy reproduces: the general path takes those rows). A fill whose channels
// differ takes the per-pixel fill loop; images up to 300 wide give ShearY more runs than
// its table holds (the general path again).
int nearest_mismatches(const Image& in, const AffineParams& p,
                       const std::optional<std::array<float, 3>>& fill) {
  Image out;
  affine(in, out, p, WarpInterpolation::kNearest, fill);
  const Reference ref(p, in.height, in.width);
  int differ = 0;
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      double ix, iy;
      ref.position(x, y, ix, iy);
      for (int c = 0; c < in.channels; ++c) {
        const double f = fill ? (*fill)[std::min(c, 2)] : 0.0;
        differ += px(out, y, x, c) != ref_nearest(in, ix, iy, c, f);
      }
    }
  return differ;
}

TEST(Affine, NearestShearsAndShiftsMatchTheNaiveSampler) {
  Rng rng(31);
  for (const auto& [h, w] : {std::pair{57, 64}, {33, 300}, {250, 21}}) {
    for (const int channels : {1, 3, 4}) {
      const Image in = noise(h, w, channels, static_cast<uint64_t>(h * 7 + w + channels));
      for (int trial = 0; trial < 16; ++trial) {
        AffineParams p;
        const auto shear = static_cast<float>(rng.uniform(-60, 60));
        const auto tx = static_cast<float>(rng.uniform(-w, w)), ty = static_cast<float>(rng.uniform(-h, h));
        switch (trial % 4) {
          case 0:  // rows shifted (a corner shear is a centred shear plus a translation)
            p.shear = {shear, 0.0f};
            p.translate = {tx / 4, 0.0f};
            break;
          case 1:  // column runs
            p.shear = {0.0f, shear};
            p.translate = {0.0f, ty / 4};
            break;
          case 2:
            p.translate = {tx, ty};
            break;
          case 3:  // exact ties, across or down
            p.translate = {std::round(tx) + 0.5f, std::round(ty)};
            if (trial % 8 == 7) p.translate = {std::round(tx), std::round(ty) - 0.5f};
            break;
        }
        const std::optional<std::array<float, 3>> fill =
            trial % 3 == 0 ? std::nullopt : std::optional<std::array<float, 3>>({10, 120, 250});
        EXPECT_EQ(nearest_mismatches(in, p, fill), 0)
            << h << "x" << w << "x" << channels << " trial " << trial << " shear " << shear;
      }
    }
  }
}

TEST(Affine, NearestRotationsMatchTheNaiveSampler) {
  // Long rows: the vectorised span (8 pixels at a time) with its scalar tail.
  Rng rng(37);
  for (const auto& [h, w] : {std::pair{224, 224}, {41, 250}, {19, 23}}) {
    const Image in = noise(h, w, 3, static_cast<uint64_t>(h + w));
    for (int trial = 0; trial < 10; ++trial) {
      AffineParams p;
      p.angle = static_cast<float>(rng.uniform(-180, 180));
      if (trial % 2) p.scale = static_cast<float>(rng.uniform(0.5, 2.0));
      const std::optional<std::array<float, 3>> fill =
          trial % 3 ? std::optional<std::array<float, 3>>({0, 0, 0}) : std::nullopt;
      EXPECT_EQ(nearest_mismatches(in, p, fill), 0) << h << "x" << w << " angle " << p.angle;
    }
  }
}

TEST(Affine, BilinearWholePixelShiftsAreCopies) {
  // A translation by whole pixels weighs one tap by 1: the source pixel, or the rounded fill.
  const Image in = noise(23, 31, 3, 4);
  for (const auto& [dx, dy] : {std::pair{5, -3}, {-40, 0}, {0, 22}, {0, 0}}) {
    for (const auto& fill : {std::optional<std::array<float, 3>>{},
                             std::optional<std::array<float, 3>>({2.5f, 3.5f, 200.4f})}) {
      AffineParams p;
      p.translate = {static_cast<float>(dx), static_cast<float>(dy)};
      Image out;
      affine(in, out, p, WarpInterpolation::kBilinear, fill);
      const std::array<int, 3> rounded = {2, 4, 200};  // half to even
      for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x)
          for (int c = 0; c < 3; ++c) {
            const int sx = x - dx, sy = y - dy;
            const bool inside = sx >= 0 && sy >= 0 && sx < in.width && sy < in.height;
            const int want = inside ? px(in, sy, sx, c) : fill ? rounded[c] : 0;
            ASSERT_EQ(px(out, y, x, c), want) << dx << "," << dy << " pixel " << y << "," << x;
          }
    }
  }
}

TEST(Affine, ReusesTheOutputBuffer) {
  const Image in = noise(32, 32, 3, 1);
  Image out;
  AffineParams p;
  p.angle = 10;
  affine(in, out, p, WarpInterpolation::kBilinear);
  const uint8_t* storage = out.ptr();
  p.angle = 20;
  affine(in, out, p, WarpInterpolation::kNearest);
  EXPECT_EQ(out.ptr(), storage);
}

TEST(Affine, RejectsBadInput) {
  const Image in = noise(8, 8, 3, 1);
  Image out;
  AffineParams zero_scale;
  zero_scale.scale = 0;
  EXPECT_THROW(affine(in, out, zero_scale, WarpInterpolation::kNearest), std::invalid_argument);
  AffineParams nan_angle;
  nan_angle.angle = std::nanf("");
  EXPECT_THROW(affine(in, out, nan_angle, WarpInterpolation::kNearest), std::invalid_argument);
  EXPECT_THROW(rotate(Image{}, out, 10, WarpInterpolation::kNearest), std::invalid_argument);
  Image same = in;
  EXPECT_THROW(rotate(same, same, 10, WarpInterpolation::kNearest), std::invalid_argument);
}

// --- operators
// ------------------------------------------------------------------------------------


TEST(AffineOps, ZeroRangesAreTheIdentity) {
  const Image in = noise(20, 17, 3, 4);
  EXPECT_EQ(run_op("{random_rotation: {degrees: [0, 0]}}", in).data, in.data);
  EXPECT_EQ(run_op("{random_rotation: {degrees: 0, interpolation: bilinear}}", in).data, in.data);
  EXPECT_EQ(run_op("{random_affine: {degrees: 0}}", in).data, in.data);
  EXPECT_EQ(
      run_op("{random_affine: {degrees: 0, translate: [0, 0], scale: [1, 1], shear: 0}}", in).data,
      in.data);
}

TEST(AffineOps, FixedAnglesFollowTorchvisionsSigns) {
  // RandomRotation -> F.rotate: counter-clockwise; RandomAffine -> F.affine: clockwise.
  const Image in = noise(7, 7, 3, 6);
  const Image ccw = run_op("{random_rotation: {degrees: [90, 90]}}", in);
  const Image cw = run_op("{random_affine: {degrees: [90, 90]}}", in);
  for (int y = 0; y < 7; ++y)
    for (int x = 0; x < 7; ++x) {
      ASSERT_EQ(px(ccw, y, x, 1), px(in, x, 6 - y, 1));
      ASSERT_EQ(px(cw, y, x, 1), px(in, 6 - x, y, 1));
    }
}

TEST(AffineOps, SameSeedSameOutput) {
  const Image in = noise(40, 30, 3, 3);
  const std::string rot =
      "{random_rotation: {degrees: 45, interpolation: bilinear, fill: [10, 20, 30]}}";
  const std::string aff =
      "{random_affine: {degrees: 30, translate: [0.2, 0.1], scale: [0.8, 1.2], shear: [-5, 5, -5, "
      "5]}}";
  for (const auto& spec : {rot, aff}) {
    EXPECT_EQ(run_op(spec, in, 5).data, run_op(spec, in, 5).data);
    EXPECT_NE(run_op(spec, in, 5).data, run_op(spec, in, 6).data);
  }
}

TEST(AffineOps, RandomAffineDrawsInGetParamsOrder) {
  // degrees [0, 0] and translate only: the image shifts by whole pixels, tx then ty drawn
  // after the angle, each rounded half to even (Python's round).
  const Image in = noise(20, 30, 3, 12);
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    Rng rng(seed);
    rng.uniform(0, 0);  // the angle
    const double tx = std::nearbyint(rng.uniform(-0.3 * 30, 0.3 * 30));
    const double ty = std::nearbyint(rng.uniform(-0.2 * 20, 0.2 * 20));
    const Image out =
        run_op("{random_affine: {degrees: 0, translate: [0.3, 0.2], fill: 5}}", in, seed);
    for (int y = 0; y < 20; ++y)
      for (int x = 0; x < 30; ++x) {
        const int sx = x - static_cast<int>(tx), sy = y - static_cast<int>(ty);
        const bool inside = sx >= 0 && sy >= 0 && sx < 30 && sy < 20;
        ASSERT_EQ(px(out, y, x, 2), inside ? px(in, sy, sx, 2) : 5) << "seed " << seed;
      }
  }
}

TEST(AffineOps, RandomRotationMatchesRotateAtTheDrawnAngle) {
  const Image in = noise(25, 25, 3, 13);
  Rng rng(9);
  const double angle = rng.uniform(-30, 30);
  Image want;
  rotate(in, want, static_cast<float>(angle), WarpInterpolation::kBilinear,
         std::array<float, 3>{4, 4, 4});
  EXPECT_EQ(
      run_op("{random_rotation: {degrees: 30, interpolation: bilinear, fill: 4}}", in, 9).data,
      want.data);
}

TEST(AffineOps, BadParametersAreRejected) {
  const auto bad = [](const std::string& yaml) {
    EXPECT_THROW(make_op(yaml), std::invalid_argument) << yaml;
  };
  bad("{random_rotation: {degrees: -5}}");         // a single number must be >= 0
  bad("{random_rotation: {degrees: [10, -10]}}");  // min > max
  bad("{random_rotation: {degrees: [1, 2, 3]}}");
  bad("{random_rotation: {degrees: 10, expand: true}}");
  bad("{random_rotation: {degrees: 10, fill: [1, 2]}}");
  bad("{random_rotation: {degrees: 10, fill: 300}}");
  bad("{random_rotation: {degrees: 10, interpolation: bicubic}}");
  bad("{random_rotation: {}}");  // degrees is required
  bad("{random_affine: {degrees: 10, scale: [0, 1]}}");
  bad("{random_affine: {degrees: 10, scale: [1.2, 0.8]}}");
  bad("{random_affine: {degrees: 10, scale: [1]}}");
  bad("{random_affine: {degrees: 10, translate: [1.5, 0]}}");
  bad("{random_affine: {degrees: 10, translate: [0.1]}}");
  bad("{random_affine: {degrees: 10, shear: [1, 2, 3]}}");
  bad("{random_affine: {degrees: 10, shear: -5}}");
  bad("{random_affine: {degrees: 10, shear: [0, 5, 5, 0]}}");
  EXPECT_NO_THROW(
      make_op("{random_affine: {degrees: [-10, 20], translate: [0.1, 0.2], scale: [0.5, 2], "
              "shear: [-5, 5, -3, 3], interpolation: bilinear, fill: [1, 2, 3]}}"));
}

TEST(AffineOps, ShapesAndChannels) {
  auto op = make_op("{random_rotation: {degrees: 10, fill: [1, 2, 3]}}");
  const DataShape image{false, 3, 224, 224};
  const DataShape out = op->output_shape(image);
  EXPECT_EQ(out.height, 224);
  EXPECT_EQ(out.width, 224);
  EXPECT_FALSE(out.tensor);
  EXPECT_THROW(op->output_shape(DataShape{true, 3, 224, 224}), std::invalid_argument);
  EXPECT_THROW(op->output_shape(DataShape{false, 1, 224, 224}), std::invalid_argument);  // 3 fills
  // A gray image with one fill value works.
  const Image gray = noise(9, 9, 1, 2);
  EXPECT_EQ(run_op("{random_affine: {degrees: 0, fill: 7}}", gray).data, gray.data);
}

}  // namespace
}  // namespace pipebench
