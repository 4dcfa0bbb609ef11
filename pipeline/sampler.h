// Sampler: which sample indices make up each epoch, in which order (PyTorch's
// SequentialSampler / RandomSampler / DistributedSampler and BatchSampler, in one place).
//
// With shuffle, the permutation of epoch e is a Fisher-Yates shuffle driven by
// Rng(seed, e) and is the same on every rank. Sharding by (rank, world_size) then keeps
// positions rank, rank + world_size, ... of that order: shards are disjoint and together
// cover the dataset exactly once (unlike DistributedSampler, which pads with repeats;
// shard sizes differ by at most one). Batching cuts the shard into batch_size runs; the
// last, short batch is dropped when drop_last.
//
// Grouped sources (WebDataset shards, datasets/sample_source.h group_starts()): the order
// is WebDataset's (webdataset.ShardList + shuffle): with shuffle, the shards are permuted
// by Rng(seed, e), whole shards go to ranks (positions rank, rank + world_size, ... of the
// shard order: shards are never split, so shard sizes decide the ranks' sample counts), each
// shard's members are read in stored order, and a bounded shuffle buffer of
// shuffle_buffer samples mixes them: each arriving sample enters the buffer, and once it
// holds shuffle_buffer samples a uniformly chosen one leaves; the rest drain at random at
// the end. Every sample of the rank's shards comes out exactly once; the same seed gives
// the same order. Without shuffle: shards in stored order, members in stored order.
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
  /// Grouped sources only: samples held by the shuffle buffer (WebDataset's
  /// .shuffle(1000) default size); 1 keeps the shards' stored order after the shard shuffle.
  int shuffle_buffer = 1000;
};

/// Indices of this rank's shard for one epoch, in order.
std::vector<int64_t> epoch_indices(size_t dataset_size, int epoch, const SamplerOptions& options);
/// The same for a grouped source: group_starts as SampleSource::group_starts() (empty: one
/// sample per group, the overload above). Throws std::invalid_argument also for
/// group_starts not ascending from 0 within dataset_size, fewer groups than ranks, or
/// shuffle_buffer < 1.
std::vector<int64_t> epoch_indices(size_t dataset_size, const std::vector<size_t>& group_starts,
                                   int epoch, const SamplerOptions& options);

/// Number of batches of this rank in one epoch.
int64_t batches_per_epoch(size_t dataset_size, int batch_size, const SamplerOptions& options);
/// The same for a grouped source, from epoch 0's shard assignment (with shuffle and
/// unequal shards a rank's count can change from epoch to epoch by a shard's size).
int64_t batches_per_epoch(size_t dataset_size, const std::vector<size_t>& group_starts,
                          int batch_size, const SamplerOptions& options);

}  // namespace pipebench
