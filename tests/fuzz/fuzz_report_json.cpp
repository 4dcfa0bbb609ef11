// pipebench-report's reader on arbitrary text: report::parse_run (nlohmann::json, then the
// run's cases and context), and for a run it accepts, build_report, format_text and to_json
// dumped to text (what `pipebench-report` prints and writes). Accepted: ReportError.
// Anything else escaping (a nlohmann::json exception, std::out_of_range, ...), a sanitizer
// report (a float-to-int overflow on a huge counter, say) or the limits is a finding.
// The gates' run reader (scripts/pbgate/record.py, Python) is not fuzzed here: atheris
// is not packaged in Debian 12. fuzz_common.h has the limits.
#include <nlohmann/json.hpp>

#include <string>

#include "report/format.h"
#include "report/report.h"
#include "report/run.h"
#include "tests/fuzz/fuzz_common.h"

using namespace pipebench;

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  fuzz::apply_contract(argc, argv, 16 * 1024);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  report::BenchRun run;
  try {
    run = report::parse_run(text);
  } catch (const report::ReportError&) {
    return 0;
  }
  for (const auto& [name, c] : run.cases) {
    (void)run.ms_per_item(name);
    (void)run.value(name, report::CounterId::kRealTime);
  }
  report::Report r;
  try {
    r = report::build_report(run);
  } catch (const report::ReportError&) {
    return 0;
  }
  const std::string text_out = report::format_text(r);
  const std::string json_out = report::to_json(r).dump(2);
  fuzz::require(!text_out.empty() && !json_out.empty(), "empty report");
  return 0;
}
