// The max(data, compute) bound and the verdict built on it.
//
// Method (FastAI.jl, "Performant data pipelines", shared/seeds/001): time n training steps
// on one batch already on the device (compute_ms per batch); time the loader alone
// (data_ms per batch); the real loop runs near the larger of the two, because the loader
// prefetches in the background while the accelerator computes. From the measured
// end-to-end step time (step_ms per batch):
//   bound_ms             = max(data_ms, compute_ms)
//   au_pct               = 100 * compute_ms / step_ms   (accelerator utilisation, clamped
//                                                        to [0, 100])
//   stall_pct            = 100 - au_pct                 (share of the step spent waiting
//                                                        for data: the data stall)
//   prediction_error_pct = 100 * (bound_ms - step_ms) / step_ms
// All times in milliseconds per batch. Errors: std::invalid_argument for a negative or
// non-finite time, or step_ms <= 0.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pipebench {

struct Bound {
  double data_ms = 0;
  double compute_ms = 0;
  double step_ms = 0;
  double bound_ms = 0;
  double au_pct = 0;
  double stall_pct = 0;
  double prediction_error_pct = 0;
  bool data_bound() const { return data_ms > compute_ms; }
};

Bound compute_bound(double data_ms, double compute_ms, double step_ms);

/// Workers predicted to make the loader keep up with the step (compute-bound):
///   ceil(per_sample_ms * batch / (compute_ms * scaling_efficiency))
/// where per_sample_ms is one worker's CPU cost of one sample and scaling_efficiency in
/// (0, 1] is the measured speed-up per added worker (1 = linear). Throws
/// std::invalid_argument for non-positive inputs or efficiency outside (0, 1].
int predict_workers(double per_sample_ms, int batch, double compute_ms, double scaling_efficiency);

/// One point of a worker sweep (a BM_EndToEnd case).
struct SweepPoint {
  int workers = 0;
  Bound bound;
  double images_per_second = 0;
  /// The measured step's 95 % half width, ms (bench: step_ms_ci); absent when not measured.
  std::optional<double> step_ms_ci;
};

/// Per-sample cost of one pipeline stage, ms (from the loader's stage timers).
struct StageCost {
  std::string stage;
  double ms_per_sample = 0;
};

/// A faster variant measured in the same run, and what it would save per sample.
struct Alternative {
  std::string stage;       ///< the stage it speeds up, e.g. "decode"
  std::string baseline;    ///< what runs now, e.g. "BM_Sample/imagenet_train"
  std::string variant;     ///< the faster one, e.g. "BM_Sample/imagenet_train_roi"
  double baseline_ms = 0;  ///< per sample
  double variant_ms = 0;   ///< per sample
  /// Measured paired with the baseline (BM_Sample/<pipeline>/variant:<recipe>): the
  /// saving's 95 % half width, ms per sample; absent when from two unpaired cases.
  std::optional<double> saving_ci_ms;
  double saving_ms() const { return baseline_ms - variant_ms; }
};

struct Verdict {
  std::vector<SweepPoint> sweep;             ///< sorted by workers
  std::optional<int> first_compute_bound;    ///< smallest swept w that is compute-bound
  std::optional<int> predicted_workers;      ///< when none in the sweep is
  double per_sample_ms = 0;                  ///< one worker, one sample
  double scaling_efficiency = 1;             ///< used for the prediction
  std::vector<StageCost> stages;             ///< largest share first
  std::optional<Alternative> best_alternative;
};

/// Builds the verdict. per_sample_ms: single-thread cost of one sample (ms); batch: the
/// batch size; stages: per-sample stage costs; alternatives: candidate faster variants
/// (the one with the largest saving for the largest stage is kept, else the largest saving).
Verdict make_verdict(std::vector<SweepPoint> sweep, double per_sample_ms, int batch,
                     std::vector<StageCost> stages, const std::vector<Alternative>& alternatives);

}  // namespace pipebench
