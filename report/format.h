// Printing a Report (report/report.h): the text verdict a person reads, and the same
// figures as JSON for scripts. Times are ms per batch in the sweep and ms per sample in
// the stages and variants; rates are images per second; shares are percent.
//
// Rules both forms follow: the "fix first" stage is named only when the run is
// data-bound (Report::fix_first); a worker wait is never negative (Report clamps it at 0).
// The what-if table, recommendation, check, trust warnings and CV table are printed by
// format_whatif.cpp (report/whatif.h, report/trust.h).
// The JSON keys are the contract of bench/README.md ("pipebench-report"). Neither throws
// on a Report that build_report made.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "report/report.h"

namespace pipebench::report {

/// The text verdict, lines ending in '\n'.
std::string format_text(const Report& r);

/// The verdict as a JSON object (pipebench-report --json).
nlohmann::json to_json(const Report& r);

}  // namespace pipebench::report
