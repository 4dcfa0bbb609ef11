// Constants every part of pipebench shares, written once.
#pragma once

namespace pipebench::model {

/// The accelerator-utilisation target, %: AU >= 90 % is MLPerf Storage's passing threshold
/// (MLPerf Storage v1.0 rules: a benchmark run passes when the emulated accelerators are
/// busy at least 90 % of the time). The worker search, the what-if table, the ranks'
/// au_pass, the region-timer verdict and the report's sentences all read it from here.
inline constexpr double kAuTargetPct = 90.0;

/// The version of the run record (model/record.h) this build writes and reads. A file
/// without `context.pipebench_record` is version 0 (written before the record) and is read
/// through the legacy adapter (model/legacy.h), as is version 1 (whose key held a batch
/// operator's occurrence, the callback set and a presized side as text; typed from 2 on).
inline constexpr int kRecordVersion = 2;

}  // namespace pipebench::model
