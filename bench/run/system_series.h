// The system sampler's time series per case, kept for the run's JSON: a "system_series"
// section beside "context" and "benchmarks" (bench/run/run_output.h), which scripts/plot.py
// draws as the "CPU cores busy / GPU utilisation over time" panel of the end-to-end cases.
// The trace (--trace) has the same series as counter tracks; this keeps them without one.
//
// Shape (units in the names; one entry per interval between two samples, at its end):
//   "system_series": {"rate_hz": 20, "cases": {"<case name>": {
//       "t_s": [...],              seconds since the case's first sample
//       "cpu_busy_cores": [...],   cores busy, all processes (measure/system_metrics.h)
//       "cpu_user_cores": [...],   of them in user mode (user + nice), cores
//       "cpu_system_cores": [...], of them in kernel mode (system + irq + softirq), cores
//       "pipebench_cores": [...],  this process's CPU time / wall time, cores
//       "core_util_pct": [[...], ...]  per interval, each core's utilisation, %, in
//                                  /proc/stat order (cpu0, cpu1, ...; a core offline in an
//                                  interval is left out of that interval's list)
//       "gpu_util_pct": [...]      only when every sample has it (NVML)
//   }}}
// rate_hz is the sampler's rate (--system-sample-hz). Values are rounded (t to 1 ms, cores
// to 0.001, % to 0.1) to keep the file small: a 3 s case at 20 Hz is 60 points per series.
// A case run twice (repetitions) keeps its last run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "measure/system_metrics.h"

namespace pipebench::bench {

class SystemSeries {
 public:
  /// `rate_hz`: the sampler's rate, written as the section's rate_hz.
  explicit SystemSeries(double rate_hz = 20) : rate_hz_(rate_hz) {}
  double rate_hz() const { return rate_hz_; }
  void add(const std::string& case_name, const std::vector<SystemSample>& samples);
  bool empty() const { return cases_.empty(); }
  /// The section's JSON text (the shape above).
  std::string to_json() const;

 private:
  struct Series {
    std::vector<double> t_s, cpu_busy_cores, cpu_user_cores, cpu_system_cores, pipebench_cores,
        gpu_util_pct;
    std::vector<std::vector<double>> core_util_pct;
  };
  double rate_hz_;
  std::map<std::string, Series> cases_;
};

}  // namespace pipebench::bench
