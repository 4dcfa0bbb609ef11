#include "report/extras.h"

#include <algorithm>
#include <cmath>

#include "model/bound.h"
#include "report/appendf.h"

namespace pipebench::report {

namespace {

// The step model's step for a callback case (extras.h ExtrasCase::predicted_step_ms).
std::optional<double> predicted_with_callbacks(const BenchRun& run, const CaseMeans& m) {
  const auto data = m.get(CounterId::kDataMs), compute = m.get(CounterId::kComputeMs);
  if (!data || !compute) return std::nullopt;
  std::vector<model::Callback> callbacks;
  bool recorded = !m.key.callbacks.empty();  // bench wrote every=N and its bound_ms with them
  for (const std::string& label : m.key.callbacks) {
    const auto every = m.get(CounterId::kCallbackEvery, label);
    recorded = recorded && every.has_value();
    const int n = std::max(1, static_cast<int>(std::lround(every.value_or(1))));
    const bool metric = label.rfind("metric", 0) == 0;  // its time there is the wait for the step
    callbacks.push_back({metric ? 0.0 : m.get(CounterId::kCallbackMs, label).value_or(0) * n, n, false, metric});
  }
  if (const auto bound = m.get(CounterId::kBoundMs); recorded && bound) return *bound;
  const int depth = static_cast<int>(std::lround(run.number("prefetch_depth_batches").value_or(2)));
  return predict_from_parts(*data, *compute, std::max(1, depth), callbacks).step_ms;
}

}  // namespace

Extras training_extras(const BenchRun& run, const std::string& pipeline) {
  Extras e;
  // The loop with training extras: BM_EndToEnd/<pipeline>/.../callbacks:<set>.
  const auto with_callbacks = run.where([&](const model::CaseKey& k) {
    return k.family == model::Family::kEndToEnd && k.pipeline == pipeline && !k.callbacks.empty();
  });
  for (const CaseMeans* m : with_callbacks) {
    const std::string name = m->key.name();
    const auto get = [&](CounterId id) { return run.value(name, id); };
    const auto cb = get(CounterId::kCallbacksMs), step = get(CounterId::kStepMs), au = get(CounterId::kAuPct), w = get(CounterId::kWorkers);
    if (!cb || !step || !au || !w) continue;
    ExtrasCase c;
    c.name = name;
    c.workers = static_cast<int>(std::lround(*w));
    c.async = get(CounterId::kCallbacksAsync).value_or(0) > 0.5;
    c.step_ms = *step;
    c.step_ms_ci = get(CounterId::kStepMsCi);
    c.au_pct = *au;
    c.stall_pct = get(CounterId::kStallPct).value_or(100 - *au);
    c.callbacks_ms = *cb;
    c.callbacks_pct = get(CounterId::kCallbacksPct).value_or(*step > 0 ? 100 * *cb / *step : 0);
    c.predicted_step_ms = predicted_with_callbacks(run, *m);
    if (c.predicted_step_ms) c.prediction_error_pct = model::prediction_error_pct(*c.predicted_step_ms, *step);
    // Each callback of the set (the key's labels, pipeline/callbacks.h) has its counter
    // callback:<label>_ms.
    for (const std::string& label : m->key.callbacks)
      if (const auto ms = run.value(name, CounterId::kCallbackMs, label)) c.per_callback.emplace_back(label, *ms);
    e.cases.push_back(std::move(c));
  }
  const ExtrasCase* sync = nullptr;
  for (const auto& c : e.cases)
    if (!c.async && (!sync || c.callbacks_ms > sync->callbacks_ms)) sync = &c;
  if (sync) {
    for (const auto& [label, ms] : sync->per_callback)
      if (ms > e.costliest_ms) {
        e.costliest = label;
        e.costliest_ms = ms;
      }
    for (const auto& c : e.cases)
      if (c.async && c.workers == sync->workers && sync->step_ms > 0) {
        e.async_saving_ms = sync->step_ms - c.step_ms;
        e.async_saving_pct = 100 * *e.async_saving_ms / sync->step_ms;
        if (sync->step_ms_ci && c.step_ms_ci)
          e.async_saving_ci_ms = std::sqrt(*sync->step_ms_ci * *sync->step_ms_ci + *c.step_ms_ci * *c.step_ms_ci);
      }
  }
  return e;
}

void append_extras_text(std::string& out, const Extras& e) {
  if (e.empty()) return;
  appendf(out, "\nTraining extras (callbacks on the loop's thread, per step):\n");
  for (const auto& c : e.cases) {
    std::string ci;
    if (c.step_ms_ci) appendf(ci, " +-%.2f", *c.step_ms_ci);
    appendf(out, "  %s: step %.2f%s ms; %.1f %% in callbacks (%.2f ms), AU %.1f %%, stall %.1f %%",
            c.name.c_str(), c.step_ms, ci.c_str(), c.callbacks_pct, c.callbacks_ms, c.au_pct, c.stall_pct);
    if (c.predicted_step_ms)
      appendf(out, "; predicted %.2f ms by the step model (data, compute, the callbacks on the loop's thread; error %+.1f %%)",
              *c.predicted_step_ms, *c.prediction_error_pct);
    appendf(out, "\n");
  }
  if (!e.costliest.empty())
    appendf(out, "  Costliest callback: %s, %.2f ms per step on the loop's thread.\n",
            e.costliest.c_str(), e.costliest_ms);
  if (e.async_within_noise()) {
    appendf(out, "  Made async, the callbacks: within noise (%+.2f +-%.2f ms per step, 95 %%, the two "
            "cases' step intervals combined): no saving can be told from the machine's noise in "
            "this run.\n", *e.async_saving_ms, *e.async_saving_ci_ms);
  } else if (e.async_saving_ms && e.async_saving_ci_ms) {
    appendf(out, "  Made async, the callbacks %s %.2f +-%.2f ms per step (95 %%, the two cases' step "
            "intervals combined; %.1f %% of the step), measured in this run.\n",
            *e.async_saving_ms >= 0 ? "saved" : "cost", std::abs(*e.async_saving_ms),
            *e.async_saving_ci_ms, std::abs(*e.async_saving_pct));
  } else if (e.async_saving_ms) {
    // No interval (a case timed fewer than two blocks of steps): no effect is claimed.
    appendf(out, "  Made async, the callbacks: %+.2f ms per step between the two cases, not judged: "
            "no interval (too few steps timed; a larger --budget times more).\n", *e.async_saving_ms);
  }
}

nlohmann::json extras_json(const Extras& e) {
  nlohmann::json j = nlohmann::json::object();
  j["cases"] = nlohmann::json::array();
  for (const auto& c : e.cases) {
    nlohmann::json per = nlohmann::json::object();
    for (const auto& [label, ms] : c.per_callback) per[label + "_ms"] = ms;
    j["cases"].push_back({{"case", c.name}, {"workers", c.workers}, {"async", c.async},
                          {"step_ms", c.step_ms}, {"au_pct", c.au_pct}, {"stall_pct", c.stall_pct},
                          {"callbacks_ms", c.callbacks_ms}, {"callbacks_pct", c.callbacks_pct},
                          {"predicted_step_ms", c.predicted_step_ms ? nlohmann::json(*c.predicted_step_ms) : nlohmann::json()},
                          {"prediction_error_pct", c.prediction_error_pct ? nlohmann::json(*c.prediction_error_pct) : nlohmann::json()},
                          {"per_callback", per}});
  }
  j["costliest"] = e.costliest.empty() ? nlohmann::json() : nlohmann::json(e.costliest);
  j["costliest_ms_per_step"] = e.costliest_ms;
  j["async_saving_ms_per_step"] = e.async_saving_ms ? nlohmann::json(*e.async_saving_ms) : nlohmann::json();
  j["async_saving_pct"] = e.async_saving_pct ? nlohmann::json(*e.async_saving_pct) : nlohmann::json();
  j["async_saving_ci95_ms_per_step"] = e.async_saving_ci_ms ? nlohmann::json(*e.async_saving_ci_ms) : nlohmann::json();
  j["async_within_noise"] = e.async_within_noise();
  return j;
}

std::optional<SamplerCost> sampler_cost(const BenchRun& run, const std::string& pipeline) {
  for (const CaseMeans* m : run.where([&](const model::CaseKey& k) {
         return k.family == model::Family::kSystemSampler && k.pipeline == pipeline;
       })) {
    const std::string name = m->key.name();
    const auto get = [&](CounterId id) { return run.value(name, id); };
    const auto cost = get(CounterId::kSamplerCostPct), over = get(CounterId::kOverheadPct), cores = get(CounterId::kSamplerCores);
    if (!cost || !over || !cores) continue;
    SamplerCost c{name, static_cast<int>(std::lround(get(CounterId::kWorkers).value_or(0))), *cores, *cost, *over};
    c.overhead_ci_pct = get(CounterId::kOverheadCiPct);
    c.pairs = static_cast<int>(std::lround(get(CounterId::kPairs).value_or(0)));
    return c;
  }
  return std::nullopt;
}

void append_sampler_cost_text(std::string& out, const std::optional<SamplerCost>& c) {
  if (!c) return;
  std::string ab;
  if (c->overhead_ci_pct && std::abs(c->overhead_pct) <= *c->overhead_ci_pct)
    appendf(ab, "within noise (%+.1f +-%.1f %% ms per batch, 95 %%, %d pairs)", c->overhead_pct,
            *c->overhead_ci_pct, c->pairs);
  else if (c->overhead_ci_pct)
    appendf(ab, "%+.1f +-%.1f %% ms per batch (95 %%, %d pairs)", c->overhead_pct, *c->overhead_ci_pct, c->pairs);
  else
    appendf(ab, "%+.1f %% ms per batch (no interval: fewer than 2 pairs)", c->overhead_pct);
  appendf(out, "\nSystem sampler's cost (%s): its thread used %.4f cores, %.2f %% of the loader's CPU "
          "at %d workers (measured directly; target < 1 %%); the loader with it on vs off, paired A B "
          "B A: %s.\n", c->name.c_str(), c->sampler_cores, c->cost_pct, c->workers, ab.c_str());
}

nlohmann::json sampler_cost_json(const std::optional<SamplerCost>& c) {
  if (!c) return nullptr;
  return {{"case", c->name}, {"workers", c->workers}, {"sampler_cores", c->sampler_cores},
          {"sampler_cost_pct", c->cost_pct}, {"overhead_pct", c->overhead_pct},
          {"overhead_ci95_pct", c->overhead_ci_pct ? nlohmann::json(*c->overhead_ci_pct) : nlohmann::json()},
          {"pairs", c->pairs}};
}

}  // namespace pipebench::report
