// Automatic augmentation policies on uint8 HWC RGB images: torchvision 0.14's
// RandAugment, TrivialAugmentWide and AutoAugment (transforms/autoaugment.py), and timm's
// RandAugment variant with increasing-severity operations and magnitude noise
// (timm/data/auto_augment.py, rand_augment_transform, config "rand-m9-mstd0.5-inc1").
//
// Three layers, each usable alone:
//   1. apply_augment_op: one named operation with one magnitude, torchvision's _apply_op
//      (plus timm's SolarizeAdd, TranslateXRel, TranslateYRel). The pixel work is
//      photometric.h and affine.h; this file only maps magnitudes to their arguments.
//   2. the op spaces as data (AugOpRange tables): which operations a policy picks from and
//      how a magnitude level becomes _apply_op's magnitude (augment_magnitude).
//   3. the policies' sampling (sample_rand_augment, sample_trivial_augment_wide,
//      sample_auto_augment): draws from an Rng the list of (operation, signed magnitude)
//      steps that apply_augment_steps then applies in order.
//
// Randomness: every draw comes from the Rng given, in a fixed order, so the output depends
// only on the image and the Rng's state. The distributions are torchvision's (timm's for
// the timm options); the streams are not torch's, so individual samples differ from
// torchvision's while their statistics agree.
//
// Versus torchvision: given the same (operation, magnitude), the pixels are the kernels'
// (photometric.h, affine.h state how close those are). Magnitudes are torch.linspace's
// float32 values by its scalar formula (torch's vectorised path can differ in the last
// float bit, which moves a nearest-neighbour sample only at an exact rounding tie).
// Versus timm (increasing: true, magnitude_std > 0): followed are the op set, the level
// mappings (LEVEL_TO_ARG), prob 0.5 per chosen op, choice with replacement, and the
// magnitude noise (random.gauss per applied op, clipped to [0, 10]; mstd > 100: uniform).
// Not followed, because they are PIL's or timm's hparams rather than the policy: timm runs
// PIL (ImageEnhance blends, PIL's affine), we run torchvision's tensor kernels; timm fills
// with the dataset mean (hparams img_mean, default 128) and picks bilinear or bicubic at
// random per op, we use the operator's `fill` and `interpolation`.
//
// Shapes: images are H x W x 3 uint8 RGB (image.h); every operation keeps the shape (the
// geometric ones are torchvision's expand=False). `scratch` is a second buffer (resized as
// needed, contents unspecified afterwards); geometric operations swap it with `img`.
// Errors: std::invalid_argument for a parameter outside its range (check_* name the
// parameter, the valid range and the value) or an image that is not 3-channel (from the
// kernels).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "transforms/affine.h"
#include "transforms/image.h"
#include "transforms/rng.h"

namespace pipebench {

// --- 1. one operation ------------------------------------------------------------------------

/// The operations of the policies: torchvision autoaugment.py _apply_op's op_name, then
/// timm's operations torchvision lacks.
enum class AugOp : uint8_t {
  kIdentity,
  kShearX,
  kShearY,
  kTranslateX,
  kTranslateY,
  kRotate,
  kBrightness,
  kColor,
  kContrast,
  kSharpness,
  kPosterize,
  kSolarize,
  kAutoContrast,
  kEqualize,
  kInvert,
  kSolarizeAdd,    ///< timm solarize_add
  kTranslateXRel,  ///< timm translate_x_rel
  kTranslateYRel,  ///< timm translate_y_rel
};
inline constexpr int kAugOpCount = 18;

/// torchvision's / timm's name: "ShearX", "Color", "SolarizeAdd", ...
std::string_view aug_op_name(AugOp op);
/// The operation named `name` (aug_op_name's spelling); std::invalid_argument if none.
AugOp aug_op_from_name(std::string_view name);

/// What the geometric operations need: torchvision's `interpolation` (NEAREST or
/// BILINEAR, the two its tensor backend supports) and `fill` (per channel, for pixels that
/// come from outside the image; nullopt is torchvision's fill=None, the policies' default:
/// plain zero padding, which differs from fill 0 in bilinear border pixels, affine.h).
struct WarpOptions {
  WarpInterpolation interpolation = WarpInterpolation::kNearest;
  std::optional<std::array<float, 3>> fill;
};

/// torchvision autoaugment.py _apply_op(img, op_name, magnitude, interpolation, fill), in
/// place on `img`. `magnitude` is signed, in _apply_op's units:
///   ShearX       F.affine(shear=[degrees(atan(m)), 0], center=[0, 0]): output (x, y) reads
///                input (x + m * y, y), sheared about the top-left corner (affine.h shears
///                about the centre: the corner is folded in as a translation of -m * H / 2);
///   ShearY       the same along y: output (x, y) reads input (x, y + m * x);
///   TranslateX   F.affine(translate=[int(m), 0]): pixels, truncated toward 0, + = right;
///   TranslateY   the same, + = down;
///   Rotate       F.rotate(m): degrees counter-clockwise about the centre;
///   Brightness   adjust_brightness(1 + m); Color: adjust_saturation(1 + m);
///   Contrast     adjust_contrast(1 + m);  Sharpness: adjust_sharpness(1 + m);
///   Posterize    posterize(int(m)) bits;  Solarize: solarize(threshold m);
///   AutoContrast, Equalize, Invert, Identity: m unused;
///   SolarizeAdd  timm solarize_add(add=int(m), thresh=128): x < 128 -> min(255, x + add);
///   TranslateXRel timm translate_x_rel(pct=m): PIL's transform (1, 0, m * W, 0, 1, 0),
///                output x reads input x + m * W (content moves left for m > 0), unrounded;
///   TranslateYRel the same along y with m * H.
void apply_augment_op(Image& img, AugOp op, double magnitude, const WarpOptions& warp,
                      Image& scratch);

// --- 2. the op spaces ------------------------------------------------------------------------

/// How a magnitude level (a bin index; timm: a level on 0..10) becomes _apply_op's
/// (unsigned) magnitude. `max` is the AugOpRange's.
enum class LevelScale : uint8_t {
  kNone,               ///< no magnitude (torch.tensor(0.0)): always 0
  kLinear,             ///< torch.linspace(0, max, num_bins)[level]
  kLinearOfWidth,      ///< torch.linspace(0, max * image width, num_bins)[level]
  kLinearOfHeight,     ///< torch.linspace(0, max * image height, num_bins)[level]
  kPosterizeBits,      ///< 8 - round(level / ((num_bins - 1) / max)), round half to even
  kSolarizeThreshold,  ///< torch.linspace(max, 0, num_bins)[level]
  // timm (auto_augment.py LEVEL_TO_ARG), level in [0, _LEVEL_DENOM = 10]:
  kTimmLinear,               ///< level / 10 * max (_rotate/_shear/_translate_rel_level_to_arg)
  kTimmEnhanceIncreasing,    ///< level / 10 * max; after the sign, max(0.1, 1 + m) - 1
  kTimmPosterizeIncreasing,  ///< 4 - int(level / 10 * 4)
  kTimmSolarizeIncreasing,   ///< 256 - int(level / 10 * 256)
  kTimmSolarizeAdd,          ///< int(level / 10 * 110)
};

/// One entry of an op space: the operation, its magnitude range, and whether a fair coin
/// negates the magnitude (torchvision's `signed`, timm's _randomly_negate).
struct AugOpRange {
  AugOp op;
  LevelScale scale;
  double max;
  bool signed_magnitude;
};

/// torchvision RandAugment._augmentation_space(num_bins, image_size), in its dict order
/// (the order op indices refer to).
inline constexpr std::array<AugOpRange, 14> kRandAugmentSpace = {{
    {AugOp::kIdentity, LevelScale::kNone, 0.0, false},
    {AugOp::kShearX, LevelScale::kLinear, 0.3, true},
    {AugOp::kShearY, LevelScale::kLinear, 0.3, true},
    {AugOp::kTranslateX, LevelScale::kLinearOfWidth, 150.0 / 331.0, true},
    {AugOp::kTranslateY, LevelScale::kLinearOfHeight, 150.0 / 331.0, true},
    {AugOp::kRotate, LevelScale::kLinear, 30.0, true},
    {AugOp::kBrightness, LevelScale::kLinear, 0.9, true},
    {AugOp::kColor, LevelScale::kLinear, 0.9, true},
    {AugOp::kContrast, LevelScale::kLinear, 0.9, true},
    {AugOp::kSharpness, LevelScale::kLinear, 0.9, true},
    {AugOp::kPosterize, LevelScale::kPosterizeBits, 4.0, false},
    {AugOp::kSolarize, LevelScale::kSolarizeThreshold, 255.0, false},
    {AugOp::kAutoContrast, LevelScale::kNone, 0.0, false},
    {AugOp::kEqualize, LevelScale::kNone, 0.0, false},
}};

/// torchvision TrivialAugmentWide._augmentation_space(num_bins), dict order.
inline constexpr std::array<AugOpRange, 14> kTrivialAugmentWideSpace = {{
    {AugOp::kIdentity, LevelScale::kNone, 0.0, false},
    {AugOp::kShearX, LevelScale::kLinear, 0.99, true},
    {AugOp::kShearY, LevelScale::kLinear, 0.99, true},
    {AugOp::kTranslateX, LevelScale::kLinear, 32.0, true},
    {AugOp::kTranslateY, LevelScale::kLinear, 32.0, true},
    {AugOp::kRotate, LevelScale::kLinear, 135.0, true},
    {AugOp::kBrightness, LevelScale::kLinear, 0.99, true},
    {AugOp::kColor, LevelScale::kLinear, 0.99, true},
    {AugOp::kContrast, LevelScale::kLinear, 0.99, true},
    {AugOp::kSharpness, LevelScale::kLinear, 0.99, true},
    {AugOp::kPosterize, LevelScale::kPosterizeBits, 6.0, false},
    {AugOp::kSolarize, LevelScale::kSolarizeThreshold, 255.0, false},
    {AugOp::kAutoContrast, LevelScale::kNone, 0.0, false},
    {AugOp::kEqualize, LevelScale::kNone, 0.0, false},
}};

/// torchvision AutoAugment._augmentation_space(num_bins, image_size): RandAugment's without
/// Identity, plus Invert. AutoAugment uses it with num_bins = 10.
inline constexpr std::array<AugOpRange, 14> kAutoAugmentSpace = {{
    {AugOp::kShearX, LevelScale::kLinear, 0.3, true},
    {AugOp::kShearY, LevelScale::kLinear, 0.3, true},
    {AugOp::kTranslateX, LevelScale::kLinearOfWidth, 150.0 / 331.0, true},
    {AugOp::kTranslateY, LevelScale::kLinearOfHeight, 150.0 / 331.0, true},
    {AugOp::kRotate, LevelScale::kLinear, 30.0, true},
    {AugOp::kBrightness, LevelScale::kLinear, 0.9, true},
    {AugOp::kColor, LevelScale::kLinear, 0.9, true},
    {AugOp::kContrast, LevelScale::kLinear, 0.9, true},
    {AugOp::kSharpness, LevelScale::kLinear, 0.9, true},
    {AugOp::kPosterize, LevelScale::kPosterizeBits, 4.0, false},
    {AugOp::kSolarize, LevelScale::kSolarizeThreshold, 255.0, false},
    {AugOp::kAutoContrast, LevelScale::kNone, 0.0, false},
    {AugOp::kEqualize, LevelScale::kNone, 0.0, false},
    {AugOp::kInvert, LevelScale::kNone, 0.0, false},
}};
inline constexpr int kAutoAugmentNumBins = 10;

/// timm auto_augment.py _RAND_INCREASING_TRANSFORMS (the "inc1" op set), with
/// LEVEL_TO_ARG's mappings: Posterize, Solarize and the enhancements grow stronger with the
/// level. Translations are TranslateXRel/YRel (hparams translate_pct default 0.45).
inline constexpr std::array<AugOpRange, 15> kTimmRandIncreasingSpace = {{
    {AugOp::kAutoContrast, LevelScale::kNone, 0.0, false},
    {AugOp::kEqualize, LevelScale::kNone, 0.0, false},
    {AugOp::kInvert, LevelScale::kNone, 0.0, false},
    {AugOp::kRotate, LevelScale::kTimmLinear, 30.0, true},
    {AugOp::kPosterize, LevelScale::kTimmPosterizeIncreasing, 4.0, false},
    {AugOp::kSolarize, LevelScale::kTimmSolarizeIncreasing, 256.0, false},
    {AugOp::kSolarizeAdd, LevelScale::kTimmSolarizeAdd, 110.0, false},
    {AugOp::kColor, LevelScale::kTimmEnhanceIncreasing, 0.9, true},
    {AugOp::kContrast, LevelScale::kTimmEnhanceIncreasing, 0.9, true},
    {AugOp::kBrightness, LevelScale::kTimmEnhanceIncreasing, 0.9, true},
    {AugOp::kSharpness, LevelScale::kTimmEnhanceIncreasing, 0.9, true},
    {AugOp::kShearX, LevelScale::kTimmLinear, 0.3, true},
    {AugOp::kShearY, LevelScale::kTimmLinear, 0.3, true},
    {AugOp::kTranslateXRel, LevelScale::kTimmLinear, 0.45, true},
    {AugOp::kTranslateYRel, LevelScale::kTimmLinear, 0.45, true},
}};
/// timm's _LEVEL_DENOM: the top of its magnitude scale (and the default clip, magnitude_max).
inline constexpr int kTimmMaxLevel = 10;

/// _apply_op's magnitude for `range` at `level`, before any sign: level is a bin index in
/// [0, num_bins - 1] for the torchvision scales (fractional levels, from magnitude noise,
/// interpolate), a level in [0, 10] for timm's (num_bins unused). linspace values are
/// computed in float32 as torch.linspace's scalar path does (start + step * i below the
/// halfway index, end - step * (steps - 1 - i) from it). height/width: the image's, for
/// kLinearOfWidth / kLinearOfHeight.
double augment_magnitude(const AugOpRange& range, double level, int num_bins, int height,
                         int width);

/// The signed magnitude: augment_magnitude, negated when `negate` and the range is signed,
/// then timm's enhancement clamp (max(0.1, 1 + m) - 1) for kTimmEnhanceIncreasing.
double signed_augment_magnitude(const AugOpRange& range, double level, bool negate, int num_bins,
                                int height, int width);

// --- 3. the policies -------------------------------------------------------------------------

/// One step a policy drew: apply_augment_op(img, op, magnitude, ...).
struct AugStep {
  AugOp op;
  double magnitude;  ///< signed, _apply_op's units
};

/// torchvision RandAugment(num_ops, magnitude, num_magnitude_bins), plus timm's options.
struct RandAugmentParams {
  int num_ops = 2;              ///< >= 0 (0: the image is unchanged)
  int magnitude = 9;            ///< [0, num_magnitude_bins - 1]; increasing: [0, 10]
  int num_magnitude_bins = 31;  ///< >= 2; unused when increasing (timm's 0..10 scale)
  /// >= 0. 0: every op at `magnitude` (torchvision). > 0: per applied op a level drawn
  /// from N(magnitude, magnitude_std) (Box-Muller on the Rng), clipped to [0, top of the
  /// scale] (timm AugmentOp.__call__; the top is num_magnitude_bins - 1, or 10 when
  /// increasing). > 100: uniform in [0, magnitude] (timm's "mstd > 100 means inf").
  double magnitude_std = 0.0;
  /// false: torchvision's op space (kRandAugmentSpace), every chosen op applied.
  /// true: timm's rand_augment_transform with "inc1": kTimmRandIncreasingSpace, levels on
  /// timm's 0..10 scale, and each chosen op applied with probability 0.5 (timm
  /// rand_augment_ops: AugmentOp(prob=0.5)).
  bool increasing = false;
};

/// Throws std::invalid_argument naming rand_augment, the parameter, its valid range and
/// the value when `p` is out of range.
void check_rand_augment(const RandAugmentParams& p);
/// Throws std::invalid_argument unless num_magnitude_bins >= 2.
void check_trivial_augment_wide(int num_magnitude_bins);

/// RandAugment.forward's draws for an image of height x width, into `steps` (cleared
/// first; its capacity is kept). Per op, in order: the op index, uniform over the space
/// (torch.randint; timm np.random.choice with replacement); [increasing: apply with
/// probability 0.5, else skip the op and its remaining draws]; [magnitude_std > 0 and the op
/// has a magnitude: its level]; [signed op: the sign coin, negate on 1]. `p` must pass
/// check_rand_augment.
void sample_rand_augment(const RandAugmentParams& p, int height, int width, Rng& rng,
                         std::vector<AugStep>& steps);

/// TrivialAugmentWide.forward's draws: one op uniform over kTrivialAugmentWideSpace, a bin
/// uniform in [0, num_magnitude_bins - 1] when the op has magnitudes, the sign coin when
/// signed.
void sample_trivial_augment_wide(int num_magnitude_bins, Rng& rng, std::vector<AugStep>& steps);

/// AutoAugmentPolicy: the sub-policy tables of torchvision AutoAugment._get_policies.
enum class AutoAugmentPolicy { kImageNet, kCifar10, kSvhn };

/// One (op_name, p, magnitude_id) of a sub-policy; magnitude_bin -1 is torchvision's None.
struct AutoAugmentStep {
  AugOp op;
  double p;
  int magnitude_bin;
};
using AutoAugmentSubPolicy = std::array<AutoAugmentStep, 2>;

/// The 25 sub-policies of `policy`, in torchvision's order.
std::span<const AutoAugmentSubPolicy> auto_augment_policy(AutoAugmentPolicy policy);

/// AutoAugment.forward's draws (get_params): the sub-policy index uniform in [0, 24], two
/// uniforms u0, u1 and two sign coins, all drawn first; step i is applied when u_i <= p_i,
/// at kAutoAugmentSpace's magnitude for its bin (num_bins 10), negated when signed and
/// its coin is 0 (torchvision: `signs[i] == 0`).
void sample_auto_augment(AutoAugmentPolicy policy, int height, int width, Rng& rng,
                         std::vector<AugStep>& steps);

/// Applies `steps` in order (apply_augment_op each).
void apply_augment_steps(Image& img, std::span<const AugStep> steps, const WarpOptions& warp,
                         Image& scratch);

}  // namespace pipebench
