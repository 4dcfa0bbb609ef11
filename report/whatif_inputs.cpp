// What the run measured, read into the what-if table's inputs (what_if_inputs,
// report/whatif.h): today's per-sample CPU, the candidates beside it (fixes, prices, the
// A/A control), the fixes that also ran end to end, the rows on the accelerator and the
// loader's overhead k. Pricing them is report/whatif.cpp's.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/catalogue.h"
#include "model/record.h"
#include "report/whatif.h"

namespace pipebench::report {
namespace {

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

// A paired case's fidelity counters (bench/cases/paired_fidelity.h) into `cost`; nothing where the
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
    if (cost.variant == "presized" || cost.variant == "presized_large") {
      const auto side = run.value(name, CounterId::kPresizeShorterSidePx);
      cost.kept_shorter_side_px = side ? static_cast<int>(std::lround(*side)) : c->key.presize_px;
      if (const auto q = run.value(name, CounterId::kPresizeJpegQuality)) cost.jpeg_quality = static_cast<int>(std::lround(*q));
      cost.large_min_megapixels = run.value(name, CounterId::kPresizeMinMegapixels).value_or(0);
      cost.large_changed_pct = run.value(name, CounterId::kPresizeChangedPct).value_or(0);
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
  // The spec's batch operators, priced on the batch (bench/cases/transform_bench.cpp): the saving
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
      if (const auto priced = get(CounterId::kFixPredStepMs); priced && *priced > 0)
        in.fix_priced_ms[f.label][p.workers] = *priced;
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
    if (!fits_in_cores(p.workers, in.cores)) continue;
    const double model = predicted_data_ms(in.today->cpu_ms, in.batch, p.workers, in.cores);
    if (!(model > 0) || !(p.bound.data_ms > 0)) continue;
    in.loader_overhead = p.bound.data_ms / model;
    in.loader_overhead_workers = p.workers;
    return;
  }
}

}  // namespace

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

}  // namespace pipebench::report
