// The end-to-end case across ranks (mpirun -np N pipebench): what BM_EndToEnd needs beyond
// one process. Each rank measures its own loop; rank 0 gathers the figures and writes them
// as the case's counters (the other ranks' output goes nowhere, bench/run/main.cpp).
//
// Counters rank 0 adds to BM_EndToEnd (ms per batch unless stated; bench/README.md):
//   per rank k: rank<k>_data_ms, rank<k>_step_ms, rank<k>_au_pct, rank<k>_images_per_second
//     (batch x 1000 / step_ms), rank<k>_consumer_wait_ms, rank<k>_worker_wait_ms,
//     rank<k>_sync_wait_ms (the rank's time in the per-step collective: waiting for the
//     others), rank<k>_read_ms / _decode_ms / _transform_ms / _sample_cpu_ms (per sample),
//     rank<k>_data_drift_pct, rank<k>_loop_cpu_drift_pct;
//   global: world_size; data_ms = the slowest rank's (the max), data_ms_mean; compute_ms (the
//     max; it includes sync_ms, the collective on a resident batch); step_ms = the mean of
//     the ranks' (they are synchronised); au_pct = the mean over ranks (MLPerf Storage and
//     DLIO average AU over ranks), au_pct_min, au_pass = 1 when au_pct >= 90 (MLPerf
//     Storage's threshold) else 0; stall_pct = 100 - au_pct; bound_ms = the step model's
//     prediction (straggler_pred_ms below) and prediction_error_pct against step_ms; images_per_second_total = the
//     sum of the ranks' images/s; load_imbalance = max / mean of data_ms; slowest_rank (the
//     largest data_ms); data_drift_pct and loop_cpu_drift_pct = the drifts furthest from 0
//     (each rank's: its loader alone after the loop against before, %; its workers' CPU per
//     sample in the loop against alone, %).
//   the straggler prediction (pipeline/dist/straggler.h), with one rank too, from each
//     rank's batch intervals of both loader-alone windows: straggler_pred_ms
//     (the step model's loop with prefetch, model/step_model.h), straggler_iid_max_ms (E[max over ranks of
//     max(data, compute)]), and their errors against step_ms, straggler_pred_error_pct and
//     straggler_iid_error_pct (%).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/dist/dist.h"
#include "pipeline/loader.h"

namespace pipebench::bench {

/// A test-only slow loader: PIPEBENCH_TEST_SLOW_RANK=R:MS makes rank R's batches arrive no
/// faster than one per MS ms, as a loader that needs MS ms per batch in the background
/// would deliver them (batch k is ready at max(ready k-1, taken k-depth) + MS, at most
/// `depth` batches ahead of the consumer), so the delay overlaps the step as a slow loader
/// does: a rank slowed on purpose, for the straggler tests. Unset, or on other ranks: no
/// delay. A malformed value is ignored with a warning on stderr.
class TestDelay {
 public:
  static TestDelay from_env(int depth);
  /// After taking a batch from the loader: waits until the slow loader would have it.
  void apply();
  /// Forgets the batches the slow loader made ahead: each timed phase starts with none
  /// (the loop's step_ms counts the real loader's batches, not these).
  void restart() {
    ready_ns_ = 0;
    taken_ns_.clear();
  }
  double ms() const { return ms_; }

 private:
  double ms_ = 0;
  int depth_ = 1;
  int64_t ready_ns_ = 0;             // when the last batch was ready
  std::vector<int64_t> taken_ns_;    // when each batch was taken (the last `depth`)
};

/// The loader alone over `batches` batches, as ms_per_batch (loader_util.h) measures it
/// (data_ms: wall time / batches produced), plus each batch's arrival interval (ms between
/// consecutive next() returns, the test delay included), the first `skip` dropped: they
/// came from the batches prefetched before the window. Throws what Loader::next() throws,
/// or std::runtime_error when the loader runs out.
struct DataSamples {
  double data_ms = 0;
  std::vector<double> per_batch_ms;
  double sample_cpu_ms = 0;  ///< LoaderWindow::sample_cpu_ms of the window, ms
};
DataSamples measure_data(Loader& loader, int batches, int batch_size, int skip, TestDelay& delay);

/// After its own measure_data (or its failure), a rank keeps taking batches from its loader,
/// dropping them, until every rank has finished measuring (dist::PendingBarrier). Otherwise
/// the last rank to finish measures its last batches with the others' loaders stopped, on
/// cores that the data-bound loop then shares: its data time, the straggler prediction's
/// input, read low (by up to 20 % at 2 ranks on 2 cores, docs/mpi.md).
/// Collective: every rank calls it, also after a failure. Never throws: a loader that fails
/// or runs out stops the taking, not the waiting. Returns at once with one rank.
void load_until_every_rank_measured(Loader& loader, TestDelay& delay);

/// One rank's figures of its loop, gathered to rank 0 in this order.
struct RankFigures {
  double data_ms = 0, compute_ms = 0, step_ms = 0, au_pct = 0, images_per_second = 0;
  double consumer_wait_ms = 0, worker_wait_ms = 0, sync_wait_ms = 0;
  double sync_cpu_ms = 0;  ///< the loop thread's CPU in the collective per step (MPI_Allreduce's reduction)
  double read_ms = 0, decode_ms = 0, transform_ms = 0, sample_cpu_ms = 0;
  double items = 0;  ///< images the rank's loop counted (SetItemsProcessed)
  double data_drift_pct = 0;  ///< the loader alone after the loop against before, %
  double loop_cpu_drift_pct = 0;  ///< the workers' CPU per sample in the loop against alone, %
};

/// Collective (every rank calls it after its loop): gathers every rank's figures and
/// data-time samples to rank 0, which sets the counters listed at the top (per-rank and
/// global only when world > 1; the straggler prediction always, its sequences drawn in
/// runs of 4 x `workers` batch intervals) and the case's items.
void add_rank_counters(benchmark::State& state, const RankFigures& mine,
                       const std::vector<double>& data_samples, int prefetch, int workers);

/// Collective, after every rank wrote its --trace (rank 0 to `path`, rank k to
/// `path`.rank<k>): rank 0 merges them into `path`, one process per rank (pid = rank, named
/// "rank k (host)"), each rank's times shifted onto rank 0's clock by the difference of the
/// recorders' origins (steady_clock: exact on one host; across hosts the clocks are not
/// aligned, and the spans of each rank only compare among themselves), and removes the
/// per-rank files. Returns false (after a warning on stderr) when a rank's file could not be
/// read; that file is then left in place.
bool merge_rank_traces(const std::string& path, int64_t origin_ns, const std::string& host);

/// "rank K: MESSAGE" for an agreement that failed (a failure on another rank, named).
std::string rank_failure(const dist::Agreement& a);

}  // namespace pipebench::bench
