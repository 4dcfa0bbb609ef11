// pipebench: every stage of an image training input pipeline as a Google Benchmark case,
// and the end-to-end loader against a fixed training step. Google Benchmark's flags
// (--benchmark_filter, --benchmark_out, ...) work as usual; pipebench's own are in
// bench/README.md. Exit codes: 0 every case ran; 1 Google Benchmark refused a flag or
// could not open --benchmark_out; 2 bad flags or an unusable dataset (one line on stderr,
// nothing run); 3 the run finished and wrote its results, but at least one case errored (a
// bad file under --on-error=stop, say: each is named in the table and the JSON); 4 the
// results could not be written (--benchmark_out or --trace: the path and the reason).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "bench/bench_config.h"
#include "pipeline/cuda.h"
#include "transforms/recipes.h"
#include "transforms/registry.h"

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
      "  --pipeline=SPEC     your own pipeline instead: a YAML spec file, or inline YAML such as\n"
      "                      '[decode, {random_resized_crop: {size: 176}}, horizontal_flip, normalize]'\n"
      "  --list-ops          every operator, its parameters, types, defaults and ranges\n"
      "  --list-recipes      the shipped recipes and their specs\n"
      "  --workers=LIST      worker counts to sweep, e.g. 1,2,4 (1, 2, 4, ... up to 2x cores)\n"
      "  --compute-ms=X      emulated training step per batch, ms (25 per 64 images)\n"
      "  --baseline=NAME     emulated or cuda (cuda where a device exists)\n"
      "  --steps=N           timed batches per loader / end-to-end case (30)\n"
      "  --prefetch=N        loader prefetch depth in batches (2)\n"
      "  --trace=FILE        Chrome trace of the loader and end-to-end cases\n"
      "  --on-error=POLICY   a bad file: stop (the case errors, naming it) or skip (counted\n"
      "                      and listed in the JSON context) (stop)\n"
      "  --drop-last=BOOL    drop a short last batch (true; false when the dataset is\n"
      "                      smaller than one batch)\n"
      "\n"
      "Google Benchmark flags:\n");
  benchmark::PrintDefaultHelp();
}

// The value of --NAME=VALUE in argv (Google Benchmark takes only that form), or "".
std::string flag_value(int argc, char** argv, const char* name) {
  const std::string prefix = std::string("--") + name + "=";
  std::string value;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) value = argv[i] + prefix.size();
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  namespace pb = pipebench::bench;
  // A JSON results file is written by pipebench itself (bench/run_output.h): no NaN, valid
  // UTF-8, written whole or not at all. Other formats are Google Benchmark's own.
  const std::string out_path = flag_value(argc, argv, "benchmark_out");
  const std::string out_format = flag_value(argc, argv, "benchmark_out_format");
  const bool own_json = !out_path.empty() && (out_format.empty() || out_format == "json");
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--list-ops") == 0) {
      std::fputs(pipebench::OpRegistry::instance().describe().c_str(), stdout);
      return 0;
    }
    if (std::strcmp(argv[i], "--list-ops=markdown") == 0) {  // README.md's operator table
      std::fputs(pipebench::OpRegistry::instance().markdown_table().c_str(), stdout);
      return 0;
    }
    if (std::strcmp(argv[i], "--list-recipes") == 0) {
      for (const auto& name : pipebench::recipe_names())
        std::printf("== %s (transforms/recipes/%s.yaml)\n%s\n", name.c_str(), name.c_str(),
                    pipebench::recipe_text(name).c_str());
      return 0;
    }
  }
  benchmark::Initialize(&argc, argv, print_help);  // removes --benchmark_* flags
  try {
    pb::parse_flags(argc, argv);
    pb::open_dataset();
    pb::add_context();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipebench: error: %s\n", e.what());
    return 2;
  }
  if (!pipebench::cuda_available()) {
    std::fprintf(stderr, "pipebench: CUDA cases not run (BM_H2D, pinned collate, the cuda "
                 "baseline): %s\n", pipebench::cuda_info().reason.c_str());
  }
  pb::register_read_benchmarks();
  pb::register_decode_benchmarks();
  pb::register_transform_benchmarks();
  pb::register_sample_benchmarks();
  pb::register_collate_benchmarks();
  pb::register_h2d_benchmarks();
  pb::register_loader_benchmarks();
  pb::register_end_to_end_benchmarks();
  std::unique_ptr<pb::JsonFileReporter> json;
  if (own_json) json = std::make_unique<pb::JsonFileReporter>();
  benchmark::RunSpecifiedBenchmarks(nullptr, json.get());
  benchmark::Shutdown();
  // Each output is written on its own: a failed trace does not cost the JSON, or back.
  int rc = 0;
  const pb::RunEpilogue epilogue = pb::run_epilogue();
  if (json) {
    try {
      pb::write_run_json(json->text(), epilogue, out_path);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "pipebench: error: %s\n", e.what());
      rc = 4;
    }
  }
  try {
    if (auto path = pb::write_trace(); !path.empty())
      std::fprintf(stderr, "pipebench: trace written to %s (open in ui.perfetto.dev)\n",
                   path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipebench: error: %s\n", e.what());
    rc = 4;
  }
  if (epilogue.skipped_total > 0) {
    std::fprintf(stderr, "pipebench: %zu bad file(s) skipped (--on-error=skip), first: %s\n",
                 epilogue.skipped_total, epilogue.skipped_files.front().c_str());
  }
  if (rc == 0 && epilogue.errored_cases > 0) {
    std::fprintf(stderr, "pipebench: %d case(s) reported an error (ERROR OCCURRED above); "
                 "exit code 3\n", epilogue.errored_cases);
    rc = 3;
  }
  return rc;
}
