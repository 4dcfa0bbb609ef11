#include "measure/system_metrics.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <stdexcept>

#include "device/nvml.h"
#include "measure/stage_timers.h"
#include "measure/thread_cpu.h"
#include "measure/own_threads.h"
#include "measure/trace.h"

namespace pipebench {
namespace {

// A procfs file's text with open/read/close: procfs files report size 0, so read until EOF.
// (std::ifstream + ostringstream cost about twice as much per sample: the sampler's own
// cost is on every run.)
std::string slurp(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

std::vector<std::string_view> split_ws(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::optional<uint64_t> to_u64(std::string_view s) {
  uint64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

template <class Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find('\n', i);
    if (j == std::string_view::npos) j = text.size();
    fn(text.substr(i, j - i));
    i = j + 1;
  }
}

// b - a for a counter that only grows; 0 when it went backwards (wrapped, reset).
uint64_t grown(uint64_t a, uint64_t b) { return b >= a ? b - a : 0; }

}  // namespace

std::vector<CpuTicks> parse_proc_stat(std::string_view text) {
  std::vector<CpuTicks> out;
  for_each_line(text, [&](std::string_view line) {
    if (line.substr(0, 3) != "cpu") return;
    const auto f = split_ws(line);
    if (f.size() < 5) return;
    CpuTicks t;
    if (f[0] != "cpu") {
      const auto n = to_u64(f[0].substr(3));
      if (!n) return;
      t.core = static_cast<int>(*n);
    }
    uint64_t* fields[] = {&t.user, &t.nice, &t.system, &t.idle, &t.iowait, &t.irq, &t.softirq, &t.steal};
    for (size_t k = 0; k < 8 && k + 1 < f.size(); ++k) {
      const auto v = to_u64(f[k + 1]);
      if (!v) return;
      *fields[k] = *v;
    }
    out.push_back(t);
  });
  return out;
}

std::optional<uint64_t> parse_kv_field(std::string_view text, std::string_view key) {
  std::optional<uint64_t> result;
  for_each_line(text, [&](std::string_view line) {
    if (result || line.size() <= key.size() || line.substr(0, key.size()) != key ||
        line[key.size()] != ':')
      return;
    const auto f = split_ws(line.substr(key.size() + 1));
    if (f.empty()) return;
    const auto v = to_u64(f[0]);
    if (!v) return;
    result = f.size() > 1 && f[1] == "kB" ? *v * 1024 : *v;
  });
  return result;
}

std::optional<uint64_t> parse_major_faults(std::string_view stat_text) {
  // "pid (comm) state ppid ..." : comm may hold spaces and ')', so count from the last ')'.
  const size_t close = stat_text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  const auto f = split_ws(stat_text.substr(close + 1));
  // After ")": state(3) ppid(4) pgrp(5) session(6) tty_nr(7) tpgid(8) flags(9) minflt(10)
  // cminflt(11) majflt(12): index 12 - 3 = 9.
  if (f.size() < 10) return std::nullopt;
  return to_u64(f[9]);
}

std::optional<uint64_t> parse_io_read_bytes(std::string_view text) {
  return parse_kv_field(text, "read_bytes");
}

std::vector<NetCounters> parse_net_dev(std::string_view text) {
  std::vector<NetCounters> out;
  for_each_line(text, [&](std::string_view line) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;  // the two header lines
    std::string_view name = line.substr(0, colon);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    if (name.empty() || name == "lo") return;
    const auto f = split_ws(line.substr(colon + 1));
    if (f.size() < 9) return;
    const auto rx = to_u64(f[0]), tx = to_u64(f[8]);
    if (!rx || !tx) return;
    out.push_back({std::string(name), *rx, *tx});
  });
  return out;
}

std::optional<std::pair<uint64_t, uint64_t>> parse_diskstats(std::string_view text, unsigned major,
                                                             unsigned minor) {
  std::optional<std::pair<uint64_t, uint64_t>> result;
  for_each_line(text, [&](std::string_view line) {
    if (result) return;
    const auto f = split_ws(line);
    if (f.size() < 6) return;
    const auto ma = to_u64(f[0]), mi = to_u64(f[1]), reads = to_u64(f[3]), sectors = to_u64(f[5]);
    if (ma && mi && reads && sectors && *ma == major && *mi == minor) result = {{*reads, *sectors}};
  });
  return result;
}

SystemInterval interval_between(const SystemSample& a, const SystemSample& b) {
  SystemInterval r;
  r.seconds = std::max(0.0, (b.t_ns - a.t_ns) / 1e9);
  const auto find = [](const SystemSample& s, int core) -> const CpuTicks* {
    for (const auto& c : s.cpus)
      if (c.core == core) return &c;
    return nullptr;
  };
  double busy = 0, user = 0, system = 0, total = 0;
  for (const auto& cb : b.cpus) {
    if (cb.core < 0) continue;
    const CpuTicks* ca = find(a, cb.core);
    if (!ca) continue;  // came online in between
    const double dt = static_cast<double>(grown(ca->total(), cb.total()));
    // Each share at most the interval's ticks (fields that went backwards count as 0).
    const auto part = [&](uint64_t ta, uint64_t tb) { return std::min(static_cast<double>(grown(ta, tb)), dt); };
    const double db = part(ca->busy(), cb.busy());
    r.core_util_pct.push_back(dt > 0 ? 100.0 * db / dt : 0.0);
    r.core_ids.push_back(cb.core);
    busy += db;
    user += std::min(db, part(ca->user + ca->nice, cb.user + cb.nice));
    system += std::min(db, part(ca->system + ca->irq + ca->softirq, cb.system + cb.irq + cb.softirq));
    total += dt;
  }
  if (total > 0) {
    r.cpu_util_pct = 100.0 * busy / total;
    r.cpu_user_pct = 100.0 * user / total;
    r.cpu_system_pct = 100.0 * std::min(system, busy - std::min(user, busy)) / total;
    r.cpu_busy_cores = r.cpu_util_pct / 100.0 * static_cast<double>(r.core_util_pct.size());
  }
  if (r.seconds > 0) {
    r.process_cores = std::max<int64_t>(0, b.process_cpu_ns - a.process_cpu_ns) / 1e9 / r.seconds;
    if (a.disk_reads && b.disk_reads && a.disk_read_sectors && b.disk_read_sectors) {
      r.disk_read_iops = grown(*a.disk_reads, *b.disk_reads) / r.seconds;
      r.disk_read_mib_per_s = grown(*a.disk_read_sectors, *b.disk_read_sectors) * 512.0 / (1 << 20) / r.seconds;
    }
    if (a.process_read_bytes && b.process_read_bytes)
      r.process_read_mib_per_s = grown(*a.process_read_bytes, *b.process_read_bytes) / double(1 << 20) / r.seconds;
    if (a.voluntary_switches && b.voluntary_switches)
      r.voluntary_switches_per_s = grown(*a.voluntary_switches, *b.voluntary_switches) / r.seconds;
    if (a.involuntary_switches && b.involuntary_switches)
      r.involuntary_switches_per_s = grown(*a.involuntary_switches, *b.involuntary_switches) / r.seconds;
    if (r.voluntary_switches_per_s && r.involuntary_switches_per_s)
      r.context_switches_per_s = *r.voluntary_switches_per_s + *r.involuntary_switches_per_s;
    // Interfaces present in both samples (one that came up in between is left out).
    double rx = 0, tx = 0;
    bool any = false;
    for (const auto& nb : b.net)
      for (const auto& na : a.net)
        if (na.iface == nb.iface) {
          const double drx = grown(na.rx_bytes, nb.rx_bytes) / double(1 << 20) / r.seconds;
          const double dtx = grown(na.tx_bytes, nb.tx_bytes) / double(1 << 20) / r.seconds;
          r.net_per_iface.emplace_back(nb.iface, drx, dtx);
          rx += drx;
          tx += dtx;
          any = true;
        }
    if (any) {
      r.net_rx_mib_per_s = rx;
      r.net_tx_mib_per_s = tx;
    }
  }
  if (a.major_faults && b.major_faults) r.major_faults = grown(*a.major_faults, *b.major_faults);
  return r;
}

namespace {

// Mean of the samples' `field` where present; nullopt when none has it.
std::optional<double> mean_of(const std::vector<SystemSample>& samples,
                              std::optional<double> SystemSample::*field) {
  double sum = 0;
  int n = 0;
  for (const auto& x : samples)
    if (x.*field) sum += *(x.*field), ++n;
  return n ? std::optional<double>(sum / n) : std::nullopt;
}

std::optional<double> max_of(const std::vector<SystemSample>& samples,
                             std::optional<double> SystemSample::*field) {
  std::optional<double> m;
  for (const auto& x : samples)
    if (x.*field) m = std::max(m.value_or(*(x.*field)), *(x.*field));
  return m;
}

void summarize_gpu(const std::vector<SystemSample>& samples, SystemSummary& s) {
  s.gpu_util_pct_mean = mean_of(samples, &SystemSample::gpu_util_pct);
  s.gpu_util_pct_max = max_of(samples, &SystemSample::gpu_util_pct);
  s.gpu_mem_used_mib_max = max_of(samples, &SystemSample::gpu_mem_used_mib);
  s.gpu_pcie_rx_mib_per_s = mean_of(samples, &SystemSample::gpu_pcie_rx_mib_per_s);
  s.gpu_pcie_tx_mib_per_s = mean_of(samples, &SystemSample::gpu_pcie_tx_mib_per_s);
  s.gpu_sm_clock_mhz_mean = mean_of(samples, &SystemSample::gpu_sm_clock_mhz);
}

}  // namespace

SystemSummary summarize(const std::vector<SystemSample>& samples) {
  SystemSummary s;
  s.samples = static_cast<int>(samples.size());
  const auto mib = [](uint64_t bytes) { return bytes / double(1 << 20); };
  for (const auto& x : samples) {
    if (x.rss_bytes) s.rss_mib_max = std::max(s.rss_mib_max.value_or(0), mib(*x.rss_bytes));
    if (x.peak_rss_bytes) s.peak_rss_mib = std::max(s.peak_rss_mib.value_or(0), mib(*x.peak_rss_bytes));
    if (x.mem_available_bytes)
      s.mem_available_mib_min = std::min(s.mem_available_mib_min.value_or(1e300), mib(*x.mem_available_bytes));
  }
  if (samples.size() < 2) return s;
  double util_sum = 0, user_sum = 0, system_sum = 0, cores_sum = 0, seconds = 0;
  for (size_t i = 1; i < samples.size(); ++i) {
    const SystemInterval in = interval_between(samples[i - 1], samples[i]);
    util_sum += in.cpu_util_pct * in.seconds;
    user_sum += in.cpu_user_pct * in.seconds;
    system_sum += in.cpu_system_pct * in.seconds;
    cores_sum += in.cpu_busy_cores * in.seconds;
    seconds += in.seconds;
    s.cpu_util_pct_max = std::max(s.cpu_util_pct_max, in.cpu_util_pct);
  }
  if (seconds > 0) {
    s.cpu_util_pct_mean = util_sum / seconds;
    s.cpu_user_pct_mean = user_sum / seconds;
    s.cpu_system_pct_mean = system_sum / seconds;
    s.cpu_busy_cores_mean = cores_sum / seconds;
  }
  // Rates over the whole run: first to last sample (backwards steps inside count as 0).
  const SystemInterval whole = interval_between(samples.front(), samples.back());
  s.core_util_pct_mean = whole.core_util_pct;
  s.core_ids = whole.core_ids;
  for (double u : whole.core_util_pct) s.cpu_core_util_pct_max = std::max(s.cpu_core_util_pct_max, u);
  s.process_cores_mean = whole.process_cores;
  s.disk_read_mib_per_s = whole.disk_read_mib_per_s;
  s.disk_read_iops = whole.disk_read_iops;
  s.process_read_mib_per_s = whole.process_read_mib_per_s;
  s.net_rx_mib_per_s = whole.net_rx_mib_per_s;
  s.net_tx_mib_per_s = whole.net_tx_mib_per_s;
  s.net_per_iface = whole.net_per_iface;
  s.voluntary_switches_per_s = whole.voluntary_switches_per_s;
  s.involuntary_switches_per_s = whole.involuntary_switches_per_s;
  s.context_switches_per_s = whole.context_switches_per_s;
  s.major_faults = whole.major_faults;
  summarize_gpu(samples, s);
  return s;
}

void trace_system_samples(TraceRecorder& trace, const std::vector<SystemSample>& samples) {
  for (size_t i = 1; i < samples.size(); ++i) {
    const SystemInterval in = interval_between(samples[i - 1], samples[i]);
    trace.counter("cpu cores busy (all processes)", samples[i].t_ns, in.cpu_busy_cores);
    trace.counter("pipebench cores busy", samples[i].t_ns, in.process_cores);
    if (samples[i].rss_bytes) trace.counter("rss MiB", samples[i].t_ns, *samples[i].rss_bytes / double(1 << 20));
    if (in.net_rx_mib_per_s) trace.counter("network received MiB/s", samples[i].t_ns, *in.net_rx_mib_per_s);
    if (in.net_tx_mib_per_s) trace.counter("network sent MiB/s", samples[i].t_ns, *in.net_tx_mib_per_s);
    if (samples[i].gpu_util_pct) trace.counter("gpu util %", samples[i].t_ns, *samples[i].gpu_util_pct);
    if (samples[i].gpu_mem_used_mib)
      trace.counter("gpu memory used MiB", samples[i].t_ns, *samples[i].gpu_mem_used_mib);
  }
}

SystemSample read_system_sample(unsigned disk_major, unsigned disk_minor, bool gpu_pcie) {
  SystemSample s;
  s.t_ns = now_ns();
  s.process_cpu_ns = process_cpu_ns();
  s.cpus = parse_proc_stat(slurp("/proc/stat"));
  const std::string status = slurp("/proc/self/status");
  s.rss_bytes = parse_kv_field(status, "VmRSS");
  s.peak_rss_bytes = parse_kv_field(status, "VmHWM");
  s.voluntary_switches = parse_kv_field(status, "voluntary_ctxt_switches");
  s.involuntary_switches = parse_kv_field(status, "nonvoluntary_ctxt_switches");
  s.mem_available_bytes = parse_kv_field(slurp("/proc/meminfo"), "MemAvailable");
  s.major_faults = parse_major_faults(slurp("/proc/self/stat"));
  s.process_read_bytes = parse_io_read_bytes(slurp("/proc/self/io"));
  s.net = parse_net_dev(slurp("/proc/net/dev"));
  if (disk_major != 0 || disk_minor != 0) {
    if (const auto d = parse_diskstats(slurp("/proc/diskstats"), disk_major, disk_minor)) {
      s.disk_reads = d->first;
      s.disk_read_sectors = d->second;
    }
  }
  if (const auto gpu = process_nvml().read(gpu_pcie)) {
    s.gpu_util_pct = gpu->util_pct;
    s.gpu_mem_used_mib = gpu->mem_used_mib;
    s.gpu_sm_clock_mhz = gpu->sm_clock_mhz;
    s.gpu_pcie_rx_mib_per_s = gpu->pcie_rx_mib_per_s;
    s.gpu_pcie_tx_mib_per_s = gpu->pcie_tx_mib_per_s;
  }
  return s;
}

SystemSampler::SystemSampler(const std::string& dataset_path) {
  struct stat st {};
  if (!dataset_path.empty() && ::stat(dataset_path.c_str(), &st) == 0) {
    major_ = major(st.st_dev);
    minor_ = minor(st.st_dev);
  }
}

SystemSampler::~SystemSampler() { stop(); }

void SystemSampler::start(double rate_hz) {
  if (!(rate_hz > 0) || rate_hz > 1000)
    throw std::invalid_argument("SystemSampler: rate_hz must be in (0, 1000], got " + std::to_string(rate_hz));
  stop();
  samples_.clear();
  running_ = true;
  thread_ = start_own_thread("sampler", [this, rate_hz] { run(rate_hz); });
  native_ = thread_.native_handle();
}

std::optional<int64_t> SystemSampler::running_thread_cpu_ns() const {
  if (!thread_.joinable()) return std::nullopt;
  return thread_cpu_ns_of(native_);
}

std::vector<SystemSample> SystemSampler::stop() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(wake_mu_);
      running_ = false;
    }
    wake_.notify_all();
    thread_.join();
  }
  return std::move(samples_);
}

void SystemSampler::run(double rate_hz) {
  const auto period = std::chrono::nanoseconds(static_cast<int64_t>(1e9 / rate_hz));
  auto next = std::chrono::steady_clock::now();
  for (int64_t n = 0;; ++n) {
    samples_.push_back(read_system_sample(major_, minor_, /*gpu_pcie=*/n % 4 == 0));
    if (!running_) break;  // the last sample is taken after stop() was asked
    next += period;
    // One wake-up per sample; stop() wakes it at once.
    std::unique_lock<std::mutex> lock(wake_mu_);
    wake_.wait_until(lock, next, [this] { return !running_; });
  }
  thread_cpu_ns_ = ::pipebench::thread_cpu_ns();  // the free function, not the member
}

}  // namespace pipebench
