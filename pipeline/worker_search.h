// --workers=auto: the smallest worker count that keeps the training step compute-bound
// (accelerator utilisation AU >= 90 %, MLPerf Storage's threshold) within a CPU budget,
// found by a short search guided by the per-sample cost instead of a full sweep (issue 8;
// the opacity of tf.data's AUTOTUNE, tensorflow#58819 and #62821, is what it answers:
// every count tried is reported).
//
// The search, with data_ms(w) the loader's measured time per batch at w workers (ms) and
// compute_ms the training step's (ms per batch); AU(w) = the step model's for a loader at
// data_ms(w) (model/bound.h predict_from_parts: compute_ms / max(data_ms(w), compute_ms)):
//   1. first guess w = model::mean_workers_for_target(per_sample_ms, batch, compute_ms,
//      90 %) = ceil(per_sample_ms * batch * 0.9 / compute_ms) (the loader's cost spread over
//      w workers at linear scaling, the largest data_ms that still gives AU >= 90 % being
//      compute_ms / 0.9), clamped to [1, budget]; the one "workers needed" formula;
//   2. measure it; while AU < 90 % and w < budget, the next guess is the same formula with
//      the per-sample cost the measurement implies, data_ms(w) x w / batch, so
//      w' = ceil(w * data_ms(w) * 0.9 / compute_ms), at least w + 1, clamped to the budget
//      (so sub-linear scaling is corrected from measurements, not assumed);
//   3. once some w reaches AU >= 90 %, w - 1 is measured too (unless measured already or
//      w = 1) and the search steps down while the count below still reaches it: the result
//      is the smallest count that reached AU >= 90 % among those measured around it;
//   4. if the budget is reached without AU >= 90 %, the count with the highest AU is
//      chosen (the fewest workers on a tie) and `reached` is false.
// Each count is measured once; at most `max_trials` counts are measured (default 6).
// Errors: std::invalid_argument for per_sample_ms, compute_ms <= 0 or not finite, batch
// or budget < 1; what `measure` throws propagates.
#pragma once

#include "model/constants.h"

#include <functional>
#include <string>
#include <vector>

namespace pipebench {

struct WorkerTrial {
  int workers = 0;
  double data_ms = 0;   ///< measured loader time per batch, ms
  double au_pct = 0;    ///< predicted AU at this data_ms, %
};

struct WorkerSearch {
  int chosen = 0;
  bool reached = false;              ///< AU >= 90 % at `chosen`
  int budget = 0;                    ///< cores (the largest count allowed)
  std::vector<WorkerTrial> trials;   ///< in the order measured
  /// One line: "tried 3 (21.0 ms/batch, AU 100 %), 2 (...); chose 2 ...".
  std::string summary(double compute_ms) const;
};

constexpr double kTargetAuPct = model::kAuTargetPct;

/// The search above. measure(w) returns data_ms at w workers.
WorkerSearch search_workers(const std::function<double(int)>& measure, double per_sample_ms,
                            int batch, double compute_ms, int budget, int max_trials = 6);

}  // namespace pipebench
