// pipebench-report RUN.json [--json] [--verbose] [--peer PEER.json]: reads a pipebench run (Google Benchmark JSON) and
// prints its verdict, the what-if table with its recommendation and check, and the trust
// warnings (report/: what it reads and how it decides; one line per cause, at most 5,
// --verbose: every case's own); --peer adds "your framework's
// loader", scripts/torch_peer.py's measurement (report/peer.h). This file is the command
// line only: flags, the file, the output stream and exit codes. Bad input: one line on
// stderr naming the file, exit code 2.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

#include "report/format.h"
#include "report/peer.h"
#include "report/report.h"
#include "report/run.h"

int main(int argc, char** argv) {
  CLI::App app{"pipebench-report: the data-bound / compute-bound verdict of a pipebench run, "
               "what each measured change would give, and how far its numbers can be trusted"};
  std::string path;
  bool as_json = false;
  app.add_option("run", path, "pipebench JSON (--benchmark_out=run.json --benchmark_out_format=json)")
      ->required();
  app.add_flag("--json", as_json, "print the verdict as JSON");
  bool verbose = false;
  app.add_flag("--verbose", verbose,
               "print every per-case trust warning (default: one line per cause naming its cases, "
               "at most 5 lines); --json always has both");
  std::string peer_path;
  app.add_option("--peer", peer_path,
                 "scripts/torch_peer.py's JSON: torchvision + DataLoader on the same spec and files, "
                 "shown in the what-if table as \"your framework's loader\"");
  std::optional<double> min_psnr;
  app.add_option("--min-psnr", min_psnr,
                 "fidelity floor of the recommendation, dB, over the run's recorded --min-psnr: a fix "
                 "whose 5th-percentile PSNR against today's output is below it is not recommended")
      ->check(CLI::Range(0.0, 200.0));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "pipebench-report: error: %s\n", e.what());
    return 2;
  }
  try {
    auto run = pipebench::report::read_run(path);
    if (min_psnr) {  // over the run's recorded --min-psnr (report/whatif.h reads the number)
      run.numbers["min_psnr_db"] = *min_psnr;
      run.context["min_psnr_db"] = std::to_string(*min_psnr);
    }
    auto report = pipebench::report::build_report(run);
    report.trust.verbose = verbose;
    if (!peer_path.empty()) {
      try {
        pipebench::report::add_peer(report, run, pipebench::report::read_peer(peer_path));
      } catch (const std::exception& e) {  // names the peer's file, not the run's
        std::fprintf(stderr, "pipebench-report: error: %s\n", e.what());
        return 2;
      }
    }
    if (as_json) {
      std::cout << pipebench::report::to_json(report).dump(2) << "\n";
    } else {
      std::cout << pipebench::report::format_text(report);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipebench-report: error: %s: %s\n", path.c_str(), e.what());
    return 2;
  }
  return 0;
}
