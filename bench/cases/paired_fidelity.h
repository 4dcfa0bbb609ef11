// The fidelity pass of a paired BM_Sample case (issue 35): after the case's timed rounds,
// outside them, today's pipeline (A) and the candidate (B) run once more on up to
// kFidelitySamples images of the round (evenly spread over it), each side on its own bytes
// of the image (a presized copy's file for presized:N) with the same random draws
// (Rng::for_sample keyed by the original's index, as in the timed runs), and their outputs
// are compared as pixels
// (transforms/fidelity.h: float 0-255 before normalize, C x H x W): per sample identical or
// PSNR (dB) and SSIM; over the samples model/fidelity.h's distribution. Where both
// pipelines start with a crop that draws its window from the image's size, the share of
// crops whose source window is smaller than the output (enlarged), today against the
// candidate (a presized copy's windows are drawn on the smaller image).
// Counters (model/counters.h, family kPaired): fidelity_samples, fidelity_identical_pct,
// fidelity_psnr_median_db, fidelity_psnr_p5_db, fidelity_ssim_median, fidelity_ssim_p5
// (the last four only with a sample not identical), fidelity_ms (the pass's wall time),
// upsampled_today_pct, upsampled_candidate_pct.
// Errors: a sample whose bytes fail to decode on either side is left out (the timed runs
// report bad files); nothing throws.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "datasets/sample_source.h"
#include "model/fidelity.h"
#include "transforms/pipeline.h"

namespace pipebench::bench {

/// The most samples a case compares: two pipeline runs and, when they differ, one SSIM
/// (some 12 ms of CPU for 224 x 224 x 3) each. 48 keep the pass to a few percent of a
/// default run (tests/scripts/pipebench_cli_test.py checks the share the report states)
/// and give the 5th percentile from the worst two or three samples.
inline constexpr std::size_t kFidelitySamples = 48;

/// One side of the comparison: a pipeline over a source, and the source's index of each
/// image of the round (the same images on both sides, in the same order).
struct FidelitySide {
  const Pipeline* pipeline = nullptr;
  const SampleSource* source = nullptr;
  const std::vector<std::size_t>* index = nullptr;
};

/// What the pass measured.
struct PairedFidelity {
  model::FidelitySummary summary;          ///< samples == 0: outputs not comparable as pixels
  std::optional<double> upsampled_a_pct;   ///< today's crops enlarged, % (with a window op)
  std::optional<double> upsampled_b_pct;   ///< the candidate's
  double wall_ms = 0;                      ///< the pass's wall time
};

/// How the two outputs of a sample are made.
enum class FidelityMode {
  /// Both pipelines run whole with the same draws: every candidate whose source image is
  /// today's (decode, collate, variants, the A/A control).
  kSameDraws,
  /// presized:N. The same draws do not give the same region on a smaller image (a crop's
  /// position is drawn as an integer in [0, W - w], not as a fraction), so the two outputs
  /// would show different parts of the image. Instead today's window (source_window) is
  /// cut from the original and, scaled to the copy's size, from the copy, and each resized
  /// to the output (transforms/crop.h resized_crop): the same region of the image, from
  /// the original's pixels and from the copy's, which is what presizing changes. The
  /// operators after the crop are left out (they act alike on both). A pipeline without a
  /// window op falls back to kSameDraws.
  kSameRegion,
};

/// The fewest samples a pass compares before its time budget may stop it.
inline constexpr std::size_t kFidelityMinSamples = 16;

/// Runs the pass over up to max_samples images of the round (A's index keys the draws),
/// met in an order that spreads every prefix over the round (0, 1/2, 1/4, 3/4, ... of it),
/// and stops early, after at least kFidelityMinSamples, once `budget_s` seconds have
/// passed (0: no limit; on large originals 48 samples took 5 s per case).
PairedFidelity measure_paired_fidelity(const FidelitySide& a, const FidelitySide& b, uint64_t seed,
                                       FidelityMode mode = FidelityMode::kSameDraws,
                                       std::size_t max_samples = kFidelitySamples, double budget_s = 0);

/// Writes the pass's counters on the case (see the file comment).
void put_fidelity_counters(benchmark::State& state, const PairedFidelity& f);

}  // namespace pipebench::bench
