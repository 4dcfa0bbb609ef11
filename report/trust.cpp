#include "report/trust.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <utility>

namespace pipebench::report {
namespace {

constexpr double kEps = 1e-9;

// The highest per-sample floor that `data_ms` breaks, with where its cost comes from.
struct Floor {
  double floor_ms = 0, cpu_ms = 0;
  std::string source;
};

std::optional<Floor> broken_floor(const BenchRun& run, const std::string& name, int workers,
                                  int batch, double cores, const std::optional<SampleCost>& sample) {
  auto data = run.value(name, CounterId::kDataMs);
  if (!data) return std::nullopt;
  std::vector<std::pair<double, std::string>> costs;
  // An end-to-end case's data_ms is the loader alone, around the loop: its floor comes from
  // those windows' CPU per sample (alone_sample_cpu_ms), not the loop's sample_cpu_ms,
  // which contention with the loop raises (older runs: sample_cpu_ms).
  if (auto alone = run.value(name, CounterId::kAloneSampleCpuMs); alone && *alone > 0)
    costs.emplace_back(*alone, "its loader-alone windows' alone_sample_cpu_ms");
  else if (auto own = run.value(name, CounterId::kSampleCpuMs); own && *own > 0)
    costs.emplace_back(*own, "its workers' sample_cpu_ms");
  if (sample) costs.emplace_back(sample->cpu_ms, sample->case_name);
  std::optional<Floor> worst;
  for (const auto& [cpu_ms, source] : costs) {
    const double floor_ms = predicted_data_ms(cpu_ms, batch, workers, cores);
    if (*data >= floor_ms * (1 - kFloorTolerancePct / 100)) continue;
    if (!worst || floor_ms > worst->floor_ms) worst = Floor{floor_ms, cpu_ms, source};
  }
  return worst;
}

void physical_floor(const BenchRun& run, const std::map<int, std::string>& cases, int batch,
                    double cores, const std::optional<SampleCost>& sample, Trust& t) {
  for (const auto& [w, name] : cases) {
    auto f = broken_floor(run, name, w, batch, cores, sample);
    if (!f) continue;
    const double data = *run.value(name, CounterId::kDataMs);
    const double parallel = cores > 0 ? std::min<double>(w, cores) : w;
    char buf[700];
    std::snprintf(buf, sizeof buf,
                  "%s: data %.2f ms per batch is %.0f %% below the physical floor %.2f ms = %.3f "
                  "ms CPU per sample (%s) x %d / %.1f (min(workers, cores)): faster than its "
                  "cores can produce; the prefetched backlog may count as speed, or the "
                  "per-sample cost was measured on other images.",
                  name.c_str(), data, 100 * (1 - data / f->floor_ms),
                  f->floor_ms, f->cpu_ms, f->source.c_str(), batch, parallel);
    t.warnings.push_back({TrustWarning::Kind::kPhysicalFloor, name, buf, 100 * (1 - data / f->floor_ms)});
  }
}

void contention(const BenchRun& run, const std::map<int, std::string>& cases, double cores, Trust& t) {
  if (cores <= 0) return;
  std::optional<std::pair<int, double>> base;  // fewest workers with sample_cpu_ms
  for (const auto& [w, name] : cases) {
    if (w > cores + kEps) break;
    auto cpu = run.value(name, CounterId::kSampleCpuMs);
    if (!cpu || !(*cpu > 0)) continue;
    if (!base) {
      base = std::make_pair(w, *cpu);
      continue;
    }
    const double rise = 100 * (*cpu / base->second - 1);
    if (rise <= kContentionPct) continue;
    char buf[600];
    std::snprintf(buf, sizeof buf,
                  "%s: CPU per sample rises from %.3f ms at %d worker%s to %.3f ms at %d workers "
                  "(+%.0f %%) with no more workers than the %.1f cores: contention (memory "
                  "bandwidth, shared caches, hyperthreads sharing a core, or a busy machine), "
                  "so more workers buy less than the model predicts.",
                  name.c_str(), base->second, base->first,
                  base->first == 1 ? "" : "s", *cpu, w, rise, cores);
    t.warnings.push_back({TrustWarning::Kind::kContention, name, buf, rise});
  }
}

void busy_machine(const BenchRun& run, double cores, Trust& t) {
  if (!run.flag("busy_machine").value_or(false)) return;
  const double others = run.number("other_processes_cpu_cores").value_or(std::nan(""));
  const double load = run.number("load_average_start").value_or(std::nan(""));
  char buf[600];
  std::snprintf(buf, sizeof buf,
                "The machine was busy during the run: other processes used %.2f cores on "
                "average (of %.1f), load average %.2f at the start. Every time here may be "
                "inflated and noisy; rerun on an idle machine before acting on small differences.",
                others, cores, load);
  t.warnings.push_back({TrustWarning::Kind::kBusyMachine, "", buf});
}

// The sweep's largest count: were the machine's cores all busy there?
void saturated_cores(const BenchRun& run, const std::map<int, std::string>& cases, double cores, Trust& t) {
  if (cores <= 0 || cases.empty()) return;
  const auto& [w, name] = *cases.rbegin();
  const auto busy = run.value(name, CounterId::kCpuBusyCoresMean);
  if (!busy || *busy < kSaturatedPct / 100 * cores) return;
  const auto data = run.value(name, CounterId::kDataMs), compute = run.value(name, CounterId::kComputeMs);
  const bool data_bound = data && (!compute || *data > *compute);
  bool no_gain = false;
  if (cases.size() > 1) {
    const auto& below = std::next(cases.rbegin())->second;
    const auto d0 = run.value(below, CounterId::kDataMs);
    no_gain = d0 && data && *data >= *d0 * 0.98;
  }
  if (!data_bound && !no_gain) return;
  char buf[600];
  std::snprintf(buf, sizeof buf,
                "%s: %d worker%s kept %.2f of %.0f cores busy (all processes, mean): adding "
                "workers cannot help on this machine; a cheaper pipeline or more cores can.",
                name.c_str(), w, w == 1 ? "" : "s", *busy, cores);
  t.warnings.push_back({TrustWarning::Kind::kSaturatedCores, name, buf, *busy});
}

void warm_run(const BenchRun& run, const std::map<int, std::string>& loaders, Trust& t) {
  if (loaders.empty()) return;
  for (const auto& [w, name] : loaders) {
    const auto read = run.value(name, CounterId::kProcessReadMibPerS);
    if (!read || *read > 0) return;  // unknown, or some bytes came from storage
  }
  t.warnings.push_back({TrustWarning::Kind::kWarmRun, "",
                        "The loader cases read 0 B/s from storage (/proc/self/io): the dataset "
                        "was in the page cache, so these are warm-run figures; a first epoch "
                        "from disk also waits on reads (compare BM_Read/files/cold with BM_Read/files/warm)."});
}

// Every end-to-end case of the run (the sweep, the fixes' checks, the extras).
void loader_drift(const BenchRun& run, Trust& t) {
  for (const CaseMeans* m : run.where([](const model::CaseKey& k) { return k.family == model::Family::kEndToEnd; })) {
    const std::string name = m->key.name();
    const auto data = run.value(name, CounterId::kDataMs), compute = run.value(name, CounterId::kComputeMs);
    // Compute-bound with room to spare: a drift of that size cannot have moved the bound.
    const auto matters = [&](double drift) {
      return std::abs(drift) > kDriftPct &&
             !(data && compute && *data * (1 + std::abs(drift) / 100) < *compute);
    };
    const std::string c = name;
    char buf[1024];
    // Heterogeneity is not drift: the part of the change that the samples' own work explains
    // (the window after held costlier images: data_work_drift_pct, their CPU per sample) is
    // the dataset, which the step model sees through the cost distribution; only the rest
    // (the same work slower) is the machine.
    // A drift, %, net of the part `work` (%, where measured) explains.
    const auto net_of = [](double drift, std::optional<double> work) {
      return work && *work > -100 ? 100.0 * ((1 + drift / 100) / (1 + *work / 100) - 1) : drift;
    };
    const auto work = run.value(name, CounterId::kDataWorkDriftPct);
    if (const auto drift = run.value(name, CounterId::kDataDriftPct); drift && matters(net_of(*drift, work))) {
      const double d = net_of(*drift, work);
      std::snprintf(buf, sizeof buf,
                    "%s: its loader, measured alone before and after the loop, was %.1f %% %s "
                    "after%s: the machine's speed changed during the case, so its data_ms (the "
                    "mean of both) and its prediction error mix the model with that change; "
                    "rerun before acting on it.",
                    c.c_str(), std::abs(d), d > 0 ? "slower" : "faster",
                    work ? " for the same work per sample (its samples' own CPU accounted for)" : "");
      t.warnings.push_back({TrustWarning::Kind::kDrift, c, buf, d});
    }
    // The same for the loop against the windows alone: the files the loop met, at their own
    // cost alone (loop_work_drift_pct), explain that part of the change.
    const auto loop_work = run.value(name, CounterId::kLoopWorkDriftPct);
    if (const auto raw = run.value(name, CounterId::kLoopCpuDriftPct); raw && matters(net_of(*raw, loop_work))) {
      const double drift = net_of(*raw, loop_work);
      std::snprintf(buf, sizeof buf,
                    "%s: its workers spent %.1f %% %s CPU per sample in the loop than with the "
                    "loader alone%s, so its data_ms (the loader alone's) is not the loop's; the "
                    "step model predicts from the loop's figure. %s",
                    c.c_str(), std::abs(drift), drift > 0 ? "more" : "less",
                    loop_work ? " for the same files (the files it met at their own cost alone accounted for)" : "",
                    drift > 0 ? "Workers that idle between batches (a full prefetch queue) "
                                "resume on colder caches; a busier machine during the loop "
                                "does the same (see the busy-machine check)."
                              : "The machine was faster during the loop.");
      t.warnings.push_back({TrustWarning::Kind::kLoopCpu, c, buf, drift});
    }
  }
}

bool is_stage_case(const model::CaseKey& k) {
  using F = model::Family;
  return k.family == F::kRead || k.family == F::kDecode || k.family == F::kSample || k.family == F::kLoader;
}

void cv_table(const BenchRun& run, Trust& t) {
  t.repetitions = run.count("repetitions");
  for (const auto& [name, stats] : run.aggregates) {
    const auto key = run.keys.find(name);
    if (key == run.keys.end() || !is_stage_case(key->second)) continue;
    auto cv = run.aggregate(name, "cv", CounterId::kRealTime);
    if (cv) t.cv.push_back({name, 100 * *cv});
  }
}

// --- grouping (one line per kind) ---------------------------------------------------------

const char* label(TrustWarning::Kind k) {
  switch (k) {
    case TrustWarning::Kind::kPhysicalFloor: return "Physical floor";
    case TrustWarning::Kind::kContention: return "Contention";
    case TrustWarning::Kind::kBusyMachine: return "Busy machine";
    case TrustWarning::Kind::kSaturatedCores: return "Saturated cores";
    case TrustWarning::Kind::kWarmRun: return "Warm run";
    case TrustWarning::Kind::kDrift: return "Loader drift";
    case TrustWarning::Kind::kLoopCpu: return "Loop CPU drift";
  }
  return "?";
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The range of signed figures, as words: "5.6 to 15.1 % slower", "15.1 % slower in each",
// "from 6.0 % faster to 15.1 % slower". pos / neg: the word for a positive / negative figure.
std::string range_words(double lo, double hi, int digits, const char* pos, const char* neg) {
  const auto one = [&](double v) { return fixed(std::abs(v), digits) + " %"; };
  if (lo < 0 && hi > 0) return "from " + one(lo) + " " + neg + " to " + one(hi) + " " + pos;
  const char* word = hi > 0 ? pos : neg;
  const double a = std::min(std::abs(lo), std::abs(hi)), b = std::max(std::abs(lo), std::abs(hi));
  if (fixed(a, digits) == fixed(b, digits)) return one(b) + " " + word + " in each";
  return fixed(a, digits) + " to " + one(b) + " " + word;
}

// The sentence after "Label (cases): " for a group of two or more warnings of one kind.
std::string group_body(TrustWarning::Kind kind, const std::vector<const TrustWarning*>& ws) {
  const TrustWarning* most = ws.front();
  double lo = ws.front()->figure, hi = lo;
  for (const TrustWarning* w : ws) {
    if (std::abs(w->figure) > std::abs(most->figure)) most = w;
    lo = std::min(lo, w->figure);
    hi = std::max(hi, w->figure);
  }
  const double x = most->figure;
  const std::string across = " across the " + std::to_string(ws.size()) + " cases)";
  const std::string at = " (at " + most->case_name + "; ";
  switch (kind) {
    case TrustWarning::Kind::kPhysicalFloor:
      return "data per batch up to " + fixed(x, 0) + " % below the physical floor, CPU per sample "
             "x batch / min(workers, cores)" + at + range_words(lo, hi, 0, "below", "above") + across +
             ": faster than their cores can produce; the prefetched backlog may count as speed, or "
             "the per-sample cost was measured on other images.";
    case TrustWarning::Kind::kContention:
      return "CPU per sample up to " + fixed(x, 0) + " % higher than at the sweep's fewest workers, "
             "with no more workers than cores" + at + range_words(lo, hi, 0, "higher", "lower") + across +
             ": contention (memory bandwidth, shared caches, hyperthreads sharing a core, or a busy "
             "machine), so more workers buy less than the model predicts.";
    case TrustWarning::Kind::kDrift:
      return "its loader, measured alone before and after the loop, was up to " + fixed(std::abs(x), 1) +
             " % " + (x > 0 ? "slower" : "faster") + " after" + at +
             range_words(lo, hi, 1, "slower", "faster") + across +
             ": the machine's speed changed during these cases, so their data_ms (the mean of both) "
             "and prediction errors mix the model with that change; rerun before acting on them.";
    case TrustWarning::Kind::kLoopCpu:
      return "their workers spent up to " + fixed(std::abs(x), 1) + " % " + (x > 0 ? "more" : "less") +
             " CPU per sample in the loop than with the loader alone" + at +
             range_words(lo, hi, 1, "more", "less") + across + ": the loops ran on a " +
             (x > 0 ? "slower or more contended" : "faster") + " machine than the data time they are "
             "predicted from, so their prediction errors are mostly that; rerun before acting on them.";
    case TrustWarning::Kind::kSaturatedCores:
      return "up to " + fixed(x, 2) + " cores busy (all processes, mean)" + at + fixed(lo, 2) + " to " +
             fixed(hi, 2) + " cores" + across +
             ": adding workers cannot help on this machine; a cheaper pipeline or more cores can.";
    case TrustWarning::Kind::kBusyMachine:
    case TrustWarning::Kind::kWarmRun:
      break;
  }
  return ws.front()->text;  // one run-wide warning: the first says it
}

// The warning's text without its "<case>: " prefix.
std::string body_of(const TrustWarning& w) {
  const std::string prefix = w.case_name + ": ";
  if (!w.case_name.empty() && w.text.compare(0, prefix.size(), prefix) == 0)
    return w.text.substr(prefix.size());
  return w.text;
}

}  // namespace

int consequence_rank(TrustWarning::Kind k) {
  switch (k) {
    case TrustWarning::Kind::kBusyMachine: return 1;
    case TrustWarning::Kind::kDrift: return 2;
    case TrustWarning::Kind::kLoopCpu: return 3;
    case TrustWarning::Kind::kPhysicalFloor: return 4;
    case TrustWarning::Kind::kContention: return 5;
    case TrustWarning::Kind::kSaturatedCores: return 6;
    case TrustWarning::Kind::kWarmRun: return 7;
  }
  return 8;
}

std::vector<TrustGroup> group_warnings(const Trust& t) {
  std::map<int, std::vector<const TrustWarning*>> by_rank;  // ordered: most consequential first
  for (const auto& w : t.warnings) by_rank[consequence_rank(w.kind)].push_back(&w);
  std::vector<TrustGroup> groups;
  for (const auto& [rank, ws] : by_rank) {
    TrustGroup g;
    g.kind = ws.front()->kind;
    g.warnings = ws.size();
    for (const TrustWarning* w : ws)
      if (!w->case_name.empty() && std::find(g.cases.begin(), g.cases.end(), w->case_name) == g.cases.end())
        g.cases.push_back(w->case_name);
    g.text = label(g.kind);
    if (g.cases.size() == 1) {
      g.text += " (" + g.cases.front() + ")";
    } else if (g.cases.size() > 1) {
      g.text += " (" + std::to_string(g.cases.size()) + " cases: ";
      for (size_t i = 0; i < g.cases.size(); ++i) g.text += (i ? ", " : "") + g.cases[i];
      g.text += ")";
    }
    g.text += ": ";
    g.text += ws.size() == 1 ? body_of(*ws.front()) : group_body(g.kind, ws);
    groups.push_back(std::move(g));
  }
  return groups;
}

std::vector<std::string> trust_lines(const Trust& t, bool verbose, size_t max_lines) {
  std::vector<std::string> lines;
  if (verbose) {
    for (const auto& w : t.warnings) lines.push_back("Warning: " + w.text);
    return lines;
  }
  const auto groups = group_warnings(t);
  max_lines = std::max<size_t>(max_lines, 1);
  const size_t shown = groups.size() <= max_lines ? groups.size() : max_lines - 1;
  for (size_t i = 0; i < shown; ++i) lines.push_back("Warning: " + groups[i].text);
  if (shown < groups.size())
    lines.push_back("(" + std::to_string(groups.size() - shown) + " more: pipebench-report --verbose)");
  return lines;
}

const char* kind_name(TrustWarning::Kind k) {
  switch (k) {
    case TrustWarning::Kind::kPhysicalFloor: return "physical_floor";
    case TrustWarning::Kind::kContention: return "contention";
    case TrustWarning::Kind::kBusyMachine: return "busy_machine";
    case TrustWarning::Kind::kSaturatedCores: return "saturated_cores";
    case TrustWarning::Kind::kWarmRun: return "warm_run";
    case TrustWarning::Kind::kDrift: return "loader_drift";
    case TrustWarning::Kind::kLoopCpu: return "loop_cpu_drift";
  }
  return "?";
}

Trust check_trust(const BenchRun& run, const SweepCases& cases, int batch, double cores,
                  const std::optional<SampleCost>& sample) {
  Trust t;
  busy_machine(run, cores, t);
  if (batch > 0) {
    physical_floor(run, cases.loaders, batch, cores, sample, t);
    physical_floor(run, cases.end_to_end, batch, cores, sample, t);
  }
  contention(run, cases.loaders, cores, t);
  contention(run, cases.end_to_end, cores, t);
  saturated_cores(run, cases.end_to_end.empty() ? cases.loaders : cases.end_to_end, cores, t);
  warm_run(run, cases.loaders, t);
  loader_drift(run, t);
  cv_table(run, t);
  return t;
}

}  // namespace pipebench::report
