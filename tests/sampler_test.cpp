// Sampler: epoch orders, sharding and batch counts, checked against what they must be
// (permutations, disjoint covering shards, floor/ceil counts) rather than against copies
// of sampler.cpp.
#include "pipeline/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>
#include <vector>

namespace pipebench {
namespace {

std::vector<int64_t> iota(size_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

TEST(Sampler, SequentialIsIdentity) {
  EXPECT_EQ(epoch_indices(17, 0, {}), iota(17));
  EXPECT_EQ(epoch_indices(17, 3, {}), iota(17));
}

TEST(Sampler, ShuffleIsAPermutationThatChangesPerEpoch) {
  SamplerOptions o;
  o.shuffle = true;
  o.seed = 42;
  auto e0 = epoch_indices(100, 0, o);
  auto e1 = epoch_indices(100, 1, o);
  EXPECT_NE(e0, iota(100));
  EXPECT_NE(e0, e1);
  auto sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota(100));
  sorted = e1;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota(100));
  // Reproducible from (seed, epoch); another seed gives another order.
  EXPECT_EQ(epoch_indices(100, 0, o), e0);
  o.seed = 43;
  EXPECT_NE(epoch_indices(100, 0, o), e0);
}

TEST(Sampler, ShuffleIsRoughlyUniform) {
  // Where element 0 lands over 2000 epochs of a 10-element shuffle: about 200 times per
  // position. Fixed seeds, so this is deterministic; the bounds catch a biased shuffle
  // (e.g. swapping with any j in [0, n) instead of [0, i]) without being tight.
  SamplerOptions o;
  o.shuffle = true;
  o.seed = 7;
  std::vector<int> hits(10, 0);
  for (int e = 0; e < 2000; ++e) {
    auto order = epoch_indices(10, e, o);
    hits[std::find(order.begin(), order.end(), 0) - order.begin()]++;
  }
  for (int p = 0; p < 10; ++p) {
    EXPECT_GT(hits[p], 140) << "position " << p;
    EXPECT_LT(hits[p], 260) << "position " << p;
  }
}

TEST(Sampler, ShardsAreDisjointAndCover) {
  for (bool shuffle : {false, true}) {
    SamplerOptions o;
    o.shuffle = shuffle;
    o.seed = 9;
    o.world_size = 3;
    std::vector<int64_t> all;
    std::vector<size_t> sizes;
    for (int r = 0; r < 3; ++r) {
      o.rank = r;
      auto shard = epoch_indices(31, 2, o);
      sizes.push_back(shard.size());
      all.insert(all.end(), shard.begin(), shard.end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, iota(31)) << "shuffle " << shuffle;
    auto [mn, mx] = std::minmax_element(sizes.begin(), sizes.end());
    EXPECT_LE(*mx - *mn, 1u);
  }
}

TEST(Sampler, ShardsFollowTheCommonOrder) {
  SamplerOptions o;
  o.shuffle = true;
  o.seed = 5;
  auto full = epoch_indices(20, 1, o);
  o.world_size = 4;
  o.rank = 2;
  auto shard = epoch_indices(20, 1, o);
  ASSERT_EQ(shard.size(), 5u);
  for (size_t k = 0; k < shard.size(); ++k) EXPECT_EQ(shard[k], full[2 + 4 * k]);
}

TEST(Sampler, BatchCounts) {
  SamplerOptions o;
  EXPECT_EQ(batches_per_epoch(40, 8, o), 5);
  EXPECT_EQ(batches_per_epoch(41, 8, o), 6);
  o.drop_last = true;
  EXPECT_EQ(batches_per_epoch(41, 8, o), 5);
  EXPECT_EQ(batches_per_epoch(7, 8, o), 0);
  o.drop_last = false;
  o.world_size = 3;
  o.rank = 2;  // positions 2, 5, ..., 29: 10 samples
  EXPECT_EQ(batches_per_epoch(31, 4, o), 3);
  o.rank = 0;  // 11 samples
  EXPECT_EQ(batches_per_epoch(31, 4, o), 3);
  EXPECT_EQ(batches_per_epoch(31, 11, o), 1);
}

TEST(Sampler, RejectsBadOptions) {
  SamplerOptions o;
  EXPECT_THROW(epoch_indices(0, 0, o), std::invalid_argument);
  EXPECT_THROW(batches_per_epoch(10, 0, o), std::invalid_argument);
  o.world_size = 0;
  EXPECT_THROW(epoch_indices(10, 0, o), std::invalid_argument);
  o.world_size = 2;
  o.rank = 2;
  try {
    epoch_indices(10, 0, o);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rank"), std::string::npos) << e.what();
  }
  o.rank = -1;
  EXPECT_THROW(batches_per_epoch(10, 2, o), std::invalid_argument);
}


// Grouped (shard) orders: WebDataset's shard shuffle, whole shards per rank, a bounded
// shuffle buffer. Checked by properties: a permutation, shards never split across ranks,
// displacement bounded by the buffer, determinism.
const std::vector<size_t> kStarts = {0, 10, 20, 30, 40, 50};  // 6 shards of 10, the last 7

int shard_of(int64_t i) { return static_cast<int>(std::upper_bound(kStarts.begin(), kStarts.end(), static_cast<size_t>(i)) - kStarts.begin()) - 1; }

TEST(SamplerGroups, WithoutShuffleShardsAndMembersKeepTheirOrder) {
  EXPECT_EQ(epoch_indices(57, kStarts, 0, {}), iota(57));
}

TEST(SamplerGroups, ShuffleIsAPermutationMixedWithinTheBuffer) {
  SamplerOptions o;
  o.shuffle = true;
  o.seed = 5;
  o.shuffle_buffer = 8;
  const auto e0 = epoch_indices(57, kStarts, 0, o);
  auto sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota(57));
  EXPECT_EQ(epoch_indices(57, kStarts, 0, o), e0);   // reproducible
  EXPECT_NE(epoch_indices(57, kStarts, 1, o), e0);   // another epoch, another order
  // Nothing leaves before the buffer is full: the first output is one of the 8 samples
  // streamed first, i.e. the first 8 members of the first shard read. The shard order does
  // not depend on the buffer, so buffer 1 (the stream itself) names that shard.
  SamplerOptions stream = o;
  stream.shuffle_buffer = 1;
  const int64_t first_streamed = epoch_indices(57, kStarts, 0, stream).front();
  EXPECT_EQ(shard_of(e0.front()), shard_of(first_streamed));
  EXPECT_LT(e0.front(), first_streamed + 8);
  // Buffer 1 keeps the members of each shard contiguous and in order.
  o.shuffle_buffer = 1;
  const auto plain = epoch_indices(57, kStarts, 0, o);
  for (size_t p = 1; p < plain.size(); ++p) {
    if (shard_of(plain[p]) == shard_of(plain[p - 1])) {
      EXPECT_EQ(plain[p], plain[p - 1] + 1);
    }
  }
  int runs = 1;
  for (size_t p = 1; p < plain.size(); ++p) runs += shard_of(plain[p]) != shard_of(plain[p - 1]);
  EXPECT_EQ(runs, 6);  // each shard read once, whole
  std::set<int> first_shards;  // the shard order is shuffled too
  for (uint64_t seed = 0; seed < 10; ++seed) {
    o.seed = seed;
    first_shards.insert(shard_of(epoch_indices(57, kStarts, 0, o).front()));
  }
  EXPECT_GT(first_shards.size(), 1u);
}

TEST(SamplerGroups, RanksGetWholeDisjointShardsCoveringTheDataset) {
  SamplerOptions o;
  o.shuffle = true;
  o.seed = 3;
  o.world_size = 4;
  std::vector<int> owner(6, -1);
  std::vector<int64_t> all;
  for (int r = 0; r < 4; ++r) {
    o.rank = r;
    const auto mine = epoch_indices(57, kStarts, 2, o);
    for (int64_t i : mine) {
      const int s = shard_of(i);
      EXPECT_TRUE(owner[s] == -1 || owner[s] == r) << "shard " << s << " split across ranks";
      owner[s] = r;
    }
    all.insert(all.end(), mine.begin(), mine.end());
    int64_t count = 0;
    SamplerOptions epoch0 = o;
    for (int64_t i : epoch_indices(57, kStarts, 0, epoch0)) count += i >= 0;
    EXPECT_EQ(batches_per_epoch(57, kStarts, 5, o), (count + 4) / 5);
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, iota(57));
}

TEST(SamplerGroups, BadGroupsAreRefused) {
  SamplerOptions o;
  EXPECT_THROW(epoch_indices(10, {1, 5}, 0, o), std::invalid_argument);      // not from 0
  EXPECT_THROW(epoch_indices(10, {0, 5, 5}, 0, o), std::invalid_argument);   // not ascending
  EXPECT_THROW(epoch_indices(10, {0, 12}, 0, o), std::invalid_argument);     // past the end
  o.world_size = 3;
  EXPECT_THROW(epoch_indices(10, {0, 5}, 0, o), std::invalid_argument);      // 2 shards, 3 ranks
  o.world_size = 1;
  o.shuffle_buffer = 0;
  EXPECT_THROW(epoch_indices(10, {0, 5}, 0, o), std::invalid_argument);
}

}  // namespace
}  // namespace pipebench
