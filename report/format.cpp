#include "report/format.h"

#include <cmath>

#include "model/catalogue.h"
#include "report/appendf.h"
#include "report/format_whatif.h"

namespace pipebench::report {
namespace {

using nlohmann::json;

const char* regime(const Bound& b) { return b.data_bound() ? "data-bound" : "compute-bound"; }

// The sweep table; the idle column only when the run measured the workers' wait (runs
// from before worker_wait_ms, and synthetic ones, keep their old table).
void sweep_table(std::string& out, const Report& r) {
  const auto& v = r.verdict;
  const bool idle = !r.worker_wait_ms.empty();
  appendf(out, "%8s %10s %11s %9s %9s %9s %7s %8s", "workers", "images/s", "data ms", "compute",
          "bound ms", "step ms", "AU %", "stall %");
  if (idle) appendf(out, " %8s", "idle ms");
  appendf(out, " %10s  %s\n", "pred err %", "regime");
  for (const auto& p : v.sweep) {
    const auto& b = p.bound;
    appendf(out, "%8d %10.0f %11.2f %9.2f %9.2f %9.2f %7.1f %8.1f", p.workers,
            p.images_per_second, b.data_ms, b.compute_ms, b.bound_ms, b.step_ms, b.au_pct,
            b.stall_pct);
    if (idle) {
      auto w = r.worker_wait_ms.find(p.workers);
      if (w != r.worker_wait_ms.end()) appendf(out, " %8.2f", w->second);
      else appendf(out, " %8s", "-");
    }
    appendf(out, " %+10.1f  %s\n", b.prediction_error_pct, regime(b));
  }
  appendf(out, "(times in ms per batch; bound = max(data, compute); AU = compute / step%s)\n",
          idle ? "; idle = all workers' wait per batch" : "");
  if (!r.sweep_batches.empty()) {
    std::string per;
    int fewest = 1 << 30;
    for (const auto& [w, n] : r.sweep_batches) {
      appendf(per, "%s%d workers: %d", per.empty() ? "" : ", ", w, n);
      fewest = std::min(fewest, n);
    }
    appendf(out, "(each row rests on its loop's batches, and as many of the loader alone before and "
            "after it for data ms: %s", per.c_str());
    if (r.budget_s)
      appendf(out, "; the batches that fit --budget=%g s per case%s", *r.budget_s,
              fewest < 10 ? ": few, so a row's figures move by several % between runs; a larger "
                            "--budget buys precision with time" : "");
    appendf(out, ")\n");
  }
  appendf(out, "\n");
}

void workers_verdict(std::string& out, const Report& r) {
  const auto& v = r.verdict;
  const SweepPoint* first = nullptr;
  for (const auto& p : v.sweep)
    if (v.first_compute_bound && p.workers == *v.first_compute_bound) first = &p;
  if (first && first->bound.au_pct >= kAuTargetPct) {
    appendf(out, "Workers: %d is the smallest swept worker count that keeps the accelerator busy "
            "(compute-bound, AU %.1f %%).\n", first->workers, first->bound.au_pct);
  } else if (const auto tail = first ? tail_explains_stall(r.tails, first->workers, first->bound.stall_pct)
                                    : std::nullopt) {
    // Keeping up on average, stalled by the tail: the step model sees it (report/tails.h).
    appendf(out, "Workers: from %d the loader keeps up on average (data %.2f ms < compute %.2f ms per "
            "batch), but the measured loop kept the accelerator busy only %.1f %% of the time (AU "
            "target %.0f %%): %s.\n", first->workers, first->bound.data_ms, first->bound.compute_ms,
            first->bound.au_pct, kAuTargetPct, tail->c_str());
  } else if (first) {
    // Compute-bound by the bound (data < compute) yet the loop measured AU below the target:
    // something else on the loop's path stalls the step (a collective, callbacks, contention).
    appendf(out, "Workers: from %d the loader keeps up (data %.2f ms < compute %.2f ms per batch), "
            "but the measured loop kept the accelerator busy only %.1f %% of the time (AU target "
            "%.0f %%): the step waits on something else (the step's collective, callbacks, a "
            "contended machine); see the stall and the regions below.\n", first->workers,
            first->bound.data_ms, first->bound.compute_ms, first->bound.au_pct, kAuTargetPct);
  } else if (v.predicted_workers) {
    appendf(out, "Workers: data-bound at every swept count. Predicted to reach AU %.0f %% at "
            "%d workers = ceil(%.2f x %.3f ms/sample x %d / (%.2f ms x %.2f scaling efficiency)).\n",
            kAuTargetPct, *v.predicted_workers, kAuTargetPct / 100, v.per_sample_ms, r.batch,
            v.sweep.front().bound.compute_ms, v.scaling_efficiency);
    if (!fits_in_cores(*v.predicted_workers, r.cores_available))
      appendf(out, "         That is more workers than the %.1f cores available to this run: add "
              "cores, or make each sample cheaper (below).\n", r.cores_available);
  }
  for (const auto& p : v.sweep) {
    const auto& b = p.bound;
    if (std::abs(b.data_ms - b.compute_ms) < 0.1 * b.bound_ms) {
      appendf(out, "Note: at %d workers data and compute are within 10 %% of each other: the "
              "regime there can flip with load, and the bound is least certain (a late "
              "batch stalls the step).\n", p.workers);
    }
  }
}

void stage_shares(std::string& out, const Report& r) {
  const auto& v = r.verdict;
  double total = 0;
  for (const auto& s : v.stages) total += s.ms_per_sample;
  appendf(out, "\nPer-sample time by stage (loader, fewest workers):\n");
  for (const auto& s : v.stages)
    appendf(out, "  %-10s %8.3f ms  %5.1f %%\n", s.stage.c_str(), s.ms_per_sample,
            100 * s.ms_per_sample / total);
  if (auto fix = r.fix_first()) {
    appendf(out, "Fix first: %s (%.0f %% of per-sample time).\n", fix->c_str(),
            100 * v.stages.front().ms_per_sample / total);
  } else if (v.first_compute_bound) {
    appendf(out, "No stage to fix first: the loop is compute-bound from %d workers; a cheaper "
            "sample frees CPU there but does not shorten the step.\n", *v.first_compute_bound);
  } else {
    appendf(out, "No stage to fix first: the run has no BM_EndToEnd sweep to tell whether the "
            "loop is data-bound.\n");
  }
}

void findings(std::string& out, const Report& r) {
  if (r.loader_w1_ips && r.loader_wn_ips) {
    appendf(out, "\nSequential vs parallel loading (FastAI.jl): 1 worker %.0f images/s, %d workers "
            "%.0f images/s (%.2fx).\n", *r.loader_w1_ips, r.loader_wn, *r.loader_wn_ips,
            *r.loader_wn_ips / *r.loader_w1_ips);
  }
  if (r.mask_conv_ms && r.mask_shifts_ms) {
    appendf(out, "Case study (PyTorch profiler): RandomMask with dilation by convolution %.3f ms, "
            "by boolean shifts %.3f ms (%.1fx faster)", *r.mask_conv_ms, *r.mask_shifts_ms,
            *r.mask_conv_ms / *r.mask_shifts_ms);
    if (r.casestudy_ms && r.casestudy_saving_ms && r.casestudy_saving_ci_ms) {
      // Paired (BM_Sample/casestudy/pair:casestudy_shifts): the saving with its interval.
      const double s = *r.casestudy_saving_ms, ci = *r.casestudy_saving_ci_ms;
      if (std::abs(s) <= ci)
        appendf(out, "; the casestudy sample with shifts: within noise (%+.3f +-%.3f ms per sample, "
                "95 %%, paired)", s, ci);
      else
        appendf(out, "; the casestudy sample with shifts %s %.3f +-%.3f ms per sample (95 %%, paired; "
                "%.0f %% of %.3f ms)", s > 0 ? "saves" : "costs", std::abs(s), ci,
                100 * std::abs(s) / *r.casestudy_ms, *r.casestudy_ms);
      appendf(out, "; the convolution mask is %.0f %% of the original sample",
              100 * *r.mask_conv_ms / *r.casestudy_ms);
    } else if (r.casestudy_ms && r.casestudy_shifts_ms) {
      // Two unpaired cases (a run from before the pair): no interval, so no sign is claimed.
      appendf(out, "; the casestudy sample %.3f and with shifts %.3f ms (two cases one after the "
              "other, unpaired: a difference this run cannot size against its noise); the "
              "convolution mask is %.0f %% of the original sample", *r.casestudy_ms,
              *r.casestudy_shifts_ms, 100 * *r.mask_conv_ms / *r.casestudy_ms);
    }
    appendf(out, ".\n");
  }
}

json opt(const std::optional<double>& v) { return v ? json(*v) : json(); }
json opt(const std::optional<int>& v) { return v ? json(*v) : json(); }

}  // namespace

std::string format_text(const Report& r) {
  const auto& v = r.verdict;
  std::string out;
  if (r.regions_only) {
    appendf(out, "pipebench verdict: a training loop timed with pipebench::RegionTimer\n");
    append_regions_text(out, r.regions, r.batch);
    return out;
  }
  appendf(out, "pipebench verdict: recipe %s, baseline %s, batch %d, dataset %s\n",
          r.recipe.c_str(), r.baseline.c_str(), r.batch, r.dataset.c_str());
  // The training step the run measured against (the context's baseline, model/record.h):
  // on a GPU machine the default is a real step, the ~1-2 ms MLP, not the 25 ms emulation.
  const model::Baseline* step = model::find_baseline(r.baseline);
  appendf(out, "Training step (--baseline): %s, %s.\n\n", r.baseline.c_str(),
          step ? std::string(step->description).c_str() : "a baseline this pipebench does not know");
  if (r.images_per_batch)
    appendf(out, "Short batches: the loader delivered %.1f images per batch (fewer than the "
            "configured batch: drop_last false or a dataset smaller than a batch); images/s, the "
            "what-if model and the physical floor use that.\n\n", *r.images_per_batch);
  if (!v.sweep.empty()) {
    sweep_table(out, r);
    workers_verdict(out, r);
  }
  if (!v.stages.empty()) stage_shares(out, r);
  if (v.best_alternative) {
    const auto& a = *v.best_alternative;
    if (a.saving_ci_ms)
      appendf(out, "Faster variant measured in this run, paired with today (%s): saves %.3f +-%.3f ms "
              "per sample (95 %%; %.0f %% of %s's %.3f ms), %.1f ms per batch of %d.\n",
              a.variant.c_str(), a.saving_ms(), *a.saving_ci_ms, 100 * a.saving_ms() / a.baseline_ms,
              a.baseline.c_str(), a.baseline_ms, a.saving_ms() * r.batch, r.batch);
    else
      appendf(out, "Faster variant measured in this run: %s at %.3f ms/sample vs %s at %.3f "
              "ms/sample: saves %.3f ms per sample (%.0f %%), %.1f ms per batch of %d (two cases, "
              "unpaired: no interval).\n",
              a.variant.c_str(), a.variant_ms, a.baseline.c_str(), a.baseline_ms, a.saving_ms(),
              100 * a.saving_ms() / a.baseline_ms, a.saving_ms() * r.batch, r.batch);
  }
  if (!r.spec_note.empty())
    appendf(out, "Note: faster variants not compared: %s\n", r.spec_note.c_str());
  append_tails_text(out, r.tails);
  append_what_if_text(out, r);
  append_extras_text(out, r.extras);
  append_storage_text(out, r.storage);
  append_sampler_cost_text(out, r.sampler);
  append_ranks_text(out, r.ranks);
  append_regions_text(out, r.regions, r.batch);  // RegionTimer rows beside pipebench's cases
  findings(out, r);
  append_trust_text(out, r);
  return out;
}

json to_json(const Report& r) {
  const auto& v = r.verdict;
  if (r.regions_only)
    return {{"batch_size", r.batch},
            {"data_bound", r.data_bound()},
            {"region_timers", regions_json(r.regions)}};
  const model::Baseline* step = model::find_baseline(r.baseline);
  json j = {{"recipe", r.recipe}, {"baseline", r.baseline},
            {"baseline_description", step ? json(std::string(step->description)) : json()},
            {"batch_size", r.batch},
            {"images_per_batch_delivered", r.images_per_batch ? json(*r.images_per_batch) : json()},
            {"per_sample_ms", v.per_sample_ms}, {"scaling_efficiency", v.scaling_efficiency}};
  j["sweep"] = json::array();
  for (const auto& p : v.sweep) {
    const auto& b = p.bound;
    json point = {{"workers", p.workers}, {"images_per_second", p.images_per_second},
                  {"data_ms", b.data_ms}, {"compute_ms", b.compute_ms},
                  {"bound_ms", b.bound_ms}, {"step_ms", b.step_ms}, {"au_pct", b.au_pct},
                  {"stall_pct", b.stall_pct}, {"prediction_error_pct", b.prediction_error_pct},
                  {"regime", regime(b)}};
    if (auto w = r.worker_wait_ms.find(p.workers); w != r.worker_wait_ms.end())
      point["worker_wait_ms"] = w->second;
    if (auto n = r.sweep_batches.find(p.workers); n != r.sweep_batches.end()) point["batches"] = n->second;
    if (auto q = r.step_p99_ms.find(p.workers); q != r.step_p99_ms.end()) point["step_p99_ms"] = q->second;
    j["sweep"].push_back(std::move(point));
  }
  j["first_compute_bound_workers"] = opt(v.first_compute_bound);
  j["predicted_workers"] = opt(v.predicted_workers);
  j["data_bound"] = r.data_bound();
  j["stages"] = json::array();
  for (const auto& s : v.stages)
    j["stages"].push_back({{"stage", s.stage}, {"ms_per_sample", s.ms_per_sample}});
  const auto fix = r.fix_first();
  j["fix_first"] = fix ? json(*fix) : json();
  if (v.best_alternative) {
    const auto& a = *v.best_alternative;
    j["best_alternative"] = {{"stage", a.stage}, {"baseline", a.baseline}, {"variant", a.variant},
                             {"baseline_ms", a.baseline_ms}, {"variant_ms", a.variant_ms},
                             {"saving_ms_per_sample", a.saving_ms()}};
  }
  if (!r.spec_note.empty()) j["pipeline_spec_note"] = r.spec_note;
  if (r.loader_w1_ips && r.loader_wn_ips)
    j["sequential_vs_parallel"] = {{"workers", r.loader_wn},
                                   {"w1_images_per_second", *r.loader_w1_ips},
                                   {"wn_images_per_second", *r.loader_wn_ips}};
  if (r.mask_conv_ms && r.mask_shifts_ms)
    j["casestudy_dilation"] = {{"mask_conv_ms", *r.mask_conv_ms},
                               {"mask_shifts_ms", *r.mask_shifts_ms},
                               {"sample_ms", opt(r.casestudy_ms)},
                               {"sample_shifts_ms", opt(r.casestudy_shifts_ms)},
                               {"paired_saving_ms", opt(r.casestudy_saving_ms)},
                               {"paired_saving_ci95_ms", opt(r.casestudy_saving_ci_ms)}};
  add_what_if_json(j, r);
  j["training_extras"] = extras_json(r.extras);
  j["tails"] = tails_json(r.tails);
  j["storage"] = storage_json(r.storage);
  j["region_timers"] = regions_json(r.regions);
  j["system_sampler"] = sampler_cost_json(r.sampler);
  j["ranks"] = ranks_json(r.ranks);
  return j;
}

}  // namespace pipebench::report
