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
//     untimed files' predicted cost times a residual drawn from the timed files' (their
//     cost over their prediction: the spread a line alone lacks), each part in its share
//     of the files this rank loads (a seeded uniform draw where a part holds more files
//     than its share of kMaxFiles), at the level of the timed visits (CostPrediction::scale
//     from them: the replay's mean may differ from the windows' where they missed files).
// Headers (bench/run/file_header.h) are read from each file's first 256 KiB, the whole
// file where that is not enough; a file whose header cannot be read is left out (the run
// lists bad files elsewhere). At most
// kMaxFiles headers of timed files and twice the untimed files wanted; each file's header
// is read once a run (BenchContext::file_header).
// Counters (model/counters.h, family loader): cost_fit_files (timed files the fit was made
// on), cost_fit_r2 and cost_fit_ms_per_mp (the pooled line's), costs_fitted_pct (the
// share of the replayed costs priced by the fit: 0 when the timed visits were the
// distribution).
// Errors: none thrown for a bad file; the model's std::invalid_argument for a cost not
// finite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "model/cost_fit.h"

namespace pipebench::bench {

struct DatasetCosts {
  static constexpr double kFullCoverage = 0.9;  ///< share of the files timed: the visits suffice
  static constexpr size_t kMaxFiles = 4096;
  model::CostFits fits;
  int fit_files = 0;             ///< timed files with a header read (the fit's points)
  double fitted_pct = 0;         ///< share of the replayed costs priced by the fit, % (0: not used)
  std::vector<double> sample_ms; ///< the costs to replay; empty: use the timed visits
};

/// A file's header by dataset index (BenchContext::file_header: read once a run).
using HeaderOf = std::function<std::optional<model::FileHeader>(size_t)>;

/// The fit over the timed files (file_ms: dataset index -> mean ms per visit, of a dataset
/// of `files` files of which this rank loads `share_files`: all of them, or its shard
/// under mpirun) and, under kFullCoverage of the share, the dataset's cost vector above;
/// `seed` draws the files and the residuals.
DatasetCosts dataset_costs(size_t files, size_t share_files, const std::map<size_t, double>& file_ms,
                           const HeaderOf& header, uint64_t seed);

}  // namespace pipebench::bench
