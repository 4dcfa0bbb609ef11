// System metrics (pipeline/system_metrics.h): the procfs parsers on fixture text, including
// a CPU going offline, a counter wrapping and a command name with ") " in it; and the
// sampler on this machine: a busy thread shows as about one core of this process, and a
// known allocation shows in the RSS peak.
#include "pipeline/system_metrics.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace pipebench {
namespace {

constexpr const char* kStatA =
    "cpu  1000 10 500 8000 100 0 20 0 0 0\n"
    "cpu0 600 5 250 3900 50 0 10 0 0 0\n"
    "cpu1 400 5 250 4100 50 0 10 0 0 0\n"
    "intr 12345 0 0\n"
    "ctxt 999\n";
// 1 s later (USER_HZ 100): cpu0 fully busy (100 ticks user), cpu1 idle (100 ticks idle).
constexpr const char* kStatB =
    "cpu  1100 10 500 8100 100 0 20 0 0 0\n"
    "cpu0 700 5 250 3900 50 0 10 0 0 0\n"
    "cpu1 400 5 250 4200 50 0 10 0 0 0\n";
// cpu1 went offline.
constexpr const char* kStatOffline =
    "cpu  1150 10 500 8100 100 0 20 0 0 0\n"
    "cpu0 750 5 250 3950 50 0 10 0 0 0\n";

SystemSample sample(const char* stat, int64_t t_ns) {
  SystemSample s;
  s.t_ns = t_ns;
  s.cpus = parse_proc_stat(stat);
  return s;
}

TEST(SystemMetrics, ProcStatTotalsAndCores) {
  const auto cpus = parse_proc_stat(kStatA);
  ASSERT_EQ(cpus.size(), 3u);
  EXPECT_EQ(cpus[0].core, -1);
  EXPECT_EQ(cpus[1].core, 0);
  EXPECT_EQ(cpus[2].core, 1);
  EXPECT_EQ(cpus[1].user, 600u);
  EXPECT_EQ(cpus[1].busy(), 600u + 5 + 250 + 0 + 10 + 0);
  EXPECT_EQ(cpus[1].total(), cpus[1].busy() + 3900 + 50);
}

TEST(SystemMetrics, OneBusyCoreOfTwo) {
  const auto in = interval_between(sample(kStatA, 0), sample(kStatB, 1'000'000'000));
  ASSERT_EQ(in.core_util_pct.size(), 2u);
  EXPECT_DOUBLE_EQ(in.core_util_pct[0], 100.0);
  EXPECT_DOUBLE_EQ(in.core_util_pct[1], 0.0);
  EXPECT_DOUBLE_EQ(in.cpu_util_pct, 50.0);
  EXPECT_DOUBLE_EQ(in.cpu_busy_cores, 1.0);
}

TEST(SystemMetrics, ACoreGoingOfflineIsLeftOutNotNegative) {
  const auto in = interval_between(sample(kStatB, 0), sample(kStatOffline, 500'000'000));
  ASSERT_EQ(in.core_util_pct.size(), 1u);  // only cpu0 is in both samples
  EXPECT_DOUBLE_EQ(in.core_util_pct[0], 50.0);
  EXPECT_GE(in.cpu_util_pct, 0.0);
  // And back online: the returning core's counters restart lower; they count as 0.
  const auto back = interval_between(sample(kStatOffline, 0), sample(kStatA, 1'000'000'000));
  for (double u : back.core_util_pct) {
    EXPECT_GE(u, 0.0);
    EXPECT_LE(u, 100.0);
  }
}

TEST(SystemMetrics, KeyValueFieldsInBytes) {
  const char* status =
      "Name:\tpipebench\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n"
      "voluntary_ctxt_switches:\t17\nnonvoluntary_ctxt_switches:\t3\n";
  EXPECT_EQ(parse_kv_field(status, "VmRSS"), 102400u * 1024);
  EXPECT_EQ(parse_kv_field(status, "VmHWM"), 204800u * 1024);
  EXPECT_EQ(parse_kv_field(status, "voluntary_ctxt_switches"), 17u);
  EXPECT_EQ(parse_kv_field(status, "nonvoluntary_ctxt_switches"), 3u);
  EXPECT_FALSE(parse_kv_field(status, "VmSwap").has_value());
  EXPECT_FALSE(parse_kv_field(status, "Vm").has_value()) << "a prefix is not the key";
  EXPECT_EQ(parse_kv_field("MemTotal: 24000000 kB\nMemAvailable:   1000 kB\n", "MemAvailable"), 1024000u);
}

TEST(SystemMetrics, MajorFaultsWithSpacesAndParenthesesInTheName) {
  // Field 12 (majflt) counted from the last ')', whatever the command name holds.
  const char* stat = "4242 (my) (odd name) S 1 4242 4242 0 -1 4194560 1500 0 7 0 12 3 0 0 20 0 3 0";
  EXPECT_EQ(parse_major_faults(stat), 7u);
  EXPECT_FALSE(parse_major_faults("garbage").has_value());
  EXPECT_EQ(parse_io_read_bytes("rchar: 10\nwchar: 0\nread_bytes: 4096\nwrite_bytes: 0\n"), 4096u);
}

TEST(SystemMetrics, DiskstatsOfOneDeviceAndAWrappingCounter) {
  const char* ds =
      "   7       0 loop0 5 0 10 0 0 0 0 0 0 0 0\n"
      " 254       1 vda1 1000 20 80000 300 50 0 400 10 0 200 310\n";
  const auto d = parse_diskstats(ds, 254, 1);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->first, 1000u);
  EXPECT_EQ(d->second, 80000u);
  EXPECT_FALSE(parse_diskstats(ds, 8, 0).has_value());

  SystemSample a, b;
  a.t_ns = 0;
  b.t_ns = 2'000'000'000;
  a.disk_reads = 1000;
  a.disk_read_sectors = 4096;
  b.disk_reads = 1200;
  b.disk_read_sectors = 4096 + 2048 * 4;  // 4 MiB in 2 s
  auto in = interval_between(a, b);
  EXPECT_DOUBLE_EQ(*in.disk_read_iops, 100.0);
  EXPECT_DOUBLE_EQ(*in.disk_read_mib_per_s, 2.0);
  b.disk_reads = 10;  // a 32-bit field wrapped: 0, not a huge rate
  b.disk_read_sectors = 5;
  in = interval_between(a, b);
  EXPECT_DOUBLE_EQ(*in.disk_read_iops, 0.0);
  EXPECT_DOUBLE_EQ(*in.disk_read_mib_per_s, 0.0);
}

TEST(SystemMetrics, SamplerSeesABusyThreadAndAKnownAllocation) {
  SystemSampler sampler("/");
  sampler.start(50);
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    volatile uint64_t x = 0;
    while (!stop) x = x + 1;
  });
  // 256 MiB, touched page by page, held while sampling goes on.
  constexpr size_t kBytes = 256u << 20;
  std::vector<char> block(kBytes);
  for (size_t i = 0; i < kBytes; i += 4096) block[i] = static_cast<char>(i);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  stop = true;
  busy.join();
  const auto samples = sampler.stop();
  ASSERT_GE(samples.size(), 5u);
  const auto s = summarize(samples);
  // The busy thread is one core at most; even on a shared machine it gets a real share.
  EXPECT_GT(s.process_cores_mean, 0.25);
  EXPECT_LT(s.process_cores_mean, 1.5);
  EXPECT_GT(s.cpu_busy_cores_mean, 0.25) << "the machine was busy with at least our thread";
  ASSERT_TRUE(s.peak_rss_mib.has_value());
  EXPECT_GE(*s.peak_rss_mib, 250.0);
  EXPECT_GE(*s.rss_mib_max, 250.0);
  EXPECT_GT(s.mem_available_mib_min.value_or(0), 0.0);
  EXPECT_EQ(block[4096], static_cast<char>(4096));
}

TEST(SystemMetrics, RefusesAnAbsurdRate) {
  SystemSampler sampler;
  EXPECT_THROW(sampler.start(0), std::invalid_argument);
  EXPECT_THROW(sampler.start(5000), std::invalid_argument);
}

}  // namespace
}  // namespace pipebench
