// The step model's simulation (model/step_model.h): the loader of pipeline/loader.cpp and
// the loop of bench/cases/end_to_end_bench.cpp, replayed event by event. The events need no
// general event queue: batches are dispatched in order, each only after the release of
// the batch depth places before it, so the loop can be advanced one step at a time, each
// rank's loader dispatching the batches the previous steps' releases allow and its
// workers taking the queued samples first in, first out (a heap of their free times).
#include "model/step_model.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace pipebench::model {
namespace {

[[noreturn]] void bad(const std::string& what) {
  throw std::invalid_argument("step model: " + what);
}

void require_ms(const std::string& name, double ms) {
  if (!std::isfinite(ms) || ms < 0) bad(name + " must be a finite ms >= 0, got " + std::to_string(ms));
}

void require_count(const std::string& name, int64_t n) {
  if (n < 1) bad(name + " must be >= 1, got " + std::to_string(n));
}

void require_costs(const std::string& name, const std::vector<double>& costs) {
  if (costs.empty()) bad(name + " is empty: no per-sample costs");
  for (size_t i = 0; i < costs.size(); ++i) require_ms(name + "[" + std::to_string(i) + "]", costs[i]);
}

void validate_loader(const LoaderShape& l) {
  require_count("loader.batch", l.batch);
  require_count("loader.workers", l.workers);
  require_count("loader.prefetch_depth", l.prefetch_depth);
  if (!std::isfinite(l.cores) || l.cores < 0)
    bad("loader.cores must be a finite count >= 0 (0: enough), got " + std::to_string(l.cores));
  if (!std::isfinite(l.loop_cpu_share) || l.loop_cpu_share < 0)
    bad("loader.loop_cpu_share must be a finite share >= 0, got " + std::to_string(l.loop_cpu_share));
  if (l.cores > 0 && l.loop_cpu_share >= l.cores)
    bad("loader.loop_cpu_share (" + std::to_string(l.loop_cpu_share) +
        ") leaves the workers no core of loader.cores (" + std::to_string(l.cores) + ")");
  require_ms("loader.batch_ms", l.batch_ms);
  require_ms("loader.deliver_ms", l.deliver_ms);
}

void validate_options(const SimOptions& o) {
  if (o.steps < 0) bad("options.steps must be >= 0 (0: automatic), got " + std::to_string(o.steps));
  if (o.warmup_steps < -1)
    bad("options.warmup_steps must be >= 0 (-1: automatic), got " + std::to_string(o.warmup_steps));
  require_count("options.block", o.block);
}

void validate(const StepModelInput& in, const SimOptions& o) {
  validate_loader(in.loader);
  validate_options(o);
  require_ms("loop.compute_ms", in.loop.compute_ms);
  require_count("loop.ranks", in.loop.ranks);
  for (size_t i = 0; i < in.loop.callbacks.size(); ++i) {
    const Callback& c = in.loop.callbacks[i];
    const std::string name = "loop.callbacks[" + std::to_string(i) + "]";
    require_ms(name + ".ms", c.ms);
    require_count(name + ".every", c.every);
    if (c.async && c.waits_for_step) bad(name + " is async and waits_for_step: only a sync one can wait");
  }
  if (in.rank_sample_ms.empty()) {
    require_costs("sample_ms", in.sample_ms);
    return;
  }
  if (in.rank_sample_ms.size() != static_cast<size_t>(in.loop.ranks))
    bad("rank_sample_ms has " + std::to_string(in.rank_sample_ms.size()) +
        " vectors for loop.ranks = " + std::to_string(in.loop.ranks) + " (one per rank, or none)");
  for (size_t r = 0; r < in.rank_sample_ms.size(); ++r)
    require_costs("rank_sample_ms[" + std::to_string(r) + "]", in.rank_sample_ms[r]);
}

const std::vector<double>& costs_of(const StepModelInput& in, int rank) {
  return in.rank_sample_ms.empty() ? in.sample_ms : in.rank_sample_ms[static_cast<size_t>(rank)];
}

// The costs in the order the simulated sampler meets them (SimOptions::order).
class CostStream {
 public:
  CostStream(const std::vector<double>& costs, const SimOptions& o, uint64_t rank)
      : costs_(costs), order_(o.order),
        block_(std::min(static_cast<size_t>(o.block), costs.size())) {
    std::seed_seq seq{static_cast<uint32_t>(o.seed), static_cast<uint32_t>(o.seed >> 32),
                      static_cast<uint32_t>(rank), static_cast<uint32_t>(rank >> 32)};
    rng_.seed(seq);
  }

  double next() {
    switch (order_) {
      case CostOrder::kReplay:
        if (at_ == costs_.size()) at_ = 0;
        return costs_[at_++];
      case CostOrder::kShuffle:
        if (at_ == perm_.size()) reshuffle();
        return costs_[perm_[at_++]];
      case CostOrder::kResample:
        break;
    }
    if (left_ == 0) {
      std::uniform_int_distribution<size_t> start(0, costs_.size() - block_);
      at_ = start(rng_);
      left_ = block_;
    }
    --left_;
    return costs_[at_++];
  }

 private:
  void reshuffle() {
    if (perm_.empty()) {
      perm_.resize(costs_.size());
      std::iota(perm_.begin(), perm_.end(), size_t{0});
    }
    for (size_t i = perm_.size(); i > 1; --i) {  // Fisher-Yates: portable, unlike std::shuffle
      std::uniform_int_distribution<size_t> pick(0, i - 1);
      std::swap(perm_[i - 1], perm_[pick(rng_)]);
    }
    at_ = 0;
  }

  const std::vector<double>& costs_;
  CostOrder order_;
  size_t block_;
  std::mt19937_64 rng_;
  std::vector<size_t> perm_;
  size_t at_ = 0, left_ = 0;
};

// One rank's loader: dispatch under the prefetch limit, FIFO workers, delivery.
class RankLoader {
 public:
  RankLoader(const std::vector<double>& costs, const LoaderShape& shape, double contention,
             const SimOptions& o, uint64_t rank)
      : costs_(costs, o, rank), shape_(shape), contention_(contention),
        worker_free_(static_cast<size_t>(shape.workers), 0.0) {
    for (int w = 0; w < shape.workers; ++w) free_.emplace(0.0, w);
  }

  // Dispatches every batch up to `last` (inclusive); release[k]: the start of step k, when
  // the loop releases the k-th batch it took.
  void dispatch_through(int64_t last, const std::vector<double>& release) {
    for (; dispatched_ <= last; ++dispatched_) {
      const int64_t freed_by = dispatched_ - shape_.prefetch_depth;
      if (freed_by >= 0) last_dispatch_ = std::max(last_dispatch_, release[static_cast<size_t>(freed_by)]);
      const double done = run_batch(last_dispatch_);
      if (shape_.delivery == Delivery::kInOrder) {
        done_.push_back(done);
      } else {
        complete_.push(done);
      }
    }
  }

  // When the batch that step m takes is ready for the loop (after the serial deliver).
  double take(int64_t m) {
    double done = 0;
    if (shape_.delivery == Delivery::kInOrder) {
      done = done_[static_cast<size_t>(m)];
    } else {
      done = complete_.top();
      complete_.pop();
    }
    deliver_free_ = std::max(done, deliver_free_) + shape_.deliver_ms;
    return deliver_free_;
  }

 private:
  // The batch's samples join the FIFO queue at `at`; returns when its last one (and the
  // batch operators on the worker finishing it) is done.
  double run_batch(double at) {
    double end = at;
    int last_worker = -1;
    for (int i = 0; i < shape_.batch; ++i) {
      const auto [free, w] = pop_free();
      const double finish = std::max(free, at) + costs_.next() * contention_;
      set_free(w, finish);
      if (finish >= end) {
        end = finish;
        last_worker = w;
      }
    }
    if (shape_.batch_ms > 0 && last_worker >= 0) {
      end += shape_.batch_ms * contention_;
      set_free(last_worker, end);
    }
    return end;
  }

  std::pair<double, int> pop_free() {
    for (;;) {  // entries left behind by set_free are stale: skip them
      const auto top = free_.top();
      free_.pop();
      if (top.first == worker_free_[static_cast<size_t>(top.second)]) return top;
    }
  }

  void set_free(int w, double t) {
    worker_free_[static_cast<size_t>(w)] = t;
    free_.emplace(t, w);
  }

  using Entry = std::pair<double, int>;
  CostStream costs_;
  const LoaderShape& shape_;
  double contention_;
  std::vector<double> worker_free_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> free_;
  int64_t dispatched_ = 0;
  double last_dispatch_ = 0;
  std::vector<double> done_;  // in order: each batch's completion
  std::priority_queue<double, std::vector<double>, std::greater<>> complete_;  // out of order
  double deliver_free_ = 0;
};

// The loop's thread after the step is handed over: the callbacks due at this step.
class LoopThread {
 public:
  explicit LoopThread(const std::vector<Callback>& callbacks) : callbacks_(callbacks) {}

  // When the loop's thread can fetch again; start, end: the step's on the accelerator.
  double after_step(int64_t m, double start, double end) {
    double t = start;
    for (const Callback& c : callbacks_) {
      if (m % c.every != 0) continue;
      if (!c.async) {
        if (c.waits_for_step) t = std::max(t, end);
        t += c.ms;
        continue;
      }
      // The hand-off waits while kCallbackQueueDepth tasks wait: until the task that many
      // places back has started on the background thread.
      if (starts_.size() == static_cast<size_t>(kCallbackQueueDepth)) {
        t = std::max(t, starts_.front());
        starts_.pop_front();
      }
      const double begin = std::max(t, background_free_);
      starts_.push_back(begin);
      background_free_ = begin + c.ms;
    }
    return t;
  }

 private:
  const std::vector<Callback>& callbacks_;
  std::deque<double> starts_;  // the last kCallbackQueueDepth async tasks' starts
  double background_free_ = 0;
};

struct Run {
  std::vector<double> starts;  // each step's start on the accelerator
  double wait_ms = 0;          // the loop's thread waiting for batches, measured steps
  int warmup = 0;
};

int steps_of(const StepModelInput& in, const SimOptions& o) {
  if (o.steps > 0) return o.steps;
  size_t n = in.sample_ms.size();
  for (const auto& v : in.rank_sample_ms) n = std::max(n, v.size());
  const double passes = 2.0 * static_cast<double>(n) / in.loader.batch;
  return static_cast<int>(std::clamp(std::ceil(passes), 4000.0, 10000.0));
}

Run simulate(const StepModelInput& in, const SimOptions& o) {
  const double contention = contention_factor(in.loader);
  std::vector<RankLoader> ranks;
  ranks.reserve(static_cast<size_t>(in.loop.ranks));
  for (int r = 0; r < in.loop.ranks; ++r)
    ranks.emplace_back(costs_of(in, r), in.loader, contention, o, static_cast<uint64_t>(r));
  LoopThread loop(in.loop.callbacks);
  Run run;
  run.warmup = o.warmup_steps >= 0 ? o.warmup_steps : 4 * in.loader.prefetch_depth + 8;
  const int total = run.warmup + steps_of(in, o) + 1;
  run.starts.resize(static_cast<size_t>(total));
  double loop_free = 0, accelerator_free = 0;
  for (int m = 0; m < total; ++m) {
    double ready = 0;
    for (auto& rank : ranks) {
      rank.dispatch_through(m + in.loader.prefetch_depth - 1, run.starts);
      ready = std::max(ready, rank.take(m));
    }
    const double fetched = std::max(loop_free, ready);
    if (m > run.warmup) run.wait_ms += fetched - loop_free;
    const double start = std::max(fetched, accelerator_free);
    run.starts[static_cast<size_t>(m)] = start;
    accelerator_free = start + in.loop.compute_ms;
    loop_free = loop.after_step(m, start, accelerator_free);
  }
  return run;
}

// Linear interpolation between order statistics (sorted: ascending).
double percentile(const std::vector<double>& sorted, double p) {
  const double h = p * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

StepPrediction summarise(const Run& run, double compute_ms, double contention) {
  std::vector<double> steps;
  for (size_t m = static_cast<size_t>(run.warmup) + 1; m < run.starts.size(); ++m)
    steps.push_back(run.starts[m] - run.starts[m - 1]);
  StepPrediction p;
  p.steps = static_cast<int>(steps.size());
  p.step_ms = (run.starts.back() - run.starts[static_cast<size_t>(run.warmup)]) / p.steps;
  std::sort(steps.begin(), steps.end());
  p.p50_ms = percentile(steps, 0.50);
  p.p95_ms = percentile(steps, 0.95);
  p.p99_ms = percentile(steps, 0.99);
  p.max_ms = steps.back();
  p.au_pct = p.step_ms > 0 ? std::clamp(100.0 * compute_ms / p.step_ms, 0.0, 100.0) : 100.0;
  p.stall_pct = 100.0 - p.au_pct;
  p.data_wait_ms = run.wait_ms / p.steps;
  p.contention = contention;
  return p;
}

double mean_cost(const StepModelInput& in) {
  double sum = 0;
  size_t n = 0;
  const auto add = [&](const std::vector<double>& v) {
    sum += std::accumulate(v.begin(), v.end(), 0.0);
    n += v.size();
  };
  if (in.rank_sample_ms.empty()) add(in.sample_ms);
  for (const auto& v : in.rank_sample_ms) add(v);
  return n > 0 ? sum / static_cast<double>(n) : 0.0;
}

// The loop's prediction without data_ms (workers_for_target's many runs).
StepPrediction loop_prediction(const StepModelInput& in, const SimOptions& o) {
  StepPrediction p = summarise(simulate(in, o), in.loop.compute_ms, contention_factor(in.loader));
  p.mean_bound_ms = mean_bound_ms(mean_cost(in), in.loader, in.loop.compute_ms);
  return p;
}

// The smallest w in (fail, pass] with good(w), given good(pass), assuming good does not
// turn false as w grows.
int bisect(int fail, int pass, const std::function<bool(int)>& good) {
  while (pass - fail > 1) {
    const int mid = fail + (pass - fail) / 2;
    if (good(mid)) {
      pass = mid;
    } else {
      fail = mid;
    }
  }
  return pass;
}

}  // namespace

double contention_factor(const LoaderShape& l) {
  validate_loader(l);
  if (l.cores <= 0) return 1.0;
  return std::max(1.0, l.workers / (l.cores - l.loop_cpu_share));
}

double mean_data_ms(double mean_sample_ms, const LoaderShape& l) {
  require_ms("mean_sample_ms", mean_sample_ms);
  const double f = contention_factor(l);
  if (l.prefetch_depth == 1) {
    const double rounds = std::ceil(static_cast<double>(l.batch) / l.workers);
    return (rounds * mean_sample_ms + l.batch_ms) * f + l.deliver_ms;
  }
  return std::max((l.batch * mean_sample_ms + l.batch_ms) * f / l.workers, l.deliver_ms);
}

double mean_bound_ms(double mean_sample_ms, const LoaderShape& l, double compute_ms) {
  require_ms("compute_ms", compute_ms);
  return std::max(mean_data_ms(mean_sample_ms, l), compute_ms);
}

int mean_workers_for_target(double mean_sample_ms, int batch, double compute_ms,
                            double target_au_pct, double batch_ms) {
  require_ms("mean_sample_ms", mean_sample_ms);
  require_count("batch", batch);
  require_ms("compute_ms", compute_ms);
  require_ms("batch_ms", batch_ms);
  if (!(target_au_pct > 0) || target_au_pct > 100)
    bad("target_au_pct must be in (0, 100], got " + std::to_string(target_au_pct));
  const double work = batch * mean_sample_ms + batch_ms;
  if (work <= 0) return 1;
  if (compute_ms <= 0) return 0;
  const double w = target_au_pct / 100.0 * work / compute_ms;
  // A hair of tolerance so that an exact fit (2.0000000001 from rounding) stays 2.
  return std::max(1, static_cast<int>(std::ceil(w - 1e-9)));
}

double prediction_error_pct(double predicted_ms, double measured_ms) {
  return measured_ms > 0 ? 100.0 * (predicted_ms - measured_ms) / measured_ms : 0.0;
}

CostSummary summarise_costs(const std::vector<double>& sample_ms) {
  require_costs("sample_ms", sample_ms);
  std::vector<double> sorted = sample_ms;
  std::sort(sorted.begin(), sorted.end());
  CostSummary c;
  c.samples = static_cast<int>(sorted.size());
  c.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  c.p50_ms = percentile(sorted, 0.50);
  c.p95_ms = percentile(sorted, 0.95);
  c.p99_ms = percentile(sorted, 0.99);
  c.max_ms = sorted.back();
  return c;
}

double tail_stall_share_pct(const StepModelInput& in, int costliest, const SimOptions& o) {
  if (costliest < 0) bad("costliest must be >= 0, got " + std::to_string(costliest));
  const StepPrediction all = predict_step(in, o);
  if (all.stall_pct < 0.05 || costliest == 0 || in.sample_ms.empty()) return 0.0;
  // The costliest samples at the median: the loop as if they were typical.
  StepModelInput typical = in;
  std::vector<size_t> order(typical.sample_ms.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const size_t k = std::min(order.size(), static_cast<size_t>(costliest));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    [&](size_t a, size_t b) { return typical.sample_ms[a] > typical.sample_ms[b]; });
  const double median = summarise_costs(in.sample_ms).p50_ms;
  for (size_t i = 0; i < k; ++i) typical.sample_ms[order[i]] = median;
  const StepPrediction without = loop_prediction(typical, o);
  return std::clamp(100.0 * (all.stall_pct - without.stall_pct) / all.stall_pct, 0.0, 100.0);
}

StepPrediction predict_step(const StepModelInput& in, const SimOptions& o) {
  validate(in, o);
  StepPrediction p = loop_prediction(in, o);
  p.data_ms = predict_data_ms(costs_of(in, 0), in.loader, o);
  return p;
}

double predict_data_ms(const std::vector<double>& sample_ms, const LoaderShape& loader,
                       const SimOptions& o) {
  StepModelInput alone;
  alone.sample_ms = sample_ms;
  alone.loader = loader;
  validate(alone, o);
  return summarise(simulate(alone, o), 0.0, contention_factor(loader)).step_ms;
}

WorkersForTarget workers_for_target(const StepModelInput& in, double target_au_pct,
                                    int max_workers, const SimOptions& o) {
  validate(in, o);
  require_count("max_workers", max_workers);
  const int lower = mean_workers_for_target(mean_cost(in), in.loader.batch, in.loop.compute_ms,
                                            target_au_pct, in.loader.batch_ms);
  std::map<int, StepPrediction> seen;
  const auto at = [&](int w) -> const StepPrediction& {
    auto it = seen.find(w);
    if (it != seen.end()) return it->second;
    StepModelInput x = in;
    x.loader.workers = w;
    return seen.emplace(w, loop_prediction(x, o)).first->second;
  };
  const auto ok = [&](int w) { return at(w).au_pct >= target_au_pct - 1e-9; };
  int fail = std::clamp(lower, 1, max_workers);
  if (lower > 0 && ok(fail)) return {fail, true, at(fail)};
  // Widen by doubling steps until a count reaches the target, then bisect (fail, pass].
  for (int step = 1; lower > 0 && fail < max_workers; step *= 2) {
    const int w = std::min(max_workers, fail + step);
    if (ok(w)) {
      const int pass = bisect(fail, w, ok);
      return {pass, true, at(pass)};
    }
    fail = w;
  }
  // Out of reach: the highest AU simulated, at the fewest workers that give it.
  if (seen.empty()) at(1);
  double top = 0;
  int top_workers = 1;
  for (const auto& [w, p] : seen) {
    if (p.au_pct > top + 1e-9) top = p.au_pct, top_workers = w;
  }
  const int fewest = bisect(0, top_workers, [&](int w) { return at(w).au_pct >= top - 1e-9; });
  return {fewest, false, at(fewest)};
}

}  // namespace pipebench::model
