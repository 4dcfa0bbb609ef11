// Per-image costs of the round cases (BM_Read, BM_Decode, BM_Sample; bench/run/image_round.h),
// so that two cases of one run can be compared image by image, not only as means: the
// photos-full ROI/full ratio, for instance, spreads from 1.0 on small images to 2+ on
// large ones, and a mean over a round hides which images pay (issue 9, item 3).
//
// Kept for datasets of at most kMaxImages images ("a few thousand"; the arrays grow with
// the dataset, one entry per image visited). Each case records, per dataset index it
// visited, the sum of its cost over every visit (Google Benchmark's estimation runs and
// repetitions included) and the visit count; the JSON gives the mean.
//
// JSON, the top-level "per_image" object of the run's file (bench/run/run_output.h):
//   {"images": N, "files": ["<class>/<file>", ... dataset index order, relative to --data],
//    "cases": {"<case as registered, e.g. BM_Decode/roi>":
//                {"clock": "thread_cpu" | "wall", "index": [i, ...], "us": [mean us, ...],
//                 "visits": [n, ...]}, ...}}
// A case's key is its name as registered and passed to --benchmark_filter: Google
// Benchmark's row name adds "/real_time" to the BM_Read cases. "us" is microseconds per
// image: thread CPU time for CPU-bound work, wall time for reads (as us_per_image).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pipebench::bench {

enum class CostClock { kThreadCpu, kWall };

class PerImageCosts {
 public:
  static constexpr size_t kMaxImages = 5000;

  /// Records nothing when dataset_size > kMaxImages.
  explicit PerImageCosts(size_t dataset_size);

  bool enabled() const { return enabled_; }

  /// The case now running (benchmarks.h register_case calls it before each run of a case);
  /// later add() calls belong to it.
  void begin_case(const std::string& name);

  /// One visit of dataset image `index` by the current case, `ns` nanoseconds on `clock`.
  /// Ignored when disabled, before any begin_case, or for an index >= dataset_size.
  void add(size_t index, int64_t ns, CostClock clock);

  /// The "per_image" object above as JSON text; "cases" holds only cases that recorded
  /// something. `files[i]` names dataset index i.
  std::string to_json(const std::vector<std::string>& files) const;

 private:
  struct Case {
    std::string name;
    CostClock clock = CostClock::kThreadCpu;
    std::vector<int64_t> ns;        // per dataset index
    std::vector<uint32_t> visits;   // per dataset index
    bool any = false;
  };
  size_t size_;
  bool enabled_;
  std::vector<Case> cases_;
  Case* current_ = nullptr;
};

}  // namespace pipebench::bench
