#include "report/tails.h"

#include <algorithm>
#include <cmath>

#include "model/counters.h"
#include "report/appendf.h"

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

// The tail fixes the model priced for a point that stalls (predicted stall >= 1 %).
void append_tail_fixes(std::string& out, const TailPoint& p) {
  if (!p.pred_stall_pct || *p.pred_stall_pct < 1 || (!p.deep_prefetch_ms && !p.out_of_order_ms)) return;
  appendf(out, "  Tail fixes at %d worker%s, priced by the step model (not run): now %.2f ms", p.workers,
          p.workers == 1 ? "" : "s", p.pred_step_ms);
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
  for (const auto& p : t.points) append_tail_fixes(out, p);
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
  return j;
}

}  // namespace pipebench::report
