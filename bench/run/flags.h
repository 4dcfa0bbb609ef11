// pipebench's own command-line flags: one table (flag_table()) drives the parsing, the
// `--help` text and the flag list of README.md (`pipebench --help=markdown`; a test checks
// that README.md holds exactly that list). Google Benchmark's --benchmark_* flags are
// removed from argv by benchmark::Initialize before parse_flags() sees it.
#pragma once

#include <cstdint>
#include <filesystem>

#include "datasets/storage.h"
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/run/case_budget.h"
#include "model/fidelity.h"
#include "pipeline/loader.h"
#include "pipeline/callbacks.h"
#include "pipeline/dist/sync_step.h"
#include "transforms/pipeline.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace pipebench::bench {

/// The parsed flags of one run.
struct BenchConfig {
  std::filesystem::path data = "data/photos-in";  ///< ImageFolder root or WebDataset shard folder
  int batch = 64;                                 ///< samples per batch
  int size = 224;                                 ///< crop size, pixels
  uint64_t seed = 0;
  std::string recipe = "imagenet_train";          ///< the pipeline's name once parsed
  std::string pipeline_flag;                      ///< --pipeline: a spec file or inline YAML
  /// The pipeline of the loader and end-to-end cases: --pipeline if given, else --recipe.
  std::shared_ptr<const Pipeline> pipeline;
  std::vector<int> workers;                       ///< the sweep (default 1, 2, 4, ... 2x cores);
                                                  ///< empty with workers_auto until chosen
  bool workers_auto = false;                      ///< --workers=auto (bench/run/worker_auto.h)
  int cpu_budget = 0;                             ///< --cpu-budget, cores (auto only)
  /// --callback (repeatable): training extras run end to end as a sync/async pair
  /// (bench/cases/end_to_end_bench.cpp); without the flag, the default pair's set.
  std::vector<CallbackSpec> callbacks;
  double compute_ms = 25.0;                       ///< emulated step per batch, ms
  std::string baseline;                           ///< "emulated", "cuda" (the MLP) or "cuda:cnn"
  std::filesystem::path trace;                    ///< Chrome trace output, empty = none
  int steps = 30;                                 ///< timed batches per loader/end-to-end run (the most, with a budget)
  bool steps_given = false;                       ///< --steps given (or --quick): every case times exactly `steps`
  double budget_s = kDefaultBudgetSeconds;        ///< --budget: seconds per loader / end-to-end case (bench/run/case_budget.h)
  int prefetch = 2;                               ///< loader prefetch depth, batches
  int round = 256;                                ///< images per round of a per-image case (0 = all)
  OnError on_error = OnError::kStop;              ///< a bad file: end the case, or skip it
  std::optional<bool> drop_last;                  ///< --drop-last; unset = the default rule
  std::string malloc_policy = "fixed";            ///< --malloc: fixed or system (bench/run/machine.h)
  bool quiet = false;                             ///< --quiet: no progress line
  std::string counters = "compact";               ///< --counters: compact | all (the console's columns)
  bool quick = false;                             ///< --quick: a first verdict, fast
  CacheMode cache = CacheMode::kWarm;             ///< --cache: the sweep's page cache (datasets/storage.h)
  double read_throttle_mib_s = 0;                 ///< --read-throttle-mib-s, 0 = none (an emulation)
  double min_psnr_db = model::kDefaultMinPsnrDb;  ///< --min-psnr, dB (issue 35; recorded in the run)
  std::vector<int> shard_sizes;                   ///< --shards: images per shard of each packed copy, ascending; empty = none
  std::string presize = "auto";                   ///< --presize: auto, off or N (bench/cases/sample_bench.cpp)
  std::string presize_large = "auto";             ///< --presize-large: auto, off or M (megapixels; model/large_images.h)
  std::string tail_fixes = "auto";                ///< --tail-fixes: auto, on or off (bench/cases/tail_fixes.h)
  /// --sync: what each rank does after its step under mpirun (pipeline/dist/sync_step.h)
  dist::SyncMode sync = dist::SyncMode::kEmulated;
  double grad_mib = dist::kResNet50GradMiB;       ///< --grad-mib: the allreduce's buffer, MiB
  dist::LinkModel link;                           ///< --link-gbs, --link-latency-us (emulated)
  /// --system-sample-hz: the system sampler's rate during loader and end-to-end cases, Hz
  /// (measure/system_metrics.h); 0 = off (no system counters, series or BM_SystemSampler)
  int system_sample_hz = 20;
  /// The cores this run may use (model::cores_available(): affinity mask, cgroup quota),
  /// read once per run in main and given to parse_flags; the default sweep, --quick's
  /// counts, --workers=auto's budget, the case budget, the what-if table's worker count and
  /// the busy-machine check all count with it, and the run records it (context
  /// cores_available) for the report.
  double cores_available = 1;
  /// cores_available in whole cores, at least 1: the most workers that each get a core.
  int whole_cores() const { return cores_available >= 1 ? static_cast<int>(cores_available) : 1; }
};

/// Throws std::invalid_argument ("FLAG: cannot write PATH: reason") when `path` cannot be
/// created or appended to; leaves an existing file as it was and removes one it created.
/// For output flags, so that an unwritable path fails before the run, not after it.
void check_writable(const char* flag, const std::filesystem::path& path);

/// Google Benchmark's --benchmark_min_time (seconds per case) when the user gives none:
/// 0.2 s instead of Google Benchmark's 0.5 s, so the default run (about 70 cases) stays
/// under 90 s on photos-in with 2 cores (issue 14). The per-image cases measure whole rounds
/// of images (one round usually takes longer than this), so only the short stage cases
/// (BM_Transform, BM_Collate, BM_Read/warm) run fewer iterations; their CV over
/// repetitions stays within a few percent (README, "Repeatability"). The run's context
/// records the value used (min_time_s); --benchmark_min_time=0.5 gives Google Benchmark's.
inline constexpr const char* kDefaultMinTime = "0.2";

/// The training extra of the default run's sync/async pair (issue 10): a 16 MiB checkpoint
/// every 10 steps, small enough for a CI disk, large enough to show on a 25 ms step.
inline constexpr const char* kDefaultCallbacks = "checkpoint:mib=16,every=10";

/// What --quick changes: the flags it sets when the user did not (Google Benchmark's
/// included), and the line that says what it left out.
struct QuickPlan {
  static constexpr int kSteps = 10;
  static constexpr int kRound = 64;
  static constexpr const char* kMinTime = "0.05";
  /// The filter of a quick run: the pipeline's BM_Sample (and its what-if candidates),
  /// BM_TrainStep, BM_Loader and BM_EndToEnd, which the verdict needs.
  static std::string filter(const std::string& pipeline_name);
  static std::string message(const BenchConfig& c);
};

/// The flags' raw values, before they are resolved into a BenchConfig (a recipe name into
/// a Pipeline, a missing --compute-ms into the default for --batch, ...).
struct RawFlags {
  BenchConfig config;
  std::string recipe;         ///< --recipe, empty when not given
  double compute_ms = -1;     ///< --compute-ms, -1 when not given
  std::string on_error = "stop";
  std::string cache = "warm";
  std::string shards;  ///< --shards as given: "0", "64,256" or empty (the default rule, flags.cpp)
  std::string drop_last;      ///< "", "true" or "false"
  std::string workers;        ///< --workers as given: "auto", "1,2,4" or empty
  int cpu_budget = 0;         ///< --cpu-budget, 0 when not given
  std::vector<std::string> callbacks;  ///< --callback values as given
  std::string sync = "emulated";       ///< --sync as given
};

/// One flag: its name (without "--"), the placeholder of its value, the default as the
/// help shows it, the help text, and how it binds to RawFlags in CLI11.
struct FlagSpec {
  std::string name;
  std::string value;        ///< e.g. "DIR", "N", "LIST"; empty for an action
  std::string fallback;     ///< the default, as a person reads it
  std::string help;
  /// Adds the option to `app` bound to a field of `raw` (nullptr for actions that main()
  /// handles before parsing, such as --list-ops).
  std::function<CLI::Option*(CLI::App& app, RawFlags& raw, const std::string& option,
                             const std::string& help)>
      bind;
};

/// Every pipebench flag, in the order --help lists them.
const std::vector<FlagSpec>& flag_table();

/// Parses pipebench's flags (Google Benchmark's already removed) and resolves them: the
/// pipeline is built (spec errors carry file:line:column), the default sweep and step time
/// are filled in. Throws std::invalid_argument (or SpecError) with a one-line message for
/// an unknown flag, a bad value, or flags that contradict each other. `cores_available`: the
/// run's one reading of model::cores_available() (BenchConfig::cores_available).
BenchConfig parse_flags(int argc, char** argv, double cores_available);

/// The flags as --help prints them (one per line, value placeholder, default).
std::string flags_help();
/// The flags as README.md lists them (a Markdown table: flag, default, meaning).
std::string flags_markdown();

}  // namespace pipebench::bench
