#include "report/regions.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "report/appendf.h"
#include "report/whatif.h"

namespace pipebench::report {
namespace {

double field(const BenchRun& run, const std::string& name, CounterId id) {
  const auto v = run.value(name, id);
  const std::string_view f = model::counter_name(id);
  if (!v) throw ReportError(name + " has no " + std::string(f) + " (not a RegionTimer row)");
  if (!std::isfinite(*v) || *v < 0)
    throw ReportError(name + ": " + std::string(f) + " must be a finite number >= 0, got " + std::to_string(*v));
  return *v;
}

const RegionRow* find_row(const RegionProfile& p, const char* key) {
  for (const auto& r : p.rows)
    if (r.key == key) return &r;
  return nullptr;
}

double total(const RegionProfile& p, const char* key) {
  const RegionRow* r = find_row(p, key);
  return r ? r->total_ms : 0;
}

}  // namespace

bool RegionProfile::data_bound() const { return !empty() && stall_pct > 100 - kAuTargetPct; }

RegionProfile region_profile(const BenchRun& run) {
  RegionProfile p;
  for (const CaseMeans* c : run.where([](const model::CaseKey& k) { return k.family == model::Family::kRegion; })) {
    const std::string name = c->key.name();
    RegionRow r;
    r.key = c->key.op;
    r.count = field(run, name, CounterId::kTimerCount);
    r.total_ms = field(run, name, CounterId::kTimerTotalMs);
    r.mean_ms = run.value(name, CounterId::kTimerMeanMs).value_or(r.count > 0 ? r.total_ms / r.count : 0);
    r.p50_ms = run.value(name, CounterId::kTimerP50Ms).value_or(0);
    r.p99_ms = run.value(name, CounterId::kTimerP99Ms).value_or(0);
    p.rows.push_back(std::move(r));
  }
  if (p.empty()) return p;
  p.clock = run.context_or("region_timer", "?");
  if (const RegionRow* b = find_row(p, "Batch")) {
    p.steps = b->count;
    p.step_from_batch = true;
  } else if (const RegionRow* io = find_row(p, "IO")) {
    p.steps = io->count;
  } else {
    for (const auto& r : p.rows) p.steps = std::max(p.steps, r.count);
  }
  if (p.steps <= 0) return p;
  const double n = p.steps;
  p.data_ms = total(p, "IO") / n;
  p.compute_ms = (total(p, "Forward") + total(p, "Backward")) / n;
  p.to_device_ms = total(p, "ToDevice") / n;
  p.comm_ms = total(p, "Comm") / n;
  p.other_ms = total(p, "Other") / n;
  const double phases = p.data_ms + p.compute_ms + p.to_device_ms + p.comm_ms + p.other_ms;
  p.step_ms = p.step_from_batch ? total(p, "Batch") / n : phases;
  if (p.step_from_batch) p.unaccounted_ms = std::max(0.0, p.step_ms - phases);
  if (p.step_ms > 0) {
    p.stall_pct = 100 * p.data_ms / p.step_ms;
    p.au_pct = std::min(100.0, 100 * p.compute_ms / p.step_ms);
  }
  return p;
}

void append_regions_text(std::string& out, const RegionProfile& p, int batch) {
  if (p.empty()) return;
  appendf(out, "\nYour loop (region timers, clock %s, %.0f steps):\n", p.clock.c_str(), p.steps);
  appendf(out, "  %-12s %7s %10s %10s %10s %10s\n", "key", "count", "total ms", "mean ms", "p50 ms",
          "p99 ms");
  for (const auto& r : p.rows)
    appendf(out, "  %-12s %7.0f %10.2f %10.3f %10.3f %10.3f\n", r.key.c_str(), r.count, r.total_ms,
            r.mean_ms, r.p50_ms, r.p99_ms);
  if (p.step_ms <= 0) {
    appendf(out, "No verdict: the regions add up to no time per step.\n");
    return;
  }
  const auto pct = [&](double ms) { return 100 * ms / p.step_ms; };
  appendf(out, "Per step: %.2f ms%s", p.step_ms, p.step_from_batch ? " (Batch)" : " (sum of the phases)");
  if (batch > 0) appendf(out, ", %.0f images/s at batch %d", batch * 1000.0 / p.step_ms, batch);
  appendf(out, " = waiting for data (IO) %.2f ms (%.1f %%) + compute (Forward + Backward) %.2f ms "
          "(AU %.1f %%)", p.data_ms, p.stall_pct, p.compute_ms, p.au_pct);
  const std::pair<const char*, double> rest[] = {{"to device", p.to_device_ms},
                                                 {"comm", p.comm_ms},
                                                 {"other", p.other_ms},
                                                 {"unaccounted", p.unaccounted_ms}};
  for (const auto& [what, ms] : rest)  // the phases the loop did not time are left out
    if (ms > 0) appendf(out, " + %s %.2f ms (%.1f %%)", what, ms, pct(ms));
  appendf(out, ".\n");
  if (p.data_bound()) {
    appendf(out, "Verdict: data-bound: the loop waits for data %.1f %% of each step (over %.0f %%, "
            "so AU cannot reach %.0f %%). A loader that keeps up would shorten the step by up to "
            "%.2f ms, to %.2f ms: more loader workers, or a cheaper sample (pipebench's what-if "
            "table prices both for your pipeline).\n", p.stall_pct, 100 - kAuTargetPct,
            kAuTargetPct, p.data_ms, p.step_ms - p.data_ms);
  } else {
    appendf(out, "Verdict: not data-bound: waiting for data is %.1f %% of the step (at most %.0f "
            "%%): the loader keeps up; a faster step comes from the model, the copy or what "
            "else the loop does.\n", p.stall_pct, 100 - kAuTargetPct);
  }
  if (p.compute_ms == 0)
    appendf(out, "Note: no Forward or Backward region, so AU is 0 by construction.\n");
}

nlohmann::json regions_json(const RegionProfile& p) {
  if (p.empty()) return nullptr;
  nlohmann::json keys = nlohmann::json::array();
  for (const auto& r : p.rows)
    keys.push_back({{"key", r.key}, {"count", r.count}, {"total_ms", r.total_ms},
                    {"mean_ms", r.mean_ms}, {"p50_ms", r.p50_ms}, {"p99_ms", r.p99_ms}});
  return {{"clock", p.clock}, {"steps", p.steps}, {"step_from_batch", p.step_from_batch},
          {"step_ms", p.step_ms}, {"data_ms", p.data_ms}, {"compute_ms", p.compute_ms},
          {"to_device_ms", p.to_device_ms}, {"comm_ms", p.comm_ms}, {"other_ms", p.other_ms},
          {"unaccounted_ms", p.unaccounted_ms}, {"stall_pct", p.stall_pct}, {"au_pct", p.au_pct},
          {"data_bound", p.data_bound()}, {"keys", keys}};
}

}  // namespace pipebench::report
