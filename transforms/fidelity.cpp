#include "transforms/fidelity.h"

#include <opencv2/core.hpp>
#include <opencv2/quality/qualitymse.hpp>
#include <opencv2/quality/qualityssim.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace pipebench {
namespace {

// The 11 x 11 window's half width: SSIM map positions closer than this to an edge see the
// border extension (OpenCV's GaussianBlur reflects), and are left out of the mean.
constexpr int kSsimMargin = 5;

// Mean SSIM of one channel (height x width float32 planes).
double channel_ssim(const cv::Mat& a, const cv::Mat& b) {
  cv::Mat map;
  cv::quality::QualitySSIM::compute(a, b, map);
  if (map.rows > 2 * kSsimMargin && map.cols > 2 * kSsimMargin)
    map = map(cv::Rect(kSsimMargin, kSsimMargin, map.cols - 2 * kSsimMargin, map.rows - 2 * kSsimMargin));
  return cv::mean(map)[0];
}

// Every value a whole level in [0, 255].
bool whole_levels(std::span<const float> v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return x >= 0.0f && x <= 255.0f && x == std::nearbyint(x); });
}

}  // namespace

model::SampleFidelity compare_images(std::span<const float> a, std::span<const float> b, int channels,
                                     int height, int width) {
  if (channels <= 0 || height <= 0 || width <= 0)
    throw std::invalid_argument("compare_images: shape must be positive, got " + std::to_string(channels) +
                                " x " + std::to_string(height) + " x " + std::to_string(width));
  const size_t plane = static_cast<size_t>(height) * static_cast<size_t>(width);
  const size_t n = plane * static_cast<size_t>(channels);
  if (a.size() != n || b.size() != n)
    throw std::invalid_argument("compare_images: expected " + std::to_string(n) + " values on each side, got " +
                                std::to_string(a.size()) + " and " + std::to_string(b.size()));
  model::SampleFidelity f;
  if (std::equal(a.begin(), a.end(), b.begin())) {
    f.identical = true;
    return f;
  }
  // OpenCV's quality module works in float32 on uint8 input and in float64 on float input
  // (quality_utils.hpp expand_mat), twice as slow: whole levels go in as uint8, exactly.
  const bool levels = whole_levels(a) && whole_levels(b);
  double mse = 0, ssim = 0;
  cv::Mat qa, qb;
  for (int c = 0; c < channels; ++c) {
    // The planes are read in place (the Mat headers do not copy).
    cv::Mat pa(height, width, CV_32FC1, const_cast<float*>(a.data() + plane * static_cast<size_t>(c)));
    cv::Mat pb(height, width, CV_32FC1, const_cast<float*>(b.data() + plane * static_cast<size_t>(c)));
    if (levels) {
      pa.convertTo(qa, CV_8U);
      pb.convertTo(qb, CV_8U);
      pa = qa;
      pb = qb;
    }
    mse += cv::quality::QualityMSE::compute(pa, pb, cv::noArray())[0];
    ssim += channel_ssim(pa, pb);
  }
  mse /= channels;
  // Values equal as floats give MSE 0 only when identical (handled above); a difference
  // below float resolution of the squares still gives a finite, very high PSNR.
  f.psnr_db = mse > 0 ? 10.0 * std::log10(255.0 * 255.0 / mse) : 10.0 * std::log10(255.0 * 255.0 / 1e-12);
  f.ssim = ssim / channels;
  return f;
}

namespace {

// The spec's last normalize's (mean, std), when the float32 output came through one.
bool last_normalize(const PipelineSpec& spec, std::array<double, 3>& mean, std::array<double, 3>& std) {
  for (auto it = spec.transforms.rbegin(); it != spec.transforms.rend(); ++it) {
    if (it->name != "normalize") continue;
    const auto& m = it->params.get_list("mean");
    const auto& s = it->params.get_list("std");
    if (m.size() != 3 || s.size() != 3) return false;
    std::copy(m.begin(), m.end(), mean.begin());
    std::copy(s.begin(), s.end(), std.begin());
    return true;
  }
  return false;
}

}  // namespace

bool output_pixels(const Pipeline& p, const float* out, std::vector<float>& pixels) {
  pixels.clear();
  const SampleFormat& f = p.output();
  const size_t plane = static_cast<size_t>(f.height) * static_cast<size_t>(f.width);
  const int channels = f.channels;
  if (f.dtype == SampleDtype::kUint8) {
    const auto* q = reinterpret_cast<const uint8_t*>(out);
    pixels.resize(plane * channels);
    for (int c = 0; c < channels; ++c)
      for (size_t i = 0; i < plane; ++i)
        pixels[c * plane + i] = f.layout == BatchLayout::kNHWC ? q[i * channels + c] : q[c * plane + i];
    return true;
  }
  std::array<double, 3> mean{}, std{};
  if (channels != 3 || !last_normalize(p.spec(), mean, std)) return false;
  pixels.resize(plane * channels);
  for (int c = 0; c < channels; ++c) {
    // normalize's map in float (normalize.h): q / 255 = v * std + mean.
    const float s = static_cast<float>(std[c]), m = static_cast<float>(mean[c]);
    for (size_t i = 0; i < plane; ++i) {
      const float x = (out[c * plane + i] * s + m) * 255.0f;
      const float level = std::nearbyint(x);
      pixels[c * plane + i] = std::fabs(x - level) <= kSnapLevels ? level : x;
    }
  }
  return true;
}

}  // namespace pipebench
