// pipebench-report RUN.json [--json]: reads a pipebench run (Google Benchmark JSON) and
// prints its verdict, the what-if table with its recommendation and check, and the trust
// warnings (report/: what it reads and how it decides). This file is the command
// line only: flags, the file, the output stream and exit codes. Bad input: one line on
// stderr naming the file, exit code 2.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "report/format.h"
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "pipebench-report: error: %s\n", e.what());
    return 2;
  }
  try {
    const auto report = pipebench::report::build_report(pipebench::report::read_run(path));
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
