// Chrome trace event recording (the JSON "Trace Event Format" that Perfetto and
// chrome://tracing open): one track per thread, a complete event ("ph": "X") per span,
// timestamps in microseconds from the recorder's creation. Where CUDA exists, each
// TraceSpan also opens an NVTX range of the same name, so Nsight Systems shows the same
// stages.
//
// Thread-safe. Recording costs a mutex and a vector push per span, and only when a
// recorder is attached (the loader and the end-to-end cases take a nullable pointer).
// Errors: write() throws std::runtime_error naming the file when it cannot be written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace pipebench {

class TraceRecorder {
 public:
  TraceRecorder();

  /// A span [start_ns, end_ns) on the calling thread's track (times from now_ns()).
  /// name and category must outlive the recorder (string literals). sample >= 0 is
  /// written as args.sample.
  void span(const char* name, const char* category, int64_t start_ns, int64_t end_ns,
            int64_t sample = -1);
  /// Names the calling thread's track ("worker 0", "consumer").
  void name_thread(const std::string& name);
  /// A named track that belongs to no thread (e.g. "accelerator"): returns its id for
  /// span_on(); the same name gives the same id.
  int track(const std::string& name);
  /// A span on a track made by track().
  void span_on(int track, const char* name, const char* category, int64_t start_ns,
               int64_t end_ns);
  /// A counter sample ("ph": "C"): Perfetto draws each name as a counter track of the
  /// process (system metrics: CPU cores busy, RSS). `name` must outlive the recorder.
  void counter(const char* name, int64_t t_ns, double value);
  /// A copy of `text` that lives as long as the recorder, for names that are not string
  /// literals (a benchmark case's name on the "benchmark cases" track).
  const char* intern(const std::string& text);
  size_t size() const;
  /// The now_ns() that the written times ("ts", us) count from: a trace of another process
  /// on the same host aligns by the difference of the two (bench/run/ranks.h merges ranks).
  int64_t origin_ns() const { return origin_ns_; }
  void write(const std::filesystem::path& file) const;

 private:
  struct Event {
    const char* name;
    const char* category;
    int64_t start_ns, end_ns, sample;
    int tid;
  };
  int thread_id();  // small dense id per thread, under mu_
  int64_t origin_ns_;
  mutable std::mutex mu_;
  std::vector<Event> events_;
  std::unordered_map<size_t, int> tids_;  // std::thread::id hash -> dense id
  std::unordered_map<int, std::string> thread_names_;
  int next_virtual_tid_ = 1000;  // ids of tracks made by track()
  std::deque<std::string> interned_;  // stable addresses
  struct Counter {
    const char* name;
    int64_t t_ns;
    double value;
  };
  std::vector<Counter> counters_;
};

/// RAII NVTX range (Nsight Systems) without a trace event; a no-op without CUDA. For
/// stages whose trace spans are recorded after the fact (the loader's per-sample stages).
class NvtxRange {
 public:
  explicit NvtxRange(const char* name);
  ~NvtxRange();
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

/// RAII span: records [construction, destruction) and brackets it with an NVTX range.
/// A null recorder makes it a no-op (apart from NVTX where CUDA exists).
class TraceSpan {
 public:
  TraceSpan(TraceRecorder* recorder, const char* name, const char* category,
            int64_t sample = -1);
  ~TraceSpan();
  TraceSpan(const TraceSpan&) = delete;
  TraceSpan& operator=(const TraceSpan&) = delete;

 private:
  TraceRecorder* recorder_;
  const char* name_;
  const char* category_;
  int64_t sample_;
  int64_t start_ns_;
};

}  // namespace pipebench
