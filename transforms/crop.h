// Geometric per-sample transforms on HWC uint8 images (image.h): crop windows, crops, and
// the resizes built on them. Resampling is bilinear (cv::resize INTER_LINEAR's bits) when
// enlarging and area averaging (INTER_AREA's weights) when shrinking, the closest OpenCV
// match to torchvision's antialiased bilinear resize; the bilinear, area-shrinking and
// bicubic filters run on pipebench's engine (resize.h, scratch per calling thread), nearest
// and "area" on cv::resize. Everything runs on the calling thread: the first OpenCV call
// switches OpenCV's own threading off process-wide (cv::setNumThreads(0)), since pipebench
// parallelises across samples.
// Errors: std::invalid_argument for sizes <= 0, windows outside the image, or a whole
// resized image above kMaxResizePixels.
#pragma once

#include <cstdint>
#include <optional>

#include "transforms/image.h"
#include "transforms/resize.h"
#include "transforms/rng.h"

namespace pipebench {

/// torchvision RandomResizedCrop defaults (torchvision.transforms.RandomResizedCrop).
struct RandomResizedCropParams {
  double scale_min = 0.08;     ///< area fraction of the source
  double scale_max = 1.0;
  double ratio_min = 3.0 / 4;  ///< width / height
  double ratio_max = 4.0 / 3;
};

/// torchvision's RandomResizedCrop.get_params: up to 10 tries of a random area fraction in
/// [scale_min, scale_max] and a log-uniform aspect ratio in [ratio_min, ratio_max]; the
/// first window that fits wins, with a uniform offset. Otherwise the fallback: a central
/// crop with the ratio clamped to the range (at least 1 x 1). Rounding is Python's
/// round() (half to even), as torchvision's. Throws std::invalid_argument for sizes <= 0
/// or a scale/ratio range that is empty or not positive. Works on sizes only, so an ROI
/// decoder can use the window before any pixel is decoded.
CropWindow random_resized_crop_window(int height, int width, Rng& rng,
                                      const RandomResizedCropParams& params = {});

/// The most pixels resized_crop and resize_shorter may write as one image: the default of
/// DecodeOptions::max_pixels (jpeg_decode.h), 100 million, as a resize should not make an
/// image that pipebench would refuse to decode. Beyond it they throw std::invalid_argument
/// naming the size (Resize(256) of a valid 65000 x 1 JPEG would be 256 x 16.6 million
/// pixels, 12.8 GB). resize_shorter_center_crop(_to_chw) computes only the kept pixels and
/// has no such limit: its memory follows the crop and the source, whatever the aspect ratio.
inline constexpr int64_t kMaxResizePixels = 100'000'000;

/// Crops `window` of src and resizes it to out_height x out_width: area averaging when
/// neither side grows (OpenCV's INTER_AREA box filter, computed by a faster separable
/// implementation that matches cv::resize(INTER_AREA) to +-1), else bilinear, bit-identical
/// to cv::resize(INTER_LINEAR); a plain copy when the sizes match. mirror = true also flips
/// the result left-right, bit-identical to calling horizontal_flip(out) afterwards but
/// without the extra pass. src and out must be different Images (also for center_crop,
/// random_crop).
void resized_crop(const Image& src, const CropWindow& window, int out_height, int out_width,
                  Image& out, bool mirror = false);

/// Resampling filters of torchvision's InterpolationMode that pipebench offers.
enum class Interpolation { kBilinear, kNearest, kBicubic, kArea };

/// resized_crop with a chosen filter. kBilinear is resized_crop above (area averaging when
/// shrinking, bilinear when enlarging: the closest match to torchvision's antialiased
/// bilinear); kBicubic is cv::resize(INTER_CUBIC)'s bits (A = -0.75, no antialias, as
/// torchvision's antialias=False) from pipebench's engine; kNearest and kArea are cv::resize
/// with INTER_NEAREST and INTER_AREA.
void resized_crop(const Image& src, const CropWindow& window, int out_height, int out_width,
                  Image& out, bool mirror, Interpolation interpolation);

/// The engine filter (resize.h) resized_crop uses for `interpolation` on this window and
/// output size (kBilinear: kArea when neither side grows, else kLinear), or std::nullopt
/// where it calls cv::resize (kNearest, kArea). With it, Resampler::to_image gives
/// resized_crop's bits and Resampler::to_chw those values mapped to floats.
std::optional<ResampleFilter> resample_filter(Interpolation interpolation, const CropWindow& window,
                                             int out_height, int out_width);

/// resized_crop's values written straight into float32 CHW (3 x out_height x out_width at
/// out) through `affine`: out[c][y][x] = q * affine.scale[c] + affine.bias[c], q the uint8
/// value resized_crop(src, window, out_height, out_width, img, mirror, interpolation) puts
/// at (y, x, c), in one pass with `resampler`'s scratch (the planner's resize + normalize).
/// Throws std::invalid_argument as resized_crop, for a source that is not 3-channel, and
/// for kNearest / kArea (cv::resize's, not the engine's: resize, then normalize).
void resized_crop_to_chw(const Image& src, const CropWindow& window, int out_height,
                         int out_width, bool mirror, Interpolation interpolation,
                         const ChannelAffine& affine, float* out, Resampler& resampler);

/// Resize so that the shorter side is `size` (torchvision Resize(int)), aspect kept; the
/// longer side is floor(size * long / short) as torchvision computes it.
void resize_shorter(const Image& src, int size, Image& out);
/// The same with a chosen filter (see resized_crop's Interpolation overload).
void resize_shorter(const Image& src, int size, Image& out, Interpolation interpolation);

/// The window center_crop takes of a height x width image (offsets round((dim - size) / 2),
/// Python rounding). Throws std::invalid_argument when the image is smaller than size.
CropWindow center_crop_window(int height, int width, int size);

/// The central size x size window (torchvision CenterCrop: offsets round((dim - size) / 2),
/// Python rounding, so 2.5 -> 2 and 1.5 -> 2).
/// Throws std::invalid_argument when the image is smaller than size.
void center_crop(const Image& src, int size, Image& out);

/// resize_shorter(src, resize_size) then center_crop(crop_size), the validation transform
/// (torchvision Resize(256) + CenterCrop(224)), bit-identical to the two calls; whether the
/// resize shrinks or enlarges, only the kept crop_size x crop_size pixels are computed, and
/// its scratch holds the taps of those alone, so memory follows the crop and the source row
/// (bytes), never the whole resized image (a 65000 x 1 source: about 1 MB, where the whole
/// resize would be 12.8 GB). Throws std::invalid_argument for sizes <= 0 or a crop larger
/// than the resized image.
void resize_shorter_center_crop(const Image& src, int resize_size, int crop_size, Image& out);

/// resize_shorter_center_crop's values written straight into float32 CHW (3 x crop_size x
/// crop_size at out) through `affine`, as resized_crop_to_chw. Throws as
/// resize_shorter_center_crop, and for a source that is not 3-channel.
void resize_shorter_center_crop_to_chw(const Image& src, int resize_size, int crop_size,
                                       const ChannelAffine& affine, float* out,
                                       Resampler& resampler);

/// A size x size window at a uniform random offset (torchvision RandomCrop(size), no
/// padding). Throws std::invalid_argument when the image is smaller than size.
void random_crop(const Image& src, int size, Rng& rng, Image& out);
/// The window random_crop would take (sizes only).
CropWindow random_crop_window(int height, int width, int size, Rng& rng);

/// Mirror left-right in place. Throws std::invalid_argument for channels other than 1 or 3.
void horizontal_flip(Image& img);
/// The same on a raw height x width x channels uint8 image (HWC, rows packed), e.g. one
/// sample of an NHWC batch (pipeline/collate.h finish_u8_batch).
void horizontal_flip(uint8_t* hwc, int height, int width, int channels);
/// Mirror top-bottom in place.
void vertical_flip(Image& img);

}  // namespace pipebench
