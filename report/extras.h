// Training extras in the report (issue 10): the loop run with callbacks
// (bench: BM_EndToEnd/<pipeline>/<baseline>/workers:<w>/callbacks:<set>, found by their
// callbacks_ms counter), answering the design notes' questions for each: how much of the
// step the loop's thread spent in callbacks (callbacks_pct = 100 x callbacks_ms / step_ms),
// how much the accelerator computed (au_pct) and how much it waited (stall_pct); which
// callback costs most (callback:<label>_ms of the case with sync callbacks), and what
// running them async saved, measured: step_ms of the sync case minus that of the async one
// at the same worker count.
// A sync callback on the host can overlap the accelerator's step (the step is submitted
// first), so its time shows in step_ms only where the loop could not hide it: the saving
// is the measured difference, not the callback's own time.
// Nothing here throws; a run without such cases gives an empty Extras.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/run.h"

namespace pipebench::report {

struct ExtrasCase {
  std::string name;        ///< without Google Benchmark's suffixes
  int workers = 0;
  bool async = false;      ///< every callback of the set async (callbacks_async)
  double step_ms = 0, au_pct = 0, stall_pct = 0;
  std::optional<double> step_ms_ci;  ///< step_ms's 95 % half width (bench: over blocks of steps)
  double callbacks_ms = 0, callbacks_pct = 0;      ///< on the loop's thread, per step
  std::vector<std::pair<std::string, double>> per_callback;  ///< label -> ms per step
  /// The step model's prediction for a loop whose thread also runs the callbacks (issue
  /// 26, 34): the case's bound_ms as bench wrote it (model/bound.h predict_from_parts with
  /// the callbacks, recorded with callback:<label>_every) so that the JSON and this report
  /// give one number; for a record from before callback:<label>_every, the same model
  /// on its counters (each callback every step). ms per batch, and its error against
  /// step_ms (model::prediction_error_pct), %; absent without data_ms and compute_ms.
  std::optional<double> predicted_step_ms, prediction_error_pct;
};

struct Extras {
  std::vector<ExtrasCase> cases;
  std::string costliest;            ///< label of the sync case's costliest callback
  double costliest_ms = 0;          ///< its ms per step
  std::optional<double> async_saving_ms;   ///< sync step_ms - async step_ms, same workers
  std::optional<double> async_saving_pct;  ///< of the sync step
  /// The saving's 95 % half width: the two cases' intervals combined, sqrt(a^2 + b^2) (two
  /// cases run one after the other, not paired: the machine may drift between them);
  /// absent when either case has none. Within it, the saving is noise, never an effect.
  std::optional<double> async_saving_ci_ms;
  bool async_within_noise() const {
    return async_saving_ms && async_saving_ci_ms && std::abs(*async_saving_ms) <= *async_saving_ci_ms;
  }
  bool empty() const { return cases.empty(); }
};

/// The system sampler's own cost (bench: BM_SystemSampler/<pipeline>/workers:<w>): the
/// sampler thread's CPU as a share of the loader's (cost_pct, measured directly: the
/// overhead to expect where cores are the bottleneck; issue 10's target is < 1 %) and the
/// loader's ms per batch with it on vs off, alternated A B B A (overhead_pct, noisier).
struct SamplerCost {
  std::string name;
  int workers = 0;
  double sampler_cores = 0, cost_pct = 0, overhead_pct = 0;
  std::optional<double> overhead_ci_pct;  ///< the on/off pairs' 95 % half width, %
  int pairs = 0;
};
std::optional<SamplerCost> sampler_cost(const BenchRun& run, const std::string& pipeline);
/// One line (nothing without the case).
void append_sampler_cost_text(std::string& out, const std::optional<SamplerCost>& c);
nlohmann::json sampler_cost_json(const std::optional<SamplerCost>& c);

/// The training-extras cases of `pipeline` in `run` (empty when it has none).
Extras training_extras(const BenchRun& run, const std::string& pipeline);
/// The "Training extras" section of pipebench-report's text (nothing when empty): per case
/// step ms, % of the step in callbacks (and their ms), AU % and stall %; the costliest
/// callback (ms per step); the async saving (ms per step and % of the sync step).
void append_extras_text(std::string& out, const Extras& e);
/// The same as the report's "training_extras" JSON, units in every key (_ms, _pct).
nlohmann::json extras_json(const Extras& e);

}  // namespace pipebench::report
