// Affine operators on uint8 HWC images (transforms/affine.h does the warp):
//   random_rotation  torchvision RandomRotation(degrees, interpolation, expand=False, fill)
//   random_affine    torchvision RandomAffine(degrees, translate, scale, shear, interpolation,
//                    fill)
// Draws, from the sample's Rng, in torchvision's get_params order: the angle (uniform in
// [min, max], drawn even when min == max); for random_affine then tx, ty (when translate is
// given: uniform in [-a W, a W], [-b H, b H], rounded half to even as Python's round), the
// scale (when given), shear x (when given) and shear y (when 4 shear values are given).
//
// Not supported: center (always the image centre) and expand: true (it changes the output
// size per sample); the factory rejects expand: true. A YAML list of one number is read as
// that number (torchvision rejects degrees=[5]; here it means [-5, 5]).
#include "transforms/affine.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "transforms/ops/warp_params.h"
#include "transforms/registry.h"

namespace pipebench {
namespace {

constexpr double kInf = 1e300;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string list_text(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + num(v[i]);
  return s + "]";
}

// A [min, max] range, the form RandomAffine keeps after its constructor.
struct Range {
  double lo = 0.0, hi = 0.0;
  double draw(Rng& rng) const { return rng.uniform(lo, hi); }
};

// torchvision transforms.py _setup_angle: a number d >= 0 means [-d, d]; a pair is [min, max].
Range angle_range(const std::vector<double>& v, const std::string& op, const std::string& param) {
  if (v.size() == 1) {
    if (v[0] < 0)
      throw std::invalid_argument(op + ": " + param +
                                  " as a single number must be >= 0 (it means [-" + param + ", " +
                                  param + "]), got " + num(v[0]));
    return {-v[0], v[0]};
  }
  if (v.size() != 2)
    throw std::invalid_argument(op + ": " + param + " must be a number or a [min, max] pair, got " +
                                list_text(v));
  if (v[0] > v[1])
    throw std::invalid_argument(op + ": " + param + " must be [min, max] with min <= max, got " +
                                list_text(v));
  return {v[0], v[1]};
}

// What both operators share: the warp's settings, the image checks, the swap.
class AffineOpBase : public Operator {
 public:
  AffineOpBase(WarpInterpolation interpolation, std::optional<std::array<float, 3>> fill, bool fill_per_channel)
      : interpolation_(interpolation), fill_(fill), fill_per_channel_(fill_per_channel) {}
  OpStage stage() const override { return OpStage::kImage; }
  DataShape output_shape(const DataShape& in) const override {
    require_image(in, name());
    check_channels(in.channels);
    return in;  // expand=False: the input's size
  }

 protected:
  // torchvision _assert_grid_transform_inputs: several fill values must match the channels.
  void check_channels(int channels) const {
    if (fill_per_channel_ && channels != 3)
      throw std::invalid_argument(name() + ": fill has 3 values but the image has " +
                                  std::to_string(channels) + " channel(s)");
  }
  void warp(SampleData& s, const AffineParams& p) const {
    check_channels(s.image.channels);
    // torchvision's RandomRotation / RandomAffine turn fill=0 into [0.0] * C: a fill is
    // passed unless the spec says none.
    affine(s.image, s.scratch, p, interpolation_, fill_);
    std::swap(s.image, s.scratch);
  }

 private:
  WarpInterpolation interpolation_;
  std::optional<std::array<float, 3>> fill_;
  bool fill_per_channel_;
};

class RandomRotationOp final : public AffineOpBase {
 public:
  RandomRotationOp(Range degrees, WarpInterpolation interpolation, std::optional<std::array<float, 3>> fill,
                   bool fill_per_channel)
      : AffineOpBase(interpolation, fill, fill_per_channel), degrees_(degrees) {}
  const std::string& name() const override {
    static const std::string n = "random_rotation";
    return n;
  }
  void apply(SampleData& s, Rng& rng, OpState*) const override {
    // F.rotate(img, angle) == F.affine(img, -angle): counter-clockwise positive.
    AffineParams p;
    p.angle = -static_cast<float>(degrees_.draw(rng));
    warp(s, p);
  }

 private:
  Range degrees_;
};

struct RandomAffineParams {
  Range degrees;
  bool translate = false;
  double max_tx = 0.0, max_ty = 0.0;  ///< fractions of W and H
  bool scale = false;
  Range scale_range;
  int shear_count = 0;  ///< 0 (none), 1 (x) or 2 (x and y)
  Range shear_x, shear_y;
};

class RandomAffineOp final : public AffineOpBase {
 public:
  RandomAffineOp(RandomAffineParams params, WarpInterpolation interpolation,
                 std::optional<std::array<float, 3>> fill, bool fill_per_channel)
      : AffineOpBase(interpolation, fill, fill_per_channel), params_(params) {}
  const std::string& name() const override {
    static const std::string n = "random_affine";
    return n;
  }
  void apply(SampleData& s, Rng& rng, OpState*) const override {
    warp(s, draw(rng, s.image.width, s.image.height));
  }

 private:
  // transforms.py RandomAffine.get_params(degrees, translate, scale, shear, [W, H]).
  AffineParams draw(Rng& rng, int width, int height) const {
    const RandomAffineParams& q = params_;
    AffineParams p;
    p.angle = static_cast<float>(q.degrees.draw(rng));
    if (q.translate) {
      const double max_dx = q.max_tx * width, max_dy = q.max_ty * height;
      // int(round(...)): Python rounds half to even, as std::nearbyint does.
      p.translate[0] = static_cast<float>(std::nearbyint(rng.uniform(-max_dx, max_dx)));
      p.translate[1] = static_cast<float>(std::nearbyint(rng.uniform(-max_dy, max_dy)));
    }
    if (q.scale) p.scale = static_cast<float>(q.scale_range.draw(rng));
    if (q.shear_count >= 1) p.shear[0] = static_cast<float>(q.shear_x.draw(rng));
    if (q.shear_count == 2) p.shear[1] = static_cast<float>(q.shear_y.draw(rng));
    return p;
  }

  RandomAffineParams params_;
};

// --- schemas -------------------------------------------------------------------------------

ParamSchema degrees_param() {
  return {"degrees",
          ParamType::kFloatList,
          "",
          -kInf,
          kInf,
          {},
          0,
          {},
          "rotation range in degrees: d >= 0 means [-d, d], or [min, max]"};
}

std::unique_ptr<Operator> make_random_rotation(const OpParams& p, const OpBuildContext&) {
  const std::string op = "random_rotation";
  if (p.get_bool("expand"))
    throw std::invalid_argument(op +
                                ": expand: true is not supported (it changes the output size "
                                "per sample, which a batch of fixed-size samples cannot hold); "
                                "use expand: false");
  return std::make_unique<RandomRotationOp>(angle_range(p.get_list("degrees"), op, "degrees"),
                                            warp_interpolation(p), warp_fill(p, op),
                                            p.get_list("fill").size() == 3);
}

std::unique_ptr<Operator> make_random_affine(const OpParams& p, const OpBuildContext&) {
  const std::string op = "random_affine";
  RandomAffineParams q;
  q.degrees = angle_range(p.get_list("degrees"), op, "degrees");
  const auto& translate = p.get_list("translate");
  if (!translate.empty()) {
    if (translate.size() != 2)
      throw std::invalid_argument(op +
                                  ": translate must be [] (none) or a pair [a, b] of fractions in "
                                  "[0, 1], got " +
                                  list_text(translate));
    q.translate = true;
    q.max_tx = translate[0];
    q.max_ty = translate[1];
  }
  const auto& scale = p.get_list("scale");
  if (!scale.empty()) {
    if (scale.size() != 2 || !(scale[0] > 0 && scale[1] > 0))
      throw std::invalid_argument(
          op + ": scale must be [] (none) or [min, max] with both > 0, got " + list_text(scale));
    if (scale[0] > scale[1])
      throw std::invalid_argument(op + ": scale must be [min, max] with min <= max, got " +
                                  list_text(scale));
    q.scale = true;
    q.scale_range = {scale[0], scale[1]};
  }
  const auto& shear = p.get_list("shear");
  if (shear.size() == 1 || shear.size() == 2) {
    q.shear_count = 1;
    q.shear_x = angle_range(shear, op, "shear");
  } else if (shear.size() == 4) {
    q.shear_count = 2;
    q.shear_x = angle_range({shear[0], shear[1]}, op, "shear (x)");
    q.shear_y = angle_range({shear[2], shear[3]}, op, "shear (y)");
  } else if (!shear.empty()) {
    throw std::invalid_argument(op +
                                ": shear must be [] (none), a number s >= 0 (x shear in [-s, s]), "
                                "[min, max] (x) or [xmin, xmax, ymin, ymax], got " +
                                list_text(shear));
  }
  return std::make_unique<RandomAffineOp>(q, warp_interpolation(p), warp_fill(p, op),
                                          p.get_list("fill").size() == 3);
}

}  // namespace

void register_affine_ops(OpRegistry& r) {
  r.add({"random_rotation",
         OpStage::kImage,
         "RandomRotation",
         "rotate about the centre by an angle drawn uniformly from degrees (counter-clockwise "
         "positive); same size, fill outside",
         {degrees_param(),
          warp_interpolation_param(),
          {"expand",
           ParamType::kBool,
           "false",
           -kInf,
           kInf,
           {},
           0,
           {},
           "enlarge the output to hold the whole rotated image (only false is supported)"},
          warp_fill_param("0")},
         {"{degrees: 30}", "{degrees: 30, interpolation: bilinear}"},
         make_random_rotation});
  r.add({"random_affine",
         OpStage::kImage,
         "RandomAffine",
         "rotation, translation, scale and shear about the centre, each drawn per sample; same "
         "size, fill outside",
         {degrees_param(),
          {"translate",
           ParamType::kFloatList,
           "[]",
           0,
           1,
           {},
           0,
           {},
           "[a, b]: shift drawn in [-a W, a W] x [-b H, b H], rounded to whole pixels; [] = none"},
          {"scale",
           ParamType::kFloatList,
           "[]",
           0,
           kInf,
           {},
           0,
           {},
           "[min, max], both > 0: scale factor drawn uniformly; [] = 1"},
          {"shear",
           ParamType::kFloatList,
           "[]",
           -kInf,
           kInf,
           {},
           0,
           {},
           "degrees: s >= 0 (x shear in [-s, s]), [min, max] (x) or [xmin, xmax, ymin, ymax]; "
           "[] = none"},
          warp_interpolation_param(),
          warp_fill_param("0")},
         {"{degrees: 15, translate: [0.1, 0.1], scale: [0.9, 1.1], shear: 10}",
          "{degrees: 15, translate: [0.1, 0.1], scale: [0.9, 1.1], shear: 10, interpolation: "
          "bilinear}"},
         make_random_affine});
}

}  // namespace pipebench
