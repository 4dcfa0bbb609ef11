#include "pipeline/dist/sync_step.h"

#include <cmath>
#include <stdexcept>

#include "pipeline/dist/dist.h"
#include "pipeline/stage_timers.h"

namespace pipebench::dist {

SyncMode parse_sync_mode(const std::string& text) {
  if (text == "allreduce") return SyncMode::kAllreduce;
  if (text == "barrier") return SyncMode::kBarrier;
  if (text == "none") return SyncMode::kNone;
  throw std::invalid_argument("--sync: allreduce, barrier or none, got " + text);
}

const char* sync_mode_name(SyncMode mode) {
  switch (mode) {
    case SyncMode::kAllreduce: return "allreduce";
    case SyncMode::kBarrier: return "barrier";
    case SyncMode::kNone: return "none";
  }
  return "?";
}

SyncStep::SyncStep(SyncMode mode, double grad_mib) : mode_(mode) {
  if (!std::isfinite(grad_mib) || grad_mib < 0)
    throw std::invalid_argument("--grad-mib must be a size >= 0 MiB, got " + std::to_string(grad_mib));
  if (mode == SyncMode::kAllreduce && world_size() > 1)
    gradients_.assign(static_cast<size_t>(grad_mib * 1024 * 1024 / sizeof(float)), 1e-3f);
}

double SyncStep::run() {
  if (world_size() == 1 || mode_ == SyncMode::kNone) return 0;
  const int64_t t0 = now_ns();
  if (mode_ == SyncMode::kBarrier) {
    barrier();
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
