#include "pipeline/dist/sync_step.h"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "pipeline/dist/dist.h"
#include "measure/stage_timers.h"

namespace pipebench::dist {

double ring_allreduce_ms(double bytes, int ranks, const LinkModel& link) {
  if (!(bytes >= 0) || !std::isfinite(bytes))
    throw std::invalid_argument("ring allreduce: bytes must be >= 0, got " + std::to_string(bytes));
  if (ranks < 1) throw std::invalid_argument("ring allreduce: ranks must be >= 1, got " + std::to_string(ranks));
  if (!(link.gb_per_s > 0) || !std::isfinite(link.gb_per_s))
    throw std::invalid_argument("--link-gbs must be > 0 GB/s, got " + std::to_string(link.gb_per_s));
  if (!(link.latency_us >= 0) || !std::isfinite(link.latency_us))
    throw std::invalid_argument("--link-latency-us must be >= 0, got " + std::to_string(link.latency_us));
  if (ranks == 1) return 0;
  const double n = ranks;
  const double transfer_s = 2 * (n - 1) / n * bytes / (link.gb_per_s * 1e9);
  return transfer_s * 1e3 + 2 * (n - 1) * link.latency_us / 1e3;
}

SyncMode parse_sync_mode(const std::string& text) {
  if (text == "emulated") return SyncMode::kEmulated;
  if (text == "allreduce") return SyncMode::kAllreduce;
  if (text == "barrier") return SyncMode::kBarrier;
  if (text == "none") return SyncMode::kNone;
  throw std::invalid_argument("--sync: emulated, allreduce, barrier or none, got " + text);
}

const char* sync_mode_name(SyncMode mode) {
  switch (mode) {
    case SyncMode::kEmulated: return "emulated";
    case SyncMode::kAllreduce: return "allreduce";
    case SyncMode::kBarrier: return "barrier";
    case SyncMode::kNone: return "none";
  }
  return "?";
}

SyncStep::SyncStep(SyncMode mode, double grad_mib, const LinkModel& link) : mode_(mode) {
  if (!std::isfinite(grad_mib) || grad_mib < 0)
    throw std::invalid_argument("--grad-mib must be a size >= 0 MiB, got " + std::to_string(grad_mib));
  const double modelled = ring_allreduce_ms(grad_mib * 1024 * 1024, world_size(), link);  // checks the link
  if (mode == SyncMode::kEmulated) modelled_ms_ = modelled;
  if (mode == SyncMode::kAllreduce && world_size() > 1)
    gradients_.assign(static_cast<size_t>(grad_mib * 1024 * 1024 / sizeof(float)), 1e-3f);
}

double SyncStep::run() {
  if (world_size() == 1 || mode_ == SyncMode::kNone) return 0;
  const int64_t t0 = now_ns();
  if (mode_ == SyncMode::kBarrier) {
    barrier();
  } else if (mode_ == SyncMode::kEmulated) {
    // Every rank arrives (the slowest sets the pace), then the transfer's time passes
    // while the host sleeps: the accelerators' work, not the host's.
    barrier();
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::nanoseconds(std::llround(modelled_ms_ * 1e6));
    std::this_thread::sleep_until(until);
  } else if (!gradients_.empty()) {
    allreduce_sum(gradients_.data(), gradients_.size());
  } else {
    barrier();  // --grad-mib=0: the allreduce of nothing is a barrier
  }
  return (now_ns() - t0) / 1e6;
}

double SyncStep::measure_ms(int iters) {
  if (world_size() == 1 || mode_ == SyncMode::kNone || iters <= 0) return 0;
  barrier();
  run();
  barrier();
  double total = 0;
  for (int i = 0; i < iters; ++i) total += run();
  return total / iters;
}

}  // namespace pipebench::dist
