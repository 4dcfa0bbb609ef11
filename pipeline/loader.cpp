// Loader: the input pipeline as one oneTBB flow graph (see loader.h). The graph, in
// Impl::run_graph below, reads top to bottom like this diagram:
//
//   tickets     input_node, serial: the next batch ticket (epoch, batch index, a run of
//               positions of the epoch's sampler order claimed from a per-epoch cursor)
//   limit       limiter_node(prefetch_depth_batches): a ticket passes only while fewer
//               than prefetch_depth_batches batches are in flight; the consumer's release
//               of a batch decrements it
//   dispatch    multifunction_node, serial: takes a free batch buffer from the pool, fills
//               in its sample indices and fans out one SampleTask per slot (O(1) a sample)
//   samples     multifunction_node, concurrency = workers: read + pipeline (decode,
//               transforms) writing straight into the sample's slot of the batch buffer
//               (float32 NCHW: collate in place, no per-sample copy, so no collate time
//               is recorded: storing a label is ~100 ns of bookkeeping, not a stage;
//               other formats: the worker copies the sample into its slot in the batch's
//               dtype and layout, timed as collate); the sample that completes a batch passes
//               the batch on (an atomic countdown, no serial node per sample)
//   order       sequencer_node: batches back in ticket (sampler) order; with
//               in_order false a queue_node instead: complete batches first in, first out
//               (PyTorch's in_order=False), so a slow sample holds only its own batch
//   deliver     function_node, serial: optional H2D copy, then the batch goes into the
//               ready queue that Loader::next() pops on the consumer thread
//
// Collating in place rather than copying each finished sample into the batch saves a
// 600 KB read + write per 224 x 224 sample (measured: ~6% of imagenet_train's CPU time).
//
// The graph runs inside a tbb::task_arena(workers) on a background thread that owns it;
// the consumer thread only pops ready batches and releases them.
//
// Skipping (OnError::kSkip): a failed sample's slot takes a replacement from the epoch's
// remaining order through the same cursor the tickets claim from, so batches keep their
// size; later tickets shift by one position per replacement, the last batch of the epoch
// comes out that much shorter (or is dropped with drop_last), and a batch whose
// replacement found the epoch exhausted comes out short (its samples compacted). Without
// errors the order is exactly the sampler's (batches delivered out of order with in_order
// false, each batch's samples still the sampler's run); with skips, which replacement lands in which
// batch depends on timing when workers > 1.
//
// Stopping (OnError::kStop): the first failure cancels the graph and reaches next() at once;
// batches already in the ready queue come first, batches not yet complete are dropped.
#include "pipeline/loader.h"

#include <oneapi/tbb/concurrent_queue.h>
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "pipeline/collate.h"
#include "measure/own_threads.h"
#include "measure/trace.h"

namespace pipebench {
namespace {

namespace flow = tbb::flow;

constexpr size_t kMaxSkippedFiles = 100;

// One epoch's sampler order and the cursor that tickets and replacements claim from.
struct EpochState {
  int epoch = 0;
  std::vector<int64_t> order;
  std::atomic<int64_t> cursor{0};
};

struct Ticket {
  int64_t seq = 0;            // global batch sequence number (sampler order)
  int64_t batch_index = 0;    // within the epoch
  std::shared_ptr<EpochState> epoch;
  int64_t start = 0;          // first position in epoch->order
  int count = 0;              // samples
};

struct SampleTask {
  int slot = 0;
  int pos = 0;  // position in the batch
};

// A pooled batch buffer and the bookkeeping of the batch it currently holds.
struct Slot {
  HostBuffer data;                 // batch_size samples in the pipeline's output format
  std::vector<int32_t> labels;     // batch_size
  std::vector<float> soft_labels;  // batch_size x classes, when the spec has batch operators
  std::vector<int64_t> batch_op_ns;  // per batch operator, this batch's time
  std::vector<int64_t> indices;    // batch_size dataset indices
  std::vector<uint8_t> ok;         // 0 where a skipped sample found no replacement
  std::vector<uint8_t> flips;      // batch_size, the deferred flip's draws (finish: device)
  std::vector<MixDraw> mixes;      // the batch's mixing draws, for the device (finish: device)
  DeviceBuffer device;             // when copy_to_device
  std::shared_ptr<EpochState> epoch;
  int64_t seq = 0;
  int64_t batch_index = 0;
  int count = 0;
  std::atomic<int> remaining{0};
  std::atomic<int> holes{0};
  int64_t ready_ns = 0;
  Batch batch;
};

// The batch buffers, shared with the BatchHandles so that a handle may outlive the Loader.
struct Pool {
  std::vector<std::unique_ptr<Slot>> slots;
  tbb::concurrent_queue<int> free_slots;
  std::atomic<int> in_flight{0};
  std::atomic<int> max_in_flight{0};
  std::atomic<int> held{0};  // delivered to the consumer and not yet released
  std::mutex mu;                                       // guards release vs. shutdown
  flow::receiver<flow::continue_msg>* decrement = nullptr;  // the limiter, while it lives

  void take() {
    const int now = in_flight.fetch_add(1, std::memory_order_relaxed) + 1;
    int seen = max_in_flight.load(std::memory_order_relaxed);
    while (now > seen && !max_in_flight.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
  }
  void release(int slot) {
    held.fetch_sub(1, std::memory_order_relaxed);
    in_flight.fetch_sub(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mu);
    if (decrement == nullptr) return;  // the graph is gone
    free_slots.push(slot);  // before the decrement: a ticket passing the limiter finds it
    decrement->try_put(flow::continue_msg());
  }
};

// What the ready queue carries: a batch, the end of the stream, or the stop after an error.
struct Ready {
  enum Kind { kBatch, kEnd, kError } kind = kBatch;
  int slot = -1;
};

// Per worker thread, reused across samples: no heap allocation per sample after warm-up.
struct WorkerState {
  explicit WorkerState(const Pipeline* pipeline) : ws(*pipeline) {
    times.step_ns.resize(pipeline->step_labels().size());
  }
  PipelineWorkspace ws;
  SampleTimes times;  // step_ns sized once: per-operator timers without an allocation
  std::vector<float> chw;  // float32 NHWC: the sample's C x H x W tensor before collate
  std::vector<uint8_t> bytes;
  bool named = false;
};

std::string options_error(const char* name, int value) {
  return std::string("loader: ") + name + " must be >= 1, got " + std::to_string(value);
}

}  // namespace

struct Loader::Impl {
  Impl(const SampleSource& dataset_in, LoaderOptions options_in)
      : dataset(dataset_in), options(std::move(options_in)) {
    if (options.workers < 1) throw std::invalid_argument(options_error("workers", options.workers));
    if (options.batch_size < 1) {
      throw std::invalid_argument(options_error("batch_size", options.batch_size));
    }
    if (options.prefetch_depth_batches < 1) {
      throw std::invalid_argument(
          options_error("prefetch_depth_batches", options.prefetch_depth_batches));
    }
    if (options.epochs < 1) throw std::invalid_argument(options_error("epochs", options.epochs));
    if (!options.pipeline) throw std::invalid_argument("loader: options.pipeline is required");
    pipeline = options.pipeline.get();
    timer_labels = pipeline->step_labels();
    for (size_t i = 0; i < pipeline->batch_operator_count(); ++i) {
      std::string label = pipeline->batch_op(i).name();  // a repeated operator gets #2, #3
      for (int k = 2; std::find(timer_labels.begin(), timer_labels.end(), label) != timer_labels.end(); ++k)
        label = pipeline->batch_op(i).name() + "#" + std::to_string(k);
      timer_labels.push_back(label);
    }
    step_ns = std::make_unique<std::atomic<int64_t>[]>(timer_labels.size());
    nominal_batches = pipebench::batches_per_epoch(dataset.size(), dataset.group_starts(), options.batch_size, options.sampler);
    if (options.memory == MemoryKind::kPinned || options.copy_to_device) require_cuda();
    const SampleFormat& format = pipeline->output();
    sample_bytes = format.bytes();

    pool = std::make_shared<Pool>();
    const auto b = static_cast<size_t>(options.batch_size);
    for (int i = 0; i < options.prefetch_depth_batches; ++i) {
      auto s = std::make_unique<Slot>();
      s->data = HostBuffer(b * sample_bytes, options.memory);
      // Touch every page now: first-touch faults (the kernel zeroing ~20 MB a batch) would
      // otherwise land in the first epoch's sample times.
      std::memset(s->data.data(), 0, s->data.bytes());
      s->labels.resize(b);
      if (pipeline->batch_operator_count() > 0) {
        s->soft_labels.resize(b * dataset.num_classes());
        s->batch.soft_labels = s->soft_labels.data();
        s->batch.num_classes = static_cast<int>(dataset.num_classes());
        s->batch_op_ns.resize(pipeline->batch_operator_count());
      }
      s->indices.resize(b);
      s->ok.resize(b);
      if (pipeline->defers_flip()) {
        s->flips.resize(b);
        s->batch.flips = s->flips.data();
      }
      if (options.copy_to_device) s->device = DeviceBuffer(b * sample_bytes);
      s->batch.format = format;
      s->batch.channels = format.channels;
      s->batch.height = format.height;
      s->batch.width = format.width;
      const bool u8 = format.dtype == SampleDtype::kUint8;
      s->batch.data = u8 ? nullptr : s->data.as<float>();
      s->batch.data_u8 = u8 ? s->data.as<uint8_t>() : nullptr;
      if (pipeline->deferred_normalize()) s->batch.normalize = &*pipeline->deferred_normalize();
      s->batch.labels = s->labels.data();
      s->batch.device_data = s->device.data();
      pool->slots.push_back(std::move(s));
      pool->free_slots.push(i);
    }
    if (options.copy_to_device) h2d_stream = std::make_unique<CudaStream>();

    // A worker count above the scheduler's default thread limit raises it for our lifetime.
    if (static_cast<size_t>(options.workers) >
        tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)) {
      parallelism.emplace(tbb::global_control::max_allowed_parallelism,
                          static_cast<size_t>(options.workers));
    }
    arena.initialize(options.workers);
    // Not named: oneTBB workers started from it would inherit the name (own_threads.h).
    thread = start_own_thread("", [this] {
      try {
        arena.execute([this] { run_graph(); });
      } catch (const std::exception& e) {  // e.g. bad_alloc building the graph
        fail("", std::string("loader: the graph thread failed: ") + e.what());
      }
    });
  }

  ~Impl() { shutdown(); }

  // --- the graph --------------------------------------------------------------------------

  void run_graph() {
    flow::graph g;  // constructed inside the arena, so every node's task runs in it

    // Every body runs under guard(): an exception that escapes a node would cancel the
    // graph while reserve_wait() keeps wait_for_all() from returning, so it must become
    // fail() (which releases the wait) inside the node.
    flow::input_node<Ticket> tickets(g, [this](tbb::flow_control& fc) {
      Ticket t;
      guard("tickets", [&] { t = next_ticket(fc); });
      if (stopping.load(std::memory_order_relaxed)) fc.stop();
      return t;
    });
    flow::limiter_node<Ticket> limit(g, static_cast<size_t>(options.prefetch_depth_batches));
    using DispatchNode = flow::multifunction_node<Ticket, std::tuple<SampleTask>>;
    DispatchNode dispatch(g, flow::serial, [this](const Ticket& t, DispatchNode::output_ports_type& out) {
      guard("dispatch", [&] { start_batch(t, std::get<0>(out)); });
    });
    using SampleNode = flow::multifunction_node<SampleTask, std::tuple<int>>;
    SampleNode samples(g, static_cast<size_t>(options.workers),
                       [this](const SampleTask& t, SampleNode::output_ports_type& out) {
                         guard("samples", [&] {
                           if (run_sample(t)) std::get<0>(out).try_put(t.slot);
                         });
                       });
    // One of the two ordering stages (LoaderOptions::in_order), between samples and deliver.
    std::optional<flow::sequencer_node<int>> in_sequence;
    std::optional<flow::queue_node<int>> as_completed;
    if (options.in_order) {
      in_sequence.emplace(g, [pool = pool.get()](const int& slot) {
        return static_cast<size_t>(pool->slots[static_cast<size_t>(slot)]->seq);
      });
    } else {
      as_completed.emplace(g);
    }
    flow::function_node<int> deliver(g, flow::serial, [this](int slot) {
      guard("deliver", [&] { deliver_batch(slot); });
      return flow::continue_msg();
    });

    flow::make_edge(tickets, limit);
    flow::make_edge(limit, dispatch);
    flow::make_edge(flow::output_port<0>(dispatch), samples);
    if (in_sequence) {
      flow::make_edge(flow::output_port<0>(samples), *in_sequence);
      flow::make_edge(*in_sequence, deliver);
    } else {
      flow::make_edge(flow::output_port<0>(samples), *as_completed);
      flow::make_edge(*as_completed, deliver);
    }

    start_graph(g, tickets, limit);
    wait_for_graph(g);
  }

  // Hands the graph to shutdown() and the limiter's decrementer to the pool's releases, and
  // activates the tickets; nothing starts once the loader is stopping.
  void start_graph(flow::graph& g, flow::input_node<Ticket>& tickets, flow::limiter_node<Ticket>& limit) {
    std::lock_guard<std::mutex> lock(control_mu);
    if (stopping) return;
    graph = &g;
    g.reserve_wait();  // held until the last batch is out, an error, or shutdown
    {
      std::lock_guard<std::mutex> pool_lock(pool->mu);
      pool->decrement = &limit.decrementer();
    }
    tickets.activate();
  }

  // Waits for the graph (an exception out of it becomes fail()), then takes it back: no more
  // releases into it, and the tasks a last release spawned finish.
  void wait_for_graph(flow::graph& g) {
    try {
      g.wait_for_all();
    } catch (const std::exception& e) {  // a node body threw (not a sample: those are caught)
      fail("", std::string("loader: ") + e.what());
    } catch (...) {
      fail("", "loader: unknown exception in the flow graph");
    }
    {
      std::lock_guard<std::mutex> pool_lock(pool->mu);
      pool->decrement = nullptr;
    }
    {
      std::lock_guard<std::mutex> lock(control_mu);
      graph = nullptr;
    }
    try {
      g.wait_for_all();
    } catch (...) {  // already stopped with an error above
    }
  }

  // Runs a node body; any exception stops the loader with the node's name in the message.
  template <typename F>
  void guard(const char* node, F&& body) noexcept {
    try {
      body();
    } catch (const std::exception& e) {
      fail("", std::string("loader: ") + node + " node failed: " + e.what());
    } catch (...) {
      fail("", std::string("loader: ") + node + " node failed with an unknown exception");
    }
  }

  // tickets: serial. Claims the next run of the epoch's order; moves on to the next epoch
  // when this one is exhausted; stops after the last epoch.
  Ticket next_ticket(tbb::flow_control& fc) {
    const int64_t b = options.batch_size;
    while (!stopping.load(std::memory_order_relaxed)) {
      if (!epoch_state) {
        if (next_epoch == options.epochs || nominal_batches == 0) break;
        epoch_state = std::make_shared<EpochState>();
        epoch_state->epoch = next_epoch;
        epoch_state->order = epoch_indices(dataset.size(), dataset.group_starts(), next_epoch, options.sampler);
        ++next_epoch;
        batch_in_epoch = 0;
      }
      const auto n = static_cast<int64_t>(epoch_state->order.size());
      // Claim b positions, unless fewer remain: then the epoch ends here, and with
      // drop_last the unclaimed tail stays available to replace skipped samples.
      int64_t start = epoch_state->cursor.load(std::memory_order_relaxed);
      int64_t count = 0;
      for (;;) {
        count = std::min(b, n - start);
        if (count <= 0 || (options.sampler.drop_last && count < b)) break;
        if (epoch_state->cursor.compare_exchange_weak(start, start + count,
                                                      std::memory_order_relaxed))
          break;
      }
      if (count <= 0 || (options.sampler.drop_last && count < b)) {
        epoch_state.reset();
        continue;
      }
      Ticket t;
      t.seq = tickets_issued++;
      t.batch_index = batch_in_epoch++;
      t.epoch = epoch_state;
      t.start = start;
      t.count = static_cast<int>(count);
      return t;
    }
    fc.stop();
    epoch_state.reset();
    if (!stopping.load(std::memory_order_relaxed)) {
      std::lock_guard<std::mutex> lock(end_mu);
      input_done = true;
      if (delivered == tickets_issued) finish(Ready::kEnd);
    }
    return {};
  }

  // dispatch: serial. A free buffer exists: the limiter lets a ticket through only while
  // fewer than depth batches are in flight, and a release frees its buffer before it
  // decrements the limiter.
  template <typename Port>
  void start_batch(const Ticket& t, Port& out) {
    int id = -1;
    if (!pool->free_slots.try_pop(id)) {
      fail("", "loader: internal error: no free batch buffer (prefetch accounting broken)");
      return;
    }
    pool->take();
    Slot& s = *pool->slots[static_cast<size_t>(id)];
    s.epoch = t.epoch;
    s.seq = t.seq;
    s.batch_index = t.batch_index;
    s.count = t.count;
    s.holes.store(0, std::memory_order_relaxed);
    const int64_t* order = t.epoch->order.data() + t.start;
    for (int i = 0; i < t.count; ++i) {
      s.indices[static_cast<size_t>(i)] = order[i];
      s.ok[static_cast<size_t>(i)] = 1;
    }
    s.remaining.store(t.count, std::memory_order_release);
    for (int i = 0; i < t.count; ++i) out.try_put(SampleTask{id, i});
  }

  // samples: concurrency = workers. Returns true when this sample completed its batch.
  // A failing sample stops the loader (kStop) or is replaced from the epoch's remaining
  // order (kSkip) until one succeeds or the epoch is exhausted.
  bool run_sample(const SampleTask& task) {
    Slot& s = *pool->slots[static_cast<size_t>(task.slot)];
    WorkerState& w = worker_state.local();
    if (options.trace != nullptr && !w.named) {
      options.trace->name_thread("worker " + std::to_string(tbb::this_task_arena::current_thread_index()));
      w.named = true;
    }
    const auto pos = static_cast<size_t>(task.pos);
    while (!stopping.load(std::memory_order_relaxed)) {
      const int64_t index = s.indices[pos];
      try {
        process(s, pos, w);
        break;
      } catch (const std::exception& e) {
        const Failure f = handle_failure(s, pos, index, e.what());
        if (f == Failure::kStopped) return false;
        if (f == Failure::kNoReplacement) break;
      }
    }
    if (s.remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return false;
    complete_batch(s);
    return true;
  }

  // Read + pipeline for the sample at `pos` of slot s, written into its slot of the batch
  // (straight by the pipeline for float32 NCHW, else by collate_sample), with its stage
  // times. Throws what the read or the pipeline throws.
  void process(Slot& s, size_t pos, WorkerState& w) {
    const bool timed = options.stage_timers || options.trace != nullptr;
    const int64_t index = s.indices[pos];
    const int64_t t0 = timed ? now_ns() : 0;
    const int64_t cpu0 = options.stage_timers ? thread_cpu_ns() : 0;
    std::span<const uint8_t> bytes;
    {
      NvtxRange nvtx("read");
      bytes = dataset.bytes(static_cast<size_t>(index), w.bytes);
    }
    const int64_t t1 = timed ? now_ns() : 0;
    Rng rng = Rng::for_sample(options.sampler.seed, static_cast<uint64_t>(s.epoch->epoch),
                              static_cast<uint64_t>(index));
    {
      // One NVTX range for the pipeline: its decode / transform split is known only
      // afterwards (SampleTimes), where the trace spans are drawn from it.
      NvtxRange nvtx("decode+transform");
      pipeline->run(bytes, dataset.name(static_cast<size_t>(index)), rng, w.ws, pipeline_out(w, slot_of(s, pos)),
                    timed ? &w.times : nullptr);
    }
    const int64_t t2 = timed ? now_ns() : 0;
    if (!pipeline->output().in_place()) collate_sample(w, slot_of(s, pos));
    const int64_t t3 = timed && !pipeline->output().in_place() ? now_ns() : t2;
    if (options.stage_timers) sample_cpu_ns.fetch_add(thread_cpu_ns() - cpu0, std::memory_order_relaxed);
    if (options.stage_timers && record_costs.load(std::memory_order_relaxed)) {
      std::lock_guard<std::mutex> lock(costs_mu);
      costs.push_back({index, t3 - t0});
    }
    s.labels[pos] = dataset.label(static_cast<size_t>(index));
    if (!s.flips.empty()) s.flips[pos] = w.ws.deferred_flip() ? 1 : 0;
    processed.fetch_add(1, std::memory_order_relaxed);
    // A success ends a run of failures (read first: no shared write per sample).
    if (failed_since_success.load(std::memory_order_relaxed) != 0) {
      std::lock_guard<std::mutex> lock(stats_mu);
      ++failure_generation;  // forgets which files failed: O(1), no clearing
      failed_since_success.store(0, std::memory_order_relaxed);
    }
    if (timed) record_times(index, w.times, t0, t1, t2, t3);
  }

  // The sample's slot in the batch buffer (sample_bytes each).
  uint8_t* slot_of(Slot& s, size_t pos) const { return s.data.as<uint8_t>() + pos * sample_bytes; }

  // Where the pipeline writes: the slot itself (float32 NCHW), the worker's CHW scratch
  // (float32 NHWC), or nowhere (uint8: the image stays in the workspace).
  float* pipeline_out(WorkerState& w, uint8_t* slot) const {
    const SampleFormat& f = pipeline->output();
    if (f.in_place()) return reinterpret_cast<float*>(slot);
    if (f.dtype == SampleDtype::kUint8) return nullptr;
    w.chw.resize(f.elements());
    return w.chw.data();
  }

  // The sample into its slot in the batch's dtype and layout (not float32 NCHW).
  void collate_sample(const WorkerState& w, uint8_t* slot) const {
    const SampleFormat& f = pipeline->output();
    if (f.dtype == SampleDtype::kUint8) {
      const Image& img = w.ws.output_image();
      if (img.height != f.height || img.width != f.width || img.channels != f.channels)
        throw std::logic_error("loader: the pipeline's image is " + std::to_string(img.height) + "x" +
                               std::to_string(img.width) + "x" + std::to_string(img.channels) +
                               ", its output format says " + f.text());
      collate_image_u8(img, f.layout, slot);
    } else {
      collate_chw_f32_to_hwc(w.chw.data(), f.channels, f.height, f.width, reinterpret_cast<float*>(slot));
    }
  }

  // Stage timers and trace spans of one sample: read t0..t1, the pipeline t1..t2 (its own
  // decode / transform split), collate t2..t3 (t3 == t2 when collating in place).
  void record_times(int64_t index, const SampleTimes& times, int64_t t0, int64_t t1, int64_t t2,
                    int64_t t3) {
    if (options.stage_timers) {
      timers.add(Stage::kRead, t1 - t0);
      timers.add(Stage::kDecode, times.decode_ns);
      timers.add(Stage::kTransform, times.transform_ns);
      if (t3 > t2) timers.add(Stage::kCollate, t3 - t2);
      for (size_t k = 0; k < times.step_ns.size(); ++k)
        step_ns[k].fetch_add(times.step_ns[k], std::memory_order_relaxed);
    }
    if (TraceRecorder* trace = options.trace) {
      const int64_t decode_end = std::min(t2, t1 + times.decode_ns);
      trace->span("read", "loader", t0, t1, index);
      trace->span("decode", "loader", t1, decode_end, index);
      trace->span("transform", "loader", decode_end, t2, index);
      if (t3 > t2) trace->span("collate", "loader", t2, t3, index);
    }
  }

  enum class Failure { kStopped, kReplaced, kNoReplacement };

  // A sample failed: stop (kStop, or every sample failing), or count it and put the next
  // position of the epoch's order in its place (kSkip).
  Failure handle_failure(Slot& s, size_t pos, int64_t index, const std::string& reason) {
    const std::string path = dataset.name(static_cast<size_t>(index));
    if (options.on_error == OnError::kStop) {
      const std::string message = reason.find(path) != std::string::npos ? reason : path + ": " + reason;
      fail(path, "loader stopped at sample " + std::to_string(index) + " of epoch " +
                     std::to_string(s.epoch->epoch) + ": " + message);
      return Failure::kStopped;
    }
    bool all_failed = false;
    {
      std::lock_guard<std::mutex> lock(stats_mu);
      ++skipped;
      if (skipped_samples.size() < kMaxSkippedFiles) skipped_samples.push_back(SkippedSample{index, path, reason});
      // Every distinct sample of the dataset failed since the last success: nothing will
      // ever succeed (every file bad, or the pipeline fails on every image), and skipping
      // would cycle through empty epochs forever. Distinct: a bad file met again in the
      // next epoch does not count twice.
      uint32_t& stamp = failed_stamp[static_cast<size_t>(index)];
      if (stamp != failure_generation) {
        stamp = failure_generation;
        all_failed = failed_since_success.fetch_add(1, std::memory_order_relaxed) + 1 >=
                     static_cast<int64_t>(dataset.size());
      }
    }
    if (all_failed) {
      fail(path, "loader stopped: every one of the dataset's " + std::to_string(dataset.size()) +
                     " samples failed since the last success; the last: " + path + ": " + reason);
      return Failure::kStopped;
    }
    const int64_t next = s.epoch->cursor.fetch_add(1, std::memory_order_relaxed);
    if (next >= static_cast<int64_t>(s.epoch->order.size())) {  // epoch exhausted
      s.ok[pos] = 0;
      s.holes.fetch_add(1, std::memory_order_relaxed);
      return Failure::kNoReplacement;
    }
    s.indices[pos] = s.epoch->order[static_cast<size_t>(next)];
    return Failure::kReplaced;
  }

  // The last sample of a batch: fill in the Batch, compacting away holes left by skips.
  void complete_batch(Slot& s) {
    int size = s.count;
    if (s.holes.load(std::memory_order_relaxed) > 0) {
      int out = 0;
      for (int i = 0; i < s.count; ++i) {
        const auto src = static_cast<size_t>(i);
        if (!s.ok[src]) continue;
        const auto dst = static_cast<size_t>(out++);
        if (dst == src) continue;
        std::memcpy(slot_of(s, dst), slot_of(s, src), sample_bytes);
        s.labels[dst] = s.labels[src];
        s.indices[dst] = s.indices[src];
        if (!s.flips.empty()) s.flips[dst] = s.flips[src];
      }
      size = out;
    }
    s.batch.epoch = s.epoch->epoch;
    s.batch.index = s.batch_index;
    s.batch.size = size;
    s.batch.sample_indices = std::span<const int64_t>(s.indices.data(), static_cast<size_t>(size));
    if (pipeline->batch_operator_count() > 0 && size > 0) run_batch_ops(s);
    s.epoch.reset();
  }

  // The spec's batch operators on the complete batch, drawing from the batch's generator.
  void run_batch_ops(Slot& s) {
    BatchData b;
    // Null for uint8 batches: only label operators run on them, or the mixing operators'
    // draws and label halves when the device finishes the pixels (check_collate, spec.h).
    b.data = s.batch.data_u8 != nullptr ? nullptr : s.data.as<float>();
    b.size = s.batch.size;
    b.channels = s.batch.channels;
    b.height = s.batch.height;
    b.width = s.batch.width;
    b.labels = s.labels.data();
    b.soft_labels = s.soft_labels.data();
    b.num_classes = s.batch.num_classes;
    Rng rng = Rng::for_batch(options.sampler.seed, static_cast<uint64_t>(s.batch.epoch),
                             static_cast<uint64_t>(s.batch.index));
    const size_t first = pipeline->step_labels().size(), n = pipeline->batch_operator_count();
    std::vector<int64_t>& op_ns = s.batch_op_ns;  // run_batch adds to it
    std::fill(op_ns.begin(), op_ns.end(), 0);
    const bool timed = options.stage_timers;
    TraceSpan span(options.trace, "batch_ops", "loader", s.seq);
    const int64_t t0 = now_ns();
    try {
      pipeline->run_batch(b, rng, timed ? op_ns.data() : nullptr, &s.mixes);
      s.batch.mixes = s.mixes;
    } catch (const std::exception& e) {
      fail("", "loader stopped at batch " + std::to_string(s.batch.index) + " of epoch " +
                   std::to_string(s.batch.epoch) + ": " + e.what());
      return;
    }
    if (options.stage_timers) timers.add(Stage::kBatchOps, now_ns() - t0);
    if (timed)
      for (size_t i = 0; i < n; ++i) step_ns[first + i].fetch_add(op_ns[i], std::memory_order_relaxed);
  }

  // deliver: serial, in sequence order (in_order false: in completion order). Optional
  // H2D, then into the ready queue.
  void deliver_batch(int id) {
    Slot& s = *pool->slots[static_cast<size_t>(id)];
    if (stopping.load(std::memory_order_relaxed)) return;
    if (s.batch.size == 0) {
      pool->held.fetch_add(1, std::memory_order_relaxed);  // release() counts it back
      pool->release(id);  // every sample skipped: nothing to deliver
    } else {
      if (options.copy_to_device) {
        try {
          TraceSpan span(options.trace, "h2d", "loader", s.seq);
          const int64_t t0 = now_ns();
          copy_to_device(s.device.data(), s.data.data(), s.batch.bytes(), h2d_stream.get());
          h2d_stream->synchronize();
          if (options.stage_timers) timers.add(Stage::kH2D, now_ns() - t0);
        } catch (const std::exception& e) {
          fail("", std::string("loader stopped: H2D copy of batch ") + std::to_string(s.seq) +
                       " failed: " + e.what());
          return;
        }
      }
      s.ready_ns = now_ns();
      ready.push(Ready{Ready::kBatch, id});
    }
    std::lock_guard<std::mutex> lock(end_mu);
    ++delivered;
    if (input_done && delivered == tickets_issued) finish(Ready::kEnd);
  }

  // --- ends -------------------------------------------------------------------------------

  // kStop: records the first error, cancels the graph, wakes the consumer.
  void fail(const std::string& file, const std::string& message) {
    {
      std::lock_guard<std::mutex> lock(error_mu);
      if (error) return;
      error.emplace(file, message);
    }
    stopping.store(true, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(control_mu);
      if (graph != nullptr) graph->cancel();
    }
    finish(Ready::kError);
  }

  // Pushes the final sentinel and lets wait_for_all return; once only.
  void finish(Ready::Kind kind) {
    if (finished.exchange(true)) return;
    ready.push(Ready{kind, -1});
    std::lock_guard<std::mutex> lock(control_mu);
    if (graph != nullptr) graph->release_wait();
  }

  void shutdown() {
    if (!thread.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(control_mu);
      stopping.store(true, std::memory_order_relaxed);
      if (graph != nullptr) graph->cancel();
    }
    if (!finished.exchange(true)) {
      std::lock_guard<std::mutex> lock(control_mu);
      if (graph != nullptr) graph->release_wait();
    }
    thread.join();
  }

  // --- consumer side ----------------------------------------------------------------------

  std::optional<BatchHandle> next() {
    if (consumer_done) {
      if (consumer_error) throw *consumer_error;
      return std::nullopt;
    }
    Ready r;
    const int64_t t0 = now_ns();
    if (pool->held.load(std::memory_order_relaxed) >= options.prefetch_depth_batches) {
      // Every buffer is held by the caller: no batch can become ready, only the end or an
      // error, which follow the last delivered batch within microseconds. Poll for them a
      // while rather than wait forever.
      bool got = false;
      for (int i = 0; i < 1000 && !(got = ready.try_pop(r)); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (!got) {
        throw std::logic_error("loader: the consumer holds all " +
                               std::to_string(options.prefetch_depth_batches) +
                               " (prefetch_depth_batches) batches; release one before next(), "
                               "or no batch could ever become ready");
      }
    } else {
      TraceSpan span(options.trace, "wait", "loader");
      ready.pop(r);
    }
    const int64_t t1 = now_ns();
    consumer_wait_ns.fetch_add(t1 - t0, std::memory_order_relaxed);
    if (r.kind != Ready::kBatch) {
      consumer_done = true;
      if (r.kind == Ready::kError) {
        std::lock_guard<std::mutex> lock(error_mu);
        consumer_error = error;
        throw *consumer_error;
      }
      return std::nullopt;
    }
    Slot& s = *pool->slots[static_cast<size_t>(r.slot)];
    ready_wait_ns.fetch_add(std::max<int64_t>(0, t1 - s.ready_ns), std::memory_order_relaxed);
    batches.fetch_add(1, std::memory_order_relaxed);
    samples.fetch_add(s.batch.size, std::memory_order_relaxed);
    pool->held.fetch_add(1, std::memory_order_relaxed);
    std::shared_ptr<void> releaser(static_cast<void*>(&s),
                                   [pool = pool, id = r.slot](void*) { pool->release(id); });
    return BatchHandle(&s.batch, std::move(releaser));
  }

  LoaderStats stats() const {
    LoaderStats st;
    {
      std::lock_guard<std::mutex> lock(stats_mu);
      st.skipped = skipped;
      st.skipped_samples = skipped_samples;
    }
    st.samples = samples.load(std::memory_order_relaxed);
    st.processed = processed.load(std::memory_order_relaxed);
    st.sample_cpu_ns = sample_cpu_ns.load(std::memory_order_relaxed);
    st.batches = batches.load(std::memory_order_relaxed);
    for (int i = 0; i < static_cast<int>(Stage::kCount); ++i) st.stage_ns[i] = timers.get(static_cast<Stage>(i));
    st.consumer_wait_ns = consumer_wait_ns.load(std::memory_order_relaxed);
    st.ready_wait_ns = ready_wait_ns.load(std::memory_order_relaxed);
    st.max_batches_in_flight = pool->max_in_flight.load(std::memory_order_relaxed);
    st.step_labels = timer_labels;
    for (size_t k = 0; k < st.step_labels.size(); ++k)
      st.step_ns.push_back(step_ns[k].load(std::memory_order_relaxed));
    // Workers' idle time, derived: worker-seconds since the start minus the time spent on
    // samples. They idle when the prefetch bound is reached (the consumer is slower) or
    // between batches; it is only meaningful with stage timers on.
    if (options.stage_timers) {
      int64_t busy = 0;
      for (int i = 0; i < static_cast<int>(Stage::kH2D); ++i) busy += st.stage_ns[i];
      st.worker_wait_ns = std::max<int64_t>(0, options.workers * (now_ns() - start_ns) - busy);
    }
    return st;
  }

  // --- state ------------------------------------------------------------------------------

  const SampleSource& dataset;
  LoaderOptions options;
  const Pipeline* pipeline = nullptr;  // options.pipeline, kept alive by options
  size_t sample_bytes = 0;  // one sample in the output format (Pipeline::output())
  int64_t nominal_batches = 0;
  std::shared_ptr<Pool> pool;
  std::unique_ptr<CudaStream> h2d_stream;
  tbb::enumerable_thread_specific<WorkerState> worker_state{options.pipeline.get()};
  StageTimers timers;
  std::vector<std::string> timer_labels;            // pipeline steps, then batch operators
  std::unique_ptr<std::atomic<int64_t>[]> step_ns;  // per timer label, summed

  // tickets (touched only by the serial input node)
  std::shared_ptr<EpochState> epoch_state;
  int next_epoch = 0;
  int64_t batch_in_epoch = 0;

  // end of stream
  std::mutex end_mu;
  int64_t tickets_issued = 0;  // written by the input node; read under end_mu once input_done
  int64_t delivered = 0;
  bool input_done = false;
  std::atomic<bool> finished{false};

  // errors and shutdown
  std::mutex error_mu;
  std::optional<LoaderError> error;
  std::atomic<bool> stopping{false};
  std::mutex control_mu;
  flow::graph* graph = nullptr;

  // ready queue and the consumer
  tbb::concurrent_bounded_queue<Ready> ready;
  bool consumer_done = false;
  std::optional<LoaderError> consumer_error;

  // stats
  mutable std::mutex stats_mu;
  int64_t skipped = 0;
  std::vector<SkippedSample> skipped_samples;
  // kSkip: which samples failed since the last success (stamp == generation), how many.
  std::vector<uint32_t> failed_stamp =
      std::vector<uint32_t>(options.on_error == OnError::kSkip ? dataset.size() : 0, 0);
  uint32_t failure_generation = 1;
  std::atomic<int64_t> failed_since_success{0};
  std::atomic<int64_t> samples{0}, batches{0}, consumer_wait_ns{0}, ready_wait_ns{0};
  std::atomic<int64_t> processed{0}, sample_cpu_ns{0};

  int64_t start_ns = now_ns();

  // Per-sample costs while recording (Loader::record_sample_costs).
  std::atomic<bool> record_costs{false};
  std::mutex costs_mu;
  std::vector<Loader::SampleCost> costs;

  std::optional<tbb::global_control> parallelism;
  tbb::task_arena arena;
  std::thread thread;
};

Loader::Loader(const SampleSource& dataset, LoaderOptions options)
    : impl_(std::make_unique<Impl>(dataset, std::move(options))) {}

Loader::~Loader() = default;

std::optional<BatchHandle> Loader::next() { return impl_->next(); }

int64_t Loader::batches_per_epoch() const { return impl_->nominal_batches; }

const LoaderOptions& Loader::options() const { return impl_->options; }

LoaderStats Loader::stats() const { return impl_->stats(); }

void Loader::record_sample_costs(bool on) { impl_->record_costs.store(on, std::memory_order_relaxed); }

std::vector<Loader::SampleCost> Loader::take_sample_costs() {
  std::lock_guard<std::mutex> lock(impl_->costs_mu);
  return std::exchange(impl_->costs, {});
}

}  // namespace pipebench
