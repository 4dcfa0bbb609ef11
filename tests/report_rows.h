// Runs for the report library's tests (report_test.cpp, whatif_test.cpp): rows built in
// memory with nlohmann::json in the shape Google Benchmark writes, and the report of one.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "report/report.h"
#include "report/run.h"

namespace pipebench::report::testing {

/// One iteration row of case `name` with the given numeric fields.
inline nlohmann::json row(const std::string& name, nlohmann::json fields) {
  fields["name"] = name;
  fields["run_name"] = name;
  fields["run_type"] = "iteration";
  return fields;
}

/// The report of a run document, through the same parser pipebench-report uses.
inline Report report_of(const nlohmann::json& doc) { return build_report(parse_run(doc.dump())); }

}  // namespace pipebench::report::testing
