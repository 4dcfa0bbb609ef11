// Storage in the report (issue 12): DS-Analyzer's split of the data stall into its fetch
// and prep parts (Mohan et al., "Analyzing and Mitigating Data Stalls in DNN Training",
// VLDB 2021, section 3), from cases of one run at the same worker count w (the table's:
// bench/cases/loader_bench.cpp, the storage study of --cache=cold / --read-throttle-mib-s):
//   cold   BM_Loader/<pipeline>/workers:<w> of a run with cache_mode cold (or a throttle):
//          data_ms = fetch + prep, ms per batch
//   warm   BM_Loader/<pipeline>/<layout>/warm/workers:<w>: the prep-bound rate, data_ms
//   fetch  BM_Read/<layout>/cold: the storage alone, images/s and MB/s (one reader)
//   compute  the training step per batch (the sweep's compute_ms, else the context's)
// Per step of one batch, in ms:
//   stall       = max(0, cold - compute)
//   prep stall  = max(0, min(warm, cold) - compute)   (what stays with every byte in memory)
//   fetch stall = stall - prep stall                  (what waiting for storage adds)
// and the share of each in the stall; the verdict names the larger one to fix first.
// With a throttle, the fetch-bound rate is predicted as the link's rate over the mean
// sample size (throttle MiB/s x 2^20 / (dataset_bytes / dataset_images), images/s) and set
// beside the cold loader's measured images/s.
// Packed shards, one copy per size N of the context's packed_shard_images ("64,256,1024"):
// BM_Loader/<pipeline>/shards-N/cold/workers:<w> and BM_Read/shards-N/cold against the
// files, the "pack into shards" what-if (data_ms saved per batch, MB/s ratio); the best size
// is the one whose cold loader measured the least data ms.
// The what-if table (report/whatif.h) gains two measured rows when the fetch stall is
// significant (at least kSignificantFetchPct of the data stall) and the run packed the
// dataset: "files, cold" (the cold loader as stored) and "pack into shards" (the cold loader
// on the packed copy), each priced from its measured data ms at the split's workers, and
// the recommendation says which one the fetch stall calls for.
// Warnings, as DLIO's: a cold run whose files were still resident after the drop
// (cold_resident_pct > 10) or whose cold loader read (almost) nothing from the device
// (disk_read_mib_per_s below 1 % of what it consumed) was served from memory; a warm run
// on a dataset larger than the available memory cannot have been warm.
// Nothing here throws; a run without the storage study gives an empty Storage.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/run.h"
#include "report/whatif.h"

namespace pipebench::report {

/// The fetch stall's share of the data stall, percent, from which "pack into shards" joins
/// the what-if table (a choice: below it, the CPU stages are the fix whatever the layout).
inline constexpr double kSignificantFetchPct = 10.0;

/// One packed copy of the study.
struct PackedLayout {
  std::string layout;                       ///< "shards-N"
  std::string loader_case;                  ///< its cold loader's case name
  std::optional<double> data_ms;            ///< that loader, ms per batch
  std::optional<double> read_mb_per_second;  ///< BM_Read/shards-N/cold, one reader
};

struct Storage {
  std::string layout, cache_mode;           ///< context: storage_layout, cache_mode
  std::optional<double> throttle_mib_s;     ///< --read-throttle-mib-s, when set
  int workers = 0;                          ///< w of the split
  std::optional<double> cold_data_ms, warm_data_ms, compute_ms;  ///< ms per batch
  double stall_ms = 0, prep_stall_ms = 0, fetch_stall_ms = 0;    ///< ms per step
  std::optional<double> fetch_images_per_second, fetch_mb_per_second;  ///< BM_Read/<layout>/cold
  std::optional<double> cold_images_per_second;        ///< the cold loader's, measured
  std::optional<double> predicted_fetch_images_per_second;  ///< with a throttle
  std::vector<PackedLayout> packed;         ///< packed shards, ascending shard size
  std::string cold_case;                    ///< the cold loader's case name (as stored)
  std::vector<std::string> warnings;
  bool empty() const { return !cold_data_ms && warnings.empty(); }
  /// The packed size whose cold loader measured the least data ms; nullptr when none ran.
  const PackedLayout* best_packed() const;
  /// "fetch" or "prep": the larger part of the stall; empty without a stall.
  std::string fix_first() const;
};

/// The storage study of `pipeline` in `run` (empty when the run has none). `compute_ms` is
/// the step's time per batch from the sweep (nullopt: the context's compute_ms).
Storage storage_split(const BenchRun& run, const std::string& pipeline, std::optional<double> compute_ms);
/// Adds the storage rows to `w` (after the fixes, before the operators' prices) and a
/// sentence to its recommendation, when the fetch stall is significant and the run measured
/// the packed copy; otherwise leaves `w` alone (also when the table is empty).
void add_storage_rows(WhatIf& w, const Storage& s);
/// The "Storage" section of pipebench-report's text (nothing when empty).
void append_storage_text(std::string& out, const Storage& s);
/// The report's "storage" JSON: units in every key (_ms, _pct, _images_per_second).
nlohmann::json storage_json(const Storage& s);

}  // namespace pipebench::report
