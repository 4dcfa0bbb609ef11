// This process's CPU time split by thread role (issue 10: "this process's CPU time by
// thread role, workers vs consumer"). pipebench's loader runs its workers as oneTBB tasks
// on threads it does not own, so they cannot be counted one by one; but the two other
// roles are single threads whose CPU clocks can be read: the consumer (the thread that
// takes the batches: the benchmark loop, which in an end-to-end case also submits the
// training step and runs the sync callbacks) and the system sampler's thread. Workers =
// the process's CPU time minus those two, over the same window.
//
// Clocks: CLOCK_PROCESS_CPUTIME_ID (every thread, those that ended in the window too) and
// per-thread CPU clocks (pthread_getcpuclockid, readable from any thread while the thread
// lives). All times in ns of CPU time. "Workers" holds every thread other than the
// consumer and the sampler: the loader's oneTBB workers, and where they run, the async
// callbacks' thread and driver threads (CUDA, MPI progress).
#pragma once

#include <pthread.h>

#include <cstdint>
#include <optional>

namespace pipebench {

class SystemSampler;

/// A thread's CPU time so far, ns, read from any thread through its CPU clock
/// (pthread_getcpuclockid); nullopt when the clock cannot be had. `thread` must be alive.
std::optional<int64_t> thread_cpu_ns_of(pthread_t thread);

/// CPU time each role used in a window, ns. consumer + sampler + workers == process.
struct RoleCpu {
  int64_t process_ns = 0;   ///< every thread of the process
  int64_t consumer_ns = 0;  ///< the thread that opened the window
  int64_t sampler_ns = 0;   ///< the system sampler's thread (0 without one)
  int64_t workers_ns = 0;   ///< the rest: process - consumer - sampler, at least 0
};

/// The split from the three measured deltas: workers = process - consumer - sampler, and
/// when clock granularity makes that negative, 0 (the process figure is then raised to the
/// sum, so the parts still add up). Negative inputs count as 0.
RoleCpu split_role_cpu(int64_t process_ns, int64_t consumer_ns, int64_t sampler_ns);

/// A window over this process's CPU by role: opened on the consumer's thread at
/// construction, closed by finish() (from any thread while the consumer lives).
class RoleCpuWindow {
 public:
  /// `sampler`: a running SystemSampler whose thread's CPU is taken out of the workers'; it
  /// must keep running until finish() (nullptr: no sampler, sampler_ns = 0).
  explicit RoleCpuWindow(const SystemSampler* sampler = nullptr);
  /// The CPU time each role used since construction, ns.
  RoleCpu finish() const;

 private:
  const SystemSampler* sampler_;
  pthread_t consumer_;
  int64_t process0_ = 0, consumer0_ = 0;
  std::optional<int64_t> sampler0_;
};

}  // namespace pipebench
