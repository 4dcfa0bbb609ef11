// Printing the what-if table, its recommendation and check (report/whatif.h) and the trust
// warnings and CV table (report/trust.h): the parts of format_text and to_json
// (report/format.h) that issue 8 and the trust checks add: the text in format_whatif.cpp,
// the JSON in format_whatif_json.cpp. Internal to report/.
// Units: CPU ms per sample; data and step ms per batch; AU and savings in percent; rates
// in images per second. JSON keys carry their unit (bench/README.md, "pipebench-report").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "report/report.h"

namespace pipebench::report {

/// The what-if table, the recommendation and the check, as text ("" without a table
/// and without a note).
void append_what_if_text(std::string& out, const Report& r);
/// The trust warnings and the CV table, as text ("" when there are none).
void append_trust_text(std::string& out, const Report& r);

/// Adds "what_if", "recommendation", "check", "trust_warnings", "repetitions" and
/// "cv_pct" to `j`.
void add_what_if_json(nlohmann::json& j, const Report& r);

}  // namespace pipebench::report
