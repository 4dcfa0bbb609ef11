// Sampler: epoch order, sharding and batching (see sampler.h).
#include "pipeline/sampler.h"

#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "transforms/rng.h"

namespace pipebench {
namespace {

void check(size_t dataset_size, const SamplerOptions& o) {
  if (dataset_size == 0) throw std::invalid_argument("sampler: the dataset is empty");
  if (o.world_size <= 0) {
    throw std::invalid_argument("sampler: world_size must be >= 1, got " +
                                std::to_string(o.world_size));
  }
  if (o.rank < 0 || o.rank >= o.world_size) {
    throw std::invalid_argument("sampler: rank must be in [0, " + std::to_string(o.world_size) +
                                "), got " + std::to_string(o.rank));
  }
}

// Positions rank, rank + world, ... of a dataset_size-long order.
size_t shard_size(size_t dataset_size, const SamplerOptions& o) {
  const size_t r = static_cast<size_t>(o.rank), w = static_cast<size_t>(o.world_size);
  return r < dataset_size ? (dataset_size - r + w - 1) / w : 0;
}

}  // namespace

std::vector<int64_t> epoch_indices(size_t dataset_size, int epoch, const SamplerOptions& options) {
  check(dataset_size, options);
  std::vector<int64_t> order(dataset_size);
  std::iota(order.begin(), order.end(), int64_t{0});
  if (options.shuffle) {
    // Fisher-Yates (Durstenfeld): for i = n-1 .. 1, swap order[i] with order[j], j in [0, i].
    // The generator is keyed by (seed, epoch) through Rng::for_sample's hash, with a sample
    // index no sample has (2^64 - 1), so it is unrelated to every sample's transform stream.
    Rng rng = Rng::for_sample(options.seed, static_cast<uint64_t>(epoch), ~uint64_t{0});
    for (size_t i = dataset_size - 1; i > 0; --i) {
      const auto j = static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(i)));
      std::swap(order[i], order[j]);
    }
  }
  if (options.world_size == 1) return order;
  std::vector<int64_t> shard;
  shard.reserve(shard_size(dataset_size, options));
  for (size_t p = static_cast<size_t>(options.rank); p < dataset_size;
       p += static_cast<size_t>(options.world_size)) {
    shard.push_back(order[p]);
  }
  return shard;
}

int64_t batches_per_epoch(size_t dataset_size, int batch_size, const SamplerOptions& options) {
  check(dataset_size, options);
  if (batch_size <= 0) {
    throw std::invalid_argument("sampler: batch_size must be >= 1, got " + std::to_string(batch_size));
  }
  const auto n = static_cast<int64_t>(shard_size(dataset_size, options));
  return options.drop_last ? n / batch_size : (n + batch_size - 1) / batch_size;
}

}  // namespace pipebench
