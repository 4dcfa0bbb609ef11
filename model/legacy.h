// The legacy adapter: the key of a case written by an older record version.
//   - version 0 (before the run record): the key from its name. The one place that reads a
//     case name; it is the inverse of CaseKey::name() (model/case_key.h), which its tests
//     check on every catalogue entry (tests/record_test.cpp), plus Google Benchmark's
//     suffixes: /iterations:N, /repeats:N, /threads:N, /min_time:X, /min_warmup_time:X,
//     /real_time, /manual_time, /process_time (the time one tells timed_by).
//   - version 1 (a "key" object whose small grammars were text): the key object, with the
//     typed fields of version 2 read out of its text: a batch operator's occurrence from
//     detail "pipeline:<name>[#k]", the callback set from "callbacks" joined with '+', a
//     presized candidate's kept side from its variant_param.
// Errors: std::invalid_argument naming what is wrong (legacy_key_v1 only; a name that does
// not follow the grammar is kept as Family::kOther).
#pragma once

#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "model/case_key.h"

namespace pipebench::model {

/// The key of a version-0 case name (run_name or name). A name that does not follow the
/// grammar (another program's case, a hand-made file) is Family::kOther with the name,
/// less Google Benchmark's suffixes, as its op: kept, never placed in a sweep.
CaseKey legacy_key(std::string_view name);

/// The key of a version-1 "key" object. Throws as key_from_json does, and when a text that
/// must hold a number (a "#k", a presized side) does not.
CaseKey legacy_key_v1(const nlohmann::json& key);

}  // namespace pipebench::model
