// A fix that changes what each file of the same dataset costs (decode:auto: the ROI /
// DCT-scaled decode planner), priced by the step model before it runs (issue 34 item 4,
// "each priced by the model ... with the check of prediction against measurement").
// The presized copies are priced from their paired round alone (model/copy_fix_price.h):
// their end-to-end case loads the round. decode:auto's loads the whole dataset, and on a
// heavy-tailed one the files that set its step are the few large originals, which a
// round of typical images may not hold: its saving there (0.84 ms a sample, a third of
// the cost) does not hold for a 480 ms progressive JPEG, which an ROI / DCT-scaled decode
// barely speeds up. So the price is made file by file:
//   today     today's end-to-end case at the same workers: each timed file's mean cost
//             per visit (ms, by dataset index) and the level those costs were set to
//             (CostPrediction::scale);
//   measured  files timed on both pipelines, one thread, A B B A (model::PairedImageCost:
//             a_ms today's pipeline, b_ms the fix's): the fix's paired round and the probe
//             of today's costliest files (bench/cases/fix_probe.h);
//   ratio_i   b_ms / a_ms for a measured file; for another, from its header
//             (model::FileHeader): the median ratio of the kRatioNeighbours measured files
//             of its header class nearest to it in log megapixels (a DCT scale steps with
//             the image's size against the crop's, and a progressive scan decodes every
//             coefficient whatever the crop: a neighbour's ratio follows both where a line
//             would not), from every measured file where its class has none; a file
//             without a header: the median of every measured file's ratio;
//   step      model::predict_step on today's cost of each timed file x ratio_i x scale x
//             loop_cost_factor, with the fix's loader and loop shape.
// A ratio on the whole visit (read, decode, operators, collate) where the fix changes the
// decode and the operators: the read and the collate of a typical 224 x 224 sample are a
// few % of its cost (BM_Read, BM_Collate), and of a large original's, nothing.
// Measured: docs/what-if.md (the mix, 2 workers, 200 steps).
// Units: ms, megapixels. Errors: std::invalid_argument for a cost, scale or factor not
// finite and >= 0 (> 0 for scale and factor), and model::predict_step's.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "model/copy_fix_price.h"
#include "model/cost_fit.h"
#include "model/step_model.h"

namespace pipebench::model {

/// The measured files whose ratios a header-predicted ratio is the median of.
inline constexpr int kRatioNeighbours = 5;

/// A file's header by dataset index; nullopt where it cannot be read.
using HeaderLookup = std::function<std::optional<FileHeader>(std::size_t)>;

struct RatioFixPrice {
  StepPrediction step;
  int files = 0;              ///< today's timed files priced
  int measured = 0;           ///< of them, with a measured ratio
  double measured_cost_pct = 0;  ///< today's cost of those, % of every priced file's
  double cost_ratio = 0;      ///< the fix's cost over today's, summed over the priced files
};

/// The ratio of one file from the measured ones (above); nullopt when none is measured.
/// `measured`: each measured file's header (nullopt where unread) and its b_ms / a_ms.
std::optional<double> predicted_ratio(const std::optional<FileHeader>& header,
                                      const std::vector<std::pair<std::optional<FileHeader>, double>>& measured);

/// nullopt with fewer than kMinMatchedImages measured files (a_ms > 0) or no timed file.
/// The measured files need not be among today's timed ones: those that are not are the
/// neighbours the others' ratios are read from (RatioFixPrice::measured counts the timed).
std::optional<RatioFixPrice> price_ratio_fix(const std::map<std::size_t, double>& today_visit_ms,
                                             const std::vector<PairedImageCost>& measured, const HeaderLookup& header,
                                             double scale, double loop_cost_factor, const LoaderShape& loader,
                                             const LoopShape& loop);

}  // namespace pipebench::model
