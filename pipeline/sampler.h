// Sampler: which sample indices make up each epoch, in which order (PyTorch's
// SequentialSampler / RandomSampler / DistributedSampler and BatchSampler, in one place).
//
// With shuffle, the permutation of epoch e is a Fisher-Yates shuffle driven by
// Rng(seed, e) and is the same on every rank. Sharding by (rank, world_size) then keeps
// positions rank, rank + world_size, ... of that order: shards are disjoint and together
// cover the dataset exactly once (unlike DistributedSampler, which pads with repeats;
// shard sizes differ by at most one). Batching cuts the shard into batch_size runs; the
// last, short batch is dropped when drop_last.
// Errors: std::invalid_argument for batch_size <= 0, world_size <= 0, rank outside
// [0, world_size), or an empty dataset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pipebench {

struct SamplerOptions {
  bool shuffle = false;
  uint64_t seed = 0;      ///< shuffle seed; the loader also seeds transforms with it
  bool drop_last = false;
  int rank = 0;
  int world_size = 1;
};

/// Indices of this rank's shard for one epoch, in order.
std::vector<int64_t> epoch_indices(size_t dataset_size, int epoch, const SamplerOptions& options);

/// Number of batches of this rank in one epoch.
int64_t batches_per_epoch(size_t dataset_size, int batch_size, const SamplerOptions& options);

}  // namespace pipebench
