// What a run does with a file that cannot be read or decoded, and with cases that error.
// One BadFiles per run (in the BenchContext): every case asks it, so under
// --on-error=skip a file found bad by one case is passed over by every later case, and
// the run's JSON lists the files with their reasons (bench/run/run_output.h).
#pragma once

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bench/run/run_output.h"
#include "datasets/image_folder.h"
#include "pipeline/loader.h"

namespace pipebench::bench {

class BadFiles {
 public:
  /// `dataset` must outlive this object.
  BadFiles(const SampleSource& dataset, OnError policy);

  /// Ends a case with state.SkipWithError(message) and counts it: pipebench exits 3 after
  /// a run in which any case errored (its results are still written).
  void fail_case(benchmark::State& state, const std::string& message);

  /// Dataset file `index` failed (unreadable, not a decodable image). Under
  /// --on-error=stop: fail_case() naming the file, returns false (the case must leave its
  /// loop). Under --on-error=skip: the file is recorded as bad for every later case and
  /// the run's JSON, returns true (the case goes on with the next file).
  bool on_bad_file(benchmark::State& state, size_t index, const std::string& reason);
  /// True once a case found file `index` bad (only under --on-error=skip).
  bool known_bad(size_t index) const;
  /// Adds the loader's skipped samples to the run's list.
  void record_skipped(const std::vector<SkippedSample>& samples);

  /// The errored-case count and the skipped files (first 20 with reasons, and the total).
  RunEpilogue epilogue() const;

 private:
  void add(const std::string& entry);

  const SampleSource& dataset_;
  OnError policy_;
  std::atomic<int> errored_cases_{0};
  std::unique_ptr<std::atomic<bool>[]> bad_;  // a flag per dataset index
  mutable std::mutex mu_;
  std::vector<std::string> list_;
  size_t total_ = 0;
};

/// Cycles over a dataset's indices 0, 1, ..., n-1, 0, ..., passing over files known bad.
class DatasetCursor {
 public:
  DatasetCursor(size_t size, const BadFiles& bad) : size_(size), bad_(bad) {}
  /// The current index, moved forward past bad files first; false when every file is bad.
  bool good(size_t& index);
  void advance() { i_ = (i_ + 1) % size_; }

 private:
  size_t size_;
  const BadFiles& bad_;
  size_t i_ = 0;
};

}  // namespace pipebench::bench
