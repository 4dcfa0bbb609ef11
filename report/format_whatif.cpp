#include "report/format_whatif.h"

#include <algorithm>
#include <cmath>

#include "report/appendf.h"
#include "report/change_note.h"

namespace pipebench::report {
namespace {

// The row's name in the text table: "presize to 256 px" for presized:256, "presize large
// to 375 px" for presized_large:375, else its label.
std::string display_label(const WhatIfRow& row) {
  if (row.kept_shorter_side_px > 0)
    return (row.variant == "presized_large" ? "presize large to " : "presize to ") +
           std::to_string(row.kept_shorter_side_px) + " px";
  if (row.kind == CandidateKind::kControl) return "A/A control";
  return row.label;
}

// A saving with its 95 % interval when paired ("0.195 +-0.012"), "noise +-0.012" when the
// interval holds 0, the bare number when not paired.
std::string saving_text(const WhatIfRow& row) {
  char b[64];
  if (row.paired_blocks > 0 && !row.saving_ci_ms) {
    std::snprintf(b, sizeof b, "noise (%d block)", row.paired_blocks);
  } else if (row.saving_ci_ms && row.within_noise) {
    std::snprintf(b, sizeof b, "noise +-%.3f", *row.saving_ci_ms);
  } else if (row.saving_ci_ms) {
    std::snprintf(b, sizeof b, "%.3f +-%.3f", row.saving_ms_per_sample, *row.saving_ci_ms);
  } else {
    std::snprintf(b, sizeof b, "%.3f", row.saving_ms_per_sample);
  }
  return b;
}

// The fidelity column (issue 35): "identical", "41.2 / 36.0" (PSNR median / p5, dB) with a
// '*' when below --min-psnr, "-" for a row with nothing to compare (today, a price).
std::string fidelity_column(const WhatIfRow& row) {
  if (row.kind == CandidateKind::kWorkers) return "identical";
  if (!row.fidelity) return "-";
  if (row.fidelity->all_identical()) return "identical";
  if (!row.fidelity->psnr_median_db || !row.fidelity->psnr_p5_db) return "-";
  std::string s;
  appendf(s, "%.1f / %.1f%s", *row.fidelity->psnr_median_db, *row.fidelity->psnr_p5_db, row.below_min_psnr ? "*" : "");
  return s;
}

void row_text(std::string& out, const WhatIfRow& row, int width) {
  if (row.kind == CandidateKind::kPeer || row.kind == CandidateKind::kStorage) {
    // measured throughput: no per-sample CPU cost
    appendf(out, "%-*s %9s %7d %9.2f %9.2f %6.1f %9.0f %17s %8s %9s %15s\n", width,
            display_label(row).c_str(), "-", row.workers, row.data_ms, row.step_ms, row.au_pct,
            row.images_per_second, "-", "-", "-", "-");
    return;
  }
  char pct[16], target[16];
  if (row.within_noise) std::snprintf(pct, sizeof pct, "-");
  else std::snprintf(pct, sizeof pct, "%.1f", row.saving_pct);
  // 0: its device time alone keeps AU below the target
  if (row.workers_for_target > 0) std::snprintf(target, sizeof target, "%d", row.workers_for_target);
  else std::snprintf(target, sizeof target, "never");
  appendf(out, "%-*s %9.3f %7d %9.2f %9.2f %6.1f %9.0f %17s %8s %9s %15s\n", width,
          display_label(row).c_str(), row.cpu_ms_per_sample, row.workers, row.data_ms, row.step_ms,
          row.au_pct, row.images_per_second, saving_text(row).c_str(), pct, target,
          fidelity_column(row).c_str());
}

// A row on the accelerator the run did not measure: one line where the row would be.
void not_measured_text(std::string& out, const WhatIf& w, int width) {
  for (const auto& n : w.device_not_measured)
    appendf(out, "%-*s not measured: %s\n", width, n.label.c_str(), n.reason.c_str());
}

// "compute 25.00 + 1.20 = 26.20 ms per batch, AU at most 95.4 %".
std::string busy_text(const WhatIf& w, double device_ms) {
  std::string s;
  appendf(s, "compute %.2f + %.3f = %.2f ms per batch, AU at most %.1f %%", w.compute_ms, device_ms,
          w.compute_ms + device_ms, 100.0 * w.compute_ms / (w.compute_ms + device_ms));
  return s;
}

// What the rows on the accelerator rest on, and collate:uint8's accelerator share.
void device_notes_text(std::string& out, const WhatIf& w) {
  for (const auto& row : w.rows) {
    if (row.label != "collate:uint8") continue;
    appendf(out, "(collate:uint8: batches of uint8, a quarter of float32's bytes to copy, and the "
            "trailing normalize done after the copy; the CPU saving is measured (%s); ",
            row.case_name.c_str());
    if (w.device_normalize)
      appendf(out, "the normalize on the accelerator is measured too: %.3f ms per batch of %d (%s, "
              "CUDA events), added to the step: %s.)\n", w.device_normalize->ms_per_batch, w.batch,
              w.device_normalize->case_name.c_str(), busy_text(w, w.device_normalize->ms_per_batch).c_str());
    else if (w.gpu_available)
      appendf(out, "the normalize on the accelerator is not measured (this run has no device "
              "normalize at batch %d): one memory-bound pass over the batch, left out of the step.)\n",
              w.batch);
    else
      appendf(out, "the normalize on the accelerator is estimated, not measured without a GPU: one "
              "memory-bound pass over the batch, counted in the step as it is.)\n");
  }
  if (w.device_decode) {
    const DeviceDecode& d = *w.device_decode;
    const WhatIfRow* row = nullptr;
    for (const auto& r : w.rows)
      if (r.kind == CandidateKind::kDevice && r.variant_param == "decode") row = &r;
    std::string cpu;
    if (d.cpu_images_per_second)
      appendf(cpu, "; BM_Decode/turbo_full on one CPU thread, the same files: %.0f images/s (nvJPEG "
              "%.1fx)", *d.cpu_images_per_second, d.images_per_second / *d.cpu_images_per_second);
    if (row != nullptr)
      appendf(out, "(decode on the accelerator: %s measured %.0f images/s (real time, the round's "
              "images queued on one stream)%s. CPU: %.3f ms per sample saved, today's decode %.3f ms "
              "(%s) less nvJPEG's own host CPU %.3f ms (its Huffman stage); not paired: two cases, no "
              "interval. GPU: %.3f ms per image x %d images = %.2f ms per batch, added to the step: "
              "%s. The operators after decode are priced where they run today (on the device they "
              "need device versions and a decoded image there, not measured here).)\n",
              d.case_name.c_str(), d.images_per_second, cpu.c_str(), row->saving_ms_per_sample,
              d.cpu_decode_ms, d.cpu_decode_source.c_str(), d.host_cpu_ms, d.gpu_ms_per_image(), w.batch,
              row->device_ms, busy_text(w, row->device_ms).c_str());
  }
  if (w.device_finish) {
    const DeviceFinish& f = *w.device_finish;
    const WhatIfRow* row = nullptr;
    for (const auto& r : w.rows)
      if (r.kind == CandidateKind::kDevice && r.variant_param == "finish") row = &r;
    std::string device, parts, left;
    for (const auto& t : f.device)
      appendf(device, "%s%s %.3f ms (%s%s%s)", device.empty() ? "" : ", ", t.what.c_str(), t.ms_per_batch,
              t.case_name.c_str(), t.note.empty() ? "" : ": ", t.note.c_str());
    for (const auto& p : f.cpu_parts) appendf(parts, "%s%s", parts.empty() ? "" : " + ", p.c_str());
    for (const auto& n : f.not_moved) appendf(left, "%s%s", left.empty() ? "" : "; ", n.c_str());
    if (row != nullptr)
      appendf(out, "(finish on the accelerator: the loader hands over uint8 batches and the device "
              "finishes them after the copy. CPU: %s%s. GPU, per batch of %d, uint8 NHWC, CUDA events: %s; "
              "%.3f ms in all, added to the step: %s.%s%s)\n", parts.c_str(),
              row->paired_blocks > 0 ? ", each measured paired against today, the intervals added in "
                                       "quadrature" : ", not all paired: no interval", f.batch, device.c_str(),
              row->device_ms, busy_text(w, row->device_ms).c_str(), left.empty() ? "" : " Not priced here: ",
              left.c_str());
  }
}

void fidelity_notes_text(std::string& out, const WhatIf& w) {
  std::string lines;
  for (const auto& row : w.rows)
    if (row.kind == CandidateKind::kFix || row.kind == CandidateKind::kDevice) lines += "  " + change_note(row) + "\n";
  if (lines.empty()) return;
  appendf(out, "(fidelity: each fix's output against today's for the same images and random draws, as "
          "pixels 0-255 before normalize: PSNR median / 5th percentile over the samples not "
          "identical, dB (docs/what-if.md); workers change nothing the model sees; --min-psnr=%.1f dB "
          "on the p5; the fidelity work took %.1f s of wall time, outside the timed runs)\n%s", w.min_psnr_db,
          w.fidelity_ms / 1000.0, lines.c_str());
  if (w.control_fidelity && !w.control_fidelity->all_identical())
    appendf(out, "Warning: the A/A control's outputs are not identical (%zu of %zu samples): a pairing bug "
            "(today against itself must give the same pixels); the fidelity figures are not to be trusted.\n",
            w.control_fidelity->identical, w.control_fidelity->samples);
}

// The label column's width: the longest row or not-measured label, at least 12.
int label_width(const WhatIf& w) {
  int width = 12;
  for (const auto& row : w.rows) width = std::max<int>(width, static_cast<int>(display_label(row).size()));
  for (const auto& n : w.device_not_measured) width = std::max<int>(width, static_cast<int>(n.label.size()));
  return width;
}

// The heading of the column of workers reaching the AU target: "for 90 %".
std::string target_heading() {
  std::string s;
  appendf(s, "for %.0f %%", kAuTargetPct);
  return s;
}

void heading_text(std::string& out, int width) {
  appendf(out, "%-*s %9s %7s %9s %9s %6s %9s %17s %8s %9s %15s\n", width, "candidate", "CPU ms", "workers",
          "data ms", "step ms", "AU %", "images/s", "saving ms", "saving %", target_heading().c_str(),
          "fidelity dB");
}

// The rows in order; the rows on the accelerator not measured stand where the rows that
// come before them (today, workers, fixes, device) end, the prices under their own line.
void rows_text(std::string& out, const WhatIf& w, int width) {
  bool priced = false, unmeasured = false;
  for (const auto& row : w.rows) {
    const bool before_device = row.kind == CandidateKind::kToday || row.kind == CandidateKind::kWorkers ||
                               row.kind == CandidateKind::kFix || row.kind == CandidateKind::kDevice;
    if (!before_device && !unmeasured) {  // where the rows on the accelerator stand
      not_measured_text(out, w, width);
      unmeasured = true;
    }
    if (row.kind == CandidateKind::kPrice && !priced) {
      appendf(out, "what each operator costs (removing it changes what the model sees: a price, "
              "not a fix):\n");
      priced = true;
    }
    row_text(out, row, width);
  }
  if (!unmeasured) not_measured_text(out, w, width);
}

// What a presized row kept of the images, and where it was measured.
void presize_notes_text(std::string& out, const WhatIf& w) {
  for (const auto& row : w.rows) {
    if (row.kept_shorter_side_px <= 0) continue;
    const std::string quality = row.jpeg_quality > 0 ? "JPEG quality " + std::to_string(row.jpeg_quality)
                                                     : "JPEG quality not recorded";
    if (row.variant == "presized_large") {
      appendf(out, "(presize large to %d px: only the images above %.6g MP, %.1f %% of the round, "
              "presized to shorter side %d px (never upscaled), %s; the others are the originals, "
              "byte for byte; measured on such a copy of the round (%s).)\n", row.kept_shorter_side_px,
              row.large_min_megapixels, row.large_changed_pct, row.kept_shorter_side_px,
              quality.c_str(), row.case_name.c_str());
      continue;
    }
    appendf(out, "(presize to %d px: kept resolution: shorter side %d px (never upscaled), %s; "
            "measured on a presized copy of the data (%s). The model sees those images, not the "
            "originals.)\n", row.kept_shorter_side_px, row.kept_shorter_side_px, quality.c_str(),
            row.case_name.c_str());
  }
}

// The storage rows' source, and what each packed copy saves against the files.
void storage_notes_text(std::string& out, const WhatIf& w) {
  std::string packed;  // "shards-64 saves 20.1 ms per batch (34 %), ..."
  int storage_workers = 0;
  for (const auto& row : w.rows) {
    if (row.kind != CandidateKind::kStorage) continue;
    storage_workers = row.workers;
    if (row.variant != "pack") continue;
    const double files_ms = row.data_ms + row.data_saving_ms;
    appendf(packed, "%s%s %s %.2f ms per batch (%.0f %%)", packed.empty() ? "" : ", ",
            row.variant_param.c_str(), row.data_saving_ms >= 0 ? "saves" : "costs",
            std::abs(row.data_saving_ms), 100 * std::abs(row.data_saving_ms) / std::max(1e-9, files_ms));
  }
  if (storage_workers > 0)
    appendf(out, "(storage rows: loaders measured cold at %d workers, the files as stored and the "
            "dataset packed into WebDataset shards of N images (BM_Loader/<pipeline>/shards-N/cold/...)%s%s. "
            "They are measured loaders, not the CPU model: they include the fetch stall, which "
            "today's row (CPU cost, warm) does not.)\n", storage_workers,
            packed.empty() ? "" : ": against the files, ", packed.c_str());
}

// The blocks the paired rows (per sample) rest on: "32", or "16 to 32"; "" when none is
// paired.
std::string paired_blocks_text(const WhatIf& w) {
  int fewest = 0, most = 0;
  for (const auto& row : w.rows) {
    if (!row.saving_ci_ms || row.per_batch) continue;
    fewest = fewest == 0 ? row.paired_blocks : std::min(fewest, row.paired_blocks);
    most = std::max(most, row.paired_blocks);
  }
  if (most <= 0) return "";
  std::string blocks = std::to_string(fewest);
  if (most != fewest) blocks += " to " + std::to_string(most);
  return blocks;
}

// How a saving and its interval were measured, and how each batch operator was priced.
void paired_notes_text(std::string& out, const WhatIf& w) {
  const std::string blocks = paired_blocks_text(w);
  if (!blocks.empty()) {
    appendf(out, "(saving: today minus the candidate, CPU ms per sample, measured paired: A B B A "
            "over the same blocks of images with the same random draws, in one case; +- is the "
            "95 %% Student t interval: from how each block of images scattered over the rounds run, the "
            "saving on these images, or over the blocks when the round ran once (%s blocks per row "
            "here; model/paired.h, docs/paired.md). "
            "\"noise\": the interval holds 0, so no effect can be told from the machine's noise: "
            "never recommended. The A/A control is today against itself measured the same way: "
            "it must read noise.)\n", blocks.c_str());
  }
  for (const auto& row : w.rows) {
    if (!row.per_batch) continue;
    appendf(out, "(%s: a batch operator, priced on the batch: %s, its thread CPU per batch / %d "
            "images%s%s)\n", row.label.c_str(), row.case_name.c_str(), row.batch_images,
            row.saving_ci_ms ? "; +- the 95 % t interval over the " : "",
            row.saving_ci_ms ? (std::to_string(row.paired_blocks) + " batches timed").c_str() : "");
  }
}

// Whether the operators' prices add up to today's operator stage (WhatIf::Parts).
void parts_text(std::string& out, const WhatIf& w) {
  if (!w.parts) return;
  const auto& p = *w.parts;
  appendf(out, "(the parts: the %d priced operator%s account for %.3f of the %.3f ms per sample "
          "today's sample spends in its operators (its CPU times the transform stage's share of "
          "BM_Sample's wall time), %.0f %%; the rest is in operators that cannot be removed (they "
          "set the size or the dtype) and in what operators cost together beyond their prices "
          "apart (fused kernels, caches))\n", p.priced, p.priced == 1 ? "" : "s", p.prices_ms,
          p.stage_ms, p.stage_ms > 0 ? 100 * p.prices_ms / p.stage_ms : 0.0);
}

// What a negative saving means, paired (beyond its interval) and not.
void negative_saving_notes_text(std::string& out, const WhatIf& w) {
  const auto negative = [&](bool paired) {
    return std::any_of(w.rows.begin(), w.rows.end(), [&](const WhatIfRow& row) {
      return row.saving_ms_per_sample < 0 && !row.within_noise && row.kind != CandidateKind::kControl &&
             row.saving_ci_ms.has_value() == paired;
    });
  };
  if (negative(true))
    appendf(out, "(a negative saving beyond its interval: the candidate is slower than today on "
            "this machine: a change that makes another step costlier, such as a copy into the "
            "batch or a fusion lost)\n");
  if (negative(false))
    appendf(out, "(a negative saving without an interval: the candidate measured slower than "
            "today; noise at this size (see the CV with --benchmark_repetitions), or a change "
            "that makes another step costlier, such as a fusion lost)\n");
}

// How the columns are predicted, and where fixes and operators were priced.
void model_legend_text(std::string& out, const WhatIf& w) {
  std::string overhead;
  if (w.loader_overhead_workers > 0)
    appendf(overhead, " x %.3f: today's loader alone at %d worker%s measured against the CPU "
            "model (its collate and hand-off, and the whole dataset against the round's images)",
            w.loader_overhead, w.loader_overhead_workers, w.loader_overhead_workers == 1 ? "" : "s");
  const bool on_device = std::any_of(w.rows.begin(), w.rows.end(), [](const WhatIfRow& row) { return row.device_ms > 0; });
  appendf(out, "(predicted: CPU ms per sample; data = CPU ms x %d / min(workers, cores)%s; step = "
          "max(data, compute %.2f ms%s), both ms per batch; AU = compute / step; saving = CPU ms per "
          "sample vs today; \"%s\" = workers reaching AU %.0f %% with that cost%s. Today, "
          "fixes and operators at %d workers: %s.)\n", w.batch, overhead.c_str(), w.compute_ms,
          on_device ? " + the row's GPU ms" : "", target_heading().c_str(), kAuTargetPct,
          on_device ? " (never: the GPU ms alone keep AU below it)" : "", w.eval_workers, w.eval_reason.c_str());
}

// The table, then its notes in a fixed order.
void table_text(std::string& out, const WhatIf& w) {
  const int width = label_width(w);
  heading_text(out, width);
  rows_text(out, w, width);
  presize_notes_text(out, w);
  device_notes_text(out, w);
  fidelity_notes_text(out, w);
  storage_notes_text(out, w);
  paired_notes_text(out, w);
  parts_text(out, w);
  if (!w.control_note.empty()) appendf(out, "Warning: %s.\n", w.control_note.c_str());
  negative_saving_notes_text(out, w);
  model_legend_text(out, w);
}

void workers_text(std::string& out, const WhatIf& w, bool swept) {
  for (const auto& row : w.rows) {
    if (row.kind != CandidateKind::kWorkers) continue;
    if (row.measured) {
      appendf(out, "Workers: %d is the smallest swept count with a measured AU >= %.0f %%%s.\n",
              row.workers, kAuTargetPct,
              row.cores_needed < row.workers ? " (oversubscribed: more workers than cores)" : "");
    } else if (row.model_workers) {
      appendf(out, "Workers: %d, predicted beyond the sweep: the model alone says %d, but the "
              "sweep measured that count short of AU %.0f %%.\n", row.workers, *row.model_workers,
              kAuTargetPct);
    } else {
      appendf(out, "Workers: %d, predicted from the per-sample cost%s.\n", row.workers,
              swept ? " beyond the sweep" : " (the run has no sweep)");
    }
    if (row.exceeds_cores)
      appendf(out, "Warning: %d workers need %d cores (one each), more than the %.1f cores "
              "available: priced on %d cores.\n", row.workers, row.workers, w.cores, row.workers);
  }
}

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : "; ") + i;
  return s;
}

void peer_text(std::string& out, const PeerSummary& p) {
  appendf(out, "(your framework's loader: scripts/torch_peer.py, %s, torchvision transforms + "
          "DataLoader(num_workers=%d, pin_memory=%s) on the same files, %s: %.0f images/s, loader "
          "alone", p.versions.c_str(), p.workers, p.pin_memory ? "True" : "False (no CUDA)",
          p.file.c_str(), p.images_per_second);
  if (p.pipebench_images_per_second)
    appendf(out, "; pipebench's BM_Loader at %d worker%s: %.0f images/s (%.2fx)", p.workers,
            p.workers == 1 ? "" : "s", *p.pipebench_images_per_second,
            *p.pipebench_images_per_second / p.images_per_second);
  else
    appendf(out, "; the run has no BM_Loader at %d workers to set beside it", p.workers);
  appendf(out, ".%s%s%s%s)\n", p.left_out.empty() ? "" : " Left out of the comparison (no torchvision 0.14 equivalent): ",
          joined(p.left_out).c_str(), p.approximated.empty() ? "" : ". Approximated: ",
          joined(p.approximated).c_str());
}

// "27.70 ms" or "27.70 +-0.85 ms (95 %)".
std::string measured_text(const PredictionCheck& c) {
  std::string s;
  if (c.measured_ci_ms) appendf(s, "%.2f +-%.2f ms (95 %%)", c.measured_step_ms, *c.measured_ci_ms);
  else appendf(s, "%.2f ms", c.measured_step_ms);
  return s;
}

void check_text(std::string& out, const PredictionCheck& c) {
  if (c.at_workers_candidate) {
    appendf(out, "Check (the workers fix ran for real: the sweep at %d workers): ", c.workers);
  } else {
    appendf(out, "Check (the model against the sweep at %d workers; the workers candidate itself "
            "was not swept): ", c.workers);
  }
  appendf(out, "step predicted %.2f ms, measured %s (prediction error %+.1f %%%s); AU predicted "
          "%.1f %%, measured %.1f %%.\n", c.predicted_step_ms, measured_text(c).c_str(), c.error_pct,
          c.within_noise() ? ", within the measured step's interval: noise" : "",
          c.predicted_au_pct, c.measured_au_pct);
  if (c.over_tolerance() && c.within_noise())
    appendf(out, "The measured step's interval (+-%.2f ms) is wider than the prediction's error: "
            "this run cannot check the model; a larger --budget times more steps.\n", *c.measured_ci_ms);
  else if (c.over_tolerance())
    appendf(out, "Warning: the prediction is off by more than %.0f %%: the model misses something "
            "here (a busy machine, contention, the loader's own overhead, a per-sample cost measured on other "
            "images); trust the measured sweep over the table.\n", kCheckTolerancePct);
}

// A fix that ran end to end: its own prediction against that run.
void fix_check_text(std::string& out, const FixCheck& f) {
  const PredictionCheck& c = f.check;
  appendf(out, "Check (the %s fix ran for real, end to end at %d workers%s): step predicted %.2f ms, "
          "measured %s (prediction error %+.1f %%%s); AU predicted %.1f %%, measured %.1f %%.",
          f.label.c_str(), c.workers,
          f.priced_per_image ? "; priced before it ran from each image's cost, as in the tails above" : "",
          c.predicted_step_ms, measured_text(c).c_str(), c.error_pct,
          c.within_noise() ? ", within the measured step's interval: noise" : "",
          c.predicted_au_pct, c.measured_au_pct);
  if (c.over_tolerance() && !c.within_noise())
    appendf(out, " Off by more than the %.0f %% tolerance: trust the measured step.", kCheckTolerancePct);
  out += "\n";
}

}  // namespace

void append_what_if_text(std::string& out, const Report& r) {
  const WhatIf& w = r.what_if;
  if (w.empty()) {
    if (!w.note.empty()) appendf(out, "\nNo what-if table: %s.\n", w.note.c_str());
    if (w.peer) peer_text(out, *w.peer);
    return;
  }
  appendf(out, "\nWhat if (target AU >= %.0f %%, MLPerf Storage's; %.1f cores available; CPU per "
          "sample from %s):\n", kAuTargetPct, w.cores, w.cost_source.c_str());
  table_text(out, w);
  if (w.peer) peer_text(out, *w.peer);
  workers_text(out, w, !r.verdict.sweep.empty());
  appendf(out, "Recommendation: %s\n", w.recommendation.text.c_str());
  if (w.check) check_text(out, *w.check);
  if (w.check && w.check->over_tolerance() && !w.cold_sweep_note.empty())
    appendf(out, "Here %s.\n", w.cold_sweep_note.c_str());
  for (const auto& f : w.fix_checks) fix_check_text(out, f);
}

void append_trust_text(std::string& out, const Report& r) {
  const Trust& t = r.trust;
  // One line per cause, most consequential first, at most kTrustMaxLines; --verbose: every
  // per-case warning (report/trust.h).
  const auto lines = trust_lines(t, t.verbose);
  if (!lines.empty()) appendf(out, "\nTrust:\n");
  for (const auto& line : lines) appendf(out, "  %s\n", line.c_str());
  if (t.cv.empty()) return;
  appendf(out, "\nRepeatability (%d repetitions): CV of each stage case's real time over the "
          "repetitions:\n", t.repetitions);
  size_t width = 10;
  for (const auto& c : t.cv) width = std::max(width, c.case_name.size());
  for (const auto& c : t.cv)
    appendf(out, "  %-*s %6.1f %%%s\n", static_cast<int>(width), c.case_name.c_str(), c.cv_pct,
            c.noisy() ? "  noisy" : "");
  appendf(out, "(noisy: above %.0f %%, too noisy for compare.sh's default gate; what to expect on "
          "an idle machine: docs/repeatability.md.)\n", kNoisyCvPct);
}

}  // namespace pipebench::report
