// The dataset's per-sample costs for the step model (issue 34 item 2): the files the
// loader-alone windows timed at their measured cost, and the files they did not time at a
// cost predicted from their headers by a fit made in the same run (model/cost_fit.h).
//
// Used by today's BM_EndToEnd cases (bench/cases/end_to_end_bench.cpp) on an ImageFolder:
//   - the windows timed at least kFullCoverage of the dataset's files (the mix, photos-in
//     and photos-full at their default steps: every file, many times): the timed visits
//     are the distribution, as before; the fit is still made and recorded;
//   - fewer (a large dataset, few steps): the step model replays the dataset's costs, a
//     vector of at most kMaxFiles costs: the timed files' mean cost per visit and the
//     untimed files' predicted cost, each part in its share of the dataset's files (a
//     seeded uniform draw where a part holds more files than its share of kMaxFiles).
// Headers are read from each file's first kHeadBytes (a JPEG's SOF comes after its
// APP segments, at most 64 KiB each), the whole file where that is not enough; a file
// whose header cannot be read is left out (the run lists bad files elsewhere). At most
// kMaxFiles headers of timed files and kMaxFiles of untimed ones: about a second for a
// few thousand files read warm.
// Counters (model/counters.h, family loader): cost_fit_files (timed files the fit was made
// on), cost_fit_r2 and cost_fit_ms_per_mp (the pooled line's), costs_fitted_pct (the
// share of the dataset's files the prediction priced by the fit: 0 when the timed visits
// were the distribution).
// Errors: none thrown for a bad file; the model's std::invalid_argument for a cost not
// finite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "datasets/image_folder.h"
#include "model/cost_fit.h"

namespace pipebench::bench {

struct DatasetCosts {
  static constexpr double kFullCoverage = 0.9;  ///< share of the files timed: the visits suffice
  static constexpr size_t kMaxFiles = 4096;
  static constexpr size_t kHeadBytes = 256 * 1024;
  model::CostFits fits;
  int fit_files = 0;             ///< timed files with a header read (the fit's points)
  double fitted_pct = 0;         ///< share of the dataset's files priced by the fit, % (0: not used)
  std::vector<double> sample_ms; ///< the costs to replay; empty: use the timed visits
};

/// The header class and size of `folder`'s file `i` (model::FileHeader); nullopt when it
/// cannot be read.
std::optional<model::FileHeader> read_file_header(const ImageFolder& folder, size_t i);

/// The fit over the timed files (file_ms: dataset index -> mean ms per visit) and, under
/// kFullCoverage, the dataset's cost vector above; `seed` draws the files.
DatasetCosts dataset_costs(const ImageFolder& folder, const std::map<size_t, double>& file_ms, uint64_t seed);

}  // namespace pipebench::bench
