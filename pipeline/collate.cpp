// Collate: per-sample outputs into one contiguous batch (see collate.h).
#include "pipeline/collate.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "transforms/crop.h"

namespace pipebench {
namespace {

std::string shape_text(int h, int w, int c) {
  return std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(c);
}

void check_dims(const char* where, int n, int c, int h, int w) {
  if (n < 0 || c <= 0 || h <= 0 || w <= 0)
    throw std::invalid_argument(std::string(where) + ": shape N x C x H x W must be > 0 (N >= 0), got " +
                                std::to_string(n) + " x " + std::to_string(c) + " x " +
                                std::to_string(h) + " x " + std::to_string(w));
}

// Every image has image 0's shape (> 0) and holds its bytes; returns bytes per image.
size_t check_images(const char* where, std::span<const Image* const> images) {
  if (images[0] == nullptr) throw std::invalid_argument(std::string(where) + ": image 0 is null");
  const int h = images[0]->height, w = images[0]->width, c = images[0]->channels;
  if (h <= 0 || w <= 0 || c <= 0)
    throw std::invalid_argument(std::string(where) + ": image 0 has shape " + shape_text(h, w, c) +
                                ", every dimension must be > 0");
  const size_t bytes = static_cast<size_t>(h) * w * c;
  for (size_t i = 0; i < images.size(); ++i) {
    const Image* img = images[i];
    if (img == nullptr) throw std::invalid_argument(std::string(where) + ": image " + std::to_string(i) + " is null");
    if (img->height != h || img->width != w || img->channels != c)
      throw std::invalid_argument(std::string(where) + ": image " + std::to_string(i) + " is " +
                                  shape_text(img->height, img->width, img->channels) + ", expected " +
                                  shape_text(h, w, c) + " (HxWxC) like image 0");
    if (img->data.size() < bytes)
      throw std::invalid_argument(std::string(where) + ": image " + std::to_string(i) +
                                  " holds fewer bytes than its shape");
  }
  return bytes;
}

}  // namespace

void collate_chw_f32(std::span<const float* const> samples, size_t sample_floats, float* out) {
  if (samples.empty()) return;
  if (sample_floats == 0) throw std::invalid_argument("collate_chw_f32: sample_floats must be > 0");
  if (out == nullptr) throw std::invalid_argument("collate_chw_f32: out is null");
  for (size_t i = 0; i < samples.size(); ++i) {
    if (samples[i] == nullptr) {
      throw std::invalid_argument("collate_chw_f32: sample " + std::to_string(i) + " is null");
    }
    std::memcpy(out + i * sample_floats, samples[i], sample_floats * sizeof(float));
  }
}

void collate_hwc_u8_to_nchw(std::span<const Image* const> images, uint8_t* out) {
  if (images.empty()) return;
  if (out == nullptr) throw std::invalid_argument("collate_hwc_u8_to_nchw: out is null");
  const size_t bytes = check_images("collate_hwc_u8_to_nchw", images);
  for (size_t i = 0; i < images.size(); ++i) write_image_u8(*images[i], BatchLayout::kNCHW, out + i * bytes);
}

void collate_hwc_u8_to_nhwc(std::span<const Image* const> images, uint8_t* out) {
  if (images.empty()) return;
  if (out == nullptr) throw std::invalid_argument("collate_hwc_u8_to_nhwc: out is null");
  const size_t bytes = check_images("collate_hwc_u8_to_nhwc", images);
  for (size_t i = 0; i < images.size(); ++i) std::memcpy(out + i * bytes, images[i]->ptr(), bytes);
}

void collate_image_u8(const Image& image, BatchLayout layout, uint8_t* slot) {
  if (slot == nullptr) throw std::invalid_argument("collate_image_u8: slot is null");
  const Image* one[] = {&image};
  check_images("collate_image_u8", one);
  write_image_u8(image, layout, slot);
}

void collate_chw_f32_to_hwc(const float* chw, int channels, int height, int width, float* slot) {
  if (chw == nullptr || slot == nullptr) throw std::invalid_argument("collate_chw_f32_to_hwc: a pointer is null");
  check_dims("collate_chw_f32_to_hwc", 1, channels, height, width);
  const size_t plane = static_cast<size_t>(height) * width;
  for (size_t p = 0; p < plane; ++p)
    for (int c = 0; c < channels; ++c) slot[p * channels + c] = chw[c * plane + p];
}

void normalize_u8_batch(const uint8_t* in, BatchLayout layout, int n, int channels, int height,
                        int width, const DeferredNormalize* norm, float* out) {
  if (in == nullptr || out == nullptr) throw std::invalid_argument("normalize_u8_batch: a pointer is null");
  check_dims("normalize_u8_batch", n, channels, height, width);
  if (norm != nullptr) {
    if (channels != 3)
      throw std::invalid_argument("normalize_u8_batch: normalize needs 3 channels, got " + std::to_string(channels));
    for (int c = 0; c < 3; ++c)
      if (!(norm->std[c] != 0.0f) || !std::isfinite(norm->std[c]) || !std::isfinite(norm->mean[c]))
        throw std::invalid_argument("normalize_u8_batch: std must be finite and non-zero and mean finite (channel " +
                                    std::to_string(c) + ")");
  }
  const size_t plane = static_cast<size_t>(height) * width, sample = plane * channels;
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    for (int c = 0; c < channels; ++c) {
      float* dst = out + i * sample + c * plane;
      for (size_t p = 0; p < plane; ++p) {
        const size_t src = i * sample + (layout == BatchLayout::kNHWC ? p * channels + c : c * plane + p);
        const float q = static_cast<float>(in[src]);
        dst[p] = norm != nullptr ? (q / 255.0f - norm->mean[c]) / norm->std[c] : q;
      }
    }
  }
}

void finish_u8_batch(uint8_t* data, int n, int channels, int height, int width, const uint8_t* flips,
                     std::span<const MixDraw> mixes) {
  if (data == nullptr) throw std::invalid_argument("finish_u8_batch: the batch is null");
  check_dims("finish_u8_batch", n, channels, height, width);
  const size_t sample = static_cast<size_t>(channels) * width * height;
  for (int i = 0; flips != nullptr && i < n; ++i)
    if (flips[i] != 0) horizontal_flip(data + i * sample, height, width, channels);
  for (const MixDraw& d : mixes) {
    if (!d.apply) continue;
    if (d.cut) cut_batch_u8_nhwc(data, n, height, width, channels, d.box);
    else mix_batch_u8(data, n, sample, static_cast<float>(d.lam));
  }
}

}  // namespace pipebench
