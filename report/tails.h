// The tails of the sweep (issue 34 item 3): beside each BM_EndToEnd point's mean step and
// stall, its 99th percentile step measured (step_p99_ms) and the step model's prediction
// from the per-sample costs the case timed (bench/cases/sample_costs.h: pred_step_p99_ms,
// pred_stall_pct, bound_ms as the predicted mean), the cost distribution (sample_p50_ms,
// sample_p99_ms, sample_max_ms over samples_timed), and the share of the predicted stall
// the costliest samples cause (tail_stall_share_pct), naming the costliest files
// (costliest:<file>_ms, costliest first). The tail fixes run end to end (bench/cases/tail_fixes.h:
// BM_EndToEnd/<pipeline>/prefetch:<N>|delivery:out_of_order/<baseline>/workers:<w>, keyed
// by model/catalogue.h's loader_fixes): each one's measured step with its 95 % half width
// (step_ms, step_ms_ci) against the prediction today's case made of it before it ran
// (fix_pred_step_ms, fix_prediction_error_pct), with what it costs (fix_host_mib) or changes.
// The what-if fixes that change pixels and run end to end (decode:auto, presized:N,
// presized_large:N; model/catalogue.h) change the tail too: each one's measured mean and
// p99 step against today's case at the same workers (TailEffect).
// Units: ms per batch for steps, ms per sample for costs, % for stall and share.
// Sources: the run's counters (report/run.h) only; a point without samples_timed (a run
// from before the distribution, or too few samples timed) has no tail row.
// Errors: none thrown.
#pragma once

#include <cmath>
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

/// A tail fix run end to end: its measured step against today's case's prediction of it.
struct TailFixCheck {
  std::string label;                   ///< the key's variant label: "prefetch:4", "delivery:out_of_order"
  std::string variant;                 ///< model/catalogue.h loader_fixes kind
  int workers = 0;
  std::string case_name;
  double step_ms = 0;                  ///< measured, ms per step
  std::optional<double> step_ms_ci;    ///< its 95 % half width, ms
  std::optional<double> predicted_ms;  ///< fix_pred_step_ms: absent when today's case did not run first
  std::optional<double> error_pct;     ///< fix_prediction_error_pct
  std::optional<double> today_step_ms; ///< today's case at the same workers, measured
  std::optional<double> host_mib;      ///< prefetch: the host memory it adds, MiB
  int prefetch_depth = 0;              ///< its loader's (prefetch_depth_batches); 0 unknown
  std::string note;                    ///< what it changes (the catalogue's note)
  /// Whether the prediction lies within the measured step's 95 % interval.
  bool within_interval() const {
    return predicted_ms && step_ms_ci && std::abs(*predicted_ms - step_ms) <= *step_ms_ci;
  }
  /// The measured step's 95 % half width, % of the step; absent without an interval.
  std::optional<double> half_width_pct() const {
    if (!step_ms_ci || !(step_ms > 0)) return std::nullopt;
    return 100.0 * *step_ms_ci / step_ms;
  }
};

/// A what-if fix run end to end (decode:auto, presized:N, presized_large:N): what it did
/// to the tail, measured, against today's case at the same workers.
struct TailEffect {
  std::string label;                     ///< "decode:auto", "presized_large:375"
  int workers = 0;
  std::string case_name;
  double step_ms = 0;                    ///< measured mean step, ms
  std::optional<double> step_p99_ms;     ///< measured p99 step, ms
  double today_step_ms = 0;              ///< today's case at the same workers
  std::optional<double> today_p99_ms;
  /// The fix's price made before it ran (fix_pred_step_ms, fix_prediction_error_pct: a
  /// presized copy's, model/copy_fix_price.h; decode:auto's, model/ratio_fix_price.h);
  /// absent where its inputs did not run.
  std::optional<double> predicted_ms, error_pct;
  /// decode:auto's: today's cost of the files whose ratio was measured, % (fix_cost_measured_pct).
  std::optional<double> measured_cost_pct;
};

struct Tails {
  std::vector<TailPoint> points;  ///< by workers, ascending
  std::vector<TailFixCheck> fixes;  ///< by workers, then the catalogue's order
  std::vector<TailEffect> pixel_fixes;  ///< by workers, then the catalogue's order
  bool empty() const { return points.empty() && fixes.empty() && pixel_fixes.empty(); }
};

/// The tail rows of the sweep's BM_EndToEnd cases (workers -> case name), and the tail
/// fixes run beside them (the same pipeline and baseline, no callbacks).
Tails sweep_tails(const BenchRun& run, const std::map<int, std::string>& end_to_end);

/// Where the loader keeps up on average yet the loop stalls: the sentence saying that the
/// step model, from the timed costs, predicts that stall (its predicted stall at least half
/// the measured one and at least 1 point: the tail, not the machine), naming the costliest
/// file; nullopt where it does not (then something else stalls the step).
std::optional<std::string> tail_explains_stall(const Tails& t, int workers, double measured_stall_pct);

/// "Tails (...)": a row per point, then where the model puts the stall on the costliest
/// samples (share >= 1 %), the files, and the tail fixes it prices where the loop stalls
/// (a deeper prefetch with its memory, out-of-order delivery), or, where they ran end to
/// end, each one's measured step (+- its 95 % half width) against that prediction and its
/// error, with what it costs or changes. Nothing when empty.
void append_tails_text(std::string& out, const Tails& t);

/// {"points": [{workers, case, step_ms, step_p99_ms, stall_pct, predicted_step_ms,
///   predicted_step_p99_ms, predicted_stall_pct, tail_stall_share_pct, samples_timed,
///   sample_p50_ms, sample_p99_ms, sample_max_ms, costliest: [{file, ms}],
///   deep_prefetch_step_ms, out_of_order_step_ms}],
///  "fixes": [{label, variant, workers, case, step_ms, step_ms_ci, predicted_step_ms,
///   prediction_error_pct, within_interval, checkable (the measured step's 95 % half width
///   at most kCheckTolerancePct of it: the run can test the prediction), today_step_ms,
///   prefetch_depth, host_mib, note}],
///  "pixel_fixes": [{label, workers, case, step_ms, step_p99_ms, today_step_ms, today_step_p99_ms}]}
nlohmann::json tails_json(const Tails& t);

}  // namespace pipebench::report
