// BenchContext: what every case of one run shares, made once in main() and handed to
// each bench family's register_*() (bench/run/benchmarks.h), which captures it in its cases:
// the parsed flags, the dataset (read from disk, and a second copy whose bytes are cached
// in memory for the decode and transform cases), decoded images for the transform and
// collate cases, the trace recorder behind --trace, and the run's bad files and errored
// cases. No globals: a test can build two contexts side by side.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bench/run/bad_files.h"
#include "bench/run/case_budget.h"
#include "bench/run/flags.h"
#include "bench/run/packed_copy.h"
#include "bench/run/presized_copy.h"
#include "bench/run/per_image.h"
#include "bench/run/system_series.h"
#include "datasets/image_folder.h"
#include "datasets/storage.h"
#include "model/copy_fix_price.h"
#include "model/cost_fit.h"
#include "model/case_key.h"
#include "measure/trace.h"
#include "transforms/image.h"

namespace pipebench::bench {

class BenchContext {
 public:
  /// Opens config.data and checks it holds at least one image that decodes. Throws
  /// DatasetError (or DecodeError) naming the path and the reason.
  explicit BenchContext(BenchConfig config);

  const BenchConfig& config() const { return config_; }
  /// The batches each loader and end-to-end case times (bench/run/case_budget.h); planned in
  /// main() before any case is registered.
  const CaseBudget& budget() const { return budget_; }
  void set_budget(const CaseBudget& b) { budget_ = b; }
  /// The loader and end-to-end cases' worker counts, once --workers=auto has chosen them
  /// (bench/run/worker_auto.h); before any case is registered.
  void set_worker_sweep(std::vector<int> workers) { config_.workers = std::move(workers); }

  /// The dataset as stored (ImageFolder files or WebDataset shards: --data), read from
  /// storage on every access (the read and sample cases).
  const SampleSource& disk() const { return *disk_; }
  /// The dataset as an ImageFolder tree, or nullptr for shards (what needs files: presize).
  const ImageFolder* folder() const { return dynamic_cast<const ImageFolder*>(disk_.get()); }
  /// The same samples, bytes cached in memory on first use (decode and transform cases).
  const SampleSource& memory();
  /// The dataset read with a cache mode and the run's --read-throttle-mib-s (one link for
  /// the whole process): what the loader and end-to-end cases read. Made on first use;
  /// a cold one drops every file's pages then (datasets/storage.h).
  const StoredSource& stored(CacheMode mode, bool throttled = true);
  /// stored(--cache): the loader and end-to-end sweep's storage.
  const StoredSource& loader_source() { return stored(config_.cache); }
  /// Whether the dataset's pages may have left the page cache since the last
  /// fill_cache(): true at start (unknown), set by the cold cases (note_evicted); a warm
  /// loader reads the dataset in once when take_evicted() says so (bench/run/loader_util.h).
  void note_evicted() { evicted_.store(true); }
  bool take_evicted() { return evicted_.exchange(false); }
  /// The process's read throttle, or null without --read-throttle-mib-s.
  const std::shared_ptr<ReadThrottle>& throttle() const { return throttle_; }
  /// Up to `count` decoded images of the dataset (full resolution, RGB uint8 HWC), made
  /// once; files that do not decode are left out.
  const std::vector<Image>& decoded_images(size_t count = 32);

  /// The loader's drop_last over `source` (default: the dataset): --drop-last if given, else
  /// true unless the source (a rank's shard of it under mpirun) is smaller than one batch
  /// (then each epoch is one short batch rather than none). A presized copy of the round
  /// is such another source.
  bool drop_last(const SampleSource* source = nullptr) const;

  /// The loader's worker count of the what-if table and the storage study: the most swept
  /// workers within the cores available (affinity, quota); 0 when none is.
  int table_workers() const;
  /// Whether the run measures storage (--cache=cold or --read-throttle-mib-s): the warm
  /// loader and the packed copy beside the sweep.
  bool storage_study() const {
    return config_.cache == CacheMode::kCold || config_.read_throttle_mib_s > 0;
  }
  /// The packed shard copies of --data, one per --shards size (over an ImageFolder), by
  /// ascending shard size; empty for none.
  const std::vector<std::shared_ptr<PackedCopy>>& packed_copies() const { return packed_; }
  /// The presized copies of the round (bench/run/presized_copy.h), each a candidate: the
  /// whole copy (--presize; not with --presize=off or a spec whose first operator fixes no
  /// size) and the large-only copy (--presize-large; only where the round has large
  /// images); none for shards.
  const std::vector<std::shared_ptr<PresizedCopy>>& presized_copies() const { return presized_; }

  /// The recorder behind --trace, or nullptr.
  TraceRecorder* trace() { return trace_.get(); }
  /// Writes the trace if --trace was given; returns the path written or empty. Throws
  /// std::runtime_error naming the path when it cannot be written.
  std::filesystem::path write_trace();

  /// The dataset indices of a per-image case's round (bench/run/image_round.h).
  const std::vector<size_t>& round() const { return round_; }

  /// The keys of the registered cases (benchmarks.h register_case), in order, and their
  /// names. Throws std::logic_error when two cases have one name.
  void note_case(const model::CaseKey& key);
  const std::vector<std::string>& case_names() const { return case_names_; }
  /// The key registered under `name` (a Google Benchmark run's function_name), or nullptr.
  const model::CaseKey* key_of(const std::string& name) const;
  /// Called by register_case before each run of case `name`.
  void begin_case(const std::string& name) {
    per_image_->begin_case(name);
    current_case_ = name;
  }
  /// The case running now (begin_case's name).
  const std::string& current_case() const { return current_case_; }
  /// The system sampler's time series per case, for the JSON's "system_series" section.
  SystemSeries& system_series() { return series_; }

  /// Per-image costs of the round cases (bench/run/per_image.h).
  PerImageCosts& per_image() { return *per_image_; }
  /// The dataset's files relative to --data, in index order (per_image's "files").
  std::vector<std::string> relative_files() const;
  /// --data's file i's header for the cost fit (bench/run/file_header.h), read once a run;
  /// nullopt when --data is not an ImageFolder or the header cannot be read.
  std::optional<model::FileHeader> file_header(size_t i);

  BadFiles& bad_files() { return *bad_; }
  /// Shorthands for bad_files().fail_case / on_bad_file (bench/run/bad_files.h).
  void fail_case(benchmark::State& state, const std::string& message) {
    bad_->fail_case(state, message);
  }
  bool on_bad_file(benchmark::State& state, size_t index, const std::string& reason) {
    return bad_->on_bad_file(state, index, reason);
  }

  /// The tail fixes as today's BM_EndToEnd case priced them (the step model's mean step
  /// from its own timed costs: pred_step_deep_prefetch_ms, pred_step_out_of_order_ms), by
  /// that case's name; the fix's case at the same workers runs after it and records the
  /// price beside its measured step (bench/cases/tail_fixes.h). Cases run one at a time.
  struct FixPrices {
    double deep_prefetch_ms = 0, out_of_order_ms = 0;
    /// What a presized copy's case is priced from (model/copy_fix_price.h): today's mean
    /// cost per visit of each file timed (dataset index -> ms) and the level its costs were
    /// set to (CostPrediction::scale).
    std::map<size_t, double> file_ms;
    double scale = 1;
  };
  void note_fix_prices(const std::string& today_case, FixPrices prices) { fix_prices_[today_case] = std::move(prices); }
  /// nullptr when today's case did not run (filtered out, failed) or timed too few costs.
  const FixPrices* fix_prices(const std::string& today_case) const {
    const auto it = fix_prices_.find(today_case);
    return it == fix_prices_.end() ? nullptr : &it->second;
  }

  /// The files a fix on the same dataset (decode:auto) was timed on, today's pipeline
  /// against the fix's, one thread, by the fix's label ("decode:auto"): its paired case's
  /// round (the last run of that case: a rerun replaces it), and the probes of today's
  /// costliest files (bench/cases/fix_probe.h: each adds files not yet measured); what its
  /// end-to-end case is priced from (model/ratio_fix_price.h). Empty for none.
  void note_fix_round_costs(const std::string& label, std::vector<model::PairedImageCost> costs) {
    fix_costs_[label].round = std::move(costs);
  }
  void note_fix_probe_costs(const std::string& label, const std::vector<model::PairedImageCost>& costs) {
    auto& probed = fix_costs_[label].probed;
    probed.insert(probed.end(), costs.begin(), costs.end());
  }
  std::vector<model::PairedImageCost> fix_image_costs(const std::string& label) const {
    const auto it = fix_costs_.find(label);
    if (it == fix_costs_.end()) return {};
    std::vector<model::PairedImageCost> all = it->second.round;
    all.insert(all.end(), it->second.probed.begin(), it->second.probed.end());
    return all;
  }

 private:
  CaseBudget budget_;
  BenchConfig config_;
  std::unique_ptr<SampleSource> disk_;
  std::once_flag memory_once_;
  std::unique_ptr<SampleSource> memory_;
  std::shared_ptr<ReadThrottle> throttle_;
  std::mutex stored_mu_;
  std::map<std::pair<CacheMode, bool>, std::unique_ptr<StoredSource>> stored_;
  std::vector<std::shared_ptr<PackedCopy>> packed_;
  std::vector<std::shared_ptr<PresizedCopy>> presized_;
  std::atomic<bool> evicted_{true};
  std::mutex decoded_mu_;
  std::vector<Image> decoded_;
  std::unique_ptr<TraceRecorder> trace_;
  std::unique_ptr<BadFiles> bad_;
  std::vector<size_t> round_;
  std::vector<std::string> case_names_;
  std::map<std::string, model::CaseKey> keys_;
  std::string current_case_;
  SystemSeries series_;
  std::unique_ptr<PerImageCosts> per_image_;
  std::map<std::string, FixPrices> fix_prices_;
  struct FixImageCosts {
    std::vector<model::PairedImageCost> round, probed;
  };
  std::map<std::string, FixImageCosts> fix_costs_;
  std::mutex headers_mu_;
  std::map<size_t, std::optional<model::FileHeader>> headers_;
};

/// Adds the run context (library versions, GPU, dataset, storage, flags) to Google
/// Benchmark's. With the storage study it makes the cold source (dropping every file's
/// pages) and records what mincore then finds resident (cold_resident_pct).
void add_run_context(BenchContext& ctx);

}  // namespace pipebench::bench
