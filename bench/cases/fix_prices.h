// A fix's end-to-end case against the price today's case at the same workers made of it
// before it ran (issue 34 item 4: "each priced by the model ... with the check of
// prediction against measurement"). Three kinds, each priced by the step model from
// today's timed per-sample costs (BenchContext::fix_prices):
//   a loader fix   prefetch:<2P>, delivery:out_of_order (bench/cases/tail_fixes.h): today's
//                  case's own pred_step_deep_prefetch_ms / pred_step_out_of_order_ms; also
//                  prefetch_depth_batches and fix_host_mib (the memory a deeper queue adds);
//   a presized copy  presized:<N>, presized_large:<N>: each round image's cost on the copy
//                  from its paired case (model/copy_fix_price.h; fix_cost_ratio,
//                  fix_cost_matched);
//   decode:auto    each file today's loader timed at the fix's cost ratio on it, measured
//                  by its paired round or by the probe this case runs before its loader
//                  starts (bench/cases/fix_probe.h), else from its header
//                  (model/ratio_fix_price.h; fix_probed_files, fix_cost_ratio,
//                  fix_cost_matched, fix_cost_measured_pct).
// Each writes fix_pred_step_ms and fix_prediction_error_pct against the case's measured
// step_ms; nothing when today's case did not run first (filtered out, failed, too few
// costs timed) or too few images match. Used by bench/cases/end_to_end_bench.cpp only.
// Units: ms, MiB. Errors: report() fails the case (BenchContext::fail_case) naming a price's
// input error (a cost not finite); probe() lets std::bad_alloc through.
#pragma once

#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "bench/cases/tail_fixes.h"
#include "bench/run/bench_context.h"
#include "bench/run/presized_copy.h"
#include "model/step_model.h"
#include "transforms/pipeline.h"

namespace pipebench::bench {

/// What an end-to-end case is, as its pricing needs it: at most one of loader_fix,
/// presized and a candidate pipeline (pipeline differs from the run's) is a fix.
struct FixCase {
  std::string case_name;
  const TailFixCase* loader_fix = nullptr;
  std::shared_ptr<PresizedCopy> presized;
  const Pipeline* pipeline = nullptr;  ///< the case's own pipeline
};

class FixPricing {
 public:
  FixPricing(BenchContext& ctx, FixCase fix) : ctx_(ctx), fix_(std::move(fix)) {}

  /// decode:auto's probe of today's costliest files not yet measured (within
  /// kProbeBudgetShare of --budget, one thread); nothing for another case or under mpirun.
  /// Call before the case's loader starts.
  void probe();

  /// The fix's counters on `state` after its loop: its measured step (ms), its loader's
  /// prefetch depth (batches) and the shapes the step model prices with.
  void report(benchmark::State& state, double step_ms, int prefetch, const model::LoaderShape& loader,
              const model::LoopShape& loop);

 private:
  const BenchContext::FixPrices* today_prices() const;
  std::string ratio_fix_label() const;
  void report_loader_fix(benchmark::State& state, double step_ms, int prefetch) const;
  void report_copy(benchmark::State& state, double step_ms, const model::LoaderShape& loader,
                   const model::LoopShape& loop) const;
  void report_ratio(benchmark::State& state, double step_ms, const model::LoaderShape& loader,
                    const model::LoopShape& loop) const;

  BenchContext& ctx_;
  FixCase fix_;
  int probed_ = 0;  // files probe() timed
};

}  // namespace pipebench::bench
