// A user's own training loop in the report: the JSON that pipebench::RegionTimer writes
// (measure/region_timer.h; rows "RegionTimer/<key>" with count and total_ms), read as a
// loop profile with a data-bound / compute-bound verdict, so `pipebench-report regions.json`
// answers the design notes' questions for a loop pipebench did not run: how much of the
// step waits for data, how much computes, how much goes elsewhere.
//
// Per step (ms; a key's total over the run / steps, so a key timed several times per step,
// e.g. Forward per micro-batch, adds up):
//   steps        = Batch's count, else IO's, else the largest count of any key
//   step_ms      = Batch total / steps; without a Batch key, the sum of the phase keys
//                  (IO, ToDevice, Forward, Backward, Comm, Other) / steps
//   data_ms      = IO (the wait for the next batch: Determined's dataloader_next)
//   compute_ms   = Forward + Backward (Determined's train_batch)
//   to_device_ms = ToDevice, comm_ms = Comm, other_ms = Other (callbacks, logging)
//   unaccounted_ms = step_ms - the phases (only with a Batch key; >= 0)
//   stall_pct    = 100 x data_ms / step_ms; au_pct = 100 x compute_ms / step_ms
// Verdict: data-bound when stall_pct > 100 - kAuTargetPct (10 %): waiting for data alone
// keeps AU below MLPerf Storage's 90 % target (report/whatif.h). A loader that keeps up
// would shorten the step by up to data_ms. With an asynchronous accelerator (CUDA, as
// LibTorch launches kernels) Forward and Backward are the accelerator's time only when
// timed with CUDA events (CudaEventRegionClock) or with a synchronise inside the region.
//
// Errors: ReportError when a RegionTimer row lacks count or total_ms, or holds a negative
// or non-finite one, naming the row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/run.h"

namespace pipebench::report {

struct RegionRow {
  std::string key;
  double count = 0, total_ms = 0, mean_ms = 0, p50_ms = 0, p99_ms = 0;
};

struct RegionProfile {
  std::vector<RegionRow> rows;  ///< every RegionTimer/<key> of the run, by key
  std::string clock;            ///< the context's region_timer ("steady_clock", "cuda_event")
  double steps = 0;
  bool step_from_batch = false;  ///< step_ms is Batch's (else the sum of the phases)
  double step_ms = 0, data_ms = 0, compute_ms = 0, to_device_ms = 0, comm_ms = 0, other_ms = 0;
  double unaccounted_ms = 0;
  double stall_pct = 0, au_pct = 0;

  bool empty() const { return rows.empty(); }
  bool data_bound() const;
};

/// The RegionTimer rows of `run` (empty profile when it has none). Throws ReportError.
RegionProfile region_profile(const BenchRun& run);
/// "Your loop (region timers)" text: the per-step breakdown and the verdict; `batch` > 0
/// adds images/s.
void append_regions_text(std::string& out, const RegionProfile& p, int batch);
/// The same as JSON, units in the keys; null when empty.
nlohmann::json regions_json(const RegionProfile& p);

}  // namespace pipebench::report
