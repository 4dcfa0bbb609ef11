// The end-to-end loop: the loader against the training step.
//
// BM_EndToEnd/<pipeline>/<baseline>/workers:<w>: the real loop, loader and step together,
//   one batch per iteration (--steps of them after a warm-up). In the same case, before
//   the timed loop: data_ms = the loader alone per batch (its workers' production rate
//   over --steps batches, and again over --steps batches after the loop: the mean of the
//   two, which bracket the loop in time; data_drift_pct = after against before, %;
//   loop_cpu_drift_pct = the workers' CPU per sample in the loop against alone, %),
//   compute_ms = the step on a resident batch. Counters (all ms
//   per batch unless stated): data_ms, compute_ms, step_ms (the measured loop, ending
//   with the accelerator idle, per step it could sustain: batches prefetched before the
//   loop started do not count as speed), bound_ms = the step model's predicted step
//   (model/step_model.h: from the per-sample costs the loader-alone windows timed, their
//   percentiles, costliest files and the prediction's p50 / p95 / p99, AU, stall and tail
//   share as bench/cases/sample_costs.h's counters; too few timed: max(data_ms, compute_ms) with
//   the callbacks), data_work_drift_pct (the windows' CPU per sample after against
//   before), au_pct, stall_pct, prediction_error_pct (model/bound.h), step_ms_ci (the 95 % t half width of
//   the loop's mean step over blocks of prefetch + 1 steps, step_ms_blocks of them; with
//   at least 2 blocks), workers, batch_size, and the CPU
//   counters of bench/run/loader_util.h (batch_bytes: what the step copies per batch, a
//   quarter of float32's for uint8). items_per_second = batch_size / step_ms. Real time.
//   The step gets the batch as collated (train_step.h): a uint8 batch with its deferred
//   normalize, done on the device by the cuda step and inside compute_ms by the emulated
//   one; compute_ms is always the float32 step on a resident batch. The loop's phases are
//   also timed with pipebench::RegionTimer (add_region_counters, bench/run/loader_util.h):
//   Batch, IO (waiting for the batch), Forward (the step call), Other (callbacks), Comm
//   (the step's collective under mpirun).
//   Under mpirun (world size > 1, bench/run/ranks.h): the same loop on every rank over its own
//   shard, the phases ending with an agreement so that a failing rank fails the case on
//   all; with --sync other than none each step ends with the step done and the collective
//   (pipeline/dist/sync_step.h), compute_ms then includes it (sync_ms); rank 0's case
//   carries the job's figures and every rank's (rank<k>_*), and, with one rank too, the
//   straggler prediction (straggler_*).
//
// BM_EndToEnd/<pipeline>/prefetch:<2P>|delivery:out_of_order/<baseline>/workers:<w>: the
//   tail fixes (bench/cases/tail_fixes.h), the same case with the loader changed, its own
//   counters plus fix_pred_step_ms (today's case's prediction of it), fix_prediction_error_pct,
//   prefetch_depth_batches and fix_host_mib.
#include <benchmark/benchmark.h>

#include <algorithm>

#include <cmath>

#include <functional>
#include <numeric>

#include "bench/run/benchmarks.h"
#include "bench/run/counter_put.h"
#include "device/cuda.h"
#include "model/catalogue.h"
#include "bench/run/loader_util.h"
#include "bench/run/machine.h"
#include "bench/run/ranks.h"
#include "bench/cases/dataset_costs.h"
#include "bench/cases/fix_prices.h"
#include "bench/cases/sample_costs.h"
#include "bench/cases/tail_fixes.h"
#include "pipeline/dist/dist.h"
#include "pipeline/dist/sync_step.h"
#include "pipeline/callbacks.h"
#include "bench/cases/what_if_candidates.h"
#include "model/bound.h"
#include "model/paired.h"
#include "measure/region_timer.h"
#include "measure/stage_timers.h"
#include "measure/trace.h"
#include "transforms/rng.h"

namespace pipebench::bench {
namespace {

// One BM_EndToEnd case, phase by phase. The same loop on every rank under mpirun
// (bench/run/ranks.h): phases end with an agreement (dist::agree), so a rank that fails (a bad
// file under --on-error=stop) fails the case on every rank, naming itself and the file,
// instead of leaving the others in a collective. With world > 1 and --sync other than none,
// each step ends with the step finished and the collective (SyncStep); compute_ms then
// includes the collective on a resident batch.
class EndToEndCase {
 public:
  EndToEndCase(benchmark::State& state, BenchContext& ctx, std::shared_ptr<const Pipeline> pipeline,
               std::string baseline, int workers, const std::vector<CallbackSpec>& callbacks,
               std::shared_ptr<PresizedCopy> presized, std::string case_name, const TailFixCase* fix)
      : state_(state), ctx_(ctx), c_(ctx.config()), pipeline_(std::move(pipeline)),
        baseline_(std::move(baseline)), workers_(workers), callbacks_(callbacks),
        presized_(std::move(presized)), case_name_(std::move(case_name)), fix_(fix),
        pricing_(ctx, {case_name_, fix, presized_, pipeline_.get()}),
        prefetch_(fix && fix->change.prefetch > 0 ? fix->change.prefetch : c_.prefetch),
        trace_(ctx.trace()), synced_(dist::world_size() > 1 && c_.sync != dist::SyncMode::kNone),
        delay_(TestDelay::from_env(prefetch_)) {}

  // 0. The step, the collective, the loader (warmed up), the callbacks.
  bool set_up() {
    return phase([&] {
      step_ = make_train_step(baseline_, c_.compute_ms);
      sync_ = std::make_unique<dist::SyncStep>(c_.sync, c_.grad_mib, c_.link);
      const SampleSource* source = nullptr;  // the run's dataset
      if (presized_) {
        const PresizedCopy::Ready* copy = presized_->get(ctx_);
        if (!copy) throw std::runtime_error(presized_->error());
        source = copy->dataset.get();
      }
      pricing_.probe();  // one thread, before the loader's workers start
      loader_ = make_loader(ctx_, pipeline_, workers_, /*stage_timers=*/true, source,
                            fix_ ? fix_->change : LoaderChange{});
      source_ = source ? source : &ctx_.loader_source();  // names the costliest files
      source_root_ = presized_ ? std::filesystem::path() : c_.data;
      if (trace_) trace_->name_thread("consumer");
      warm_up(ctx_, *loader_, nullptr);
      if (!callbacks_.empty()) extras_ = std::make_unique<CallbackRunner>(callbacks_, *step_);
    });
  }

  // 1. The loader alone. 2. The step on a resident batch (and the collective alone).
  // 3. Both together from steady state: refill / drain the prefetch queue first.
  bool measure_parts() {
    if (!phase([&] {
          data_ = measure_alone();
          const auto shape = pipeline_->output_shape();
          compute_ms_ = step_->measure_compute_ms(c_.batch, shape[0], shape[1], shape[2], kComputeMeasureSteps);
        }))
      return false;
    if (synced_) sync_ms_ = sync_->measure_ms(kComputeMeasureSteps);
    compute_ms_ += sync_ms_;
    return phase([&] { warm_up(ctx_, *loader_, step_.get()); });
  }

  // The timed loop: fetch, step, callbacks, the collective; its window and regions.
  bool run_loop() {
    dist::barrier();
    delay_.restart();
    window_ = std::make_unique<LoaderWindow>(*loader_, system_sampling(ctx_));
    loader_->record_sample_costs(true);  // which files the loop met (loop_work_drift)
    std::string error;
    step_starts_.reserve(static_cast<size_t>(state_.max_iterations) + 1);
    for (auto _ : state_) {
      step_starts_.push_back(now_ns());
      const auto batch_region = regions_.scope(Region::Batch);
      try {
        one_step();
      } catch (const std::exception& e) {
        error = e.what();
      }
      if (synced_) {
        // Every rank learns of a failure at the same step, then the step's collective.
        const dist::Agreement a = dist::agree(error.empty(), error);
        if (!a.ok()) {
          error = rank_failure(a);
          break;
        }
        step_->synchronize();
        TraceSpan span(trace_, dist::sync_mode_name(c_.sync), "step");
        const auto comm = regions_.scope(Region::Comm);
        const int64_t cpu0 = thread_cpu_ns();
        sync_wait_ms_ += sync_->run();
        sync_cpu_ms_ += (thread_cpu_ns() - cpu0) / 1e6;
      } else if (!error.empty()) {
        break;
      }
      // The last iteration waits for its step, so the timed region (and items_per_second)
      // ends with the accelerator idle, as step_ms does.
      // (state.iterations() is not updated inside a range-for loop: count here.)
      if (++done_ == state_.max_iterations) step_->synchronize();
    }
    step_->synchronize();
    step_starts_.push_back(now_ns());  // the end of the last step
    loader_->record_sample_costs(false);
    window_->finish(*loader_);
    loop_costs_ = loader_->take_sample_costs();
    // A failure without per-step agreement (one rank, or --sync=none) is agreed on here.
    if (!synced_) {
      const dist::Agreement a = dist::agree(error.empty(), error);
      if (!a.ok()) error = dist::world_size() > 1 ? rank_failure(a) : a.message;
    }
    if (!error.empty()) ctx_.fail_case(state_, error);
    return error.empty();
  }

  // 4. The loader alone again (A B A): data_ms and the straggler prediction's samples pool
  // the windows before and after the loop, which bracket it in time, so a machine whose
  // speed drifted during the case moves both halves, and data_drift_pct shows by how much.
  bool measure_after() {
    DataSamples after;
    if (!phase([&] { after = measure_alone(); })) return false;
    drift_pct_ = data_.data_ms > 0 ? 100.0 * (after.data_ms / data_.data_ms - 1.0) : 0.0;
    // The samples' own work after against before (thread CPU per sample): the part of the
    // drift that other images explain (a heavy-tailed dataset), not a slower machine.
    if (data_.sample_cpu_ms > 0 && after.sample_cpu_ms > 0)
      work_drift_pct_ = 100.0 * (after.sample_cpu_ms / data_.sample_cpu_ms - 1.0);
    data_.data_ms = (data_.data_ms + after.data_ms) / 2;  // the same number of batches each
    alone_cpu_ms_ = (data_.sample_cpu_ms + after.sample_cpu_ms) / 2;
    data_.per_batch_ms.insert(data_.per_batch_ms.end(), after.per_batch_ms.begin(), after.per_batch_ms.end());
    return true;
  }

  // The bound, AU and stall against the measured loop, the stages, regions and callbacks.
  void report() {
    // The steps the loop could sustain: those it ran, or fewer when it drew on batches
    // prefetched before it started (the workers produced less than it consumed).
    consumed_ = static_cast<double>(std::max<int64_t>(1, state_.iterations()));
    const double sustained = std::max(1.0, std::min(consumed_, window_->produced_batches(c_.batch)));
    const double step_ms = window_->wall_ms / sustained;
    items_ = std::llround(sustained * window_->mean_batch(c_.batch));
    state_.SetItemsProcessed(items_);
    // The prediction: the step model from the per-sample costs the loader-alone windows
    // timed (bench/cases/sample_costs.h), else from the parts (model/bound.h), with the callbacks.
    const TimedCosts costs = timed_costs(costs_, *source_, source_root_);
    // The dataset's costs (bench/cases/dataset_costs.h): the fit of the untimed files'
    // costs on their headers, on --data's files (not a presized copy's, not shards).
    const ImageFolder* folder = presized_ ? nullptr : ctx_.folder();
    const DatasetCosts dataset =
        folder && costs.enough()
            ? dataset_costs(folder->size(), (folder->size() + dist::world_size() - 1) / dist::world_size(), costs.file_ms,
                            [&](size_t i) { return ctx_.file_header(i); }, c_.seed)
            : DatasetCosts{};
    const CostPrediction predicted = predict(costs, dataset);
    bound_ = compute_bound(data_.data_ms, compute_ms_, step_ms, predicted.step.step_ms);
    put(state_, CounterId::kWorkers, workers_);
    put(state_, CounterId::kBatchSize, c_.batch);
    // The images a batch held as delivered (short batches: drop_last false, a dataset
    // smaller than a batch): what images/s and every per-batch figure rest on.
    put(state_, CounterId::kImagesPerBatch, window_->mean_batch(c_.batch));
    put(state_, CounterId::kDataMs, bound_.data_ms);
    put(state_, CounterId::kComputeMs, bound_.compute_ms);
    put(state_, CounterId::kStepMs, bound_.step_ms);
    put(state_, CounterId::kBoundMs, bound_.bound_ms);
    put(state_, CounterId::kAuPct, bound_.au_pct);
    put(state_, CounterId::kStallPct, bound_.stall_pct);
    put(state_, CounterId::kPredictionErrorPct, bound_.prediction_error_pct);
    put(state_, CounterId::kDataDriftPct, drift_pct_);
    if (work_drift_pct_) put(state_, CounterId::kDataWorkDriftPct, *work_drift_pct_);
    put_cost_counters(state_, costs, predicted, /*price_fixes=*/fix_ == nullptr);
    put_fit_counters(dataset);
    if (const model::CaseKey* key = ctx_.key_of(case_name_); costs.enough() && key && key->plain())
      ctx_.note_fix_prices(case_name_, {predicted.deep_prefetch_step_ms, predicted.out_of_order_step_ms, costs.file_ms,
                                        predicted.scale});  // the timed visits' level either way
    // How sure step_ms is: the steps' mean in blocks of prefetch + 1 (batch means: with a
    // prefetch queue consecutive steps are correlated), a 95 % t interval over the blocks
    // (model/paired.h); only with at least 2 blocks.
    std::vector<double> steps_ms;
    for (size_t i = 1; i < step_starts_.size(); ++i) steps_ms.push_back((step_starts_[i] - step_starts_[i - 1]) / 1e6);
    const auto blocks = model::block_means(steps_ms, static_cast<size_t>(prefetch_) + 1);
    if (blocks.size() >= 2) {
      put(state_, CounterId::kStepMsCi, model::mean_interval(blocks).half);
      put(state_, CounterId::kStepMsBlocks, static_cast<double>(blocks.size()));
    }
    if (steps_ms.size() >= 2) {  // the tail of the steps, which the mean and its interval hide
      std::sort(steps_ms.begin(), steps_ms.end());
      put(state_, CounterId::kStepP99Ms, region_percentile(steps_ms, 0.99));
    }
    if (synced_) {
      put(state_, CounterId::kSyncMs, sync_ms_);
      put(state_, CounterId::kSyncCpuMs, sync_cpu_ms_ / consumed_);
      if (c_.sync == dist::SyncMode::kEmulated) put(state_, CounterId::kSyncModelMs, sync_->modelled_ms());
    }
    add_stage_counters(ctx_, state_, *window_);  // the loop's window: sample_cpu_ms is the loop's
    // The workers' CPU per sample in the loader-alone windows, where data_ms comes from:
    // what the report's physical floor for data_ms must be made of (the loop's is higher
    // under contention: photos-full w2, 39.0 ms in the loop, 36 alone).
    if (alone_cpu_ms_ > 0) put(state_, CounterId::kAloneSampleCpuMs, alone_cpu_ms_);
    add_region_counters(ctx_, state_, regions_);
    // The workers' CPU per sample in the loop against alone (the prediction's factor): idle
    // workers resuming on colder caches, or a busier machine during the loop (which
    // data_drift_pct cannot see).
    if (const auto factor = loop_cost_factor()) {
      loop_cpu_drift_pct_ = 100.0 * (*factor - 1.0);
      put(state_, CounterId::kLoopCpuDriftPct, loop_cpu_drift_pct_);
      if (const auto work = loop_work_drift_pct(costs)) put(state_, CounterId::kLoopWorkDriftPct, *work);
    }
    if (extras_) report_callbacks();
    pricing_.report(state_, bound_.step_ms, prefetch_, shape_of(), loop_shape());
  }

  // Every rank's figures to rank 0 (collective), which writes the global and per-rank ones.
  void report_ranks() {
    const auto counter = [&](CounterId id) { return put_value(state_, id); };
    RankFigures f;
    f.data_ms = bound_.data_ms;
    f.compute_ms = bound_.compute_ms;
    f.step_ms = bound_.step_ms;
    f.au_pct = bound_.au_pct;
    f.images_per_second = bound_.step_ms > 0 ? window_->mean_batch(c_.batch) * 1000.0 / bound_.step_ms : 0;
    f.consumer_wait_ms = counter(CounterId::kConsumerWaitMs);
    f.worker_wait_ms = counter(CounterId::kWorkerWaitMs);
    f.sync_wait_ms = sync_wait_ms_ / consumed_;
    f.sync_cpu_ms = sync_cpu_ms_ / consumed_;
    f.read_ms = counter(CounterId::kReadMs);
    f.decode_ms = counter(CounterId::kDecodeMs);
    f.transform_ms = counter(CounterId::kTransformMs);
    f.sample_cpu_ms = counter(CounterId::kSampleCpuMs);
    f.items = static_cast<double>(items_);
    f.data_drift_pct = drift_pct_;
    f.loop_cpu_drift_pct = loop_cpu_drift_pct_;
    try {
      add_rank_counters(state_, f, data_.per_batch_ms, prefetch_, workers_);
    } catch (const std::exception& e) {  // the prediction's input checks (rank 0 only)
      ctx_.fail_case(state_, e.what());
    }
  }

 private:
  // One phase of local work; false (the case failed on some rank, every rank told) when it
  // threw here or anywhere else.
  bool phase(const std::function<void()>& work) {
    std::string error;
    try {
      work();
    } catch (const std::exception& e) {
      error = e.what();
    }
    const dist::Agreement a = dist::agree(error.empty(), error);
    if (!a.ok()) ctx_.fail_case(state_, dist::world_size() > 1 ? rank_failure(a) : a.message);
    return a.ok();
  }

  // The loader alone, in steady state, with each batch's arrival interval; every rank at
  // the same time, each loading until all have measured. Inside phase() (it throws).
  DataSamples measure_alone() {
    dist::barrier();
    std::string failed;
    DataSamples d;
    try {
      // As many batches as the loop times (its iterations: bench/run/case_budget.h).
      loader_->record_sample_costs(true);  // each sample's cost: the step model's distribution
      d = measure_data(*loader_, static_cast<int>(state_.max_iterations), c_.batch, prefetch_, delay_);
      loader_->record_sample_costs(false);
      const auto timed = loader_->take_sample_costs();
      costs_.insert(costs_.end(), timed.begin(), timed.end());
    } catch (const std::exception& e) {
      failed = e.what();
    }
    load_until_every_rank_measured(*loader_, delay_);  // collective
    if (!failed.empty()) throw std::runtime_error(failed);
    return d;
  }

  // One step of the loop (inside the Batch region): fetch, hand to the step, callbacks.
  void one_step() {
    std::optional<BatchHandle> batch;
    {
      const auto io = regions_.scope(Region::IO);
      batch = loader_->next();
      if (!batch) throw std::runtime_error("the loader ran out of batches");
      delay_.apply();
    }
    const Batch& b = **batch;
    {
      const auto forward = regions_.scope(Region::Forward);
      // On the consumer's track: handing the batch to the step (waiting for the previous
      // step, and the H2D copy for cuda). On the "accelerator" track: the step itself,
      // drawn as compute_ms from its start (exact for emulated, the resident-batch mean
      // for cuda).
      TraceSpan span(trace_, "submit_step", "step");
      step_->step(step_input(b));
    }
    if (trace_) {
      const int64_t start = now_ns();
      trace_->span_on(trace_->track("accelerator"), "train_step", "step", start,
                      start + static_cast<int64_t>(compute_ms_ * 1e6));
    }
    batch->release();
    if (extras_) {
      TraceSpan span(trace_, "callbacks", "step");
      const auto other = regions_.scope(Region::Other);
      extras_->after_step(done_);
      if (done_ + 1 == state_.max_iterations) extras_->drain();  // the loop ends with them done
    }
  }

  // The step model's prediction of the loop: from the timed costs (their level set by the
  // measured data_ms, model/bound.h predict_from_costs) when enough were timed.
  CostPrediction predict(const TimedCosts& costs, const DatasetCosts& dataset) const {
    CostPrediction p;
    if (!costs.enough()) {
      p.step = predict_from_parts(data_.data_ms, compute_ms_, prefetch_, model_callbacks());
      return p;
    }
    const model::LoaderShape shape = shape_of();
    model::LoopShape loop;
    loop.compute_ms = compute_ms_;
    loop.callbacks = model_callbacks();
    // The timed visits at the level they were measured at; or, where the windows timed too
    // few of the files, the dataset's costs at that same level (the visits' scale), so that
    // the files the windows missed can move the mean. The tail share over the costliest 1 %
    // (at least one).
    const auto tail = [](const std::vector<double>& v) {
      return std::max(1, static_cast<int>(std::lround(0.01 * static_cast<double>(v.size()))));
    };
    const double factor = loop_cost_factor().value_or(1.0);
    if (dataset.sample_ms.empty())
      return predict_from_costs(costs.visit_ms, shape, data_.data_ms, loop, tail(costs.visit_ms), factor);
    return predict_at_scale(dataset.sample_ms, shape, cost_scale(costs.visit_ms, shape, data_.data_ms), loop,
                            tail(dataset.sample_ms), factor);
  }

  // This case's loader as the step model takes it.
  model::LoaderShape shape_of() const {
    model::LoaderShape shape;
    shape.batch = c_.batch;
    shape.workers = workers_;
    shape.prefetch_depth = prefetch_;
    if (fix_ && !fix_->change.in_order) shape.delivery = model::Delivery::kOutOfOrder;
    return shape;
  }

  // The cost fit's figures (bench/cases/dataset_costs.h), where it was made.
  void put_fit_counters(const DatasetCosts& d) {
    if (!d.fits.pooled) return;
    put(state_, CounterId::kCostFitFiles, d.fit_files);
    put(state_, CounterId::kCostFitR2, d.fits.pooled->r2);
    put(state_, CounterId::kCostFitMsPerMp, d.fits.pooled->ms_per_megapixel);
    put(state_, CounterId::kCostsFittedPct, d.fitted_pct);
  }

  // The workers' CPU per sample in the loop over the loader-alone windows' (model/bound.h
  // predict_from_costs: in the loop they idle while the prefetch queue is full and resume on
  // colder caches); nullopt when either was not measured (stage timers off, nothing produced).
  std::optional<double> loop_cost_factor() const {
    const double loop_cpu_ms = window_->sample_cpu_ms();
    if (!(loop_cpu_ms > 0) || !(alone_cpu_ms_ > 0)) return std::nullopt;
    return loop_cpu_ms / alone_cpu_ms_;
  }

  // How much costlier the files the loop met were than the loader-alone windows' visits, %,
  // each loop sample at its file's mean cost in those windows (heterogeneity, not the
  // machine: on the mix a loop window that met fewer large originals read 9-15 % less CPU per
  // sample); nullopt when under half of the loop's samples were timed alone (a large dataset).
  // The costs are the windows' wall time per sample (`alone`: timed_costs of them), used
  // here only to weigh the files against each other: a ratio, set against
  // loop_cpu_drift_pct's CPU.
  std::optional<double> loop_work_drift_pct(const TimedCosts& alone) const {
    if (alone.visit_ms.empty() || loop_costs_.empty()) return std::nullopt;
    double loop_ms = 0;
    size_t matched = 0;
    for (const auto& s : loop_costs_) {
      const auto it = s.index < 0 ? alone.file_ms.end() : alone.file_ms.find(static_cast<size_t>(s.index));
      if (it == alone.file_ms.end()) continue;
      loop_ms += it->second;
      ++matched;
    }
    const double alone_mean = std::accumulate(alone.visit_ms.begin(), alone.visit_ms.end(), 0.0) /
                              static_cast<double>(alone.visit_ms.size());
    if (2 * matched < loop_costs_.size() || !(alone_mean > 0)) return std::nullopt;
    return 100.0 * (loop_ms / static_cast<double>(matched) / alone_mean - 1.0);
  }

  // The callbacks as the step model takes them, from what this run recorded (callback:<label>_ms
  // per step x every = per run, callback:<label>_every): a sync one's work and an async
  // one's hand-off are time on the loop's thread; metric's time there is its wait for the
  // step, which the model makes itself (waits_for_step, no work of its own).
  std::vector<model::Callback> model_callbacks() const {
    std::vector<model::Callback> out;
    if (!extras_) return out;
    for (size_t i = 0; i < callbacks_.size(); ++i) {
      const bool metric = callbacks_[i].kind == "metric";
      const double per_step = extras_->thread_ms()[i] / consumed_;
      out.push_back({metric ? 0.0 : per_step * callbacks_[i].every, callbacks_[i].every, false, metric});
    }
    return out;
  }

  // The loop as the step model takes it, for a fix's price.
  model::LoopShape loop_shape() const {
    model::LoopShape loop;
    loop.compute_ms = compute_ms_;
    loop.callbacks = model_callbacks();
    return loop;
  }

  // ms per step on the loop's thread: the work of a sync callback, the enqueue (and any
  // wait for room in the queue) of an async one.
  void report_callbacks() {
    double total = 0;
    bool all_async = true;
    for (size_t i = 0; i < callbacks_.size(); ++i) {
      const double ms = extras_->thread_ms()[i] / consumed_;
      put(state_, CounterId::kCallbackMs, callbacks_[i].label(), ms);
      put(state_, CounterId::kCallbackEvery, callbacks_[i].label(), callbacks_[i].every);
      total += ms;
      all_async = all_async && callbacks_[i].async;
    }
    put(state_, CounterId::kCallbacksMs, total);
    put(state_, CounterId::kCallbacksPct, 100.0 * total / std::max(1e-9, bound_.step_ms));
    put(state_, CounterId::kCallbacksAsync, all_async ? 1 : 0);
  }

  benchmark::State& state_;
  BenchContext& ctx_;
  const BenchConfig& c_;
  const std::shared_ptr<const Pipeline> pipeline_;
  const std::string baseline_;
  const int workers_;
  const std::vector<CallbackSpec>& callbacks_;
  const std::shared_ptr<PresizedCopy> presized_;
  const std::string case_name_;
  const TailFixCase* fix_;  // a tail fix's case (bench/cases/tail_fixes.h), else null: today's loader
  FixPricing pricing_;      // a fix's price against its measured step (bench/cases/fix_prices.h)
  const int prefetch_;      // the loader's prefetch depth: --prefetch, or the fix's
  TraceRecorder* trace_;
  const bool synced_;
  TestDelay delay_;
  std::unique_ptr<TrainStep> step_;
  std::unique_ptr<Loader> loader_;
  std::unique_ptr<dist::SyncStep> sync_;
  std::unique_ptr<CallbackRunner> extras_;
  std::unique_ptr<LoaderWindow> window_;
  RegionTimer regions_;  // the loop's phases: Batch, IO, Forward (the step call), Other, Comm
  DataSamples data_;
  double compute_ms_ = 0, sync_ms_ = 0, sync_wait_ms_ = 0, sync_cpu_ms_ = 0;
  double drift_pct_ = 0, alone_cpu_ms_ = 0, loop_cpu_drift_pct_ = 0, consumed_ = 1;
  std::optional<double> work_drift_pct_;
  const SampleSource* source_ = nullptr;
  std::filesystem::path source_root_;  // the costliest files are named under it
  std::vector<Loader::SampleCost> costs_;  // the loader-alone windows' per-sample costs
  std::vector<Loader::SampleCost> loop_costs_;  // the loop window's (their files: loop_work_drift_pct)
  benchmark::IterationCount done_ = 0;
  std::vector<int64_t> step_starts_;  // now_ns() at each step's start, then the loop's end
  int64_t items_ = 0;
  Bound bound_;
};

void BM_EndToEnd(benchmark::State& state, BenchContext& ctx,
                 const std::shared_ptr<const Pipeline>& pipeline, const std::string& baseline,
                 int workers, const std::string& case_name,
                 const std::vector<CallbackSpec>& callbacks,
                 const std::shared_ptr<PresizedCopy>& presized, const std::optional<TailFixCase>& fix) {
  const CaseMarker marker(ctx.trace(), case_name);
  EndToEndCase e(state, ctx, pipeline, baseline, workers, callbacks, presized, case_name,
                 fix ? &*fix : nullptr);
  if (!e.set_up() || !e.measure_parts() || !e.run_loop() || !e.measure_after()) return;
  e.report();
  e.report_ranks();
}

}  // namespace

void register_end_to_end_benchmarks(BenchContext& ctx) {
  const auto& c = ctx.config();
  // BM_EndToEnd/<pipeline>[/<kind>:<param>]/<baseline>/workers:<w>[/callbacks:<set>]
  const auto key = [&](int w, const std::string& kind = "", const std::string& param = "",
                       const std::vector<std::string>& callbacks = {}) {
    return model::end_to_end_case(c.pipeline->name(), c.baseline, w, kind, param, callbacks);
  };
  const auto add = [&](const model::CaseKey& k, const std::shared_ptr<const Pipeline>& p,
                       const std::vector<CallbackSpec>& callbacks = {},
                       const std::shared_ptr<PresizedCopy>& presized = nullptr,
                       const std::optional<TailFixCase>& fix = std::nullopt) {
    // Three windows (the loader alone before, the loop, the loader alone after) and two
    // warm-ups (bench/run/case_budget.h), each filling the case's own prefetch queue.
    CaseBudget budget = ctx.budget();
    if (fix && fix->change.prefetch > 0) budget.prefetch = fix->change.prefetch;
    register_case(ctx, k, BM_EndToEnd, p, c.baseline, k.workers, k.name(), callbacks, presized, fix)
        ->UseRealTime()
        ->Iterations(budget.steps(k.workers, 3, 2))
        ->Unit(benchmark::kMillisecond);
  };
  for (int w : c.workers) add(key(w), c.pipeline);
  // The fixes applied for real (issue 8, "the check"): the pipeline with the ROI /
  // DCT-scaled decode planner, and the pipeline on the presized copy of the round, end to
  // end at every swept count within the cores (the table prices fixes at the largest; the
  // recommendation may ask for fewer), so pipebench-report can set each one's predicted
  // step against the measured one. On slow batches, at the table's count only: where the
  // plan forecasts today's case at a count to take more than twice its budget even at its
  // fewest batches (large originals: photos-full's 44 images of up to 5120 x 2880 at one
  // worker, about 30 s for an 8 s budget), a fix's case there would too, and the check at
  // the table's count is the one the table's prices rest on.
  // The cores the run may use (affinity, cgroup quota), as the report's table counts them.
  const int cores = c.whole_cores();
  const int at = ctx.table_workers();
  if (at == 0 || c.quick) return;
  const CaseBudget& plan = ctx.budget();
  std::vector<int> fix_workers;
  for (int w : c.workers)
    if (w <= cores && (w == at || plan.within(w, 3, 2, plan.steps(w, 3, 2), 2.0)))
      fix_workers.push_back(w);
  for (const auto& cand : what_if_candidates(*c.pipeline)) {
    const model::CandidateKind* kind = model::find_candidate(cand.kind);
    if (kind == nullptr || !kind->end_to_end) continue;
    for (int w : fix_workers) add(key(w, cand.kind, cand.param), cand.pipeline);
  }
  // The large-only copy is a tail fix: at the table's count only, as the loader's are.
  for (const auto& copy : ctx.presized_copies())
    for (int w : fix_workers)
      if (!copy->large() || w == at) add(model::presized(key(w), copy->shorter_side(), copy->kind()), c.pipeline, {}, copy);
  // The tail fixes (issue 34 item 4, bench/cases/tail_fixes.h): at the table's count only, after
  // today's case there, whose timed costs price them before they run.
  for (const TailFixCase& fix : plan_tail_fixes(ctx, key(at))) add(fix.key, c.pipeline, {}, nullptr, fix);
  // Training extras (issue 10): the loop with the --callback set as given, and with each of
  // its callbacks that can be async made async, at the same count: what async saves,
  // measured. Case names end in /callbacks:<label>+<label>...
  std::vector<CallbackSpec> as_async = c.callbacks;
  for (auto& cb : as_async)
    if (cb.kind != "metric") cb.async = true;
  const auto labels_of = [&](const std::vector<CallbackSpec>& set) {
    std::vector<std::string> labels;
    for (const auto& cb : set) labels.push_back(cb.label());
    return labels;
  };
  add(key(at, "", "", labels_of(c.callbacks)), c.pipeline, c.callbacks);
  if (labels_of(as_async) != labels_of(c.callbacks))
    add(key(at, "", "", labels_of(as_async)), c.pipeline, as_async);
}

}  // namespace pipebench::bench
