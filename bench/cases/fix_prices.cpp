#include "bench/cases/fix_prices.h"

#include <stdexcept>

#include "bench/cases/fix_probe.h"
#include "bench/run/counter_put.h"
#include "model/bound.h"
#include "model/case_key.h"
#include "model/catalogue.h"
#include "model/copy_fix_price.h"
#include "model/ratio_fix_price.h"
#include "pipeline/dist/dist.h"

namespace pipebench::bench {
namespace {

// A fix's price against its measured step.
void put_price(benchmark::State& state, double predicted_ms, double step_ms) {
  put(state, CounterId::kFixPredStepMs, predicted_ms);
  put(state, CounterId::kFixPredictionErrorPct, model::prediction_error_pct(predicted_ms, step_ms));
}

}  // namespace

// Today's case at this case's workers: what a fix's case is priced from
// (BenchContext::fix_prices); nullptr when it did not run first or timed too few.
const BenchContext::FixPrices* FixPricing::today_prices() const {
  const model::CaseKey* key = ctx_.key_of(fix_.case_name);
  if (!key) return nullptr;
  model::CaseKey today = *key;
  today.variant.clear();
  today.variant_param.clear();
  return ctx_.fix_prices(today.name());
}

// A fix on the same dataset (decode:auto: a what-if candidate that runs end to end with
// its own pipeline, not a copy, not a loader change): its label, "decode:auto"; else "".
std::string FixPricing::ratio_fix_label() const {
  if (fix_.presized || fix_.loader_fix) return "";
  const model::CaseKey* key = ctx_.key_of(fix_.case_name);
  if (!key || key->variant.empty() || !key->callbacks.empty()) return "";
  const model::CandidateKind* kind = model::find_candidate(key->variant);
  return kind && kind->end_to_end ? key->variant_label() : "";
}

// Not under mpirun: every rank's probe at once would slow the others' (the price then
// rests on the paired round and the headers). The files it times are kept for the fix's
// cases at other workers.
void FixPricing::probe() {
  const std::string label = ratio_fix_label();
  const auto prices = label.empty() || dist::world_size() > 1 ? nullptr : today_prices();
  if (!prices || !fix_.pipeline) return;
  const auto probed = probe_costliest(ctx_, *ctx_.config().pipeline, *fix_.pipeline, prices->file_ms,
                                      ctx_.fix_image_costs(label), kProbeBudgetShare * ctx_.config().budget_s);
  ctx_.note_fix_probe_costs(label, probed);
  probed_ = static_cast<int>(probed.size());
}

void FixPricing::report(benchmark::State& state, double step_ms, int prefetch, const model::LoaderShape& loader,
                        const model::LoopShape& loop) {
  if (fix_.loader_fix) report_loader_fix(state, step_ms, prefetch);
  try {
    if (fix_.presized) report_copy(state, step_ms, loader, loop);
    if (!ratio_fix_label().empty()) report_ratio(state, step_ms, loader, loop);
  } catch (const std::invalid_argument& e) {  // a price's input checks (a cost not finite)
    ctx_.fail_case(state, std::string("the fix's price: ") + e.what());
  }
}

// A tail fix's own figures: its loader's depth (and the memory a deeper one adds), and
// today's case's prediction of its step, made before the fix ran, against the measured.
void FixPricing::report_loader_fix(benchmark::State& state, double step_ms, int prefetch) const {
  put(state, CounterId::kPrefetchDepthBatches, prefetch);
  const int base = ctx_.config().prefetch;
  if (prefetch > base)
    put(state, CounterId::kFixHostMib, (prefetch - base) * put_value(state, CounterId::kBatchBytes) / (1024.0 * 1024.0));
  const auto prices = ctx_.fix_prices(fix_.loader_fix->today_case);
  if (!prices) return;
  const double predicted = fix_.loader_fix->change.in_order ? prices->deep_prefetch_ms : prices->out_of_order_ms;
  if (predicted > 0) put_price(state, predicted, step_ms);
}

// A presized copy's case, at the copy's loader-alone level (loop factor 1): today's factor
// on a heavy-tailed set follows which large originals its loop window met (+12 % and +20 %
// in two short default runs on the mix), not what the copy's loop will do.
void FixPricing::report_copy(benchmark::State& state, double step_ms, const model::LoaderShape& loader,
                             const model::LoopShape& loop) const {
  const auto prices = today_prices();
  if (!prices) return;
  const auto price =
      model::price_copy_fix(prices->file_ms, fix_.presized->paired_costs(), prices->scale, 1.0, loader, loop);
  if (!price) return;
  put_price(state, price->step.step_ms, step_ms);
  put(state, CounterId::kFixCostRatio, price->cost_ratio);
  put(state, CounterId::kFixCostMatched, price->matched);
}

// decode:auto's, at the fix's loader-alone level (loop factor 1, as a copy's).
void FixPricing::report_ratio(benchmark::State& state, double step_ms, const model::LoaderShape& loader,
                              const model::LoopShape& loop) const {
  put(state, CounterId::kFixProbedFiles, probed_);
  const auto prices = today_prices();
  if (!prices) return;
  const auto price = model::price_ratio_fix(prices->file_ms, ctx_.fix_image_costs(ratio_fix_label()),
                                            [&](size_t i) { return ctx_.file_header(i); }, prices->scale, 1.0,
                                            loader, loop);
  if (!price) return;
  put_price(state, price->step.step_ms, step_ms);
  put(state, CounterId::kFixCostRatio, price->cost_ratio);
  put(state, CounterId::kFixCostMatched, price->measured);
  put(state, CounterId::kFixCostMeasuredPct, price->measured_cost_pct);
}

}  // namespace pipebench::bench
