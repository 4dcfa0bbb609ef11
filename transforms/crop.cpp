// Geometric transforms (crop.h). Pixels are handed to OpenCV through cv::Mat headers over
// the Images' own storage, so nothing is copied or allocated once an output Image has the
// capacity for its shape.
#include "transforms/crop.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "transforms/opencv_serial.h"

namespace pipebench {
namespace {

std::string shape_str(int h, int w) { return std::to_string(h) + " x " + std::to_string(w); }

void check_image(const Image& img, const char* what) {
  if (img.height <= 0 || img.width <= 0 || (img.channels != 1 && img.channels != 3) ||
      img.data.size() < img.size_bytes()) {
    throw std::invalid_argument(std::string(what) + ": source image must be non-empty with 1 or 3 channels, got " +
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

void resized_crop(const Image& src, const CropWindow& window, int out_height, int out_width,
                  Image& out) {
  check_image(src, "resized_crop");
  check_window(src, window, "resized_crop");
  if (out_height <= 0 || out_width <= 0) {
    throw std::invalid_argument("resized_crop: output size must be positive, got " +
                                shape_str(out_height, out_width) + " (H x W)");
  }
  if (&src == &out) throw std::invalid_argument("resized_crop: src and out must differ");
  if (out_height == window.height && out_width == window.width) {
    copy_window(src, window, out);
    return;
  }
  detail::opencv_serial();
  out.resize(out_height, out_width, src.channels);
  const cv::Mat roi = mat_of(src)(cv::Rect(window.x, window.y, window.width, window.height));
  cv::Mat dst(out_height, out_width, CV_8UC(src.channels), out.ptr(), out.row_bytes());
  const bool shrinking = out_height <= window.height && out_width <= window.width;
  cv::resize(roi, dst, dst.size(), 0, 0, shrinking ? cv::INTER_AREA : cv::INTER_LINEAR);
}

void resize_shorter(const Image& src, int size, Image& out) {
  check_image(src, "resize_shorter");
  if (size <= 0) {
    throw std::invalid_argument("resize_shorter: size must be positive, got " +
                                std::to_string(size));
  }
  // torchvision _compute_resized_output_size: new_long = int(size * long / short); the
  // integer quotient equals the float one truncated for any realistic size.
  int out_h, out_w;
  if (src.width <= src.height) {
    out_w = size;
    out_h = static_cast<int>(static_cast<int64_t>(size) * src.height / src.width);
  } else {
    out_h = size;
    out_w = static_cast<int>(static_cast<int64_t>(size) * src.width / src.height);
  }
  resized_crop(src, CropWindow{0, 0, src.width, src.height}, out_h, out_w, out);
}

void center_crop(const Image& src, int size, Image& out) {
  check_image(src, "center_crop");
  if (size <= 0 || src.height < size || src.width < size) {
    throw std::invalid_argument("center_crop: size must be in [1, min(H, W)] of the " +
                                shape_str(src.height, src.width) + " (H x W) image, got " +
                                std::to_string(size));
  }
  if (&src == &out) throw std::invalid_argument("center_crop: src and out must differ");
  // torchvision CenterCrop: int(round((dim - size) / 2.0)), Python rounding.
  const int top = py_round((src.height - size) / 2.0);
  const int left = py_round((src.width - size) / 2.0);
  copy_window(src, CropWindow{left, top, size, size}, out);
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

void horizontal_flip(Image& img) {
  if (img.height <= 0 || img.width <= 1) return;
  const int w = img.width;
  if (img.channels == 3) {
    for (int y = 0; y < img.height; ++y) {
      uint8_t* r = img.row(y);
      uint8_t* a = r;
      uint8_t* b = r + static_cast<size_t>(w - 1) * 3;
      for (; a < b; a += 3, b -= 3) {
        std::swap(a[0], b[0]);
        std::swap(a[1], b[1]);
        std::swap(a[2], b[2]);
      }
    }
  } else if (img.channels == 1) {
    for (int y = 0; y < img.height; ++y) {
      const size_t rb = img.row_bytes();
      uint8_t* r = img.row(y);
      for (size_t x = 0; x < rb / 2; ++x) std::swap(r[x], r[rb - 1 - x]);
    }
  } else {
    throw std::invalid_argument("horizontal_flip: channels must be 1 or 3, got " +
                                std::to_string(img.channels));
  }
}

}  // namespace pipebench
