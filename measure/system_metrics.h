// System metrics sampled while a loader or end-to-end case runs (issue 10): what the
// machine did around the numbers, so the verdict can say "2 workers keep 1.97 of 2 cores
// busy" or "the disk read 0 B/s: a warm run", as Determined's system metrics and DLIO's
// page-cache warning do.
//
// Sources (Linux procfs, proc(5)): /proc/stat (CPU time per core in USER_HZ ticks: user,
// nice, system, idle, iowait, irq, softirq, steal), /proc/meminfo (MemAvailable, kB),
// /proc/self/status (VmRSS, VmHWM = peak RSS, kB; voluntary / nonvoluntary context
// switches), /proc/self/stat (majflt, field 12), /proc/self/io (read_bytes: bytes this
// process caused to be fetched from storage), /proc/diskstats (reads completed, field 4,
// and sectors read, field 6, of 512 bytes, for the dataset's device); where an NVIDIA driver
// is installed, GPU 0's utilisation, memory used, PCIe rx/tx and SM clock through NVML
// loaded at run time (device/nvml.h; without the library the GPU fields are absent and
// process_nvml().note() says why, once). PCIe is read every 4th sample (5 Hz at 20 Hz):
// NVML measures it over its own 20 ms window.
//
// The parsers take the files' text, so tests feed fixtures. Counters that go backwards
// between two samples (a 32-bit diskstats field wrapping, a CPU going offline and back)
// count as 0 for that interval, never as a negative or a huge rate. A core present in only
// one of two samples (hot-unplugged) is left out of that interval.
//
// SystemSampler: a thread that reads these files every 1/rate_hz s (default 20 Hz; pipebench's
// --system-sample-hz) between
// start() and stop(), and a Summary of the interval. Its own cost: reading five small
// procfs files per sample: 70-90 us of CPU read back to back, and in the running sampler
// thread 0.45-0.55 % of one core at 20 Hz (2-core dev VM, cold caches between samples);
// the thread sleeps on a condition variable, one wake-up per sample (sleeping in 5 ms
// slices cost 0.9 % of a core, mostly wake-ups). BM_SystemSampler (bench) measures it.
// /proc/stat counts in ticks of 1/USER_HZ s (10 ms): at 50 Hz an interval holds about 2
// ticks per core, so one interval's shares move in steps of ~50 % of a core; the means over
// a case (SystemSummary) are not affected. Rates above ~20 Hz buy finer time, not precision.
// Errors: none thrown while sampling (an unreadable file leaves its metric absent);
// start() throws std::invalid_argument for rate_hz outside (0, 1000].
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <pthread.h>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

namespace pipebench {

/// One line of /proc/stat, ticks (USER_HZ).
struct CpuTicks {
  int core = -1;  ///< -1 for the "cpu" total line
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  uint64_t busy() const { return user + nice + system + irq + softirq + steal; }
  uint64_t total() const { return busy() + idle + iowait; }
};

/// One network interface's byte counters (/proc/net/dev: received, field 1; transmitted,
/// field 9), as the Determined profiler records them for distributed training.
struct NetCounters {
  std::string iface;
  uint64_t rx_bytes = 0, tx_bytes = 0;
};

/// One reading of every source; absent optionals were unreadable.
struct SystemSample {
  int64_t t_ns = 0;                       ///< steady clock
  int64_t process_cpu_ns = 0;             ///< this process, every thread (CLOCK_PROCESS_CPUTIME_ID)
  std::vector<CpuTicks> cpus;             ///< total line first, then one per online core
  std::optional<uint64_t> rss_bytes, peak_rss_bytes, mem_available_bytes;
  std::optional<uint64_t> voluntary_switches, involuntary_switches, major_faults;
  std::optional<uint64_t> process_read_bytes;              ///< /proc/self/io read_bytes
  std::optional<uint64_t> disk_reads, disk_read_sectors;   ///< the dataset's device
  std::vector<NetCounters> net;                            ///< every interface but lo
  /// GPU 0 through NVML (device/nvml.h): %, MiB, MiB/s, MHz; absent without NVML.
  std::optional<double> gpu_util_pct, gpu_mem_used_mib, gpu_sm_clock_mhz;
  std::optional<double> gpu_pcie_rx_mib_per_s, gpu_pcie_tx_mib_per_s;  ///< every 4th sample
};

std::vector<CpuTicks> parse_proc_stat(std::string_view text);
/// A "Key: value kB" field of /proc/meminfo or /proc/self/status, in bytes when the unit is
/// kB, as is otherwise (context-switch counts).
std::optional<uint64_t> parse_kv_field(std::string_view text, std::string_view key);
/// majflt (field 12) of /proc/self/stat; the command name may hold spaces and ')'.
std::optional<uint64_t> parse_major_faults(std::string_view stat_text);
/// "read_bytes:" of /proc/self/io.
std::optional<uint64_t> parse_io_read_bytes(std::string_view text);
/// Every interface of /proc/net/dev but the loopback ("lo"), in its order; malformed lines
/// are skipped.
std::vector<NetCounters> parse_net_dev(std::string_view text);
/// Reads completed and sectors read of device major:minor in /proc/diskstats.
std::optional<std::pair<uint64_t, uint64_t>> parse_diskstats(std::string_view text, unsigned major,
                                                             unsigned minor);

/// What happened between two samples. Rates per second of wall time between them.
/// CPU shares are of the ticks of the cores present in both samples (all processes):
/// busy = user + nice + system + irq + softirq + steal; of it, user mode = user + nice and
/// kernel mode ("system") = system + irq + softirq (steal, time a hypervisor gave another
/// guest, is in neither), so cpu_user_pct + cpu_system_pct <= cpu_util_pct.
struct SystemInterval {
  double seconds = 0;
  double cpu_busy_cores = 0;          ///< cores busy (all processes), 0..cores
  double process_cores = 0;           ///< this process's CPU time / wall time, cores
  double cpu_util_pct = 0;            ///< 100 * busy / total over all cores, %
  double cpu_user_pct = 0;            ///< 100 * (user + nice) / total over all cores, %
  double cpu_system_pct = 0;          ///< 100 * (system + irq + softirq) / total, %
  std::vector<double> core_util_pct;  ///< %, per core present in both samples, in /proc/stat order
  std::vector<int> core_ids;          ///< the core of each core_util_pct entry (cpuN)
  std::optional<double> disk_read_mib_per_s, disk_read_iops, process_read_mib_per_s;
  /// This process's context switches, per s: voluntary (it blocked: waiting for I/O, a
  /// lock, a condition variable), involuntary (the scheduler took its core: more runnable
  /// threads than cores), and their sum.
  std::optional<double> voluntary_switches_per_s, involuntary_switches_per_s;
  std::optional<double> context_switches_per_s;
  std::optional<uint64_t> major_faults;          ///< this process, in the interval
  /// Network bytes received and sent, MiB/s, every interface but lo together (present in
  /// both samples), and per interface (name, rx, tx).
  std::optional<double> net_rx_mib_per_s, net_tx_mib_per_s;
  std::vector<std::tuple<std::string, double, double>> net_per_iface;
};

/// Counters that went backwards count as 0 (see above).
SystemInterval interval_between(const SystemSample& a, const SystemSample& b);

/// Mean and max over a run's samples, with units in the names (the case's counters).
struct SystemSummary {
  int samples = 0;
  double cpu_util_pct_mean = 0, cpu_util_pct_max = 0;  ///< all cores, %: mean over time, busiest interval
  double cpu_user_pct_mean = 0, cpu_system_pct_mean = 0;  ///< all cores, user / kernel mode, %
  double cpu_busy_cores_mean = 0;
  double process_cores_mean = 0;      ///< this process alone, cores
  /// Per core, first to last sample: its utilisation over the run, % (cores present in
  /// both; in /proc/stat order, core_ids names them); and the busiest core's, % (0 without any).
  std::vector<double> core_util_pct_mean;
  std::vector<int> core_ids;
  double cpu_core_util_pct_max = 0;
  std::optional<double> rss_mib_max, peak_rss_mib, mem_available_mib_min;
  std::optional<double> disk_read_mib_per_s, disk_read_iops, process_read_mib_per_s;
  /// Network, MiB/s over the run, all interfaces but lo and per interface (SystemInterval).
  std::optional<double> net_rx_mib_per_s, net_tx_mib_per_s;
  std::vector<std::tuple<std::string, double, double>> net_per_iface;
  /// Per s over the run: voluntary, involuntary, and their sum (SystemInterval).
  std::optional<double> voluntary_switches_per_s, involuntary_switches_per_s;
  std::optional<double> context_switches_per_s;
  std::optional<uint64_t> major_faults;
  /// Over the samples that have them (NVML): mean and max %, max MiB, mean MiB/s and MHz.
  std::optional<double> gpu_util_pct_mean, gpu_util_pct_max, gpu_mem_used_mib_max;
  std::optional<double> gpu_pcie_rx_mib_per_s, gpu_pcie_tx_mib_per_s, gpu_sm_clock_mhz_mean;
};

SystemSummary summarize(const std::vector<SystemSample>& samples);

/// Reads every source now; disk metrics for device major:minor (none for 0:0); the GPU's
/// PCIe throughput only with `gpu_pcie` (each read waits for NVML's 20 ms window).
SystemSample read_system_sample(unsigned disk_major = 0, unsigned disk_minor = 0, bool gpu_pcie = false);

class TraceRecorder;

/// The samples as counter tracks of the trace (measure/trace.h), one value per interval
/// at its end: "cpu cores busy (all processes)", "pipebench cores busy", "rss MiB", and with
/// NVML "gpu util %" and "gpu memory used MiB".
void trace_system_samples(TraceRecorder& trace, const std::vector<SystemSample>& samples);

class SystemSampler {
 public:
  /// `dataset_path` picks the block device whose reads are counted (none when it is not
  /// on a device /proc/diskstats lists, e.g. tmpfs or overlay).
  explicit SystemSampler(const std::string& dataset_path = "");
  ~SystemSampler();
  SystemSampler(const SystemSampler&) = delete;
  SystemSampler& operator=(const SystemSampler&) = delete;

  void start(double rate_hz = 20);
  /// Stops the thread (takes a last sample) and returns every sample since start().
  std::vector<SystemSample> stop();
  /// CPU time the sampler's own thread used from start() to stop(), ns (its cost, measured
  /// directly: CLOCK_THREAD_CPUTIME_ID at the thread's end); 0 before a stop().
  int64_t thread_cpu_ns() const { return thread_cpu_ns_; }
  /// CPU time the sampler's thread has used so far, ns, read while it runs (its per-thread
  /// CPU clock, measure/thread_cpu.h); nullopt when it is not running. Read at both ends of
  /// a window, it takes the sampler's share out of the window's process CPU (RoleCpuWindow).
  std::optional<int64_t> running_thread_cpu_ns() const;

 private:
  void run(double rate_hz);
  unsigned major_ = 0, minor_ = 0;
  std::atomic<bool> running_{false};
  std::mutex wake_mu_;               // with wake_: stop() wakes the thread at once
  std::condition_variable wake_;
  std::atomic<int64_t> thread_cpu_ns_{0};
  std::thread thread_;
  pthread_t native_{};                 // thread_'s handle while joinable (its CPU clock)
  std::vector<SystemSample> samples_;  // written by the thread only while running_
};

}  // namespace pipebench
