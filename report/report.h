// Building the verdict of a pipebench run (what `pipebench-report` prints), from a BenchRun
// (report/run.h) and the bound arithmetic of model/bound.h.
//
// What it reads from the run, by case key (model/case_key.h; the names below are the keys'
// names), with RECIPE the context's `recipe` (default imagenet_train):
//   - the sweep: BM_EndToEnd/RECIPE/<baseline>/workers:<w> (any baseline: cuda:cnn too), each with the counters
//     data_ms, compute_ms, step_ms (ms per batch) and items_per_second; worker_wait_ms
//     (all workers' idle time, ms per batch) where the run has it;
//   - the loader: BM_Loader/RECIPE/workers:<w>; the one with the fewest workers gives the
//     per-sample stage costs read_ms, decode_ms, transform_ms, collate_ms, batch_ops_ms,
//     h2d_ms (ms per sample; a stage that is missing or 0 is left out);
//   - one worker's per-sample cost: BM_Sample/RECIPE (ms = 1000 / items_per_second), else
//     the loader at 1 worker;
//   - faster variants: the run's `pipeline_variants` (the spec's declared
//     `variants: [{recipe: R, fixes: STAGE}]`, written by bench as data); each one whose
//     BM_Sample/R and BM_Sample/<spec name> were both measured is a candidate
//     (pipebench::Alternative). A file written before the run record has none, and
//     Report::spec_note says why when it has a pipeline_spec;
//   - the design notes' findings: BM_Loader at 1 worker against the most workers within the
//     cores available; BM_Transform/random_mask/dilation:conv and :shifts, and
//     BM_Sample/casestudy and casestudy_shifts.
//   - the what-if table, its recommendation and check (report/whatif.h), and the trust
//     checks (report/trust.h): physical floor, contention, busy machine, CV table.
// Context keys used: recipe, baseline, dataset, batch_size, hardware_threads, crop_size,
// pipeline_spec, cores_available, compute_ms, busy_machine, other_processes_cpu_cores,
// load_average_start, repetitions.
//
//   - a user's loop: RegionTimer/<key> rows (measure/region_timer.h), read by
//     report/regions.h; a run with only those is reported as that loop's profile.
// Errors: ReportError when the run has neither a BM_EndToEnd nor a BM_Loader case of its
// recipe nor RegionTimer rows, when a sweep case lacks data_ms, compute_ms or step_ms or holds an impossible
// time (negative, step 0), when batch_size / hardware_threads is not an integer, or when
// cores_available is present but not a number > 0.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/bound.h"
#include "report/extras.h"
#include "report/tails.h"
#include "report/regions.h"
#include "report/ranks.h"
#include "report/run.h"
#include "report/storage.h"
#include "report/trust.h"
#include "report/whatif.h"

namespace pipebench::report {

/// A faster variant the run's spec declares: BM_Sample/<recipe>, fixing stage `fixes`.
struct DeclaredVariant {
  std::string recipe;
  std::string fixes;
};

struct Report {
  Verdict verdict;
  std::string recipe, baseline, dataset;
  int batch = 0;  ///< images per batch: the configured batch_size, or as delivered when short
  /// Set when the batches held fewer images than batch_size (drop_last false, a dataset
  /// smaller than a batch): the mean delivered, which `batch` then is (rounded).
  std::optional<double> images_per_batch;
  /// Cores the run could use: the context's cores_available (affinity and cgroup quota, read
  /// once by the run), else its hardware_threads (a run written before cores_available);
  /// 0 = unknown. Every figure here that counts cores reads this one: the verdict's workers
  /// warning, sequential vs parallel, the what-if model and the trust checks. (The ranks'
  /// cores per node read the node's hardware_threads: report/ranks.h.)
  double cores_available = 0;

  /// All workers' idle time per batch at each swept worker count (BM_EndToEnd's
  /// worker_wait_ms), clamped at 0: the loader derives it as worker-time minus busy time,
  /// so timer granularity can leave it a hair below 0, which means "never idle". Counts
  /// whose case has no worker_wait_ms are absent.
  std::map<int, double> worker_wait_ms;
  /// The 99th percentile step at each swept worker count, ms (BM_EndToEnd's step_p99_ms);
  /// counts whose case has none (a run before it, a single step) are absent.
  std::map<int, double> step_p99_ms;
  /// The batches each swept count's figures rest on: the loop's (Google Benchmark's
  /// iterations); the loader alone was timed over as many before and after it.
  std::map<int, int> sweep_batches;
  std::optional<double> budget_s;  ///< the run's --budget, seconds per case (none: --steps fixed)

  /// Faster variants the run's spec declares (empty without a pipeline_spec), and those of
  /// them measured in this run (the candidates given to make_verdict).
  std::vector<DeclaredVariant> declared_variants;
  std::vector<Alternative> alternatives;
  /// Empty, or why the context's pipeline_spec could not be read (no variants then).
  std::string spec_note;

  // Sequential vs parallel loading (BM_Loader at w = 1 and at the most workers within cores_available).
  std::optional<double> loader_w1_ips, loader_wn_ips;  ///< images/s
  int loader_wn = 0;
  // The case study's dilation, ms per image.
  std::optional<double> mask_conv_ms, mask_shifts_ms, casestudy_ms, casestudy_shifts_ms;
  /// The two case-study samples paired (BM_Sample/casestudy/pair:casestudy_shifts): the
  /// saving per sample, ms, and its 95 % half width.
  std::optional<double> casestudy_saving_ms, casestudy_saving_ci_ms;

  /// What each candidate change would give, the recommendation and its check.
  WhatIf what_if;
  /// Warnings about the run's own numbers, and the CV table.
  Trust trust;
  /// The loop with training extras (callbacks), and what async saved.
  Extras extras;
  /// The sweep's tails: p99 step and stall beside the means, the costliest files (issue 34).
  Tails tails;
  /// The storage study: the data stall split into fetch and prep, the packed shards.
  Storage storage;
  /// The system sampler's own cost (BM_SystemSampler), when the run measured it.
  std::optional<SamplerCost> sampler;
  /// A user's loop timed with pipebench::RegionTimer (RegionTimer/<key> rows).
  RegionProfile regions;
  /// The run is a RegionTimer file alone (no BM_EndToEnd or BM_Loader case): the report is
  /// the loop profile and its verdict.
  bool regions_only = false;
  /// A data-parallel run's ranks (mpirun; empty for one process).
  Ranks ranks;

  /// The run is data-bound: it has a sweep, and no swept worker count keeps the
  /// accelerator busy. Only then does shortening a stage shorten the step. For a
  /// RegionTimer file alone: the loop profile's verdict (report/regions.h).
  bool data_bound() const;
  /// The stage with the largest per-sample share, when the run is data-bound; nullopt
  /// otherwise (compute-bound somewhere, no sweep, or no stage costs).
  std::optional<std::string> fix_first() const;
};

/// The verdict of a run. Throws ReportError (see the top of this file).
Report build_report(const BenchRun& run);

/// The candidates that the declared variants of pipeline `name` give in `run`: for each
/// variant, the stage it fixes, BM_Sample/<name> against BM_Sample/<variant.recipe>, both
/// in ms per image; a variant not measured in the run (or its baseline not) is left out.
std::vector<Alternative> measured_variants(const BenchRun& run, const std::string& name,
                                           const std::vector<DeclaredVariant>& variants);

}  // namespace pipebench::report
