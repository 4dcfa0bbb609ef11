// Cores available to this process, worked out once for every caller: the CPUs of its
// affinity mask (sched_getaffinity), capped by a cgroup v2 CPU quota
// (/sys/fs/cgroup/cpu.max: "max 100000" or "200000 100000" = 2 cores). A fraction where the
// quota says so (1.5 cores); at least 1.
#pragma once

namespace pipebench::model {

/// Cores this process may use (see above), in cores; >= 1.
double cores_available();

/// The machine's hardware threads (std::thread::hardware_concurrency), >= 1.
int hardware_threads();

}  // namespace pipebench::model
