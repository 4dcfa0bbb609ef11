// Loading a pipebench run: the Google Benchmark JSON file that `pipebench
// --benchmark_out=run.json --benchmark_out_format=json` writes (bench/README.md, "JSON
// contract"), reduced to what the report needs: per case, its key (model/case_key.h) and
// the mean of every numeric field over its repetitions; Google Benchmark's aggregates of it
// (with --benchmark_repetitions); and the run's context.
//
// Input: a JSON object with a "benchmarks" array of rows and an optional "context" object.
// Each row's case comes from its "key" (the run record, model/record.h); a file written
// before the record (no context.pipebench_record) goes through the legacy adapter
// (model/legacy.h), and a newer record version is refused naming the pipebench that wrote
// it. The means count iteration rows only (run_type "iteration", or no run_type): aggregate
// rows (_mean, _median, _stddev, _cv) would count twice, so they are kept apart, as
// written (BenchRun::aggregates); errored rows (error_occurred true) are dropped because
// their times are zeros, not measurements.
// A case is found by its key, or by the key's name(); nothing here reads inside a name.
// A counter is read by its entry of the counter schema (model/counters.h: value(name,
// CounterId::kDataMs)), never by a name spelled here; a pattern's (callback:<label>_ms,
// rank<k>_<figure>) with its part. Units are the schema's: Google Benchmark's times in each
// row's time_unit, every counter in its entry's unit (data_ms in milliseconds,
// items_per_second in images per second).
//
// Errors: ReportError (a std::runtime_error) with one line saying what is wrong; callers
// prefix the file name.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/case_key.h"
#include "model/counters.h"

namespace pipebench::report {

using model::CounterId;

/// A run the report cannot read, or a run without what the report needs.
class ReportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One benchmark case: every numeric field of its iteration rows, averaged over the rows
/// that have it (a counter written only by some repetitions is the mean of those).
struct CaseMeans {
  model::CaseKey key;                    ///< what the case measures
  std::map<std::string, double> values;  ///< JSON field -> mean (real_time, cpu_time, counters), as read
  int repetitions = 0;                   ///< iteration rows averaged (errored ones excluded)

  /// The mean of the counter `id`; nullopt when the case has none.
  std::optional<double> get(CounterId id) const;
  /// The mean of a pattern counter with its part; nullopt when the case has none.
  std::optional<double> get(CounterId id, std::string_view part) const;
};

/// Google Benchmark's aggregate rows of one case: aggregate_name ("mean", "median",
/// "stddev", "cv") -> field -> value as written (a "cv" is a fraction: 0.02 = 2 %).
using CaseAggregates = std::map<std::string, std::map<std::string, double>>;

struct BenchRun {
  int record_version = 0;                        ///< model/record.h; 0: read through the legacy adapter
  std::map<std::string, CaseMeans> cases;        ///< by the key's name()
  std::map<std::string, CaseAggregates> aggregates;  ///< by the key's name(); empty without repetitions
  std::map<std::string, model::CaseKey> keys;    ///< every case's key by name, aggregate-only ones too
  std::map<std::string, std::string> context;   ///< string and number context values, as text
  std::map<std::string, double> numbers;         ///< the typed context's numbers (model/record.h)
  std::map<std::string, bool> flags;             ///< the typed context's booleans
  /// The pipeline's declared faster variants ("pipeline_variants": recipe -> the stage it
  /// fixes), in the spec's order.
  std::vector<std::pair<std::string, std::string>> declared_variants;

  /// The case registered under `name` (a key's name()); nullptr when not measured.
  const CaseMeans* find(const std::string& name) const;
  const CaseMeans* find(const model::CaseKey& key) const { return find(key.name()); }
  /// The cases whose key satisfies `pred`, in name order.
  std::vector<const CaseMeans*> where(const std::function<bool(const model::CaseKey&)>& pred) const;
  /// A case's mean of the counter `id`; nullopt when the case or the counter is missing.
  std::optional<double> value(const std::string& name, CounterId id) const;
  /// A case's mean of a pattern counter with its part (counter_name(id, part)).
  std::optional<double> value(const std::string& name, CounterId id, std::string_view part) const;
  /// A counter of one of a case's aggregate rows (stat: "cv", "stddev", ...); nullopt when
  /// the run has no such row or counter.
  std::optional<double> aggregate(const std::string& name, const std::string& stat, CounterId id) const;
  /// Milliseconds per image from a case's items_per_second; nullopt when it is missing
  /// or not > 0.
  std::optional<double> ms_per_item(const std::string& name) const;
  std::optional<double> ms_per_item(const model::CaseKey& key) const { return ms_per_item(key.name()); }
  std::optional<double> value(const model::CaseKey& key, CounterId id) const { return value(key.name(), id); }
  /// A context value as text, or `fallback` when the context does not have it.
  std::string context_or(const std::string& key, const std::string& fallback) const;
  /// A typed context number (model/record.h: a JSON number, or text that parses whole);
  /// nullopt when absent or not a number.
  std::optional<double> number(const std::string& key) const;
  /// A typed context count: number() rounded and clamped to [0, 1e9] (a fuzzed "1e300"
  /// must not overflow an int); `fallback` when absent or not a number.
  int count(const std::string& key, int fallback = 0) const;
  /// A typed context boolean; nullopt when absent or not one.
  std::optional<bool> flag(const std::string& key) const;
};

/// Reads a parsed document. Throws ReportError when it is not an object with a
/// "benchmarks" array, or a row's name / run_name / run_type / aggregate_name is not a
/// string, its error_occurred not a boolean or its key not valid (naming the row and the
/// field), or the record is newer than this build reads.
BenchRun load_run(const nlohmann::json& doc);

/// Parses JSON text, then load_run. Throws ReportError ("not valid JSON: ...").
BenchRun parse_run(const std::string& text);

/// Reads a file, then parse_run. Throws ReportError ("cannot open the file").
BenchRun read_run(const std::filesystem::path& path);

}  // namespace pipebench::report
