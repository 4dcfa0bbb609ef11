#include "bench/run/ranks.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/run/counter_put.h"
#include "bench/run/loader_util.h"
#include "datasets/file_io.h"
#include "model/constants.h"
#include "model/rank_fields.h"
#include "model/step_model.h"
#include "pipeline/dist/straggler.h"
#include "measure/stage_timers.h"

namespace pipebench::bench {
namespace {

using model::RankField;
constexpr size_t kFieldCount = static_cast<size_t>(RankField::kCount);

// In model::RankField's order (model/rank_fields.h).
std::vector<double> to_vector(const RankFigures& f) {
  return {f.data_ms, f.compute_ms, f.step_ms, f.au_pct, f.images_per_second,
          f.consumer_wait_ms, f.worker_wait_ms, f.sync_wait_ms, f.sync_cpu_ms, f.read_ms, f.decode_ms,
          f.transform_ms, f.sample_cpu_ms, f.items, f.data_drift_pct, f.loop_cpu_drift_pct};
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// The global figures of straggler.h / ranks.h from every rank's (rank 0 only); bound_ms:
// the step model's prediction (straggler_pred_ms, add_rank_counters).
void set_global(benchmark::State& state, const std::vector<std::vector<double>>& ranks, double bound) {
  const auto column = [&](RankField f) {
    std::vector<double> c;
    for (const auto& r : ranks) c.push_back(r[static_cast<size_t>(f)]);
    return c;
  };
  const auto data = column(RankField::kDataMs), compute = column(RankField::kComputeMs),
             step = column(RankField::kStepMs), au = column(RankField::kAuPct),
             ips = column(RankField::kImagesPerSecond), items = column(RankField::kItems);
  const double data_max = *std::max_element(data.begin(), data.end());
  const double step_mean = mean(step), au_mean = mean(au);
  put(state, CounterId::kWorldSize, static_cast<double>(ranks.size()));
  put(state, CounterId::kDataMs, data_max);
  put(state, CounterId::kDataMsMean, mean(data));
  put(state, CounterId::kComputeMs, *std::max_element(compute.begin(), compute.end()));
  put(state, CounterId::kStepMs, step_mean);
  put(state, CounterId::kBoundMs, bound);
  put(state, CounterId::kAuPct, au_mean);
  put(state, CounterId::kAuPctMin, *std::min_element(au.begin(), au.end()));
  put(state, CounterId::kAuPass, au_mean >= model::kAuTargetPct ? 1 : 0);
  put(state, CounterId::kStallPct, 100.0 - au_mean);
  put(state, CounterId::kPredictionErrorPct, model::prediction_error_pct(bound, step_mean));
  put(state, CounterId::kImagesPerSecondTotal, std::accumulate(ips.begin(), ips.end(), 0.0));
  put(state, CounterId::kLoadImbalance, mean(data) > 0 ? data_max / mean(data) : 1.0);
  put(state, CounterId::kSlowestRank, static_cast<double>(std::max_element(data.begin(), data.end()) - data.begin()));
  state.SetItemsProcessed(static_cast<int64_t>(std::llround(std::accumulate(items.begin(), items.end(), 0.0))));
  // The drifts furthest from 0 over the ranks: the ones that say most about the prediction.
  const auto furthest = [](const std::vector<double>& v) {
    return *std::max_element(v.begin(), v.end(), [](double a, double b) { return std::abs(a) < std::abs(b); });
  };
  put(state, CounterId::kDataDriftPct, furthest(column(RankField::kDataDriftPct)));
  put(state, CounterId::kLoopCpuDriftPct, furthest(column(RankField::kLoopCpuDriftPct)));
  for (size_t k = 0; k < ranks.size(); ++k)
    for (size_t i = 0; i < kFieldCount; ++i)
      if (static_cast<RankField>(i) != RankField::kItems)  // items: in the total only
        put(state, CounterId::kRankFigure, model::rank_part(static_cast<int>(k), static_cast<RankField>(i)), ranks[k][i]);
}

}  // namespace

TestDelay TestDelay::from_env(int depth) {
  TestDelay d;
  d.depth_ = std::max(1, depth);
  const char* v = std::getenv("PIPEBENCH_TEST_SLOW_RANK");
  if (v == nullptr || *v == '\0') return d;
  int rank = -1;
  double ms = 0;
  if (std::sscanf(v, "%d:%lf", &rank, &ms) != 2 || rank < 0 || !(ms >= 0) || ms > 1e5) {
    std::fprintf(stderr, "pipebench: warning: PIPEBENCH_TEST_SLOW_RANK=%s ignored (expected "
                 "RANK:MS)\n", v);
    return d;
  }
  if (rank == dist::rank()) d.ms_ = ms;
  return d;
}

void TestDelay::apply() {
  if (ms_ <= 0) return;
  const auto period = static_cast<int64_t>(ms_ * 1e6);
  const size_t k = taken_ns_.size();
  int64_t start = ready_ns_ == 0 ? now_ns() : ready_ns_;  // the slow loader's first batch
  if (k >= static_cast<size_t>(depth_)) start = std::max(start, taken_ns_[k - depth_]);
  ready_ns_ = start + period;
  const int64_t now = now_ns();
  if (ready_ns_ > now) std::this_thread::sleep_for(std::chrono::nanoseconds(ready_ns_ - now));
  taken_ns_.push_back(std::max(now, ready_ns_));
}

DataSamples measure_data(Loader& loader, int batches, int batch_size, int skip, TestDelay& delay) {
  DataSamples out;
  delay.restart();
  LoaderWindow w(loader);
  int64_t last = now_ns();
  for (int i = 0; i < batches; ++i) {
    if (!loader.next()) throw std::runtime_error("the loader ran out of batches");
    delay.apply();
    const int64_t now = now_ns();
    if (i >= skip) out.per_batch_ms.push_back((now - last) / 1e6);
    last = now;
  }
  w.finish(loader);
  out.data_ms = w.wall_ms / std::max(1e-9, w.produced_batches(batch_size));
  out.sample_cpu_ms = w.sample_cpu_ms();
  if (out.per_batch_ms.empty()) out.per_batch_ms.push_back(out.data_ms);
  return out;
}

void load_until_every_rank_measured(Loader& loader, TestDelay& delay) {
  dist::PendingBarrier everyone;
  bool loading = true;
  while (!everyone.done()) {
    if (!loading) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      continue;
    }
    try {
      loading = loader.next().has_value();
      if (loading) delay.apply();
    } catch (const std::exception&) {  // the failure is the measuring's to report, or the loop's
      loading = false;
    }
  }
}

void add_rank_counters(benchmark::State& state, const RankFigures& mine,
                       const std::vector<double>& data_samples, int prefetch, int workers) {
  const auto figures = dist::gather(to_vector(mine));
  const auto samples = dist::gather(data_samples);
  if (dist::rank() != 0) return;
  double compute = 0, step = 0;
  for (const auto& r : figures) {
    compute = std::max(compute, r[static_cast<size_t>(RankField::kComputeMs)]);
    step += r[static_cast<size_t>(RankField::kStepMs)] / static_cast<double>(figures.size());
  }
  // The step model on the ranks' per-batch data times (straggler.h queue_ms: each one cost,
  // batch 1, one worker, depth = the prefetch), drawn in runs of 4 x workers intervals (a
  // few bunches of the workers' batches, straggler.h): the global bound_ms too.
  dist::StragglerOptions options;
  options.block = 4 * workers;
  const auto p = dist::predict_synchronised_step(samples, compute, prefetch, options);
  const double predicted = p.queue_ms;
  if (figures.size() > 1) set_global(state, figures, predicted);
  put(state, CounterId::kStragglerPredMs, predicted);
  put(state, CounterId::kStragglerIidMaxMs, p.iid_max_ms);
  put(state, CounterId::kStragglerPredErrorPct, model::prediction_error_pct(predicted, step));
  put(state, CounterId::kStragglerIidErrorPct, model::prediction_error_pct(p.iid_max_ms, step));
}

bool merge_rank_traces(const std::string& path, int64_t origin_ns, const std::string& host) {
  const auto origins = dist::gather(std::vector<double>{static_cast<double>(origin_ns)});
  const auto hosts = dist::gather(host);
  dist::barrier();  // every rank's file is written
  if (dist::rank() != 0) return true;
  bool ok = true;
  nlohmann::json merged = nlohmann::json::array();
  for (size_t k = 0; k < origins.size(); ++k) {
    const std::string file = k == 0 ? path : path + ".rank" + std::to_string(k);
    nlohmann::json doc;
    try {
      std::ifstream in(file);
      doc = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "pipebench: warning: rank %zu's trace %s not merged: %s\n", k,
                   file.c_str(), e.what());
      ok = false;
      continue;
    }
    const double shift_us = (origins[k].front() - origins[0].front()) / 1e3;
    merged.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", k},
                      {"args", {{"name", "rank " + std::to_string(k) + " (" + hosts[k] + ")"}}}});
    for (auto& ev : doc["traceEvents"]) {
      ev["pid"] = k;
      if (ev.contains("ts")) ev["ts"] = ev["ts"].get<double>() + shift_us;
      merged.push_back(std::move(ev));
    }
  }
  replace_file(path, nlohmann::json({{"traceEvents", std::move(merged)}, {"displayTimeUnit", "ms"}}).dump());
  for (size_t k = 1; k < origins.size(); ++k) {
    std::error_code ec;
    if (ok) std::filesystem::remove(path + ".rank" + std::to_string(k), ec);
  }
  return ok;
}

std::string rank_failure(const dist::Agreement& a) {
  return "rank " + std::to_string(a.failed_rank) + ": " + a.message;
}

}  // namespace pipebench::bench
