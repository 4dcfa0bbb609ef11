#include "measure/thread_cpu.h"

#include <time.h>

#include <algorithm>

#include "measure/stage_timers.h"
#include "measure/system_metrics.h"

namespace pipebench {

std::optional<int64_t> thread_cpu_ns_of(pthread_t thread) {
  clockid_t clock{};
  if (pthread_getcpuclockid(thread, &clock) != 0) return std::nullopt;
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return std::nullopt;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

RoleCpu split_role_cpu(int64_t process_ns, int64_t consumer_ns, int64_t sampler_ns) {
  RoleCpu r;
  r.consumer_ns = std::max<int64_t>(0, consumer_ns);
  r.sampler_ns = std::max<int64_t>(0, sampler_ns);
  r.process_ns = std::max(std::max<int64_t>(0, process_ns), r.consumer_ns + r.sampler_ns);
  r.workers_ns = r.process_ns - r.consumer_ns - r.sampler_ns;
  return r;
}

namespace {

std::optional<int64_t> sampler_cpu_now(const SystemSampler* sampler) {
  return sampler ? sampler->running_thread_cpu_ns() : std::nullopt;
}

}  // namespace

RoleCpuWindow::RoleCpuWindow(const SystemSampler* sampler)
    : sampler_(sampler), consumer_(pthread_self()) {
  sampler0_ = sampler_cpu_now(sampler_);
  consumer0_ = thread_cpu_ns();
  process0_ = process_cpu_ns();
}

RoleCpu RoleCpuWindow::finish() const {
  // The parts are read outside the process clock's reads at both ends (before it here in
  // the constructor, after it here), so each can only be a little larger than its share
  // of the process figure, never smaller (split_role_cpu clamps the workers at 0).
  const int64_t process = process_cpu_ns();
  const int64_t consumer = thread_cpu_ns_of(consumer_).value_or(consumer0_);
  const std::optional<int64_t> sampler = sampler_cpu_now(sampler_);
  // A sampler clock missing at either end (not running): its CPU stays with the workers.
  const int64_t sampler_ns = sampler && sampler0_ ? *sampler - *sampler0_ : 0;
  return split_role_cpu(process - process0_, consumer - consumer0_, sampler_ns);
}

}  // namespace pipebench
