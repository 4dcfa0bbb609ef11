// The what-if table of a pipebench run (issue 8): what each candidate change would give,
// from per-sample CPU costs measured in the same run; the recommendation; and the check of
// the model against the worker sweep, where the fix "more workers" was run for real.
//
// The model (model/bound.h's bound, with the loader's time predicted from CPU cost):
//   data_ms(p, w)  = k * p * batch / min(w, cores) ms per batch; p = CPU ms per sample
//   step_ms        = max(data_ms, compute_ms)      ms per batch (model/bound.h predict_from_parts)
//   au_pct         = 100 * compute_ms / step_ms    accelerator utilisation
//   images/s       = batch * 1000 / step_ms
// k = the loader against one thread's sample (its collate, hand-off and scheduling, and the
// whole dataset's images against BM_Sample's round: k < 1 where the round is costlier than
// the average image; photos-in deit_train, idle: 0.785), measured in the same run: today's loader alone (the sweep's data_ms) at the fewest swept count within
// the cores, over p * batch / min(w, cores) with today's p there; 1 without a sweep, or when
// the sweep read cold or throttled (its data time then holds the fetch stall, not CPU work:
// report/storage.h prices that). At the fewest count, so that what workers lose to each
// other at more (contention) still shows in the workers check. (photos-in, idle machine:
// k = 1.087 at 1 worker; the same loader at 2 workers measured 19.06 ms against k x 17.60 =
// 19.13.)
// cores = the context's cores_available (affinity and cgroup quota; a float), else
// hardware_threads, else unknown (then min(w, cores) = w). A count of workers predicted
// beyond this machine's cores is priced on as many cores as workers (one core each), and
// flagged (WhatIfRow::exceeds_cores).
// Target: AU >= 90 % (kAuTargetPct), MLPerf Storage's passing threshold (v1.0 rules: a
// run passes when accelerator utilisation is >= 90 % for ResNet-50 and 3D U-Net).
// Workers that reach it with cost p: the smallest w >= 1 with k * p * batch / w <= compute_ms /
// 0.9, i.e. ceil(0.9 * k * p * batch / compute_ms).
//
// Candidates, each only where the run measured it (bench/README.md, JSON contract):
//   today        BM_Sample/<pipeline>: the run's pipeline as it is;
//   workers      the smallest swept worker count whose measured AU >= 90 % (BM_EndToEnd),
//                else predicted beyond the sweep: the model's count, and at least one more
//                than every swept count within the cores (each was measured short of the
//                target; a count beyond the cores fell short for want of cores);
//   fix          BM_Sample/<pipeline>/decode:<mode>: the same spec, another decode;
//                BM_Sample/<pipeline>/presized:<N>: the same spec on a copy of the data
//                with every shorter side reduced to N px (pipebench-data presize; the
//                case's presize_shorter_side_px and presize_jpeg_quality counters). It
//                changes the resolution the model sees: the row states the one kept;
//                BM_Sample/<pipeline>/collate:uint8: uint8 batches, normalize after the
//                copy; its accelerator-side cost is the device normalize's measured time
//                where the run has one (below), else left out of the step and said so;
//   price        BM_Sample/<pipeline>/without:<op>[#k]: the spec without one per-sample
//                operator; BM_Transform/<op>/pipeline:<pipeline>[#k]: a batch operator of
//                the spec (mixup, cutmix, label smoothing) priced on the batch, its thread
//                CPU per batch / images per batch (batch_ms, batch_ms_ci, batch_images).
//                It changes what the model sees: what the operator costs, never a fix.
//                The prices together against today's operator stage (WhatIf::parts): how
//                far off they add up.
// On the accelerator (issue 29), each only where the run measured it on a device, else one
// line saying it was not measured and why (WhatIf::device_not_measured: "no device in this
// run (gpu: none (...)): BM_Decode/nvjpeg skipped"); never an estimate in its place:
//   decode on the accelerator   BM_Decode/nvjpeg (items_per_second: images/s, real time, the
//                round queued on one stream; us_per_image: the thread's CPU per image, nvJPEG's
//                Huffman stage) against the decode part of today's sample (today's CPU x
//                decode_ms / (read_ms + decode_ms + transform_ms) of BM_Sample/<pipeline>; else
//                BM_Decode/turbo_full's us_per_image): CPU per sample = today - that decode +
//                nvJPEG's host CPU; GPU ms per batch = batch x 1000 / nvJPEG's images/s;
//   finish on the accelerator   uint8 batches (collate:uint8's paired saving) with the
//                pipeline's horizontal flip and mixup / cutmix moved to the device: their CPU
//                prices (without:horizontal_flip, batch:<op>, paired) saved, their device
//                times (BM_Transform/<op>/device/uint8_nhwc/batch:<batch>, batch_ms: CUDA-event
//                ms per batch; mixup_cutmix: the slower of mixup and cutmix, as each batch runs
//                one) added, plus a device normalize where the run timed one. An operator
//                without its device time stays on the CPU (DeviceFinish::not_moved). The
//                saving's interval: the parts' half widths added in quadrature (independent
//                cases).
// A row's GPU time (WhatIfRow::device_ms) is added to the accelerator's work per batch:
//   step_ms = max(data_ms, compute_ms + device_ms)    au_pct = 100 * compute_ms / step_ms
// (AU counts the training step only, as everywhere in pipebench); such a row reaches the
// target only where compute_ms / (compute_ms + device_ms) >= 90 % (workers_for_target 0:
// never). collate:uint8 gets the device normalize's time the same way where the run has it.
// Device rows are priced, never recommended: the recommendation stays on the CPU side.
// The check: the workers fix is the sweep itself (measured AU against the model at that
// count); a fix that also ran end to end (BM_EndToEnd/<pipeline>/decode:auto/...) is
// checked the same way with its own per-sample cost (WhatIf::fix_checks).
// Per-sample CPU ms: BM_Sample's us_per_image / 1000 (thread CPU), for today and every
// candidate alike; a run older than that counter: 1000 / items_per_second (one thread's wall
// time) for all; no BM_Sample: the loader's sample_cpu_ms at its fewest workers (today and
// workers only). Fixes and prices are evaluated at one worker count: the sweep's largest
// count within the cores (WhatIf::eval_reason says which).
//
// Nothing here throws on a Report's inputs: a run without a per-sample cost or a compute
// time has no table, and WhatIf::note says why.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/bound.h"
#include "model/constants.h"
#include "model/fidelity.h"
#include "report/run.h"

namespace pipebench::report {

/// MLPerf Storage's accelerator-utilisation threshold, percent (model/constants.h).
inline constexpr double kAuTargetPct = model::kAuTargetPct;
/// The check flags a predicted step further than this from the measured one, percent
/// (issue 8: |prediction error| <= 5 %).
inline constexpr double kCheckTolerancePct = 5.0;

/// A per-sample CPU cost measured in the run.
struct SampleCost {
  std::string label;      ///< "today", "decode:auto", "without:normalize", ...
  std::string case_name;  ///< the case it was read from, e.g. "BM_Sample/x/decode:auto"
  double cpu_ms = 0;      ///< CPU ms per sample
  /// The candidate's kind and parameter (its case key: "decode", "auto"); "" for today.
  std::string variant, variant_param;
  /// Paired with today in the same case (bench: BM_Sample's A B B A blocks, model/paired.h):
  /// today minus the candidate, CPU ms per sample, and its 95 % interval's half width
  /// (absent with fewer than 2 blocks); paired_blocks 0 when not paired.
  std::optional<double> paired_saving_ms, paired_ci_ms;
  int paired_blocks = 0;
  /// presized:<N> and presized_large:<N> only: the kept resolution (shorter side, px) and
  /// the copy's JPEG quality; 0 for every other candidate.
  int kept_shorter_side_px = 0;
  int jpeg_quality = 0;
  /// presized_large:<N> only: only the images above this size were presized (MP), and
  /// that share of the round's images (%); 0 for a copy that presized every image.
  double large_min_megapixels = 0, large_changed_pct = 0;
  /// A batch operator's price (BM_Transform/<op>/pipeline:<name>): per batch / batch_images;
  /// paired_blocks then counts the batches timed. Its variant is then "batch", variant_param
  /// the operator (the key's op: "mixup_cutmix").
  bool per_batch = false;
  int batch_images = 0;
  /// GPU ms per batch the candidate adds to the accelerator's work (device rows; collate:uint8
  /// with a device normalize measured): measured on the run's device, 0 otherwise.
  double device_ms_per_batch = 0;
  /// What the candidate changes in the pixels (issue 35; bench/cases/paired_fidelity.h): its
  /// outputs against today's for the same images and draws, and the share of crops
  /// enlarged, today's and its own (%); absent where not measured (prices, older records).
  std::optional<model::FidelitySummary> fidelity;
  std::optional<double> upsampled_today_pct, upsampled_pct;
};

/// A time measured on the run's device, for a row that moves work there.
struct DeviceTime {
  std::string what;        ///< "horizontal_flip", "normalize", "mixup_cutmix", ...
  std::string case_name;   ///< the case read (mixup_cutmix: the slower of mixup's and cutmix's)
  double ms_per_batch = 0;  ///< GPU ms per batch of the run's batch size (counter batch_ms)
  std::string note;         ///< how it was read, where not plainly ("the slower of ...")
};

/// "decode on the accelerator": BM_Decode/nvjpeg against the decode in today's sample.
struct DeviceDecode {
  std::string case_name;          ///< BM_Decode/nvjpeg
  double images_per_second = 0;   ///< its items_per_second: images/s, real time, one stream
  double host_cpu_ms = 0;         ///< its us_per_image / 1000: thread CPU per image, ms (Huffman)
  double cpu_decode_ms = 0;       ///< the decode part of today's sample, CPU ms per sample
  std::string cpu_decode_source;  ///< where cpu_decode_ms comes from, in words
  /// BM_Decode/turbo_full's items_per_second (one CPU thread, the same round of files), to
  /// set beside nvJPEG's rate; absent when the run has no such case.
  std::optional<double> cpu_images_per_second;
  double gpu_ms_per_image() const { return 1000.0 / images_per_second; }
};

/// "finish on the accelerator": uint8 batches, and the device flips, normalizes and mixes.
struct DeviceFinish {
  std::vector<DeviceTime> device;       ///< the device operators measured (uint8 NHWC, the run's batch)
  std::vector<std::string> cpu_parts;   ///< the paired CPU savings added: "collate:uint8", ...
  std::vector<std::string> not_moved;   ///< "<op> (why)": operators left where they run today
  int batch = 0;
};

/// A device row the run did not measure, and why.
struct NotMeasured {
  std::string label;   ///< "decode on the accelerator", "finish on the accelerator"
  std::string reason;  ///< "no device in this run (gpu: none (no driver)): BM_Decode/nvjpeg skipped"
};

/// What the model is given: everything from the run, nothing derived yet.
struct WhatIfInputs {
  int batch = 0;                 ///< samples per batch
  double compute_ms = 0;         ///< training step per batch, ms
  double cores = 0;              ///< cores available (0 = unknown)
  std::vector<SweepPoint> sweep;  ///< measured BM_EndToEnd points, sorted by workers
  std::optional<SampleCost> today;
  std::string cost_source;        ///< which counter the costs come from, in words
  std::vector<SampleCost> fixes;   ///< decode:<mode> and presized:<N> candidates
  std::vector<SampleCost> prices;  ///< without:<op> candidates
  std::optional<SampleCost> control;  ///< control:aa, today against itself (the A/A test)
  /// --min-psnr (dB): a fix whose 5th-percentile PSNR is below it is not recommended. The
  /// run's recorded value (context number min_psnr_db; pipebench-report --min-psnr sets it
  /// over), else model::kDefaultMinPsnrDb (docs/what-if.md says why).
  double min_psnr_db = 0;
  /// The run's fidelity work, ms of wall time in all (every case's fidelity_ms).
  double fidelity_ms = 0;
  /// The rows on the accelerator (above), their costs with device_ms_per_batch; what they
  /// rest on; the rows the run could not measure, and why.
  std::vector<SampleCost> device;
  std::optional<DeviceDecode> device_decode;
  std::optional<DeviceFinish> device_finish;
  std::vector<NotMeasured> device_not_measured;
  /// A device normalize of uint8 batches at the run's batch (BM_Transform/normalize/device/
  /// uint8_nhwc/batch:<batch>), where the run has one: collate:uint8's accelerator share.
  std::optional<DeviceTime> device_normalize;
  bool gpu_available = false;  ///< the context's gpu_available
  /// Today's BM_Sample read_ms, decode_ms and transform_ms (wall ms per sample): the
  /// stages' shares of today's sample (WhatIf::parts).
  std::optional<double> today_read_ms, today_decode_ms, today_transform_ms;
  /// Fixes run end to end, BM_EndToEnd/<pipeline>/<label>/<baseline>/workers:<w>, by
  /// label, then by workers: the points' counters (workers, data_ms, compute_ms, step_ms,
  /// au_pct).
  std::map<std::string, std::map<int, SweepPoint>> fix_points;
  /// The same points' fix_pred_step_ms where bench wrote one: the step model's price of the
  /// fix made before it ran, image by image (a presized copy: model/copy_fix_price.h), ms
  /// per step. The fix's check uses it, so that the check and the tails section give one
  /// prediction; without it the check prices the fix's mean CPU per sample.
  std::map<std::string, std::map<int, double>> fix_priced_ms;
  std::string note;               ///< why `today` or compute_ms is missing, if it is
  /// The sweep read cold or through the read throttle (context cache_mode, read_throttle_mib_s):
  /// its data time holds the fetch stall, so no k from it.
  bool sweep_reads_storage = false;
  /// k of the model above (1 = none measured).
  double loader_overhead = 1.0;
  int loader_overhead_workers = 0;  ///< where k was measured; 0 = not measured
};

/// kPeer: another loader measured outside the run (report/peer.h), priced from its images/s.
/// kStorage: a loader measured cold in the run's storage study (report/storage.h: the files
/// as stored, and "pack into shards"), priced from its measured data ms per batch.
/// kControl: today against itself, paired as a candidate is (the A/A test).
/// kDevice: work moved to the accelerator, priced with its measured GPU time in the step.
enum class CandidateKind { kToday, kWorkers, kFix, kPrice, kPeer, kStorage, kControl, kDevice };

/// One row of the table: the model's prediction for one candidate, per batch.
struct WhatIfRow {
  CandidateKind kind = CandidateKind::kToday;
  std::string label;
  std::string case_name;            ///< the BM_Sample case of its cost
  std::string variant, variant_param;  ///< the candidate's key fields (SampleCost)
  double cpu_ms_per_sample = 0;
  int kept_shorter_side_px = 0;     ///< presized:<N>: the resolution kept (SampleCost)
  int jpeg_quality = 0;             ///< presized:<N>: the copy's JPEG quality
  double large_min_megapixels = 0;  ///< presized_large:<N>: presized above this size, MP (SampleCost)
  double large_changed_pct = 0;     ///< presized_large:<N>: the round's images it presized, %
  int workers = 0;                  ///< the count it is priced at
  double data_ms = 0, step_ms = 0;  ///< predicted, ms per batch
  double au_pct = 0;                ///< predicted
  double images_per_second = 0;     ///< predicted
  double saving_ms_per_sample = 0;  ///< CPU vs today (0 for workers: no sample is cheaper)
  double saving_pct = 0;            ///< of today's per-sample CPU
  /// A paired saving's 95 % half width, ms per sample (SampleCost::paired_ci_ms), and the
  /// blocks it rests on; within_noise: its interval holds 0 (or it has no interval though
  /// paired): reported as noise, never as an effect, never recommended.
  std::optional<double> saving_ci_ms;
  int paired_blocks = 0;
  bool per_batch = false;           ///< a batch operator's price (SampleCost::per_batch)
  int batch_images = 0;
  bool within_noise = false;
  /// Workers reaching kAuTargetPct with this cost (model); 0: never, the row's device time
  /// alone keeps AU below it.
  int workers_for_target = 0;
  /// GPU ms per batch added to the accelerator's work (SampleCost::device_ms_per_batch):
  /// step_ms = max(data_ms, compute_ms + device_ms).
  double device_ms = 0;
  /// Cores the row needs: one per worker, except a swept count above the cores available,
  /// which reached the target on those cores (oversubscribed: the available ones, rounded up).
  int cores_needed = 0;
  /// SampleCost's fidelity and crops enlarged, carried to the table (issue 35).
  std::optional<model::FidelitySummary> fidelity;
  std::optional<double> upsampled_today_pct, upsampled_pct;
  /// Excluded from the recommendation: its 5th-percentile PSNR is below --min-psnr.
  bool below_min_psnr = false;
  bool measured = false;            ///< workers: the count comes from the measured sweep
  std::optional<int> model_workers;  ///< workers: the model's own count, when the sweep overrode it
  bool exceeds_cores = false;       ///< cores_needed > the cores available
  /// kStorage: data ms per batch saved against the files read cold (measured; 0 otherwise).
  double data_saving_ms = 0;
};

/// The one-sentence advice, and what it rests on.
struct Recommendation {
  enum class Kind { kNone, kComputeBoundAlready, kReachesTarget, kShortOfTarget };
  Kind kind = Kind::kNone;
  std::string label;         ///< "workers" or the fix's label
  /// What it changes in the pixels, in words (issue 35): "changes nothing the model sees",
  /// "bit-identical ...", "PSNR ... dB median, ... dB p5", or "not measured".
  std::string fidelity;
  int workers = 0;           ///< the worker count it recommends
  int cores_needed = 0;      ///< WhatIfRow::cores_needed of that option
  double au_pct = 0;         ///< predicted (measured for kComputeBoundAlready)
  double images_per_second = 0;
  /// The check (below) found the model more than kCheckTolerancePct off this run's
  /// measured step: the sentence then says so.
  bool model_off = false;
  std::string text;          ///< the sentence
};

/// The workers fix applied for real: the sweep's measured point against the model.
struct PredictionCheck {
  int workers = 0;
  bool at_workers_candidate = false;  ///< false: the candidate was not swept; checked at
                                      ///< the sweep's largest count within the cores
  double predicted_step_ms = 0, measured_step_ms = 0;
  double predicted_au_pct = 0, measured_au_pct = 0;
  double error_pct = 0;               ///< 100 * (predicted - measured) / measured step
  std::optional<double> measured_ci_ms;  ///< the measured step's 95 % half width (step_ms_ci)
  bool over_tolerance() const;        ///< |error_pct| > kCheckTolerancePct
  /// The prediction lies within the measured step's interval: the difference is noise.
  bool within_noise() const {
    return measured_ci_ms && std::abs(predicted_step_ms - measured_step_ms) <= *measured_ci_ms;
  }
};

/// "Your framework's loader" (report/peer.h): what it is and how pipebench's own loader
/// did at the same worker count.
struct PeerSummary {
  std::string file;                  ///< the torch_peer.py JSON it was read from
  std::string versions;              ///< "torch 1.13.0, torchvision 0.14.1"
  int workers = 0;                   ///< the num_workers its row is priced at
  double images_per_second = 0;      ///< measured by the peer, loader alone
  std::optional<double> pipebench_images_per_second;  ///< BM_Loader at the same count
  bool pin_memory = false;           ///< pin_memory took effect (a CUDA device)
  std::vector<std::string> left_out;      ///< "op (reason)": not in the comparison
  std::vector<std::string> approximated;  ///< "op (reason)"
};

/// A fix applied for real (bench: BM_EndToEnd/<pipeline>/<label>/...): its predicted step
/// (the model with the fix's CPU per sample, at the point's workers and compute time)
/// against the measured loop; at the recommended worker count when the fix is the
/// recommendation and that count ran, else at the table's count (WhatIf::eval_workers),
/// else at the largest count that ran.
struct FixCheck {
  std::string label;
  PredictionCheck check;   ///< at_workers_candidate false; workers = the point's
  /// The prediction is the fix's own price made image by image before it ran
  /// (WhatIfInputs::fix_priced_ms); false: from its mean CPU per sample, as its table row.
  bool priced_per_image = false;
};

struct WhatIf {
  int batch = 0;
  double compute_ms = 0, cores = 0;
  double loader_overhead = 1.0;  ///< k (WhatIfInputs::loader_overhead)
  int loader_overhead_workers = 0;
  int eval_workers = 0;          ///< where fixes and prices are priced
  std::string eval_reason;       ///< why that count, in words
  std::string cost_source;
  std::vector<WhatIfRow> rows;   ///< today, workers, fixes, prices (in that order)
  Recommendation recommendation;
  std::optional<PredictionCheck> check;
  std::vector<FixCheck> fix_checks;  ///< fixes that ran end to end
  std::optional<PeerSummary> peer;  ///< with pipebench-report --peer
  std::string note;              ///< non-empty when there is no table, and why
  /// Set when the sweep itself read cold or throttled (WhatIfInputs::sweep_reads_storage):
  /// the model prices CPU work only, so its check against that sweep also measures the
  /// fetch stall.
  std::string cold_sweep_note;
  /// The accelerator rows' sources (WhatIfInputs), for their notes.
  std::optional<DeviceDecode> device_decode;
  std::optional<DeviceFinish> device_finish;
  std::vector<NotMeasured> device_not_measured;
  std::optional<DeviceTime> device_normalize;
  bool gpu_available = false;
  /// Non-empty when the A/A control's interval excludes 0: the run cannot rank candidates
  /// (the machine's speed moved within the case), and by how much it moved.
  std::string control_note;
  /// Fidelity (issue 35): the --min-psnr applied, the fidelity passes' wall time (ms, in
  /// all), and the A/A control's own: a control not identical is a pairing bug.
  double min_psnr_db = 0;
  double fidelity_ms = 0;
  std::optional<model::FidelitySummary> control_fidelity;
  /// Do the operators' prices add up to what today's sample spends in its operators? The
  /// prices (each per-sample operator's without: saving, each batch operator's price), CPU
  /// ms per sample, against today's operator stage: today's CPU per sample times the
  /// transform stage's share of BM_Sample's wall time (read + decode + transform), so both
  /// sides are CPU. Off when operators interact (a fused kernel, caches) or when some
  /// operator has no price (one that sets the size or the dtype cannot be removed).
  struct Parts {
    double prices_ms = 0, stage_ms = 0;
    int priced = 0;  ///< operators priced
    double off_pct() const { return stage_ms > 0 ? 100.0 * (prices_ms - stage_ms) / stage_ms : 0; }
  };
  std::optional<Parts> parts;

  bool empty() const { return rows.empty(); }
};

/// Whether `workers` (one core each) fit in `cores`; cores <= 0 is unknown (every count
/// fits), and an exact fit from rounding (2.0000000001 cores) stays a fit.
bool fits_in_cores(int workers, double cores);
/// data_ms(p, w) of the model above: the step model's closed form (model::mean_data_ms with
/// cores; cores <= 0 means unknown, min(w, cores) = w). Throws std::invalid_argument for a
/// cost not a finite ms >= 0.
double predicted_data_ms(double cpu_ms_per_sample, int batch, int workers, double cores);
/// The smallest worker count reaching kAuTargetPct with that cost (>= 1); `overhead` = k:
/// model::mean_workers_for_target(k x p, batch, compute_ms, kAuTargetPct), the one formula.
int workers_for_target(double cpu_ms_per_sample, int batch, double compute_ms, double overhead = 1.0);

/// The inputs of `pipeline` (the context's recipe) in `run`: sweep, the report's
/// BM_EndToEnd points; loaders, its BM_Loader cases by worker count (the fallback cost).
WhatIfInputs what_if_inputs(const BenchRun& run, const std::string& pipeline, int batch,
                            double cores, const std::vector<SweepPoint>& sweep,
                            const std::map<int, std::string>& loaders);

/// The table, the recommendation and the check.
WhatIf build_what_if(const WhatIfInputs& in);

}  // namespace pipebench::report
