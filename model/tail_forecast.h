// Whether a run's tail fixes (issue 34 item 4: a deeper prefetch, out-of-order delivery;
// model/catalogue.h loader_fixes) are worth running end to end, decided before any case
// runs: Google Benchmark fixes a run's cases when they are registered, so the decision
// cannot wait for today's case's timed costs. The step model (model/step_model.h) is fed a
// forecast of the per-sample costs instead: each file's cost proportional to its encoded
// bytes (a JPEG's decode work grows with its pixels, and its bytes with them at a similar
// quality), the median file at the probe's ms per sample (bench/run/case_budget.h, which times
// a few typical images). The fixes are worth running when either is forecast to shorten
// the mean step by at least kTailFixMinSavingPct: less than that, a case of a few dozen
// steps cannot tell the fix from noise, and a dataset whose batches all cost the same (a
// dataset smaller than one batch, every batch the whole set: photos-full) is not
// heavy-tailed from batch to batch, whatever its files' spread, and costs no extra case.
// Inputs: file_bytes (every file, or an even subsample; at most kForecastFiles are used,
// evenly spaced), ms per typical sample, the loader's batch (images per delivered batch),
// workers and prefetch depth, and the step's compute_ms; 0 when not known before the run
// (a device step): then the balance point, compute = the loader's mean data_ms, where a
// tail stalls the loop most.
// Units: ms; bytes; %. Determinism: one seed, the same forecast every call.
// Errors: std::invalid_argument for no files, typical_sample_ms not a finite ms > 0,
// compute_ms negative or not finite, and model::predict_step's.
#pragma once

#include <cstdint>
#include <vector>

namespace pipebench::model {

/// The least saving of the mean step, %, that makes a tail fix worth its end-to-end case.
inline constexpr double kTailFixMinSavingPct = 2.0;
/// The most files the forecast replays (an even subsample of a larger dataset).
inline constexpr std::size_t kForecastFiles = 20000;

struct TailForecastInput {
  std::vector<uint64_t> file_bytes;  ///< each file's encoded size, bytes
  double typical_sample_ms = 0;      ///< the median file's cost, one worker, ms
  int batch = 64;                    ///< images per delivered batch
  int workers = 1;
  int prefetch_depth = 2;
  double compute_ms = 0;             ///< the step per batch; 0: not known (the balance point)
};

struct TailForecast {
  double step_ms = 0;              ///< the mean step today (in order, prefetch_depth)
  double deep_prefetch_ms = 0;     ///< with twice the prefetch depth
  double out_of_order_ms = 0;      ///< with out-of-order delivery
  double compute_ms = 0;           ///< the compute the forecast used
  /// The larger of the two fixes' savings, 100 x (1 - fix / today), %.
  double best_saving_pct = 0;
  bool worth_running() const { return best_saving_pct >= kTailFixMinSavingPct; }
};

TailForecast forecast_tail_fixes(const TailForecastInput& in);

}  // namespace pipebench::model
