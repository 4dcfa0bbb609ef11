// The measured figures of a loop against the step model's prediction, and the verdict.
//
// Method (FastAI.jl, "Performant data pipelines", shared/seeds/001): time n training steps
// on one batch already on the device (compute_ms per batch); time the loader alone
// (data_ms per batch); the real loop runs near the larger of the two, because the loader
// prefetches in the background while the accelerator computes. From the measured
// end-to-end step time (step_ms per batch):
//   bound_ms             = the predicted step: model/step_model.h's (predict_step from the
//                          per-sample costs, or predict_from_parts below); without one,
//                          its closed form max(data_ms, compute_ms) (model::mean_bound_ms)
//   au_pct               = 100 * compute_ms / step_ms   (accelerator utilisation, clamped
//                                                        to [0, 100])
//   stall_pct            = 100 - au_pct                 (share of the step spent waiting
//                                                        for data: the data stall)
//   prediction_error_pct = model::prediction_error_pct(bound_ms, step_ms)
//                        = 100 * (bound_ms - step_ms) / step_ms
// All times in milliseconds per batch. Errors: std::invalid_argument for a negative or
// non-finite time, or step_ms <= 0.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/step_model.h"

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

/// bound_ms = model::mean_bound_ms(data_ms, one worker, compute_ms) = max(data, compute).
Bound compute_bound(double data_ms, double compute_ms, double step_ms);

/// The same with the step model's prediction as bound_ms (predicted_ms >= 0, finite).
Bound compute_bound(double data_ms, double compute_ms, double step_ms, double predicted_ms);

/// The step model fed a loop's measured parts, where no per-sample costs are at hand: the
/// loader's ms per batch as the one cost (batch 1, one worker: model/step_model.h's
/// per-batch form), prefetch_depth batches ahead, compute_ms per step and the callbacks on
/// the loop's thread (each: ms per run, every, sync or async, waits_for_step). Without a
/// callback it is the closed form max(data_ms, compute_ms) exactly (no simulation); with
/// them, predict_step's simulation (its default options: the same number every call).
/// bench writes it as bound_ms and the report prints that same counter.
/// Errors: model::predict_step's (std::invalid_argument).
model::StepPrediction predict_from_parts(double data_ms, double compute_ms, int prefetch_depth,
                                         const std::vector<model::Callback>& callbacks = {});

/// The step model fed the per-sample costs a run timed (bench: the loader-alone windows'
/// wall cost of each sample on its worker, ms), their level set by the measured loader:
/// the costs are scaled by scale = measured_data_ms / model::predict_data_ms(costs, loader),
/// so that the simulated loader alone makes a batch in the measured data_ms (the shape of
/// the distribution from the costs, its level from the measurement, which holds what a
/// sample's own time leaves out: dispatch, hand-off, the workers' contention), then the
/// loop is simulated (model::predict_step, default options) with `loop`, every cost times
/// `loop_cost_factor`: the workers' CPU per sample in the loop over the loader-alone
/// windows' (bench: loop_cpu_drift_pct / 100 + 1; 1 when not measured). In the loop the
/// workers idle between batches whenever the prefetch queue is full and resume on colder
/// caches: on this project's 2-core host their CPU per sample rose 3 to 8 % on a
/// heavy-tailed mix and up to 15 % on photos-in as the step grew from 0.85 to 1.3 times the
/// data time, and the prediction without it read 2.5 to 4.6 % low on the mix (1.2 to
/// 2.9 % with it; 200 steps, issue 34). Constant costs give back max(data_ms x
/// loop_cost_factor, compute_ms) (the callbacks aside). tail_stall_share_pct:
/// model::tail_stall_share_pct over the costliest `costliest` samples.
/// Errors: std::invalid_argument for no costs, a cost or measured_data_ms not a finite
/// ms >= 0, loop_cost_factor not a finite number > 0, and model::predict_step's.
struct CostPrediction {
  model::StepPrediction step;
  double scale = 1;             ///< the factor on every cost: cost_scale's, or predict_at_scale's own
  double loop_cost_factor = 1;  ///< as given
  double tail_stall_share_pct = 0;
  /// The tail fixes priced on the same scaled costs (issue 34 item 4): the mean step with
  /// twice the prefetch depth, and with out-of-order delivery of ready batches.
  double deep_prefetch_step_ms = 0, out_of_order_step_ms = 0;
};
CostPrediction predict_from_costs(const std::vector<double>& sample_ms, const model::LoaderShape& loader,
                                  double measured_data_ms, const model::LoopShape& loop, int costliest,
                                  double loop_cost_factor = 1);
/// The level predict_from_costs sets: measured_data_ms (ms per batch) over the costs'
/// simulated loader alone; 1 when either is not positive. Errors: std::invalid_argument
/// for measured_data_ms not a finite ms >= 0, and model::predict_data_ms's.
double cost_scale(const std::vector<double>& sample_ms, const model::LoaderShape& loader, double measured_data_ms);

/// The same at a level given (scale: the factor on every cost, > 0), not set from a
/// measurement: costs that are not the ones the level was measured on (bench: the dataset's
/// costs replayed, from the timed visits' level; bench/cases/dataset_costs.h).
CostPrediction predict_at_scale(const std::vector<double>& sample_ms, const model::LoaderShape& loader,
                                double scale, const model::LoopShape& loop, int costliest,
                                double loop_cost_factor = 1);

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
  /// When none in the sweep is: model::mean_workers_for_target(per_sample_ms /
  /// scaling_efficiency, batch, compute_ms, model::kAuTargetPct), the one "workers needed"
  /// formula (the what-if's "for 90 %" column's too).
  std::optional<int> predicted_workers;
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
