// Region timers for a training loop: pipebench's own end-to-end cases and a user's own C++
// loop (e.g. one calling LibTorch) time their phases with the same keys, and the result is
// a Google Benchmark-compatible JSON file that `pipebench-report` and `scripts/compare.sh`
// read, and spans in a Chrome/Perfetto trace (measure/trace.h).
//
// Keys (Deep500's timer keys, shared/seeds/003, plus ToDevice as Determined's to_device):
// Epoch, Batch, Forward, Backward, IO (waiting for the next batch: Determined's
// dataloader_next), Comm, ToDevice, Other; any other string is a user key.
//
//   pipebench::RegionTimer timer;                       // steady clock
//   { auto r = timer.scope(pipebench::Region::IO); batch = loader.next(); }
//   timer.start(pipebench::Region::Forward); ...; timer.end(pipebench::Region::Forward);
//   timer.write_json("regions.json");                   // then: pipebench-report regions.json
//
// Semantics. Each start() opens a region and returns its Handle. end(key) closes the most
// recently opened region of that key that is still open (a per-key stack), so regions of
// one key nest (an inner Batch inside an outer Batch closes first) and regions of different
// keys may overlap freely (IO opened, ToDevice opened, IO closed, ToDevice closed). end(handle)
// closes that region exactly, for two regions of one key that overlap without nesting. A
// region's duration is end - start of its own marks; enclosing regions are not shortened
// by the regions inside them (no "self time").
//
// Clocks (RegionClock): SteadyRegionClock (std::chrono::steady_clock, the default),
// CudaEventRegionClock (cudaEventRecord on a given stream at every start and end; the events
// are synchronised only when results are read, as Deep500's CUDA timer does, so timing adds
// no host-device synchronisation to the loop), and any clock a test injects.
//
// Results (stats()): per key, in first-use order: count, total, mean, p50, p99, all in
// milliseconds; percentiles by linear interpolation between closest ranks (Hyndman and Fan
// 1996, definition 7; numpy.percentile's default). Regions still open are not counted.
//
// JSON (write_json / to_json): {"context": {...}, "benchmarks": [one row per key]}, each
// row as Google Benchmark 1.7.1's JSON reporter writes an iteration row: name and run_name
// "RegionTimer/<key>", run_type "iteration", repetitions 1, repetition_index 0, threads 1,
// iterations = count, real_time = cpu_time = mean, time_unit "ms", and the counters
// count, total_ms, mean_ms, p50_ms, p99_ms. The context holds "region_timer" (the clock's
// name), "library" and whatever set_context() added (e.g. batch_size).
//
// Not thread-safe: one RegionTimer per thread (a loader's workers keep their own timers,
// the training loop this one). Errors: end() of a key with no open region, or of a handle
// already closed, throws std::logic_error naming the key; write_json throws
// std::runtime_error naming the file when it cannot be written; CudaEventRegionClock throws
// CudaUnavailable (device/cuda.h) without CUDA or a device, with the reason.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace pipebench {

class TraceRecorder;
class CudaStream;  // device/cuda.h

/// Deep500's keys, plus ToDevice.
enum class Region { Epoch, Batch, Forward, Backward, IO, Comm, ToDevice, Other };
/// "Epoch", "Batch", "Forward", "Backward", "IO", "Comm", "ToDevice", "Other".
const char* region_name(Region r);

/// Where a RegionTimer's times come from. A mark is an opaque token taken at start() and
/// end(); durations are asked for only when results are read, after resolve().
class RegionClock {
 public:
  virtual ~RegionClock() = default;
  /// A mark now (a timestamp, or an event recorded on a stream).
  virtual int64_t mark() = 0;
  /// Makes every mark taken so far readable (for CUDA events: waits for the last one).
  virtual void resolve() {}
  /// Milliseconds from mark a to mark b (resolved).
  virtual double ms_between(int64_t a, int64_t b) = 0;
  /// A mark's time on the host's steady clock, ns (measure/stage_timers.h now_ns()), for
  /// trace spans.
  virtual int64_t host_ns(int64_t mark) = 0;
  /// "steady_clock", "cuda_event", ... (written to the JSON's context).
  virtual std::string name() const = 0;
};

/// std::chrono::steady_clock: marks are now_ns().
class SteadyRegionClock : public RegionClock {
 public:
  int64_t mark() override;
  double ms_between(int64_t a, int64_t b) override { return static_cast<double>(b - a) / 1e6; }
  int64_t host_ns(int64_t mark) override { return mark; }
  std::string name() const override { return "steady_clock"; }
};

/// CUDA events recorded on `stream`, the stream the timed work runs on: there is no
/// default. A cudaStream_t, or a pipebench CudaStream (device/cuda.h). nullptr, passed
/// explicitly, is the legacy default stream (LibTorch's current stream when none was set);
/// it does not order with non-blocking streams, and every stream pipebench creates is one
/// (cudaStreamNonBlocking), so events there would time nothing of pipebench's work.
/// Each mark records one event (cudaEventBlockingSync: it carries a timestamp, and waiting
/// on it sleeps instead of spinning); resolve() synchronises the last one, and ms_between is cudaEventElapsedTime. A mark's host time
/// (for the trace) is the host time of the first mark plus the GPU time since it. The
/// events live as long as the clock (as Deep500's timer keeps its own): for a run of
/// millions of regions, use one timer per epoch. Throws CudaUnavailable when built without
/// CUDA or when no device is usable.
class CudaEventRegionClock : public RegionClock {
 public:
  explicit CudaEventRegionClock(void* stream);
  explicit CudaEventRegionClock(const CudaStream& stream);
  ~CudaEventRegionClock() override;
  CudaEventRegionClock(const CudaEventRegionClock&) = delete;
  CudaEventRegionClock& operator=(const CudaEventRegionClock&) = delete;
  int64_t mark() override;
  void resolve() override;
  double ms_between(int64_t a, int64_t b) override;
  int64_t host_ns(int64_t mark) override;
  std::string name() const override { return "cuda_event"; }

 private:
  void* stream_;
  std::vector<void*> events_;  // cudaEvent_t, one per mark
  int64_t first_host_ns_ = 0;
};

/// One key's results, milliseconds.
struct RegionStats {
  std::string key;
  int64_t count = 0;
  double total_ms = 0, mean_ms = 0, p50_ms = 0, p99_ms = 0;
};

/// Hyndman-Fan definition 7 percentile (q in [0, 1]) of `sorted` (ascending); 0 when empty.
double region_percentile(const std::vector<double>& sorted, double q);

class RegionTimer {
 public:
  /// An open region's id, from start().
  struct Handle {
    int64_t id = -1;
  };

  /// A steady-clock timer.
  RegionTimer();
  /// A timer on `clock` (CudaEventRegionClock, or a test's fake clock).
  explicit RegionTimer(std::unique_ptr<RegionClock> clock);
  ~RegionTimer();
  RegionTimer(const RegionTimer&) = delete;
  RegionTimer& operator=(const RegionTimer&) = delete;

  Handle start(Region key) { return start(std::string_view(region_name(key))); }
  Handle start(std::string_view key);
  /// Closes the innermost open region of `key` (see the top of the file).
  void end(Region key) { end(std::string_view(region_name(key))); }
  void end(std::string_view key);
  /// Closes exactly that region.
  void end(Handle handle);

  /// A region from construction to destruction (or to close()).
  class Scope {
   public:
    Scope(RegionTimer& timer, Handle handle) : timer_(&timer), handle_(handle) {}
    ~Scope() { close(); }
    Scope(Scope&& other) noexcept : timer_(other.timer_), handle_(other.handle_) { other.timer_ = nullptr; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    Scope& operator=(Scope&&) = delete;
    /// Ends the region now (once; later calls and the destructor do nothing). Never
    /// throws: a region already closed through end(key) is left as it is.
    void close() noexcept;

   private:
    RegionTimer* timer_;
    Handle handle_;
  };
  [[nodiscard]] Scope scope(Region key) { return Scope(*this, start(key)); }
  [[nodiscard]] Scope scope(std::string_view key) { return Scope(*this, start(key)); }

  /// Per key, in the order keys were first started. Resolves the clock (CUDA: waits for
  /// the last recorded event).
  std::vector<RegionStats> stats();
  /// A context entry of the JSON (e.g. "batch_size", "64"); the report reads batch_size.
  void set_context(const std::string& key, const std::string& value);
  /// The Google Benchmark-compatible document (see the top of the file).
  nlohmann::json to_json();
  void write_json(const std::filesystem::path& file);
  /// Every closed region as a span on a track per key ("region: IO"), category "region".
  void write_trace(TraceRecorder& trace);
  /// Forgets every closed region (open ones stay open).
  void clear();
  const RegionClock& clock() const { return *clock_; }

 private:
  struct Open {
    int64_t id;
    int64_t start;
  };
  struct Closed {
    int key;
    int64_t start, end;
  };
  int key_index(std::string_view key);
  void close(int key, size_t at, int64_t end_mark);
  bool close_if_open(Handle handle) noexcept;

  std::unique_ptr<RegionClock> clock_;
  std::vector<std::string> keys_;
  std::unordered_map<std::string, int> key_ids_;
  std::vector<std::vector<Open>> open_;  // per key, in start order
  std::unordered_map<int64_t, int> open_key_;  // handle id -> key
  std::vector<Closed> closed_;
  std::map<std::string, std::string> context_;
  int64_t next_id_ = 0;
};

}  // namespace pipebench
