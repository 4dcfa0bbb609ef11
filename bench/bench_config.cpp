#include "bench/bench_config.h"

#include <benchmark/benchmark.h>
#include <jconfig.h>
#include <oneapi/tbb/version.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <cstdio>
#include <algorithm>
#include <mutex>
#include <opencv2/core/version.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "pipeline/cuda.h"
#include "transforms/jpeg_decode.h"
#include "transforms/recipes.h"

namespace pipebench::bench {
namespace {

BenchConfig g_config;
std::atomic<int> g_errored_cases{0};
// Bad files under --on-error=skip: a flag per dataset index, and the list with reasons.
std::unique_ptr<std::atomic<bool>[]> g_bad;
std::mutex g_bad_mu;
std::vector<std::string> g_bad_list;
size_t g_bad_total = 0;
constexpr size_t kBadListMax = 20;

void add_bad(const std::string& entry) {
  std::lock_guard lock(g_bad_mu);
  ++g_bad_total;
  if (g_bad_list.size() < kBadListMax) g_bad_list.push_back(to_valid_utf8(entry));
}
std::unique_ptr<ImageFolder> g_disk;
std::unique_ptr<ImageFolder> g_memory;
std::unique_ptr<TraceRecorder> g_trace;

std::vector<int> default_workers() {
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<int> w;
  for (int n = 1; n <= 2 * cores; n *= 2) w.push_back(n);
  return w;
}

std::string join(const std::vector<int>& v) {
  std::ostringstream s;
  for (size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  return s.str();
}

// Fails now, not after the whole run, when `path` cannot be created or written.
void check_writable(const char* flag, const std::filesystem::path& path) {
  const bool existed = std::filesystem::exists(path);
  {
    std::ofstream probe(path, std::ios::app);
    if (!probe) {
      throw std::invalid_argument(std::string(flag) + ": cannot write " + path.string() + ": " +
                                  std::strerror(errno));
    }
  }
  std::error_code ec;
  if (!existed) std::filesystem::remove(path, ec);
}

}  // namespace

const BenchConfig& config() { return g_config; }

void parse_flags(int argc, char** argv) {
  BenchConfig c;
  double compute_ms = -1;
  CLI::App app{"pipebench: stage microbenchmarks and end-to-end loader sweeps"};
  app.set_help_flag();  // --help is Google Benchmark's; our flags are listed in bench/README.md
  app.add_option("--data", c.data, "ImageFolder dataset root")->capture_default_str();
  app.add_option("--batch", c.batch, "samples per batch")->check(CLI::Range(1, 1 << 16));
  app.add_option("--size", c.size, "crop size in pixels")->check(CLI::Range(8, 4096));
  app.add_option("--seed", c.seed, "random seed");
  app.add_option("--recipe", c.recipe, "recipe of the loader and end-to-end cases");
  app.add_option("--pipeline", c.pipeline_flag, "a pipeline spec: a YAML file, or inline YAML");
  app.add_option("--workers", c.workers, "worker counts to sweep, e.g. 1,2,4")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024));
  app.add_option("--compute-ms", compute_ms, "emulated training step per batch, ms");
  app.add_option("--baseline", c.baseline, "training-step baseline")
      ->check(CLI::IsMember({"emulated", "cuda"}));
  app.add_option("--trace", c.trace, "write a Chrome trace of the loader and end-to-end cases");
  app.add_option("--steps", c.steps, "timed batches per loader / end-to-end run")
      ->check(CLI::Range(1, 100000));
  app.add_option("--prefetch", c.prefetch, "loader prefetch depth in batches")
      ->check(CLI::Range(1, 1024));
  std::string drop_last;
  app.add_option("--drop-last", drop_last, "drop a short last batch: true or false")
      ->check(CLI::IsMember({"true", "false"}));
  std::string on_error = "stop";
  app.add_option("--on-error", on_error, "a bad file: stop (end the case) or skip it")
      ->check(CLI::IsMember({"stop", "skip"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e))
      msg = "unknown flag: " + msg.substr(msg.find(':') == std::string::npos ? 0 : msg.find(':') + 2) +
            " (pipebench flags: --data --batch --size --seed --recipe --pipeline --workers --compute-ms "
            "--baseline --trace --steps --prefetch --on-error --drop-last; Google Benchmark's: --benchmark_*)";
    throw std::invalid_argument(msg);
  }
  if (c.workers.empty()) c.workers = default_workers();
  c.on_error = on_error == "skip" ? OnError::kSkip : OnError::kStop;
  if (!drop_last.empty()) c.drop_last = drop_last == "true";
  if (!c.pipeline_flag.empty() && app.count("--recipe"))
    throw std::invalid_argument("--pipeline and --recipe both name the pipeline: give one");
  if (!c.pipeline_flag.empty()) {
    // SpecError names the file (or --pipeline), the line and the column.
    c.pipeline = Pipeline::build(pipeline_spec_from_flag(c.pipeline_flag, c.size));
  } else {
    try {
      c.pipeline = build_recipe(c.recipe, c.size);
    } catch (const SpecError&) {
      throw;
    } catch (const std::invalid_argument& e) {  // names the known recipes
      throw std::invalid_argument(std::string("--recipe: ") + e.what());
    }
  }
  c.recipe = c.pipeline->name();
  if (compute_ms >= 0) {
    c.compute_ms = compute_ms;
  } else if (app.count("--compute-ms")) {
    throw std::invalid_argument("--compute-ms must be >= 0 ms, got " + std::to_string(compute_ms));
  } else {
    c.compute_ms = 25.0 * c.batch / 64.0;  // 25 ms per batch of 64, scaled to --batch
  }
  if (c.baseline.empty()) c.baseline = cuda_available() ? "cuda" : "emulated";
  if (c.baseline == "cuda" && !cuda_available())
    throw std::invalid_argument("--baseline=cuda needs a CUDA device: " + cuda_info().reason);
  if (!c.trace.empty()) check_writable("--trace", c.trace);
  g_config = c;
  if (!c.trace.empty()) g_trace = std::make_unique<TraceRecorder>();
}

void open_dataset() {
  g_disk = std::make_unique<ImageFolder>(g_config.data);
  g_bad = std::make_unique<std::atomic<bool>[]>(g_disk->size());
  // The dataset must hold at least one JPEG that decodes; stop at the first that does.
  TurboDecoder decoder;
  Image img;
  std::vector<uint8_t> bytes;
  std::string last_error;
  for (size_t i = 0; i < g_disk->size(); ++i) {
    try {
      g_disk->read(i, bytes);
      decoder.decode(bytes, g_disk->sample(i).path.string(), img);
      return;
    } catch (const std::exception& e) {
      last_error = e.what();
    }
  }
  throw DatasetError(g_config.data.string() + ": no readable JPEG among " +
                     std::to_string(g_disk->size()) + " files (last error: " + last_error + ")");
}

const ImageFolder& disk_dataset() { return *g_disk; }

bool effective_drop_last() {
  if (g_config.drop_last) return *g_config.drop_last;
  return g_disk->size() >= static_cast<size_t>(g_config.batch);
}

const ImageFolder& memory_dataset() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_memory = std::make_unique<ImageFolder>(g_config.data);
    g_memory->cache_in_memory();
  });
  return *g_memory;
}

const std::vector<Image>& decoded_images(size_t count) {
  static std::vector<Image> images;
  static std::mutex mu;
  std::lock_guard lock(mu);
  const auto& ds = memory_dataset();
  TurboDecoder decoder;
  for (size_t i = images.size(); i < std::min(count, ds.size()); ++i) {
    Image img;
    try {
      decoder.decode(ds.cached(i), ds.sample(i).path.string(), img);
    } catch (const std::exception&) {
      continue;  // a bad file is the bad-input tests' business; skip it here
    }
    images.push_back(std::move(img));
  }
  return images;
}

TraceRecorder* trace() { return g_trace.get(); }

void fail_case(benchmark::State& state, const std::string& message) {
  g_errored_cases.fetch_add(1, std::memory_order_relaxed);
  state.SkipWithError(to_valid_utf8(message).c_str());
}

// "path: reason", unless the reason already names the file.
std::string bad_file_message(const std::string& path, const std::string& reason) {
  return reason.find(path) != std::string::npos ? reason : path + ": " + reason;
}

bool on_bad_file(benchmark::State& state, size_t index, const std::string& reason) {
  const std::string message = bad_file_message(g_disk->sample(index).path.native(), reason);
  if (g_config.on_error == OnError::kStop) {
    fail_case(state, message + " (--on-error=skip passes over bad files)");
    return false;
  }
  if (!g_bad[index].exchange(true)) add_bad(message);
  return true;
}

bool known_bad(size_t index) { return g_bad && g_bad[index].load(std::memory_order_relaxed); }

void record_skipped(const std::vector<SkippedSample>& samples) {
  for (const auto& s : samples) {
    const auto i = static_cast<size_t>(s.index);
    if (i < g_disk->size() && !g_bad[i].exchange(true)) add_bad(bad_file_message(s.path, s.reason));
  }
}

bool DatasetCursor::good(size_t& index) {
  for (size_t tried = 0; tried < size_; ++tried, advance()) {
    if (!known_bad(i_)) {
      index = i_;
      return true;
    }
  }
  return false;
}

RunEpilogue run_epilogue() {
  RunEpilogue e;
  e.errored_cases = g_errored_cases.load();
  std::lock_guard lock(g_bad_mu);
  e.skipped_files = g_bad_list;
  e.skipped_total = g_bad_total;
  return e;
}

std::filesystem::path write_trace() {
  if (!g_trace) return {};
  g_trace->write(g_config.trace);
  return g_config.trace;
}

void add_context() {
  const auto& c = g_config;
  const auto& cuda = cuda_info();
  benchmark::AddCustomContext("pipebench_version", "0.1.0");
#ifdef NDEBUG
  // Debian's libbenchmark is built without NDEBUG, so Google Benchmark itself prints
  // "Library was built as DEBUG": that is about the framework, not the code measured.
  benchmark::AddCustomContext("pipebench_build", "release (optimised, NDEBUG)");
#else
  benchmark::AddCustomContext("pipebench_build", "DEBUG: timings of this build mean nothing");
  std::fprintf(stderr, "pipebench: warning: this is a debug build; its timings mean nothing\n");
#endif
  benchmark::AddCustomContext("opencv_version", CV_VERSION);
  benchmark::AddCustomContext("libjpeg_turbo_version",
                              std::to_string(LIBJPEG_TURBO_VERSION_NUMBER / 1000000) + "." +
                                  std::to_string(LIBJPEG_TURBO_VERSION_NUMBER / 1000 % 1000) + "." +
                                  std::to_string(LIBJPEG_TURBO_VERSION_NUMBER % 1000));
  benchmark::AddCustomContext("tbb_version", TBB_runtime_version());
  benchmark::AddCustomContext("cuda_runtime", cuda.compiled ? cuda.runtime_version : "none");
  benchmark::AddCustomContext("gpu", cuda.available ? cuda.device_name : "none (" + cuda.reason + ")");
  benchmark::AddCustomContext("dataset", to_valid_utf8(std::filesystem::absolute(c.data).string()));
  benchmark::AddCustomContext("on_error", c.on_error == OnError::kSkip ? "skip" : "stop");
  benchmark::AddCustomContext("drop_last", effective_drop_last() ? "true" : "false");
  benchmark::AddCustomContext("dataset_images", std::to_string(disk_dataset().size()));
  benchmark::AddCustomContext("dataset_bytes", std::to_string(disk_dataset().total_bytes()));
  benchmark::AddCustomContext("dataset_fingerprint", disk_dataset().fingerprint(true));
  benchmark::AddCustomContext("recipe", to_valid_utf8(c.recipe));
  benchmark::AddCustomContext("pipeline_spec", to_valid_utf8(c.pipeline->spec().to_yaml()));
  benchmark::AddCustomContext("pipeline_plan", to_valid_utf8(c.pipeline->plan_text()));
  benchmark::AddCustomContext("batch_size", std::to_string(c.batch));
  benchmark::AddCustomContext("crop_size", std::to_string(c.size));
  benchmark::AddCustomContext("seed", std::to_string(c.seed));
  benchmark::AddCustomContext("baseline", c.baseline);
  benchmark::AddCustomContext("compute_ms", std::to_string(c.compute_ms));
  benchmark::AddCustomContext("workers", join(c.workers));
  benchmark::AddCustomContext("prefetch_depth_batches", std::to_string(c.prefetch));
  benchmark::AddCustomContext("hardware_threads", std::to_string(std::thread::hardware_concurrency()));
}

}  // namespace pipebench::bench
