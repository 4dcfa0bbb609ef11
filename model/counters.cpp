#include "model/counters.h"

#include <array>
#include <iterator>
#include <stdexcept>

#include "model/catalogue.h"

namespace pipebench::model {
namespace {

using C = CounterId;
using U = Unit;
using F = CounterFamily;

// The schema: one row per CounterId, in its order. A row: id, name, unit, family, meaning,
// and the console's unit (U::kUs for a ms counter of fractions of a millisecond).
constexpr std::array<CounterSpec, static_cast<std::size_t>(C::kCount_)> kCounterTable = {{
    // Google Benchmark's row fields.
    {C::kRealTime, "real_time", U::kRowTime, F::kRow, "wall time per iteration, in the row's time_unit", U::kRowTime},
    {C::kCpuTime, "cpu_time", U::kRowTime, F::kRow, "the benchmark thread's CPU time per iteration, in the row's time_unit", U::kRowTime},
    {C::kIterations, "iterations", U::kCount, F::kRow, "iterations Google Benchmark ran (one round, image, batch or step each)", U::kCount},
    // Rates.
    {C::kItemsPerSecond, "items_per_second", U::kImagesPerSecond, F::kRate, "images/s of the case's timed work; a paired BM_Sample case: the candidate's own, from its thread CPU (never the A B B A pair's)", U::kImagesPerSecond},
    {C::kBytesPerSecond, "bytes_per_second", U::kBytesPerSecond, F::kRate, "input bytes/s (read, decode) or bytes written (collate, H2D, device operators)", U::kBytesPerSecond},
    {C::kSourceMegapixelsPerSecond, "source_megapixels_per_second", U::kMegapixelsPerSecond, F::kRate, "decode: source pixels/s, whatever the scale decoded", U::kMegapixelsPerSecond},
    {C::kGBPerSecond, "GB_per_second", U::kGBPerSecond, F::kRate, "H2D and device operators: the batch's bytes moved per second", U::kGBPerSecond},
    // Per image of a round.
    {C::kUsPerImage, "us_per_image", U::kUs, F::kImage, "thread CPU per image (one thread; wall time for BM_Read; a paired case: the candidate's own)", U::kUs},
    {C::kImagesPerRound, "images_per_round", U::kImages, F::kImage, "images in the case's round (bench/run/image_round.h)", U::kImages},
    {C::kPresizeShorterSidePx, "presize_shorter_side_px", U::kPx, F::kImage, "`presized:N`: the shorter side the presized copy keeps", U::kPx},
    {C::kPresizeJpegQuality, "presize_jpeg_quality", U::kCount, F::kImage, "`presized:N`: the presized copy's JPEG quality, 1-100", U::kCount},
    {C::kPresizeMinMegapixels, "presize_min_megapixels", U::kMegapixels, F::kImage, "`presized_large:N`: only the images above this size were presized (model/large_images.h)", U::kMegapixels},
    {C::kPresizeChangedPct, "presize_changed_pct", U::kPercent, F::kImage, "`presized_large:N`: the round's images the copy re-encoded (the others are the originals, byte for byte)", U::kPercent},
    // The loader's stages, per sample.
    {C::kReadMs, "read_ms", U::kMs, F::kStage, "mean wall time per sample reading the file", U::kUs},
    {C::kDecodeMs, "decode_ms", U::kMs, F::kStage, "mean wall time per sample decoding", U::kUs},
    {C::kTransformMs, "transform_ms", U::kMs, F::kStage, "mean wall time per sample in the per-sample operators", U::kUs},
    {C::kCollateMs, "collate_ms", U::kMs, F::kStage, "mean wall time per sample writing it into the batch; no counter when collated in place", U::kUs},
    {C::kBatchOpsMs, "batch_ops_ms", U::kMs, F::kStage, "batch operators' wall time per sample of the completed batches; only with batch operators", U::kUs},
    {C::kH2dMs, "h2d_ms", U::kMs, F::kStage, "host-to-device copy per sample; only with a copy", U::kUs},
    {C::kOpMs, "op:{}_ms", U::kMs, F::kStage, "per-operator timer: wall time per sample in one planned step (fused operators joined by +)", U::kUs},
    {C::kOpPct, "op:{}_pct", U::kPercent, F::kStage, "that step's share of the sample's time", U::kPercent},
    // The loader's window.
    {C::kWorkers, "workers", U::kCount, F::kLoader, "loader worker threads", U::kCount},
    {C::kDataMs, "data_ms", U::kMs, F::kLoader, "the loader alone, ms per batch (end to end: the mean of the windows before and after the loop)", U::kMs},
    {C::kSampleCpuMs, "sample_cpu_ms", U::kMs, F::kLoader, "the workers' thread CPU per sample", U::kUs},
    {C::kPreemptedMs, "preempted_ms", U::kMs, F::kLoader, "per sample, the stages' wall time beyond their CPU time (waiting for a core)", U::kUs},
    {C::kBatchBytes, "batch_bytes", U::kBytes, F::kLoader, "bytes of one batch as collated (or as copied, H2D and device operators)", U::kBytes},
    {C::kBatchUint8, "batch_uint8", U::kFlag, F::kLoader, "1 when the batch is uint8 (collate:uint8), 0 for float32", U::kFlag},
    {C::kWallUsPerImage, "wall_us_per_image", U::kUs, F::kLoader, "the window's wall time per image produced", U::kUs},
    {C::kProcessCpuMs, "process_cpu_ms", U::kMs, F::kLoader, "this process's CPU per batch produced, every thread", U::kMs},
    {C::kConsumerCpuMs, "consumer_cpu_ms", U::kMs, F::kLoader, "the consumer's (the benchmark loop's thread) CPU per batch", U::kMs},
    {C::kWorkersCpuMs, "workers_cpu_ms", U::kMs, F::kLoader, "the workers' CPU per batch (every other thread but the system sampler's)", U::kMs},
    {C::kCpuCoresUsed, "cpu_cores_used", U::kCores, F::kLoader, "this process's CPU time over the window's wall time", U::kCores},
    {C::kConsumerWaitMs, "consumer_wait_ms", U::kMs, F::kLoader, "the consumer's wait for a batch, per batch", U::kUs},
    {C::kWorkerWaitMs, "worker_wait_ms", U::kMs, F::kLoader, "the workers' wait for room in the prefetch queue, per batch", U::kUs},
    {C::kReadThrottleMibS, "read_throttle_mib_s", U::kMiBPerSecond, F::kLoader, "--read-throttle: the emulated storage's bandwidth", U::kMiBPerSecond},
    {C::kPrefetchDepthBatches, "prefetch_depth_batches", U::kCount, F::kLoader, "a tail fix case (prefetch:N, delivery:out_of_order): the batches its loader keeps in flight (the run's --prefetch, or N)", U::kCount},
    {C::kSamplesTimed, "samples_timed", U::kCount, F::kLoader, "samples whose cost the loader-alone windows timed one by one (the sample_*_ms distribution's size)", U::kCount},
    {C::kSampleMsMean, "sample_mean_ms", U::kMs, F::kLoader, "one sample's cost in the loader-alone windows (read + pipeline + collate, wall, on its worker): the mean", U::kUs},
    {C::kSampleMsP50, "sample_p50_ms", U::kMs, F::kLoader, "that cost's median", U::kUs},
    {C::kSampleMsP95, "sample_p95_ms", U::kMs, F::kLoader, "that cost's 95th percentile", U::kUs},
    {C::kSampleMsP99, "sample_p99_ms", U::kMs, F::kLoader, "that cost's 99th percentile", U::kUs},
    {C::kSampleMsMax, "sample_max_ms", U::kMs, F::kLoader, "that cost's largest", U::kMs},
    {C::kCostliestMs, "costliest:{}_ms", U::kMs, F::kLoader, "one of the costliest files (its path under --data), its mean cost per visit", U::kMs},
    {C::kCostFitFiles, "cost_fit_files", U::kCount, F::kLoader, "files the loader timed whose header was read: the points of the cost fit on their pixels (model/cost_fit.h, bench/cases/dataset_costs.h)", U::kCount},
    {C::kCostFitR2, "cost_fit_r2", U::kRatio, F::kLoader, "the pooled cost line's R^2 (1 - residual / total sum of squares) over those files", U::kRatio},
    {C::kCostFitMsPerMp, "cost_fit_ms_per_mp", U::kMsPerMegapixel, F::kLoader, "the pooled line's slope: ms per sample per megapixel of the file", U::kMsPerMegapixel},
    {C::kCostsFittedPct, "costs_fitted_pct", U::kPercent, F::kLoader, "share of the costs the step model replayed that the fit priced (files the loader did not time, with a residual drawn from the timed files'); 0 when the timed visits were the distribution (at least 90 % of the files this rank loads timed)", U::kPercent},
    // The training loop.
    {C::kBatchSize, "batch_size", U::kImages, F::kLoop, "--batch: images per batch as configured", U::kImages},
    {C::kImagesPerBatch, "images_per_batch", U::kImages, F::kLoop, "images a batch held as delivered (short batches count as they are)", U::kImages},
    {C::kComputeMs, "compute_ms", U::kMs, F::kLoop, "the training step on a resident batch, per batch", U::kMs},
    {C::kComputeGflop, "compute_gflop", U::kGflop, F::kLoop, "a real step's floating-point work per batch; no counter for an emulated one", U::kGflop},
    {C::kStepMs, "step_ms", U::kMs, F::kLoop, "the measured loop (loader + step), per batch", U::kMs},
    {C::kStepMsCi, "step_ms_ci", U::kMs, F::kLoop, "step_ms's 95 % t interval half width over blocks of prefetch + 1 steps", U::kMs},
    {C::kStepMsBlocks, "step_ms_blocks", U::kCount, F::kLoop, "the blocks step_ms_ci is made of", U::kCount},
    {C::kStepP99Ms, "step_p99_ms", U::kMs, F::kLoop, "the loop's 99th percentile step (Hyndman-Fan 7 over its steps): the tail a mean step hides", U::kMs},
    {C::kBoundMs, "bound_ms", U::kMs, F::kLoop, "the predicted mean step (model/step_model.h: from the timed per-sample costs, else max(data_ms, compute_ms) with the callbacks)", U::kMs},
    {C::kAuPct, "au_pct", U::kPercent, F::kLoop, "accelerator utilisation: compute_ms / step_ms", U::kPercent},
    {C::kStallPct, "stall_pct", U::kPercent, F::kLoop, "100 - au_pct", U::kPercent},
    {C::kPredictionErrorPct, "prediction_error_pct", U::kPercent, F::kLoop, "(bound_ms - step_ms) / step_ms", U::kPercent},
    {C::kDataDriftPct, "data_drift_pct", U::kPercent, F::kLoop, "the loader alone after the loop against before; beyond +-5 % the report warns", U::kPercent},
    {C::kDataWorkDriftPct, "data_work_drift_pct", U::kPercent, F::kLoop, "the workers' CPU per sample in the loader-alone window after the loop against before: how much of data_drift_pct the samples' own work explains (other images, not a slower machine)", U::kPercent},
    {C::kAloneSampleCpuMs, "alone_sample_cpu_ms", U::kMs, F::kLoop, "the workers' CPU per sample in the loader-alone windows (data_ms's)", U::kUs},
    {C::kLoopCpuDriftPct, "loop_cpu_drift_pct", U::kPercent, F::kLoop, "the workers' CPU per sample in the loop against the loader-alone windows", U::kPercent},
    {C::kLoopWorkDriftPct, "loop_work_drift_pct", U::kPercent, F::kLoop, "the files the loop met against the loader-alone windows' visits, each at its file's mean cost in those windows: how much of loop_cpu_drift_pct the samples' own work explains (a heavy-tailed dataset), not the machine; absent when under half of the loop's samples were timed alone", U::kPercent},
    {C::kSyncMs, "sync_ms", U::kMs, F::kLoop, "mpirun: the gradient synchronisation per step", U::kMs},
    {C::kSyncCpuMs, "sync_cpu_ms", U::kMs, F::kLoop, "mpirun: the synchronisation's CPU on the loop's thread, per step", U::kMs},
    {C::kSyncModelMs, "sync_model_ms", U::kMs, F::kLoop, "--sync=emulated: the modelled collective per step", U::kMs},
    {C::kRegionMs, "region:{}_ms", U::kMs, F::kLoop, "the loop's phase timed with RegionTimer (Batch, IO, Forward, Other, Comm), mean per step", U::kMs},
    {C::kRegionP99Ms, "region:{}_p99_ms", U::kMs, F::kLoop, "that phase's 99th percentile", U::kMs},
    {C::kPredStepP50Ms, "pred_step_p50_ms", U::kMs, F::kLoop, "the step model's median step (from the timed per-sample costs)", U::kMs},
    {C::kPredStepP95Ms, "pred_step_p95_ms", U::kMs, F::kLoop, "the step model's 95th percentile step", U::kMs},
    {C::kPredStepP99Ms, "pred_step_p99_ms", U::kMs, F::kLoop, "the step model's 99th percentile step (against step_p99_ms)", U::kMs},
    {C::kPredAuPct, "pred_au_pct", U::kPercent, F::kLoop, "the step model's AU: compute_ms / bound_ms", U::kPercent},
    {C::kPredStallPct, "pred_stall_pct", U::kPercent, F::kLoop, "100 - pred_au_pct", U::kPercent},
    {C::kTailStallSharePct, "tail_stall_share_pct", U::kPercent, F::kLoop, "the share of the predicted stall the costliest files cause (the stall less the stall with them at the median cost)", U::kPercent},
    {C::kPredStepDeepPrefetchMs, "pred_step_deep_prefetch_ms", U::kMs, F::kLoop, "a tail fix priced by the step model: the mean step with twice the prefetch depth (batch_bytes more host memory per added batch)", U::kMs},
    {C::kPredStepOutOfOrderMs, "pred_step_out_of_order_ms", U::kMs, F::kLoop, "a tail fix priced by the step model: the mean step with ready batches delivered out of order (PyTorch's in_order=False; changes the order samples reach the model)", U::kMs},
    {C::kFixPredStepMs, "fix_pred_step_ms", U::kMs, F::kLoop, "a tail fix case: the step model's prediction of its step made before it ran, from today's case's timed costs at the same workers (a loader fix: that case's pred_step_deep_prefetch_ms or pred_step_out_of_order_ms; a presized copy: each image's cost from the copy's paired case, model/copy_fix_price.h; decode:auto: each timed file's cost at the fix's ratio on it, measured or from its header, model/ratio_fix_price.h), against this case's step_ms", U::kMs},
    {C::kFixPredictionErrorPct, "fix_prediction_error_pct", U::kPercent, F::kLoop, "(fix_pred_step_ms - step_ms) / step_ms", U::kPercent},
    {C::kFixHostMib, "fix_host_mib", U::kMiB, F::kLoop, "prefetch:N: the host memory the deeper prefetch adds, (N - --prefetch) x batch_bytes", U::kMiB},
    {C::kFixCostRatio, "fix_cost_ratio", U::kRatio, F::kLoop, "a presized copy's case: today's loader cost per visit over one thread's CPU per sample (the paired case's), over the images both timed: the factor on the copy's per-image costs in its price; decode:auto's: the fix's cost over today's, summed over today's timed files (model/ratio_fix_price.h)", U::kRatio},
    {C::kFixCostMatched, "fix_cost_matched", U::kImages, F::kLoop, "the images that ratio was taken over (at least model::kMinMatchedImages); decode:auto's: today's timed files whose ratio was measured (its paired round, the probe), not predicted from the header", U::kImages},
    {C::kFixCostMeasuredPct, "fix_cost_measured_pct", U::kPercent, F::kLoop, "decode:auto's case: today's cost of the files whose ratio was measured, % of every timed file's", U::kPercent},
    {C::kFixProbedFiles, "fix_probed_files", U::kImages, F::kLoop, "decode:auto's case: today's costliest files this case timed on both pipelines before its loader started (bench/cases/fix_probe.h)", U::kImages},
    // Training extras.
    {C::kCallbackMs, "callback:{}_ms", U::kMs, F::kCallbacks, "one callback's time on the loop's thread per step (a sync one's work, an async one's hand-off)", U::kUs},
    {C::kCallbackEvery, "callback:{}_every", U::kCount, F::kCallbacks, "that callback's every=N: it runs every N steps (the step model's input)", U::kCount},
    {C::kCallbacksMs, "callbacks_ms", U::kMs, F::kCallbacks, "every callback's time on the loop's thread per step", U::kUs},
    {C::kCallbacksPct, "callbacks_pct", U::kPercent, F::kCallbacks, "callbacks_ms's share of the step", U::kPercent},
    {C::kCallbacksAsync, "callbacks_async", U::kFlag, F::kCallbacks, "1 when every callback of the set is async", U::kFlag},
    // Paired cases.
    {C::kPairedTodayUs, "paired_today_us", U::kUs, F::kPaired, "today's (A's) thread CPU per image in the same case", U::kUs},
    {C::kPairedSavingMs, "paired_saving_ms", U::kMs, F::kPaired, "A - B: the CPU the candidate saves per sample", U::kUs},
    {C::kPairedSavingCiMs, "paired_saving_ci_ms", U::kMs, F::kPaired, "the saving's 95 % t interval half width (two blocks or more)", U::kUs},
    {C::kPairedRatio, "paired_ratio", U::kRatio, F::kPaired, "B / A", U::kRatio},
    {C::kPairedRatioLo, "paired_ratio_lo", U::kRatio, F::kPaired, "the ratio's 95 % interval, low end", U::kRatio},
    {C::kPairedRatioHi, "paired_ratio_hi", U::kRatio, F::kPaired, "the ratio's 95 % interval, high end", U::kRatio},
    {C::kPairedBlocks, "paired_blocks", U::kCount, F::kPaired, "blocks the estimate is made of", U::kCount},
    {C::kPairedRounds, "paired_rounds", U::kCount, F::kPaired, "rounds per iteration", U::kCount},
    {C::kPairedByPosition, "paired_by_position", U::kFlag, F::kPaired, "1: the interval by round position (two rounds or more); 0: over the blocks", U::kFlag},
    {C::kPairedRoundShare, "paired_round_share", U::kRatio, F::kPaired, "the round's share of the dataset (1: all of it)", U::kRatio},
    // Fidelity (issue 35): the candidate's pixels against today's, same images and draws,
    // measured outside the timed runs (transforms/fidelity.h, model/fidelity.h).
    {C::kFidelitySamples, "fidelity_samples", U::kCount, F::kPaired, "samples whose outputs were compared (today's against the candidate's, float 0-255 before normalize); absent where no fidelity applies (`without:<op>`, an output not 0-255 pixels)", U::kCount},
    {C::kFidelityIdenticalPct, "fidelity_identical_pct", U::kPercent, F::kPaired, "share of those samples bit-identical (the A/A control: 100, else a pairing bug)", U::kPercent},
    {C::kFidelityPsnrMedianDb, "fidelity_psnr_median_db", U::kDb, F::kPaired, "PSNR median over the samples not identical (peak 255); absent when every sample is identical", U::kDb},
    {C::kFidelityPsnrP5Db, "fidelity_psnr_p5_db", U::kDb, F::kPaired, "PSNR 5th percentile over those samples: the worst 5 %", U::kDb},
    {C::kFidelitySsimMedian, "fidelity_ssim_median", U::kRatio, F::kPaired, "SSIM (Wang et al. 2004, 11 x 11 Gaussian, sigma 1.5) median over the samples not identical", U::kRatio},
    {C::kFidelitySsimP5, "fidelity_ssim_p5", U::kRatio, F::kPaired, "SSIM 5th percentile over those samples", U::kRatio},
    {C::kFidelityMs, "fidelity_ms", U::kMs, F::kPaired, "wall time of the case's fidelity work (outside the timed runs), in all", U::kMs},
    {C::kUpsampledTodayPct, "upsampled_today_pct", U::kPercent, F::kPaired, "share of today's crops whose source window is smaller than the output (enlarged)", U::kPercent},
    {C::kUpsampledCandidatePct, "upsampled_candidate_pct", U::kPercent, F::kPaired, "the same share for the candidate (`presized:N`: today's windows scaled to the smaller copy)", U::kPercent},
    // Batch operators.
    {C::kBatchMs, "batch_ms", U::kMs, F::kBatch, "a batch operator's time per batch (thread CPU; CUDA events on the device)", U::kMs},
    {C::kBatchMsCi, "batch_ms_ci", U::kMs, F::kBatch, "batch_ms's 95 % t interval half width over the iterations", U::kMs},
    {C::kBatchImages, "batch_images", U::kImages, F::kBatch, "images per batch", U::kImages},
    {C::kBatchIterations, "batch_iterations", U::kCount, F::kBatch, "batches batch_ms is the mean of", U::kCount},
    // Overhead pairs.
    {C::kBatches, "batches", U::kCount, F::kOverhead, "batches timed over the on/off pairs", U::kCount},
    {C::kOnMs, "on_ms", U::kMs, F::kOverhead, "per batch with the instrument on", U::kMs},
    {C::kOffMs, "off_ms", U::kMs, F::kOverhead, "per batch with it off", U::kMs},
    {C::kOverheadPct, "overhead_pct", U::kPercent, F::kOverhead, "(on - off) / off", U::kPercent},
    {C::kOverheadCiPct, "overhead_ci_pct", U::kPercent, F::kOverhead, "its 95 % t interval half width over the pairs", U::kPercent},
    {C::kPairs, "pairs", U::kCount, F::kOverhead, "on/off pairs", U::kCount},
    {C::kSamplerCores, "sampler_cores", U::kCores, F::kOverhead, "the system sampler thread's CPU over wall time", U::kCores},
    {C::kSamplerCostPct, "sampler_cost_pct", U::kPercent, F::kOverhead, "the sampler's CPU as a share of the loader's", U::kPercent},
    // The system sampler.
    {C::kCpuUtilPctMean, "cpu_util_pct_mean", U::kPercent, F::kSystem, "the machine's CPU (all processes, /proc/stat), mean over the case", U::kPercent},
    {C::kCpuUtilPctMax, "cpu_util_pct_max", U::kPercent, F::kSystem, "its highest sample", U::kPercent},
    {C::kCpuBusyCoresMean, "cpu_busy_cores_mean", U::kCores, F::kSystem, "the machine's busy cores, mean", U::kCores},
    {C::kCpuUserPctMean, "cpu_user_pct_mean", U::kPercent, F::kSystem, "of all cores, in user mode (user + nice)", U::kPercent},
    {C::kCpuSystemPctMean, "cpu_system_pct_mean", U::kPercent, F::kSystem, "of all cores, in the kernel (system + irq + softirq)", U::kPercent},
    {C::kCpuCoreUtilPctMax, "cpu_core_util_pct_max", U::kPercent, F::kSystem, "the busiest core's utilisation over the case", U::kPercent},
    {C::kRssMibMax, "rss_mib_max", U::kMiB, F::kSystem, "this process's resident memory, peak of the samples", U::kMiB},
    {C::kMemAvailableMibMin, "mem_available_mib_min", U::kMiB, F::kSystem, "the host's available memory, lowest sample", U::kMiB},
    {C::kDiskReadMibPerS, "disk_read_mib_per_s", U::kMiBPerSecond, F::kSystem, "reads of the dataset's block device (/proc/diskstats; absent on tmpfs or overlay)", U::kMiBPerSecond},
    {C::kDiskReadIops, "disk_read_iops", U::kPerSecond, F::kSystem, "read operations of that device per second", U::kPerSecond},
    {C::kProcessReadMibPerS, "process_read_mib_per_s", U::kMiBPerSecond, F::kSystem, "this process's reads from storage (/proc/self/io): 0 means a warm page cache", U::kMiBPerSecond},
    {C::kNetRxMibPerS, "net_rx_mib_per_s", U::kMiBPerSecond, F::kSystem, "network bytes received, every interface but lo", U::kMiBPerSecond},
    {C::kNetTxMibPerS, "net_tx_mib_per_s", U::kMiBPerSecond, F::kSystem, "network bytes sent, every interface but lo", U::kMiBPerSecond},
    {C::kNetIfaceRxMibPerS, "net:{}_rx_mib_per_s", U::kMiBPerSecond, F::kSystem, "received on one interface", U::kMiBPerSecond},
    {C::kNetIfaceTxMibPerS, "net:{}_tx_mib_per_s", U::kMiBPerSecond, F::kSystem, "sent on one interface", U::kMiBPerSecond},
    {C::kVoluntarySwitchesPerS, "voluntary_switches_per_s", U::kPerSecond, F::kSystem, "this process's voluntary context switches (a thread blocked)", U::kPerSecond},
    {C::kInvoluntarySwitchesPerS, "involuntary_switches_per_s", U::kPerSecond, F::kSystem, "its involuntary ones (the scheduler took the core)", U::kPerSecond},
    {C::kContextSwitchesPerS, "context_switches_per_s", U::kPerSecond, F::kSystem, "both together", U::kPerSecond},
    {C::kMajorFaults, "major_faults", U::kCount, F::kSystem, "this process's major page faults during the case", U::kCount},
    {C::kGpuUtilPctMean, "gpu_util_pct_mean", U::kPercent, F::kSystem, "GPU 0's utilisation through NVML, mean", U::kPercent},
    {C::kGpuUtilPctMax, "gpu_util_pct_max", U::kPercent, F::kSystem, "GPU 0's utilisation, highest sample", U::kPercent},
    {C::kGpuMemUsedMibMax, "gpu_mem_used_mib_max", U::kMiB, F::kSystem, "GPU 0's memory used, peak", U::kMiB},
    {C::kGpuPcieRxMibPerS, "gpu_pcie_rx_mib_per_s", U::kMiBPerSecond, F::kSystem, "GPU 0's PCIe receive throughput", U::kMiBPerSecond},
    {C::kGpuPcieTxMibPerS, "gpu_pcie_tx_mib_per_s", U::kMiBPerSecond, F::kSystem, "GPU 0's PCIe transmit throughput", U::kMiBPerSecond},
    {C::kGpuSmClockMhzMean, "gpu_sm_clock_mhz_mean", U::kMHz, F::kSystem, "GPU 0's SM clock, mean", U::kMHz},
    // Data-parallel runs.
    {C::kWorldSize, "world_size", U::kCount, F::kRanks, "ranks of the job", U::kCount},
    {C::kDataMsMean, "data_ms_mean", U::kMs, F::kRanks, "the ranks' mean data_ms (data_ms itself is the slowest rank's)", U::kMs},
    {C::kAuPctMin, "au_pct_min", U::kPercent, F::kRanks, "the lowest rank's AU", U::kPercent},
    {C::kAuPass, "au_pass", U::kFlag, F::kRanks, "1 when the ranks' mean AU reaches the target (model/constants.h)", U::kFlag},
    {C::kImagesPerSecondTotal, "images_per_second_total", U::kImagesPerSecond, F::kRanks, "every rank's images/s together", U::kImagesPerSecond},
    {C::kLoadImbalance, "load_imbalance", U::kRatio, F::kRanks, "the slowest rank's data_ms over the ranks' mean", U::kRatio},
    {C::kSlowestRank, "slowest_rank", U::kCount, F::kRanks, "the rank with the largest data_ms", U::kCount},
    {C::kStragglerPredMs, "straggler_pred_ms", U::kMs, F::kRanks, "the synchronised step predicted from every rank's batch times (queue model)", U::kMs},
    {C::kStragglerIidMaxMs, "straggler_iid_max_ms", U::kMs, F::kRanks, "the same, as the expected maximum of independent draws", U::kMs},
    {C::kStragglerPredErrorPct, "straggler_pred_error_pct", U::kPercent, F::kRanks, "the queue model's error against step_ms", U::kPercent},
    {C::kStragglerIidErrorPct, "straggler_iid_error_pct", U::kPercent, F::kRanks, "the iid model's error against step_ms", U::kPercent},
    {C::kRankImagesPerSecond, "images_per_second", U::kImagesPerSecond, F::kRanks, "a rank's own images/s (written as `rank<k>_images_per_second` only)", U::kImagesPerSecond},
    {C::kSyncWaitMs, "sync_wait_ms", U::kMs, F::kRanks, "a rank's wait in the synchronisation per step (`rank<k>_sync_wait_ms` only)", U::kMs},
    {C::kRankFigure, "rank{}", U::kOfFigure, F::kRanks, "`rank<k>_<figure>`: rank k's figure (model/rank_fields.h), in the figure's unit", U::kOfFigure},
    // RegionTimer rows.
    {C::kTimerCount, "count", U::kCount, F::kRegion, "times the region was entered", U::kCount},
    {C::kTimerTotalMs, "total_ms", U::kMs, F::kRegion, "the region's total time", U::kMs},
    {C::kTimerMeanMs, "mean_ms", U::kMs, F::kRegion, "its mean per entry", U::kMs},
    {C::kTimerP50Ms, "p50_ms", U::kMs, F::kRegion, "its median", U::kMs},
    {C::kTimerP99Ms, "p99_ms", U::kMs, F::kRegion, "its 99th percentile", U::kMs},
}};

constexpr bool ids_in_order() {
  for (std::size_t i = 0; i < kCounterTable.size(); ++i)
    if (static_cast<std::size_t>(kCounterTable[i].id) != i) return false;
  return true;
}
static_assert(ids_in_order(), "kCounterTable: one row per CounterId, in the enum's order");

constexpr std::array<CounterId, 6> kStageCounters = {C::kReadMs, C::kDecodeMs, C::kTransformMs,
                                                     C::kCollateMs, C::kBatchOpsMs, C::kH2dMs};
static_assert(kStageCounters.size() == std::size(kStageNames), "one counter per loader stage");

constexpr std::string_view kPlaceholder = "{}";

}  // namespace

std::span<const CounterSpec> counter_table() { return kCounterTable; }

const CounterSpec& counter_spec(CounterId id) { return kCounterTable.at(static_cast<std::size_t>(id)); }

bool is_pattern(const CounterSpec& spec) { return spec.name.find(kPlaceholder) != std::string_view::npos; }

std::string_view counter_name(CounterId id) {
  const CounterSpec& s = counter_spec(id);
  if (is_pattern(s)) throw std::invalid_argument("counter " + std::string(s.name) + " needs its part");
  return s.name;
}

std::string counter_name(CounterId id, std::string_view part) {
  const CounterSpec& s = counter_spec(id);
  const std::size_t at = s.name.find(kPlaceholder);
  if (at == std::string_view::npos) throw std::invalid_argument("counter " + std::string(s.name) + " takes no part");
  if (part.empty()) throw std::invalid_argument("counter " + std::string(s.name) + ": empty part");
  std::string out(s.name.substr(0, at));
  out += part;
  out += s.name.substr(at + kPlaceholder.size());
  return out;
}

std::optional<CounterMatch> find_counter(std::string_view name) {
  const CounterSpec* best = nullptr;
  std::size_t best_literal = 0;
  for (const CounterSpec& s : kCounterTable) {
    const std::size_t at = s.name.find(kPlaceholder);
    if (at == std::string_view::npos) {
      if (s.name == name) return CounterMatch{&s, ""};
      continue;
    }
    const std::string_view prefix = s.name.substr(0, at), suffix = s.name.substr(at + kPlaceholder.size());
    if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix))
      continue;
    // The longest literal wins: region:IO_p99_ms is region:{}_p99_ms's, not region:{}_ms's.
    if (!best || prefix.size() + suffix.size() > best_literal) {
      best = &s;
      best_literal = prefix.size() + suffix.size();
    }
  }
  if (!best) return std::nullopt;
  const std::size_t at = best->name.find(kPlaceholder);
  const std::size_t tail = best->name.size() - at - kPlaceholder.size();
  return CounterMatch{best, std::string(name.substr(at, name.size() - at - tail))};
}

namespace {

// rank<k>_<figure>: the figure's entry, or nullptr.
const CounterSpec* rank_figure(const CounterMatch& m) {
  const std::size_t sep = m.part.find('_');
  if (sep == std::string::npos || sep == 0) return nullptr;
  for (std::size_t i = 0; i < sep; ++i)
    if (m.part[i] < '0' || m.part[i] > '9') return nullptr;
  const auto figure = find_counter(std::string_view(m.part).substr(sep + 1));
  return figure && figure->spec->unit != Unit::kOfFigure ? figure->spec : nullptr;
}

std::optional<Unit> unit_as(std::string_view name, bool shown) {
  const auto m = find_counter(name);
  if (!m) return std::nullopt;
  const CounterSpec* s = m->spec;
  if (s->unit == Unit::kOfFigure) s = rank_figure(*m);
  if (!s) return std::nullopt;
  return shown ? s->shown : s->unit;
}

}  // namespace

std::optional<Unit> unit_of(std::string_view name) { return unit_as(name, false); }

std::optional<Unit> shown_unit_of(std::string_view name) { return unit_as(name, true); }

std::string_view unit_text(Unit unit) {
  switch (unit) {
    case Unit::kMs: return "ms";
    case Unit::kUs: return "us";
    case Unit::kRowTime: return "time_unit";
    case Unit::kImagesPerSecond: return "images/s";
    case Unit::kBytesPerSecond: return "bytes/s";
    case Unit::kMegapixelsPerSecond: return "MP/s";
    case Unit::kGBPerSecond: return "GB/s";
    case Unit::kMiBPerSecond: return "MiB/s";
    case Unit::kPerSecond: return "1/s";
    case Unit::kBytes: return "bytes";
    case Unit::kMiB: return "MiB";
    case Unit::kPercent: return "%";
    case Unit::kRatio: return "ratio";
    case Unit::kCount: return "count";
    case Unit::kImages: return "images";
    case Unit::kFlag: return "0/1";
    case Unit::kCores: return "cores";
    case Unit::kMHz: return "MHz";
    case Unit::kPx: return "px";
    case Unit::kGflop: return "GFLOP";
    case Unit::kDb: return "dB";
    case Unit::kMegapixels: return "MP";
    case Unit::kMsPerMegapixel: return "ms/MP";
    case Unit::kOfFigure: return "the figure's";
  }
  return "?";
}

std::string_view family_text(CounterFamily family) {
  switch (family) {
    case CounterFamily::kRow: return "Google Benchmark's row fields";
    case CounterFamily::kRate: return "rates";
    case CounterFamily::kImage: return "per image (read, decode, transform, sample cases)";
    case CounterFamily::kStage: return "loader stages, per sample";
    case CounterFamily::kLoader: return "the loader's window (loader and end-to-end cases)";
    case CounterFamily::kLoop: return "the training loop (end-to-end and train-step cases)";
    case CounterFamily::kCallbacks: return "training extras (end-to-end cases with callbacks)";
    case CounterFamily::kPaired: return "paired cases (`BM_Sample/<pipeline>/<candidate>`: B against today's A)";
    case CounterFamily::kBatch: return "batch operators, per batch";
    case CounterFamily::kOverhead: return "instrument overhead (BM_StageTimers, BM_SystemSampler)";
    case CounterFamily::kSystem: return "system metrics (loader and end-to-end cases)";
    case CounterFamily::kRanks: return "data-parallel runs (mpirun: rank 0's BM_EndToEnd row)";
    case CounterFamily::kRegion: return "RegionTimer rows (a user's loop)";
  }
  return "?";
}

CounterId stage_counter(std::size_t index) { return kStageCounters.at(index); }

std::string counters_markdown() {
  std::string out;
  CounterFamily family = kCounterTable.front().family;
  bool first = true;
  for (const CounterSpec& s : kCounterTable) {
    if (first || s.family != family) {
      family = s.family;
      out += first ? "" : "\n";
      out += "### " + std::string(family_text(family)) + "\n\n";
      out += "| counter | unit | console | meaning |\n| --- | --- | --- | --- |\n";
      first = false;
    }
    out += "| `" + std::string(s.name) + "` | " + std::string(unit_text(s.unit)) + " | " +
           std::string(unit_text(s.shown)) + " | " + std::string(s.meaning) + " |\n";
  }
  return out;
}

}  // namespace pipebench::model
