// A one-line progress display on stderr while a run goes on: cases done / total, the case
// just finished, elapsed time and an estimate of what is left, redrawn in place after
// each case (Google Benchmark reports a case only when it has finished, so the line names
// the next case by the registration order). Shown only when stderr is a terminal and
// --quiet is not given; the line is erased before the run's last output, so logs and
// pipes see none of it.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/run/console_reporter.h"

namespace pipebench::bench {

/// The registered names that Google Benchmark's --benchmark_filter selects (a leading '-'
/// negates it, as Google Benchmark 1.7 does; empty, "all" or "." select every case).
std::vector<std::string> selected_cases(const std::vector<std::string>& names,
                                        const std::string& filter);

/// The console table (bench/run/console_reporter.h), plus the progress line.
class ProgressReporter : public UnitsConsoleReporter {
 public:
  /// `cases`: the selected cases in order; `repetitions` per case (1 without
  /// --benchmark_repetitions).
  ProgressReporter(OutputOptions options, std::vector<std::string> cases, int repetitions,
                   FamilyLookup family_of = nullptr, size_t name_width = 0);
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& reports) override;
  void Finalize() override;

  /// The line shown after `done` of `total` reports, `elapsed_s` into the run (public for
  /// its test): "[3/40] 12 s, about 2 min left; next: BM_Decode/roi".
  static std::string line(size_t done, size_t total, double elapsed_s, const std::string& next);

 private:
  void clear();
  void show();

  std::vector<std::string> cases_;
  size_t total_ = 0;
  size_t done_ = 0;
  int64_t start_ns_ = 0;
  bool shown_ = false;
};

}  // namespace pipebench::bench
