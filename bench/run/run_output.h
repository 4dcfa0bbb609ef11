// The run's JSON file (--benchmark_out with the json format), written so that every
// consumer parses it and nothing already measured is lost:
//   - a counter whose value is not finite is left out of its row rather than written as
//     NaN or Infinity (Google Benchmark writes the coefficient of variation of a counter
//     that is 0 in every repetition as 0/0 = NaN, which JSON.parse, Python's strict json
//     and pipebench-report reject);
//   - every string (error messages name files, and file names need not be UTF-8) is made
//     valid UTF-8: each byte that does not start a valid sequence becomes U+FFFD;
//   - the file is written once, when the run has ended, to a temporary file beside the
//     target that is then renamed over it, so a full disk or an unwritable folder gives an
//     error naming the path instead of a truncated or empty file;
//   - what is known only after the run (the files skipped under --on-error=skip, the
//     number of errored cases) goes into its "context";
//   - the run record (model/record.h): every row gets its case's "key" (the key it was
//     registered with, and which time Google Benchmark timed it by), the context gets
//     "pipebench_record" and its typed keys become JSON numbers and booleans.
//
// Google Benchmark opens --benchmark_out itself when the run starts (exit 1 and "invalid
// file name" if it cannot); JsonFileReporter keeps the document in memory and ignores the
// stream Google Benchmark hands it, and write_run_json() replaces that file at the end.
#pragma once

#include <benchmark/benchmark.h>

#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "model/case_key.h"

namespace pipebench::bench {

/// `text` with every invalid UTF-8 byte replaced by U+FFFD (valid text is returned as is).
std::string to_valid_utf8(std::string_view text);

/// A Google Benchmark file reporter producing the JSON document described above.
class JsonFileReporter : public benchmark::BenchmarkReporter {
 public:
  /// `key_of`: the key a case was registered under, by its name (BenchContext::key_of);
  /// it must outlive the reporter.
  using KeyLookup = std::function<const model::CaseKey*(const std::string&)>;
  explicit JsonFileReporter(KeyLookup key_of);
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  /// The JSON text Google Benchmark's own JSONReporter wrote for the cleaned runs.
  std::string text() const { return buffer_.str(); }
  /// The key of each row of text()'s "benchmarks", in order (JSONReporter writes one row
  /// per run it is given).
  const std::vector<model::CaseKey>& row_keys() const { return row_keys_; }

 private:
  KeyLookup key_of_;
  std::ostringstream buffer_;
  benchmark::JSONReporter json_;
  std::vector<model::CaseKey> row_keys_;
};

/// What the run learnt after its context was written.
struct RunEpilogue {
  int errored_cases = 0;                    ///< runs that ended with SkipWithError
  std::vector<std::string> skipped_files;   ///< "path: reason", under --on-error=skip
  size_t skipped_total = 0;                 ///< all skipped files (the list keeps 20)
  /// Further context known only at the end (the machine's load during the run), as
  /// key -> string value.
  std::vector<std::pair<std::string, std::string>> context;
  /// Top-level objects added beside "context" and "benchmarks", as key -> JSON text
  /// (e.g. "per_image", bench/run/per_image.h).
  std::vector<std::pair<std::string, std::string>> sections;
};

/// Adds `epilogue` to the document's context, the run record (`row_keys`: one per row of
/// "benchmarks", JsonFileReporter::row_keys) and writes it to `path` through a temporary
/// file in the same folder and a rename (a path that is not a regular file, such as
/// /dev/stdout, is written in place). Throws std::runtime_error naming the path and the
/// reason when the document does not parse, its rows and keys disagree, or it cannot be
/// written completely.
void write_run_json(const std::string& document, const std::vector<model::CaseKey>& row_keys,
                    const RunEpilogue& epilogue, const std::filesystem::path& path);

}  // namespace pipebench::bench
