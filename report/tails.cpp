#include "report/tails.h"

#include <algorithm>
#include <cmath>

#include "model/catalogue.h"
#include "model/counters.h"
#include "report/appendf.h"
#include "report/whatif.h"

namespace pipebench::report {
namespace {

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

// The case's costliest:<file>_ms counters, costliest first.
std::vector<std::pair<std::string, double>> costliest_files(const CaseMeans& c) {
  std::vector<std::pair<std::string, double>> files;
  for (const auto& [field, value] : c.values) {
    const auto match = model::find_counter(field);
    if (match && match->spec->id == CounterId::kCostliestMs) files.emplace_back(match->part, value);
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return files;
}

// The tail fixes run end to end beside today's cases (bench/cases/tail_fixes.h), by workers then
// the catalogue's order.
std::vector<TailFixCheck> fix_checks(const BenchRun& run, const std::map<int, std::string>& end_to_end,
                                     const std::vector<TailPoint>& points) {
  std::vector<TailFixCheck> out;
  if (end_to_end.empty()) return out;
  const auto first = run.cases.find(end_to_end.begin()->second);
  if (first == run.cases.end()) return out;
  const model::CaseKey& today = first->second.key;
  const auto fixes = model::loader_fixes();
  const auto cases = run.where([&](const model::CaseKey& k) {
    return k.family == model::Family::kEndToEnd && k.pipeline == today.pipeline && k.baseline == today.baseline &&
           k.callbacks.empty() && model::find_loader_fix(k.variant) != nullptr;
  });
  for (const CaseMeans* c : cases) {
    const auto step = c->get(CounterId::kStepMs);
    if (!step || !(*step > 0)) continue;
    TailFixCheck f;
    f.label = c->key.variant_label();
    f.variant = c->key.variant;
    f.workers = c->key.workers;
    f.case_name = c->key.name();
    f.step_ms = *step;
    f.step_ms_ci = c->get(CounterId::kStepMsCi);
    f.predicted_ms = c->get(CounterId::kFixPredStepMs);
    f.error_pct = c->get(CounterId::kFixPredictionErrorPct);
    f.host_mib = c->get(CounterId::kFixHostMib);
    f.prefetch_depth = static_cast<int>(std::lround(c->get(CounterId::kPrefetchDepthBatches).value_or(0)));
    f.note = std::string(model::find_loader_fix(f.variant)->note);
    if (const auto w = end_to_end.find(f.workers); w != end_to_end.end())
      if (const auto t = run.cases.find(w->second); t != run.cases.end()) f.today_step_ms = t->second.get(CounterId::kStepMs);
    if (!f.today_step_ms)
      for (const auto& p : points)
        if (p.workers == f.workers) f.today_step_ms = p.step_ms;
    out.push_back(std::move(f));
  }
  const auto rank = [&](const std::string& variant) {
    for (size_t i = 0; i < fixes.size(); ++i)
      if (fixes[i].kind == variant) return i;
    return fixes.size();
  };
  std::stable_sort(out.begin(), out.end(), [&](const TailFixCheck& a, const TailFixCheck& b) {
    return a.workers != b.workers ? a.workers < b.workers : rank(a.variant) < rank(b.variant);
  });
  return out;
}

// The what-if fixes run end to end beside today's points (the catalogue's end-to-end
// kinds), each against today's case at its workers.
std::vector<TailEffect> pixel_fix_effects(const BenchRun& run, const std::vector<TailPoint>& points) {
  std::vector<TailEffect> out;
  if (points.empty()) return out;
  const auto first = run.cases.find(points.front().case_name);
  if (first == run.cases.end()) return out;
  const model::CaseKey& today = first->second.key;
  const auto cases = run.where([&](const model::CaseKey& k) {
    const model::CandidateKind* kind = model::find_candidate(k.variant);
    return k.family == model::Family::kEndToEnd && k.pipeline == today.pipeline && k.baseline == today.baseline &&
           k.callbacks.empty() && kind != nullptr && kind->end_to_end;
  });
  const auto kinds = model::candidate_kinds();
  const auto rank = [&](const std::string& variant) {
    for (size_t i = 0; i < kinds.size(); ++i)
      if (kinds[i].kind == variant) return i;
    return kinds.size();
  };
  for (const CaseMeans* c : cases) {
    const auto step = c->get(CounterId::kStepMs);
    const auto p = std::find_if(points.begin(), points.end(), [&](const TailPoint& t) { return t.workers == c->key.workers; });
    if (!step || !(*step > 0) || p == points.end() || !(p->step_ms > 0)) continue;
    out.push_back({c->key.variant_label(), c->key.workers, c->key.name(), *step, c->get(CounterId::kStepP99Ms),
                   p->step_ms, p->step_p99_ms, c->get(CounterId::kFixPredStepMs),
                   c->get(CounterId::kFixPredictionErrorPct), c->get(CounterId::kFixCostMeasuredPct)});
  }
  std::stable_sort(out.begin(), out.end(), [&](const TailEffect& a, const TailEffect& b) {
    return a.workers != b.workers ? a.workers < b.workers : rank(a.label.substr(0, a.label.find(':'))) < rank(b.label.substr(0, b.label.find(':')));
  });
  return out;
}

// "What the pixel fixes did to the tail": measured, beside today's, with the change in %.
void append_pixel_fix_effects(std::string& out, const std::vector<TailEffect>& effects) {
  for (const auto& e : effects) {
    appendf(out, "  %s at %d worker%s, run end to end: mean step %.2f ms against today's %.2f ms (%+.1f %%)",
            e.label.c_str(), e.workers, e.workers == 1 ? "" : "s", e.step_ms, e.today_step_ms,
            100 * (e.step_ms / e.today_step_ms - 1));
    if (e.step_p99_ms && e.today_p99_ms && *e.today_p99_ms > 0)
      appendf(out, ", p99 %.2f ms against %.2f ms (%+.1f %%)", *e.step_p99_ms, *e.today_p99_ms,
              100 * (*e.step_p99_ms / *e.today_p99_ms - 1));
    appendf(out, " (measured, one run each: a difference within the steps' own spread is noise)");
    if (e.predicted_ms && e.error_pct && e.measured_cost_pct)  // decode:auto (model/ratio_fix_price.h)
      appendf(out, "; the step model priced it at %.2f ms before it ran, from each file's cost at the fix's ratio "
                   "on it, measured on the files holding %.0f %% of the cost, the others' from their headers "
                   "(%+.1f %% off the measured)", *e.predicted_ms, *e.measured_cost_pct, *e.error_pct);
    else if (e.predicted_ms && e.error_pct)
      appendf(out, "; the step model priced it at %.2f ms before it ran, from each image's cost in its paired case "
                   "(%+.1f %% off the measured)", *e.predicted_ms, *e.error_pct);
    appendf(out, ".\n");
  }
}

bool fixes_ran_at(const Tails& t, int workers) {
  return std::any_of(t.fixes.begin(), t.fixes.end(), [&](const TailFixCheck& f) { return f.workers == workers; });
}

// The tail fixes the model priced for a point that stalls (predicted stall >= 1 %), where
// they did not run end to end.
void append_tail_fixes(std::string& out, const TailPoint& p) {
  if (!p.pred_stall_pct || *p.pred_stall_pct < 1 || (!p.deep_prefetch_ms && !p.out_of_order_ms)) return;
  appendf(out, "  Tail fixes at %d worker%s, priced by the step model (not run; --tail-fixes=on runs them): now %.2f ms",
          p.workers, p.workers == 1 ? "" : "s", p.pred_step_ms);
  if (p.deep_prefetch_ms) {
    appendf(out, "; a prefetch twice as deep %.2f ms (%+.1f %%", *p.deep_prefetch_ms,
            100 * (*p.deep_prefetch_ms / p.pred_step_ms - 1));
    if (p.batch_bytes && p.prefetch_depth > 0)
      appendf(out, ", %.1f MiB more host memory: %d more batches", *p.batch_bytes * p.prefetch_depth / 1048576.0,
              p.prefetch_depth);
    appendf(out, ")");
  }
  if (p.out_of_order_ms)
    appendf(out, "; out-of-order delivery %.2f ms (%+.1f %%; changes the order in which samples reach the model)",
            *p.out_of_order_ms, 100 * (*p.out_of_order_ms / p.pred_step_ms - 1));
  appendf(out, ".\n");
}

// The tail fixes run end to end at one count: measured against predicted, with the unit
// and the measured step's interval, then what each costs or changes.
void append_fix_checks(std::string& out, const std::vector<TailFixCheck>& fixes) {
  int workers = -1;
  for (const auto& f : fixes) {
    if (f.workers != workers) {
      workers = f.workers;
      appendf(out, "  Tail fixes run end to end at %d worker%s: the measured step (ms per step, +- its 95 %% "
              "half width) against the step model's prediction, made before the fix ran from today's "
              "case's timed costs", workers, workers == 1 ? "" : "s");
      for (const auto& g : fixes)
        if (g.workers == workers && g.today_step_ms) {
          appendf(out, " (today measured %.2f ms)", *g.today_step_ms);
          break;
        }
      appendf(out, ":\n");
    }
    appendf(out, "    %-24s measured %.2f", f.label.c_str(), f.step_ms);
    if (f.step_ms_ci) appendf(out, " +-%.2f", *f.step_ms_ci);
    appendf(out, " ms");
    if (f.predicted_ms) {
      appendf(out, ", predicted %.2f ms", *f.predicted_ms);
      if (f.error_pct) appendf(out, ", error %+.1f %%", *f.error_pct);
      const auto half = f.half_width_pct();
      if (!half) {
        appendf(out, " (no interval: too few steps)");
      } else if (*half > kCheckTolerancePct) {
        // A loop too short to test the model at its tolerance: no verdict on it, either way.
        appendf(out, " (the measured step's +-%.0f %% is wider than the model's %.0f %% tolerance: too few steps "
                "to check it; --steps=200 measures it)", *half, kCheckTolerancePct);
      } else {
        appendf(out, f.within_interval() ? " (within the measured interval)" : " (outside the measured interval)");
      }
    } else {
      appendf(out, ", not predicted (today's case at %d worker%s did not run before it)", f.workers,
              f.workers == 1 ? "" : "s");
    }
    if (f.variant == "prefetch") {
      appendf(out, "; %d batches in flight", f.prefetch_depth);
      if (f.host_mib) appendf(out, ": %.1f MiB more host memory", *f.host_mib);
    } else if (f.variant == "delivery") {
      appendf(out, "; changes the order in which samples reach the model, not their pixels");
    }
    appendf(out, ".\n");
  }
}

}  // namespace

Tails sweep_tails(const BenchRun& run, const std::map<int, std::string>& end_to_end) {
  Tails t;
  for (const auto& [w, name] : end_to_end) {
    const auto it = run.cases.find(name);
    if (it == run.cases.end()) continue;
    const CaseMeans& c = it->second;
    const auto timed = c.get(CounterId::kSamplesTimed), step = c.get(CounterId::kStepMs),
               bound = c.get(CounterId::kBoundMs), au = c.get(CounterId::kAuPct);
    if (!timed || !step || !bound || !au) continue;
    TailPoint p;
    p.workers = w;
    p.case_name = name;
    p.step_ms = *step;
    p.stall_pct = c.get(CounterId::kStallPct).value_or(100 - *au);
    p.step_p99_ms = c.get(CounterId::kStepP99Ms);
    p.pred_step_ms = *bound;
    p.pred_p99_ms = c.get(CounterId::kPredStepP99Ms);
    p.pred_stall_pct = c.get(CounterId::kPredStallPct);
    p.tail_share_pct = c.get(CounterId::kTailStallSharePct);
    p.samples_timed = static_cast<int>(std::lround(*timed));
    p.sample_p50_ms = c.get(CounterId::kSampleMsP50);
    p.sample_p99_ms = c.get(CounterId::kSampleMsP99);
    p.sample_max_ms = c.get(CounterId::kSampleMsMax);
    p.costliest = costliest_files(c);
    p.deep_prefetch_ms = c.get(CounterId::kPredStepDeepPrefetchMs);
    p.out_of_order_ms = c.get(CounterId::kPredStepOutOfOrderMs);
    p.batch_bytes = c.get(CounterId::kBatchBytes);
    p.prefetch_depth = static_cast<int>(std::lround(run.number("prefetch_depth_batches").value_or(0)));
    t.points.push_back(std::move(p));
  }
  t.fixes = fix_checks(run, end_to_end, t.points);
  t.pixel_fixes = pixel_fix_effects(run, t.points);
  return t;
}

std::optional<std::string> tail_explains_stall(const Tails& t, int workers, double measured_stall_pct) {
  for (const auto& p : t.points) {
    if (p.workers != workers || !p.pred_stall_pct || *p.pred_stall_pct < 1 ||
        *p.pred_stall_pct < 0.5 * measured_stall_pct)
      continue;
    std::string s;
    appendf(s, "the step model, from the per-sample costs this case timed, predicts a stall of %.1f %% "
            "(measured %.1f %%): the costliest samples hold their batches and, in order, the batches "
            "after them, which a mean data time hides", *p.pred_stall_pct, measured_stall_pct);
    if (!p.costliest.empty())
      appendf(s, " (the costliest file: %s, %.1f ms)", p.costliest.front().first.c_str(), p.costliest.front().second);
    appendf(s, "; see Tails below");
    return s;
  }
  return std::nullopt;
}

void append_tails_text(std::string& out, const Tails& t) {
  if (t.empty()) return;
  appendf(out, "\nTails (the mean step hides them; predicted: the step model from each case's "
          "timed per-sample costs):\n");
  if (t.points.empty()) {  // fix cases without today's rows (filtered, or a run without them)
    append_fix_checks(out, t.fixes);
    return;
  }
  appendf(out, "  %7s  %10s %10s %10s %10s  %9s %9s  %s\n", "workers", "step", "p99", "pred",
          "pred p99", "stall %", "pred st %", "sample p50 / p99 / max ms (n)");
  for (const auto& p : t.points) {
    const auto num = [](const std::optional<double>& v, const char* f) {
      std::string s;
      if (v) appendf(s, f, *v); else s = "-";
      return s;
    };
    appendf(out, "  %7d  %10.2f %10s %10.2f %10s  %9.1f %9s  %s / %s / %s (%d)\n", p.workers, p.step_ms,
            num(p.step_p99_ms, "%.2f").c_str(), p.pred_step_ms, num(p.pred_p99_ms, "%.2f").c_str(),
            p.stall_pct, num(p.pred_stall_pct, "%.1f").c_str(), num(p.sample_p50_ms, "%.2f").c_str(),
            num(p.sample_p99_ms, "%.2f").c_str(), num(p.sample_max_ms, "%.2f").c_str(), p.samples_timed);
  }
  for (const auto& p : t.points) {
    if (!p.tail_share_pct || *p.tail_share_pct < 1 || p.costliest.empty()) continue;
    std::string files;
    for (const auto& [file, ms] : p.costliest) appendf(files, "%s%s (%.1f ms)", files.empty() ? "" : ", ", file.c_str(), ms);
    appendf(out, "  At %d worker%s, the costliest 1 %% of the samples cause %.0f %% of the predicted "
            "stall (one slow sample holds its batch, in-order delivery the batches after it); the "
            "costliest files: %s.\n", p.workers, p.workers == 1 ? "" : "s", *p.tail_share_pct, files.c_str());
  }
  for (const auto& p : t.points)
    if (!fixes_ran_at(t, p.workers)) append_tail_fixes(out, p);
  append_fix_checks(out, t.fixes);
  append_pixel_fix_effects(out, t.pixel_fixes);
}

nlohmann::json tails_json(const Tails& t) {
  nlohmann::json j = nlohmann::json::object();
  j["points"] = nlohmann::json::array();
  for (const auto& p : t.points) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& [file, ms] : p.costliest) files.push_back({{"file", file}, {"ms", ms}});
    j["points"].push_back({{"workers", p.workers}, {"case", p.case_name}, {"step_ms", p.step_ms},
                           {"step_p99_ms", opt(p.step_p99_ms)}, {"stall_pct", p.stall_pct},
                           {"predicted_step_ms", p.pred_step_ms}, {"predicted_step_p99_ms", opt(p.pred_p99_ms)},
                           {"predicted_stall_pct", opt(p.pred_stall_pct)},
                           {"tail_stall_share_pct", opt(p.tail_share_pct)}, {"samples_timed", p.samples_timed},
                           {"sample_p50_ms", opt(p.sample_p50_ms)}, {"sample_p99_ms", opt(p.sample_p99_ms)},
                           {"sample_max_ms", opt(p.sample_max_ms)}, {"costliest", files},
                           {"deep_prefetch_step_ms", opt(p.deep_prefetch_ms)},
                           {"out_of_order_step_ms", opt(p.out_of_order_ms)}});
  }
  j["fixes"] = nlohmann::json::array();
  for (const auto& f : t.fixes)
    j["fixes"].push_back({{"label", f.label}, {"variant", f.variant}, {"workers", f.workers}, {"case", f.case_name},
                          {"step_ms", f.step_ms}, {"step_ms_ci", opt(f.step_ms_ci)},
                          {"predicted_step_ms", opt(f.predicted_ms)}, {"prediction_error_pct", opt(f.error_pct)},
                          {"within_interval", f.within_interval()},
                          {"checkable", f.half_width_pct() && *f.half_width_pct() <= kCheckTolerancePct},
                          {"today_step_ms", opt(f.today_step_ms)},
                          {"prefetch_depth", f.prefetch_depth}, {"host_mib", opt(f.host_mib)}, {"note", f.note}});
  j["pixel_fixes"] = nlohmann::json::array();
  for (const auto& e : t.pixel_fixes)
    j["pixel_fixes"].push_back({{"label", e.label}, {"workers", e.workers}, {"case", e.case_name},
                                {"step_ms", e.step_ms}, {"step_p99_ms", opt(e.step_p99_ms)},
                                {"today_step_ms", e.today_step_ms}, {"today_step_p99_ms", opt(e.today_p99_ms)},
                                {"predicted_step_ms", opt(e.predicted_ms)}, {"prediction_error_pct", opt(e.error_pct)},
                                {"measured_cost_pct", opt(e.measured_cost_pct)}});
  return j;
}

}  // namespace pipebench::report
