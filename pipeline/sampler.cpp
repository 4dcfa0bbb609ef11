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

namespace {

void check_batch(int batch_size) {
  if (batch_size <= 0) {
    throw std::invalid_argument("sampler: batch_size must be >= 1, got " + std::to_string(batch_size));
  }
}

int64_t batches_of(int64_t samples, int batch_size, bool drop_last) {
  return drop_last ? samples / batch_size : (samples + batch_size - 1) / batch_size;
}

void check_groups(size_t dataset_size, const std::vector<size_t>& starts, const SamplerOptions& o) {
  if (starts.empty() || starts.front() != 0) {
    throw std::invalid_argument("sampler: group starts must begin at sample 0");
  }
  for (size_t g = 1; g < starts.size(); ++g) {
    if (starts[g] <= starts[g - 1] || starts[g] >= dataset_size) {
      throw std::invalid_argument("sampler: group " + std::to_string(g) + " starts at " +
                                  std::to_string(starts[g]) + ": starts must ascend within the " +
                                  std::to_string(dataset_size) + " samples");
    }
  }
  if (starts.size() < static_cast<size_t>(o.world_size)) {
    throw std::invalid_argument("sampler: " + std::to_string(starts.size()) + " shards for " +
                                std::to_string(o.world_size) +
                                " ranks: whole shards go to ranks, so every rank needs one; "
                                "pack smaller shards");
  }
  if (o.shuffle_buffer < 1) {
    throw std::invalid_argument("sampler: shuffle_buffer must be >= 1, got " +
                                std::to_string(o.shuffle_buffer));
  }
}

// The groups this rank reads in epoch e, in order: positions rank, rank + world, ... of the
// (shuffled) group order.
std::vector<size_t> rank_groups(size_t groups, int epoch, const SamplerOptions& o) {
  std::vector<size_t> order(groups);
  std::iota(order.begin(), order.end(), size_t{0});
  if (o.shuffle) {
    // Keyed apart from the per-sample order above (sample index 2^64 - 2).
    Rng rng = Rng::for_sample(o.seed, static_cast<uint64_t>(epoch), ~uint64_t{0} - 1);
    for (size_t i = groups - 1; i > 0; --i) {
      std::swap(order[i], order[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(i)))]);
    }
  }
  std::vector<size_t> mine;
  for (size_t p = static_cast<size_t>(o.rank); p < groups; p += static_cast<size_t>(o.world_size)) {
    mine.push_back(order[p]);
  }
  return mine;
}

size_t group_end(size_t dataset_size, const std::vector<size_t>& starts, size_t g) {
  return g + 1 < starts.size() ? starts[g + 1] : dataset_size;
}

}  // namespace

std::vector<int64_t> epoch_indices(size_t dataset_size, const std::vector<size_t>& group_starts,
                                   int epoch, const SamplerOptions& options) {
  if (group_starts.empty()) return epoch_indices(dataset_size, epoch, options);
  check(dataset_size, options);
  check_groups(dataset_size, group_starts, options);
  std::vector<int64_t> out;
  const bool mix = options.shuffle && options.shuffle_buffer > 1;
  const auto capacity = static_cast<size_t>(options.shuffle_buffer);
  std::vector<int64_t> buffer;
  Rng rng = Rng::for_sample(options.seed, static_cast<uint64_t>(epoch), ~uint64_t{0} - 2);
  // WebDataset's shuffle: a uniformly chosen buffered sample leaves, the last takes its place.
  auto take_one = [&] {
    const auto k = static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(buffer.size()) - 1));
    out.push_back(buffer[k]);
    buffer[k] = buffer.back();
    buffer.pop_back();
  };
  for (size_t g : rank_groups(group_starts.size(), epoch, options)) {
    for (size_t i = group_starts[g]; i < group_end(dataset_size, group_starts, g); ++i) {
      if (!mix) {
        out.push_back(static_cast<int64_t>(i));
        continue;
      }
      buffer.push_back(static_cast<int64_t>(i));
      if (buffer.size() >= capacity) take_one();
    }
  }
  while (!buffer.empty()) take_one();
  return out;
}

int64_t batches_per_epoch(size_t dataset_size, int batch_size, const SamplerOptions& options) {
  check(dataset_size, options);
  check_batch(batch_size);
  const auto n = static_cast<int64_t>(shard_size(dataset_size, options));
  return batches_of(n, batch_size, options.drop_last);
}

int64_t batches_per_epoch(size_t dataset_size, const std::vector<size_t>& group_starts,
                          int batch_size, const SamplerOptions& options) {
  if (group_starts.empty()) return batches_per_epoch(dataset_size, batch_size, options);
  check(dataset_size, options);
  check_groups(dataset_size, group_starts, options);
  check_batch(batch_size);
  int64_t n = 0;
  for (size_t g : rank_groups(group_starts.size(), 0, options)) {
    n += static_cast<int64_t>(group_end(dataset_size, group_starts, g) - group_starts[g]);
  }
  return batches_of(n, batch_size, options.drop_last);
}

}  // namespace pipebench
