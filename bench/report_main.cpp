// pipebench-report RUN.json [--json]: reads a pipebench run (Google Benchmark JSON) and
// prints the verdict: for each worker count, data- or compute-bound, accelerator
// utilisation (AU), stall share, predicted vs measured step time; the smallest worker
// count that is compute-bound (or the predicted one); the stage with the largest share of
// per-sample time and what a faster variant measured in the same run would save; and the
// two findings of the design notes (sequential vs parallel loading; the case study's
// dilation). Repetitions are averaged. Bad input: one line on stderr, exit code 2.
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "pipeline/bound.h"

namespace {

using nlohmann::json;
using pipebench::Alternative;
using pipebench::StageCost;
using pipebench::SweepPoint;
using pipebench::Verdict;

struct Case {
  std::map<std::string, double> values;  // mean of every numeric field over repetitions
  int runs = 0;
};

class ReportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Mean of every numeric field per run_name over the iteration rows (errored rows dropped).
std::map<std::string, Case> load_cases(const json& doc) {
  std::map<std::string, Case> cases;
  for (const auto& row : doc.at("benchmarks")) {
    if (row.value("run_type", "iteration") != "iteration") continue;
    if (row.value("error_occurred", false)) continue;
    const std::string name = row.value("run_name", row.value("name", ""));
    Case& c = cases[name];
    ++c.runs;
    for (const auto& [k, v] : row.items())
      if (v.is_number()) c.values[k] += v.get<double>();
  }
  for (auto& [name, c] : cases)
    for (auto& [k, v] : c.values) v /= c.runs;
  return cases;
}

std::optional<double> get(const std::map<std::string, Case>& cases, const std::string& name,
                          const std::string& field) {
  auto it = cases.find(name);
  if (it == cases.end()) return std::nullopt;
  auto f = it->second.values.find(field);
  if (f == it->second.values.end()) return std::nullopt;
  return f->second;
}

/// ms per image from a case's items_per_second.
std::optional<double> ms_per_item(const std::map<std::string, Case>& cases, const std::string& name) {
  auto ips = get(cases, name, "items_per_second");
  if (!ips || *ips <= 0) return std::nullopt;
  return 1000.0 / *ips;
}

std::string ctx(const json& doc, const char* key, const std::string& fallback = "") {
  if (doc.contains("context") && doc["context"].contains(key) && doc["context"][key].is_string())
    return doc["context"][key].get<std::string>();
  return fallback;
}

struct Report {
  Verdict verdict;
  std::string recipe, baseline, dataset;
  int batch = 0;
  // Sequential vs parallel loading (BM_Loader at w = 1 and at the most workers <= cores).
  std::optional<double> loader_w1_ips, loader_wn_ips;
  int loader_wn = 0;
  int cores = 0;  // hardware threads of the machine that ran it (0 = unknown)
  // The case study's dilation.
  std::optional<double> mask_conv_ms, mask_shifts_ms, casestudy_ms, casestudy_shifts_ms;
};

Report build(const json& doc) {
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw ReportError("not a Google Benchmark JSON file (no \"benchmarks\" array)");
  const auto cases = load_cases(doc);
  Report r;
  r.recipe = ctx(doc, "recipe", "imagenet_train");
  r.baseline = ctx(doc, "baseline", "emulated");
  r.dataset = ctx(doc, "dataset", "?");
  r.batch = std::stoi(ctx(doc, "batch_size", "64"));
  const int cores = std::stoi(ctx(doc, "hardware_threads", "0"));
  r.cores = cores;

  std::vector<SweepPoint> sweep;
  const std::regex e2e("BM_EndToEnd/" + r.recipe + "/[a-z]+/workers:([0-9]+)(/.*)?");
  const std::regex loader("BM_Loader/" + r.recipe + "/workers:([0-9]+)(/.*)?");
  std::map<int, std::string> loaders;
  for (const auto& [name, c] : cases) {
    std::smatch m;
    if (std::regex_match(name, m, e2e)) {
      const auto& v = c.values;
      auto at = [&](const char* k) {
        auto it = v.find(k);
        if (it == v.end()) throw ReportError(name + " has no counter " + k);
        return it->second;
      };
      SweepPoint p;
      p.workers = std::stoi(m[1]);
      p.bound = pipebench::compute_bound(at("data_ms"), at("compute_ms"), at("step_ms"));
      p.images_per_second = at("items_per_second");
      sweep.push_back(p);
    } else if (std::regex_match(name, m, loader)) {
      loaders[std::stoi(m[1])] = name;
    }
  }
  if (sweep.empty() && loaders.empty())
    throw ReportError("no BM_EndToEnd/" + r.recipe + " or BM_Loader/" + r.recipe +
                      " case in the run: run pipebench without a filter that drops them");

  // Per-sample cost of one worker: BM_Sample of the recipe, else the loader at w = 1.
  double per_sample_ms = ms_per_item(cases, "BM_Sample/" + r.recipe).value_or(0);
  if (per_sample_ms == 0 && loaders.count(1))
    per_sample_ms = ms_per_item(cases, loaders[1]).value_or(0);

  std::vector<StageCost> stages;
  if (!loaders.empty()) {
    const std::string& first = loaders.begin()->second;
    for (const char* s : {"read", "decode", "transform", "collate", "h2d"}) {
      auto v = get(cases, first, std::string(s) + "_ms");
      if (v && *v > 0) stages.push_back({s, *v});
    }
    r.loader_w1_ips = get(cases, loaders.begin()->second, "items_per_second");
    for (const auto& [w, name] : loaders) {
      if (w > 1 && (cores == 0 || w <= cores)) {
        r.loader_wn = w;
        r.loader_wn_ips = get(cases, name, "items_per_second");
      }
    }
  }

  // Faster variants measured in the same run.
  std::vector<Alternative> alts;
  auto add_alt = [&](const std::string& stage, const std::string& base, const std::string& var) {
    auto b = ms_per_item(cases, base), v = ms_per_item(cases, var);
    if (b && v) alts.push_back({stage, base, var, *b, *v});
  };
  if (r.recipe == "imagenet_train") {
    add_alt("decode", "BM_Sample/imagenet_train", "BM_Sample/imagenet_train_roi");
  }
  if (r.recipe == "casestudy") add_alt("transform", "BM_Sample/casestudy", "BM_Sample/casestudy_shifts");
  r.verdict = pipebench::make_verdict(sweep, per_sample_ms, r.batch, stages, alts);

  r.mask_conv_ms = ms_per_item(cases, "BM_Transform/random_mask/dilation:conv");
  r.mask_shifts_ms = ms_per_item(cases, "BM_Transform/random_mask/dilation:shifts");
  r.casestudy_ms = ms_per_item(cases, "BM_Sample/casestudy");
  r.casestudy_shifts_ms = ms_per_item(cases, "BM_Sample/casestudy_shifts");
  return r;
}

void print_text(const Report& r) {
  const auto& v = r.verdict;
  std::printf("pipebench verdict: recipe %s, baseline %s, batch %d, dataset %s\n\n",
              r.recipe.c_str(), r.baseline.c_str(), r.batch, r.dataset.c_str());
  if (!v.sweep.empty()) {
    std::printf("%8s %10s %11s %9s %9s %9s %7s %8s %10s  %s\n", "workers", "images/s", "data ms",
                "compute", "bound ms", "step ms", "AU %", "stall %", "pred err %", "regime");
    for (const auto& p : v.sweep) {
      const auto& b = p.bound;
      std::printf("%8d %10.0f %11.2f %9.2f %9.2f %9.2f %7.1f %8.1f %+10.1f  %s\n", p.workers,
                  p.images_per_second, b.data_ms, b.compute_ms, b.bound_ms, b.step_ms, b.au_pct,
                  b.stall_pct, b.prediction_error_pct,
                  b.data_bound() ? "data-bound" : "compute-bound");
    }
    std::printf("(times in ms per batch; bound = max(data, compute); AU = compute / step)\n\n");
    if (v.first_compute_bound) {
      std::printf("Workers: %d is the smallest swept worker count that keeps the accelerator busy "
                  "(compute-bound).\n", *v.first_compute_bound);
    } else if (v.predicted_workers) {
      std::printf("Workers: data-bound at every swept count. Predicted to be compute-bound at "
                  "%d workers = ceil(%.3f ms/sample x %d / (%.2f ms x %.2f scaling efficiency)).\n",
                  *v.predicted_workers, v.per_sample_ms, r.batch, v.sweep.front().bound.compute_ms,
                  v.scaling_efficiency);
      if (r.cores > 0 && *v.predicted_workers > r.cores)
        std::printf("         That is more workers than this machine's %d hardware threads: add "
                    "cores, or make each sample cheaper (below).\n", r.cores);
    }
    for (const auto& p : v.sweep) {
      const auto& b = p.bound;
      if (std::abs(b.data_ms - b.compute_ms) < 0.1 * b.bound_ms) {
        std::printf("Note: at %d workers data and compute are within 10 %% of each other: the "
                    "regime there can flip with load, and the bound is least certain (a late "
                    "batch stalls the step).\n", p.workers);
      }
    }
  }
  if (!v.stages.empty()) {
    double total = 0;
    for (const auto& s : v.stages) total += s.ms_per_sample;
    std::printf("\nPer-sample time by stage (loader, fewest workers):\n");
    for (const auto& s : v.stages)
      std::printf("  %-10s %8.3f ms  %5.1f %%\n", s.stage.c_str(), s.ms_per_sample,
                  100 * s.ms_per_sample / total);
    std::printf("Fix first: %s (%.0f %% of per-sample time).\n", v.stages.front().stage.c_str(),
                100 * v.stages.front().ms_per_sample / total);
  }
  if (v.best_alternative) {
    const auto& a = *v.best_alternative;
    std::printf("Faster variant measured in this run: %s at %.3f ms/sample vs %s at %.3f ms/sample: "
                "saves %.3f ms per sample (%.0f %%), %.1f ms per batch of %d.\n",
                a.variant.c_str(), a.variant_ms, a.baseline.c_str(), a.baseline_ms, a.saving_ms(),
                100 * a.saving_ms() / a.baseline_ms, a.saving_ms() * r.batch, r.batch);
  }
  if (r.loader_w1_ips && r.loader_wn_ips) {
    std::printf("\nSequential vs parallel loading (FastAI.jl): 1 worker %.0f images/s, %d workers "
                "%.0f images/s (%.2fx).\n", *r.loader_w1_ips, r.loader_wn, *r.loader_wn_ips,
                *r.loader_wn_ips / *r.loader_w1_ips);
  }
  if (r.mask_conv_ms && r.mask_shifts_ms) {
    std::printf("Case study (PyTorch profiler): RandomMask with dilation by convolution %.3f ms, by "
                "boolean shifts %.3f ms (%.1fx faster)", *r.mask_conv_ms, *r.mask_shifts_ms,
                *r.mask_conv_ms / *r.mask_shifts_ms);
    if (r.casestudy_ms && r.casestudy_shifts_ms) {
      std::printf("; the casestudy sample %.3f -> %.3f ms (%.0f %% less); the convolution mask is "
                  "%.0f %% of the original sample", *r.casestudy_ms, *r.casestudy_shifts_ms,
                  100 * (1 - *r.casestudy_shifts_ms / *r.casestudy_ms),
                  100 * *r.mask_conv_ms / *r.casestudy_ms);
    }
    std::printf(".\n");
  }
}

json to_json(const Report& r) {
  const auto& v = r.verdict;
  json j = {{"recipe", r.recipe}, {"baseline", r.baseline}, {"batch_size", r.batch},
            {"per_sample_ms", v.per_sample_ms}, {"scaling_efficiency", v.scaling_efficiency}};
  j["sweep"] = json::array();
  for (const auto& p : v.sweep) {
    const auto& b = p.bound;
    j["sweep"].push_back({{"workers", p.workers}, {"images_per_second", p.images_per_second},
                          {"data_ms", b.data_ms}, {"compute_ms", b.compute_ms},
                          {"bound_ms", b.bound_ms}, {"step_ms", b.step_ms}, {"au_pct", b.au_pct},
                          {"stall_pct", b.stall_pct},
                          {"prediction_error_pct", b.prediction_error_pct},
                          {"regime", b.data_bound() ? "data-bound" : "compute-bound"}});
  }
  j["first_compute_bound_workers"] = v.first_compute_bound ? json(*v.first_compute_bound) : json();
  j["predicted_workers"] = v.predicted_workers ? json(*v.predicted_workers) : json();
  j["stages"] = json::array();
  for (const auto& s : v.stages) j["stages"].push_back({{"stage", s.stage}, {"ms_per_sample", s.ms_per_sample}});
  j["fix_first"] = v.stages.empty() ? json() : json(v.stages.front().stage);
  if (v.best_alternative) {
    const auto& a = *v.best_alternative;
    j["best_alternative"] = {{"stage", a.stage}, {"baseline", a.baseline}, {"variant", a.variant},
                             {"baseline_ms", a.baseline_ms}, {"variant_ms", a.variant_ms},
                             {"saving_ms_per_sample", a.saving_ms()}};
  }
  if (r.loader_w1_ips && r.loader_wn_ips)
    j["sequential_vs_parallel"] = {{"workers", r.loader_wn}, {"w1_images_per_second", *r.loader_w1_ips},
                                   {"wn_images_per_second", *r.loader_wn_ips}};
  if (r.mask_conv_ms && r.mask_shifts_ms)
    j["casestudy_dilation"] = {{"mask_conv_ms", *r.mask_conv_ms}, {"mask_shifts_ms", *r.mask_shifts_ms},
                               {"sample_ms", r.casestudy_ms ? json(*r.casestudy_ms) : json()},
                               {"sample_shifts_ms", r.casestudy_shifts_ms ? json(*r.casestudy_shifts_ms) : json()}};
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pipebench-report: the data-bound / compute-bound verdict of a pipebench run"};
  std::string path;
  bool as_json = false;
  app.add_option("run", path, "pipebench JSON (--benchmark_out=run.json --benchmark_out_format=json)")
      ->required();
  app.add_flag("--json", as_json, "print the verdict as JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "pipebench-report: error: %s\n", e.what());
    return 2;
  }
  try {
    std::ifstream in(path);
    if (!in) throw ReportError("cannot open the file");
    json doc;
    try {
      doc = json::parse(in);
    } catch (const json::exception& e) {
      throw ReportError(std::string("not valid JSON: ") + e.what());
    }
    Report r = build(doc);
    if (as_json) {
      std::cout << to_json(r).dump(2) << "\n";
    } else {
      print_text(r);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipebench-report: error: %s: %s\n", path.c_str(), e.what());
    return 2;
  }
  return 0;
}
