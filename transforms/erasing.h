// Erasing a rectangle of a float32 CHW tensor: the pixel work of random_erasing
// (torchvision RandomErasing; Zhong et al., "Random Erasing Data Augmentation", AAAI 2020),
// after torchvision 0.14's functional.erase and RandomErasing.get_params.
//
// Shapes: `chw` is C x H x W float32, packed, changed in place. The box is in pixels
// (CropWindow, image.h: x, y = column, row of its top-left corner).
// Errors: std::invalid_argument for a box outside the tensor or a value list that is not
// 1 or C long.
#pragma once

#include <span>

#include "transforms/image.h"
#include "transforms/rng.h"

namespace pipebench {

/// torchvision F.erase(img, i=box.y, j=box.x, h=box.height, w=box.width, v): every pixel of
/// the box set to value[c] (value has 1 entry, broadcast, or one per channel).
void erase(float* chw, int channels, int height, int width, const CropWindow& box,
           std::span<const float> value);

/// The same box filled with N(0, 1) values, one draw per element (torchvision's
/// value="random", timm's mode "pixel"), from rng by the ziggurat method (normal.h).
void erase_random(float* chw, int channels, int height, int width, const CropWindow& box, Rng& rng);

/// torchvision RandomErasing.get_params: up to 10 tries of an area fraction uniform in
/// [scale_lo, scale_hi] and an aspect ratio log-uniform in [ratio_lo, ratio_hi], with
/// h = round(sqrt(area * ratio)), w = round(sqrt(area / ratio)), kept when h < height and
/// w < width, placed uniformly; no box (width 0) when all ten fail.
CropWindow erasing_box(int height, int width, double scale_lo, double scale_hi, double ratio_lo,
                       double ratio_hi, Rng& rng);

}  // namespace pipebench
