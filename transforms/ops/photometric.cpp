// Photometric operators on uint8 HWC RGB images (the pixel work is transforms/photometric.h):
//   color_jitter             torchvision ColorJitter(brightness, contrast, saturation, hue)
//   random_grayscale         torchvision RandomGrayscale(p), 3 output channels
//   gaussian_blur            torchvision GaussianBlur(kernel_size, sigma)
//   random_autocontrast      torchvision RandomAutocontrast(p)
//   random_equalize          torchvision RandomEqualize(p)
//   random_posterize         torchvision RandomPosterize(bits, p)
//   random_solarize          torchvision RandomSolarize(threshold, p)
//   random_adjust_sharpness  torchvision RandomAdjustSharpness(sharpness_factor, p)
//   random_invert            torchvision RandomInvert(p)
// Draws, from the sample's Rng, in torchvision's order: the random_* operators draw one
// uniform (apply when < p); color_jitter draws a permutation of its four adjustments, then
// one factor per enabled adjustment (brightness, contrast, saturation, hue), and applies
// them in the permutation's order; gaussian_blur draws sigma.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "transforms/photometric.h"
#include "transforms/registry.h"

namespace pipebench {
namespace {

constexpr double kInf = 1e300;


std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

ParamSchema p_param(const std::string& def, const std::string& doc) {
  return {"p", ParamType::kFloat, def, 0, 1, {}, 0, {}, doc};
}

// Scratch for the operators that need a second image (sharpness, blur).
struct ScratchState final : OpState {
  Image scratch;
};

// An operator that applies `kernel` with probability p (torchvision: torch.rand(1) < p).
class RandomApplyOp final : public Operator {
 public:
  using Kernel = std::function<void(Image&, Image& scratch)>;
  RandomApplyOp(std::string name, double p, Kernel kernel, bool needs_scratch)
      : name_(std::move(name)), p_(p), kernel_(std::move(kernel)), needs_scratch_(needs_scratch) {}
  const std::string& name() const override { return name_; }
  OpStage stage() const override { return OpStage::kImage; }
  DataShape output_shape(const DataShape& in) const override {
    require_image(in, name_);
    return in;
  }
  void apply(SampleData& s, Rng& rng, OpState* state) const override {
    if (!rng.bernoulli(p_)) return;
    kernel_(s.image, needs_scratch_ ? static_cast<ScratchState*>(state)->scratch : s.scratch);
  }
  std::unique_ptr<OpState> make_state() const override {
    if (!needs_scratch_) return nullptr;
    return std::make_unique<ScratchState>();
  }

 private:
  std::string name_;
  double p_;
  Kernel kernel_;
  bool needs_scratch_;
};

// --- color_jitter --------------------------------------------------------------------------

// A factor range [lo, hi], or none (the adjustment is off and draws nothing).
using Range = std::optional<std::pair<double, double>>;

// torchvision ColorJitter._check_input: a number v >= 0 means [center - v, center + v]
// (the low end clipped at 0 for brightness / contrast / saturation); a pair [lo, hi] must
// satisfy bound_lo <= lo <= hi <= bound_hi. A range equal to [center, center] is off.
Range jitter_range(const std::vector<double>& v, const std::string& name, double center,
                   double bound_lo, double bound_hi, bool clip_at_zero) {
  const std::string what = "color_jitter: " + name;
  double lo, hi;
  if (v.size() == 1) {
    if (v[0] < 0 || v[0] > bound_hi - center)
      throw std::invalid_argument(what + " as one number must be " +
                                  (bound_hi >= kInf ? ">= 0" : "in [0, " + num(bound_hi - center) + "]") +
                                  ", got " + num(v[0]));
    lo = center - v[0];
    hi = center + v[0];
    if (clip_at_zero) lo = std::max(lo, 0.0);
  } else if (v.size() == 2) {
    lo = v[0];
    hi = v[1];
    if (!(bound_lo <= lo && lo <= hi && hi <= bound_hi))
      throw std::invalid_argument(what + " as [min, max] needs " + num(bound_lo) +
                                  " <= min <= max <= " + (bound_hi >= kInf ? "inf" : num(bound_hi)) +
                                  ", got [" + num(lo) + ", " + num(hi) + "]");
  } else {
    throw std::invalid_argument(what + " must be a number or [min, max], got a list of " +
                                std::to_string(v.size()));
  }
  if (lo == center && hi == center) return std::nullopt;
  return std::make_pair(lo, hi);
}

class ColorJitterOp final : public Operator {
 public:
  /// ranges: brightness, contrast, saturation, hue.
  explicit ColorJitterOp(std::array<Range, 4> ranges) : ranges_(ranges) {}
  const std::string& name() const override {
    static const std::string n = "color_jitter";
    return n;
  }
  OpStage stage() const override { return OpStage::kImage; }
  DataShape output_shape(const DataShape& in) const override {
    require_image(in, name());
    return in;
  }
  void apply(SampleData& s, Rng& rng, OpState*) const override {
    // torchvision get_params: fn_idx = torch.randperm(4), then b, c, s, h in that order.
    std::array<int, 4> order = {0, 1, 2, 3};
    for (int i = 3; i > 0; --i) std::swap(order[i], order[rng.uniform_int(0, i)]);
    std::array<float, 4> factor{};
    for (int k = 0; k < 4; ++k)
      if (ranges_[k]) factor[k] = static_cast<float>(rng.uniform(ranges_[k]->first, ranges_[k]->second));
    for (int k : order) {
      if (!ranges_[k]) continue;
      switch (k) {
        case 0: adjust_brightness(s.image, factor[k]); break;
        case 1: adjust_contrast(s.image, factor[k]); break;
        case 2: adjust_saturation(s.image, factor[k]); break;
        default: adjust_hue(s.image, factor[k]); break;
      }
    }
  }

 private:
  std::array<Range, 4> ranges_;
};

// --- gaussian_blur -------------------------------------------------------------------------

class GaussianBlurOp final : public Operator {
 public:
  GaussianBlurOp(int kernel_size, double sigma_lo, double sigma_hi)
      : kernel_size_(kernel_size), sigma_lo_(sigma_lo), sigma_hi_(sigma_hi) {}
  const std::string& name() const override {
    static const std::string n = "gaussian_blur";
    return n;
  }
  OpStage stage() const override { return OpStage::kImage; }
  DataShape output_shape(const DataShape& in) const override {
    require_image(in, name());
    if (in.fixed() && kernel_size_ / 2 >= std::min(in.height, in.width))
      throw std::invalid_argument("gaussian_blur: kernel_size " + std::to_string(kernel_size_) +
                                  " needs an input larger than " + std::to_string(kernel_size_ / 2) +
                                  " pixels on both sides, got " + std::to_string(in.height) + " x " +
                                  std::to_string(in.width) + " H x W");
    return in;
  }
  void apply(SampleData& s, Rng& rng, OpState* state) const override {
    // torchvision get_params: sigma = uniform(sigma_min, sigma_max), a float32.
    const float sigma = static_cast<float>(rng.uniform(sigma_lo_, sigma_hi_));
    gaussian_blur(s.image, kernel_size_, sigma, static_cast<ScratchState*>(state)->scratch);
  }
  std::unique_ptr<OpState> make_state() const override { return std::make_unique<ScratchState>(); }

 private:
  int kernel_size_;
  double sigma_lo_, sigma_hi_;
};

std::unique_ptr<Operator> make_color_jitter(const OpParams& p, const OpBuildContext&) {
  std::array<Range, 4> r;
  r[0] = jitter_range(p.get_list("brightness"), "brightness", 1, 0, kInf, true);
  r[1] = jitter_range(p.get_list("contrast"), "contrast", 1, 0, kInf, true);
  r[2] = jitter_range(p.get_list("saturation"), "saturation", 1, 0, kInf, true);
  r[3] = jitter_range(p.get_list("hue"), "hue", 0, -0.5, 0.5, false);
  return std::make_unique<ColorJitterOp>(r);
}

std::unique_ptr<Operator> make_gaussian_blur(const OpParams& p, const OpBuildContext&) {
  const int64_t k = p.get_int("kernel_size");
  if (k % 2 == 0)
    throw std::invalid_argument("gaussian_blur: kernel_size must be odd and positive, got " +
                                std::to_string(k));
  const auto& s = p.get_list("sigma");
  if (s.size() == 1) {
    if (!(s[0] > 0))
      throw std::invalid_argument("gaussian_blur: sigma as one number must be > 0, got " + num(s[0]));
    return std::make_unique<GaussianBlurOp>(static_cast<int>(k), s[0], s[0]);
  }
  if (s.size() != 2 || !(0 < s[0] && s[0] <= s[1]))
    throw std::invalid_argument(
        "gaussian_blur: sigma must be a number > 0 or [min, max] with 0 < min <= max, got " +
        (s.size() == 2 ? "[" + num(s[0]) + ", " + num(s[1]) + "]"
                       : "a list of " + std::to_string(s.size())));
  return std::make_unique<GaussianBlurOp>(static_cast<int>(k), s[0], s[1]);
}

ParamSchema jitter_param(const std::string& name, const std::string& doc) {
  return {name, ParamType::kFloatList, "0", 0, kInf, {}, 0, {}, doc};
}

}  // namespace

void register_photometric_ops(OpRegistry& r) {
  r.add({"color_jitter", OpStage::kImage, "ColorJitter",
         "brightness, contrast, saturation and hue, each by a random factor, in random order",
         {jitter_param("brightness", "v >= 0: factor in [max(0, 1 - v), 1 + v]; or [min, max]; 0: off"),
          jitter_param("contrast", "v >= 0: factor in [max(0, 1 - v), 1 + v]; or [min, max]; 0: off"),
          jitter_param("saturation", "v >= 0: factor in [max(0, 1 - v), 1 + v]; or [min, max]; 0: off"),
          {"hue", ParamType::kFloatList, "0", -0.5, 0.5, {}, 0, {},
           "v in [0, 0.5]: hue shift in [-v, v]; or [min, max] within [-0.5, 0.5]; 0: off"}},
         {"{brightness: 0.4, contrast: 0.4, saturation: 0.4}",
          "{brightness: 0.4, contrast: 0.4, saturation: 0.4, hue: 0.1}", "{hue: 0.1}"},
         make_color_jitter});
  r.add({"random_grayscale", OpStage::kImage, "RandomGrayscale",
         "gray (0.2989 R + 0.587 G + 0.114 B) in all three channels, with probability p",
         {p_param("0.1", "probability of converting")},
         {"{p: 1.0}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           return std::make_unique<RandomApplyOp>(
               "random_grayscale", p.get_float("p"), [](Image& img, Image&) { rgb_to_grayscale(img); },
               false);
         }});
  r.add({"gaussian_blur", OpStage::kImage, "GaussianBlur",
         "Gaussian blur of a square odd kernel, sigma drawn uniformly per sample",
         {{"kernel_size", ParamType::kInt, "", 1, 1001, {}, 0, {}, "kernel side, odd, pixels"},
          {"sigma", ParamType::kFloatList, "[0.1, 2.0]", 0, kInf, {}, 0, {},
           "standard deviation, pixels: a number > 0 or [min, max] to draw from"}},
         {"{kernel_size: 5}", "{kernel_size: 23}"},
         make_gaussian_blur});
  r.add({"random_autocontrast", OpStage::kImage, "RandomAutocontrast",
         "stretch each channel to [0, 255] with probability p",
         {p_param("0.5", "probability of applying")},
         {"{p: 1.0}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           return std::make_unique<RandomApplyOp>(
               "random_autocontrast", p.get_float("p"), [](Image& img, Image&) { autocontrast(img); },
               false);
         }});
  r.add({"random_equalize", OpStage::kImage, "RandomEqualize",
         "equalize each channel's histogram with probability p",
         {p_param("0.5", "probability of applying")},
         {"{p: 1.0}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           return std::make_unique<RandomApplyOp>(
               "random_equalize", p.get_float("p"), [](Image& img, Image&) { equalize(img); }, false);
         }});
  r.add({"random_posterize", OpStage::kImage, "RandomPosterize",
         "keep the top `bits` bits of every value with probability p",
         {{"bits", ParamType::kInt, "", 0, 8, {}, 0, {}, "bits kept per channel"},
          p_param("0.5", "probability of applying")},
         {"{bits: 4, p: 1.0}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           const int bits = static_cast<int>(p.get_int("bits"));
           return std::make_unique<RandomApplyOp>(
               "random_posterize", p.get_float("p"), [bits](Image& img, Image&) { posterize(img, bits); },
               false);
         }});
  r.add({"random_solarize", OpStage::kImage, "RandomSolarize",
         "invert every value >= threshold with probability p",
         {{"threshold", ParamType::kFloat, "", 0, 256, {}, 0, {},
           "values at or above it are inverted (256: none)"},
          p_param("0.5", "probability of applying")},
         {"{threshold: 128, p: 1.0}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           const float t = static_cast<float>(p.get_float("threshold"));
           return std::make_unique<RandomApplyOp>(
               "random_solarize", p.get_float("p"), [t](Image& img, Image&) { solarize(img, t); },
               false);
         }});
  r.add({"random_adjust_sharpness", OpStage::kImage, "RandomAdjustSharpness",
         "blend with a 3x3-smoothed image (factor 0: smoothed, 1: unchanged, 2: sharper), "
         "with probability p",
         {{"sharpness_factor", ParamType::kFloat, "", 0, kInf, {}, 0, {}, "blend factor, >= 0"},
          p_param("0.5", "probability of applying")},
         {"{sharpness_factor: 2.0, p: 1.0}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           const double f = p.get_float("sharpness_factor");  // a Python float, as torchvision's
           return std::make_unique<RandomApplyOp>(
               "random_adjust_sharpness", p.get_float("p"),
               [f](Image& img, Image& scratch) { adjust_sharpness(img, f, scratch); }, true);
         }});
  r.add({"random_invert", OpStage::kImage, "RandomInvert",
         "255 - x with probability p",
         {p_param("0.5", "probability of applying")},
         {"{p: 1.0}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           return std::make_unique<RandomApplyOp>(
               "random_invert", p.get_float("p"), [](Image& img, Image&) { invert(img); }, false);
         }});
}

}  // namespace pipebench
