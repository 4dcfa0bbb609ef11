#include "bench/run/loader_util.h"

#include <stdexcept>

#include "bench/run/counter_put.h"
#include "bench/run/machine.h"
#include "pipeline/dist/dist.h"
#include "measure/trace.h"

namespace pipebench::bench {

std::unique_ptr<Loader> make_loader(BenchContext& ctx, const std::shared_ptr<const Pipeline>& pipeline,
                                    int workers, bool stage_timers, const SampleSource* source,
                                    const LoaderChange& change) {
  const auto& c = ctx.config();
  LoaderOptions o;
  o.pipeline = pipeline;
  o.batch_size = c.batch;
  o.workers = workers;
  o.prefetch_depth_batches = change.prefetch > 0 ? change.prefetch : c.prefetch;
  o.in_order = change.in_order;
  o.sampler.shuffle = true;
  o.sampler.seed = c.seed;
  const SampleSource& src = source ? *source : ctx.loader_source();
  o.sampler.drop_last = ctx.drop_last(&src);  // fixed batch shape, as a training loop wants
  // Under mpirun each rank loads its own shard (DistributedSampler semantics, sampler.h).
  o.sampler.rank = dist::rank();
  o.sampler.world_size = dist::world_size();
  o.on_error = c.on_error;
  o.epochs = 1 << 20;          // never runs out within a benchmark
  o.memory = is_cuda_baseline(c.baseline) ? MemoryKind::kPinned : MemoryKind::kPageable;
  o.stage_timers = stage_timers;
  o.trace = stage_timers ? ctx.trace() : nullptr;  // a trace reads the clocks too
  // A warm case after a cold one would start cold: read the dataset in once first, when
  // something may have evicted it and it fits in half the available memory (a larger one
  // cannot be warm; the report says so). The packed copy is another dataset: not tracked.
  if (const auto* stored = dynamic_cast<const StoredSource*>(&src); stored && &stored->inner() == &ctx.disk()) {
    if (stored->options().cache == CacheMode::kCold) {
      ctx.note_evicted();
    } else if (static_cast<double>(stored->sample_bytes()) < 0.5 * available_memory_bytes() &&
               ctx.take_evicted()) {
      stored->fill_cache();
    }
  }
  return std::make_unique<Loader>(src, o);
}

bool next_batch(BenchContext& ctx, benchmark::State& state, Loader& loader,
                std::optional<BatchHandle>& batch) {
  try {
    batch = loader.next();
  } catch (const std::exception& e) {
    ctx.fail_case(state, e.what());
    return false;
  }
  if (!batch) {
    ctx.fail_case(state, "the loader ran out of batches");
    return false;
  }
  return true;
}

SystemSampling system_sampling(const BenchContext& ctx) {
  return {static_cast<double>(ctx.config().system_sample_hz), ctx.config().data.string()};
}

LoaderWindow::LoaderWindow(const Loader& loader, const SystemSampling& sampling)
    : before(loader.stats()), format(loader.options().pipeline->output()) {
  if (sampling.rate_hz > 0) {
    sampler_ = std::make_unique<SystemSampler>(sampling.dataset);
    sampler_->start(sampling.rate_hz);
  }
  t0_ = now_ns();
  cpu_ = std::make_unique<RoleCpuWindow>(sampler_.get());
}

void LoaderWindow::finish(const Loader& loader) {
  wall_ms = (now_ns() - t0_) / 1e6;
  const RoleCpu cpu = cpu_->finish();  // before the sampler stops: its clock is read live
  process_cpu_ms = cpu.process_ns / 1e6;
  consumer_cpu_ms = cpu.consumer_ns / 1e6;
  workers_cpu_ms = cpu.workers_ns / 1e6;
  after = loader.stats();
  produced = after.processed - before.processed;
  if (sampler_) {
    system_samples = sampler_->stop();
    sampler_cpu_ms = sampler_->thread_cpu_ns() / 1e6;
    system = summarize(system_samples);
    sampler_.reset();
  }
}

CaseMarker::CaseMarker(TraceRecorder* trace, const std::string& case_name)
    : trace_(trace), name_(trace ? trace->intern(case_name) : nullptr), start_ns_(now_ns()) {}

CaseMarker::~CaseMarker() {
  if (trace_) trace_->span_on(trace_->track("benchmark cases"), name_, "case", start_ns_, now_ns());
}

double LoaderWindow::sample_cpu_ms() const {
  const int64_t cpu_ns = after.sample_cpu_ns - before.sample_cpu_ns;
  return produced > 0 && cpu_ns > 0 ? cpu_ns / 1e6 / static_cast<double>(produced) : 0.0;
}

double LoaderWindow::mean_batch(int nominal) const {
  const int64_t batches = after.batches - before.batches;
  return batches > 0 ? static_cast<double>(after.samples - before.samples) / batches : nominal;
}

double ms_per_batch(Loader& loader, int batches, int batch_size, int64_t* samples) {
  LoaderWindow w(loader);
  for (int i = 0; i < batches; ++i)
    if (!loader.next()) throw std::runtime_error("the loader ran out of batches");
  w.finish(loader);
  if (samples) *samples += w.produced;
  return w.wall_ms / std::max(1e-9, w.produced_batches(batch_size));
}

StepInput step_input(const Batch& b) {
  StepInput in;
  in.data = b.host_data();
  in.n = b.size;
  in.c = b.channels;
  in.h = b.height;
  in.w = b.width;
  in.dtype = b.format.dtype;
  in.layout = b.format.layout;
  in.normalize = b.normalize;
  in.flips = b.flips;
  in.mixes = b.mixes;
  return in;
}

void warm_up(const BenchContext&, Loader& loader, TrainStep* step) {
  for (int i = 0; i <= loader.options().prefetch_depth_batches; ++i) {
    auto b = loader.next();
    if (!b) return;
    if (step) step->step(step_input(**b));
  }
  if (step) step->synchronize();
}

namespace {

// The system sampler's summary as counters (model/counters.h, family kSystem); a metric the machine does
// not expose (no block device under the dataset: tmpfs, overlay) has no counter.
void add_system_counters(BenchContext& ctx, benchmark::State& state, const LoaderWindow& w) {
  if (!w.system) return;
  const SystemSummary& s = *w.system;
  put(state, CounterId::kCpuUtilPctMean, s.cpu_util_pct_mean);
  put(state, CounterId::kCpuUtilPctMax, s.cpu_util_pct_max);
  put(state, CounterId::kCpuBusyCoresMean, s.cpu_busy_cores_mean);
  const auto put_some = [&](CounterId id, const auto& v) {
    if (v) put(state, id, static_cast<double>(*v));
  };
  put_some(CounterId::kRssMibMax, s.rss_mib_max);
  put_some(CounterId::kMemAvailableMibMin, s.mem_available_mib_min);
  put_some(CounterId::kDiskReadMibPerS, s.disk_read_mib_per_s);
  put_some(CounterId::kNetRxMibPerS, s.net_rx_mib_per_s);  // every interface but lo; then each
  put_some(CounterId::kNetTxMibPerS, s.net_tx_mib_per_s);
  for (const auto& [iface, rx, tx] : s.net_per_iface) {
    put(state, CounterId::kNetIfaceRxMibPerS, iface, rx);
    put(state, CounterId::kNetIfaceTxMibPerS, iface, tx);
  }
  put_some(CounterId::kDiskReadIops, s.disk_read_iops);
  put_some(CounterId::kProcessReadMibPerS, s.process_read_mib_per_s);
  put(state, CounterId::kCpuUserPctMean, s.cpu_user_pct_mean);
  put(state, CounterId::kCpuSystemPctMean, s.cpu_system_pct_mean);
  if (!s.core_util_pct_mean.empty()) put(state, CounterId::kCpuCoreUtilPctMax, s.cpu_core_util_pct_max);
  put_some(CounterId::kVoluntarySwitchesPerS, s.voluntary_switches_per_s);
  put_some(CounterId::kInvoluntarySwitchesPerS, s.involuntary_switches_per_s);
  put_some(CounterId::kContextSwitchesPerS, s.context_switches_per_s);
  put_some(CounterId::kMajorFaults, s.major_faults);
  put_some(CounterId::kGpuUtilPctMean, s.gpu_util_pct_mean);
  put_some(CounterId::kGpuUtilPctMax, s.gpu_util_pct_max);
  put_some(CounterId::kGpuMemUsedMibMax, s.gpu_mem_used_mib_max);
  put_some(CounterId::kGpuPcieRxMibPerS, s.gpu_pcie_rx_mib_per_s);
  put_some(CounterId::kGpuPcieTxMibPerS, s.gpu_pcie_tx_mib_per_s);
  put_some(CounterId::kGpuSmClockMhzMean, s.gpu_sm_clock_mhz_mean);
  if (ctx.trace()) trace_system_samples(*ctx.trace(), w.system_samples);
  ctx.system_series().add(ctx.current_case(), w.system_samples);
}

}  // namespace

void add_stage_counters(BenchContext& ctx, benchmark::State& state, const LoaderWindow& w) {
  add_system_counters(ctx, state, w);
  const LoaderStats& before = w.before;
  const LoaderStats& after = w.after;
  const double samples = std::max<int64_t>(1, after.samples - before.samples);
  const double batches = std::max<int64_t>(1, after.batches - before.batches);
  ctx.bad_files().record_skipped(after.skipped_samples);
  for (int s = 0; s < static_cast<int>(Stage::kCount); ++s) {
    // No copy, no batch operators, collate in place: no counter rather than a 0 that
    // reads as "free".
    const Stage stage = static_cast<Stage>(s);
    if (stage != Stage::kRead && stage != Stage::kDecode && stage != Stage::kTransform &&
        after.stage_ns[s] == before.stage_ns[s])
      continue;
    put(state, model::stage_counter(static_cast<size_t>(s)), (after.stage_ns[s] - before.stage_ns[s]) / 1e6 / samples);
  }
  // Per-operator timers: op:<step>_ms per sample, and op:<step>_pct of the sample's time.
  double sample_ns = 0;
  for (int s = 0; s < static_cast<int>(Stage::kH2D); ++s) sample_ns += after.stage_ns[s] - before.stage_ns[s];
  for (size_t k = 0; k < after.step_labels.size() && k < before.step_ns.size(); ++k) {
    const double ns = static_cast<double>(after.step_ns[k] - before.step_ns[k]);
    put(state, CounterId::kOpMs, after.step_labels[k], ns / 1e6 / samples);
    if (sample_ns > 0) put(state, CounterId::kOpPct, after.step_labels[k], 100.0 * ns / sample_ns);
  }
  // CPU: the workers' thread CPU per sample against the wall time of the same stages
  // (read, decode, transform, and collate when the worker copies the sample).
  int64_t wall_ns = 0;
  for (Stage st : {Stage::kRead, Stage::kDecode, Stage::kTransform, Stage::kCollate})
    wall_ns += after.stage_ns[static_cast<int>(st)] - before.stage_ns[static_cast<int>(st)];
  if (const double cpu_ms = w.sample_cpu_ms(); cpu_ms > 0) {
    put(state, CounterId::kSampleCpuMs, cpu_ms);
    put(state, CounterId::kPreemptedMs, std::max(0.0, wall_ns / 1e6 / static_cast<double>(w.produced) - cpu_ms));
  }
  const int batch_size = ctx.config().batch;
  const SampleFormat& format = w.format;
  put(state, CounterId::kBatchBytes, static_cast<double>(format.bytes()) * batch_size);
  put(state, CounterId::kBatchUint8, format.dtype == SampleDtype::kUint8 ? 1 : 0);
  if (w.produced > 0) put(state, CounterId::kWallUsPerImage, w.wall_ms * 1e3 / static_cast<double>(w.produced));
  const double produced_batches = std::max(1e-9, w.produced_batches(batch_size));
  put(state, CounterId::kProcessCpuMs, w.process_cpu_ms / produced_batches);
  put(state, CounterId::kConsumerCpuMs, w.consumer_cpu_ms / produced_batches);
  put(state, CounterId::kWorkersCpuMs, w.workers_cpu_ms / produced_batches);
  if (w.wall_ms > 0) put(state, CounterId::kCpuCoresUsed, w.process_cpu_ms / w.wall_ms);
  put(state, CounterId::kConsumerWaitMs, (after.consumer_wait_ns - before.consumer_wait_ns) / 1e6 / batches);
  put(state, CounterId::kWorkerWaitMs, (after.worker_wait_ns - before.worker_wait_ns) / 1e6 / batches);
}

void add_region_counters(BenchContext& ctx, benchmark::State& state, RegionTimer& regions) {
  for (const RegionStats& s : regions.stats()) {
    put(state, CounterId::kRegionMs, s.key, s.mean_ms);
    put(state, CounterId::kRegionP99Ms, s.key, s.p99_ms);
  }
  if (ctx.trace()) regions.write_trace(*ctx.trace());
}

}  // namespace pipebench::bench
