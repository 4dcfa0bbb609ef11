#include "bench/run/flags.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <cstdio>
#include <stdexcept>

#include "bench/run/machine.h"
#include "device/cuda.h"
#include "model/constants.h"
#include "model/large_images.h"
#include "pipeline/train_step.h"
#include "pipeline/train_step_cnn.h"
#include "transforms/recipes.h"
#include "transforms/spec.h"

namespace pipebench::bench {
namespace {

using Bind = decltype(FlagSpec::bind);

// The AU target as the help prints it, "90" (model/constants.h).
std::string au_target_text() {
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.0f", model::kAuTargetPct);
  return pct;
}

template <class T>
Bind bind_to(T RawFlags::*field) {
  return [field](CLI::App& app, RawFlags& raw, const std::string& option, const std::string& help) {
    return app.add_option(option, raw.*field, help);
  };
}

template <class T>
Bind bind_config(T BenchConfig::*field) {
  return [field](CLI::App& app, RawFlags& raw, const std::string& option, const std::string& help) {
    return app.add_option(option, raw.config.*field, help);
  };
}

Bind bind_link(double dist::LinkModel::*field) {
  return [field](CLI::App& app, RawFlags& raw, const std::string& option, const std::string& help) {
    return app.add_option(option, raw.config.link.*field, help);
  };
}

Bind flag_to(bool BenchConfig::*field) {
  return [field](CLI::App& app, RawFlags& raw, const std::string& option, const std::string& help) {
    return app.add_flag(option, raw.config.*field, help);
  };
}

Bind with_check(Bind bind, CLI::Validator check) {
  return [bind, check](CLI::App& app, RawFlags& raw, const std::string& option,
                       const std::string& help) { return bind(app, raw, option, help)->check(check); };
}

std::vector<int> parse_count_list(const std::string& text, int max);
std::vector<int> parse_worker_list(const std::string& text);

std::vector<FlagSpec> make_table() {
  std::vector<FlagSpec> t;
  t.push_back({"data", "DIR", "data/photos-in",
               "the dataset: an ImageFolder root (class folders of images) or a folder of "
               "WebDataset tar shards (pipebench-data pack)",
               bind_config(&BenchConfig::data)});
  t.push_back({"batch", "N", "64", "samples per batch",
               with_check(bind_config(&BenchConfig::batch), CLI::Range(1, 1 << 16))});
  t.push_back({"size", "N", "224", "crop size in pixels",
               with_check(bind_config(&BenchConfig::size), CLI::Range(8, 4096))});
  t.push_back({"seed", "N", "0", "random seed of the sampler and every random operator",
               bind_config(&BenchConfig::seed)});
  t.push_back({"recipe", "NAME", "imagenet_train",
               "a shipped recipe as the pipeline of the loader and end-to-end cases (--list-recipes)",
               bind_to(&RawFlags::recipe)});
  t.push_back({"pipeline", "SPEC", "",
               "your own pipeline instead: a YAML spec file, or inline YAML such as "
               "'[decode, {random_resized_crop: {size: 176}}, horizontal_flip, normalize]' "
               "(transforms/README.md)",
               bind_config(&BenchConfig::pipeline_flag)});
  t.push_back({"list-ops", "", "", "print every operator, its parameters, types, defaults and ranges, "
               "and exit (--list-ops=markdown: docs/operators.md's table)", nullptr});
  t.push_back({"list-recipes", "", "", "print the shipped recipes and their specs, and exit", nullptr});
  t.push_back({"list-counters", "", "", "print every counter a run writes, its unit, family and meaning "
               "(model/counters.h), as docs/counters.md's tables, and exit", nullptr});
  t.push_back({"workers", "LIST|auto", "1,2,4,... up to 2x cores",
               "worker counts to sweep, e.g. 1,2,4; auto: the fewest workers that keep the "
               "accelerator >= " + au_target_text() + " % busy within --cpu-budget, found by a short search "
               "(bench/run/worker_auto.h), then the loader cases at 1 and that count",
               [](CLI::App& app, RawFlags& raw, const std::string& option, const std::string& help) {
                 return app.add_option(option, raw.workers, help)->check(CLI::Validator(
                     [](std::string& v) -> std::string {
                       if (v == "auto") return "";
                       return parse_worker_list(v).empty() ? "a comma-separated list of counts "
                                                             "1..1024, or auto; got " + v
                                                           : "";
                     },
                     "LIST|auto"));
               }});
  t.push_back({"callback", "SPEC", "checkpoint:mib=16,every=10",
               "a training extra run after each step, repeatable: log, metric or checkpoint, "
               "options every=N, sync|async, mib=X (pipeline/callbacks.h); the loop runs with the "
               "set as given and with its callbacks async, a pair at one worker count",
               [](CLI::App& app, RawFlags& raw, const std::string& option, const std::string& help) {
                 return app.add_option(option, raw.callbacks, help)->check(CLI::Validator(
                     [](std::string& v) -> std::string {
                       try {
                         parse_callback(v);
                         return "";
                       } catch (const std::invalid_argument& e) {
                         return e.what();
                       }
                     },
                     "SPEC"));
               }});
  t.push_back({"cpu-budget", "N", "the cores available", "cores --workers=auto may use (its largest "
               "count; default: the CPUs this process may run on, capped by a cgroup CPU quota)",
               with_check(bind_to(&RawFlags::cpu_budget), CLI::Range(1, 1024))});
  t.push_back({"compute-ms", "X", "25 per 64 images", "emulated training step per batch, ms",
               bind_to(&RawFlags::compute_ms)});
  t.push_back({"baseline", "NAME", "cuda where a device exists, else emulated",
               "training-step baseline: emulated, cuda (the MLP; also cuda:mlp) or cuda:cnn (the "
               "case study's CNN, cuDNN)",
               with_check(bind_config(&BenchConfig::baseline), CLI::IsMember(train_step_baselines()))});
  t.push_back({"steps", "N", "30 at most, by --budget",
               "timed batches per loader / end-to-end case; given, every case times exactly N "
               "(no budget)",
               with_check(bind_config(&BenchConfig::steps), CLI::Range(1, 100000))});
  t.push_back({"budget", "S", "8",
               "seconds per loader / end-to-end case: each times the batches that fit (at least 2, "
               "at most --steps), planned from a short probe of the pipeline (bench/run/case_budget.h); "
               "a paired BM_Sample case repeats its round for a fifth of it; more buys precision "
               "with time",
               with_check(bind_config(&BenchConfig::budget_s), CLI::Range(0.1, 86400.0))});
  t.push_back({"prefetch", "N", "2", "loader prefetch depth, batches in flight",
               with_check(bind_config(&BenchConfig::prefetch), CLI::Range(1, 1024))});
  t.push_back({"round", "N", "256",
               "images per round of the read, decode and sample cases, spread evenly over the "
               "dataset, the same for every case (0: the whole dataset)",
               with_check(bind_config(&BenchConfig::round), CLI::Range(0, 1 << 30))});
  t.push_back({"trace", "FILE", "", "write a Chrome trace of the loader and end-to-end cases "
               "(open in ui.perfetto.dev); an unwritable path fails before the run",
               bind_config(&BenchConfig::trace)});
  t.push_back({"cache", "MODE", "warm",
               "the page cache of the loader and end-to-end sweep: warm, or cold (each file's "
               "pages dropped before it is read again, no root needed; adds the warm loader and "
               "the cold read at the table's worker count, so the verdict splits the data stall "
               "into fetch and prep: datasets/storage.h)",
               with_check(bind_to(&RawFlags::cache), CLI::IsMember({"warm", "cold"}))});
  t.push_back({"read-throttle-mib-s", "X", "0 (off)",
               "emulate slow storage: every read of the run shares one link of X MiB/s (an "
               "emulation, labelled in every result; with it the storage cases run as with --cache=cold)",
               with_check(bind_config(&BenchConfig::read_throttle_mib_s), CLI::Range(0.0, 1e9))});
  t.push_back({"min-psnr", "DB", "35",
               "fidelity floor of the recommendation, dB: a fix whose 5th-percentile PSNR against "
               "today's output (the worst 5 % of samples, same images and draws) is below it is "
               "not recommended; recorded in the run, pipebench-report --min-psnr overrides it "
               "(docs/what-if.md: 35 dB, the low end of a quality-90 JPEG re-encode)",
               with_check(bind_config(&BenchConfig::min_psnr_db), CLI::Range(0.0, 200.0))});
  t.push_back({"shards", "LIST", "64,256,1024 with --cache=cold or a throttle, else 0",
               "also measure --data packed into WebDataset shards of N images, for each N of the "
               "list (each made once into DATA/../.pipebench-cache/, like --presize): "
               "BM_Read/shards-N/... and the loader cold on them, the 'pack into shards' "
               "what-if; 0: off",
               [](CLI::App& app, RawFlags& raw, const std::string& option, const std::string& help) {
                 return app.add_option(option, raw.shards, help)->check(CLI::Validator(
                     [](std::string& v) -> std::string {
                       if (v == "0" || !parse_count_list(v, 1 << 20).empty()) return "";
                       return "0 or a comma-separated list of images per shard 1..1048576; got " + v;
                     },
                     "LIST"));
               }});
  t.push_back({"on-error", "POLICY", "stop",
               "a file that cannot be read or decoded: stop (each case that meets it errors, "
               "naming it) or skip (passed over, counted and listed in the JSON context)",
               with_check(bind_to(&RawFlags::on_error), CLI::IsMember({"stop", "skip"}))});
  t.push_back({"drop-last", "BOOL", "true; false when the dataset is smaller than one batch",
               "drop a short last batch of an epoch: true or false",
               with_check(bind_to(&RawFlags::drop_last), CLI::IsMember({"true", "false"}))});
  t.push_back({"malloc", "POLICY", "fixed",
               "fixed: large freed buffers stay in the heap (mallopt; GLIBC_TUNABLES overridden), "
               "so decode timings do not depend on the allocator's state; system: glibc's defaults",
               with_check(bind_config(&BenchConfig::malloc_policy), CLI::IsMember({"fixed", "system"}))});
  t.push_back({"presize", "MODE", "auto",
               "the presizing candidate BM_Sample/PIPELINE/presized:N, on a copy of --data with "
               "every shorter side reduced to N px (JPEG quality 90), made once into "
               "DATA/../.pipebench-cache/ (beside the pipebench binary when that is read-only) and "
               "reused while the dataset's fingerprint matches: auto (N = 8/7 of the pipeline's "
               "crop, 256 for 224; none without a known crop), off, or N",
               with_check(bind_config(&BenchConfig::presize),
                          CLI::Validator([](std::string& v) -> std::string {
                            if (v == "auto" || v == "off") return "";
                            const bool digits = !v.empty() && v.size() <= 5 &&
                                v.find_first_not_of("0123456789") == std::string::npos;
                            if (digits && std::stoi(v) >= 8) return "";
                            return "auto, off or a shorter side of at least 8 px, got " + v;
                          }, "auto|off|N"))});
  t.push_back({"presize-large", "MODE", "auto",
               "the tail fix BM_Sample/PIPELINE/presized_large:N (and end to end): a copy of the "
               "round where only the images above a size are presized, to N = the round's median "
               "shorter side (at least --presize=auto's), the others copied byte for byte: auto "
               "(above 4 x the round's median pixels, where such images hold a quarter of the "
               "round's pixels; model/large_images.h), off, or M (megapixels)",
               with_check(bind_config(&BenchConfig::presize_large),
                          CLI::Validator([](std::string& v) -> std::string {
                            if (v == "auto" || v == "off") return "";
                            try {
                              size_t end = 0;
                              const double mp = std::stod(v, &end);
                              if (end == v.size() && mp >= model::kMinThresholdMegapixels &&
                                  mp <= model::kMaxThresholdMegapixels)
                                return "";
                            } catch (const std::exception&) {
                            }
                            return "auto, off or a size in megapixels within [1e-6, 1e6], got " + v;
                          }, "auto|off|M"))});
  t.push_back({"tail-fixes", "MODE", "auto",
               "the tail fixes run end to end at the what-if table's worker count beside today's "
               "case, each measured against the step model's prediction from today's case's "
               "costs: BM_EndToEnd/PIPELINE/prefetch:2xP/... (twice --prefetch) and "
               "BM_EndToEnd/PIPELINE/delivery:out_of_order/... (PyTorch's in_order=False): auto "
               "(when the step model, from the files' sizes and the probe, forecasts either to "
               "save at least 2 % of the step; bench/cases/tail_fixes.h), on, or off",
               with_check(bind_config(&BenchConfig::tail_fixes), CLI::IsMember({"auto", "on", "off"}))});
  t.push_back({"sync", "MODE", "emulated",
               "under mpirun -np N: what each rank does after its training step, so the slowest "
               "rank sets the pace: emulated (wait for every rank, then the time a ring allreduce "
               "of --grad-mib takes on --link-gbs: no host CPU, as NCCL on GPUs), allreduce (the "
               "real MPI_Allreduce of --grad-mib on the host's CPU), barrier, or none "
               "(pipeline/dist/sync_step.h); nothing with one rank",
               with_check(bind_to(&RawFlags::sync),
                          CLI::IsMember({"emulated", "allreduce", "barrier", "none"}))});
  t.push_back({"grad-mib", "X", "97.5 (ResNet-50's gradients)",
               "the gradient buffer each step's allreduce sums over ranks, MiB of float32",
               with_check(bind_config(&BenchConfig::grad_mib), CLI::Range(0.0, 65536.0))});
  t.push_back({"link-gbs", "GB/s", "450 (NVLink 4, H100 SXM, one direction)",
               "--sync=emulated: the link's bandwidth each way, GB/s (1e9 bytes/s); InfiniBand "
               "NDR between nodes: 50",
               with_check(bind_link(&dist::LinkModel::gb_per_s), CLI::Range(0.001, 1e6))});
  t.push_back({"link-latency-us", "US", "5",
               "--sync=emulated: the latency of each of a ring allreduce's 2(N-1) steps, us",
               with_check(bind_link(&dist::LinkModel::latency_us), CLI::Range(0.0, 1e6))});
  t.push_back({"system-sample-hz", "N", "20",
               "the system sampler's rate during the loader and end-to-end cases, samples per "
               "second (CPU per core, user and system, memory, disk, context switches, GPU: "
               "measure/system_metrics.h); 0: off, no system counters, series or BM_SystemSampler",
               with_check(bind_config(&BenchConfig::system_sample_hz), CLI::Range(0, 1000))});
  t.push_back({"quick", "", "", "a first verdict in seconds: only the run's pipeline through "
               "BM_Sample, BM_Loader and BM_EndToEnd at 1 worker and every core, 10 steps, rounds "
               "of 64 images, Google Benchmark's min time 0.05 s; says what it left out",
               flag_to(&BenchConfig::quick)});
  t.push_back({"quiet", "", "", "no progress line on stderr (it is shown only on a terminal anyway)",
               flag_to(&BenchConfig::quiet)});
  t.push_back({"counters", "MODE", "compact",
               "the console's counters: compact (per family at most four that matter, e.g. "
               "end to end: step ms, AU, stall, prediction error) or all (every counter, as the "
               "JSON keeps them)",
               with_check(bind_config(&BenchConfig::counters), CLI::IsMember({"compact", "all"}))});
  t.push_back({"help", "", "", "this text, then Google Benchmark's flags (--help=markdown: "
               "docs/flags.md's table)", nullptr});
  return t;
}

// "1,2,4" -> {1, 2, 4}; empty when any item is not a count 1..1024.
// "1,2,4": counts in [1, max]; empty for anything else.
std::vector<int> parse_count_list(const std::string& text, int max) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos)
      return {};
    const int n = std::stoi(item);
    if (n < 1 || n > max) return {};
    out.push_back(n);
    pos = comma + 1;
  }
  return out;
}

std::vector<int> parse_worker_list(const std::string& text) { return parse_count_list(text, 1024); }

// 1, 2, 4, ... up to twice the cores the run may use.
std::vector<int> default_workers(int cores) {
  std::vector<int> w;
  for (int n = 1; n <= 2 * cores; n *= 2) w.push_back(n);
  return w;
}

std::string flag_names() {
  std::string s;
  for (const auto& f : flag_table())
    if (f.bind) s += (s.empty() ? "--" : " --") + f.name;
  return s;
}


std::shared_ptr<const Pipeline> resolve_pipeline(const RawFlags& raw, int size) {
  if (!raw.config.pipeline_flag.empty() && !raw.recipe.empty())
    throw std::invalid_argument("--pipeline and --recipe both name the pipeline: give one");
  // SpecError names the file (or --pipeline), the line and the column.
  if (!raw.config.pipeline_flag.empty())
    return Pipeline::build(pipeline_spec_from_flag(raw.config.pipeline_flag, size));
  try {
    return build_recipe(raw.recipe.empty() ? BenchConfig{}.recipe : raw.recipe, size);
  } catch (const SpecError&) {
    throw;
  } catch (const std::invalid_argument& e) {  // names the known recipes
    throw std::invalid_argument(std::string("--recipe: ") + e.what());
  }
}

}  // namespace

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

const std::vector<FlagSpec>& flag_table() {
  static const std::vector<FlagSpec> table = make_table();
  return table;
}

BenchConfig parse_flags(int argc, char** argv, double cores_available) {
  RawFlags raw;
  CLI::App app{"pipebench"};
  app.set_help_flag();  // --help is main()'s: flags_help() and then Google Benchmark's
  for (const auto& f : flag_table())
    if (f.bind) f.bind(app, raw, "--" + f.name, f.help);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::string msg = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
      const auto colon = msg.find(':');
      msg = "unknown flag: " + (colon == std::string::npos ? msg : msg.substr(colon + 2)) +
            " (pipebench flags: " + flag_names() + "; Google Benchmark's: --benchmark_*; --help lists them)";
    }
    throw std::invalid_argument(msg);
  }
  BenchConfig c = raw.config;
  c.cores_available = cores_available;
  c.steps_given = app.count("--steps") > 0 || c.quick;
  if (c.quick) {  // the quick plan's values, where the user gave none
    if (c.workers.empty()) {
      // Every core this process may use (affinity, cgroup quota), as the report counts them.
      const int cores = c.whole_cores();
      c.workers = cores > 1 ? std::vector<int>{1, cores} : std::vector<int>{1};
    }
    if (!app.count("--steps")) c.steps = QuickPlan::kSteps;
    if (!app.count("--round")) c.round = QuickPlan::kRound;
  }
  if (raw.workers == "auto") {
    c.workers_auto = true;
    c.cpu_budget = raw.cpu_budget > 0 ? raw.cpu_budget : c.whole_cores();
  } else {
    if (raw.cpu_budget > 0) throw std::invalid_argument("--cpu-budget applies to --workers=auto only");
    if (!raw.workers.empty()) c.workers = parse_worker_list(raw.workers);
  }
  if (c.workers.empty() && !c.workers_auto) c.workers = default_workers(c.whole_cores());
  for (const auto& text : raw.callbacks.empty() ? std::vector<std::string>{kDefaultCallbacks}
                                                : raw.callbacks)
    c.callbacks.push_back(parse_callback(text));
  c.sync = dist::parse_sync_mode(raw.sync);
  c.on_error = raw.on_error == "skip" ? OnError::kSkip : OnError::kStop;
  c.cache = parse_cache_mode(raw.cache);
  const bool storage_study = c.cache == CacheMode::kCold || c.read_throttle_mib_s > 0;
  if (raw.shards.empty()) {
    if (storage_study) c.shard_sizes = {64, 256, 1024};
  } else if (raw.shards != "0") {
    c.shard_sizes = parse_count_list(raw.shards, 1 << 20);
    std::sort(c.shard_sizes.begin(), c.shard_sizes.end());
    c.shard_sizes.erase(std::unique(c.shard_sizes.begin(), c.shard_sizes.end()), c.shard_sizes.end());
  }
  if (!raw.drop_last.empty()) c.drop_last = raw.drop_last == "true";
  c.pipeline = resolve_pipeline(raw, c.size);
  c.recipe = c.pipeline->name();
  if (raw.compute_ms >= 0) {
    c.compute_ms = raw.compute_ms;
  } else if (app.count("--compute-ms")) {
    throw std::invalid_argument("--compute-ms must be >= 0 ms, got " + std::to_string(raw.compute_ms));
  } else {
    c.compute_ms = 25.0 * c.batch / 64.0;  // 25 ms per batch of 64, scaled to --batch
  }
  if (c.baseline.empty()) c.baseline = cuda_available() ? "cuda" : "emulated";
  if (c.baseline == "cuda:mlp") c.baseline = "cuda";  // one name for the MLP in case names
  if (is_cuda_baseline(c.baseline) && !cuda_available())
    throw std::invalid_argument("--baseline=" + c.baseline + " needs a CUDA device: " + cuda_info().reason);
  if (c.baseline == "cuda:cnn" && !cnn_step_built())
    throw std::invalid_argument("--baseline=cuda:cnn needs cuDNN: this build has none (cudnn.h and "
                                "libcudnn were not found in the CUDA toolkit)");
  if (!c.trace.empty()) check_writable("--trace", c.trace);
  return c;
}

std::string QuickPlan::filter(const std::string& pipeline_name) {
  std::string quoted;  // the name as a regex literal
  for (char ch : pipeline_name) {
    if (std::string("\\^$.|?*+()[]{}").find(ch) != std::string::npos) quoted += '\\';
    quoted += ch;
  }
  // The pipeline's BM_Sample and its what-if candidates (BM_Sample/<name>/<change>).
  return "^BM_(Sample/" + quoted + "($|/)|TrainStep/|Loader/" + quoted + "/|EndToEnd/" + quoted + "/)";
}

std::string QuickPlan::message(const BenchConfig& c) {
  std::ostringstream s;
  s << "--quick: BM_Sample/" << c.recipe << ", BM_TrainStep, BM_Loader and BM_EndToEnd at workers ";
  for (size_t i = 0; i < c.workers.size(); ++i) s << (i ? "," : "") << c.workers[i];
  s << ", " << c.steps << " steps, rounds of " << c.round << " images; left out: BM_Read, "
    << "BM_Decode, BM_Transform, BM_Collate, BM_H2D, BM_StageTimers, BM_SystemSampler and the other recipes' "
    << "BM_Sample (run without --quick for them)";
  return s.str();
}

std::string flags_help() {
  constexpr size_t kIndent = 22, kWidth = 100;
  std::ostringstream s;
  for (const auto& f : flag_table()) {
    std::string text = f.help + (f.fallback.empty() ? "" : " (default: " + f.fallback + ")");
    std::string line = "  --" + f.name + (f.value.empty() ? "" : "=" + f.value);
    line += std::string(line.size() < kIndent ? kIndent - line.size() : 1, ' ');
    // Words wrapped at kWidth columns, continuation lines indented under the text.
    std::istringstream words(text);
    std::string word;
    bool first = true;
    while (words >> word) {
      if (!first && line.size() + 1 + word.size() > kWidth) {
        s << line << "\n";
        line = std::string(kIndent, ' ');
        first = true;
      }
      line += (first ? "" : " ") + word;
      first = false;
    }
    s << line << "\n";
  }
  return s.str();
}

std::string flags_markdown() {
  std::ostringstream s;
  s << "| flag | default | meaning |\n| --- | --- | --- |\n";
  // A '|' splits a table cell even inside a code span (GitHub Flavored Markdown): escape it.
  const auto cell = [](std::string text) {
    for (size_t p = 0; (p = text.find('|', p)) != std::string::npos; p += 2) text.replace(p, 1, "\\|");
    return text;
  };
  for (const auto& f : flag_table()) {
    s << "| `" << cell("--" + f.name + (f.value.empty() ? "" : "=" + f.value)) << "` | "
      << cell(f.fallback) << " | " << cell(f.help) << " |\n";
  }
  return s.str();
}

}  // namespace pipebench::bench
