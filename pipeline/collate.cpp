// Collate: per-sample outputs into one contiguous NCHW batch (see collate.h).
#include "pipeline/collate.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace pipebench {

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
  if (images[0] == nullptr) throw std::invalid_argument("collate_hwc_u8_to_nchw: image 0 is null");
  const int h = images[0]->height, w = images[0]->width, c = images[0]->channels;
  if (h <= 0 || w <= 0 || c <= 0) {
    throw std::invalid_argument("collate_hwc_u8_to_nchw: image 0 has shape " + std::to_string(h) +
                                "x" + std::to_string(w) + "x" + std::to_string(c) +
                                ", every dimension must be > 0");
  }
  const size_t plane = static_cast<size_t>(h) * w;
  for (size_t i = 0; i < images.size(); ++i) {
    const Image* img = images[i];
    if (img == nullptr) {
      throw std::invalid_argument("collate_hwc_u8_to_nchw: image " + std::to_string(i) + " is null");
    }
    if (img->height != h || img->width != w || img->channels != c) {
      throw std::invalid_argument(
          "collate_hwc_u8_to_nchw: image " + std::to_string(i) + " is " +
          std::to_string(img->height) + "x" + std::to_string(img->width) + "x" +
          std::to_string(img->channels) + ", expected " + std::to_string(h) + "x" +
          std::to_string(w) + "x" + std::to_string(c) + " (HxWxC) like image 0");
    }
    if (img->data.size() < plane * c) {
      throw std::invalid_argument("collate_hwc_u8_to_nchw: image " + std::to_string(i) +
                                  " holds fewer bytes than its shape");
    }
    const uint8_t* src = img->ptr();
    uint8_t* dst = out + i * plane * c;
    if (c == 1) {
      std::memcpy(dst, src, plane);
    } else if (c == 3) {
      uint8_t* d0 = dst;
      uint8_t* d1 = dst + plane;
      uint8_t* d2 = dst + 2 * plane;
      for (size_t p = 0; p < plane; ++p) {
        d0[p] = src[3 * p];
        d1[p] = src[3 * p + 1];
        d2[p] = src[3 * p + 2];
      }
    } else {
      for (size_t p = 0; p < plane; ++p) {
        for (int ch = 0; ch < c; ++ch) dst[ch * plane + p] = src[p * c + ch];
      }
    }
  }
}

}  // namespace pipebench
