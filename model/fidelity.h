// Fidelity: what a what-if candidate changes in the pixels the model sees, as figures over
// a round of samples (issue 35). The per-sample comparison itself (PSNR and SSIM of two
// images) needs OpenCV and lives in transforms/fidelity.h; this file holds what bench and
// report share without it: one sample's result, the distribution over a round, and the
// text a table or a recommendation prints.
//
// Units: PSNR in dB, over images of float values 0-255 (peak 255): 10 log10(255^2 / MSE),
// the MSE over every value of the image (all channels). SSIM is an index in [-1, 1] (1:
// equal). Two images that are equal value for value have no PSNR (the MSE is 0): they are
// "identical", a state of its own (SampleFidelity::identical), never a number such as
// infinity or 100 dB.
//
// The distribution (FidelitySummary): the share of samples bit-identical, and over the
// other samples only the median and the 5th percentile of PSNR and SSIM (percentiles by
// linear interpolation between closest ranks, Hyndman and Fan's definition 7, as
// numpy.percentile's default). The 5th percentile is the worst 5 % of samples: what a user
// should look at. With every sample identical, the PSNR and SSIM figures are absent.
//
// Errors: none thrown; an empty round gives samples == 0 (no figure at all).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace pipebench::model {

/// The default of --min-psnr (pipebench and pipebench-report), dB: a fix whose 5th-percentile
/// PSNR against today's output is below it is not recommended. The low end of a quality-90
/// JPEG re-encode of a photo (35.5-39.1 dB on scikit-image's photos), the quality FFCV's
/// ImageNet recipes train on (docs/what-if.md says why).
inline constexpr double kDefaultMinPsnrDb = 35.0;

/// One sample: today's output against the candidate's, same image and draws.
struct SampleFidelity {
  bool identical = false;  ///< equal value for value: psnr_db and ssim do not apply
  double psnr_db = 0;      ///< dB, finite; only when !identical
  double ssim = 1;         ///< mean SSIM, [-1, 1]; only when !identical
};

/// The fidelity of a round: how many samples were compared, how many were identical, and
/// over the others the median and 5th percentile of PSNR (dB) and SSIM.
struct FidelitySummary {
  std::size_t samples = 0;
  std::size_t identical = 0;
  std::optional<double> psnr_median_db, psnr_p5_db;  ///< nullopt when every sample is identical
  std::optional<double> ssim_median, ssim_p5;

  /// Share of samples bit-identical, 0-1 (0 for an empty round).
  double identical_share() const {
    return samples == 0 ? 0.0 : static_cast<double>(identical) / static_cast<double>(samples);
  }
  /// Every sample compared was identical (and there was one at least).
  bool all_identical() const { return samples > 0 && identical == samples; }
};

/// The distribution over `samples` (see the file comment).
FidelitySummary summarize_fidelity(std::span<const SampleFidelity> samples);

/// Hyndman-Fan definition 7 percentile, q in [0, 1], of unsorted values (copied and sorted);
/// nullopt when empty.
std::optional<double> percentile_hf7(std::span<const double> values, double q);

/// "identical", or "41.2 / 36.0 dB" (PSNR median / p5), or "" when nothing was compared:
/// the what-if table's fidelity column.
std::string fidelity_cell(const FidelitySummary& f);

}  // namespace pipebench::model
