// The what-if table, the recommendation, the checks and the trust warnings as JSON
// (add_what_if_json, report/format_whatif.h). Keys carry their unit.
#include <optional>
#include <utility>

#include "report/change_note.h"
#include "report/format_whatif.h"

namespace pipebench::report {
namespace {

using nlohmann::json;

const char* kind_name(CandidateKind k) {
  switch (k) {
    case CandidateKind::kToday: return "today";
    case CandidateKind::kWorkers: return "workers";
    case CandidateKind::kFix: return "fix";
    case CandidateKind::kPrice: return "operator_cost";
    case CandidateKind::kPeer: return "peer_loader";
    case CandidateKind::kStorage: return "storage";
    case CandidateKind::kControl: return "control";
    case CandidateKind::kDevice: return "device";
  }
  return "?";
}

const char* kind_name(Recommendation::Kind k) {
  switch (k) {
    case Recommendation::Kind::kNone: return "none";
    case Recommendation::Kind::kComputeBoundAlready: return "compute_bound_already";
    case Recommendation::Kind::kReachesTarget: return "reaches_target";
    case Recommendation::Kind::kShortOfTarget: return "short_of_target";
  }
  return "?";
}

template <typename T>
json optional_json(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

// {"samples", "identical_pct", "identical": true | "psnr_db": {median, p5}, "ssim": {...}}.
json fidelity_json(const std::optional<model::FidelitySummary>& f) {
  if (!f) return json();
  json o = {{"samples", f->samples}, {"identical_pct", 100.0 * f->identical_share()},
            {"identical", f->all_identical()}};
  if (f->psnr_median_db && f->psnr_p5_db) o["psnr_db"] = {{"median", *f->psnr_median_db}, {"p5", *f->psnr_p5_db}};
  if (f->ssim_median && f->ssim_p5) o["ssim"] = {{"median", *f->ssim_median}, {"p5", *f->ssim_p5}};
  return o;
}

// The table's own fields: the target, the model's inputs and the notes; rows apart.
json table_fields_json(const WhatIf& w) {
  json table = {{"au_target_pct", kAuTargetPct}, {"batch_size", w.batch},
                {"compute_ms_per_batch", w.compute_ms}, {"cores_available", w.cores},
                {"cpu_cost_source", w.cost_source}, {"evaluated_at_workers", w.eval_workers},
                {"evaluated_at", w.eval_reason}, {"rows", json::array()},
                {"loader_overhead", w.loader_overhead},
                {"loader_overhead_workers", w.loader_overhead_workers > 0 ? json(w.loader_overhead_workers) : json()}};
  if (!w.note.empty()) table["note"] = w.note;
  if (!w.cold_sweep_note.empty()) table["cold_sweep_note"] = w.cold_sweep_note;
  if (!w.control_note.empty()) table["control_note"] = w.control_note;
  table["min_psnr_db"] = w.min_psnr_db;
  table["fidelity_wall_ms"] = w.fidelity_ms;
  table["control_fidelity"] = fidelity_json(w.control_fidelity);
  if (w.control_fidelity && !w.control_fidelity->all_identical())
    table["control_fidelity_pairing_bug"] = true;
  return table;
}

// The fields every row has; a peer or storage row (a measured loader) has no per-sample
// CPU cost (report/peer.h, report/storage.h), a device row that never reaches the target
// no worker count.
json row_prediction_json(const WhatIfRow& row) {
  json o = {{"candidate", row.label}, {"kind", kind_name(row.kind)}, {"case", row.case_name},
            {"cpu_ms_per_sample", row.cpu_ms_per_sample}, {"workers", row.workers},
            {"data_ms_per_batch", row.data_ms}, {"step_ms_per_batch", row.step_ms},
            {"au_pct", row.au_pct}, {"images_per_second", row.images_per_second},
            {"saving_ms_per_sample", row.saving_ms_per_sample}, {"saving_pct", row.saving_pct},
            {"workers_for_au_target", row.workers_for_target}};
  if (row.kind == CandidateKind::kPeer || row.kind == CandidateKind::kStorage) {
    o["cpu_ms_per_sample"] = o["saving_ms_per_sample"] = o["saving_pct"] = nullptr;
    o["workers_for_au_target"] = nullptr;
  }
  if (row.kind == CandidateKind::kStorage) o["data_saving_ms_per_batch"] = row.data_saving_ms;
  if (row.kind == CandidateKind::kDevice || row.device_ms > 0) {
    o["device_ms_per_batch"] = row.device_ms;  // measured GPU ms added to the step
    if (row.workers_for_target == 0) o["workers_for_au_target"] = nullptr;  // never
  }
  return o;
}

// A row's pairing, kept resolution, fidelity and workers fields, where it has them.
void add_row_details_json(json& o, const WhatIfRow& row) {
  if (row.paired_blocks > 0) {
    o["paired_blocks"] = row.paired_blocks;
    o["saving_ci95_ms_per_sample"] = optional_json(row.saving_ci_ms);
    o["within_noise"] = row.within_noise;
  }
  if (row.per_batch) o["priced_per_batch"] = {{"images_per_batch", row.batch_images}, {"batches", row.paired_blocks}};
  if (row.kept_shorter_side_px > 0)
    o["kept_resolution"] = {{"shorter_side_px", row.kept_shorter_side_px},
                            {"jpeg_quality", row.jpeg_quality},
                            // presized_large: only the images above this size (MP), that share (%)
                            {"only_above_megapixels", row.variant == "presized_large" ? json(row.large_min_megapixels) : json()},
                            {"changed_pct", row.variant == "presized_large" ? json(row.large_changed_pct) : json()}};
  if (row.kind == CandidateKind::kFix || row.kind == CandidateKind::kDevice || row.kind == CandidateKind::kControl) {
    o["fidelity"] = fidelity_json(row.fidelity);  // null: not measured
    o["below_min_psnr"] = row.below_min_psnr;
    o["notes"] = change_note(row);
    if (row.upsampled_today_pct && row.upsampled_pct)
      o["upsampled_pct"] = {{"today", *row.upsampled_today_pct}, {"candidate", *row.upsampled_pct}};
  }
  if (row.kind == CandidateKind::kWorkers) {
    o["measured_in_sweep"] = row.measured;
    o["cores_needed"] = row.cores_needed;
    o["exceeds_cores_available"] = row.exceeds_cores;
    o["model_workers"] = optional_json(row.model_workers);
  }
}

json row_json(const WhatIfRow& row) {
  json o = row_prediction_json(row);
  add_row_details_json(o, row);
  return o;
}

// "device_not_measured", and the accelerator rows' sources where the run measured them.
void add_device_json(json& table, const WhatIf& w) {
  table["device_not_measured"] = json::array();
  for (const auto& n : w.device_not_measured)
    table["device_not_measured"].push_back({{"candidate", n.label}, {"reason", n.reason}});
  if (w.device_decode) {
    const DeviceDecode& d = *w.device_decode;
    table["device_decode"] = {{"case", d.case_name}, {"images_per_second", d.images_per_second},
                              {"gpu_ms_per_image", d.gpu_ms_per_image()},
                              {"host_cpu_ms_per_image", d.host_cpu_ms},
                              {"cpu_decode_ms_per_sample", d.cpu_decode_ms},
                              {"cpu_decode_source", d.cpu_decode_source},
                              {"cpu_images_per_second", optional_json(d.cpu_images_per_second)}};
  }
  if (w.device_finish) {
    const DeviceFinish& f = *w.device_finish;
    json ops = json::array();
    for (const auto& t : f.device) ops.push_back({{"operator", t.what}, {"case", t.case_name}, {"ms_per_batch", t.ms_per_batch}});
    table["device_finish"] = {{"device_ops", ops}, {"batch_size", f.batch}, {"cpu_savings", f.cpu_parts},
                              {"not_moved", f.not_moved}};
  }
  if (w.device_normalize)
    table["device_normalize"] = {{"case", w.device_normalize->case_name},
                                 {"ms_per_batch", w.device_normalize->ms_per_batch}};
}

json peer_json(const PeerSummary& p) {
  return {{"file", p.file}, {"versions", p.versions}, {"num_workers", p.workers},
          {"images_per_second", p.images_per_second},
          {"pipebench_loader_images_per_second", optional_json(p.pipebench_images_per_second)},
          {"pin_memory", p.pin_memory}, {"left_out", p.left_out},
          {"approximated", p.approximated}};
}

// The "what_if" object: the table's fields, its rows, the accelerator's sources, the parts
// and the peer loader.
json what_if_json(const WhatIf& w) {
  json table = table_fields_json(w);
  for (const auto& row : w.rows) table["rows"].push_back(row_json(row));
  add_device_json(table, w);
  if (w.parts)
    table["parts"] = {{"prices_ms_per_sample", w.parts->prices_ms},
                      {"operator_stage_ms_per_sample", w.parts->stage_ms},
                      {"operators_priced", w.parts->priced}, {"off_pct", w.parts->off_pct()}};
  if (w.peer) table["peer_loader"] = peer_json(*w.peer);
  return table;
}

json recommendation_json(const WhatIf& w) {
  const Recommendation& rec = w.recommendation;
  if (w.empty()) return json();
  return {{"kind", kind_name(rec.kind)}, {"candidate", rec.label}, {"workers", rec.workers},
          {"cores_needed", rec.cores_needed}, {"au_pct", rec.au_pct},
          {"model_off", rec.model_off}, {"images_per_second", rec.images_per_second},
          {"fidelity", rec.fidelity}, {"min_psnr_db", w.min_psnr_db}, {"text", rec.text}};
}

// A prediction against a measured step: the fields "check" and each of "fix_checks" share.
json prediction_check_json(const PredictionCheck& c) {
  return {{"workers", c.workers},
          {"predicted_step_ms", c.predicted_step_ms}, {"measured_step_ms", c.measured_step_ms},
          {"predicted_au_pct", c.predicted_au_pct}, {"measured_au_pct", c.measured_au_pct},
          {"prediction_error_pct", c.error_pct}, {"tolerance_pct", kCheckTolerancePct},
          {"over_tolerance", c.over_tolerance()},
          {"measured_step_ci95_ms", optional_json(c.measured_ci_ms)},
          {"within_noise", c.within_noise()}};
}

// "check" (the model against the sweep; null without one) and "fix_checks".
void add_checks_json(json& j, const WhatIf& w) {
  if (w.check) {
    j["check"] = prediction_check_json(*w.check);
    j["check"]["at_workers_candidate"] = w.check->at_workers_candidate;
  } else {
    j["check"] = nullptr;
  }
  j["fix_checks"] = json::array();
  for (const auto& f : w.fix_checks) {
    json o = prediction_check_json(f.check);
    o["candidate"] = f.label;
    o["priced_per_image"] = f.priced_per_image;
    j["fix_checks"].push_back(std::move(o));
  }
}

// "trust_warnings", "trust_warnings_grouped", "repetitions" and "cv_pct".
void add_trust_json(json& j, const Trust& t) {
  j["trust_warnings"] = json::array();
  for (const auto& warning : t.warnings)
    j["trust_warnings"].push_back({{"kind", kind_name(warning.kind)}, {"case", warning.case_name},
                                   {"text", warning.text}});
  j["trust_warnings_grouped"] = json::array();  // one per kind, most consequential first
  for (const auto& g : group_warnings(t))
    j["trust_warnings_grouped"].push_back({{"kind", kind_name(g.kind)}, {"cases", g.cases},
                                           {"warnings", g.warnings}, {"text", g.text}});
  j["repetitions"] = t.repetitions;
  j["cv_pct"] = json::array();
  for (const auto& c : t.cv)
    j["cv_pct"].push_back({{"case", c.case_name}, {"cv_pct", c.cv_pct}, {"noisy", c.noisy()}});
}

}  // namespace

void add_what_if_json(json& j, const Report& r) {
  j["what_if"] = what_if_json(r.what_if);
  j["recommendation"] = recommendation_json(r.what_if);
  add_checks_json(j, r.what_if);
  add_trust_json(j, r.trust);
}

}  // namespace pipebench::report
