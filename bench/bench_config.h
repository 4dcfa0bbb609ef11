// pipebench's own command-line flags and the state every case shares: the dataset (read
// from disk, and a second copy cached in memory for the decode and transform cases), the
// trace recorder, and helpers for counters.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/run_output.h"
#include "datasets/image_folder.h"
#include "pipeline/loader.h"
#include "pipeline/trace.h"
#include "transforms/image.h"
#include "transforms/pipeline.h"

namespace pipebench::bench {

struct BenchConfig {
  std::filesystem::path data = "data/photos-in";  ///< ImageFolder root
  int batch = 64;                                 ///< samples per batch
  int size = 224;                                 ///< crop size, pixels
  uint64_t seed = 0;
  std::string recipe = "imagenet_train";          ///< --recipe: a shipped recipe's name
  std::string pipeline_flag;                      ///< --pipeline: a spec file or inline YAML
  /// The pipeline of the loader and end-to-end cases: --pipeline if given, else --recipe.
  std::shared_ptr<const Pipeline> pipeline;
  std::vector<int> workers;                       ///< the sweep (default 1, 2, 4, ... 2x cores)
  double compute_ms = 25.0;                       ///< emulated step per batch, ms
  std::string baseline;                           ///< "emulated" or "cuda"
  std::filesystem::path trace;                    ///< Chrome trace output, empty = none
  int steps = 30;                                 ///< timed batches per loader/end-to-end run
  int prefetch = 2;                               ///< loader prefetch depth, batches
  OnError on_error = OnError::kStop;              ///< a bad file: end the case, or skip it
  std::optional<bool> drop_last;                  ///< --drop-last; unset = the default rule
};

/// The parsed flags (valid after parse_flags()).
const BenchConfig& config();

/// Parses pipebench's flags from argv (Google Benchmark's own flags must already be
/// removed by benchmark::Initialize). Throws std::invalid_argument with a one-line message
/// for an unknown flag or a bad value.
void parse_flags(int argc, char** argv);

/// Opens the dataset and checks it holds at least one readable JPEG. Throws
/// DatasetError (or DecodeError) naming the path and the reason.
void open_dataset();

/// The loader's drop_last: --drop-last if given, else true unless the dataset is smaller
/// than one batch (then each epoch is one short batch rather than none).
bool effective_drop_last();

/// The dataset as files on disk (the read, sample and loader cases).
const ImageFolder& disk_dataset();
/// The same files, bytes cached in memory on first use (decode and transform cases).
const ImageFolder& memory_dataset();
/// Up to `count` decoded images of the dataset (full resolution, RGB), made once.
const std::vector<Image>& decoded_images(size_t count = 32);

/// The recorder behind --trace, or nullptr.
TraceRecorder* trace();

/// Writes the trace if --trace was given; returns the path written or empty.
std::filesystem::path write_trace();

/// Adds the run context (library versions, GPU, dataset, flags) to Google Benchmark's.
void add_context();

/// Ends a case with state.SkipWithError(message) and counts it: pipebench exits 3 after
/// a run in which any case errored (its results are still written).
void fail_case(benchmark::State& state, const std::string& message);

/// A sample of the dataset failed (unreadable, not a decodable image). Under
/// --on-error=stop: fail_case() naming the file, returns false (the case must leave its
/// loop). Under --on-error=skip: the file is recorded as bad for every later case and the
/// run's JSON, returns true (the case goes on with the next file).
bool on_bad_file(benchmark::State& state, size_t index, const std::string& reason);
/// True once a case found dataset file `index` bad (only under --on-error=skip).
bool known_bad(size_t index);
/// Adds the loader's skipped samples to the run's list of bad files.
void record_skipped(const std::vector<SkippedSample>& samples);

/// Cycles over the dataset's indices 0, 1, ..., n-1, 0, ..., passing over files known bad.
class DatasetCursor {
 public:
  explicit DatasetCursor(size_t size) : size_(size) {}
  /// The current index, moved forward past bad files first; false when every file is bad.
  bool good(size_t& index);
  void advance() { i_ = (i_ + 1) % size_; }

 private:
  size_t size_;
  size_t i_ = 0;
};

/// What the run learnt during its cases, for the JSON file's context.
RunEpilogue run_epilogue();

/// Registration functions, one per bench/*_bench.cpp.
void register_read_benchmarks();
void register_decode_benchmarks();
void register_transform_benchmarks();
void register_sample_benchmarks();
void register_collate_benchmarks();
void register_h2d_benchmarks();
void register_loader_benchmarks();
void register_end_to_end_benchmarks();

}  // namespace pipebench::bench
