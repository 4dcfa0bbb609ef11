// pipebench's own command-line flags and the state every case shares: the dataset (read
// from disk, and a second copy cached in memory for the decode and transform cases), the
// trace recorder, and helpers for counters.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "datasets/image_folder.h"
#include "pipeline/trace.h"
#include "transforms/image.h"

namespace pipebench::bench {

struct BenchConfig {
  std::filesystem::path data = "data/photos-in";  ///< ImageFolder root
  int batch = 64;                                 ///< samples per batch
  int size = 224;                                 ///< crop size, pixels
  uint64_t seed = 0;
  std::string recipe = "imagenet_train";          ///< the loader / end-to-end recipe
  std::vector<int> workers;                       ///< the sweep (default 1, 2, 4, ... 2x cores)
  double compute_ms = 25.0;                       ///< emulated step per batch, ms
  std::string baseline;                           ///< "emulated" or "cuda"
  std::filesystem::path trace;                    ///< Chrome trace output, empty = none
  int steps = 30;                                 ///< timed batches per loader/end-to-end run
  int prefetch = 2;                               ///< loader prefetch depth, batches
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
