// The probe of a fix's costliest files (issue 34 item 4): a fix on the same dataset
// (decode:auto) is priced file by file (model/ratio_fix_price.h), and its paired case's
// round of typical images may hold none of the files that set a heavy-tailed dataset's
// step (the mix: the round of 256 held none of its 44 large originals, whose progressive
// JPEGs an ROI / DCT-scaled decode barely speeds up). So its end-to-end case, before its
// loader starts, times today's pipeline against the fix's on today's costliest timed
// files: one thread, each file A B B A or B A A B (alternating) on the same bytes and
// draws (bench/cases/paired_runner.h), costliest first, skipping a file already measured
// (the round, an earlier probe) or known bad, down to kProbeFloor times the median timed
// cost (below it the round's images stand for them), at most kProbeFiles files, within
// `budget_s` of thread CPU (a file whose estimated four runs, 4 x its visit cost, do not
// fit what is left is passed over for a cheaper one).
// The first run of each file meets the colder caches (its bytes just read), on A for one
// file and on B for the next; for the large files the probe is for (tens to hundreds of ms
// a run) that is far below the noise.
// Units: ms (file_ms: dataset index -> today's mean cost per visit), s. Errors: a file that
// fails to decode is left out (the loader's cases report it); std::bad_alloc.
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "bench/run/bench_context.h"
#include "model/copy_fix_price.h"
#include "transforms/pipeline.h"

namespace pipebench::bench {

inline constexpr double kProbeFloor = 2.0;
/// The probe's share of --budget (seconds per case) in each of the fix's end-to-end cases:
/// 4 s of the default 8, about eight of the mix's large originals (4 runs of 50-480 ms);
/// each case at another worker count probes the next ones.
inline constexpr double kProbeBudgetShare = 0.5;
inline constexpr size_t kProbeFiles = 64;

/// Each probed file's costs: its dataset index, today's and the fix's thread CPU ms per run.
std::vector<model::PairedImageCost> probe_costliest(BenchContext& ctx, const Pipeline& today, const Pipeline& fix,
                                                    const std::map<size_t, double>& file_ms,
                                                    const std::vector<model::PairedImageCost>& measured,
                                                    double budget_s);

}  // namespace pipebench::bench
