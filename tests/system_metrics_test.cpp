// System metrics (measure/system_metrics.h): the procfs parsers on fixture text, including
// a CPU going offline, a counter wrapping and a command name with ") " in it; and the
// sampler on this machine: a busy thread shows as about one core of this process, and a
// known allocation shows in the RSS peak.
#include "measure/system_metrics.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
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

// User vs system, worked by hand. 1 s after kStatA (USER_HZ 100, 100 ticks per core):
//   cpu0: user +60, nice +10, system +20, softirq +5, idle +5  -> busy 95, user mode 70, kernel 25
//   cpu1: user +10, system +30, idle +45, iowait +10, steal +5 -> busy 45, user mode 10, kernel 30
// All cores (200 ticks): busy 140 = 70 %, user 80 = 40 %, system 55 = 27.5 % (steal in neither).
constexpr const char* kStatUserSystem =
    "cpu  1070 20 550 8050 110 0 25 5 0 0\n"
    "cpu0 660 15 270 3905 50 0 15 0 0 0\n"
    "cpu1 410 5 280 4145 60 0 10 5 0 0\n";
// 1 s later: cpu0 idle (+100 idle), cpu1 all user (+100 user): util 50 %, user 50 %, system 0 %.
constexpr const char* kStatUserSystem2 =
    "cpu  1170 20 550 8150 110 0 25 5 0 0\n"
    "cpu0 660 15 270 4005 50 0 15 0 0 0\n"
    "cpu1 510 5 280 4145 60 0 10 5 0 0\n";

TEST(SystemMetrics, UserAndSystemSharesOfAllCores) {
  const auto in = interval_between(sample(kStatA, 0), sample(kStatUserSystem, 1'000'000'000));
  ASSERT_EQ(in.core_util_pct.size(), 2u);
  EXPECT_DOUBLE_EQ(in.core_util_pct[0], 95.0);
  EXPECT_DOUBLE_EQ(in.core_util_pct[1], 45.0);
  EXPECT_EQ(in.core_ids, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(in.cpu_util_pct, 70.0);
  EXPECT_DOUBLE_EQ(in.cpu_user_pct, 40.0);
  EXPECT_DOUBLE_EQ(in.cpu_system_pct, 27.5);
  EXPECT_DOUBLE_EQ(in.cpu_busy_cores, 1.4);
}

TEST(SystemMetrics, SummaryOfUserSystemAndTheBusiestCore) {
  const auto s = summarize({sample(kStatA, 0), sample(kStatUserSystem, 1'000'000'000),
                            sample(kStatUserSystem2, 2'000'000'000)});
  // Two 1 s intervals: util 70 then 50, user 40 then 50, system 27.5 then 0.
  EXPECT_DOUBLE_EQ(s.cpu_util_pct_mean, 60.0);
  EXPECT_DOUBLE_EQ(s.cpu_user_pct_mean, 45.0);
  EXPECT_DOUBLE_EQ(s.cpu_system_pct_mean, 13.75);
  EXPECT_DOUBLE_EQ(s.cpu_util_pct_max, 70.0);
  // Per core over the 2 s: cpu0 (95 + 0) / 200 = 47.5 %, cpu1 (45 + 100) / 200 = 72.5 %.
  ASSERT_EQ(s.core_util_pct_mean.size(), 2u);
  EXPECT_DOUBLE_EQ(s.core_util_pct_mean[0], 47.5);
  EXPECT_DOUBLE_EQ(s.core_util_pct_mean[1], 72.5);
  EXPECT_EQ(s.core_ids, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(s.cpu_core_util_pct_max, 72.5);
}

TEST(SystemMetrics, UserAndSystemOfACoreThatWentBackwardsCountAsZero) {
  // cpu0 +100 ticks (50 user, 50 system); cpu1 back from offline with lower counters: it
  // adds no ticks, so the shares are cpu0's alone, and none is negative.
  constexpr const char* kLater =
      "cpu0 710 15 320 3905 50 0 15 0 0 0\n"
      "cpu1 10 0 5 100 0 0 0 0 0 0\n";
  const auto in = interval_between(sample(kStatUserSystem, 0), sample(kLater, 1'000'000'000));
  EXPECT_DOUBLE_EQ(in.cpu_util_pct, 100.0);
  EXPECT_DOUBLE_EQ(in.cpu_user_pct, 50.0);
  EXPECT_DOUBLE_EQ(in.cpu_system_pct, 50.0);
  ASSERT_EQ(in.core_util_pct.size(), 2u);
  EXPECT_DOUBLE_EQ(in.core_util_pct[1], 0.0);
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

// Two readings of /proc/self/status 2 s apart: 400 voluntary and 60 involuntary switches.
SystemSample switches_sample(const char* status, int64_t t_ns) {
  SystemSample s;
  s.t_ns = t_ns;
  s.voluntary_switches = parse_kv_field(status, "voluntary_ctxt_switches");
  s.involuntary_switches = parse_kv_field(status, "nonvoluntary_ctxt_switches");
  return s;
}

TEST(SystemMetrics, VoluntaryAndInvoluntarySwitchesApart) {
  const char* before = "Name:\tpipebench\nvoluntary_ctxt_switches:\t17\nnonvoluntary_ctxt_switches:\t3\n";
  const char* after = "Name:\tpipebench\nvoluntary_ctxt_switches:\t417\nnonvoluntary_ctxt_switches:\t63\n";
  const auto in = interval_between(switches_sample(before, 0), switches_sample(after, 2'000'000'000));
  EXPECT_DOUBLE_EQ(in.voluntary_switches_per_s.value_or(-1), 200.0);
  EXPECT_DOUBLE_EQ(in.involuntary_switches_per_s.value_or(-1), 30.0);
  EXPECT_DOUBLE_EQ(in.context_switches_per_s.value_or(-1), 230.0);
  // Over a run: first to last sample (the middle one does not change the rate).
  const char* middle = "voluntary_ctxt_switches:\t20\nnonvoluntary_ctxt_switches:\t60\n";
  const auto s = summarize({switches_sample(before, 0), switches_sample(middle, 1'000'000'000),
                            switches_sample(after, 2'000'000'000)});
  EXPECT_DOUBLE_EQ(s.voluntary_switches_per_s.value_or(-1), 200.0);
  EXPECT_DOUBLE_EQ(s.involuntary_switches_per_s.value_or(-1), 30.0);
  EXPECT_DOUBLE_EQ(s.context_switches_per_s.value_or(-1), 230.0);
}

TEST(SystemMetrics, ASwitchCountMissingFromOneReadingLeavesOnlyItsRateOut) {
  const char* before = "voluntary_ctxt_switches:\t17\nnonvoluntary_ctxt_switches:\t3\n";
  const char* no_involuntary = "voluntary_ctxt_switches:\t117\n";
  const auto in = interval_between(switches_sample(before, 0), switches_sample(no_involuntary, 1'000'000'000));
  EXPECT_DOUBLE_EQ(in.voluntary_switches_per_s.value_or(-1), 100.0);
  EXPECT_FALSE(in.involuntary_switches_per_s.has_value());
  EXPECT_FALSE(in.context_switches_per_s.has_value()) << "a sum of one part would read as the total";
  // A count that went backwards is 0, not a huge rate.
  const char* lower = "voluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t1\n";
  const auto back = interval_between(switches_sample(before, 0), switches_sample(lower, 1'000'000'000));
  EXPECT_DOUBLE_EQ(back.voluntary_switches_per_s.value_or(-1), 0.0);
  EXPECT_DOUBLE_EQ(back.involuntary_switches_per_s.value_or(-1), 0.0);
}

TEST(SystemMetrics, MajorFaultsWithSpacesAndParenthesesInTheName) {
  // Field 12 (majflt) counted from the last ')', whatever the command name holds.
  const char* stat = "4242 (my) (odd name) S 1 4242 4242 0 -1 4194560 1500 0 7 0 12 3 0 0 20 0 3 0";
  EXPECT_EQ(parse_major_faults(stat), 7u);
  EXPECT_FALSE(parse_major_faults("garbage").has_value());
  EXPECT_EQ(parse_io_read_bytes("rchar: 10\nwchar: 0\nread_bytes: 4096\nwrite_bytes: 0\n"), 4096u);
}

// /proc/net/dev as Linux 6.1 prints it (two header lines; the loopback left out), and the
// rates worked by hand: eth0 received 3 MiB and sent 1 MiB in 2 s; wg0 came up in between.
TEST(SystemMetrics, NetworkBytesPerInterfaceAndTheirRates) {
  const char* dev =
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
      "    lo:  500000    100    0    0    0     0          0         0   500000     100    0    0    0     0       0          0\n"
      "  eth0: 1048576    900    0    0    0     0          0         0  2097152     800    0    0    0     0       0          0\n";
  const auto n = parse_net_dev(dev);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].iface, "eth0");
  EXPECT_EQ(n[0].rx_bytes, 1048576u);
  EXPECT_EQ(n[0].tx_bytes, 2097152u);
  EXPECT_TRUE(parse_net_dev("garbage\nno colon here\n").empty());

  SystemSample a, b;
  a.t_ns = 0;
  b.t_ns = 2'000'000'000;
  a.net = n;
  b.net = {{"eth0", 1048576 + 3 * 1048576, 2097152 + 1048576}, {"wg0", 99, 99}};
  const auto in = interval_between(a, b);
  ASSERT_TRUE(in.net_rx_mib_per_s.has_value());
  EXPECT_DOUBLE_EQ(*in.net_rx_mib_per_s, 1.5);
  EXPECT_DOUBLE_EQ(*in.net_tx_mib_per_s, 0.5);
  ASSERT_EQ(in.net_per_iface.size(), 1u);  // wg0 is not in the first sample
  EXPECT_EQ(std::get<0>(in.net_per_iface[0]), "eth0");
  const auto summary = summarize({a, b});
  ASSERT_TRUE(summary.net_rx_mib_per_s.has_value());
  EXPECT_DOUBLE_EQ(*summary.net_rx_mib_per_s, 1.5);
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
  // 256 MiB, zeroed and touched page by page before sampling starts (0.7 s of this thread's
  // CPU here, mostly page faults: done during sampling, it made a second busy thread and
  // process_cores_mean 1.57), held while sampling goes on.
  constexpr size_t kBytes = 256u << 20;
  std::vector<char> block(kBytes);
  for (size_t i = 0; i < kBytes; i += 4096) block[i] = static_cast<char>(i);
  SystemSampler sampler("/");
  sampler.start(50);
  std::atomic<bool> stop{false};
  double busy_cpu_s = 0;  // the busy thread's own CPU time: what it got, however loaded the machine
  const auto wall0 = std::chrono::steady_clock::now();
  std::thread busy([&] {
    volatile uint64_t x = 0;
    while (!stop) x = x + 1;
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    busy_cpu_s = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  stop = true;
  busy.join();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  const auto samples = sampler.stop();
  ASSERT_GE(samples.size(), 5u);
  const auto s = summarize(samples);
  // The busy thread is one core at most; the sampler must see at least half the share it
  // really got (its own CPU clock), whatever else ran on the machine (a fixed 0.25 cores
  // was a flake risk on a loaded 2-core runner).
  const double got = busy_cpu_s / wall_s;
  ASSERT_GT(got, 0.02) << "the busy thread barely ran";
  EXPECT_GT(s.process_cores_mean, 0.5 * got) << "the busy thread had " << got << " cores";
  EXPECT_LT(s.process_cores_mean, 1.5);
  EXPECT_GT(s.cpu_busy_cores_mean, 0.5 * got) << "the machine was busy with at least our thread";
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
