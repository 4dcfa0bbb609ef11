// The legacy adapter: the key of a case from its name, for files written before the run
// record (record version 0, model/record.h). The one place that reads a case name; it is
// the inverse of CaseKey::name() (model/case_key.h), which its tests check on every
// catalogue entry (tests/model_test.cpp), plus Google Benchmark's suffixes: /iterations:N,
// /repeats:N, /threads:N, /min_time:X, /min_warmup_time:X, /real_time, /manual_time,
// /process_time (the time one tells timed_by).
#pragma once

#include <string_view>

#include "model/case_key.h"

namespace pipebench::model {

/// The key of a version-0 case name (run_name or name). A name that does not follow the
/// grammar (another program's case, a hand-made file) is Family::kOther with the name,
/// less Google Benchmark's suffixes, as its op: kept, never placed in a sweep.
CaseKey legacy_key(std::string_view name);

}  // namespace pipebench::model
