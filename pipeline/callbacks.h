// Training extras: what a training loop does besides waiting for data and computing
// (issue 10; the design notes' third cause of an idle accelerator, "additional training
// functionality like logging and metrics"). They run on the consumer thread after each
// step is handed to the accelerator, as FluxTraining's events and Keras callbacks do,
// either in line (sync) or handed to one background thread through a bounded queue (async).
//
// Spec, one per --callback flag: KIND[:OPTION,...] with options every=N (run every N steps,
// default 1), sync | async (default sync) and, for checkpoint, mib=X (default 256):
//   log         appends one metrics line (step, time) to a file and fsyncs it
//   metric      waits for the step to finish, as reading a loss back (`.item()`) does;
//               sync only: it exists to wait for the accelerator (use every=N to thin it)
//   checkpoint  writes a file of mib MiB (the same bytes each time) and fsyncs it
// Files go to a private folder under $TMPDIR (default /tmp), removed by ~CallbackRunner.
// Errors: std::invalid_argument naming the spec and the reason (an unknown kind or option,
// a value out of range, metric:async); std::runtime_error naming the file when a write fails.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace pipebench {

class TrainStep;

struct CallbackSpec {
  std::string kind;       ///< "log", "metric", "checkpoint"
  int every = 1;          ///< steps between runs
  bool async = false;
  double mib = 256;       ///< checkpoint size, MiB
  /// Canonical text, e.g. "checkpoint:mib=16,every=10,async" (what parse_callback takes).
  std::string text() const;
  /// Short label for case names: "checkpoint-async".
  std::string label() const;
};

/// Parses one --callback value. Throws std::invalid_argument: "--callback=TEXT: reason".
CallbackSpec parse_callback(const std::string& text);

/// Runs a set of callbacks after each step and times them on the calling thread.
class CallbackRunner {
 public:
  /// `step` must outlive the runner (metric waits on it).
  CallbackRunner(std::vector<CallbackSpec> specs, TrainStep& step);
  ~CallbackRunner();
  CallbackRunner(const CallbackRunner&) = delete;
  CallbackRunner& operator=(const CallbackRunner&) = delete;

  /// After step `step_index` (0-based) was handed to the accelerator: each callback due
  /// at this step runs (sync) or is queued (async; blocks while the queue holds
  /// kQueueDepth tasks, and that wait is its cost on this thread).
  void after_step(int64_t step_index);
  /// Waits until the background thread has run everything queued; throws the first
  /// error a background task met (std::runtime_error naming the file).
  void drain();

  static constexpr size_t kQueueDepth = 4;

  /// Per callback, in spec order: total ms spent on the calling thread (sync: the work;
  /// async: the enqueue and any wait for room), and how many times it ran.
  const std::vector<double>& thread_ms() const { return thread_ms_; }
  const std::vector<int64_t>& runs() const { return runs_; }
  const std::vector<CallbackSpec>& specs() const { return specs_; }

 private:
  void run_one(size_t i, int64_t step_index);
  void worker();

  std::vector<CallbackSpec> specs_;
  TrainStep& step_;
  std::filesystem::path dir_;
  std::vector<char> checkpoint_bytes_;
  std::vector<double> thread_ms_;
  std::vector<int64_t> runs_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false;
  int busy_ = 0;
  std::string error_;
  std::thread thread_;
};

}  // namespace pipebench
