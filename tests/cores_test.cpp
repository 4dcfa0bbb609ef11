// model/cores.h: the cores available under an affinity mask (as `taskset -c 0` sets) and a
// cgroup v2 quota (a cpu.max file of the test's own), and the two together.
#include "model/cores.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace pipebench::model {
namespace {

// A cpu.max file in a scratch folder, removed at the end of the test.
class CpuMax {
 public:
  explicit CpuMax(const std::string& text)
      : path_("/tmp/pipebench-cores-test-" + std::to_string(getpid()) + ".cpu.max") {
    std::ofstream(path_) << text;
  }
  ~CpuMax() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// This process pinned to its first allowed CPU for the test's scope, as `taskset -c 0`.
class PinnedToOneCpu {
 public:
  PinnedToOneCpu() {
    sched_getaffinity(0, sizeof(saved_), &saved_);
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &saved_)) {
        CPU_SET(c, &one);
        break;
      }
    }
    ok_ = sched_setaffinity(0, sizeof(one), &one) == 0;
  }
  ~PinnedToOneCpu() { sched_setaffinity(0, sizeof(saved_), &saved_); }
  bool ok() const { return ok_; }

 private:
  cpu_set_t saved_;
  bool ok_ = false;
};

double affinity_cpus() {
  cpu_set_t set;
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  return CPU_COUNT(&set);
}

TEST(Cores, QuotaFileIsReadAsQuotaOverPeriod) {
  EXPECT_DOUBLE_EQ(cgroup_quota_cores(CpuMax("150000 100000\n").path()), 1.5);
  EXPECT_DOUBLE_EQ(cgroup_quota_cores(CpuMax("50000 100000\n").path()), 0.5);
  EXPECT_DOUBLE_EQ(cgroup_quota_cores(CpuMax("max 100000\n").path()), 0.0);
  EXPECT_DOUBLE_EQ(cgroup_quota_cores(CpuMax("12x 100000\n").path()), 0.0);  // malformed
  EXPECT_DOUBLE_EQ(cgroup_quota_cores(CpuMax("100000 0\n").path()), 0.0);
  EXPECT_DOUBLE_EQ(cgroup_quota_cores("/nonexistent/cpu.max"), 0.0);
}

TEST(Cores, NoQuotaGivesTheAffinityMask) {
  EXPECT_DOUBLE_EQ(cores_available(CpuMax("max 100000\n").path()), affinity_cpus());
  EXPECT_DOUBLE_EQ(cores_available("/nonexistent/cpu.max"), affinity_cpus());
}

TEST(Cores, AQuotaCapsTheMask) {
  // Half a core of quota: 0.5 whatever the mask; a quota above the mask: the mask.
  EXPECT_DOUBLE_EQ(cores_available(CpuMax("50000 100000\n").path()), 0.5);
  EXPECT_DOUBLE_EQ(cores_available(CpuMax("100000000 100000\n").path()), affinity_cpus());
}

TEST(Cores, PinnedToOneCpuLikeTasksetGivesOne) {
  PinnedToOneCpu pinned;
  ASSERT_TRUE(pinned.ok());
  EXPECT_DOUBLE_EQ(cores_available(CpuMax("max 100000\n").path()), 1.0);
  // Pinned and a quota of 1.5 cores: the mask's one CPU decides.
  EXPECT_DOUBLE_EQ(cores_available(CpuMax("150000 100000\n").path()), 1.0);
  EXPECT_DOUBLE_EQ(cores_available(CpuMax("25000 100000\n").path()), 0.25);
}

}  // namespace
}  // namespace pipebench::model
