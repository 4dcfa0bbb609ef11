// Data-parallel runs in the report (issue 13): the BM_EndToEnd cases of a run made with
// `mpirun -np N pipebench` (world_size > 1), whose counters rank 0 aggregated
// (bench/run/ranks.h): a per-rank table, the global figures (images/s summed over ranks, the
// synchronised step, AU mean and min over ranks, MLPerf Storage's AU >= 90 % pass), the
// load imbalance (max / mean of the ranks' data time), the slowest rank and its stage
// times, and the straggler prediction (pipeline/dist/straggler.h) against the measured
// step; what the step's collective took: the emulated allreduce's modelled time, or the
// real MPI_Allreduce's wall and its CPU on the loop thread (host CPU the loaders lost).
// Units: ms per batch (data, step, waits), ms per sample (stages), images/s, %.
// Nothing here throws; a run without such cases (one process) gives an empty Ranks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/run.h"

namespace pipebench::report {

struct RankRow {
  int rank = 0;
  double data_ms = 0, step_ms = 0, au_pct = 0, images_per_second = 0;
  double consumer_wait_ms = 0, worker_wait_ms = 0, sync_wait_ms = 0;
  double sync_cpu_ms = 0;  ///< the loop thread's CPU in the collective, ms per step
  double read_ms = 0, decode_ms = 0, transform_ms = 0, sample_cpu_ms = 0;
};

struct RanksCase {
  std::string name;  ///< the case key's name
  bool sweep = false;  ///< a plain sweep case (no candidate, no callbacks: CaseKey::plain)
  int workers = 0;   ///< per rank
  std::vector<RankRow> ranks;
  double step_ms = 0;                  ///< mean over ranks
  double au_pct = 0, au_pct_min = 0;   ///< mean and min over ranks
  bool au_pass = false;                ///< au_pct >= 90 (MLPerf Storage)
  double images_per_second = 0;        ///< summed over ranks
  double load_imbalance = 1;           ///< max / mean of data_ms
  int slowest_rank = 0;                ///< largest data_ms
  double data_ms_mean = 0;
  std::optional<double> pred_ms, iid_max_ms;          ///< the straggler prediction
  std::optional<double> pred_error_pct, iid_error_pct;  ///< against step_ms
};

/// Cores per rank (issue 13): over the sweep of workers per rank (the cases named
/// BM_EndToEnd/<pipeline>/<baseline>/workers:<w>, no other suffix), the fewest workers per
/// rank whose AU, averaged over ranks, reaches 90 %: one core per worker (a data-bound
/// worker keeps a core busy; the loop's own thread mostly waits), so a node with R ranks
/// needs R x that many cores. Oversubscribed: R x workers above the node's hardware
/// threads (the context's hardware_threads), the ranks then share cores.
struct CoresPerRank {
  std::optional<int> workers;   ///< the fewest reaching AU >= 90 %; nullopt: none swept did
  double au_pct = 0;            ///< its AU (mean over ranks), or the best swept AU
  int best_workers = 0;         ///< the count with the best AU when none reached 90 %
  int node_cores = 0;           ///< hardware threads of the node (0: unknown)
  std::vector<std::pair<int, double>> sweep;  ///< workers per rank -> AU % (mean over ranks)
};

struct Ranks {
  int world = 1;
  std::string hosts, sync;  ///< from the run's context
  std::optional<double> grad_mib;  ///< MiB, from the run's context
  std::optional<double> link_gb_per_s, link_latency_us;  ///< --sync=emulated's link (context)
  std::optional<double> sync_model_ms;  ///< emulated: the modelled transfer per step, ms
  std::vector<RanksCase> cases;
  std::optional<CoresPerRank> cores;  ///< when the run swept workers per rank
  bool empty() const { return cases.empty(); }
};

/// The aggregated BM_EndToEnd cases of `run` (those with world_size > 1 and rank<k>_
/// counters for every rank); the global figures recomputed from the per-rank ones.
Ranks rank_figures(const BenchRun& run);
/// The "Ranks" section of pipebench-report's text (nothing when empty).
void append_ranks_text(std::string& out, const Ranks& r);
/// The same as the report's "ranks" JSON, units in every key.
nlohmann::json ranks_json(const Ranks& r);

/// The threshold beyond which the straggler prediction is flagged, % (as the what-if check).
inline constexpr double kStragglerTolerancePct = 5.0;

}  // namespace pipebench::report
