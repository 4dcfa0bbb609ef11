#include "bench/cases/paired_runner.h"

namespace pipebench::bench {

std::vector<model::PairedImageCost> image_costs(const PairedTimes& t, const PairedSide& a) {
  std::vector<model::PairedImageCost> images;
  for (size_t j = 0; j < t.image_runs.size(); ++j) {
    if (t.image_runs[j] == 0) continue;
    const double runs = 1e6 * t.image_runs[j];  // each side's runs of it (two per block); ns -> ms
    images.push_back({a.index[j], static_cast<double>(t.a_image_ns[j]) / runs,
                      static_cast<double>(t.b_image_ns[j]) / runs});
  }
  return images;
}

}  // namespace pipebench::bench
