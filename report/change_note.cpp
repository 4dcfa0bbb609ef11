#include "report/change_note.h"

#include <cmath>

#include "report/appendf.h"

namespace pipebench::report {

std::string change_note(const WhatIfRow& row) {
  std::string what;
  if (row.variant == "decode") what = "decodes only the crop's window, DCT-downscaled (1/2 to 1/8) where the crop shrinks it anyway";
  else if (row.variant == "collate") what = "collates uint8 and normalizes after the copy";
  else if (row.variant == "presized") what = "crops from a copy presized to shorter side " + std::to_string(row.kept_shorter_side_px) + " px";
  else if (row.variant == "presized_large") {
    what = "presizes only the images above ";
    appendf(what, "%.6g MP (%.1f %% of the round) to shorter side %d px; the others are the originals, byte for byte (compared below: the changed images only)",
            row.large_min_megapixels, row.large_changed_pct, row.kept_shorter_side_px);
  }
  else if (row.variant == "variant") what = "runs the spec's declared variant " + row.variant_param;
  else if (row.kind == CandidateKind::kDevice) what = "moves work to the accelerator (its pixels not compared here)";
  else what = row.label;
  std::string s = row.label + ": " + what;
  if (row.fidelity) {
    const model::FidelitySummary& f = *row.fidelity;
    if (f.all_identical()) appendf(s, "; bit-identical (%zu of %zu samples)", f.identical, f.samples);
    else appendf(s, "; PSNR %.1f dB median, %.1f dB p5, SSIM %.3f / %.3f, %.0f %% of %zu samples identical",
                 f.psnr_median_db.value_or(0), f.psnr_p5_db.value_or(0), f.ssim_median.value_or(0),
                 f.ssim_p5.value_or(0), 100.0 * f.identical_share(), f.samples);
  } else {
    s += "; fidelity not measured";
  }
  if (row.upsampled_today_pct && row.upsampled_pct && std::abs(*row.upsampled_pct - *row.upsampled_today_pct) > 1e-9)
    appendf(s, "; crops enlarged (window smaller than the output) %.0f %% against today's %.0f %%",
            *row.upsampled_pct, *row.upsampled_today_pct);
  if (row.below_min_psnr) s += " (*: below --min-psnr, not recommended)";
  return s;
}

}  // namespace pipebench::report
