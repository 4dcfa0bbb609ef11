// Stage timers: where the loader's time went, accumulated per stage with relaxed atomics
// (a clock read and an atomic add per stage per sample: cheap enough to leave on).
// All times in nanoseconds, summed over samples or batches, across all threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <iterator>
#include <string>
#include <vector>

#include "model/catalogue.h"

namespace pipebench {

/// The loader's stages. kBatchOps: the spec's batch operators (mixup, cutmix, label
/// smoothing) on the collated batch, run by the worker that completed it; 0 without any.
enum class Stage : int { kRead = 0, kDecode, kTransform, kCollate, kBatchOps, kH2D, kCount };
static_assert(static_cast<size_t>(Stage::kCount) == std::size(model::kStageNames),
              "the Stage enum follows model::kStageNames, in order");
/// "read", "decode", "transform", "collate", "batch_ops", "h2d" (model/catalogue.h).
inline const char* stage_name(Stage s) {
  const int i = static_cast<int>(s);
  return i >= 0 && i < static_cast<int>(Stage::kCount) ? model::kStageNames[i].data() : "?";
}

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The calling thread's CPU time, ns (CLOCK_THREAD_CPUTIME_ID): unlike now_ns() it does
/// not advance while the thread waits for a core, so wall - CPU of a stage is the time it
/// was runnable but not running (oversubscription) or blocked (I/O).
inline int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// The whole process's CPU time, all threads, ns (CLOCK_PROCESS_CPUTIME_ID).
inline int64_t process_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// A sample dropped by OnError::kSkip.
struct SkippedSample {
  int64_t index = 0;   ///< dataset index
  std::string path;    ///< the file
  std::string reason;  ///< what failed (the decoder's or reader's message)
};

struct LoaderStats {
  int64_t samples = 0;    ///< samples delivered in batches
  /// Samples the workers finished (written into a batch slot), delivered or not yet: the
  /// production count, which the prefetched backlog does not inflate.
  int64_t processed = 0;
  /// Workers' thread CPU time on samples (read + decode + transform, and the copy into the
  /// batch slot where the worker collates: uint8 and NHWC batches), summed, ns; 0
  /// without stage timers. Against the wall-clock stage sum it shows oversubscription.
  int64_t sample_cpu_ns = 0;
  int64_t batches = 0;    ///< batches delivered
  int64_t skipped = 0;    ///< samples dropped by OnError::kSkip
  std::vector<SkippedSample> skipped_samples;  ///< the first 100 of them
  int64_t stage_ns[static_cast<int>(Stage::kCount)] = {};  ///< per stage, summed
  int64_t consumer_wait_ns = 0;  ///< time next() blocked waiting for a batch
  int64_t ready_wait_ns = 0;     ///< time finished batches waited for the consumer
  /// Worker idle time: workers x wall time since the loader started minus the time they
  /// spent on samples (read + decode + transform + collate + batch ops). Workers idle when the
  /// prefetch bound is reached or no sample is ready to run; 0 without stage timers.
  int64_t worker_wait_ns = 0;
  int max_batches_in_flight = 0; ///< high-water mark (<= prefetch_depth_batches)
  /// Per-operator timers: the pipeline's planned steps (Pipeline::step_labels(), fused
  /// operators joined by '+') and the time spent in each, summed over samples, ns (their
  /// sum is the transform stage's time, less one clock read per step); then the batch
  /// operators by name, summed over batches (their sum is the batch_ops stage's time).
  std::vector<std::string> step_labels;
  std::vector<int64_t> step_ns;

  /// Mean ms per sample of a stage (0 if no sample).
  double stage_ms_per_sample(Stage s) const {
    return samples ? stage_ns[static_cast<int>(s)] / 1e6 / samples : 0.0;
  }
};

/// Thread-safe accumulator behind LoaderStats.
class StageTimers {
 public:
  void add(Stage s, int64_t ns) { ns_[static_cast<int>(s)].fetch_add(ns, std::memory_order_relaxed); }
  int64_t get(Stage s) const { return ns_[static_cast<int>(s)].load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> ns_[static_cast<int>(Stage::kCount)] = {};
};

}  // namespace pipebench
