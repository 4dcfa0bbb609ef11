#include "report/ranks.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

#include "model/constants.h"
#include "model/rank_fields.h"
#include "report/appendf.h"

namespace pipebench::report {
namespace {

std::optional<RankRow> rank_row(const BenchRun& run, const std::string& name, int k) {
  using model::RankField;
  const auto get = [&](RankField f) { return run.value(name, CounterId::kRankFigure, model::rank_part(k, f)); };
  const auto data = get(RankField::kDataMs), step = get(RankField::kStepMs), au = get(RankField::kAuPct);
  if (!data || !step || !au) return std::nullopt;
  RankRow r;
  r.rank = k;
  r.data_ms = *data;
  r.step_ms = *step;
  r.au_pct = *au;
  r.images_per_second = get(RankField::kImagesPerSecond).value_or(0);
  r.consumer_wait_ms = get(RankField::kConsumerWaitMs).value_or(0);
  r.worker_wait_ms = std::max(0.0, get(RankField::kWorkerWaitMs).value_or(0));
  r.sync_wait_ms = get(RankField::kSyncWaitMs).value_or(0);
  r.sync_cpu_ms = get(RankField::kSyncCpuMs).value_or(0);
  r.read_ms = get(RankField::kReadMs).value_or(0);
  r.decode_ms = get(RankField::kDecodeMs).value_or(0);
  r.transform_ms = get(RankField::kTransformMs).value_or(0);
  r.sample_cpu_ms = get(RankField::kSampleCpuMs).value_or(0);
  return r;
}

// The job's figures as bench aggregated them, once (bench/run/ranks.cpp, model/rank_fields.h):
// read, not recomputed. False when the row lacks one (an incomplete case).
bool read_global(const BenchRun& run, const std::string& name, RanksCase& c) {
  const auto get = [&](CounterId id) { return run.value(name, id); };
  const auto data_mean = get(CounterId::kDataMsMean), step = get(CounterId::kStepMs), au = get(CounterId::kAuPct),
             au_min = get(CounterId::kAuPctMin), au_pass = get(CounterId::kAuPass), ips = get(CounterId::kImagesPerSecondTotal),
             imbalance = get(CounterId::kLoadImbalance), slowest = get(CounterId::kSlowestRank);
  if (!data_mean || !step || !au || !au_min || !au_pass || !ips || !imbalance || !slowest) return false;
  c.data_ms_mean = *data_mean;
  c.step_ms = *step;
  c.au_pct = *au;
  c.au_pct_min = *au_min;
  c.au_pass = *au_pass > 0.5;
  c.images_per_second = *ips;
  c.load_imbalance = *imbalance;
  c.slowest_rank = static_cast<int>(std::clamp(std::round(*slowest), 0.0, 1e6));
  return true;
}

const char* verdict(double error_pct) {
  return std::abs(error_pct) <= kStragglerTolerancePct ? "within" : "beyond";
}

std::optional<CoresPerRank> cores_per_rank(const Ranks& r, int node_cores) {
  CoresPerRank c;
  c.node_cores = node_cores;
  for (const auto& k : r.cases)
    if (k.sweep) c.sweep.emplace_back(k.workers, k.au_pct);
  if (c.sweep.empty()) return std::nullopt;
  std::sort(c.sweep.begin(), c.sweep.end());
  for (const auto& [w, au] : c.sweep) {
    if (au >= model::kAuTargetPct) {
      c.workers = w;
      c.au_pct = au;
      return c;
    }
    if (au > c.au_pct) {
      c.au_pct = au;
      c.best_workers = w;
    }
  }
  return c;
}

}  // namespace

Ranks rank_figures(const BenchRun& run) {
  Ranks out;
  out.hosts = run.context_or("hosts", "");
  out.sync = run.context_or("sync", "");
  out.grad_mib = run.number("grad_mib");
  out.link_gb_per_s = run.number("link_gb_per_s");
  out.link_latency_us = run.number("link_latency_us");
  for (const CaseMeans* m : run.where([](const model::CaseKey& k) { return k.family == model::Family::kEndToEnd; })) {
    const std::string name = m->key.name();
    const auto world = run.value(name, CounterId::kWorldSize);
    if (!world || *world < 2) continue;
    RanksCase c;
    c.name = name;
    c.sweep = m->key.plain();
    c.workers = static_cast<int>(std::lround(run.value(name, CounterId::kWorkers).value_or(0)));
    const int n = static_cast<int>(std::clamp(std::round(*world), 0.0, 65536.0));
    for (int k = 0; k < n; ++k)
      if (auto row = rank_row(run, name, k)) c.ranks.push_back(*row);
    if (static_cast<int>(c.ranks.size()) != n || !read_global(run, name, c)) continue;  // incomplete
    c.pred_ms = run.value(name, CounterId::kStragglerPredMs);
    c.iid_max_ms = run.value(name, CounterId::kStragglerIidMaxMs);
    if (!out.sync_model_ms) out.sync_model_ms = run.value(name, CounterId::kSyncModelMs);
    if (c.pred_ms) c.pred_error_pct = 100 * (*c.pred_ms - c.step_ms) / std::max(1e-9, c.step_ms);
    if (c.iid_max_ms) c.iid_error_pct = 100 * (*c.iid_max_ms - c.step_ms) / std::max(1e-9, c.step_ms);
    out.world = std::max(out.world, n);
    out.cases.push_back(std::move(c));
  }
  // The node's hardware threads, not the run's cores_available: under mpirun a rank's
  // affinity may be its slice of the node (binding), and cores per rank count the node.
  const int node_cores = run.count("hardware_threads");
  if (!out.cases.empty()) out.cores = cores_per_rank(out, node_cores);
  return out;
}

namespace {

void cores_text(std::string& out, int world, const CoresPerRank& c) {
  std::string sweep;
  for (const auto& [w, au] : c.sweep) appendf(sweep, "%s%d: %.1f %%", sweep.empty() ? "" : ", ", w, au);
  if (c.workers) {
    appendf(out, "  Cores per rank: %d workers per rank keep the accelerators >= %.0f %% busy (AU "
            "%.1f %%, mean over ranks): this pipeline needs %d cores per accelerator; %d ranks on "
            "a node need %d cores", *c.workers, model::kAuTargetPct, c.au_pct, *c.workers, world,
            world * *c.workers);
    if (c.node_cores > 0)
      appendf(out, " (this node has %d%s)", c.node_cores,
              world * *c.workers > c.node_cores ? ": measured oversubscribed" : "");
    appendf(out, ". Swept: %s.\n", sweep.c_str());
  } else {
    appendf(out, "  Cores per rank: no swept count reached AU >= %.0f %% (best %.1f %% at %d "
            "workers per rank, %d cores for %d ranks", model::kAuTargetPct, c.au_pct,
            c.best_workers, world * c.best_workers, world);
    if (c.node_cores > 0)
      appendf(out, "; this node has %d%s", c.node_cores,
              world * c.best_workers > c.node_cores ? ", so the ranks shared cores" : "");
    appendf(out, "). Swept: %s.\n", sweep.c_str());
  }
}

}  // namespace

void append_ranks_text(std::string& out, const Ranks& r) {
  if (r.empty()) return;
  std::string sync = r.sync.empty() ? "unknown" : r.sync;
  if (r.sync == "allreduce" && r.grad_mib) {
    appendf(sync, " (MPI_Allreduce on the host's CPU) of %.1f MiB", *r.grad_mib);
  } else if (r.sync == "emulated" && r.grad_mib && r.link_gb_per_s && r.sync_model_ms) {
    appendf(sync, " ring allreduce of %.1f MiB at %.0f GB/s, %.0f us per ring step: %.3f ms "
            "per step, waited without host CPU", *r.grad_mib, *r.link_gb_per_s,
            r.link_latency_us.value_or(0), *r.sync_model_ms);
  }
  appendf(out, "\nRanks (mpirun: world size %d%s%s; sync %s):\n", r.world,
          r.hosts.empty() ? "" : ", hosts ", r.hosts.c_str(), sync.c_str());
  for (const auto& c : r.cases) {
    appendf(out, "  %s (%d workers per rank): %.0f images/s over %zu ranks, step %.2f ms, AU mean "
            "%.1f %% (min %.1f %%): MLPerf AU >= %.0f %%: %s\n", c.name.c_str(), c.workers,
            c.images_per_second, c.ranks.size(), c.step_ms, c.au_pct, c.au_pct_min,
            model::kAuTargetPct, c.au_pass ? "pass" : "FAIL");
    appendf(out, "  %6s %9s %9s %7s %9s %9s %9s %9s %8s %8s %9s\n", "rank", "data ms", "step ms",
            "AU %", "images/s", "wait ms", "sync ms", "idle ms", "read", "decode", "transform");
    for (const auto& k : c.ranks)
      appendf(out, "  %6d %9.2f %9.2f %7.1f %9.0f %9.2f %9.2f %9.2f %8.3f %8.3f %9.3f\n", k.rank,
              k.data_ms, k.step_ms, k.au_pct, k.images_per_second, k.consumer_wait_ms,
              k.sync_wait_ms, k.worker_wait_ms, k.read_ms, k.decode_ms, k.transform_ms);
    appendf(out, "  (ms per batch; wait = the loop waiting for its batch, sync = in the step's "
            "collective (a barrier: waiting for the others; an allreduce: that too, plus its "
            "own transfer), idle = the rank's workers idle; stages in ms per "
            "sample)\n");
    const RankRow& s = *std::find_if(c.ranks.begin(), c.ranks.end(),
                                     [&](const RankRow& k) { return k.rank == c.slowest_rank; });
    appendf(out, "  Load imbalance (max / mean data time): %.2f. Slowest rank: %d, data %.2f ms "
            "per batch against a mean of %.2f; per sample read %.3f, decode %.3f, transform "
            "%.3f ms, CPU %.3f ms.\n", c.load_imbalance, s.rank, s.data_ms, c.data_ms_mean,
            s.read_ms, s.decode_ms, s.transform_ms, s.sample_cpu_ms);
    if (r.sync == "allreduce") {
      double wall = 0, cpu = 0;
      for (const auto& k : c.ranks) {
        wall += k.sync_wait_ms / static_cast<double>(c.ranks.size());
        cpu += k.sync_cpu_ms / static_cast<double>(c.ranks.size());
      }
      appendf(out, "  The host's MPI_Allreduce took %.2f ms per step (mean over ranks, waiting for "
              "the others included), %.2f ms of it CPU on the loop's thread: host CPU the "
              "loaders lost, which a GPU job spends on its accelerators (NCCL). --sync=emulated "
              "(the default) waits the allreduce's time on a stated link instead.\n", wall, cpu);
    }
    if (c.pred_ms && c.iid_max_ms)
      appendf(out, "  Straggler prediction from the ranks' per-batch data times: %.2f ms per "
              "step (the loop simulated with prefetch; %+.1f %%, %s %.0f %%), E[max over ranks "
              "of max(data, compute)] %.2f ms (%+.1f %%), against %.2f ms measured.\n",
              *c.pred_ms, *c.pred_error_pct, verdict(*c.pred_error_pct), kStragglerTolerancePct,
              *c.iid_max_ms, *c.iid_error_pct, c.step_ms);
  }
  if (r.cores) cores_text(out, r.world, *r.cores);
}

nlohmann::json ranks_json(const Ranks& r) {
  nlohmann::json j = nlohmann::json::object();
  j["world_size"] = r.world;
  j["hosts"] = r.hosts;
  j["sync"] = r.sync;
  const auto num = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  j["grad_mib"] = num(r.grad_mib);
  j["link_gb_per_s"] = num(r.link_gb_per_s);
  j["sync_model_ms"] = num(r.sync_model_ms);
  j["cases"] = nlohmann::json::array();
  const auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  for (const auto& c : r.cases) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& k : c.ranks)
      rows.push_back({{"rank", k.rank}, {"data_ms", k.data_ms}, {"step_ms", k.step_ms},
                      {"au_pct", k.au_pct}, {"images_per_second", k.images_per_second},
                      {"consumer_wait_ms", k.consumer_wait_ms}, {"sync_wait_ms", k.sync_wait_ms},
                      {"sync_cpu_ms", k.sync_cpu_ms},
                      {"worker_wait_ms", k.worker_wait_ms}, {"read_ms", k.read_ms},
                      {"decode_ms", k.decode_ms}, {"transform_ms", k.transform_ms},
                      {"sample_cpu_ms", k.sample_cpu_ms}});
    j["cases"].push_back({{"case", c.name}, {"workers", c.workers}, {"ranks", rows},
                          {"step_ms", c.step_ms}, {"au_pct", c.au_pct}, {"au_pct_min", c.au_pct_min},
                          {"au_pass", c.au_pass}, {"images_per_second", c.images_per_second},
                          {"load_imbalance", c.load_imbalance}, {"slowest_rank", c.slowest_rank},
                          {"straggler_pred_ms", opt(c.pred_ms)},
                          {"straggler_pred_error_pct", opt(c.pred_error_pct)},
                          {"straggler_iid_max_ms", opt(c.iid_max_ms)},
                          {"straggler_iid_error_pct", opt(c.iid_error_pct)}});
  }
  if (r.cores) {
    nlohmann::json sweep = nlohmann::json::array();
    for (const auto& [w, au] : r.cores->sweep) sweep.push_back({{"workers_per_rank", w}, {"au_pct", au}});
    j["cores_per_rank"] = {{"workers_per_rank", r.cores->workers ? nlohmann::json(*r.cores->workers) : nlohmann::json()},
                           {"au_pct", r.cores->au_pct}, {"node_cores", r.cores->node_cores},
                           {"sweep", sweep}};
  }
  return j;
}

}  // namespace pipebench::report
