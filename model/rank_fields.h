// The figures every rank of a data-parallel run (mpirun) reports to rank 0, one table:
// bench gathers them in this order (bench/run/ranks.cpp), writes each as the counter
// rank<k>_<name> of the BM_EndToEnd row and aggregates them once into the row's global
// counters (world_size, data_ms = the slowest rank's, data_ms_mean, step_ms and au_pct =
// means, au_pct_min, au_pass, images_per_second_total, load_imbalance, slowest_rank);
// pipebench-report reads both and recomputes nothing (report/ranks.h). Units: ms per batch,
// %, images/s as each name says; items is a count (in the total only, not per rank).
#pragma once

#include <iterator>
#include <string>
#include <string_view>

#include "model/counters.h"

namespace pipebench::model {

enum class RankField {
  kDataMs, kComputeMs, kStepMs, kAuPct, kImagesPerSecond, kConsumerWaitMs, kWorkerWaitMs,
  kSyncWaitMs, kSyncCpuMs, kReadMs, kDecodeMs, kTransformMs, kSampleCpuMs, kItems, kDataDriftPct,
  kLoopCpuDriftPct, kCount
};

inline constexpr std::string_view kRankFieldNames[] = {
    "data_ms", "compute_ms", "step_ms", "au_pct", "images_per_second", "consumer_wait_ms",
    "worker_wait_ms", "sync_wait_ms", "sync_cpu_ms", "read_ms", "decode_ms", "transform_ms", "sample_cpu_ms",
    "items", "data_drift_pct", "loop_cpu_drift_pct"};
static_assert(std::size(kRankFieldNames) == static_cast<size_t>(RankField::kCount),
              "one name per RankField, in order");

inline std::string_view rank_field_name(RankField f) { return kRankFieldNames[static_cast<size_t>(f)]; }

/// The part of the schema's pattern rank{} (model/counters.h, CounterId::kRankFigure) for
/// rank k's field: "<k>_<name>". Each name but items is a schema entry of its own, whose
/// unit the rank's counter has (tests/counters_test.cpp).
inline std::string rank_part(int rank, RankField f) {
  return std::to_string(rank) + "_" + std::string(rank_field_name(f));
}

/// The counter of rank k's field: "rank<k>_<name>".
inline std::string rank_counter(int rank, RankField f) { return counter_name(CounterId::kRankFigure, rank_part(rank, f)); }

}  // namespace pipebench::model
