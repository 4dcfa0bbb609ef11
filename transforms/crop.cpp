// Geometric transforms (crop.h). Pixels are handed to OpenCV through cv::Mat headers over
// the Images' own storage, so nothing is copied or allocated once an output Image has the
// capacity for its shape.
#include "transforms/crop.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "transforms/opencv_serial.h"
#include "transforms/resize.h"

namespace pipebench {
namespace {

std::string shape_str(int h, int w) { return std::to_string(h) + " x " + std::to_string(w); }

void check_image(const Image& img, const char* what) {
  if (img.height <= 0 || img.width <= 0 || (img.channels != 1 && img.channels != 3) ||
      img.data.size() < img.size_bytes()) {
    throw std::invalid_argument(std::string(what) +
                                ": source image must be non-empty with 1 or 3 channels, got " +
                                shape_str(img.height, img.width) + " x " +
                                std::to_string(img.channels));
  }
}

void check_window(const Image& src, const CropWindow& w, const char* what) {
  if (w.width <= 0 || w.height <= 0 || w.x < 0 || w.y < 0 || w.x > src.width - w.width ||
      w.y > src.height - w.height) {
    throw std::invalid_argument(
        std::string(what) + ": window (x " + std::to_string(w.x) + ", y " + std::to_string(w.y) +
        ", " + std::to_string(w.width) + " wide, " + std::to_string(w.height) +
        " high) must be non-empty and inside the " + shape_str(src.height, src.width) +
        " (H x W) image");
  }
}

cv::Mat mat_of(const Image& img) {
  // cv::Mat never writes through a header made from const data here; the const_cast is
  // only the price of OpenCV's non-const constructor.
  return cv::Mat(img.height, img.width, CV_8UC(img.channels),
                 const_cast<uint8_t*>(img.ptr()), img.row_bytes());
}

// Copies `window` of src into out (no resampling).
void copy_window(const Image& src, const CropWindow& w, Image& out) {
  out.resize(w.height, w.width, src.channels);
  const size_t n = out.row_bytes();
  for (int y = 0; y < w.height; ++y) {
    std::memcpy(out.row(y), src.row(w.y + y) + static_cast<size_t>(w.x) * src.channels, n);
  }
}

// The calling thread's resampling scratch (crop.h's functions have no workspace argument;
// the planner's fused steps use the PipelineWorkspace's own Resampler).
Resampler& thread_resampler() {
  thread_local Resampler r;
  return r;
}

// torchvision _compute_resized_output_size for Resize(int): new_long = int(size * long /
// short); the integer quotient equals the float one truncated for any realistic size.
// A long side past INT_MAX (Resize(40000) of a 65000 x 1 image) is refused, not wrapped.
void shorter_side_size(const Image& src, int size, int& out_h, int& out_w) {
  const int shorter = std::min(src.width, src.height), longer = std::max(src.width, src.height);
  const int64_t resized = static_cast<int64_t>(size) * longer / shorter;
  if (resized > INT_MAX) {
    throw std::invalid_argument("resize: the shorter side " + std::to_string(shorter) +
                                " resized to " + std::to_string(size) + " makes the longer " +
                                std::to_string(longer) + " " + std::to_string(resized) +
                                " pixels, more than an image side can hold");
  }
  if (src.width <= src.height) {
    out_w = size;
    out_h = static_cast<int>(resized);
  } else {
    out_h = size;
    out_w = static_cast<int>(resized);
  }
}

// Whole resized images stay within kMaxResizePixels (crop.h).
void check_resized_pixels(int out_height, int out_width, const char* what) {
  const int64_t pixels = static_cast<int64_t>(out_height) * out_width;
  if (pixels > kMaxResizePixels) {
    throw std::invalid_argument(std::string(what) + ": the resized image would be " +
                                shape_str(out_height, out_width) + " (H x W), " +
                                std::to_string(pixels) + " pixels, above the limit of " +
                                std::to_string(kMaxResizePixels) +
                                " (crop it in the same step: resize + center_crop computes "
                                "only the kept pixels)");
  }
}

// Python's round() (half to even), as torchvision uses: nearbyint under the default
// rounding mode FE_TONEAREST.
int py_round(double v) { return static_cast<int>(std::nearbyint(v)); }

}  // namespace

CropWindow random_resized_crop_window(int height, int width, Rng& rng,
                                      const RandomResizedCropParams& p) {
  if (height <= 0 || width <= 0) {
    throw std::invalid_argument("random_resized_crop_window: image size must be positive, got " +
                                shape_str(height, width) + " (H x W)");
  }
  if (!(p.scale_min > 0 && p.scale_min <= p.scale_max) ||
      !(p.ratio_min > 0 && p.ratio_min <= p.ratio_max)) {
    throw std::invalid_argument(
        "random_resized_crop_window: need 0 < scale_min <= scale_max and 0 < ratio_min <= "
        "ratio_max, got scale [" + std::to_string(p.scale_min) + ", " +
        std::to_string(p.scale_max) + "], ratio [" + std::to_string(p.ratio_min) + ", " +
        std::to_string(p.ratio_max) + "]");
  }
  const double area = static_cast<double>(height) * width;
  const double log_r0 = std::log(p.ratio_min);
  const double log_r1 = std::log(p.ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target_area = area * rng.uniform(p.scale_min, p.scale_max);
    const double aspect = std::exp(rng.uniform(log_r0, log_r1));
    const int w = py_round(std::sqrt(target_area * aspect));
    const int h = py_round(std::sqrt(target_area / aspect));
    if (0 < w && w <= width && 0 < h && h <= height) {
      const int i = static_cast<int>(rng.uniform_int(0, height - h));
      const int j = static_cast<int>(rng.uniform_int(0, width - w));
      return CropWindow{j, i, w, h};
    }
  }
  // Fallback: central crop, ratio clamped to [ratio_min, ratio_max].
  const double in_ratio = static_cast<double>(width) / height;
  int w = width;
  int h = height;
  if (in_ratio < p.ratio_min) {
    h = py_round(w / p.ratio_min);
  } else if (in_ratio > p.ratio_max) {
    w = py_round(h * p.ratio_max);
  }
  // torchvision would return an empty window for a 1-pixel side and an extreme ratio
  // range; keep it at least one pixel.
  h = std::max(1, std::min(h, height));
  w = std::max(1, std::min(w, width));
  return CropWindow{(width - w) / 2, (height - h) / 2, w, h};
}

namespace {

void check_resized_crop(const Image& src, const CropWindow& window, int out_height,
                        int out_width, const Image& out) {
  check_image(src, "resized_crop");
  check_window(src, window, "resized_crop");
  if (out_height <= 0 || out_width <= 0) {
    throw std::invalid_argument("resized_crop: output size must be positive, got " +
                                shape_str(out_height, out_width) + " (H x W)");
  }
  if (&src == &out) throw std::invalid_argument("resized_crop: src and out must differ");
  check_resized_pixels(out_height, out_width, "resized_crop");
}

// cv::resize of the window into out with OpenCV's `flag`, then the optional mirror.
void cv_resized_crop(const Image& src, const CropWindow& window, int out_height, int out_width,
                     Image& out, bool mirror, int flag) {
  detail::opencv_serial();
  out.resize(out_height, out_width, src.channels);
  const cv::Mat roi = mat_of(src)(cv::Rect(window.x, window.y, window.width, window.height));
  cv::Mat dst(out_height, out_width, CV_8UC(src.channels), out.ptr(), out.row_bytes());
  cv::resize(roi, dst, dst.size(), 0, 0, flag);
  if (mirror) horizontal_flip(out);
}

}  // namespace

std::optional<ResampleFilter> resample_filter(Interpolation interpolation, const CropWindow& window,
                                             int out_height, int out_width) {
  switch (interpolation) {
    case Interpolation::kBilinear: return bilinear_filter(window, out_height, out_width);
    case Interpolation::kBicubic: return ResampleFilter::kCubic;
    case Interpolation::kNearest:
    case Interpolation::kArea: return std::nullopt;
  }
  return std::nullopt;
}

void resized_crop(const Image& src, const CropWindow& window, int out_height, int out_width,
                  Image& out, bool mirror) {
  resized_crop(src, window, out_height, out_width, out, mirror, Interpolation::kBilinear);
}

void resized_crop(const Image& src, const CropWindow& window, int out_height, int out_width,
                  Image& out, bool mirror, Interpolation interpolation) {
  check_resized_crop(src, window, out_height, out_width, out);
  const auto filter = resample_filter(interpolation, window, out_height, out_width);
  if (!filter) {
    const int flag = interpolation == Interpolation::kNearest ? cv::INTER_NEAREST : cv::INTER_AREA;
    cv_resized_crop(src, window, out_height, out_width, out, mirror, flag);
    return;
  }
  if (out_height == window.height && out_width == window.width) {
    copy_window(src, window, out);  // every filter gives the window itself at scale 1
    if (mirror) horizontal_flip(out);
    return;
  }
  thread_resampler().to_image(src, window, out_height, out_width,
                              CropWindow{0, 0, out_width, out_height}, mirror, *filter, out);
}

void resized_crop_to_chw(const Image& src, const CropWindow& window, int out_height,
                         int out_width, bool mirror, Interpolation interpolation,
                         const ChannelAffine& affine, float* out, Resampler& resampler) {
  check_image(src, "resized_crop");
  check_window(src, window, "resized_crop");
  const auto filter = resample_filter(interpolation, window, out_height, out_width);
  if (!filter) {
    throw std::invalid_argument("resized_crop_to_chw: nearest and area are cv::resize's filters; "
                                "resize, then normalize");
  }
  // At scale 1 every engine filter gives the window's own values (resized_crop's copy).
  resampler.to_chw(src, window, out_height, out_width, CropWindow{0, 0, out_width, out_height},
                   mirror, *filter, affine, out);
}

void resize_shorter(const Image& src, int size, Image& out) {
  resize_shorter(src, size, out, Interpolation::kBilinear);
}

void resize_shorter(const Image& src, int size, Image& out, Interpolation interpolation) {
  check_image(src, "resize_shorter");
  if (size <= 0) {
    throw std::invalid_argument("resize_shorter: size must be positive, got " +
                                std::to_string(size));
  }
  int out_h, out_w;
  shorter_side_size(src, size, out_h, out_w);
  check_resized_pixels(out_h, out_w, "resize_shorter");
  resized_crop(src, CropWindow{0, 0, src.width, src.height}, out_h, out_w, out, false,
               interpolation);
}

CropWindow center_crop_window(int height, int width, int size) {
  if (size <= 0 || height < size || width < size) {
    throw std::invalid_argument("center_crop: size must be in [1, min(H, W)] of the " +
                                shape_str(height, width) + " (H x W) image, got " +
                                std::to_string(size));
  }
  // torchvision CenterCrop: int(round((dim - size) / 2.0)), Python rounding.
  return CropWindow{py_round((width - size) / 2.0), py_round((height - size) / 2.0), size, size};
}

void center_crop(const Image& src, int size, Image& out) {
  check_image(src, "center_crop");
  const CropWindow w = center_crop_window(src.height, src.width, size);
  if (&src == &out) throw std::invalid_argument("center_crop: src and out must differ");
  copy_window(src, w, out);
}

namespace {

// resize_shorter_center_crop's checks; the resized size and the crop's window in it.
void center_crop_plan(const Image& src, int resize_size, int crop_size, const char* what,
                      int& out_h, int& out_w, CropWindow& keep) {
  check_image(src, what);
  if (resize_size <= 0) {
    throw std::invalid_argument(std::string(what) + ": resize_size must be positive, got " +
                                std::to_string(resize_size));
  }
  shorter_side_size(src, resize_size, out_h, out_w);
  if (crop_size <= 0 || out_h < crop_size || out_w < crop_size) {
    throw std::invalid_argument(std::string(what) + ": crop_size must be in [1, " +
                                std::to_string(std::min(out_h, out_w)) + "] (the resized " +
                                shape_str(out_h, out_w) + " image), got " +
                                std::to_string(crop_size));
  }
  keep = CropWindow{py_round((out_w - crop_size) / 2.0), py_round((out_h - crop_size) / 2.0),
                    crop_size, crop_size};
}

}  // namespace

void resize_shorter_center_crop(const Image& src, int resize_size, int crop_size, Image& out) {
  int out_h, out_w;
  CropWindow keep;
  center_crop_plan(src, resize_size, crop_size, "resize_shorter_center_crop", out_h, out_w, keep);
  if (&src == &out) {
    throw std::invalid_argument("resize_shorter_center_crop: src and out must differ");
  }
  if (out_h == src.height && out_w == src.width) {
    center_crop(src, crop_size, out);
    return;
  }
  // Every output pixel depends on its own taps only: computing the kept pixels alone gives
  // the bits of resizing everything and cropping.
  const CropWindow all{0, 0, src.width, src.height};
  thread_resampler().to_image(src, all, out_h, out_w, keep, false,
                              bilinear_filter(all, out_h, out_w), out);
}

void resize_shorter_center_crop_to_chw(const Image& src, int resize_size, int crop_size,
                                       const ChannelAffine& affine, float* out,
                                       Resampler& resampler) {
  int out_h, out_w;
  CropWindow keep;
  center_crop_plan(src, resize_size, crop_size, "resize_shorter_center_crop", out_h, out_w, keep);
  // At scale 1 the area filter has one tap of weight 1: the source values themselves.
  const CropWindow all{0, 0, src.width, src.height};
  resampler.to_chw(src, all, out_h, out_w, keep, false, bilinear_filter(all, out_h, out_w),
                   affine, out);
}

CropWindow random_crop_window(int height, int width, int size, Rng& rng) {
  if (size <= 0 || height < size || width < size) {
    throw std::invalid_argument("random_crop: size must be in [1, min(H, W)] of the " +
                                shape_str(height, width) + " (H x W) image, got " +
                                std::to_string(size));
  }
  // torchvision RandomCrop.get_params: no draw when the image is exactly the crop.
  if (height == size && width == size) return CropWindow{0, 0, size, size};
  const int i = static_cast<int>(rng.uniform_int(0, height - size));
  const int j = static_cast<int>(rng.uniform_int(0, width - size));
  return CropWindow{j, i, size, size};
}

void random_crop(const Image& src, int size, Rng& rng, Image& out) {
  check_image(src, "random_crop");
  if (&src == &out) throw std::invalid_argument("random_crop: src and out must differ");
  copy_window(src, random_crop_window(src.height, src.width, size, rng), out);
}

void horizontal_flip(Image& img) { horizontal_flip(img.ptr(), img.height, img.width, img.channels); }

void horizontal_flip(uint8_t* hwc, int height, int width, int channels) {
  if (channels != 1 && channels != 3) {
    throw std::invalid_argument("horizontal_flip: channels must be 1 or 3, got " +
                                std::to_string(channels));
  }
  if (height <= 0 || width <= 1) return;
  // cv::flip swaps mirrored pixel pairs, so it works in place; its SIMD row reversal took
  // 0.4x the time of a plain 3-byte swap loop on 224 x 224.
  detail::opencv_serial();
  cv::Mat m(height, width, CV_8UC(channels), hwc);
  cv::flip(m, m, 1);
}

void vertical_flip(Image& img) {
  if (img.height <= 1 || img.width <= 0) return;
  detail::opencv_serial();
  cv::Mat m = mat_of(img);
  cv::flip(m, m, 0);
}

}  // namespace pipebench
