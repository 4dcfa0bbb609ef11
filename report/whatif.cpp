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

// The step time the table prices against: the sweep's (each BM_EndToEnd case measures
// it), else the run's --compute-ms from the context.
double compute_ms_of(const BenchRun& run, const std::vector<SweepPoint>& sweep) {
  if (!sweep.empty()) {
    double sum = 0;
    for (const auto& p : sweep) sum += p.bound.compute_ms;
    return sum / static_cast<double>(sweep.size());
  }
  return run.number("compute_ms").value_or(0);
}

// One thread's CPU ms per sample of a BM_Sample case, by the counter `field` chose.
std::optional<double> sample_cpu_ms(const BenchRun& run, const std::string& name, bool us_per_image) {
  if (!us_per_image) return run.ms_per_item(name);
  auto us = run.value(name, CounterId::kUsPerImage);
  if (!us || !(*us > 0)) return std::nullopt;
  return *us / 1000.0;
}

// A paired case's fidelity counters (bench/paired_fidelity.h) into `cost`; nothing where the
// case has none (a price, an older record).
void read_fidelity(const BenchRun& run, const std::string& name, SampleCost& cost) {
  const auto samples = run.value(name, CounterId::kFidelitySamples);
  if (samples && *samples >= 1) {
    model::FidelitySummary f;
    f.samples = static_cast<std::size_t>(std::lround(*samples));
    const double share = run.value(name, CounterId::kFidelityIdenticalPct).value_or(0) / 100.0;
    f.identical = static_cast<std::size_t>(std::lround(share * static_cast<double>(f.samples)));
    f.psnr_median_db = run.value(name, CounterId::kFidelityPsnrMedianDb);
    f.psnr_p5_db = run.value(name, CounterId::kFidelityPsnrP5Db);
    f.ssim_median = run.value(name, CounterId::kFidelitySsimMedian);
    f.ssim_p5 = run.value(name, CounterId::kFidelitySsimP5);
    cost.fidelity = f;
  }
  cost.upsampled_today_pct = run.value(name, CounterId::kUpsampledTodayPct);
  cost.upsampled_pct = run.value(name, CounterId::kUpsampledCandidatePct);
}

// The what-if candidates measured beside BM_Sample/<pipeline> (their keys' variant), by
// kind as the catalogue says (model/catalogue.h): fixes and prices. A presized candidate
// keeps its resolution (the key's parameter, or its counter) and the copy's JPEG quality.
void read_candidates(const BenchRun& run, const std::string& pipeline, bool us_per_image,
                     WhatIfInputs& in) {
  const auto candidates = run.where([&](const model::CaseKey& k) {
    return k.family == model::Family::kSample && k.pipeline == pipeline && !k.variant.empty();
  });
  for (const CaseMeans* c : candidates) {
    const model::CandidateKind* kind = model::find_candidate(c->key.variant);
    if (kind == nullptr) continue;  // a kind this build does not know
    const std::string name = c->key.name();
    auto ms = sample_cpu_ms(run, name, us_per_image);
    if (!ms) continue;
    SampleCost cost{c->key.variant_label(), name, *ms};
    cost.variant = c->key.variant;
    cost.variant_param = c->key.variant_param;
    if (cost.variant == "presized") {
      const auto side = run.value(name, CounterId::kPresizeShorterSidePx);
      cost.kept_shorter_side_px = side ? static_cast<int>(std::lround(*side)) : c->key.presize_px;
      if (const auto q = run.value(name, CounterId::kPresizeJpegQuality)) cost.jpeg_quality = static_cast<int>(std::lround(*q));
    }
    if (const auto blocks = run.value(name, CounterId::kPairedBlocks); blocks && *blocks >= 1) {
      cost.paired_blocks = static_cast<int>(std::lround(*blocks));
      cost.paired_saving_ms = run.value(name, CounterId::kPairedSavingMs);
      cost.paired_ci_ms = run.value(name, CounterId::kPairedSavingCiMs);
    }
    read_fidelity(run, name, cost);
    in.fidelity_ms += run.value(name, CounterId::kFidelityMs).value_or(0);
    switch (kind->role) {
      case model::CandidateRole::kFix: in.fixes.push_back(std::move(cost)); break;
      case model::CandidateRole::kPrice: in.prices.push_back(std::move(cost)); break;
      case model::CandidateRole::kControl: in.control = std::move(cost); break;
    }
  }
  // The spec's batch operators, priced on the batch (bench/transform_bench.cpp): the saving
  // is the price per sample, its interval the batches' t interval over the batch's images.
  if (!in.today) return;
  const auto batch_ops = run.where([&](const model::CaseKey& k) {
    return k.family == model::Family::kTransform && k.pipeline == pipeline && k.occurrence >= 1;
  });
  for (const CaseMeans* c : batch_ops) {
    const std::string name = c->key.name();
    const auto ms = run.value(name, CounterId::kBatchMs), images = run.value(name, CounterId::kBatchImages);
    if (!ms || !images || !(*images >= 1)) continue;
    std::string label = "batch:" + c->key.op;
    if (c->key.occurrence > 1) label.append("#").append(std::to_string(c->key.occurrence));
    SampleCost cost{label, name, in.today->cpu_ms - *ms / *images};
    cost.variant = "batch";
    cost.variant_param = c->key.op;
    cost.per_batch = true;
    cost.batch_images = static_cast<int>(std::lround(*images));
    cost.paired_saving_ms = *ms / *images;
    if (const auto ci = run.value(name, CounterId::kBatchMsCi)) cost.paired_ci_ms = *ci / *images;
    cost.paired_blocks = static_cast<int>(std::lround(run.value(name, CounterId::kBatchIterations).value_or(1)));
    in.prices.push_back(std::move(cost));
  }
}

// The fixes that also ran end to end: BM_EndToEnd/<pipeline>/<kind>:<param>/<baseline>/
// workers:<w>, by their keys; the points from their counters.
void read_fix_points(const BenchRun& run, const std::string& pipeline, WhatIfInputs& in) {
  for (const auto& f : in.fixes) {
    const auto points = run.where([&](const model::CaseKey& k) {
      return k.family == model::Family::kEndToEnd && k.pipeline == pipeline && k.variant == f.variant &&
             k.variant_param == f.variant_param && k.callbacks.empty();
    });
    for (const CaseMeans* c : points) {
      const std::string name = c->key.name();
      const auto get = [&](CounterId id) { return run.value(name, id); };
      const auto workers = get(CounterId::kWorkers), data = get(CounterId::kDataMs), compute = get(CounterId::kComputeMs),
                 step = get(CounterId::kStepMs), au = get(CounterId::kAuPct);
      if (!workers || !data || !compute || !step || !au || !(*step > 0)) continue;
      SweepPoint p;
      p.workers = static_cast<int>(std::lround(*workers));
      p.bound.data_ms = *data;
      p.bound.compute_ms = *compute;
      p.bound.step_ms = *step;
      p.bound.au_pct = *au;
      p.step_ms_ci = get(CounterId::kStepMsCi);
      in.fix_points[f.label][p.workers] = p;
    }
  }
}

// Today's per-sample CPU: BM_Sample (its thread CPU, else its wall time), else the loader
// at its fewest workers (the workers' thread CPU per sample).
void read_today(const BenchRun& run, const std::string& pipeline,
                const std::map<int, std::string>& loaders, WhatIfInputs& in) {
  const std::string base = model::sample_case(pipeline).name();
  for (const bool us : {true, false}) {
    if (auto ms = sample_cpu_ms(run, base, us)) {
      in.today = SampleCost{"today", base, *ms};
      in.today_read_ms = run.value(base, CounterId::kReadMs);
      in.today_decode_ms = run.value(base, CounterId::kDecodeMs);
      in.today_transform_ms = run.value(base, CounterId::kTransformMs);
      in.cost_source = us ? base + " us_per_image (one thread's CPU time per image)"
                          : base + " items_per_second (one thread's wall time per image: "
                                   "the run predates us_per_image)";
      read_candidates(run, pipeline, us, in);
      return;
    }
  }
  if (!loaders.empty()) {
    const std::string& name = loaders.begin()->second;
    if (auto ms = run.value(name, CounterId::kSampleCpuMs); ms && *ms > 0) {
      in.today = SampleCost{"today", name, *ms};
      in.cost_source = name + " sample_cpu_ms (the workers' CPU per sample; no " + base +
                       " case, so no candidate fixes)";
      return;
    }
  }
  in.note = "no per-sample CPU cost: the run has neither " + base +
            " nor a loader case with sample_cpu_ms";
}

// --- on the accelerator (whatif.h, issue 29) ---------------------------------------------

// The run says it had no device (its gpu_available false; absent in a run written before it).
bool no_device(const BenchRun& run) { return run.flag("gpu_available") == std::optional<bool>(false); }

// Why a device case is missing, as far as the run says: "no device in this run (gpu: none
// (...))", else "not in this run" with the context's gpu quoted as it is.
std::string device_absence(const BenchRun& run) {
  const std::string gpu = run.context_or("gpu", "not recorded");
  if (no_device(run)) return "no device in this run (gpu: " + gpu + ")";
  if (run.flag("gpu_available")) return "not in this run (gpu: " + gpu + "; filtered out, or it failed)";
  return "not in this run (gpu: " + gpu + ")";
}

// A device operator's GPU ms per batch of `batch` (uint8 NHWC): its batch_ms counter.
std::optional<DeviceTime> device_op_time(const BenchRun& run, const std::string& op, int batch) {
  const std::string name =
      model::device_op_case(op, std::string(model::kDeviceFinishFormat), batch).name();
  const auto ms = run.value(name, CounterId::kBatchMs);
  if (!ms || !(*ms > 0)) return std::nullopt;
  return DeviceTime{op, name, *ms};
}

// The collate:uint8 fix among the run's candidates, or null.
SampleCost* uint8_fix(WhatIfInputs& in) {
  for (auto& f : in.fixes)
    if (f.variant == "collate" && f.variant_param == "uint8") return &f;
  return nullptr;
}

// "decode on the accelerator": BM_Decode/nvjpeg against the decode in today's sample.
void read_device_decode(const BenchRun& run, WhatIfInputs& in) {
  const std::string label = "decode on the accelerator";
  const std::string nv = model::decode_case("nvjpeg").name();
  const auto ips = run.value(nv, CounterId::kItemsPerSecond);
  if (!ips || !(*ips > 0)) {
    std::string why;
    if (no_device(run)) why = device_absence(run) + ": " + nv + " skipped";
    else if (run.context.count("nvjpeg"))  // a device, and what nvJPEG's loading said
      why = nv + " not in this run (nvjpeg: " + run.context_or("nvjpeg", "") + "; filtered out, or it failed)";
    else why = nv + " " + device_absence(run);
    in.device_not_measured.push_back({label, why});
    return;
  }
  DeviceDecode d;
  d.case_name = nv;
  d.images_per_second = *ips;
  d.host_cpu_ms = run.value(nv, CounterId::kUsPerImage).value_or(0) / 1000.0;
  const std::string turbo = model::decode_case("turbo_full").name();
  d.cpu_images_per_second = run.value(turbo, CounterId::kItemsPerSecond);
  const double wall = in.today_read_ms.value_or(0) + in.today_decode_ms.value_or(0) +
                      in.today_transform_ms.value_or(0);
  const auto turbo_us = run.value(turbo, CounterId::kUsPerImage);
  if (in.today_decode_ms && wall > 0) {
    d.cpu_decode_ms = in.today->cpu_ms * *in.today_decode_ms / wall;
    d.cpu_decode_source = "today's CPU x decode's share of " + in.today->case_name +
                          "'s wall time (read + decode + transform)";
  } else if (turbo_us && *turbo_us > 0) {
    d.cpu_decode_ms = *turbo_us / 1000.0;
    d.cpu_decode_source = turbo + " us_per_image (one thread's CPU, the same round of files)";
  } else {
    in.device_not_measured.push_back(
        {label, "no CPU decode to set " + nv + " against: " + in.today->case_name +
                    " has no decode_ms and the run has no " + turbo});
    return;
  }
  SampleCost c{label, nv, in.today->cpu_ms - d.cpu_decode_ms + d.host_cpu_ms, "device", "decode"};
  c.device_ms_per_batch = in.batch * d.gpu_ms_per_image();
  in.device.push_back(std::move(c));
  in.device_decode = d;
}

// The pipeline's operators the device can finish (batch_ops_device.h), by the key op of
// their CPU price: the device operators whose time each takes (the slowest: each batch runs
// one of them).
struct Movable {
  std::string_view variant, op;
  std::vector<std::string> device_ops;
};
const Movable kMovable[] = {
    {"without", "horizontal_flip", {"horizontal_flip"}},
    {"batch", "mixup", {"mixup"}},
    {"batch", "cutmix", {"cutmix"}},
    {"batch", "mixup_cutmix", {"mixup", "cutmix"}},
};

// "finish on the accelerator": collate:uint8's saving plus the CPU prices of the operators
// the device takes over, their device times added to the step.
void read_device_finish(const BenchRun& run, const std::string& pipeline, WhatIfInputs& in) {
  const std::string label = "finish on the accelerator";
  const std::string format(model::kDeviceFinishFormat);
  const std::string example = model::device_op_case("horizontal_flip", format, in.batch).name();
  if (no_device(run)) {
    in.device_not_measured.push_back(
        {label, device_absence(run) + ": the device batch operators (" + example + ", ...) skipped"});
    return;
  }
  const SampleCost* u8 = uint8_fix(in);
  if (u8 == nullptr) {
    in.device_not_measured.push_back(
        {label, "no uint8 batches in this run: no " + model::sample_case(pipeline, "collate", "uint8").name() +
                    " (the spec does not build with uint8 batches, or collates uint8 already)"});
    return;
  }
  DeviceFinish f;
  f.batch = in.batch;
  std::vector<const SampleCost*> parts = {u8};
  f.cpu_parts.push_back(u8->label);
  if (in.device_normalize) f.device.push_back(*in.device_normalize);
  else
    f.not_moved.push_back("normalize (on the device after the copy, as collate:uint8 does it; its time not "
                          "measured: no " + model::device_op_case(std::string(model::kDeviceNormalizeOp), format, in.batch).name() +
                          ", so not in the step)");
  for (const auto& p : in.prices) {
    const Movable* m = nullptr;
    for (const auto& candidate : kMovable)
      if (p.variant == candidate.variant && p.variant_param == candidate.op) m = &candidate;
    if (m == nullptr) {
      if (p.per_batch) f.not_moved.push_back(p.variant_param + " (no device version: stays on the CPU)");
      continue;
    }
    std::optional<DeviceTime> slowest;
    std::string missing;
    for (const auto& op : m->device_ops) {
      const auto t = device_op_time(run, op, in.batch);
      if (!t) missing = model::device_op_case(op, format, in.batch).name();
      else if (!slowest || t->ms_per_batch > slowest->ms_per_batch) slowest = t;
    }
    if (!missing.empty()) {
      f.not_moved.push_back(std::string(m->op) + " (stays on the CPU: " + missing + " not in this run)");
      continue;
    }
    slowest->what = m->op;
    if (m->device_ops.size() > 1) slowest->note = "the slowest of its device operators: each batch runs one";
    f.device.push_back(*slowest);
    f.cpu_parts.push_back(p.label);
    parts.push_back(&p);
  }
  if (f.device.empty()) {
    in.device_not_measured.push_back(
        {label, "no device operator of this pipeline timed in this run (" + example +
                    ", ...: filtered out, or failed; gpu: " + run.context_or("gpu", "not recorded") + ")"});
    return;
  }
  // The saving: the parts' paired savings added, their half widths in quadrature.
  double saving = 0, variance = 0;
  bool paired = true, interval = true;
  int blocks = 0;
  for (const SampleCost* p : parts) {
    saving += p->paired_saving_ms.value_or(in.today->cpu_ms - p->cpu_ms);
    if (!p->paired_saving_ms) paired = false;
    if (p->paired_ci_ms) variance += *p->paired_ci_ms * *p->paired_ci_ms;
    else interval = false;
    if (!p->per_batch && p->paired_blocks > 0) blocks = blocks == 0 ? p->paired_blocks : std::min(blocks, p->paired_blocks);
  }
  SampleCost c{label, u8->case_name, in.today->cpu_ms - saving, "device", "finish"};
  if (paired) {
    c.paired_saving_ms = saving;
    if (interval) c.paired_ci_ms = std::sqrt(variance);
    c.paired_blocks = std::max(blocks, 1);
  }
  for (const auto& t : f.device) c.device_ms_per_batch += t.ms_per_batch;
  in.device.push_back(std::move(c));
  in.device_finish = f;
}

void read_device(const BenchRun& run, const std::string& pipeline, WhatIfInputs& in) {
  in.gpu_available = run.flag("gpu_available").value_or(false);
  if (!in.today || in.batch <= 0) return;
  in.device_normalize = device_op_time(run, std::string(model::kDeviceNormalizeOp), in.batch);
  if (SampleCost* u8 = uint8_fix(in); u8 && in.device_normalize)
    u8->device_ms_per_batch = in.device_normalize->ms_per_batch;
  read_device_decode(run, in);
  read_device_finish(run, pipeline, in);
}

// k of the model (whatif.h): today's loader alone at the fewest swept count within the
// cores over the CPU model there (one worker, usually: the loader's own overhead, before
// any contention between workers, which the workers check must still see). None from a
// cold or throttled sweep, whose data time holds the fetch stall.
void measure_loader_overhead(WhatIfInputs& in) {
  if (!in.today || in.batch <= 0 || in.sweep_reads_storage) return;
  for (const auto& p : in.sweep) {
    if (in.cores > 0 && p.workers > in.cores + kEps) continue;
    const double model = predicted_data_ms(in.today->cpu_ms, in.batch, p.workers, in.cores);
    if (!(model > 0) || !(p.bound.data_ms > 0)) continue;
    in.loader_overhead = p.bound.data_ms / model;
    in.loader_overhead_workers = p.workers;
    return;
  }
}

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

bool fits(int workers, double cores) { return cores <= 0 || workers <= cores + kEps; }

// Where fixes and prices are priced: the sweep's largest count within the cores.
void choose_eval_workers(const WhatIfInputs& in, WhatIf& w) {
  char cores[32];
  std::snprintf(cores, sizeof cores, "%.1f", in.cores);
  if (!in.sweep.empty()) {
    for (const auto& p : in.sweep)
      if (fits(p.workers, in.cores)) w.eval_workers = p.workers;
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
      if (!fits(p.workers, in.cores))  // it ran oversubscribed on the cores there were
        r.cores_needed = static_cast<int>(std::ceil(in.cores - kEps));
      return r;
    }
  }
  const int model = workers_for_target(in.today->cpu_ms, in.batch, in.compute_ms, in.loader_overhead);
  // Only counts within the cores say the workers were too few; beyond them the cores were.
  int beyond = 0;
  for (const auto& p : in.sweep)
    if (fits(p.workers, in.cores)) beyond = p.workers + 1;
  const int w = std::max(model, beyond);
  const bool exceeds = !fits(w, in.cores);
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
                            fits(need, in.cores) ? in.cores : 0.0, in));
  }
  // On equal cores: first what changes nothing the model sees (workers, then another
  // decode), then presizing (it lowers the resolution kept), then the cheaper sample.
  const auto intrusiveness = [](const WhatIfRow& r) {
    return r.kind == CandidateKind::kWorkers ? 0 : r.kept_shorter_side_px > 0 ? 2 : 1;
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
  if (fits(best.cores_needed, in.cores)) {
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
    c.predicted_step_ms = predict_from_parts(data, p.bound.compute_ms, 2).step_ms;
    c.predicted_au_pct = 100.0 * p.bound.compute_ms / c.predicted_step_ms;
    c.measured_step_ms = p.bound.step_ms;
    c.measured_au_pct = p.bound.au_pct;
    c.measured_ci_ms = p.step_ms_ci;
    c.error_pct = model::prediction_error_pct(c.predicted_step_ms, c.measured_step_ms);
    return c;
  }
  return std::nullopt;
}

}  // namespace

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

WhatIfInputs what_if_inputs(const BenchRun& run, const std::string& pipeline, int batch,
                            double cores, const std::vector<SweepPoint>& sweep,
                            const std::map<int, std::string>& loaders) {
  WhatIfInputs in;
  in.batch = batch;
  in.cores = cores;
  in.sweep = sweep;
  std::sort(in.sweep.begin(), in.sweep.end(),
            [](const SweepPoint& a, const SweepPoint& b) { return a.workers < b.workers; });
  in.compute_ms = compute_ms_of(run, in.sweep);
  read_today(run, pipeline, loaders, in);
  read_fix_points(run, pipeline, in);
  read_device(run, pipeline, in);
  in.sweep_reads_storage = run.context_or("cache_mode", "warm") == "cold" ||
                           run.number("read_throttle_mib_s").value_or(0) > 0;
  measure_loader_overhead(in);
  in.min_psnr_db = run.number("min_psnr_db").value_or(model::kDefaultMinPsnrDb);
  if (in.note.empty() && !(in.compute_ms > 0))
    in.note = "no training step time: neither a BM_EndToEnd case nor compute_ms in the context";
  return in;
}

WhatIf build_what_if(const WhatIfInputs& in) {
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
  if (!in.today || !(in.compute_ms > 0) || in.batch <= 0) {
    if (w.note.empty()) w.note = "no per-sample cost, step time or batch size to price candidates with";
    return w;
  }
  choose_eval_workers(in, w);
  w.rows.push_back(price(CandidateKind::kToday, *in.today, w.eval_workers, in.cores, in));
  w.rows.push_back(workers_row(in));
  for (const auto& f : in.fixes) w.rows.push_back(price(CandidateKind::kFix, f, w.eval_workers, in.cores, in));
  for (const auto& d : in.device) w.rows.push_back(price(CandidateKind::kDevice, d, w.eval_workers, in.cores, in));
  w.device_decode = in.device_decode;
  w.device_finish = in.device_finish;
  w.device_not_measured = in.device_not_measured;
  w.device_normalize = in.device_normalize;
  w.gpu_available = in.gpu_available;
  for (const auto& p : in.prices) w.rows.push_back(price(CandidateKind::kPrice, p, w.eval_workers, in.cores, in));
  if (!in.prices.empty() && in.today_read_ms && in.today_decode_ms && in.today_transform_ms) {
    const double wall = *in.today_read_ms + *in.today_decode_ms + *in.today_transform_ms;
    if (wall > 0) {
      WhatIf::Parts parts;
      for (const auto& p : in.prices) parts.prices_ms += p.paired_saving_ms.value_or(in.today->cpu_ms - p.cpu_ms);
      parts.priced = static_cast<int>(in.prices.size());
      parts.stage_ms = in.today->cpu_ms * *in.today_transform_ms / wall;
      w.parts = parts;
    }
  }
  if (in.control) {  // the A/A control, priced as a candidate is; it must read zero
    w.rows.push_back(price(CandidateKind::kControl, *in.control, w.eval_workers, in.cores, in));
    const WhatIfRow& c = w.rows.back();
    if (c.saving_ci_ms && !c.within_noise) {
      char buf[400];
      std::snprintf(buf, sizeof buf,
                    "the A/A control (today against itself, paired as the candidates are) reads "
                    "%+.3f ms per sample (+- %.3f, 95 %%, %d blocks), not zero: two identical "
                    "pipelines measured %.1f %% apart (the machine's speed moving within the case, "
                    "or where each side's buffers lie in memory), so this run cannot rank candidates "
                    "whose savings are that small; rerun on a quieter machine, or read savings of "
                    "that size as noise", c.saving_ms_per_sample, *c.saving_ci_ms, c.paired_blocks,
                    std::abs(c.saving_pct));
      w.control_note = buf;
    }
  }
  w.recommendation = recommend(in, w);
  state_fidelity(w);
  w.check = check(in, w);
  for (const auto& f : in.fixes) {
    const auto points = in.fix_points.find(f.label);
    if (points == in.fix_points.end() || points->second.empty()) continue;
    const auto& by_workers = points->second;
    const bool recommended = w.recommendation.label == f.label;
    auto at = by_workers.end();
    if (recommended) at = by_workers.find(w.recommendation.workers);
    if (at == by_workers.end()) at = by_workers.find(w.eval_workers);
    if (at == by_workers.end()) at = std::prev(by_workers.end());
    const SweepPoint& p = at->second;
    FixCheck fc;
    fc.label = f.label;
    PredictionCheck& c = fc.check;
    c.workers = p.workers;
    c.predicted_step_ms = predict_from_parts(in.loader_overhead * predicted_data_ms(f.cpu_ms, in.batch, p.workers, in.cores),
                                             p.bound.compute_ms + f.device_ms_per_batch, 2).step_ms;
    c.predicted_au_pct = 100.0 * p.bound.compute_ms / c.predicted_step_ms;
    c.measured_step_ms = p.bound.step_ms;
    c.measured_au_pct = p.bound.au_pct;
    c.measured_ci_ms = p.step_ms_ci;
    c.error_pct = model::prediction_error_pct(c.predicted_step_ms, c.measured_step_ms);
    w.fix_checks.push_back(fc);
  }
  // Advice from a model that this very run contradicts must say so.
  if (w.check && w.check->over_tolerance() &&
      w.recommendation.kind != Recommendation::Kind::kComputeBoundAlready) {
    char buf[300];
    std::snprintf(buf, sizeof buf, " Caution: the model behind this is %+.0f %% off the step "
                  "measured at %d workers (check below); act on measured counts only, or rerun "
                  "on an idle machine.", w.check->error_pct, w.check->workers);
    w.recommendation.model_off = true;
    w.recommendation.text += buf;
  }
  return w;
}

}  // namespace pipebench::report
