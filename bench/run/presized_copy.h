// The presized copy of the run's round (issue 8, "presizing"): the round's images of --data
// (an ImageFolder tree) with every shorter side reduced to N px (pipebench-data presize:
// torchvision's Resize(int) rule, never upscaled, JPEG quality kPresizeQuality), made once
// into the cache folder next to the pipebench binary (datasets/presize_cache.h) and reused
// while the dataset's fingerprint matches, on the first call of a case that needs it
// (outside timed regions). The round only, so that today and presized:<N> average the same
// images (bench/run/image_round.h); the whole dataset when the round is.
// Measured by BM_Sample/<pipeline>/presized:<N> (the per-sample cost the what-if table
// prices) and, applied for real, BM_EndToEnd/<pipeline>/presized:<N>/<baseline>/workers:<w>
// (the loader over the copy, warm page cache).
// The large-only copy (issue 34's tail fix, --presize-large; model/large_images.h): the
// same, except that only the round's images above min_pixels are presized (to the plan's
// side) and the others are the originals byte for byte: BM_Sample/<pipeline>/
// presized_large:<N> and BM_EndToEnd/<pipeline>/presized_large:<N>/<baseline>/workers:<w>.
// Errors: get() returns nullptr after a failure; error() says why (naming the file).
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "datasets/image_folder.h"
#include "model/copy_fix_price.h"
#include "model/large_images.h"
#include "transforms/spec.h"

namespace pipebench::bench {

class BenchContext;

/// The copy's JPEG quality: photos-in's own (datasets/README.md), so the copy differs from
/// the original in size, not in encoding.
inline constexpr int kPresizeQuality = 90;

/// --presize's shorter side for `spec`: nullopt for "off" (or "auto" when the spec's first
/// operator fixes no crop), the crop x 256/224 for "auto" (torchvision's evaluation resize
/// ratio, Resize(256) before CenterCrop(224), references/classification), else the number
/// (flags.cpp checked it: digits, >= 8).
std::optional<int> presize_shorter_side(const std::string& flag, const PipelineSpec& spec);

/// --presize-large's plan for the round of `folder` (model/large_images.h): nullopt for
/// "off", or when no image of the round is large; "auto" or a threshold in megapixels
/// (flags.cpp checked it). `min_side`: --presize's side for the spec (0 when none). Reads
/// each round image's header (transforms/image_format.h); an image whose header cannot be
/// read is left out of the plan (the run lists it as a bad file).
std::optional<model::LargeImages> plan_presize_large(const std::string& flag, const ImageFolder& folder,
                                                     const std::vector<size_t>& round, int min_side);

class PresizedCopy {
 public:
  struct Ready {
    std::unique_ptr<ImageFolder> dataset;  ///< the copy
    std::vector<size_t> round;             ///< every image of the copy
  };
  PresizedCopy(int shorter_side, int quality) : shorter_side_(shorter_side), quality_(quality) {}
  /// The large-only copy of `plan` (its side, its threshold).
  PresizedCopy(const model::LargeImages& plan, int quality)
      : shorter_side_(plan.shorter_side), quality_(quality), large_(plan) {}

  /// The copy of ctx's round, made or found on the first call; nullptr after a failure.
  const Ready* get(BenchContext& ctx);
  const std::string& error() const { return error_; }
  const std::filesystem::path& dir() const { return dir_; }
  int shorter_side() const { return shorter_side_; }
  int quality() const { return quality_; }
  /// The candidate kind (model/catalogue.h): "presized", or "presized_large" for the
  /// large-only copy.
  std::string kind() const { return large_ ? "presized_large" : "presized"; }
  /// "presized:N" or "presized_large:N", as case names spell it.
  std::string label() const { return kind() + ":" + std::to_string(shorter_side_); }
  /// The large-only copy's plan; nullopt for the whole copy.
  const std::optional<model::LargeImages>& large() const { return large_; }
  /// Each round image's costs as the copy's paired case timed them (BM_Sample/<pipeline>/
  /// <label>; model/copy_fix_price.h), for its end-to-end case's price; empty until that
  /// case has run. Cases run one at a time (no lock).
  void note_paired_costs(std::vector<model::PairedImageCost> costs) { paired_costs_ = std::move(costs); }
  const std::vector<model::PairedImageCost>& paired_costs() const { return paired_costs_; }

 private:
  int shorter_side_, quality_;
  std::optional<model::LargeImages> large_;
  std::once_flag once_;
  std::optional<Ready> ready_;
  std::vector<model::PairedImageCost> paired_costs_;
  std::string error_;
  std::filesystem::path dir_;
};

}  // namespace pipebench::bench
