// pipebench: every stage of an image training input pipeline as a Google Benchmark case,
// and the end-to-end loader against a fixed training step. Google Benchmark's flags
// (--benchmark_filter, --benchmark_out, ...) work as usual; pipebench's own are in
// bench/README.md. Bad flags or an unusable dataset: one line on stderr, exit code 2.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>

#include "bench/bench_config.h"

namespace {

void print_help() {
  std::printf(
      "pipebench: stage microbenchmarks and end-to-end loader sweeps of an image input pipeline\n"
      "\n"
      "pipebench flags:\n"
      "  --data=DIR          ImageFolder dataset root (default data/photos-in)\n"
      "  --batch=N           samples per batch (64)\n"
      "  --size=N            crop size in pixels (224)\n"
      "  --seed=N            random seed (0)\n"
      "  --recipe=NAME       recipe of the loader and end-to-end cases (imagenet_train)\n"
      "  --workers=LIST      worker counts to sweep, e.g. 1,2,4 (1, 2, 4, ... up to 2x cores)\n"
      "  --compute-ms=X      emulated training step per batch, ms (25 per 64 images)\n"
      "  --baseline=NAME     emulated or cuda (cuda where a device exists)\n"
      "  --steps=N           timed batches per loader / end-to-end case (30)\n"
      "  --prefetch=N        loader prefetch depth in batches (2)\n"
      "  --trace=FILE        Chrome trace of the loader and end-to-end cases\n"
      "\n"
      "Google Benchmark flags:\n");
  benchmark::PrintDefaultHelp();
}

}  // namespace

int main(int argc, char** argv) {
  namespace pb = pipebench::bench;
  benchmark::Initialize(&argc, argv, print_help);  // removes --benchmark_* flags
  try {
    pb::parse_flags(argc, argv);
    pb::open_dataset();
    pb::add_context();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipebench: error: %s\n", e.what());
    return 2;
  }
  pb::register_read_benchmarks();
  pb::register_decode_benchmarks();
  pb::register_transform_benchmarks();
  pb::register_sample_benchmarks();
  pb::register_collate_benchmarks();
  pb::register_h2d_benchmarks();
  pb::register_loader_benchmarks();
  pb::register_end_to_end_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  try {
    if (auto path = pb::write_trace(); !path.empty())
      std::fprintf(stderr, "pipebench: trace written to %s (open in ui.perfetto.dev)\n",
                   path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipebench: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
