// The parameters the warping operator families share (ops/affine.cpp: random_rotation,
// random_affine; ops/augment.cpp: rand_augment, trivial_augment_wide, auto_augment):
// torchvision's `interpolation` (the two modes its tensor backend warps with) and `fill`.
//
// fill: one number (every channel), three (R, G, B), or none. torchvision's
// RandomRotation / RandomAffine default to 0 and pass [0.0] * C; the policies default to
// None, which warps with plain zero padding: the two differ only in bilinear border pixels
// (affine.h). Errors: std::invalid_argument naming the operator and what was given.
#pragma once

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "transforms/affine.h"
#include "transforms/operator.h"

namespace pipebench {

inline ParamSchema warp_interpolation_param() {
  return {"interpolation", ParamType::kString, "nearest", -1e300, 1e300, {"nearest", "bilinear"}, 0, {},
          "resampling (torchvision's tensor backend warps with these two)"};
}

inline WarpInterpolation warp_interpolation(const OpParams& p) {
  return p.get_string("interpolation") == "bilinear" ? WarpInterpolation::kBilinear
                                                     : WarpInterpolation::kNearest;
}

/// default_text "0" (RandomRotation, RandomAffine) or "none" (the policies).
inline ParamSchema warp_fill_param(const char* default_text) {
  return {"fill", ParamType::kFloatList, default_text, 0, 255, {}, 0, {{"none", {}}},
          "value for pixels from outside the image: one number, one per channel (3), or none "
          "(zero padding, torchvision's fill=None)"};
}

/// The spec's fill list: empty (none) -> nullopt, one value -> all channels, three -> R, G, B.
inline std::optional<std::array<float, 3>> warp_fill(const OpParams& p, const std::string& op) {
  const auto& v = p.get_list("fill");
  if (v.empty()) return std::nullopt;
  if (v.size() == 1) {
    const auto f = static_cast<float>(v[0]);
    return std::array<float, 3>{f, f, f};
  }
  if (v.size() == 3)
    return std::array<float, 3>{static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2])};
  throw std::invalid_argument(op + ": fill must be one number, a list of 3 (one per channel) or none, got " +
                              std::to_string(v.size()) + " numbers");
}

}  // namespace pipebench
