// Storage (issue 12): the cold setting really empties the page cache (mincore), the
// throttle's link admits reads in order, and the loader over WebDataset shards delivers
// every sample once per epoch with the same bytes at any worker count, equal to the
// ImageFolder it was packed from (matched by content, not by the loader's own path).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "datasets/file_io.h"
#include "datasets/image_folder.h"
#include "datasets/pack.h"
#include "datasets/shard_set.h"
#include "datasets/storage.h"
#include "pipeline/loader.h"
#include "tests/test_data.h"
#include "transforms/recipes.h"

namespace pipebench {
namespace {

SyntheticOptions small_set() {
  SyntheticOptions o;
  o.count = 40;
  o.classes = 4;
  o.min_width = o.max_width = 64;
  o.min_height = o.max_height = 48;
  o.seed = 3;
  return o;
}

const std::filesystem::path& folder_root() {
  static const auto root = testing::make_dataset("storage_set", small_set());
  return root;
}

const std::filesystem::path& shard_root() {
  static const auto root = [] {
    // In this process's scratch folder: a fixed /tmp name was shared by the two test
    // processes ctest -j runs at once (each removed the other's shards).
    auto out = testing::scratch_dir("storage_shards");
    PackOptions o;
    o.shard_size = 8;  // 5 shards
    std::ostringstream log;
    pack_dataset(folder_root(), out, o, log);
    return out;
  }();
  return root;
}

TEST(Storage, ColdDropsThePagesAndReadsStillGiveTheBytes) {
  ImageFolder ds(folder_root());
  std::vector<uint8_t> buf;
  for (size_t i = 0; i < ds.size(); ++i) ds.read(i, buf);  // warm
  StoredSource warm(ds, {CacheMode::kWarm, nullptr});
  EXPECT_GT(warm.check_residency().resident_share, 0.99);
  StoredSource cold(ds, {CacheMode::kCold, nullptr});
  const ResidencyCheck after = cold.check_residency(100);
  EXPECT_EQ(after.files_checked, ds.size());
  if (after.resident_share > 0.5)
    GTEST_SKIP() << "this filesystem ignores POSIX_FADV_DONTNEED (tmpfs?): " << after.resident_share;
  EXPECT_LT(after.resident_share, 0.05);
  std::vector<uint8_t> expected;
  read_file(ds.sample(3).path, expected);  // warms file 3 again
  const auto got = cold.bytes(3, buf);     // read, then dropped (one sample per file)
  EXPECT_TRUE(std::equal(got.begin(), got.end(), expected.begin(), expected.end()));
  EXPECT_LT(page_cache_resident(ds.sample(3).path), 0.5);
  warm.fill_cache();
  EXPECT_GT(warm.check_residency(100).resident_share, 0.99);
}

TEST(Storage, ShardIsDroppedOnceAllItsMembersWereRead) {
  ShardSet shards(shard_root());
  const auto starts = shards.group_starts();
  ASSERT_EQ(starts.size(), 5u);
  std::vector<uint8_t> buf;
  for (size_t i = 0; i < shards.size(); ++i) shards.bytes(i, buf);  // warm every shard
  StoredSource cold(shards, {CacheMode::kCold, nullptr});
  if (page_cache_resident(shards.file(0)) > 0.5) GTEST_SKIP() << "fadvise ignored here";
  for (size_t i = starts[0]; i < starts[1] - 1; ++i) cold.bytes(i, buf);
  EXPECT_GT(page_cache_resident(shards.file(0)), 0.0);  // read, not yet all of it
  cold.bytes(starts[1] - 1, buf);
  EXPECT_LT(page_cache_resident(shards.file(0)), 0.5);  // the last member: dropped
}

TEST(Storage, ThrottleAdmitsReadsOneAfterAnother) {
  EXPECT_THROW(ReadThrottle(0), std::invalid_argument);
  EXPECT_THROW(ReadThrottle(-1), std::invalid_argument);
  EXPECT_THROW(parse_cache_mode("tepid"), std::invalid_argument);
  // 4 threads x 4 reads of 64 KiB at 64 MiB/s. Each read holds the link for
  // llround(65536 B x 1e9 / (64 x 2^20) B/s) = llround(976562.5) = 976563 ns, so the 16
  // reads need 15.625 ms of link time. The first may start up to kBurstNs (2 ms) before it
  // arrived (the bucket's depth), never earlier, and every later one starts when the link
  // frees: the last read ends no sooner than t0 - 2 ms + 15.625 ms = t0 + 13.625 ms. A lower
  // bound from the link's arithmetic, not a timing target (the first version of this test
  // said 16 ms, and a fast host measured 13.87 ms against its 14 ms).
  ReadThrottle link(64);
  constexpr int kReads = 16;
  constexpr int64_t kBytes = 64 * 1024;
  const auto per_read_ns = std::llround(static_cast<double>(kBytes) * 1e9 / (64.0 * 1024 * 1024));
  ASSERT_EQ(per_read_ns, 976563);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int r = 0; r < kReads / 4; ++r) link.consume(kBytes);
    });
  for (auto& t : threads) t.join();
  EXPECT_GE(std::chrono::steady_clock::now() - t0,
            std::chrono::nanoseconds(kReads * per_read_ns - ReadThrottle::kBurstNs));
}

LoaderOptions options(int workers) {
  LoaderOptions o;
  o.pipeline = build_recipe("imagenet_train", 32);
  o.batch_size = 6;
  o.workers = workers;
  o.epochs = 2;
  o.sampler.shuffle = true;
  o.sampler.seed = 9;
  o.sampler.shuffle_buffer = 10;
  return o;
}

struct Drained {
  std::vector<std::vector<int64_t>> indices;
  std::vector<std::vector<int32_t>> labels;
  std::vector<std::vector<float>> data;
};

Drained drain(Loader& loader) {
  Drained d;
  while (auto b = loader.next()) {
    d.indices.emplace_back((*b)->sample_indices.begin(), (*b)->sample_indices.end());
    d.labels.emplace_back((*b)->labels, (*b)->labels + (*b)->size);
    d.data.emplace_back((*b)->data, (*b)->data + (*b)->bytes() / 4);
  }
  return d;
}

TEST(Storage, LoaderOverShardsDeliversEverySampleOnceWithTheSameBytesAtAnyWorkerCount) {
  ShardSet shards(shard_root());
  ImageFolder folder(folder_root());
  // Which folder file each shard sample is, by content.
  std::map<std::string, size_t> by_content;  // content -> folder index
  std::vector<uint8_t> buf;
  for (size_t i = 0; i < folder.size(); ++i) {
    const auto b = folder.bytes(i, buf);
    by_content[std::string(b.begin(), b.end())] = i;
  }
  std::vector<int32_t> label_of(shards.size());
  for (size_t i = 0; i < shards.size(); ++i) {
    const auto b = shards.bytes(i, buf);
    const auto it = by_content.find(std::string(b.begin(), b.end()));
    ASSERT_NE(it, by_content.end()) << "shard sample " << i << " is no file of the folder";
    label_of[i] = folder.label(it->second);
  }
  StoredSource cold(shards, {CacheMode::kCold, nullptr});
  Drained one, two;
  {
    Loader loader(cold, options(1));
    one = drain(loader);
  }
  {
    Loader loader(shards, options(2));
    two = drain(loader);
  }
  ASSERT_EQ(one.indices.size(), two.indices.size());
  std::map<int64_t, int> seen;
  for (size_t b = 0; b < one.indices.size(); ++b) {
    EXPECT_EQ(one.indices[b], two.indices[b]);
    EXPECT_EQ(one.data[b], two.data[b]) << "batch " << b;
    for (size_t k = 0; k < one.indices[b].size(); ++k) {
      ++seen[one.indices[b][k]];
      EXPECT_EQ(one.labels[b][k], label_of[static_cast<size_t>(one.indices[b][k])]);
    }
  }
  EXPECT_EQ(seen.size(), shards.size());
  for (const auto& [index, count] : seen) EXPECT_EQ(count, 2) << "sample " << index;  // 2 epochs
}

}  // namespace
}  // namespace pipebench
