// The augmentation policies (augment.h): _apply_op, the op spaces' magnitude mappings, and
// the policies' draws. Sources: torchvision 0.14 transforms/autoaugment.py; timm
// timm/data/auto_augment.py for the timm options (see augment.h).
#include "transforms/augment.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

#include "transforms/photometric.h"

namespace pipebench {
namespace {

constexpr std::array<std::string_view, kAugOpCount> kOpNames = {
    "Identity",     "ShearX",   "ShearY",   "TranslateX",  "TranslateY",    "Rotate",
    "Brightness",   "Color",    "Contrast", "Sharpness",   "Posterize",     "Solarize",
    "AutoContrast", "Equalize", "Invert",   "SolarizeAdd", "TranslateXRel", "TranslateYRel"};

// torchvision AutoAugment._get_policies(AutoAugmentPolicy.IMAGENET).
constexpr std::array<AutoAugmentSubPolicy, 25> kImageNetPolicy = {{
    {{{AugOp::kPosterize, 0.4, 8}, {AugOp::kRotate, 0.6, 9}}},
    {{{AugOp::kSolarize, 0.6, 5}, {AugOp::kAutoContrast, 0.6, -1}}},
    {{{AugOp::kEqualize, 0.8, -1}, {AugOp::kEqualize, 0.6, -1}}},
    {{{AugOp::kPosterize, 0.6, 7}, {AugOp::kPosterize, 0.6, 6}}},
    {{{AugOp::kEqualize, 0.4, -1}, {AugOp::kSolarize, 0.2, 4}}},
    {{{AugOp::kEqualize, 0.4, -1}, {AugOp::kRotate, 0.8, 8}}},
    {{{AugOp::kSolarize, 0.6, 3}, {AugOp::kEqualize, 0.6, -1}}},
    {{{AugOp::kPosterize, 0.8, 5}, {AugOp::kEqualize, 1.0, -1}}},
    {{{AugOp::kRotate, 0.2, 3}, {AugOp::kSolarize, 0.6, 8}}},
    {{{AugOp::kEqualize, 0.6, -1}, {AugOp::kPosterize, 0.4, 6}}},
    {{{AugOp::kRotate, 0.8, 8}, {AugOp::kColor, 0.4, 0}}},
    {{{AugOp::kRotate, 0.4, 9}, {AugOp::kEqualize, 0.6, -1}}},
    {{{AugOp::kEqualize, 0.0, -1}, {AugOp::kEqualize, 0.8, -1}}},
    {{{AugOp::kInvert, 0.6, -1}, {AugOp::kEqualize, 1.0, -1}}},
    {{{AugOp::kColor, 0.6, 4}, {AugOp::kContrast, 1.0, 8}}},
    {{{AugOp::kRotate, 0.8, 8}, {AugOp::kColor, 1.0, 2}}},
    {{{AugOp::kColor, 0.8, 8}, {AugOp::kSolarize, 0.8, 7}}},
    {{{AugOp::kSharpness, 0.4, 7}, {AugOp::kInvert, 0.6, -1}}},
    {{{AugOp::kShearX, 0.6, 5}, {AugOp::kEqualize, 1.0, -1}}},
    {{{AugOp::kColor, 0.4, 0}, {AugOp::kEqualize, 0.6, -1}}},
    {{{AugOp::kEqualize, 0.4, -1}, {AugOp::kSolarize, 0.2, 4}}},
    {{{AugOp::kSolarize, 0.6, 5}, {AugOp::kAutoContrast, 0.6, -1}}},
    {{{AugOp::kInvert, 0.6, -1}, {AugOp::kEqualize, 1.0, -1}}},
    {{{AugOp::kColor, 0.6, 4}, {AugOp::kContrast, 1.0, 8}}},
    {{{AugOp::kEqualize, 0.8, -1}, {AugOp::kEqualize, 0.6, -1}}},
}};

// torchvision AutoAugment._get_policies(AutoAugmentPolicy.CIFAR10).
constexpr std::array<AutoAugmentSubPolicy, 25> kCifar10Policy = {{
    {{{AugOp::kInvert, 0.1, -1}, {AugOp::kContrast, 0.2, 6}}},
    {{{AugOp::kRotate, 0.7, 2}, {AugOp::kTranslateX, 0.3, 9}}},
    {{{AugOp::kSharpness, 0.8, 1}, {AugOp::kSharpness, 0.9, 3}}},
    {{{AugOp::kShearY, 0.5, 8}, {AugOp::kTranslateY, 0.7, 9}}},
    {{{AugOp::kAutoContrast, 0.5, -1}, {AugOp::kEqualize, 0.9, -1}}},
    {{{AugOp::kShearY, 0.2, 7}, {AugOp::kPosterize, 0.3, 7}}},
    {{{AugOp::kColor, 0.4, 3}, {AugOp::kBrightness, 0.6, 7}}},
    {{{AugOp::kSharpness, 0.3, 9}, {AugOp::kBrightness, 0.7, 9}}},
    {{{AugOp::kEqualize, 0.6, -1}, {AugOp::kEqualize, 0.5, -1}}},
    {{{AugOp::kContrast, 0.6, 7}, {AugOp::kSharpness, 0.6, 5}}},
    {{{AugOp::kColor, 0.7, 7}, {AugOp::kTranslateX, 0.5, 8}}},
    {{{AugOp::kEqualize, 0.3, -1}, {AugOp::kAutoContrast, 0.4, -1}}},
    {{{AugOp::kTranslateY, 0.4, 3}, {AugOp::kSharpness, 0.2, 6}}},
    {{{AugOp::kBrightness, 0.9, 6}, {AugOp::kColor, 0.2, 8}}},
    {{{AugOp::kSolarize, 0.5, 2}, {AugOp::kInvert, 0.0, -1}}},
    {{{AugOp::kEqualize, 0.2, -1}, {AugOp::kAutoContrast, 0.6, -1}}},
    {{{AugOp::kEqualize, 0.2, -1}, {AugOp::kEqualize, 0.6, -1}}},
    {{{AugOp::kColor, 0.9, 9}, {AugOp::kEqualize, 0.6, -1}}},
    {{{AugOp::kAutoContrast, 0.8, -1}, {AugOp::kSolarize, 0.2, 8}}},
    {{{AugOp::kBrightness, 0.1, 3}, {AugOp::kColor, 0.7, 0}}},
    {{{AugOp::kSolarize, 0.4, 5}, {AugOp::kAutoContrast, 0.9, -1}}},
    {{{AugOp::kTranslateY, 0.9, 9}, {AugOp::kTranslateY, 0.7, 9}}},
    {{{AugOp::kAutoContrast, 0.9, -1}, {AugOp::kSolarize, 0.8, 3}}},
    {{{AugOp::kEqualize, 0.8, -1}, {AugOp::kInvert, 0.1, -1}}},
    {{{AugOp::kTranslateY, 0.7, 9}, {AugOp::kAutoContrast, 0.9, -1}}},
}};

// torchvision AutoAugment._get_policies(AutoAugmentPolicy.SVHN).
constexpr std::array<AutoAugmentSubPolicy, 25> kSvhnPolicy = {{
    {{{AugOp::kShearX, 0.9, 4}, {AugOp::kInvert, 0.2, -1}}},
    {{{AugOp::kShearY, 0.9, 8}, {AugOp::kInvert, 0.7, -1}}},
    {{{AugOp::kEqualize, 0.6, -1}, {AugOp::kSolarize, 0.6, 6}}},
    {{{AugOp::kInvert, 0.9, -1}, {AugOp::kEqualize, 0.6, -1}}},
    {{{AugOp::kEqualize, 0.6, -1}, {AugOp::kRotate, 0.9, 3}}},
    {{{AugOp::kShearX, 0.9, 4}, {AugOp::kAutoContrast, 0.8, -1}}},
    {{{AugOp::kShearY, 0.9, 8}, {AugOp::kInvert, 0.4, -1}}},
    {{{AugOp::kShearY, 0.9, 5}, {AugOp::kSolarize, 0.2, 6}}},
    {{{AugOp::kInvert, 0.9, -1}, {AugOp::kAutoContrast, 0.8, -1}}},
    {{{AugOp::kEqualize, 0.6, -1}, {AugOp::kRotate, 0.9, 3}}},
    {{{AugOp::kShearX, 0.9, 4}, {AugOp::kSolarize, 0.3, 3}}},
    {{{AugOp::kShearY, 0.8, 8}, {AugOp::kInvert, 0.7, -1}}},
    {{{AugOp::kEqualize, 0.9, -1}, {AugOp::kTranslateY, 0.6, 6}}},
    {{{AugOp::kInvert, 0.9, -1}, {AugOp::kEqualize, 0.6, -1}}},
    {{{AugOp::kContrast, 0.3, 3}, {AugOp::kRotate, 0.8, 4}}},
    {{{AugOp::kInvert, 0.8, -1}, {AugOp::kTranslateY, 0.0, 2}}},
    {{{AugOp::kShearY, 0.7, 6}, {AugOp::kSolarize, 0.4, 8}}},
    {{{AugOp::kInvert, 0.6, -1}, {AugOp::kRotate, 0.8, 4}}},
    {{{AugOp::kShearY, 0.3, 7}, {AugOp::kTranslateX, 0.9, 3}}},
    {{{AugOp::kShearX, 0.1, 6}, {AugOp::kInvert, 0.6, -1}}},
    {{{AugOp::kSolarize, 0.7, 2}, {AugOp::kTranslateY, 0.6, 7}}},
    {{{AugOp::kShearY, 0.8, 4}, {AugOp::kInvert, 0.8, -1}}},
    {{{AugOp::kShearX, 0.7, 9}, {AugOp::kTranslateY, 0.8, 3}}},
    {{{AugOp::kShearY, 0.8, 5}, {AugOp::kAutoContrast, 0.7, -1}}},
    {{{AugOp::kShearX, 0.7, 2}, {AugOp::kInvert, 0.1, -1}}},
}};

// torch.linspace(start, end, steps)[index] as its CPU scalar path computes it, in float32:
// start + step * i below the halfway index, end - step * (steps - 1 - i) from it. A
// fractional index (magnitude noise) interpolates along the same formula.
float torch_linspace(float start, float end, int steps, double index) {
  const float step = (end - start) / static_cast<float>(steps - 1);
  if (index < steps / 2) return start + step * static_cast<float>(index);
  return end - step * static_cast<float>(steps - 1 - index);
}

// The corner-centred shear of _apply_op's ShearX/ShearY (F.affine(center=[0, 0])) as a
// shear about the image centre plus a translation: shearing about c equals shearing about
// the centre and translating by (I - Sh) c, with c = (-W/2, -H/2) in centred coordinates
// and Sh torchvision's shear matrix [[1, -tan(sx)], [0, 1]] (x) or [[1, 0], [-tan(sy), 1]] (y).
AffineParams corner_shear(double m, bool along_x, const Image& img) {
  AffineParams p;
  const float degrees = static_cast<float>(std::atan(m) * 180.0 / std::numbers::pi);
  const double t = std::tan(static_cast<double>(degrees) * std::numbers::pi / 180.0);
  if (along_x) {
    p.shear = {degrees, 0.0f};
    p.translate = {static_cast<float>(-t * img.height / 2.0), 0.0f};
  } else {
    p.shear = {0.0f, degrees};
    p.translate = {0.0f, static_cast<float>(-t * img.width / 2.0)};
  }
  return p;
}

AffineParams translation(float dx, float dy) {
  AffineParams p;
  p.translate = {dx, dy};
  return p;
}

void warp(Image& img, const AffineParams& p, const WarpOptions& w, Image& scratch) {
  affine(img, scratch, p, w.interpolation, w.fill);
  std::swap(img, scratch);
}

// timm solarize_add: values below `threshold` get `add` (saturating); the rest stay.
void solarize_add(Image& img, int add, int threshold) {
  uint8_t* p = img.ptr();
  const size_t n = img.size_bytes();
  if (add >= 0 && add <= 255 && threshold >= 0 && threshold <= 255) {
    // The same values in 8-bit arithmetic, which GCC vectorises (about ten times faster
    // than a table lookup per byte): v + add saturates exactly when v > 255 - add.
    const uint8_t a = static_cast<uint8_t>(add), t = static_cast<uint8_t>(threshold);
    const uint8_t top = static_cast<uint8_t>(255 - a);
    for (size_t i = 0; i < n; ++i) {
      const uint8_t v = p[i];
      const uint8_t added = v > top ? uint8_t{255} : static_cast<uint8_t>(v + a);
      p[i] = v < t ? added : v;
    }
    return;
  }
  std::array<uint8_t, 256> lut;
  for (int v = 0; v < 256; ++v)
    lut[v] = static_cast<uint8_t>(v < threshold ? std::min(255, v + add) : v);
  for (size_t i = 0; i < n; ++i) p[i] = lut[p[i]];
}

double enhance_factor(double m) { return 1.0 + m; }  // torchvision: 1.0 + magnitude, in double

// Python's int(): truncation toward zero.
double py_int(double v) { return std::trunc(v); }

std::span<const AugOpRange> rand_space(bool increasing) {
  if (increasing) return kTimmRandIncreasingSpace;
  return kRandAugmentSpace;
}

// The level of one op under magnitude noise (timm AugmentOp.__call__): uniform in
// [0, magnitude] for timm's "infinite" std (mstd > 100), else N(magnitude, std); clipped to
// [0, top].
double noisy_level(const RandAugmentParams& p, double top, Rng& rng) {
  const double level = p.magnitude_std > 100.0 ? rng.uniform(0.0, p.magnitude)
                                               : p.magnitude + p.magnitude_std * rng.normal();
  return std::clamp(level, 0.0, top);
}

const AugOpRange& auto_augment_range(AugOp op) {
  for (const auto& r : kAutoAugmentSpace)
    if (r.op == op) return r;
  throw std::invalid_argument("auto_augment: " + std::string(aug_op_name(op)) +
                              " is not in AutoAugment's op space");
}

std::string range_error(const std::string& op, const std::string& param, const std::string& range,
                        double got) {
  std::string g = std::to_string(got);
  if (got == std::floor(got)) g = std::to_string(static_cast<long long>(got));
  return op + ": " + param + " must be in " + range + ", got " + g;
}

}  // namespace

std::string_view aug_op_name(AugOp op) { return kOpNames.at(static_cast<size_t>(op)); }

AugOp aug_op_from_name(std::string_view name) {
  for (size_t i = 0; i < kOpNames.size(); ++i)
    if (kOpNames[i] == name) return static_cast<AugOp>(i);
  throw std::invalid_argument("unknown augmentation operation '" + std::string(name) + "'");
}

void apply_augment_op(Image& img, AugOp op, double m, const WarpOptions& w, Image& scratch) {
  switch (op) {
    case AugOp::kIdentity:
      return;
    case AugOp::kShearX:
      return warp(img, corner_shear(m, true, img), w, scratch);
    case AugOp::kShearY:
      return warp(img, corner_shear(m, false, img), w, scratch);
    case AugOp::kTranslateX:
      return warp(img, translation(static_cast<float>(py_int(m)), 0.0f), w, scratch);
    case AugOp::kTranslateY:
      return warp(img, translation(0.0f, static_cast<float>(py_int(m))), w, scratch);
    case AugOp::kRotate:
      rotate(img, scratch, static_cast<float>(m), w.interpolation, w.fill);
      std::swap(img, scratch);
      return;
    case AugOp::kBrightness:
      return adjust_brightness(img, enhance_factor(m));
    case AugOp::kColor:
      return adjust_saturation(img, enhance_factor(m));
    case AugOp::kContrast:
      return adjust_contrast(img, enhance_factor(m));
    case AugOp::kSharpness:
      return adjust_sharpness(img, enhance_factor(m), scratch);
    case AugOp::kPosterize:
      return posterize(img, static_cast<int>(py_int(m)));
    case AugOp::kSolarize:
      return solarize(img, static_cast<float>(m));
    case AugOp::kAutoContrast:
      return autocontrast(img);
    case AugOp::kEqualize:
      return equalize(img);
    case AugOp::kInvert:
      return invert(img);
    case AugOp::kSolarizeAdd:
      return solarize_add(img, static_cast<int>(py_int(m)), 128);
    case AugOp::kTranslateXRel:  // PIL: output x reads input x + m * W, i.e. F.affine's -m * W
      return warp(img, translation(static_cast<float>(-m * img.width), 0.0f), w, scratch);
    case AugOp::kTranslateYRel:
      return warp(img, translation(0.0f, static_cast<float>(-m * img.height)), w, scratch);
  }
  throw std::invalid_argument("apply_augment_op: unknown operation");
}

double augment_magnitude(const AugOpRange& r, double level, int num_bins, int height, int width) {
  const double timm = level / kTimmMaxLevel;  // timm's (level / _LEVEL_DENOM)
  switch (r.scale) {
    case LevelScale::kNone:
      return 0.0;
    case LevelScale::kLinear:
      return torch_linspace(0.0f, static_cast<float>(r.max), num_bins, level);
    case LevelScale::kLinearOfWidth:
      return torch_linspace(0.0f, static_cast<float>(r.max * width), num_bins, level);
    case LevelScale::kLinearOfHeight:
      return torch_linspace(0.0f, static_cast<float>(r.max * height), num_bins, level);
    case LevelScale::kPosterizeBits: {
      // (torch.arange(num_bins) / ((num_bins - 1) / max)).round(): float32, half to even.
      const float q = static_cast<float>(level) / static_cast<float>((num_bins - 1) / r.max);
      return 8.0 - std::nearbyint(q);
    }
    case LevelScale::kSolarizeThreshold:
      return torch_linspace(static_cast<float>(r.max), 0.0f, num_bins, level);
    case LevelScale::kTimmLinear:
    case LevelScale::kTimmEnhanceIncreasing:
      return timm * r.max;
    case LevelScale::kTimmPosterizeIncreasing:
      return 4.0 - py_int(timm * 4.0);
    case LevelScale::kTimmSolarizeIncreasing:
      return 256.0 - py_int(timm * 256.0);
    case LevelScale::kTimmSolarizeAdd:
      return py_int(timm * 110.0);
  }
  return 0.0;
}

double signed_augment_magnitude(const AugOpRange& r, double level, bool negate, int num_bins,
                                int height, int width) {
  double m = augment_magnitude(r, level, num_bins, height, width);
  if (negate && r.signed_magnitude) m = -m;
  // timm _enhance_increasing_level_to_arg: max(0.1, 1.0 + m), as a _apply_op magnitude.
  if (r.scale == LevelScale::kTimmEnhanceIncreasing) m = std::max(0.1, 1.0 + m) - 1.0;
  return m;
}

void check_rand_augment(const RandAugmentParams& p) {
  const std::string op = "rand_augment";
  if (p.num_ops < 0) throw std::invalid_argument(range_error(op, "num_ops", "[0, inf)", p.num_ops));
  if (!(p.magnitude_std >= 0.0))
    throw std::invalid_argument(range_error(op, "magnitude_std", "[0, inf)", p.magnitude_std));
  if (p.increasing) {
    if (p.magnitude < 0 || p.magnitude > kTimmMaxLevel)
      throw std::invalid_argument(
          range_error(op, "magnitude", "[0, 10] (timm's scale, increasing: true)", p.magnitude));
    return;
  }
  if (p.num_magnitude_bins < 2)
    throw std::invalid_argument(
        range_error(op, "num_magnitude_bins", "[2, inf)", p.num_magnitude_bins));
  if (p.magnitude < 0 || p.magnitude > p.num_magnitude_bins - 1)
    throw std::invalid_argument(range_error(
        op, "magnitude",
        "[0, num_magnitude_bins - 1 = " + std::to_string(p.num_magnitude_bins - 1) + "]",
        p.magnitude));
}

void check_trivial_augment_wide(int num_magnitude_bins) {
  if (num_magnitude_bins < 2)
    throw std::invalid_argument(
        range_error("trivial_augment_wide", "num_magnitude_bins", "[2, inf)", num_magnitude_bins));
}

void sample_rand_augment(const RandAugmentParams& p, int height, int width, Rng& rng,
                         std::vector<AugStep>& steps) {
  steps.clear();
  const auto space = rand_space(p.increasing);
  const double top = p.increasing ? kTimmMaxLevel : p.num_magnitude_bins - 1;
  for (int i = 0; i < p.num_ops; ++i) {
    const AugOpRange& r = space[rng.uniform_int(0, static_cast<int64_t>(space.size()) - 1)];
    // timm AugmentOp(prob=0.5): `if random.random() > prob: return img`.
    if (p.increasing && rng.uniform() > 0.5) continue;
    double level = p.magnitude;
    if (p.magnitude_std > 0.0 && r.scale != LevelScale::kNone) level = noisy_level(p, top, rng);
    const bool negate = r.signed_magnitude && rng.uniform_int(0, 1) == 1;
    steps.push_back(
        {r.op, signed_augment_magnitude(r, level, negate, p.num_magnitude_bins, height, width)});
  }
}

void sample_trivial_augment_wide(int num_magnitude_bins, Rng& rng, std::vector<AugStep>& steps) {
  steps.clear();
  const auto& space = kTrivialAugmentWideSpace;
  const AugOpRange& r = space[rng.uniform_int(0, static_cast<int64_t>(space.size()) - 1)];
  double level = 0.0;
  if (r.scale != LevelScale::kNone)
    level = static_cast<double>(rng.uniform_int(0, num_magnitude_bins - 1));
  const bool negate = r.signed_magnitude && rng.uniform_int(0, 1) == 1;
  // TranslateX/Y here are plain pixel ranges (kLinear): the image size is not needed.
  steps.push_back({r.op, signed_augment_magnitude(r, level, negate, num_magnitude_bins, 0, 0)});
}

std::span<const AutoAugmentSubPolicy> auto_augment_policy(AutoAugmentPolicy policy) {
  switch (policy) {
    case AutoAugmentPolicy::kImageNet:
      return kImageNetPolicy;
    case AutoAugmentPolicy::kCifar10:
      return kCifar10Policy;
    case AutoAugmentPolicy::kSvhn:
      return kSvhnPolicy;
  }
  throw std::invalid_argument("auto_augment: unknown policy");
}

void sample_auto_augment(AutoAugmentPolicy policy, int height, int width, Rng& rng,
                         std::vector<AugStep>& steps) {
  steps.clear();
  const auto policies = auto_augment_policy(policy);
  // AutoAugment.get_params: policy_id, probs = torch.rand(2), signs = torch.randint(2, (2,)).
  const auto& sub = policies[rng.uniform_int(0, static_cast<int64_t>(policies.size()) - 1)];
  const double probs[2] = {rng.uniform(), rng.uniform()};
  const int64_t signs[2] = {rng.uniform_int(0, 1), rng.uniform_int(0, 1)};
  for (int i = 0; i < 2; ++i) {
    const AutoAugmentStep& s = sub[i];
    if (!(probs[i] <= s.p)) continue;
    const AugOpRange& r = auto_augment_range(s.op);
    const double level = s.magnitude_bin < 0 ? 0.0 : s.magnitude_bin;
    double m =
        s.magnitude_bin < 0 ? 0.0 : augment_magnitude(r, level, kAutoAugmentNumBins, height, width);
    if (r.signed_magnitude && signs[i] == 0) m = -m;  // torchvision negates on 0
    steps.push_back({s.op, m});
  }
}

void apply_augment_steps(Image& img, std::span<const AugStep> steps, const WarpOptions& warp,
                         Image& scratch) {
  for (const AugStep& s : steps) apply_augment_op(img, s.op, s.magnitude, warp, scratch);
}

}  // namespace pipebench
