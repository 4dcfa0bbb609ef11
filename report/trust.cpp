#include "report/trust.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
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
  auto data = run.value(name, "data_ms");
  if (!data) return std::nullopt;
  std::vector<std::pair<double, std::string>> costs;
  if (auto own = run.value(name, "sample_cpu_ms"); own && *own > 0)
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
    const double data = *run.value(name, "data_ms");
    const double parallel = cores > 0 ? std::min<double>(w, cores) : w;
    char buf[700];
    std::snprintf(buf, sizeof buf,
                  "%s: data %.2f ms per batch is %.0f %% below the physical floor %.2f ms = %.3f "
                  "ms CPU per sample (%s) x %d / %.1f (min(workers, cores)): faster than its "
                  "cores can produce; the prefetched backlog may count as speed, or the "
                  "per-sample cost was measured on other images.",
                  name.c_str(), data, 100 * (1 - data / f->floor_ms),
                  f->floor_ms, f->cpu_ms, f->source.c_str(), batch, parallel);
    t.warnings.push_back({TrustWarning::Kind::kPhysicalFloor, name, buf});
  }
}

void contention(const BenchRun& run, const std::map<int, std::string>& cases, double cores, Trust& t) {
  if (cores <= 0) return;
  std::optional<std::pair<int, double>> base;  // fewest workers with sample_cpu_ms
  for (const auto& [w, name] : cases) {
    if (w > cores + kEps) break;
    auto cpu = run.value(name, "sample_cpu_ms");
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
    t.warnings.push_back({TrustWarning::Kind::kContention, name, buf});
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
  const auto busy = run.value(name, "cpu_busy_cores_mean");
  if (!busy || *busy < kSaturatedPct / 100 * cores) return;
  const auto data = run.value(name, "data_ms"), compute = run.value(name, "compute_ms");
  const bool data_bound = data && (!compute || *data > *compute);
  bool no_gain = false;
  if (cases.size() > 1) {
    const auto& below = std::next(cases.rbegin())->second;
    const auto d0 = run.value(below, "data_ms");
    no_gain = d0 && data && *data >= *d0 * 0.98;
  }
  if (!data_bound && !no_gain) return;
  char buf[600];
  std::snprintf(buf, sizeof buf,
                "%s: %d worker%s kept %.2f of %.0f cores busy (all processes, mean): adding "
                "workers cannot help on this machine; a cheaper pipeline or more cores can.",
                name.c_str(), w, w == 1 ? "" : "s", *busy, cores);
  t.warnings.push_back({TrustWarning::Kind::kSaturatedCores, name, buf});
}

void warm_run(const BenchRun& run, const std::map<int, std::string>& loaders, Trust& t) {
  if (loaders.empty()) return;
  for (const auto& [w, name] : loaders) {
    const auto read = run.value(name, "process_read_mib_per_s");
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
    const auto data = run.value(name, "data_ms"), compute = run.value(name, "compute_ms");
    // Compute-bound with room to spare: a drift of that size cannot have moved the bound.
    const auto matters = [&](double drift) {
      return std::abs(drift) > kDriftPct &&
             !(data && compute && *data * (1 + std::abs(drift) / 100) < *compute);
    };
    const std::string c = name;
    char buf[600];
    if (const auto drift = run.value(name, "data_drift_pct"); drift && matters(*drift)) {
      std::snprintf(buf, sizeof buf,
                    "%s: its loader, measured alone before and after the loop, was %.1f %% %s "
                    "after: the machine's speed changed during the case, so its data_ms (the "
                    "mean of both) and its prediction error mix the model with that change; "
                    "rerun before acting on it.",
                    c.c_str(), std::abs(*drift), *drift > 0 ? "slower" : "faster");
      t.warnings.push_back({TrustWarning::Kind::kDrift, c, buf});
    }
    if (const auto drift = run.value(name, "loop_cpu_drift_pct"); drift && matters(*drift)) {
      std::snprintf(buf, sizeof buf,
                    "%s: its workers spent %.1f %% %s CPU per sample in the loop than with the "
                    "loader alone: the loop ran on a %s machine than the data time it is "
                    "predicted from, so its prediction error is mostly that; rerun before "
                    "acting on it.",
                    c.c_str(), std::abs(*drift), *drift > 0 ? "more" : "less",
                    *drift > 0 ? "slower or more contended" : "faster");
      t.warnings.push_back({TrustWarning::Kind::kLoopCpu, c, buf});
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
    auto cv = run.aggregate(name, "cv", "real_time");
    if (cv) t.cv.push_back({name, 100 * *cv});
  }
}

}  // namespace

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
