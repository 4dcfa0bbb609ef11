// "Your framework's loader" (issue 8, candidate 6): the JSON scripts/torch_peer.py writes
// (the run's spec through torchvision 0.14 + torch DataLoader on the same files, images/s
// per num_workers, the operators it left out) read and set into the what-if table as one
// more row, beside pipebench's own loader at the same worker count.
//
// The row: data_ms = batch x 1000 / the peer's images/s (ms per batch of the run's batch),
// step = max(data, compute), AU and images/s as every row (report/whatif.h). Its worker
// count: the table's evaluation count when the peer measured it, else the peer's fastest
// count within the cores available, else its fastest. It has no per-sample CPU cost (the
// peer measures throughput, not CPU time): cpu_ms_per_sample and the savings are 0 in the
// row and null in the JSON.
//
// Errors: read_peer throws std::runtime_error naming the file and what is wrong (missing,
// not JSON, no results).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "report/report.h"
#include "report/run.h"

namespace pipebench::report {

struct PeerPoint {
  int num_workers = 0;
  double images_per_second = 0;  ///< loader alone, wall time
};

struct PeerLoader {
  std::string file;
  std::string versions;          ///< "torch X, torchvision Y"
  int batch = 0;
  bool pin_memory = false;       ///< took effect
  std::vector<PeerPoint> results;
  std::vector<std::string> left_out, approximated;  ///< "op (reason)"
};

/// Reads a torch_peer.py JSON. Throws std::runtime_error (see above).
PeerLoader read_peer(const std::filesystem::path& file);

/// Adds the peer's row to report.what_if (before the operators' prices) and its summary,
/// with pipebench's BM_Loader/<recipe>/workers:<n> images/s from `run`. A report without
/// a table gets the summary only.
void add_peer(Report& report, const BenchRun& run, const PeerLoader& peer);

}  // namespace pipebench::report
