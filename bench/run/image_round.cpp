#include "bench/run/image_round.h"

#include "bench/run/counter_put.h"

namespace pipebench::bench {

std::vector<size_t> round_indices(size_t dataset_size, size_t round) {
  std::vector<size_t> out;
  if (round == 0 || dataset_size <= round) {
    for (size_t i = 0; i < dataset_size; ++i) out.push_back(i);
    return out;
  }
  for (size_t k = 0; k < round; ++k) out.push_back(k * dataset_size / round);
  return out;
}

void set_round_counters(benchmark::State& state, int64_t images, size_t round_size,
                        int64_t cpu_or_wall_ns) {
  state.SetItemsProcessed(images);
  put(state, CounterId::kImagesPerRound, static_cast<double>(round_size));
  if (images > 0) put(state, CounterId::kUsPerImage, cpu_or_wall_ns / 1e3 / images);
}

}  // namespace pipebench::bench
