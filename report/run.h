// Loading a pipebench run: the Google Benchmark JSON file that `pipebench
// --benchmark_out=run.json --benchmark_out_format=json` writes (bench/README.md, "JSON
// contract"), reduced to what the report needs: per case, the mean of every numeric field
// over its repetitions; Google Benchmark's aggregates of it (with --benchmark_repetitions);
// and the run's context.
//
// Input: a JSON object with a "benchmarks" array of rows and an optional "context" object.
// The means count iteration rows only (run_type "iteration", or no run_type): aggregate
// rows (_mean, _median, _stddev, _cv) would count twice, so they are kept apart, as
// written (BenchRun::aggregates); errored rows (error_occurred true) are dropped because
// their times are zeros, not measurements.
// A case is keyed by its run_name (the name without the repetition's suffix), else name.
// Units are the run's own: Google Benchmark's times in each row's time_unit, pipebench's
// counters as bench/README.md documents them (*_ms in milliseconds, items_per_second in
// images per second).
//
// Errors: ReportError (a std::runtime_error) with one line saying what is wrong; callers
// prefix the file name.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace pipebench::report {

/// A run the report cannot read, or a run without what the report needs.
class ReportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One benchmark case: every numeric field of its iteration rows, averaged over the rows
/// that have it (a counter written only by some repetitions is the mean of those).
struct CaseMeans {
  std::map<std::string, double> values;  ///< field -> mean (real_time, cpu_time, counters)
  int repetitions = 0;                   ///< iteration rows averaged (errored ones excluded)
};

/// Google Benchmark appends `/iterations:N`, `/repeats:N`, `/threads:N`, `/real_time`,
/// `/manual_time` or `/process_time` to a case that sets them; this drops those trailing
/// parts, so "BM_Sample/x/real_time" -> "BM_Sample/x".
std::string strip_case_suffixes(const std::string& name);

/// Google Benchmark's aggregate rows of one case: aggregate_name ("mean", "median",
/// "stddev", "cv") -> field -> value as written (a "cv" is a fraction: 0.02 = 2 %).
using CaseAggregates = std::map<std::string, std::map<std::string, double>>;

struct BenchRun {
  std::map<std::string, CaseMeans> cases;       ///< by run_name
  std::map<std::string, CaseAggregates> aggregates;  ///< by run_name; empty without repetitions
  std::map<std::string, std::string> context;   ///< string and number context values, as text

  /// The case named `name`, or the one whose name is `name` plus Google Benchmark's
  /// suffixes (strip_case_suffixes); nullptr when neither was measured.
  const CaseMeans* find(const std::string& name) const;
  /// A case's mean field; nullopt when the case or the field is missing.
  std::optional<double> value(const std::string& name, const std::string& field) const;
  /// A field of one of a case's aggregate rows (stat: "cv", "stddev", ...), the name
  /// matched as find() does; nullopt when the run has no such row or field.
  std::optional<double> aggregate(const std::string& name, const std::string& stat,
                                  const std::string& field) const;
  /// Milliseconds per image from a case's items_per_second; nullopt when it is missing
  /// or not > 0.
  std::optional<double> ms_per_item(const std::string& name) const;
  /// A context value, or `fallback` when the context does not have it.
  std::string context_or(const std::string& key, const std::string& fallback) const;
};

/// Reads a parsed document. Throws ReportError when it is not an object with a
/// "benchmarks" array, or a row's name / run_name / run_type / aggregate_name is not a
/// string or its error_occurred not a boolean (naming the row and the field).
BenchRun load_run(const nlohmann::json& doc);

/// Parses JSON text, then load_run. Throws ReportError ("not valid JSON: ...").
BenchRun parse_run(const std::string& text);

/// Reads a file, then parse_run. Throws ReportError ("cannot open the file").
BenchRun read_run(const std::filesystem::path& path);

}  // namespace pipebench::report
