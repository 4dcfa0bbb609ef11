// The tail fixes applied for real (issue 34 item 4): today's pipeline end to end with the
// loader changed, at the what-if table's worker count (ctx.table_workers()), beside today's
// case at the same workers (model/catalogue.h loader_fixes):
//   BM_EndToEnd/<pipeline>/prefetch:<2 x P>/<baseline>/workers:<w>   twice --prefetch (P):
//     P more batch buffers of host memory (fix_host_mib = P x batch_bytes), the samples and
//     their order unchanged;
//   BM_EndToEnd/<pipeline>/delivery:out_of_order/<baseline>/workers:<w>   the loop takes
//     whichever complete batch is ready first (LoaderOptions::in_order false, PyTorch's
//     DataLoader(in_order=False)): the order in which samples reach the model changes,
//     their pixels do not.
// Each runs as today's case does (bench/cases/end_to_end_bench.cpp: the loader alone, the loop,
// the loader alone again) and writes, beside its own measured step_ms (with step_ms_ci)
// and its own bound_ms (the step model on its own costs and its own loader shape):
//   fix_pred_step_ms          the prediction made BEFORE the fix, by today's case from its
//                             timed costs (its pred_step_deep_prefetch_ms or
//                             pred_step_out_of_order_ms; BenchContext::fix_prices), absent
//                             when today's case did not run first;
//   fix_prediction_error_pct  model::prediction_error_pct(fix_pred_step_ms, step_ms);
//   prefetch_depth_batches    its loader's depth; fix_host_mib (prefetch only).
// The presized copies' and decode:auto's end-to-end cases (registered by
// end_to_end_bench.cpp) write fix_pred_step_ms and fix_prediction_error_pct too, each
// priced as bench/cases/fix_prices.h says.
// When they run (the default run must stay within its time: each is one more end-to-end
// case of --budget seconds): --tail-fixes=on always, off never, auto (the default) when
// the step model forecasts from the files' sizes and the probe that either fix saves at
// least model::kTailFixMinSavingPct of the step (model/tail_forecast.h): on a heavy-tailed
// folder, not on uniform data nor on a dataset whose every batch is the whole set. Never
// with --quick, without a table worker count (no swept count within the cores) or, under
// auto, without file sizes (WebDataset shards). Without a probe (--steps given) the
// forecast is made at the balance point (compute = the loader's mean data time), where its
// savings do not depend on the cost level.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/run/bench_context.h"
#include "bench/run/loader_util.h"
#include "model/case_key.h"
#include "model/tail_forecast.h"

namespace pipebench::bench {

struct TailFixCase {
  model::CaseKey key;      ///< BM_EndToEnd/<pipeline>/<kind>:<param>/<baseline>/workers:<w>
  LoaderChange change;     ///< the loader it runs
  std::string today_case;  ///< today's case at the same workers (the prices' source)
};

/// The step model's forecast for the run at `workers` (model/tail_forecast.h): nullopt
/// without per-file sizes (not an ImageFolder).
std::optional<model::TailForecast> forecast_tail_fixes(const BenchContext& ctx, int workers);

/// The fix cases to register beside `today` (a plain BM_EndToEnd key at the table's
/// workers), as --tail-fixes and the forecast decide; with auto and a yes, one line on
/// stderr saying why (rank 0).
std::vector<TailFixCase> plan_tail_fixes(const BenchContext& ctx, const model::CaseKey& today);

}  // namespace pipebench::bench
