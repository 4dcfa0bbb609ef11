// pipebench: every stage of an image training input pipeline as a Google Benchmark case,
// and the end-to-end loader against a fixed training step. Google Benchmark's flags
// (--benchmark_filter, --benchmark_out, ...) work as usual; pipebench's own are in
// bench/README.md. Exit codes: 0 every case ran; 1 Google Benchmark refused a flag or
// could not open --benchmark_out; 2 bad flags or an unusable dataset (one line on stderr,
// nothing run); 3 the run finished and wrote its results, but at least one case errored (a
// bad file under --on-error=stop, say: each is named in the table and the JSON); 4 the
// results could not be written (--benchmark_out or --trace: the path and the reason).
#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "bench/run/benchmarks.h"
#include "bench/run/case_budget.h"
#include "bench/run/console_reporter.h"
#include "bench/run/flags.h"
#include "bench/run/machine.h"
#include "bench/run/progress.h"
#include "bench/run/ranks.h"
#include "bench/run/worker_auto.h"
#include "device/cuda.h"
#include "model/constants.h"
#include "model/cores.h"
#include "model/counters.h"
#include "pipeline/dist/dist.h"
#include "transforms/recipes.h"
#include "transforms/registry.h"

namespace {

void print_help() {
  std::printf("pipebench: stage microbenchmarks and end-to-end loader sweeps of an image input "
              "pipeline\n\npipebench flags:\n%s\nGoogle Benchmark flags:\n",
              pipebench::bench::flags_help().c_str());
  benchmark::PrintDefaultHelp();
}

// The output of ranks other than 0 under mpirun: rank 0 prints and writes for the job.
class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

// Under mpirun: every rank must run the same cases (their collectives pair up); a hash of
// the registered names compared across ranks.
bool same_cases_on_every_rank(const std::vector<std::string>& names) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the names
  for (const auto& n : names)
    for (unsigned char ch : n + '\n') h = (h ^ ch) * 1099511628211ull;
  const double mine = static_cast<double>(h >> 12);  // exact in a double
  return pipebench::dist::allreduce_min(mine) == pipebench::dist::allreduce_max(mine);
}

// The value of --NAME=VALUE in argv (Google Benchmark takes only that form), or "".
std::string flag_value(int argc, char** argv, const char* name) {
  const std::string prefix = std::string("--") + name + "=";
  std::string value;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) value = argv[i] + prefix.size();
  return value;
}

namespace pb = pipebench::bench;
namespace dist = pipebench::dist;

// What the command line asks of the outputs, read before Google Benchmark removes its flags.
struct Invocation {
  std::string out_path, out_format, reps, min_time, display_format, tabular, color;
  bool listing = false, own_json = false, user_filter = false, quick = false;
};

Invocation read_invocation(int argc, char** argv, int rank) {
  Invocation in;
  in.out_path = flag_value(argc, argv, "benchmark_out");
  in.out_format = flag_value(argc, argv, "benchmark_out_format");
  in.reps = flag_value(argc, argv, "benchmark_repetitions");
  in.listing = flag_value(argc, argv, "benchmark_list_tests") == "true";
  // A JSON results file is written by pipebench itself (bench/run/run_output.h): no NaN, valid
  // UTF-8, written whole or not at all. Other formats are Google Benchmark's own.
  in.own_json = rank == 0 && !in.out_path.empty() && (in.out_format.empty() || in.out_format == "json");
  in.min_time = flag_value(argc, argv, "benchmark_min_time");
  in.user_filter = !flag_value(argc, argv, "benchmark_filter").empty();
  in.display_format = flag_value(argc, argv, "benchmark_format");
  in.tabular = flag_value(argc, argv, "benchmark_counters_tabular");
  in.color = flag_value(argc, argv, "benchmark_color");
  for (int i = 1; i < argc; ++i) in.quick = in.quick || std::strcmp(argv[i], "--quick") == 0;
  return in;
}

// --list-ops, --list-ops=markdown, --help=markdown, --list-recipes, --list-counters: print
// and exit 0.
bool print_listing(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--list-ops") == 0) {
      std::fputs(pipebench::OpRegistry::instance().describe().c_str(), stdout);
      return true;
    }
    if (std::strcmp(argv[i], "--list-ops=markdown") == 0) {  // docs' operator table
      std::fputs(pipebench::OpRegistry::instance().markdown_table().c_str(), stdout);
      return true;
    }
    if (std::strcmp(argv[i], "--help=markdown") == 0) {  // docs' flag table
      std::fputs(pb::flags_markdown().c_str(), stdout);
      return true;
    }
    if (std::strcmp(argv[i], "--list-counters") == 0) {  // docs/counters.md's tables
      std::fputs(pipebench::model::counters_markdown().c_str(), stdout);
      return true;
    }
    if (std::strcmp(argv[i], "--list-recipes") == 0) {
      for (const auto& name : pipebench::recipe_names())
        std::printf("== %s (transforms/recipes/%s.yaml)\n%s\n", name.c_str(), name.c_str(),
                    pipebench::recipe_text(name).c_str());
      return true;
    }
  }
  return false;
}

// Google Benchmark's arguments as pipebench runs it, then benchmark::Initialize (which
// removes the --benchmark_* flags from argc / argv). `storage` keeps the strings alive.
void initialize_google_benchmark(int& argc, char**& argv, Invocation& in, int rank,
                                 std::vector<char*>& args, std::string& storage) {
  args.assign(argv, argv + argc);
  // Google Benchmark truncates --benchmark_out when the run starts, so a run that cannot
  // write its results (a full disk) would also destroy the previous file. pipebench writes
  // the JSON itself at the end (bench/run/run_output.h), so Google Benchmark gets /dev/null.
  static char dev_null_out[] = "--benchmark_out=/dev/null";
  if (in.own_json || rank != 0)
    for (auto& a : args)
      if (std::strncmp(a, "--benchmark_out=", 16) == 0) a = dev_null_out;
  // Google Benchmark's min time per case where the user gave none: QuickPlan::kMinTime for
  // --quick, else kDefaultMinTime (bench/run/flags.h says why).
  if (in.min_time.empty()) {
    in.min_time = in.quick ? pb::QuickPlan::kMinTime : pb::kDefaultMinTime;
    storage = "--benchmark_min_time=" + in.min_time;
    args.push_back(storage.data());
  }
  args.push_back(nullptr);
  argc = static_cast<int>(args.size()) - 1;
  argv = args.data();
  benchmark::Initialize(&argc, argv, print_help);
}

// The batches each loader and end-to-end case will time (bench/run/case_budget.h), planned
// before any case is registered; every rank from the slowest rank's probe.
void plan_budget(pb::BenchContext& ctx, int world) {
  const auto& c = ctx.config();
  pb::CaseBudget b;
  b.sample_ms = c.steps_given ? 0 : pb::probe_sample_ms(ctx, &b.probe_images);
  if (world > 1) b.sample_ms = dist::allreduce_max(b.sample_ms);
  const size_t per_rank = (ctx.disk().size() + static_cast<size_t>(world) - 1) / static_cast<size_t>(world);
  b.images_per_batch = static_cast<int>(std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(c.batch), per_rank)));
  b.compute_ms = c.baseline == "emulated" ? c.compute_ms : 0;
  b.cores = std::max(1.0, c.cores_available);
  b.prefetch = c.prefetch;
  b.budget_s = c.budget_s;
  b.max_steps = c.steps;
  b.fixed = c.steps_given;
  pb::check_budget(b);
  ctx.set_budget(b);
  if (b.fixed) {
    benchmark::AddCustomContext("budget", "none: --steps " + std::to_string(c.steps) + " batches per case");
    return;
  }
  benchmark::AddCustomContext("budget_s", std::to_string(b.budget_s));
  benchmark::AddCustomContext("budget_probe_sample_ms", std::to_string(b.sample_ms));
}

// pipebench's flags, the context, the --workers=auto search and the run context. Returns
// the context, or nullptr after printing why.
std::unique_ptr<pb::BenchContext> set_up(int argc, char** argv, const Invocation& in, int rank, int world,
                                         double cores_available, std::string& error) {
  try {
    pb::BenchConfig config = pb::parse_flags(argc, argv, cores_available);
    if (in.own_json) pb::check_writable("--benchmark_out", in.out_path);  // before the run, not after
    if (world > 1 && config.workers_auto)
      throw std::invalid_argument("--workers=auto searches on one process: give --workers=LIST "
                                  "under mpirun");
    // Each rank's trace beside rank 0's: FILE.rank<k>.
    if (rank != 0 && !config.trace.empty()) config.trace += ".rank" + std::to_string(rank);
    const std::string malloc_policy =
        config.malloc_policy == "fixed" ? pb::fix_malloc_policy() : "system: glibc defaults";
    auto ctx = std::make_unique<pb::BenchContext>(std::move(config));
    if (ctx->config().workers_auto) {
      const pb::AutoWorkers a = pb::choose_workers(*ctx, ctx->config().cpu_budget);
      ctx->set_worker_sweep(a.sweep);
      std::fprintf(stderr, "pipebench: --workers=auto at %.3f ms per sample and a %.1f ms step: %s\n",
                   a.per_sample_ms, a.compute_ms, a.search.summary(a.compute_ms).c_str());
      benchmark::AddCustomContext("workers_auto_budget_cores", std::to_string(a.search.budget));
      benchmark::AddCustomContext("workers_auto_chosen", std::to_string(a.search.chosen));
      // Reached the AU target (model::kAuTargetPct, recorded as au_target_pct): the key
      // names no figure (record 1-2 files wrote workers_auto_reached_au90).
      benchmark::AddCustomContext("workers_auto_reached_au_target", a.search.reached ? "true" : "false");
      char target[32];
      std::snprintf(target, sizeof target, "%g", pipebench::model::kAuTargetPct);
      benchmark::AddCustomContext("au_target_pct", target);
      benchmark::AddCustomContext("workers_auto_search", a.search.summary(a.compute_ms));
    }
    plan_budget(*ctx, world);
    pb::add_run_context(*ctx);
    benchmark::AddCustomContext("malloc_policy", malloc_policy);
    // Repeatability is part of the result: how many repetitions the aggregates come from.
    benchmark::AddCustomContext("repetitions", in.reps.empty() ? "1" : in.reps);
    benchmark::AddCustomContext("min_time_s", in.min_time);
    return ctx;
  } catch (const std::exception& e) {
    error = e.what();
    std::fprintf(stderr, "pipebench: error: %s\n", e.what());
    return nullptr;
  }
}

// The job in the context: world size and each rank's host (collective).
void add_job_context(const pb::BenchContext& ctx, int world) {
  const auto hosts = dist::gather(dist::host_name());
  std::string joined;
  for (const auto& h : hosts) joined += (joined.empty() ? "" : ",") + h;
  benchmark::AddCustomContext("world_size", std::to_string(world));
  benchmark::AddCustomContext("hosts", joined);
  benchmark::AddCustomContext("mpi", dist::built_with_mpi() ? "built" : "not built");
  benchmark::AddCustomContext("sync", dist::sync_mode_name(ctx.config().sync));
  benchmark::AddCustomContext("grad_mib", std::to_string(ctx.config().grad_mib));
  if (ctx.config().sync == dist::SyncMode::kEmulated) {
    benchmark::AddCustomContext("link_gb_per_s", std::to_string(ctx.config().link.gb_per_s));
    benchmark::AddCustomContext("link_latency_us", std::to_string(ctx.config().link.latency_us));
  }
}

// The console table with readable counters (bench/run/console_reporter.h: no "257u" for a
// ms counter), plus the progress line on a terminal only. Other --benchmark_format
// values are Google Benchmark's own reporters (nullptr).
std::unique_ptr<benchmark::BenchmarkReporter> make_console(const pb::BenchContext& ctx, const Invocation& in) {
  if (!in.display_format.empty() && in.display_format != "console") return nullptr;
  const bool colored = in.color.empty() || in.color == "auto" ? isatty(STDOUT_FILENO) != 0
                       : in.color == "true" || in.color == "yes" || in.color == "1";
  auto options = colored ? benchmark::ConsoleReporter::OO_Color : benchmark::ConsoleReporter::OO_None;
  if (in.tabular == "true")
    options = static_cast<benchmark::ConsoleReporter::OutputOptions>(options | benchmark::ConsoleReporter::OO_Tabular);
  // Compact (the columns that matter per family: bench/run/console_reporter.h) unless
  // --counters=all; the JSON keeps every counter either way.
  pb::UnitsConsoleReporter::FamilyLookup family_of;
  if (ctx.config().counters != "all")
    family_of = [&ctx](const std::string& name) {
      const pipebench::model::CaseKey* k = ctx.key_of(name);
      return k ? std::string(pipebench::model::family_name(k->family)) : std::string();
    };
  const auto selected = pb::selected_cases(ctx.case_names(), benchmark::GetBenchmarkFilter());
  size_t width = 0;
  if (family_of) {
    for (const auto& name : selected) width = std::max(width, name.size());
    if (!in.reps.empty() && in.reps != "1") width += 7;  // "_median" of the aggregate rows
  }
  if (!ctx.config().quiet && isatty(STDERR_FILENO))
    return std::make_unique<pb::ProgressReporter>(
        options, selected, in.reps.empty() ? 1 : std::max(1, std::atoi(in.reps.c_str())),
        std::move(family_of), width);
  return std::make_unique<pb::UnitsConsoleReporter>(options, std::move(family_of), width);
}

// The job's CPU on rank 0's host (collective): sibling ranks are not "other processes";
// the window opens at the earliest of them. Returns the job's processes on that host.
int finish_machine_load(pb::MachineLoad& load, int rank) {
  const auto cpu = dist::gather(std::vector<double>{load.own_cpu_ns(), static_cast<double>(load.start_ns())});
  const auto hosts = dist::gather(dist::host_name());
  double job = 0;
  int64_t job_start = load.start_ns();
  int processes = 0;
  for (size_t k = 0; k < cpu.size(); ++k)
    if (hosts[k] == hosts[0] && cpu[k].size() == 2) {
      job += cpu[k][0];
      job_start = std::min(job_start, static_cast<int64_t>(cpu[k][1]));
      ++processes;
    }
  load.finish(rank == 0 ? std::optional<double>(job) : std::nullopt,
              rank == 0 ? std::optional<int64_t>(job_start) : std::nullopt);
  return processes;
}

// What the run learnt after its context was written: the machine's load, the dataset's
// formats, the declared variants, the per-image costs and the system series.
pb::RunEpilogue make_epilogue(pb::BenchContext& ctx, const pb::MachineLoad& load, int job_processes) {
  pb::RunEpilogue epilogue = ctx.bad_files().epilogue();
  epilogue.context = {{"load_average_start", std::to_string(load.load_average_start)},
                      {"load_average_end", std::to_string(load.load_average_end)},
                      {"other_processes_cpu_cores", std::to_string(load.other_cpu_cores)},
                      {"job_cpu_cores", std::to_string(load.job_cpu_cores)},
                      {"job_processes_on_host", std::to_string(job_processes)},
                      {"load_window_s", std::to_string(load.window_s)},
                      {"cores_available", std::to_string(ctx.config().cores_available)},
                      {"busy_machine", load.busy ? "true" : "false"}};
  // Images per format by content (jpeg, png, ...), counted after the run: a 16-byte read
  // per file that no timing pays for. Non-JPEG images take the slower imgcodecs path.
  try {
    std::string formats;
    if (const auto* folder = ctx.folder()) {  // shards: the members' formats are not counted
      for (const auto& [format, count] : folder->formats())
        formats += (formats.empty() ? "" : ",") + format + ":" + std::to_string(count);
      epilogue.context.emplace_back("dataset_formats", formats);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipebench: warning: dataset formats not counted: %s\n", e.what());
  }
  // The spec's declared faster variants, as data: pipebench-report reads no YAML.
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& v : ctx.config().pipeline->spec().variants)
    variants.push_back({{"recipe", v.recipe}, {"fixes", v.fixes}});
  epilogue.sections.emplace_back("pipeline_variants", variants.dump());
  if (ctx.per_image().enabled())
    epilogue.sections.emplace_back("per_image", ctx.per_image().to_json(ctx.relative_files()));
  if (!ctx.system_series().empty())  // scripts/plot.py's CPU / GPU panel (bench/run/system_series.h)
    epilogue.sections.emplace_back("system_series", ctx.system_series().to_json());
  return epilogue;
}

// Each output on its own: a failed trace does not cost the JSON, or back. Returns 4 when
// one could not be written, else 0.
int write_outputs(pb::BenchContext& ctx, const pb::JsonFileReporter* json, const pb::RunEpilogue& epilogue,
                  const Invocation& in, int rank, int world) {
  int rc = 0;
  const auto failed = [&](const std::exception& e) {
    std::fprintf(stderr, "pipebench: error: %s\n", e.what());
    rc = 4;
  };
  if (json) {
    try {
      pb::write_run_json(json->text(), json->row_keys(), epilogue, in.out_path);
    } catch (const std::exception& e) {
      failed(e);
    }
  }
  try {
    const auto path = ctx.write_trace();
    if (!path.empty() && rank == 0 && world == 1)
      std::fprintf(stderr, "pipebench: trace written to %s (open in ui.perfetto.dev)\n", path.c_str());
  } catch (const std::exception& e) {
    failed(e);
  }
  // Under mpirun: the ranks' traces into rank 0's file, one process per rank (collective).
  if (world > 1 && ctx.trace()) {
    std::string merged = ctx.config().trace.string();
    if (rank != 0) merged.resize(merged.size() - (".rank" + std::to_string(rank)).size());
    try {
      if (pb::merge_rank_traces(merged, ctx.trace()->origin_ns(), dist::host_name()) && rank == 0)
        std::fprintf(stderr, "pipebench: trace of %d ranks written to %s (open in ui.perfetto.dev)\n",
                     world, merged.c_str());
    } catch (const std::exception& e) {
      failed(e);
    }
  }
  return rc;
}

// The job's exit code (bench/README.md): 4 outputs not written, 3 a case errored, else 0;
// under mpirun the worst rank's.
int exit_code(int rc, const pb::RunEpilogue& epilogue, int rank, int world) {
  if (epilogue.skipped_total > 0)
    std::fprintf(stderr, "pipebench: %zu bad file(s) skipped (--on-error=skip), first: %s\n",
                 epilogue.skipped_total, epilogue.skipped_files.front().c_str());
  if (rc == 0 && epilogue.errored_cases > 0) {
    if (rank == 0)
      std::fprintf(stderr, "pipebench: %d case(s) reported an error (ERROR OCCURRED above); "
                   "exit code 3\n", epilogue.errored_cases);
    rc = 3;
  }
  if (world > 1) rc = static_cast<int>(dist::allreduce_max(rc));
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  // MPI first, when mpirun / srun started us (pipeline/dist/dist.h); rank 0 prints and
  // writes the job's results, the other ranks run the same cases silently.
  const dist::Session mpi(&argc, &argv);
  const int rank = dist::rank(), world = dist::world_size();
  Invocation in = read_invocation(argc, argv, rank);
  if (print_listing(argc, argv)) return 0;
  std::vector<char*> args;
  std::string min_time_arg;
  initialize_google_benchmark(argc, argv, in, rank, args, min_time_arg);
  // The cores this run may use (affinity, cgroup quota), read once: everything in the run
  // that counts cores reads this one value (BenchConfig::cores_available), and the run
  // records it as the context's cores_available.
  const double cores_available = pipebench::model::cores_available();
  pb::MachineLoad load(cores_available);  // what else ran on the machine during the run
  std::string setup_error;
  std::unique_ptr<pb::BenchContext> ctx = set_up(argc, argv, in, rank, world, cores_available, setup_error);
  // Every rank stops when one could not set up (a collective would wait for it forever).
  if (const auto agreed = dist::agree(setup_error.empty(), setup_error); !agreed.ok()) {
    if (rank == 0 && setup_error.empty())
      std::fprintf(stderr, "pipebench: error: rank %d: %s\n", agreed.failed_rank, agreed.message.c_str());
    return 2;
  }
  add_job_context(*ctx, world);
  if (!pipebench::cuda_available() && rank == 0)
    std::fprintf(stderr, "pipebench: CUDA cases not run (BM_H2D, pinned collate, the device batch "
                 "operators, BM_Decode/nvjpeg, the cuda and cuda:cnn "
                 "baselines): %s\n", pipebench::cuda_info().reason.c_str());
  pb::register_all_benchmarks(*ctx);
  if (ctx->config().quick) {
    if (!in.user_filter) benchmark::SetBenchmarkFilter(pb::QuickPlan::filter(ctx->config().recipe));
    if (rank == 0) std::fprintf(stderr, "pipebench: %s\n", pb::QuickPlan::message(ctx->config()).c_str());
  }
  if (world > 1 && !same_cases_on_every_rank(ctx->case_names())) {
    if (rank == 0)
      std::fprintf(stderr, "pipebench: error: the ranks registered different cases (different "
                   "cores, CUDA devices or datasets per host?): every rank must run the same "
                   "cases under mpirun\n");
    return 2;
  }
  const auto console = make_console(*ctx, in);
  std::unique_ptr<pb::JsonFileReporter> json;
  if (in.own_json)
    json = std::make_unique<pb::JsonFileReporter>([&ctx](const std::string& name) { return ctx->key_of(name); });
  NullReporter silent;  // ranks other than 0 print nothing (rank 0 writes the job's figures)
  const size_t ran = rank != 0 ? benchmark::RunSpecifiedBenchmarks(&silent)
                               : benchmark::RunSpecifiedBenchmarks(console.get(), json.get());
  benchmark::Shutdown();
  if (ran == 0) {  // Google Benchmark said "Failed to match any benchmarks": no JSON to write
    if (rank == 0)
      std::fprintf(stderr, "pipebench: error: no case matches --benchmark_filter=%s (pipebench "
                   "--benchmark_list_tests lists the cases of this run)\n",
                   benchmark::GetBenchmarkFilter().c_str());
    return 2;
  }
  const int job_processes = finish_machine_load(load, rank);
  const pb::RunEpilogue epilogue = make_epilogue(*ctx, load, job_processes);
  if (load.busy && !in.listing && rank == 0) std::fprintf(stderr, "pipebench: warning: %s\n", load.warning().c_str());
  const int rc = write_outputs(*ctx, json.get(), epilogue, in, rank, world);
  return exit_code(rc, epilogue, rank, world);
}
