#include "bench/cases/tail_fixes.h"

#include <cstdio>

#include "model/catalogue.h"
#include "pipeline/dist/dist.h"

namespace pipebench::bench {

std::optional<model::TailForecast> forecast_tail_fixes(const BenchContext& ctx, int workers) {
  const ImageFolder* folder = ctx.folder();
  const CaseBudget& b = ctx.budget();
  if (folder == nullptr || folder->size() == 0) return std::nullopt;
  model::TailForecastInput in;
  in.file_bytes.reserve(folder->size());
  for (size_t i = 0; i < folder->size(); ++i) in.file_bytes.push_back(folder->sample(i).size_bytes);
  in.batch = b.images_per_batch;
  in.workers = workers;
  in.prefetch_depth = ctx.config().prefetch;
  // With the probe, its level against the step; without (--steps given), the balance point,
  // where the savings do not depend on the level (any typical cost gives the same ratios).
  in.typical_sample_ms = b.sample_ms > 0 ? b.sample_ms : 1.0;
  in.compute_ms = b.sample_ms > 0 ? b.compute_ms : 0.0;
  return model::forecast_tail_fixes(in);
}

std::vector<TailFixCase> plan_tail_fixes(const BenchContext& ctx, const model::CaseKey& today) {
  const BenchConfig& c = ctx.config();
  if (c.quick || c.tail_fixes == "off" || today.workers < 1) return {};
  if (c.tail_fixes == "auto") {
    const auto forecast = forecast_tail_fixes(ctx, today.workers);
    if (!forecast || !forecast->worth_running()) return {};
    const auto saving = [&](double ms) { return 100.0 * (1.0 - ms / forecast->step_ms); };
    if (dist::rank() == 0)
      std::fprintf(stderr,
                   "pipebench: the tail fixes run end to end at %d worker%s (--tail-fixes=auto): the step "
                   "model, from the files' sizes, forecasts that twice the prefetch saves %.1f %% of the step "
                   "and out-of-order delivery %.1f %% (--tail-fixes=off: not run)\n",
                   today.workers, today.workers == 1 ? "" : "s", saving(forecast->deep_prefetch_ms),
                   saving(forecast->out_of_order_ms));
  }
  std::vector<TailFixCase> out;
  for (const auto& fix : model::loader_fixes()) {
    TailFixCase f;
    f.key = today;
    f.key.variant = std::string(fix.kind);
    if (fix.kind == "prefetch") {
      f.change.prefetch = 2 * c.prefetch;
      f.key.variant_param = std::to_string(f.change.prefetch);
    } else {
      f.change.in_order = false;
      f.key.variant_param = std::string(model::kOutOfOrder);
    }
    f.today_case = today.name();
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace pipebench::bench
