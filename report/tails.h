// The tails of the sweep (issue 34 item 3): beside each BM_EndToEnd point's mean step and
// stall, its 99th percentile step measured (step_p99_ms) and the step model's prediction
// from the per-sample costs the case timed (bench/sample_costs.h: pred_step_p99_ms,
// pred_stall_pct, bound_ms as the predicted mean), the cost distribution (sample_p50_ms,
// sample_p99_ms, sample_max_ms over samples_timed), and the share of the predicted stall
// the costliest samples cause (tail_stall_share_pct), naming the costliest files
// (costliest:<file>_ms, costliest first).
// Units: ms per batch for steps, ms per sample for costs, % for stall and share.
// Sources: the run's counters (report/run.h) only; a point without samples_timed (a run
// from before the distribution, or too few samples timed) has no tail row.
// Errors: none thrown.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/run.h"

namespace pipebench::report {

struct TailPoint {
  int workers = 0;
  std::string case_name;
  double step_ms = 0, stall_pct = 0;             ///< measured: the mean step, 100 - AU
  std::optional<double> step_p99_ms;             ///< measured
  double pred_step_ms = 0;                       ///< the model's mean step (bound_ms)
  std::optional<double> pred_p99_ms, pred_stall_pct, tail_share_pct;
  int samples_timed = 0;
  std::optional<double> sample_p50_ms, sample_p99_ms, sample_max_ms;
  std::vector<std::pair<std::string, double>> costliest;  ///< file -> ms, costliest first
  /// The tail fixes priced by the model (pred_step_deep_prefetch_ms: twice the prefetch
  /// depth, its memory batch_bytes x the added batches; pred_step_out_of_order_ms).
  std::optional<double> deep_prefetch_ms, out_of_order_ms, batch_bytes;
  int prefetch_depth = 0;  ///< the run's (prefetch_depth_batches); 0 unknown
};

struct Tails {
  std::vector<TailPoint> points;  ///< by workers, ascending
  bool empty() const { return points.empty(); }
};

/// The tail rows of the sweep's BM_EndToEnd cases (workers -> case name).
Tails sweep_tails(const BenchRun& run, const std::map<int, std::string>& end_to_end);

/// Where the loader keeps up on average yet the loop stalls: the sentence saying that the
/// step model, from the timed costs, predicts that stall (its predicted stall at least half
/// the measured one and at least 1 point: the tail, not the machine), naming the costliest
/// file; nullopt where it does not (then something else stalls the step).
std::optional<std::string> tail_explains_stall(const Tails& t, int workers, double measured_stall_pct);

/// "Tails (...)": a row per point, then where the model puts the stall on the costliest
/// samples (share >= 1 %), the files, and the tail fixes it prices where the loop stalls
/// (a deeper prefetch with its memory, out-of-order delivery). Nothing when empty.
void append_tails_text(std::string& out, const Tails& t);

/// {"points": [{workers, case, step_ms, step_p99_ms, stall_pct, predicted_step_ms,
///   predicted_step_p99_ms, predicted_stall_pct, tail_stall_share_pct, samples_timed,
///   sample_p50_ms, sample_p99_ms, sample_max_ms, costliest: [{file, ms}],
///   deep_prefetch_step_ms, out_of_order_step_ms}]}
nlohmann::json tails_json(const Tails& t);

}  // namespace pipebench::report
