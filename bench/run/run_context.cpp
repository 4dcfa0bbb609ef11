// The run context: what a JSON result needs to be read and reproduced on its own
// (library versions, the GPU, the dataset, the resolved pipeline and every flag).
#include <benchmark/benchmark.h>
#include <jconfig.h>
#include <oneapi/tbb/version.h>

#include <cstdio>
#include <opencv2/core/version.hpp>
#include <sstream>
#include <string>

#include "bench/run/bench_context.h"
#include "bench/run/machine.h"
#include "device/cuda.h"
#include "device/nvml.h"
#include "model/cores.h"
#include "transforms/simd_path.h"

namespace pipebench::bench {

extern const char* const kGitCommit;  // git_version.cpp, generated at build time

namespace {

std::string join(const std::vector<int>& v) {
  std::ostringstream s;
  for (size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  return s.str();
}

std::string libjpeg_turbo_version() {
  constexpr int v = LIBJPEG_TURBO_VERSION_NUMBER;
  return std::to_string(v / 1000000) + "." + std::to_string(v / 1000 % 1000) + "." +
         std::to_string(v % 1000);
}

// Storage (issue 12): the layout, the cache mode, the throttle (labelled an emulation), the
// dataset against memory, and whether cold really is cold here.
void add_storage_context(BenchContext& ctx) {
  const auto& c = ctx.config();
  const auto add = [](const char* key, const std::string& value) {
    benchmark::AddCustomContext(key, to_valid_utf8(value));
  };
  add("storage_layout", ctx.disk().layout());
  add("cache_mode", to_string(c.cache));
  add("read_throttle_mib_s", std::to_string(c.read_throttle_mib_s));
  add("min_psnr_db", std::to_string(c.min_psnr_db));  // --min-psnr (issue 35)
  if (c.read_throttle_mib_s > 0)
    add("storage_emulation", "every read shares one link of " + std::to_string(c.read_throttle_mib_s) +
                                 " MiB/s (--read-throttle-mib-s): an emulation of slow storage, "
                                 "not this machine's disk");
  add("host_memory_bytes", std::to_string(host_memory_bytes()));
  add("host_available_memory_bytes", std::to_string(available_memory_bytes()));
  std::string sizes;  // "64,256,1024": one packed copy per size
  for (const auto& copy : ctx.packed_copies()) {
    if (!sizes.empty()) sizes += ',';  // appended: GCC 12's -Wrestrict misfires on "..." + s
    sizes += std::to_string(copy->shard_size());
  }
  if (!sizes.empty()) add("packed_shard_images", sizes);
  if (!ctx.storage_study()) return;
  try {
    const ResidencyCheck r = ctx.stored(CacheMode::kCold).check_residency();
    add("cold_files_checked", std::to_string(r.files_checked));
    add("cold_resident_pct", std::to_string(100.0 * r.resident_share));
  } catch (const std::exception& e) {
    add("cold_resident_pct", "unknown");
    std::fprintf(stderr, "pipebench: warning: the cold setting could not be checked: %s\n", e.what());
  }
}

}  // namespace

void add_run_context(BenchContext& ctx) {
  const auto& c = ctx.config();
  const auto& cuda = cuda_info();
  const auto add = [](const char* key, const std::string& value) {
    benchmark::AddCustomContext(key, to_valid_utf8(value));
  };
  add("pipebench_version", "0.1.0");
  add("git_commit", kGitCommit);
#ifdef NDEBUG
  // Debian's libbenchmark is built without NDEBUG, so Google Benchmark itself prints
  // "Library was built as DEBUG": that is about the framework, not the code measured.
  add("pipebench_build", "release (optimised, NDEBUG)");
#else
  add("pipebench_build", "DEBUG: timings of this build mean nothing");
  std::fprintf(stderr, "pipebench: warning: this is a debug build; its timings mean nothing\n");
#endif
  add("opencv_version", CV_VERSION);
  add("libjpeg_turbo_version", libjpeg_turbo_version());
  // The kernels' dispatched code path: "avx512", "avx2" (also under Valgrind) or "scalar".
  add("simd_path", simd_path());
  add("tbb_version", TBB_runtime_version());
  add("cuda_runtime", cuda.compiled ? cuda.runtime_version : "none");
  add("gpu", cuda.available ? cuda.device_name : "none (" + cuda.reason + ")");
  add("gpu_available", cuda.available ? "true" : "false");  // typed (model/record.cpp)
  // GPU utilisation, memory, PCIe and SM clock in the system metrics (device/nvml.h): the
  // device, or why not (one note; no driver is not an error).
  add("gpu_metrics", process_nvml().note());
  add("dataset", std::filesystem::absolute(c.data).string());
  add("on_error", c.on_error == OnError::kSkip ? "skip" : "stop");
  add("drop_last", ctx.drop_last() ? "true" : "false");
  add("dataset_images", std::to_string(ctx.disk().size()));
  add("dataset_bytes", std::to_string(ctx.disk().sample_bytes()));
  // Names, sizes and modification times: start-up reads no image (content hashing is
  // `pipebench-data inspect`'s business).
  add("dataset_fingerprint", ctx.disk().fingerprint());
  add("recipe", c.recipe);
  add("pipeline_spec", c.pipeline->spec().to_yaml());
  add("pipeline_plan", c.pipeline->plan_text());
  add("batch_size", std::to_string(c.batch));
  add("crop_size", std::to_string(c.size));
  add("seed", std::to_string(c.seed));
  add("baseline", c.baseline);
  add("compute_ms", std::to_string(c.compute_ms));
  add("workers", join(c.workers));
  add("prefetch_depth_batches", std::to_string(c.prefetch));
  // The system sampler's rate, samples/s (--system-sample-hz; 0: off, no system counters).
  add("system_sample_hz", std::to_string(c.system_sample_hz));
  // The machine's hardware threads: a fact about the node (the ranks' cores per node read
  // it), not the cores this run may use, which the run records as cores_available.
  add("hardware_threads", std::to_string(model::hardware_threads()));
  add_storage_context(ctx);
}

}  // namespace pipebench::bench
