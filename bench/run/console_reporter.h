// The run's table on the console: Google Benchmark's console layout (name, Time, CPU,
// Iterations, then the counters) with counters a reader can take at face value.
//
// Google Benchmark 1.7.1 prints every counter through its HumanReadableNumber, with SI
// prefixes for small values too: a 0.000257 ms collate time reads "collate_ms=257u" (a
// millisecond counter with a micro suffix) and a 0.00961 % error "9.61m". Here:
//   - no counter is printed with a fraction prefix (m, u, n, ...): values below 100000
//     are plain decimals (about four significant digits, integers without decimals);
//     from 100000 up the large prefixes k, M, G, T (Ki, Mi, ... for 1024-based counters)
//     keep the columns narrow, as Google Benchmark does; below 1e-7, scientific notation;
//   - each counter is shown in the unit its entry of the counter schema gives
//     (model/counters.h, CounterSpec::shown), the same in every row: a millisecond counter
//     whose values are fractions of a millisecond (the per-sample stage times, waits, a
//     paired saving) is shown in microseconds under its name ending in "_us"
//     (collate_ms = 0.000257 is shown as collate_us=0.257, and collate_ms = 2.5 as
//     collate_us=2500), a per-batch one (step_ms, data_ms) in ms: one unit per column,
//     never chosen by the row. A counter the schema does not hold is shown as it is;
//   - rates (the schema's images/s, bytes/s, MP/s, GB/s units) keep their "/s", and the
//     coefficient-of-variation rows of repetitions (aggregate unit percentage) print
//     "12.34%" for every counter.
// Only the console changes: the JSON (bench/run/run_output.h) keeps the counters' names and
// values in their own units (ms), which the report and the scripts read.
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/counters.h"

namespace pipebench::bench {

/// One counter as the console shows it.
struct ConsoleCounter {
  std::string name;  ///< the counter's name, its "_us" form, or its compact heading (see above)
  std::string text;  ///< the value with its rate or percent unit, no SI fraction prefix
};

/// `value` as a plain decimal (see above); `one_k` 1024 gives Ki/Mi/Gi/Ti for large values.
std::string format_counter_value(double value, int one_k = 1000);

/// How the counter `name` with `counter` is shown; `percent_row` for the coefficient-of-
/// variation rows of repetitions (value 0.05 -> "5.00%", name unchanged).
ConsoleCounter console_counter(const std::string& name, const benchmark::Counter& counter,
                               bool percent_row);

/// The counters the compact console shows for a case of `family` (model::family_name:
/// "EndToEnd", ...), at most four besides items_per_second; empty: every counter.
const std::vector<model::CounterId>& compact_counters(const std::string& family);
/// The compact console's heading of a counter's column ("saving_us", "images/s"), which
/// ends in the column's console unit; the counter's name where it has no short one.
std::string_view compact_heading(model::CounterId id);

/// Google Benchmark's console reporter with the counters shown as above. With a family
/// lookup (`family_of`: a registered case name -> its family, "" when unknown), the compact
/// layout: items_per_second and compact_counters(family) only, so a row fits a terminal
/// (the JSON keeps every counter); without one, every counter.
class UnitsConsoleReporter : public benchmark::ConsoleReporter {
 public:
  using FamilyLookup = std::function<std::string(const std::string&)>;
  /// `name_width` > 0 (compact only): the name column's width, the longest registered name
  /// of the run; a row then shows the case's registered name, without Google Benchmark's
  /// settings (/iterations:N/real_time).
  explicit UnitsConsoleReporter(OutputOptions options, FamilyLookup family_of = nullptr, size_t name_width = 0)
      : ConsoleReporter(options), family_of_(std::move(family_of)), name_width_(name_width) {}
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& reports) override;

 protected:
  void PrintHeader(const Run& run) override;
  void PrintRunData(const Run& run) override;

 private:
  void print_header(const std::vector<ConsoleCounter>& counters);
  void print_row(const Run& run, const std::vector<ConsoleCounter>& counters);
  bool tabular() const { return (output_options_ & OO_Tabular) != 0; }

  std::vector<std::string> header_names_;  ///< the counter columns of the last header
  FamilyLookup family_of_;
  size_t name_width_ = 0;
  /// The row's name as shown (see name_width above).
  std::string shown_name(const Run& run) const;
  /// Padded to the name column; in the compact layout a longer name is on a line of its own.
  std::string wrapped_name(const std::string& name) const;
  /// The compact layout's name column at most: rows stay within 160 characters.
  static constexpr size_t kMaxNameWidth = 52;
  /// The counters of `run` this reporter shows (all, or the compact set).
  std::vector<ConsoleCounter> shown(const Run& run) const;
};

}  // namespace pipebench::bench
