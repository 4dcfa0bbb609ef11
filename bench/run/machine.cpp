#include "bench/run/machine.h"

#include <malloc.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "measure/stage_timers.h"
#include "measure/system_metrics.h"

namespace pipebench::bench {
namespace {

// All CPUs' busy time (user + nice + system + irq + softirq + steal), ns, from /proc/stat.
int64_t machine_busy_ns() {
  std::ifstream f("/proc/stat");
  std::string cpu;
  int64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(f >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || cpu != "cpu")
    return 0;
  const int64_t ticks = user + nice + system + irq + softirq + steal;
  return ticks * (1000000000 / sysconf(_SC_CLK_TCK));
}

double load_average() {
  double l[1] = {0};
  return getloadavg(l, 1) == 1 ? l[0] : 0.0;
}

}  // namespace

namespace {
uint64_t meminfo_field(const char* key) {
  std::ifstream in("/proc/meminfo");
  std::stringstream text;
  text << in.rdbuf();
  return parse_kv_field(text.str(), key).value_or(0);
}
}  // namespace

uint64_t host_memory_bytes() { return meminfo_field("MemTotal"); }
uint64_t available_memory_bytes() { return meminfo_field("MemAvailable"); }

MachineLoad::MachineLoad(double cores_available)
    : load_average_start(load_average()),
      cores(cores_available),
      busy_ns0_(machine_busy_ns()),
      ours_ns0_(process_cpu_ns()),
      wall_ns0_(now_ns()) {}

double MachineLoad::own_cpu_ns() const { return static_cast<double>(process_cpu_ns() - ours_ns0_); }

void MachineLoad::finish(std::optional<double> job_cpu_ns, std::optional<int64_t> job_start_ns) {
  load_average_end = load_average();
  const double wall = static_cast<double>(now_ns() - std::min(wall_ns0_, job_start_ns.value_or(wall_ns0_)));
  window_s = wall / 1e9;
  const double all = static_cast<double>(machine_busy_ns() - busy_ns0_);
  const double ours = job_cpu_ns.value_or(own_cpu_ns());
  // /proc/stat counts in clock ticks (10 ms): short runs read a little high or low.
  other_cpu_cores = wall > 0 ? std::max(0.0, (all - ours) / wall) : 0.0;
  job_cpu_cores = wall > 0 ? ours / wall : 0.0;
  busy = other_cpu_cores > kBusyCores || load_average_start > cores;
}

std::string MachineLoad::warning() const {
  if (!busy) return "";
  std::ostringstream s;
  s.precision(2);
  s << "busy machine: other processes used " << other_cpu_cores << " cores on average during "
    << "the run (load average " << load_average_start << " at the start, " << cores
    << " cores available); timings may be slower and noisier than this machine can do";
  return s.str();
}

std::string fix_malloc_policy() {
  const bool ok = mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
  return ok ? "fixed: glibc mallopt M_MMAP_MAX=0 M_TRIM_THRESHOLD=1GiB (freed buffers are "
              "reused, not returned to the kernel; GLIBC_TUNABLES for these are overridden)"
            : "system (mallopt refused the fixed policy)";
}

}  // namespace pipebench::bench
