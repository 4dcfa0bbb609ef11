// Cores available to this process, worked out once for every caller: the CPUs of its
// affinity mask (sched_getaffinity; `taskset -c 0` gives 1), capped by a cgroup v2 CPU
// quota (cpu.max: "max 100000" = no quota, "150000 100000" = 1.5 cores, "50000 100000" =
// 0.5). A fraction where the quota says so. Unit: cores (CPUs' worth of time per second).
// Errors: none thrown; an unreadable or malformed cpu.max is no quota.
#pragma once

#include <string>

namespace pipebench::model {

/// The cgroup v2 quota file read by default.
inline constexpr const char* kCgroupCpuMax = "/sys/fs/cgroup/cpu.max";

/// Cores this process may use (see above), in cores; > 0. `cpu_max_path`: the cgroup v2
/// quota file to read (tests point it at a file of their own).
double cores_available(const std::string& cpu_max_path = kCgroupCpuMax);

/// The quota of a cpu.max file in cores (quota / period), or 0 when there is none ("max",
/// a missing, unreadable or malformed file).
double cgroup_quota_cores(const std::string& cpu_max_path);

/// The machine's hardware threads (std::thread::hardware_concurrency), >= 1.
int hardware_threads();

}  // namespace pipebench::model
