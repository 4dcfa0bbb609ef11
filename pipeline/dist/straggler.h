// The straggler prediction: the step time of synchronised data-parallel training, predicted
// from each rank's measured per-batch data times (their distribution, not just the mean)
// and the step's compute time, to set against the measured synchronised loop.
//
// In synchronous data parallelism step k ends only when every rank has its batch k and has
// computed on it, so the step is paced by the slowest rank at that step:
//     step_k = max over ranks r of max(data_r,k, compute).
// Two estimates, both by resampling each rank's own samples (with replacement, the ranks
// independent; a fixed seed, so a run's figures are reproducible):
//   iid_max_ms   E[max_r max(D_r, compute)], D_r drawn from rank r's samples: the step
//                when no batch can be prepared ahead (no prefetch).
//   queue_ms     the loop as pipebench runs it, simulated by the step model
//                (model/step_model.h: each interval one cost, batch 1, one worker, the ranks
//                resampled with CostOrder::kResample; sequences x steps steps): rank r's
//                loader makes batches one after another (batch k takes a drawn D_r), but
//                at most `prefetch` batches are in flight (batch k starts only when batch
//                k - prefetch was released); the synchronised step k starts when every
//                rank's batch k is ready and the previous step has ended, releases the
//                batches at its start, and takes `compute` ms. Each rank's sequence is
//                drawn in runs of `block` consecutive samples (a moving-block bootstrap):
//                with w workers a loader delivers its batches in bunches, short intervals
//                then a long one, so consecutive intervals are not independent; runs of w
//                keep a bunch's sum, which independent draws lose (they make runs of long
//                intervals that never happen), and each run's start is a point where two
//                ranks' bunches may fall out of phase, so runs are best a few bunches long:
//                bench/run/ranks.cpp draws 4 x workers (at 2 ranks x 2 workers on 2 cores,
//                independent draws overpredicted by 14.5 %, runs of 2 by 6.8-9.4 %, runs of
//                8 by -1.4 and -1.5 %). The mean step time over the
//                steady state (the first 2 x prefetch steps dropped) is the prediction: a
//                fast rank's prefetched batches absorb part of another's late one, which
//                E[max] ignores; with one rank it tends to max(mean D, compute).
//   naive_ms     max(max_r mean(D_r), compute): the mean-based bound of model/bound.h
//                taken at the slowest rank.
// Units: ms. Input: per-rank samples in ms (each rank at least one sample, all finite and
// >= 0), compute >= 0, prefetch >= 1.
// Errors: std::invalid_argument naming what is wrong.
#pragma once

#include <cstdint>
#include <vector>

namespace pipebench::dist {

struct StragglerPrediction {
  double iid_max_ms = 0;
  double queue_ms = 0;
  double naive_ms = 0;
  int slowest_rank = 0;  ///< the rank with the largest mean data time
};

struct StragglerOptions {
  int draws = 20000;        ///< resampled steps for iid_max_ms
  int sequences = 40;       ///< simulated sequences for queue_ms
  int steps = 400;          ///< steps per sequence
  int block = 1;            ///< queue_ms: consecutive samples per draw (the loader's workers)
  uint64_t seed = 12345;
};

StragglerPrediction predict_synchronised_step(const std::vector<std::vector<double>>& data_ms,
                                              double compute_ms, int prefetch,
                                              const StragglerOptions& options = {});

/// 100 x (predicted - measured) / measured; 0 when measured is not > 0
/// (model::prediction_error_pct, the one formula).
double prediction_error_pct(double predicted_ms, double measured_ms);

}  // namespace pipebench::dist
