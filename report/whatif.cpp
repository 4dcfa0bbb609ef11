// Pricing the what-if table (build_what_if, report/whatif.h): each candidate's row by the
// step model, the workers row, the recommendation, its fidelity, and the checks against the
// sweep and the fixes that ran end to end. Reading the inputs from the run is
// report/whatif_inputs.cpp's.
#include "report/whatif.h"

#include "model/bound.h"
#include "model/step_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "model/catalogue.h"
#include "model/record.h"

namespace pipebench::report {
namespace {

constexpr double kEps = 1e-9;  // an exact fit (2.0000000001 from rounding) stays a fit

WhatIfRow price(CandidateKind kind, const SampleCost& cost, int workers, double cores,
                const WhatIfInputs& in) {
  WhatIfRow r;
  r.kind = kind;
  r.label = cost.label;
  r.case_name = cost.case_name;
  r.variant = cost.variant;
  r.variant_param = cost.variant_param;
  r.cpu_ms_per_sample = cost.cpu_ms;
  r.kept_shorter_side_px = cost.kept_shorter_side_px;
  r.jpeg_quality = cost.jpeg_quality;
  r.large_min_megapixels = cost.large_min_megapixels;
  r.large_changed_pct = cost.large_changed_pct;
  r.workers = workers;
  r.data_ms = in.loader_overhead * predicted_data_ms(cost.cpu_ms, in.batch, workers, cores);
  // The accelerator's work per batch: the training step, and what the candidate moved onto
  // the device (measured; 0 for a CPU candidate). AU counts the training step only.
  r.device_ms = cost.device_ms_per_batch;
  const double busy_ms = in.compute_ms + r.device_ms;
  r.step_ms = predict_from_parts(r.data_ms, busy_ms, 2).step_ms;  // the step model
  r.au_pct = 100.0 * in.compute_ms / r.step_ms;
  r.images_per_second = in.batch * 1000.0 / r.step_ms;
  r.saving_ms_per_sample = in.today->cpu_ms - cost.cpu_ms;
  if (cost.paired_saving_ms) {  // measured against today in the same case: that difference
    r.saving_ms_per_sample = *cost.paired_saving_ms;
    r.saving_ci_ms = cost.paired_ci_ms;
    r.paired_blocks = cost.paired_blocks;
    r.within_noise = !cost.paired_ci_ms || std::abs(*cost.paired_saving_ms) <= *cost.paired_ci_ms;
  }
  r.per_batch = cost.per_batch;
  r.batch_images = cost.batch_images;
  r.saving_pct = in.today->cpu_ms > 0 ? 100.0 * r.saving_ms_per_sample / in.today->cpu_ms : 0;
  // Reached only where the device time leaves AU >= the target with no stall at all; then
  // the data time must fit in compute_ms / 0.9, as for any row.
  const bool reachable = 100.0 * in.compute_ms / busy_ms >= kAuTargetPct - kEps;
  r.workers_for_target =
      reachable ? workers_for_target(cost.cpu_ms, in.batch, in.compute_ms, in.loader_overhead) : 0;
  r.cores_needed = workers;
  r.fidelity = cost.fidelity;
  r.upsampled_today_pct = cost.upsampled_today_pct;
  r.upsampled_pct = cost.upsampled_pct;
  r.below_min_psnr = cost.fidelity && cost.fidelity->psnr_p5_db && *cost.fidelity->psnr_p5_db < in.min_psnr_db;
  return r;
}

// A row's cost again, to price it at another worker count.
SampleCost cost_of(const WhatIfRow& r) {
  SampleCost c{r.label, r.case_name, r.cpu_ms_per_sample, r.variant, r.variant_param};
  c.kept_shorter_side_px = r.kept_shorter_side_px;
  c.jpeg_quality = r.jpeg_quality;
  c.large_min_megapixels = r.large_min_megapixels;
  c.large_changed_pct = r.large_changed_pct;
  c.per_batch = r.per_batch;
  c.batch_images = r.batch_images;
  c.device_ms_per_batch = r.device_ms;
  c.fidelity = r.fidelity;
  c.upsampled_today_pct = r.upsampled_today_pct;
  c.upsampled_pct = r.upsampled_pct;
  if (r.paired_blocks > 0) {
    c.paired_saving_ms = r.saving_ms_per_sample;
    c.paired_ci_ms = r.saving_ci_ms;
    c.paired_blocks = r.paired_blocks;
  }
  return c;
}

// Where fixes and prices are priced: the sweep's largest count within the cores.
void choose_eval_workers(const WhatIfInputs& in, WhatIf& w) {
  char cores[32];
  std::snprintf(cores, sizeof cores, "%.1f", in.cores);
  if (!in.sweep.empty()) {
    for (const auto& p : in.sweep)
      if (fits_in_cores(p.workers, in.cores)) w.eval_workers = p.workers;
    if (w.eval_workers > 0) {
      w.eval_reason = in.cores > 0
          ? "the sweep's largest count within the " + std::string(cores) + " cores available"
          : "the sweep's largest count (cores unknown)";
    } else {
      w.eval_workers = in.sweep.front().workers;
      w.eval_reason = "the sweep's fewest (no swept count fits in the " + std::string(cores) +
                      " cores available)";
    }
  } else if (in.cores >= 1) {
    w.eval_workers = static_cast<int>(std::floor(in.cores + kEps));
    w.eval_reason = "one per core available (the run has no sweep)";
  } else {
    w.eval_workers = 1;
    w.eval_reason = "1 (the run has no sweep and the cores are unknown)";
  }
}

// The smallest swept count whose measured AU reaches the target, else the model's count
// beyond every swept one (each of those was measured short of it).
WhatIfRow workers_row(const WhatIfInputs& in) {
  for (const auto& p : in.sweep) {
    if (p.bound.au_pct >= kAuTargetPct) {
      WhatIfRow r = price(CandidateKind::kWorkers, *in.today, p.workers, in.cores, in);
      r.label = "workers";
      r.measured = true;
      if (!fits_in_cores(p.workers, in.cores))  // it ran oversubscribed on the cores there were
        r.cores_needed = static_cast<int>(std::ceil(in.cores - kEps));
      return r;
    }
  }
  const int model = workers_for_target(in.today->cpu_ms, in.batch, in.compute_ms, in.loader_overhead);
  // Only counts within the cores say the workers were too few; beyond them the cores were.
  int beyond = 0;
  for (const auto& p : in.sweep)
    if (fits_in_cores(p.workers, in.cores)) beyond = p.workers + 1;
  const int w = std::max(model, beyond);
  const bool exceeds = !fits_in_cores(w, in.cores);
  // Beyond this machine: priced on one core per worker, the cores it would need.
  WhatIfRow r = price(CandidateKind::kWorkers, *in.today, w, exceeds ? 0.0 : in.cores, in);
  r.label = "workers";
  r.exceeds_cores = exceeds;
  if (w != model) r.model_workers = model;
  return r;
}

std::string action(const WhatIfRow& r) {
  char buf[512];
  if (r.kind == CandidateKind::kWorkers) {
    std::snprintf(buf, sizeof buf, "run %d worker%s", r.workers, r.workers == 1 ? "" : "s");
  } else if (r.variant == "decode") {
    std::snprintf(buf, sizeof buf, "set decode: {mode: %s} in the pipeline spec (%s) and run %d worker%s",
                  r.variant_param.c_str(),
                  r.variant_param == "auto" ? "ROI / DCT-scaled decode planned from the crop"
                                            : "another decode",
                  r.workers, r.workers == 1 ? "" : "s");
  } else if (r.kept_shorter_side_px > 0 && r.variant == "presized_large") {
    const std::string quality =
        r.jpeg_quality > 0 ? " --quality " + std::to_string(r.jpeg_quality) : "";
    std::snprintf(buf, sizeof buf, "presize only the images above %.6g MP (%.1f %% of the round) to a "
                  "shorter side of %d px (pipebench-data presize DATA OUT --shorter-side %d "
                  "--min-megapixels %.6g%s; the others stay byte for byte) and run %d worker%s",
                  r.large_min_megapixels, r.large_changed_pct, r.kept_shorter_side_px,
                  r.kept_shorter_side_px, r.large_min_megapixels, quality.c_str(), r.workers,
                  r.workers == 1 ? "" : "s");
  } else if (r.kept_shorter_side_px > 0) {
    const std::string quality =
        r.jpeg_quality > 0 ? " --quality " + std::to_string(r.jpeg_quality) : "";
    std::snprintf(buf, sizeof buf, "presize the dataset to a shorter side of %d px "
                  "(pipebench-data presize DATA OUT --shorter-side %d%s; the model then "
                  "sees images of shorter side %d px at most) and run %d worker%s",
                  r.kept_shorter_side_px, r.kept_shorter_side_px, quality.c_str(),
                  r.kept_shorter_side_px, r.workers, r.workers == 1 ? "" : "s");
  } else {
    std::snprintf(buf, sizeof buf, "apply %s and run %d worker%s", r.label.c_str(), r.workers,
                  r.workers == 1 ? "" : "s");
  }
  return buf;
}

Recommendation compute_bound_already(const SweepPoint& p, int model_workers) {
  Recommendation rec;
  rec.kind = Recommendation::Kind::kComputeBoundAlready;
  rec.label = "workers";
  rec.workers = p.workers;
  rec.cores_needed = p.workers;
  rec.au_pct = p.bound.au_pct;
  rec.images_per_second = p.images_per_second;
  char buf[500];
  std::snprintf(buf, sizeof buf,
                "Compute-bound already: at %d worker%s (the fewest swept) the accelerator is busy "
                "%.1f %% of the step (AU, measured, target %.0f %%); keep it: a cheaper sample "
                "would only free CPU, not shorten the step.",
                p.workers, p.workers == 1 ? "" : "s", p.bound.au_pct, kAuTargetPct);
  rec.text = buf;
  if (model_workers < p.workers) {
    std::snprintf(buf, sizeof buf, " Fewer workers may do: the model says %d.", model_workers);
    rec.text += buf;
  }
  return rec;
}

// What the option `label` changes in the pixels, in words (issue 35).
std::string fidelity_words(const WhatIf& w, const std::string& label) {
  const WhatIfRow* row = nullptr;
  for (const auto& r : w.rows)
    if (r.label == label && (r.kind == CandidateKind::kFix || r.kind == CandidateKind::kWorkers)) row = &r;
  if (row == nullptr || row->kind == CandidateKind::kWorkers)
    return "more workers change nothing the model sees (the same samples, bit for bit)";
  if (!row->fidelity) return "its fidelity was not measured in this run";
  const model::FidelitySummary& f = *row->fidelity;
  char buf[320];
  if (f.all_identical()) {
    std::snprintf(buf, sizeof buf, "bit-identical: it changes nothing the model sees (%zu of %zu samples identical)",
                  f.identical, f.samples);
  } else {
    std::snprintf(buf, sizeof buf, "it changes pixels: PSNR %.1f dB median, %.1f dB p5, SSIM %.3f / %.3f (%.0f %% of "
                  "%zu samples identical), within --min-psnr=%.1f", f.psnr_median_db.value_or(0),
                  f.psnr_p5_db.value_or(0), f.ssim_median.value_or(0), f.ssim_p5.value_or(0),
                  100.0 * f.identical_share(), f.samples, w.min_psnr_db);
  }
  return buf;
}

// The recommendation states the fidelity of what it recommends, and which fixes --min-psnr
// kept out of it.
void state_fidelity(WhatIf& w) {
  Recommendation& rec = w.recommendation;
  if (rec.kind != Recommendation::Kind::kReachesTarget && rec.kind != Recommendation::Kind::kShortOfTarget) return;
  rec.fidelity = fidelity_words(w, rec.label);
  rec.text += " Fidelity: " + rec.fidelity + ".";
  std::string excluded;
  for (const auto& r : w.rows) {
    if (r.kind != CandidateKind::kFix || !r.below_min_psnr) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s%s (PSNR p5 %.1f dB)", excluded.empty() ? "" : ", ", r.label.c_str(),
                  r.fidelity->psnr_p5_db.value_or(0));
    excluded += buf;
  }
  if (excluded.empty()) return;
  char buf[96];
  std::snprintf(buf, sizeof buf, " Left out for fidelity (5th-percentile PSNR below --min-psnr=%.1f dB): ", w.min_psnr_db);
  rec.text += buf + excluded + ".";
}

// Workers alone, and each fix with the workers it needs; the fewest cores wins (a tie goes
// to workers alone, which changes nothing the model sees, then to another decode, then to
// presizing, then to the cheaper sample).
Recommendation recommend(const WhatIfInputs& in, const WhatIf& w) {
  if (!in.sweep.empty() && in.sweep.front().bound.au_pct >= kAuTargetPct)
    return compute_bound_already(in.sweep.front(), workers_for_target(in.today->cpu_ms, in.batch,
                                                                      in.compute_ms, in.loader_overhead));
  std::vector<WhatIfRow> options;
  for (const auto& r : w.rows) {
    if (r.kind == CandidateKind::kWorkers) options.push_back(r);
    // A saving within noise, or a cost, is never recommended (issue 26), nor a fix whose
    // device time keeps AU below the target.
    if (r.kind != CandidateKind::kFix || r.within_noise || r.saving_ms_per_sample <= 0 ||
        r.workers_for_target == 0 || r.below_min_psnr)  // nor one that changes pixels too much
      continue;
    const int need = r.workers_for_target;
    options.push_back(price(CandidateKind::kFix, cost_of(r), need,
                            fits_in_cores(need, in.cores) ? in.cores : 0.0, in));
  }
  // On equal cores: first what changes nothing the model sees (workers, then another
  // decode), then presizing the large images only (it lowers the resolution of a few),
  // then presizing every image, then the cheaper sample.
  const auto intrusiveness = [](const WhatIfRow& r) {
    if (r.kind == CandidateKind::kWorkers) return 0;
    if (r.kept_shorter_side_px <= 0) return 1;
    return r.variant == "presized_large" ? 2 : 3;
  };
  const auto better = [&](const WhatIfRow& a, const WhatIfRow& b) {
    if (a.cores_needed != b.cores_needed) return a.cores_needed < b.cores_needed;
    if (intrusiveness(a) != intrusiveness(b)) return intrusiveness(a) < intrusiveness(b);
    return a.cpu_ms_per_sample < b.cpu_ms_per_sample;
  };
  const WhatIfRow best = *std::min_element(options.begin(), options.end(), better);
  Recommendation rec;
  rec.label = best.label;
  char buf[1400];
  if (fits_in_cores(best.cores_needed, in.cores)) {
    rec.kind = Recommendation::Kind::kReachesTarget;
    rec.workers = best.workers;
    rec.cores_needed = best.cores_needed;
    rec.au_pct = best.au_pct;
    rec.images_per_second = best.images_per_second;
    std::string act = action(best);
    act[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(act[0])));
    std::snprintf(buf, sizeof buf, "%s: predicted AU %.1f %% and %.0f images/s on %d core%s%s%s.",
                  act.c_str(), best.au_pct, best.images_per_second, best.cores_needed,
                  best.cores_needed == 1 ? "" : "s",
                  best.cores_needed == best.workers ? " (one per worker)" : " (oversubscribed)",
                  best.measured ? "; that count reached it in this run's sweep" : "");
    rec.text = buf;
    return rec;
  }
  // Nothing reaches the target within the cores: the best on this machine's cores.
  const int here = std::max(1, static_cast<int>(std::floor(in.cores + kEps)));
  WhatIfRow best_here = price(CandidateKind::kWorkers, *in.today, here, in.cores, in);
  best_here.label = "workers";
  for (const auto& r : w.rows) {
    if (r.kind != CandidateKind::kFix || r.within_noise || r.saving_ms_per_sample <= 0 || r.below_min_psnr) continue;
    WhatIfRow f = price(CandidateKind::kFix, cost_of(r), here, in.cores, in);
    if (f.au_pct > best_here.au_pct + kEps) best_here = f;
  }
  rec.kind = Recommendation::Kind::kShortOfTarget;
  rec.label = best_here.label;
  rec.workers = here;
  rec.cores_needed = here;
  rec.au_pct = best_here.au_pct;
  rec.images_per_second = best_here.images_per_second;
  std::snprintf(buf, sizeof buf, "Nothing reaches AU %.0f %% on the %.1f cores available: the best "
                "here is to %s, predicted AU %.1f %% (%.0f images/s); AU %.0f %% needs you to %s, "
                "on %d cores.", kAuTargetPct, in.cores, action(best_here).c_str(), best_here.au_pct,
                best_here.images_per_second, kAuTargetPct, action(best).c_str(), best.cores_needed);
  rec.text = buf;
  return rec;
}

// A prediction of the step (ms per batch) against the sweep point that measured it: the
// AU it implies at the point's compute time, the measured step, AU and 95 % half width, and
// the error (model::prediction_error_pct, %).
void set_against(PredictionCheck& c, double predicted_step_ms, const SweepPoint& p) {
  c.predicted_step_ms = predicted_step_ms;
  c.predicted_au_pct = 100.0 * p.bound.compute_ms / predicted_step_ms;
  c.measured_step_ms = p.bound.step_ms;
  c.measured_au_pct = p.bound.au_pct;
  c.measured_ci_ms = p.step_ms_ci;
  c.error_pct = model::prediction_error_pct(c.predicted_step_ms, c.measured_step_ms);
}

std::optional<PredictionCheck> check(const WhatIfInputs& in, const WhatIf& w) {
  const WhatIfRow* workers = nullptr;
  for (const auto& r : w.rows) if (r.kind == CandidateKind::kWorkers) workers = &r;
  const int at = workers && workers->measured ? workers->workers : w.eval_workers;
  for (const auto& p : in.sweep) {
    if (p.workers != at) continue;
    PredictionCheck c;
    c.workers = at;
    c.at_workers_candidate = workers && workers->measured;
    const double data = in.loader_overhead * predicted_data_ms(in.today->cpu_ms, in.batch, at, in.cores);
    // The point's own compute time: the case that ran the fix measured it.
    set_against(c, predict_from_parts(data, p.bound.compute_ms, 2).step_ms, p);
    return c;
  }
  return std::nullopt;
}

// The table's fields that come from its inputs as they are, before any row is priced.
WhatIf what_if_frame(const WhatIfInputs& in) {
  WhatIf w;
  w.batch = in.batch;
  w.compute_ms = in.compute_ms;
  w.cores = in.cores;
  w.cost_source = in.cost_source;
  w.note = in.note;
  if (in.sweep_reads_storage)
    w.cold_sweep_note = "the sweep read cold (or through the read throttle), and the model "
                        "prices CPU work only: the gap includes the fetch stall (the Storage "
                        "section prices it)";
  w.loader_overhead = in.loader_overhead;
  w.loader_overhead_workers = in.loader_overhead_workers;
  w.min_psnr_db = in.min_psnr_db;
  w.fidelity_ms = in.fidelity_ms;
  if (in.control) w.control_fidelity = in.control->fidelity;
  return w;
}

// Do the operators' prices add up to today's operator stage (WhatIf::Parts)? None without
// prices or without BM_Sample's stage times.
std::optional<WhatIf::Parts> operator_parts(const WhatIfInputs& in) {
  if (in.prices.empty() || !in.today_read_ms || !in.today_decode_ms || !in.today_transform_ms) return std::nullopt;
  const double wall = *in.today_read_ms + *in.today_decode_ms + *in.today_transform_ms;
  if (!(wall > 0)) return std::nullopt;
  WhatIf::Parts parts;
  for (const auto& p : in.prices) parts.prices_ms += p.paired_saving_ms.value_or(in.today->cpu_ms - p.cpu_ms);
  parts.priced = static_cast<int>(in.prices.size());
  parts.stage_ms = in.today->cpu_ms * *in.today_transform_ms / wall;
  return parts;
}

// The A/A control must read zero: where its interval excludes 0, why this run cannot rank
// small savings; "" where it reads noise.
std::string control_note(const WhatIfRow& c) {
  if (!c.saving_ci_ms || c.within_noise) return "";
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "the A/A control (today against itself, paired as the candidates are) reads "
                "%+.3f ms per sample (+- %.3f, 95 %%, %d blocks), not zero: two identical "
                "pipelines measured %.1f %% apart (the machine's speed moving within the case, "
                "or where each side's buffers lie in memory), so this run cannot rank candidates "
                "whose savings are that small; rerun on a quieter machine, or read savings of "
                "that size as noise", c.saving_ms_per_sample, *c.saving_ci_ms, c.paired_blocks,
                std::abs(c.saving_pct));
  return buf;
}

// Today, workers, the fixes, the rows on the accelerator (with their sources), the
// operators' prices (and whether they add up), the A/A control: each priced at the table's
// worker count, the workers row at its own.
void add_rows(const WhatIfInputs& in, WhatIf& w) {
  const auto priced = [&](CandidateKind kind, const SampleCost& cost) {
    return price(kind, cost, w.eval_workers, in.cores, in);
  };
  w.rows.push_back(priced(CandidateKind::kToday, *in.today));
  w.rows.push_back(workers_row(in));
  for (const auto& f : in.fixes) w.rows.push_back(priced(CandidateKind::kFix, f));
  for (const auto& d : in.device) w.rows.push_back(priced(CandidateKind::kDevice, d));
  w.device_decode = in.device_decode;
  w.device_finish = in.device_finish;
  w.device_not_measured = in.device_not_measured;
  w.device_normalize = in.device_normalize;
  w.gpu_available = in.gpu_available;
  for (const auto& p : in.prices) w.rows.push_back(priced(CandidateKind::kPrice, p));
  w.parts = operator_parts(in);
  if (in.control) {  // the A/A control, priced as a candidate is; it must read zero
    w.rows.push_back(priced(CandidateKind::kControl, *in.control));
    w.control_note = control_note(w.rows.back());
  }
}

// A fix that ran end to end, checked at the recommended count where it is the
// recommendation, else at the table's count, else at its largest: its own prediction
// against that run.
FixCheck fix_check(const WhatIfInputs& in, const WhatIf& w, const SampleCost& f,
                   const std::map<int, SweepPoint>& by_workers) {
  auto at = by_workers.end();
  if (w.recommendation.label == f.label) at = by_workers.find(w.recommendation.workers);
  if (at == by_workers.end()) at = by_workers.find(w.eval_workers);
  if (at == by_workers.end()) at = std::prev(by_workers.end());
  const SweepPoint& p = at->second;
  FixCheck fc;
  fc.label = f.label;
  PredictionCheck& c = fc.check;
  c.workers = p.workers;
  // One prediction per fix: the per-image price the tails section prints where bench made
  // one (a presized copy's costs differ image by image; its mean hides that), else the row's.
  const auto priced = in.fix_priced_ms.find(f.label);
  if (priced != in.fix_priced_ms.end() && priced->second.count(p.workers)) {
    fc.priced_per_image = true;
    set_against(c, priced->second.at(p.workers), p);
    return fc;
  }
  set_against(c, predict_from_parts(in.loader_overhead * predicted_data_ms(f.cpu_ms, in.batch, p.workers, in.cores),
                                    p.bound.compute_ms + f.device_ms_per_batch, 2).step_ms,
              p);
  return fc;
}

std::vector<FixCheck> fix_checks(const WhatIfInputs& in, const WhatIf& w) {
  std::vector<FixCheck> checks;
  for (const auto& f : in.fixes) {
    const auto points = in.fix_points.find(f.label);
    if (points == in.fix_points.end() || points->second.empty()) continue;
    checks.push_back(fix_check(in, w, f, points->second));
  }
  return checks;
}

// Advice from a model that this very run contradicts must say so.
void caution_where_the_model_is_off(WhatIf& w) {
  if (!w.check || !w.check->over_tolerance() ||
      w.recommendation.kind == Recommendation::Kind::kComputeBoundAlready)
    return;
  char buf[300];
  std::snprintf(buf, sizeof buf, " Caution: the model behind this is %+.0f %% off the step "
                "measured at %d workers (check below); act on measured counts only, or rerun "
                "on an idle machine.", w.check->error_pct, w.check->workers);
  w.recommendation.model_off = true;
  w.recommendation.text += buf;
}

}  // namespace

bool fits_in_cores(int workers, double cores) { return cores <= 0 || workers <= cores + kEps; }

bool PredictionCheck::over_tolerance() const { return std::abs(error_pct) > kCheckTolerancePct; }

double predicted_data_ms(double cpu_ms_per_sample, int batch, int workers, double cores) {
  // The step model's closed form (model::mean_data_ms): workers beyond the cores share them.
  model::LoaderShape l;
  l.batch = std::max(1, batch);
  l.workers = std::max(1, workers);
  l.cores = cores > 0 ? cores : 0;
  return model::mean_data_ms(cpu_ms_per_sample, l);
}

int workers_for_target(double cpu_ms_per_sample, int batch, double compute_ms, double overhead) {
  // The one "workers needed" formula (model::mean_workers_for_target), k folded into the cost.
  return std::max(1, model::mean_workers_for_target(overhead * cpu_ms_per_sample, std::max(1, batch),
                                                    compute_ms, kAuTargetPct));
}

WhatIf build_what_if(const WhatIfInputs& in) {
  WhatIf w = what_if_frame(in);
  if (!in.today || !(in.compute_ms > 0) || in.batch <= 0) {
    if (w.note.empty()) w.note = "no per-sample cost, step time or batch size to price candidates with";
    return w;
  }
  choose_eval_workers(in, w);
  add_rows(in, w);
  w.recommendation = recommend(in, w);
  state_fidelity(w);
  w.check = check(in, w);
  w.fix_checks = fix_checks(in, w);
  caution_where_the_model_is_off(w);
  return w;
}

}  // namespace pipebench::report
