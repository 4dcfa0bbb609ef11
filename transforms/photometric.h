// Photometric kernels on uint8 HWC RGB images: the pixel work behind color_jitter,
// random_grayscale, gaussian_blur, the random_* photometric operators and the operations
// of the augmentation policies (augment.h). Deterministic: the caller draws the factors.
//
// Each follows torchvision 0.14's functional_tensor.py on a uint8 tensor, which computes
// in float32 and converts back to uint8 by truncation (the `.to(uint8)` in _blend) or by
// rounding (_cast_squeeze_out, after a convolution); each function says which, because that
// decides whether pipebench's output is bit-identical to torchvision's:
//   exact:  invert, posterize, solarize, equalize, autocontrast, rgb_to_grayscale,
//           adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue (float32 in
//           the same order of operations), adjust_sharpness (its rounded 3x3 smoothing is
//           an exact integer: n / 13 is never within float error of a half);
//   within 1 level: gaussian_blur (a convolution: float summation order).
// The blends (brightness, contrast, saturation, sharpness) take their factor as a double,
// torchvision's Python float: `ratio * img` uses float32(ratio), `1.0 - ratio` is computed
// in double and then rounded, as in _blend. (For a factor that is a float32 value, as
// ColorJitter's draws, the two agree; AutoAugment's 1.0 + magnitude is not one.)
// tests/scripts/torchvision_reference_test.py measures each against torchvision.
//
// Shapes: `img` is H x W x 3 (RGB), packed (Image, image.h); functions that need a second
// buffer take `scratch` (resized as needed, contents unspecified afterwards). Every
// function works in place on `img` and keeps its shape.
// Errors: std::invalid_argument for an image that is not 3-channel or a parameter outside
// the range stated (the spec's schema checks them first; these guard direct callers).
#pragma once

#include "transforms/image.h"

namespace pipebench {

/// torchvision adjust_brightness: img * factor, clamped to [0, 255], truncated. factor >= 0.
void adjust_brightness(Image& img, double factor);
/// torchvision adjust_contrast: blend with the mean of the grayscale image (a float32
/// mean of the truncated uint8 gray values). factor >= 0.
void adjust_contrast(Image& img, double factor);
/// torchvision adjust_saturation: blend with the (truncated uint8) grayscale image.
/// factor >= 0.
void adjust_saturation(Image& img, double factor);
/// torchvision adjust_hue: x / 255 -> HSV (_rgb2hsv, floats in [0, 1]), hue += factor
/// (mod 1), back (_hsv2rgb), * 255 truncated. factor in [-0.5, 0.5].
void adjust_hue(Image& img, float factor);
/// torchvision rgb_to_grayscale(num_output_channels=3): gray = 0.2989 R + 0.587 G +
/// 0.114 B (float32, truncated) written to all three channels.
void rgb_to_grayscale(Image& img);
/// torchvision autocontrast: per channel, (x - min) * 255 / (max - min), clamped and
/// truncated; a channel with max == min is left unchanged.
void autocontrast(Image& img);
/// torchvision equalize: per channel histogram equalization with PIL's lookup table
/// (step = (count of pixels outside the last non-empty bin) // 255; unchanged when 0).
void equalize(Image& img);
/// torchvision posterize: keeps the top `bits` bits of every value. bits in [0, 8].
void posterize(Image& img, int bits);
/// torchvision solarize: x >= threshold (compared in float32) -> 255 - x. threshold in
/// [0, 256] (256: no-op; torchvision's tensor path refuses thresholds above 255, PIL's
/// accepts any).
void solarize(Image& img, float threshold);
/// torchvision invert: 255 - x.
void invert(Image& img);
/// torchvision adjust_sharpness: blend with the image smoothed by the 3x3 kernel
/// [[1,1,1],[1,5,1],[1,1,1]] / 13 (rounded to uint8; the one-pixel border keeps the
/// original, and is blended with itself, which can truncate it by 1 as in torchvision).
/// factor >= 0 (0: the smoothed image, 1: unchanged, 2: twice as sharp). An image of
/// 2 pixels or fewer on a side is returned unchanged (torchvision).
void adjust_sharpness(Image& img, double factor, Image& scratch);
/// torchvision gaussian_blur: separable Gaussian of odd `kernel_size` (>= 1; square
/// kernel) and `sigma` (> 0), weights exp(-x^2 / (2 sigma^2)) normalised, x =
/// -(k-1)/2 ... (k-1)/2, reflect padding (torch "reflect" = OpenCV BORDER_REFLECT_101),
/// rounded. Needs kernel_size / 2 < min(H, W) (torch's reflect padding limit).
void gaussian_blur(Image& img, int kernel_size, float sigma, Image& scratch);

}  // namespace pipebench
