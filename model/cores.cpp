#include "model/cores.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace pipebench::model {

double cores_available() {
  cpu_set_t set;
  double cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  std::ifstream max("/sys/fs/cgroup/cpu.max");  // "max 100000" or "200000 100000"
  std::string quota;
  double period = 0;
  if (max >> quota >> period && quota != "max" && period > 0) {
    char* end = nullptr;
    const double q = std::strtod(quota.c_str(), &end);
    if (end == quota.c_str() + quota.size() && q > 0) cores = std::min(cores, q / period);
  }
  return cores > 0 ? cores : 1;
}

int hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace pipebench::model
