// Affine warps of uint8 HWC images, the pixel work behind random_rotation, random_affine
// and the geometric operations of the augmentation policies (augment.h: rotate, shear_x,
// shear_y, translate_x, translate_y).
//
// Geometry follows torchvision 0.14 (functional.py _get_inverse_affine_matrix, affine,
// rotate; functional_tensor.py affine, rotate, _gen_affine_grid, _apply_grid_transform): the
// forward transform is, about the image centre C,
//   M = T(translate) * C * R(angle) * S(scale) * SHy(shear_y) * SHx(shear_x) * C^-1,
// angle and shears in degrees, translate in pixels. affine()'s angle is torchvision
// affine()'s: clockwise positive on screen (y down); rotate()'s is torchvision rotate()'s:
// counter-clockwise positive (rotate(a) == affine(-a), as torchvision's rotate passes -angle).
// Output pixel (x, y) samples the input at M^-1 applied to its centre, with torch
// grid_sample's convention (align_corners=False: pixel i covers [i, i + 1), centre i + 0.5),
// nearest (nearbyint: ties to even) or bilinear, outside the input as below.
//
// Outside the input: with `fill` (what RandomRotation / RandomAffine always pass), nearest
// writes the fill, and bilinear returns img * mask + (1 - mask) * fill where img is the
// zero-padded sample and mask the inside taps' total weight (torchvision's
// _apply_grid_transform, which weights the inside taps twice at the border; reproduced).
// Without fill (std::nullopt, torchvision's fill=None, the AutoAugment family's default):
// zero padding.
//
// Versus torchvision (tensor backend): the sample position is kept to 2^-32 pixel and
// bilinear blends in float32 like torch, so only float32 rounding differs. Bilinear: every
// pixel, border included, within 1 level (a value within ~1e-4 of a half level may round the
// other way). Nearest: identical pixels, except where a sample lies within ~1e-5 pixel of a
// half-pixel boundary (exact ties included: torch's float32 grid may land on either side),
// where the neighbouring pixel may be taken. tests/scripts/torchvision_reference_test.py
// states the measured difference.
//
// Shapes: in and out H x W x C uint8 (C = 1 to 4; fill gives channel c fill[min(c, 2)]), the
// output the same size as the input (torchvision's expand=False). No heap allocation once
// out's capacity covers the image. Errors: std::invalid_argument for an empty image, src ==
// out, or a singular or non-finite transform (scale <= 0, a NaN or infinite parameter).
#pragma once

#include <array>
#include <optional>

#include "transforms/image.h"

namespace pipebench {

enum class WarpInterpolation { kNearest, kBilinear };

/// One affine transform, in torchvision.transforms.functional.affine's terms.
struct AffineParams {
  float angle = 0.0f;  ///< degrees, torchvision affine(): clockwise positive
  std::array<float, 2> translate = {0.0f, 0.0f};  ///< pixels (x right, y down)
  float scale = 1.0f;                             ///< > 0
  std::array<float, 2> shear = {0.0f, 0.0f};      ///< degrees (x, y)
};

/// torchvision _get_inverse_affine_matrix(center, angle, translate, scale, shear) with
/// center = (0, 0) in image-centred coordinates (what the tensor backend passes): the 2x3
/// matrix, row-major, mapping output coordinates to input coordinates.
std::array<double, 6> inverse_affine_matrix(const AffineParams& p);

/// torchvision affine(img, angle, translate, scale, shear, interpolation, fill). `src` and
/// `out` must differ. fill: per channel value (0..255) for pixels from outside the input, or
/// std::nullopt for torchvision's fill=None (zero padding, no mask blend).
void affine(const Image& src, Image& out, const AffineParams& p, WarpInterpolation interpolation,
            std::optional<std::array<float, 3>> fill = std::nullopt);

/// torchvision rotate(img, angle, interpolation, expand=False, center=None, fill): angle
/// in degrees counter-clockwise, about the image centre. `src` and `out` must differ; fill
/// as affine().
void rotate(const Image& src, Image& out, float angle, WarpInterpolation interpolation,
            std::optional<std::array<float, 3>> fill = std::nullopt);

}  // namespace pipebench
