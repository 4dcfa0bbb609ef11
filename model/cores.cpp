#include "model/cores.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace pipebench::model {

double cgroup_quota_cores(const std::string& cpu_max_path) {
  std::ifstream max(cpu_max_path);  // "max 100000" or "200000 100000"
  std::string quota;
  double period = 0;
  if (!(max >> quota >> period) || quota == "max" || period <= 0) return 0;
  char* end = nullptr;
  const double q = std::strtod(quota.c_str(), &end);
  return end == quota.c_str() + quota.size() && q > 0 ? q / period : 0;
}

double cores_available(const std::string& cpu_max_path) {
  cpu_set_t set;
  double cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  const double quota = cgroup_quota_cores(cpu_max_path);
  if (quota > 0) cores = std::min(cores, quota);
  return cores > 0 ? cores : 1;
}

int hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace pipebench::model
