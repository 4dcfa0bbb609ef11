#include "model/fidelity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace pipebench::model {

std::optional<double> percentile_hf7(std::span<const double> values, double q) {
  if (values.empty()) return std::nullopt;
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  const double h = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

FidelitySummary summarize_fidelity(std::span<const SampleFidelity> samples) {
  FidelitySummary f;
  f.samples = samples.size();
  std::vector<double> psnr, ssim;
  for (const SampleFidelity& s : samples) {
    if (s.identical) {
      ++f.identical;
      continue;
    }
    psnr.push_back(s.psnr_db);
    ssim.push_back(s.ssim);
  }
  f.psnr_median_db = percentile_hf7(psnr, 0.5);
  f.psnr_p5_db = percentile_hf7(psnr, 0.05);
  f.ssim_median = percentile_hf7(ssim, 0.5);
  f.ssim_p5 = percentile_hf7(ssim, 0.05);
  return f;
}

std::string fidelity_cell(const FidelitySummary& f) {
  if (f.samples == 0) return "";
  if (f.all_identical()) return "identical";
  if (!f.psnr_median_db || !f.psnr_p5_db) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f / %.1f dB", *f.psnr_median_db, *f.psnr_p5_db);
  return buf;
}

}  // namespace pipebench::model
