// BenchContext: what every case of one run shares, made once in main() and handed to
// each bench family's register_*() (bench/benchmarks.h), which captures it in its cases:
// the parsed flags, the dataset (read from disk, and a second copy whose bytes are cached
// in memory for the decode and transform cases), decoded images for the transform and
// collate cases, the trace recorder behind --trace, and the run's bad files and errored
// cases. No globals: a test can build two contexts side by side.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "bench/bad_files.h"
#include "bench/flags.h"
#include "bench/per_image.h"
#include "datasets/image_folder.h"
#include "pipeline/trace.h"
#include "transforms/image.h"

namespace pipebench::bench {

class BenchContext {
 public:
  /// Opens config.data and checks it holds at least one image that decodes. Throws
  /// DatasetError (or DecodeError) naming the path and the reason.
  explicit BenchContext(BenchConfig config);

  const BenchConfig& config() const { return config_; }
  /// The loader and end-to-end cases' worker counts, once --workers=auto has chosen them
  /// (bench/worker_auto.h); before any case is registered.
  void set_worker_sweep(std::vector<int> workers) { config_.workers = std::move(workers); }

  /// The dataset as files on disk (the read, sample and loader cases).
  const ImageFolder& disk() const { return *disk_; }
  /// The same files, bytes cached in memory on first use (decode and transform cases).
  const ImageFolder& memory();
  /// Up to `count` decoded images of the dataset (full resolution, RGB uint8 HWC), made
  /// once; files that do not decode are left out.
  const std::vector<Image>& decoded_images(size_t count = 32);

  /// The loader's drop_last: --drop-last if given, else true unless the dataset (a rank's
  /// shard under mpirun) is smaller than one batch (then each epoch is one short batch
  /// rather than none).
  bool drop_last() const;

  /// The recorder behind --trace, or nullptr.
  TraceRecorder* trace() { return trace_.get(); }
  /// Writes the trace if --trace was given; returns the path written or empty. Throws
  /// std::runtime_error naming the path when it cannot be written.
  std::filesystem::path write_trace();

  /// The dataset indices of a per-image case's round (bench/image_round.h).
  const std::vector<size_t>& round() const { return round_; }

  /// The names of the registered cases (benchmarks.h register_case), in order.
  void note_case(const std::string& name) { case_names_.push_back(name); }
  const std::vector<std::string>& case_names() const { return case_names_; }
  /// Called by register_case before each run of case `name`.
  void begin_case(const std::string& name) { per_image_->begin_case(name); }

  /// Per-image costs of the round cases (bench/per_image.h).
  PerImageCosts& per_image() { return *per_image_; }
  /// The dataset's files relative to --data, in index order (per_image's "files").
  std::vector<std::string> relative_files() const;

  BadFiles& bad_files() { return *bad_; }
  /// Shorthands for bad_files().fail_case / on_bad_file (bench/bad_files.h).
  void fail_case(benchmark::State& state, const std::string& message) {
    bad_->fail_case(state, message);
  }
  bool on_bad_file(benchmark::State& state, size_t index, const std::string& reason) {
    return bad_->on_bad_file(state, index, reason);
  }

 private:
  BenchConfig config_;
  std::unique_ptr<ImageFolder> disk_;
  std::once_flag memory_once_;
  std::unique_ptr<ImageFolder> memory_;
  std::mutex decoded_mu_;
  std::vector<Image> decoded_;
  std::unique_ptr<TraceRecorder> trace_;
  std::unique_ptr<BadFiles> bad_;
  std::vector<size_t> round_;
  std::vector<std::string> case_names_;
  std::unique_ptr<PerImageCosts> per_image_;
};

/// Adds the run context (library versions, GPU, dataset, flags) to Google Benchmark's.
void add_run_context(const BenchContext& ctx);

}  // namespace pipebench::bench
