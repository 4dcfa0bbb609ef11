#include "report/report.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "model/catalogue.h"

namespace pipebench::report {
namespace {

// An integer context value (model/record.h's typed context); `fallback` when absent.
int context_int(const BenchRun& run, const std::string& key, int fallback) {
  if (!run.context.count(key)) return fallback;
  const auto v = run.number(key);
  if (!v || std::floor(*v) != *v || std::fabs(*v) > 1e9)
    throw ReportError("context " + key + " must be an integer, got '" + run.context_or(key, "") + "'");
  return static_cast<int>(*v);
}

// The cores the run could use: cores_available, else the hardware threads.
double context_cores(const BenchRun& run, int hardware_threads) {
  if (!run.context.count("cores_available")) return hardware_threads;
  const auto v = run.number("cores_available");
  if (!v || *v <= 0)
    throw ReportError("context cores_available must be a number > 0, got '" +
                      run.context_or("cores_available", "") + "'");
  return *v;
}

double required_counter(const std::string& name, const CaseMeans& c, CounterId id) {
  const auto v = c.get(id);
  if (!v) throw ReportError(name + " has no counter " + std::string(model::counter_name(id)));
  return *v;
}

struct Cases {
  std::vector<SweepPoint> sweep;
  double images_per_batch = 0;  // the fewest delivered per batch over the sweep; 0 unknown
  std::map<int, double> worker_wait_ms;
  std::map<int, double> step_p99_ms;
  std::map<int, int> batches;
  SweepCases names;  // workers -> case name, per family
};

// The BM_EndToEnd sweep of `recipe` (whatever its baseline) and its BM_Loader cases: the
// plain cases (no candidate, no callbacks, not the storage study).
Cases find_sweep(const BenchRun& run, const std::string& recipe) {
  Cases out;
  const auto plain_of = [&](model::Family f) {
    return run.where([&](const model::CaseKey& k) { return k.family == f && k.pipeline == recipe && k.plain(); });
  };
  for (const CaseMeans* c : plain_of(model::Family::kEndToEnd)) {
    const std::string name = c->key.name();
    SweepPoint p;
    p.workers = c->key.workers;
    try {
      // The prediction bench wrote (bound_ms: the step model's), else its closed form.
      const double data = required_counter(name, *c, CounterId::kDataMs), compute = required_counter(name, *c, CounterId::kComputeMs),
                   step = required_counter(name, *c, CounterId::kStepMs);
      const auto predicted = c->get(CounterId::kBoundMs);
      p.bound = predicted ? compute_bound(data, compute, step, *predicted) : compute_bound(data, compute, step);
    } catch (const std::invalid_argument& e) {
      throw ReportError(name + ": " + e.what());
    }
    // From the step time and the images a batch held as delivered (images_per_batch: short
    // batches), so that images/s and step ms agree by construction; runs older than that
    // counter: the configured batch_size, or their items_per_second.
    if (auto d = c->get(CounterId::kImagesPerBatch); d && *d > 0 && p.bound.step_ms > 0) {
      p.images_per_second = *d * 1000.0 / p.bound.step_ms;
      out.images_per_batch = out.images_per_batch > 0 ? std::min(out.images_per_batch, *d) : *d;
    } else if (auto b = c->get(CounterId::kBatchSize); b && p.bound.step_ms > 0) {
      p.images_per_second = *b * 1000.0 / p.bound.step_ms;
    } else {
      p.images_per_second = required_counter(name, *c, CounterId::kItemsPerSecond);
    }
    p.step_ms_ci = c->get(CounterId::kStepMsCi);
    out.sweep.push_back(p);
    out.names.end_to_end[p.workers] = name;
    if (auto w = c->get(CounterId::kWorkerWaitMs)) out.worker_wait_ms[p.workers] = std::max(0.0, *w);
    if (auto q = c->get(CounterId::kStepP99Ms)) out.step_p99_ms[p.workers] = *q;
    if (auto n = c->get(CounterId::kIterations)) out.batches[p.workers] = static_cast<int>(std::lround(*n));
  }
  std::sort(out.sweep.begin(), out.sweep.end(),
            [](const SweepPoint& a, const SweepPoint& b) { return a.workers < b.workers; });
  for (const CaseMeans* c : plain_of(model::Family::kLoader)) out.names.loaders[c->key.workers] = c->key.name();
  return out;
}

std::vector<StageCost> stage_costs(const BenchRun& run, const std::string& loader_case) {
  std::vector<StageCost> stages;
  for (size_t i = 0; i < std::size(model::kStageNames); ++i) {
    auto v = run.value(loader_case, model::stage_counter(i));
    if (v && *v > 0) stages.push_back({std::string(model::kStageNames[i]), *v});
  }
  return stages;
}

// The variants the run's spec declares (its pipeline_variants); none in a file written
// before the run record, whose pipeline_spec this report does not parse.
std::vector<Alternative> declared_alternatives(const BenchRun& run, Report& r) {
  for (const auto& [recipe, fixes] : run.declared_variants) r.declared_variants.push_back({recipe, fixes});
  if (run.record_version == 0 && r.declared_variants.empty() && !run.context_or("pipeline_spec", "").empty())
    r.spec_note = "the run was written before the run record (no pipeline_variants): re-run it "
                  "with this pipebench to compare its declared variants";
  return measured_variants(run, r.recipe, r.declared_variants);
}

void sequential_vs_parallel(const BenchRun& run, const std::map<int, std::string>& loaders, Report& r) {
  if (loaders.empty()) return;
  r.loader_w1_ips = run.value(loaders.begin()->second, CounterId::kItemsPerSecond);
  for (const auto& [w, name] : loaders) {
    if (w > 1 && fits_in_cores(w, r.cores_available)) {
      r.loader_wn = w;
      r.loader_wn_ips = run.value(name, CounterId::kItemsPerSecond);
    }
  }
}

}  // namespace

bool Report::data_bound() const {
  if (regions_only) return regions.data_bound();
  return !verdict.sweep.empty() && !verdict.first_compute_bound;
}

std::optional<std::string> Report::fix_first() const {
  if (!data_bound() || verdict.stages.empty()) return std::nullopt;
  return verdict.stages.front().stage;
}

std::vector<Alternative> measured_variants(const BenchRun& run, const std::string& name,
                                           const std::vector<DeclaredVariant>& variants) {
  std::vector<Alternative> alts;
  const std::string base = model::sample_case(name).name();
  const auto base_ms = run.ms_per_item(base);
  if (!base_ms) return alts;
  for (const auto& v : variants) {
    // Paired with today (BM_Sample/<pipeline>/variant:<recipe>): its saving with its
    // interval; one within noise is no faster variant.
    model::CaseKey pair = model::sample_case(name);
    pair.variant = "variant";
    pair.variant_param = v.recipe;
    const auto saving = run.value(pair.name(), CounterId::kPairedSavingMs);
    const auto ci = run.value(pair.name(), CounterId::kPairedSavingCiMs);
    if (saving && ci) {
      if (std::abs(*saving) <= *ci) continue;
      Alternative a{v.fixes, base, pair.name(), *base_ms, *base_ms - *saving};
      a.saving_ci_ms = *ci;
      alts.push_back(a);
      continue;
    }
    const std::string variant = model::sample_case(v.recipe).name();
    if (auto ms = run.ms_per_item(variant)) alts.push_back({v.fixes, base, variant, *base_ms, *ms});
  }
  return alts;
}

Report build_report(const BenchRun& run) {
  Report r;
  r.recipe = run.context_or("recipe", "imagenet_train");
  r.baseline = run.context_or("baseline", "emulated");
  r.dataset = run.context_or("dataset", "?");
  r.batch = context_int(run, "batch_size", 64);
  r.cores_available = context_cores(run, context_int(run, "hardware_threads", 0));

  r.regions = region_profile(run);
  Cases cases = find_sweep(run, r.recipe);
  const auto& loaders = cases.names.loaders;
  if (cases.sweep.empty() && loaders.empty() && !r.regions.empty()) {
    r.regions_only = true;  // a user's loop timed with RegionTimer: its profile is the report
    if (!run.context.count("batch_size")) r.batch = 0;  // unknown: no images/s
    return r;
  }
  if (cases.sweep.empty() && loaders.empty())
    throw ReportError("no BM_EndToEnd/" + r.recipe + " or BM_Loader/" + r.recipe +
                      " case (nor RegionTimer rows) in the run: run pipebench without a filter that drops them");
  if (r.batch < 1)  // every figure per batch divides by it (model/bound.h throws on it)
    throw ReportError("context batch_size must be >= 1, got " + std::to_string(r.batch));
  r.worker_wait_ms = std::move(cases.worker_wait_ms);
  r.step_p99_ms = std::move(cases.step_p99_ms);
  r.sweep_batches = std::move(cases.batches);
  r.budget_s = run.number("budget_s");
  // Short batches: every per-batch figure below (the what-if model, the physical floor)
  // uses the images a batch held as delivered, not the configured batch.
  if (cases.images_per_batch > 0 && cases.images_per_batch < r.batch - 1e-9) {
    r.images_per_batch = cases.images_per_batch;
    r.batch = std::max(1, static_cast<int>(std::lround(cases.images_per_batch)));
  }

  // Per-sample cost of one worker: BM_Sample of the recipe, else the loader at w = 1.
  double per_sample_ms = run.ms_per_item(model::sample_case(r.recipe)).value_or(0);
  if (per_sample_ms == 0 && loaders.count(1))
    per_sample_ms = run.ms_per_item(loaders.at(1)).value_or(0);

  std::vector<StageCost> stages;
  if (!loaders.empty()) stages = stage_costs(run, loaders.begin()->second);
  sequential_vs_parallel(run, loaders, r);

  const WhatIfInputs inputs =
      what_if_inputs(run, r.recipe, r.batch, r.cores_available, cases.sweep, loaders);
  r.what_if = build_what_if(inputs);
  r.trust = check_trust(run, cases.names, r.batch, r.cores_available, inputs.today);
  r.extras = training_extras(run, r.recipe);
  r.tails = sweep_tails(run, cases.names.end_to_end);
  r.sampler = sampler_cost(run, r.recipe);
  r.ranks = rank_figures(run);

  r.alternatives = declared_alternatives(run, r);
  r.verdict = make_verdict(std::move(cases.sweep), per_sample_ms, r.batch, std::move(stages),
                           r.alternatives);

  // The step per batch for the storage split: the sweep's compute_ms (the same at every
  // count), else the context's.
  std::optional<double> compute_ms;
  if (!r.verdict.sweep.empty()) compute_ms = r.verdict.sweep.front().bound.compute_ms;
  r.storage = storage_split(run, r.recipe, compute_ms);
  add_storage_rows(r.what_if, r.storage);

  r.mask_conv_ms = run.ms_per_item(model::transform_case("random_mask", "dilation:conv"));
  r.mask_shifts_ms = run.ms_per_item(model::transform_case("random_mask", "dilation:shifts"));
  r.casestudy_ms = run.ms_per_item(model::sample_case("casestudy"));
  r.casestudy_shifts_ms = run.ms_per_item(model::sample_case("casestudy_shifts"));
  model::CaseKey pair = model::sample_case("casestudy");
  pair.variant = "pair";
  pair.variant_param = "casestudy_shifts";
  r.casestudy_saving_ms = run.value(pair.name(), CounterId::kPairedSavingMs);
  r.casestudy_saving_ci_ms = run.value(pair.name(), CounterId::kPairedSavingCiMs);
  return r;
}

}  // namespace pipebench::report
