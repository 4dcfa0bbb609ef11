// How far a run's numbers can be trusted (issue 9 items 2 and 7, issue 14 item 8): checks
// on the run's own figures that no measurement can pass when it is sound.
//
//   physical floor  a BM_Loader or BM_EndToEnd case whose data_ms (ms per batch) is more
//                   than kFloorTolerancePct below  p * batch / min(workers, cores): the
//                   loader produced batches faster than its workers' CPU could. p is the
//                   per-sample CPU ms of the case's own workers (sample_cpu_ms) and of
//                   BM_Sample (the what-if table's cost); the higher floor that is broken
//                   is reported. Causes: a prefetched backlog counted as speed, or a
//                   per-sample cost measured on other images than the loader's.
//   contention      a sweep (BM_Loader, BM_EndToEnd) whose sample_cpu_ms at some count
//                   w <= cores exceeds that at its fewest workers by more than
//                   kContentionPct: the same work costs more CPU with more workers while
//                   cores were free (memory bandwidth, shared caches, hyperthreads sharing
//                   a core, a busy machine).
//   busy machine    the context's busy_machine is "true" (bench/run/machine.h: other processes
//                   used more than 0.25 cores, or the load average exceeded the cores).
//   saturated cores the run's largest-worker loader or end-to-end case kept at least
//                   kSaturatedPct of the machine's cores busy (cpu_busy_cores_mean, all
//                   processes, from the system sampler) while data-bound or at most as
//                   fast as the case below it: more workers cannot help on this machine.
//   loader drift    a BM_EndToEnd case whose loader, measured alone before and again after
//                   its loop (data_drift_pct, bench/run/ranks.h), changed speed by more than
//                   kDriftPct: the machine's speed moved during the case (other load,
//                   thermal or frequency changes), so its prediction error mixes the model
//                   and the drift; under mpirun, the rank whose drift is furthest from 0.
//                   Not for a case whose data_ms, moved by the drift, stays below its
//                   compute_ms: compute-bound either way.
//   loop CPU drift  the same case's workers spent more than kDriftPct more (or less) CPU
//                   per sample in the loop than in the loader-alone windows
//                   (loop_cpu_drift_pct): its data_ms is not the loop's. Workers that idle
//                   between batches resume on colder caches (+3 to +15 % on this project's
//                   2-core host as the step grew past the data time), and a busier machine
//                   does the same (measured at 2 ranks on 2 cores: +11.6 %); the step model
//                   predicts from the loop's figure (model/bound.h predict_from_costs), so
//                   the warning says which data_ms to read, not that the prediction is off.
//                   The same condition on data_ms and compute_ms.
//   warm run        every loader case read 0 bytes from storage (process_read_mib_per_s,
//                   /proc/self/io): the dataset came from the page cache, as DLIO warns
//                   when a dataset fits in memory; a cold first epoch is slower.
//   CV table        with repetitions: per stage case (BM_Read, BM_Decode, BM_Sample,
//                   BM_Loader), Google Benchmark's _cv aggregate of real_time, in percent;
//                   above kNoisyCvPct a case is too noisy for compare.sh's default gate
//                   (--max-cv defaults to --max-regression, 5 %).
// cores: as in report/whatif.h (cores_available, else hardware_threads, 0 = unknown: then
// min(w, cores) = w and no contention check). Nothing here throws.
//
// Printing (issue 28 item 4): the checks find one TrustWarning per case; the Trust section
// prints one line per kind (TrustGroup) naming every case it applies to, with the most
// extreme figure and the range over the cases, most consequential kind first:
//   1 busy machine     every figure of the run may be inflated and noisy;
//   2 loader drift     only reported where it could move the bound: the end-to-end cases
//                      that the verdict and the what-if check are read from moved;
//   3 loop CPU drift   the loop ran on a slower (faster) machine than its prediction's
//                      input: the prediction errors are mostly that;
//   4 physical floor   a case's data time is impossible for its cores: that row (and a
//                      what-if figure taken from it) is wrong, the rest may stand;
//   5 contention       the model's scaling with workers is optimistic on this machine;
//   6 saturated cores  advice about the machine, not a doubt about a figure;
//   7 warm run         a note on the conditions: the figures hold for warm epochs.
// At most kTrustMaxLines lines: when there are more kinds, the first kTrustMaxLines - 1 and
// "(N more: pipebench-report --verbose)". Verbose (Trust::verbose, pipebench-report
// --verbose): every per-case warning as found, one line each, no cap. The JSON keeps every
// per-case warning ("trust_warnings") and the groups ("trust_warnings_grouped").
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/run.h"
#include "report/whatif.h"

namespace pipebench::report {

inline constexpr double kFloorTolerancePct = 5.0;  ///< issue 9 item 2
inline constexpr double kContentionPct = 15.0;     ///< per-sample CPU rise worth a warning
inline constexpr double kNoisyCvPct = 5.0;         ///< compare.sh's default --max-cv
inline constexpr double kSaturatedPct = 90.0;      ///< cores busy, % of the machine's
inline constexpr double kDriftPct = 5.0;           ///< the prediction check's own tolerance
inline constexpr size_t kTrustMaxLines = 5;        ///< the Trust section without --verbose

struct TrustWarning {
  enum class Kind { kPhysicalFloor, kContention, kBusyMachine, kSaturatedCores, kWarmRun, kDrift,
                    kLoopCpu };
  Kind kind = Kind::kPhysicalFloor;
  std::string case_name;  ///< the case it is about ("" for the busy machine)
  std::string text;       ///< one sentence, figures with units, from "<case_name>: " if any
  /// The figure its group ranges over, signed: % below the floor, % CPU rise (contention),
  /// % drift (+ = slower, more CPU per sample), cores busy (saturated); 0 for the busy
  /// machine and the warm run.
  double figure = 0;
};

/// Every warning of one kind: one line of the Trust section.
struct TrustGroup {
  TrustWarning::Kind kind = TrustWarning::Kind::kPhysicalFloor;
  std::vector<std::string> cases;  ///< as found, each once; empty for the busy machine, warm run
  size_t warnings = 0;             ///< per-case warnings it stands for
  std::string text;                ///< the line, without "Warning: "
};

struct CvRow {
  std::string case_name;  ///< without Google Benchmark's suffixes
  double cv_pct = 0;      ///< of real_time over the repetitions
  bool noisy() const { return cv_pct > kNoisyCvPct; }
};

struct Trust {
  std::vector<TrustWarning> warnings;
  int repetitions = 0;     ///< the context's repetitions (0: not recorded)
  std::vector<CvRow> cv;   ///< sorted by case name; empty without repetitions
  /// Print every per-case warning (pipebench-report --verbose); set by the caller, never by
  /// check_trust.
  bool verbose = false;
};

/// The sweeps of the run's pipeline, by worker count -> case name.
struct SweepCases {
  std::map<int, std::string> loaders;      ///< BM_Loader/<pipeline>/workers:<w>
  std::map<int, std::string> end_to_end;   ///< BM_EndToEnd/<pipeline>/<baseline>/workers:<w>
};

/// "physical_floor", "contention", "busy_machine", "saturated_cores", "warm_run",
/// "loader_drift", "loop_cpu_drift"
const char* kind_name(TrustWarning::Kind k);

/// The checks above. sample: the what-if table's per-sample cost (nullopt: none).
Trust check_trust(const BenchRun& run, const SweepCases& cases, int batch, double cores,
                  const std::optional<SampleCost>& sample);

/// 1 (most consequential, printed first) to 7: the order above.
int consequence_rank(TrustWarning::Kind k);

/// One group per kind present in t.warnings, most consequential first.
std::vector<TrustGroup> group_warnings(const Trust& t);

/// The Trust section's lines, without indent or '\n' (empty: no warnings). verbose:
/// "Warning: <text>" per warning, as found. Else "Warning: <group text>" per group, at most
/// max_lines lines in all, the last "(N more: pipebench-report --verbose)" when cut.
std::vector<std::string> trust_lines(const Trust& t, bool verbose, size_t max_lines = kTrustMaxLines);

}  // namespace pipebench::report
