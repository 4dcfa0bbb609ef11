// What the machine was doing around a run, so that a number measured on a busy machine
// says so (issue: two runs of the same code on a busy machine gave 24 of 34 "regressions").
//
//   - MachineLoad samples /proc/stat (all CPUs' busy time), this process's CPU time and the
//     wall clock at the start of the run and at its end: the CPU that *other* processes
//     used meanwhile, in cores, is (busy - ours) / wall. A run is flagged busy when others
//     used more than kBusyCores on average, or the 1-minute load average at the start
//     exceeded the cores this process may use (issue 14 item 8). The load average trails by
//     a minute, so half the cores flagged runs started right after a build on an idle
//     machine (others using 0.01 cores); what others used during the run is the direct
//     measure.
//   - the cores available: the run's one reading of model::cores_available() (model/cores.h,
//     read once in main and handed to MachineLoad and the flags), against which the load
//     average is judged.
//   - the malloc policy (fix_malloc_policy()): glibc's default returns large freed blocks
//     to the kernel (mmap threshold, trim threshold), so every large decode pays page faults
//     and zeroing again, and the result depends on GLIBC_TUNABLES and on what ran before
//     (27 % on photos-full's turbo_full). pipebench fixes the policy at start-up with
//     mallopt (which takes precedence over GLIBC_TUNABLES) and records it in the context.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace pipebench::bench {

/// /proc/meminfo's MemTotal and MemAvailable, bytes (0 when unreadable): the storage study
/// compares the dataset's size with them (a dataset that fits in memory reads warm unless
/// dropped, as DLIO warns).
uint64_t host_memory_bytes();
uint64_t available_memory_bytes();

/// Other processes' CPU use above which a run is flagged busy, in cores.
inline constexpr double kBusyCores = 0.25;

class MachineLoad {
 public:
  /// Samples now (the run's start); `cores_available`: the run's reading (BenchConfig::cores_available).
  explicit MachineLoad(double cores_available);
  /// This process's CPU time since the start, ns.
  double own_cpu_ns() const;
  /// Samples again (the run's end) and computes the fields below. `job_cpu_ns`: the CPU
  /// time, ns, that this run's own processes on this host used since the start; none (the
  /// default) means this process's. Under mpirun it is the sum over the ranks on this host,
  /// so that a rank's siblings do not count as other processes; then `job_start_ns` is the
  /// earliest start (steady clock, ns: one clock for every process of a host) among those
  /// ranks, and the window runs from there, so that no rank's CPU falls outside it.
  void finish(std::optional<double> job_cpu_ns = std::nullopt,
              std::optional<int64_t> job_start_ns = std::nullopt);
  /// When this process sampled its start (steady clock, ns).
  int64_t start_ns() const { return wall_ns0_; }

  double load_average_start = 0;  ///< 1-minute load average at the start
  double load_average_end = 0;
  double other_cpu_cores = 0;     ///< mean CPU of other processes during the run, cores
  double job_cpu_cores = 0;       ///< mean CPU of this run's processes on this host, cores
  double cores = 1;               ///< the cores the run may use, as given
  double window_s = 0;            ///< the window's wall time, s
  bool busy = false;              ///< see the file comment
  /// One line for people: "busy: other processes used 0.8 cores on average ..." or "".
  std::string warning() const;

 private:
  int64_t busy_ns0_ = 0, ours_ns0_ = 0, wall_ns0_ = 0;
};

/// Which malloc policy a run uses: "fixed" (fix_malloc_policy applied) or "system".
/// Applies the fixed policy: no mmap for large blocks (M_MMAP_MAX 0) and no trimming
/// (M_TRIM_THRESHOLD 1 GiB), so decoder buffers freed by one image are reused by the next.
/// Returns a description for the run context.
std::string fix_malloc_policy();

}  // namespace pipebench::bench
