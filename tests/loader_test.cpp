// Loader: exactly-once delivery, order, determinism across worker counts, the prefetch
// bound, errors (stop and skip), shutdown mid-epoch, and option checks. Small synthetic
// datasets (40 images of 96 x 80) and a 32-pixel crop keep it quick. Batch contents are
// checked against the recipe run directly on the file's bytes (an independent path:
// no graph, no pool, no collate).
#include "datasets/image_folder.h"
#include "pipeline/loader.h"
#include "transforms/recipes.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <pthread.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "datasets/file_io.h"
#include "pipeline/collate.h"
#include "measure/own_threads.h"
#include "measure/trace.h"
#include "tests/test_data.h"

namespace pipebench {
namespace {

constexpr int kImages = 40;

/// 40 images of 96 x 80 in 4 classes: small enough to keep every loader test quick.
SyntheticOptions dataset_options() {
  SyntheticOptions o;
  o.count = kImages;
  o.classes = 4;
  o.min_width = o.max_width = 96;
  o.min_height = o.max_height = 80;
  o.seed = 11;
  return o;
}

class LoaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new std::filesystem::path(testing::make_dataset("loader_set", dataset_options()));
  }
  static void TearDownTestSuite() {
    delete root_;
    root_ = nullptr;
  }

  static LoaderOptions small_options() {
    LoaderOptions o;
    o.pipeline = build_recipe("imagenet_train", 32);
    o.batch_size = 6;
    o.workers = 2;
    o.prefetch_depth_batches = 2;
    o.sampler.seed = 1234;
    return o;
  }

  // Three ranks' shards of one shuffled epoch hold every sample exactly once (in order or
  // as completed: LoaderOptions::in_order).
  static void expect_shards_cover(bool in_order);

  static std::filesystem::path* root_;
};
std::filesystem::path* LoaderTest::root_ = nullptr;

struct Collected {
  std::vector<int> epochs;
  std::vector<int64_t> batch_index;
  std::vector<int> sizes;
  std::vector<std::vector<int64_t>> indices;  // per batch
  std::vector<std::vector<float>> data;       // per batch
  std::vector<std::vector<int32_t>> labels;   // per batch
};

Collected drain(Loader& loader, bool keep_data = false) {
  Collected c;
  while (auto h = loader.next()) {
    const Batch& b = **h;
    c.epochs.push_back(b.epoch);
    c.batch_index.push_back(b.index);
    c.sizes.push_back(b.size);
    c.indices.emplace_back(b.sample_indices.begin(), b.sample_indices.end());
    c.labels.emplace_back(b.labels, b.labels + b.size);
    if (keep_data) c.data.emplace_back(b.data, b.data + b.bytes() / 4);
  }
  return c;
}

void LoaderTest::expect_shards_cover(bool in_order) {
  ImageFolder ds(*root_);
  std::vector<int64_t> all;
  for (int rank = 0; rank < 3; ++rank) {
    LoaderOptions o = small_options();
    o.in_order = in_order;
    o.sampler.shuffle = true;
    o.sampler.world_size = 3;
    o.sampler.rank = rank;
    Loader loader(ds, o);
    Collected c = drain(loader);
    for (auto& b : c.indices) all.insert(all.end(), b.begin(), b.end());
  }
  std::sort(all.begin(), all.end());
  std::vector<int64_t> expected(kImages);
  std::iota(expected.begin(), expected.end(), int64_t{0});
  EXPECT_EQ(all, expected) << (in_order ? "in order" : "out of order");
}

struct ExactlyOnceCase {
  bool shuffle;
  int workers;
  bool drop_last;
};

class LoaderExactlyOnce : public LoaderTest, public ::testing::WithParamInterface<ExactlyOnceCase> {};

TEST_P(LoaderExactlyOnce, EverySampleOncePerEpochInSamplerOrder) {
  const auto p = GetParam();
  ImageFolder ds(*root_);
  LoaderOptions o = small_options();
  o.workers = p.workers;
  o.sampler.shuffle = p.shuffle;
  o.sampler.drop_last = p.drop_last;
  o.epochs = 3;
  Loader loader(ds, o);
  const int64_t per_epoch = p.drop_last ? kImages / 6 : (kImages + 5) / 6;
  EXPECT_EQ(loader.batches_per_epoch(), per_epoch);
  Collected c = drain(loader);
  ASSERT_EQ(static_cast<int64_t>(c.sizes.size()), per_epoch * 3);
  std::vector<std::vector<int64_t>> orders(3);
  for (size_t b = 0; b < c.sizes.size(); ++b) {
    EXPECT_EQ(c.epochs[b], static_cast<int>(b / per_epoch)) << "batch " << b;
    EXPECT_EQ(c.batch_index[b], static_cast<int64_t>(b % per_epoch)) << "batch " << b;
    const bool last = c.batch_index[b] == per_epoch - 1;
    EXPECT_EQ(c.sizes[b], last && !p.drop_last ? kImages % 6 : 6) << "batch " << b;
    for (size_t i = 0; i < c.indices[b].size(); ++i) {
      EXPECT_EQ(c.labels[b][i], ds.sample(static_cast<size_t>(c.indices[b][i])).label);
    }
    auto& order = orders[static_cast<size_t>(c.epochs[b])];
    order.insert(order.end(), c.indices[b].begin(), c.indices[b].end());
  }
  for (int e = 0; e < 3; ++e) {
    // The sampler's order, cut to whole batches with drop_last.
    auto expected = epoch_indices(ds.size(), e, o.sampler);
    expected.resize(static_cast<size_t>(p.drop_last ? per_epoch * 6 : kImages));
    EXPECT_EQ(orders[e], expected) << "epoch " << e;
    auto sorted = orders[e];
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "duplicate in epoch " << e;
  }
  if (p.shuffle) {
    EXPECT_NE(orders[0], orders[1]);
  }
  const LoaderStats st = loader.stats();
  EXPECT_EQ(st.batches, per_epoch * 3);
  EXPECT_EQ(st.samples, static_cast<int64_t>(orders[0].size()) * 3);
  EXPECT_EQ(st.skipped, 0);
  EXPECT_GE(st.max_batches_in_flight, 1);
  EXPECT_LE(st.max_batches_in_flight, o.prefetch_depth_batches);
  EXPECT_FALSE(loader.next().has_value());  // stays at the end
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LoaderExactlyOnce,
    ::testing::Values(ExactlyOnceCase{false, 1, false}, ExactlyOnceCase{true, 1, false},
                      ExactlyOnceCase{false, 2, true}, ExactlyOnceCase{true, 2, false},
                      ExactlyOnceCase{true, 2, true}, ExactlyOnceCase{true, 4, false},
                      ExactlyOnceCase{false, 4, true}),
    [](const auto& info) {
      return std::string(info.param.shuffle ? "shuffle" : "sequential") + "_w" +
             std::to_string(info.param.workers) + (info.param.drop_last ? "_droplast" : "");
    });

// in_order false (PyTorch's DataLoader(in_order=False)): batches come as they complete,
// but every batch of every epoch once, each holding the sampler's run of its position and
// the same pixels as in order (keyed by epoch and batch index). A TEST_F over the cases
// (not TEST_P) so that the TSan preset's LoaderTest filter runs it.
TEST_F(LoaderTest, OutOfOrderDeliversEveryBatchOncePerEpochWithTheSameSamplesAndPixels) {
  for (const ExactlyOnceCase p : {ExactlyOnceCase{false, 1, false}, ExactlyOnceCase{true, 2, false},
                                  ExactlyOnceCase{true, 2, true}, ExactlyOnceCase{true, 4, false}}) {
    SCOPED_TRACE(std::string(p.shuffle ? "shuffle" : "sequential") + " workers " + std::to_string(p.workers) +
                 (p.drop_last ? " drop_last" : ""));
    ImageFolder ds(*root_);
    LoaderOptions o = small_options();
    o.workers = p.workers;
    o.prefetch_depth_batches = 3;
    o.sampler.shuffle = p.shuffle;
    o.sampler.drop_last = p.drop_last;
    o.epochs = 3;
    o.in_order = false;
    Collected ooo;
    {
      Loader loader(ds, o);
      ooo = drain(loader, true);
      EXPECT_FALSE(loader.next().has_value());  // stays at the end
      EXPECT_LE(loader.stats().max_batches_in_flight, o.prefetch_depth_batches);
    }
    o.in_order = true;
    Collected in;
    {
      Loader loader(ds, o);
      in = drain(loader, true);
    }
    const int64_t per_epoch = p.drop_last ? kImages / 6 : (kImages + 5) / 6;
    ASSERT_EQ(static_cast<int64_t>(ooo.sizes.size()), per_epoch * 3);
    ASSERT_EQ(in.sizes.size(), ooo.sizes.size());
    std::map<std::pair<int, int64_t>, size_t> seen;  // (epoch, index) -> position in `ooo`
    for (size_t b = 0; b < ooo.sizes.size(); ++b)
      EXPECT_TRUE(seen.emplace(std::make_pair(ooo.epochs[b], ooo.batch_index[b]), b).second)
          << "epoch " << ooo.epochs[b] << " batch " << ooo.batch_index[b] << " twice";
    ASSERT_EQ(seen.size(), ooo.sizes.size());
    for (size_t b = 0; b < in.sizes.size(); ++b) {  // the in-order run: the sampler's batches
      const auto it = seen.find({in.epochs[b], in.batch_index[b]});
      ASSERT_NE(it, seen.end()) << "epoch " << in.epochs[b] << " batch " << in.batch_index[b] << " missing";
      const size_t k = it->second;
      EXPECT_EQ(ooo.indices[k], in.indices[b]) << "batch " << b;
      EXPECT_EQ(ooo.labels[k], in.labels[b]) << "batch " << b;
      ASSERT_EQ(ooo.data[k].size(), in.data[b].size());
      EXPECT_EQ(std::memcmp(ooo.data[k].data(), in.data[b].data(), in.data[b].size() * 4), 0) << "batch " << b;
    }
    for (int e = 0; e < 3; ++e) {  // every sample once per epoch
      std::vector<int64_t> all;
      for (size_t b = 0; b < ooo.sizes.size(); ++b)
        if (ooo.epochs[b] == e) all.insert(all.end(), ooo.indices[b].begin(), ooo.indices[b].end());
      auto expected = epoch_indices(ds.size(), e, o.sampler);
      expected.resize(static_cast<size_t>(p.drop_last ? per_epoch * 6 : kImages));
      std::sort(all.begin(), all.end());
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(all, expected) << "epoch " << e;
    }
  }
}

// The dataset with one slow sample: reading sample `slow` waits until open() (or 20 s, so
// that a loader that never delivers around it fails the test instead of hanging it).
class SlowSampleSource : public SampleSource {
 public:
  SlowSampleSource(const ImageFolder& inner, size_t slow) : inner_(inner), slow_(slow) {}
  void open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  bool is_open() const {
    std::lock_guard<std::mutex> lock(mu_);
    return open_;
  }
  size_t size() const override { return inner_.size(); }
  size_t num_classes() const override { return inner_.num_classes(); }
  int32_t label(size_t i) const override { return inner_.label(i); }
  std::string name(size_t i) const override { return inner_.name(i); }
  std::span<const uint8_t> bytes(size_t i, std::vector<uint8_t>& buffer) const override {
    if (i == slow_) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(20), [&] { return open_; });
    }
    return inner_.bytes(i, buffer);
  }
  size_t file_count() const override { return inner_.file_count(); }
  const std::filesystem::path& file(size_t f) const override { return inner_.file(f); }
  size_t file_of(size_t i) const override { return inner_.file_of(i); }
  uint64_t sample_bytes() const override { return inner_.sample_bytes(); }
  std::string layout() const override { return inner_.layout(); }
  void cache_in_memory() override {}
  bool in_memory() const override { return false; }
  std::string fingerprint() const override { return inner_.fingerprint(); }

 private:
  const ImageFolder& inner_;
  const size_t slow_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool open_ = false;
};

// One slow sample in batch 0 at 2 workers: out of order, the other worker's later batches
// reach the consumer while it is still being read; in order, nothing does.
TEST_F(LoaderTest, OutOfOrderDeliversLaterBatchesAroundASlowSample) {
  ImageFolder ds(*root_);
  SlowSampleSource slow(ds, 1);  // sequential order: batch 0 of epoch 0
  LoaderOptions o = small_options();
  o.batch_size = 4;
  o.workers = 2;
  o.prefetch_depth_batches = 3;
  o.in_order = false;
  Loader loader(slow, o);
  auto first = loader.next();  // while sample 1 waits: only batches 1 and 2 can complete
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(slow.is_open()) << "batch " << (*first)->index << " came after the 20 s wait";
  EXPECT_EQ((*first)->epoch, 0);
  EXPECT_GT((*first)->index, 0) << "a later batch before the slow one's";
  std::vector<int64_t> order{(*first)->index};
  first->release();
  slow.open();
  while (auto b = loader.next()) order.push_back((*b)->index);
  ASSERT_EQ(order.size(), static_cast<size_t>(kImages / 4));
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], static_cast<int64_t>(i)) << "each batch once";
  EXPECT_NE(order.front(), 0);
}

TEST_F(LoaderTest, InOrderNeverDeliversPastASlowSample) {
  ImageFolder ds(*root_);
  SlowSampleSource slow(ds, 1);
  LoaderOptions o = small_options();
  o.batch_size = 4;
  o.workers = 2;
  o.prefetch_depth_batches = 3;
  Loader loader(slow, o);
  // Opened 200 ms from now: batch 0 cannot complete before; in order, nothing reaches us.
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    slow.open();
  });
  std::vector<int64_t> order;
  bool first_after_open = false;
  while (auto b = loader.next()) {
    if (order.empty()) first_after_open = slow.is_open();
    order.push_back((*b)->index);
  }
  opener.join();
  EXPECT_TRUE(first_after_open) << "the first batch came while the slow sample was still waiting";
  ASSERT_EQ(order.size(), static_cast<size_t>(kImages / 4));
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], static_cast<int64_t>(i)) << "sampler order";
}

TEST_F(LoaderTest, HoldingEveryBatchStillSeesTheEnd) {
  ImageFolder ds(*root_);
  LoaderOptions o = small_options();
  o.batch_size = 20;  // two batches, both held
  o.prefetch_depth_batches = 2;
  Loader loader(ds, o);
  auto a = loader.next(), b = loader.next();
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(loader.next().has_value());
}

TEST_F(LoaderTest, DropLastWithBatchLargerThanDatasetDeliversNothing) {
  ImageFolder ds(*root_);
  LoaderOptions o = small_options();
  o.batch_size = 64;
  o.sampler.drop_last = true;
  o.epochs = 2;
  Loader loader(ds, o);
  EXPECT_EQ(loader.batches_per_epoch(), 0);
  EXPECT_FALSE(loader.next().has_value());
  EXPECT_EQ(loader.stats().batches, 0);
}

TEST_F(LoaderTest, ShardsAreDisjointAndCover) { expect_shards_cover(true); }

TEST_F(LoaderTest, BatchesMatchTheRecipeRunDirectly) {
  ImageFolder ds(*root_);
  LoaderOptions o = small_options();
  o.sampler.shuffle = true;
  o.epochs = 2;
  Loader loader(ds, o);
  Collected c = drain(loader, true);
  const auto& recipe = o.pipeline;
  PipelineWorkspace ws(*recipe);
  const size_t floats = recipe->output_floats();
  std::vector<float> expected(floats);
  std::vector<uint8_t> bytes;
  for (size_t b = 0; b < c.sizes.size(); b += 3) {  // every third batch is plenty
    for (size_t i = 0; i < c.indices[b].size(); ++i) {
      const auto index = static_cast<size_t>(c.indices[b][i]);
      read_file(ds.sample(index).path, bytes);
      Rng rng = Rng::for_sample(o.sampler.seed, static_cast<uint64_t>(c.epochs[b]), index);
      recipe->run(bytes, ds.sample(index).path.string(), rng, ws, expected.data());
      ASSERT_EQ(std::memcmp(c.data[b].data() + i * floats, expected.data(), floats * 4), 0)
          << "batch " << b << " slot " << i << " sample " << index;
    }
  }
}

TEST_F(LoaderTest, SameBytesAtOneAndFourWorkers) {
  ImageFolder ds(*root_);
  LoaderOptions o = small_options();
  o.sampler.shuffle = true;
  o.epochs = 2;
  o.workers = 1;
  Collected one;
  {
    Loader loader(ds, o);
    one = drain(loader, true);
  }
  o.workers = 4;
  o.prefetch_depth_batches = 3;
  Collected four;
  {
    Loader loader(ds, o);
    four = drain(loader, true);
  }
  ASSERT_EQ(one.data.size(), four.data.size());
  for (size_t b = 0; b < one.data.size(); ++b) {
    EXPECT_EQ(one.indices[b], four.indices[b]);
    EXPECT_EQ(one.labels[b], four.labels[b]);
    ASSERT_EQ(one.data[b].size(), four.data[b].size());
    EXPECT_EQ(std::memcmp(one.data[b].data(), four.data[b].data(), one.data[b].size() * 4), 0)
        << "batch " << b;
  }
  // Another seed gives other crops (a sanity check that the seed reaches the transforms).
  o.sampler.seed = 99;
  o.sampler.shuffle = false;
  Loader a(ds, o);
  o.sampler.seed = 100;
  Loader b(ds, o);
  auto ha = a.next(), hb = b.next();
  ASSERT_TRUE(ha && hb);
  EXPECT_NE(std::memcmp((*ha)->data, (*hb)->data, (*ha)->bytes()), 0);
}

TEST_F(LoaderTest, NeverMoreThanPrefetchDepthInFlight) {
  ImageFolder ds(*root_);
  LoaderOptions o = small_options();
  o.batch_size = 4;
  o.prefetch_depth_batches = 3;
  o.workers = 2;
  Loader loader(ds, o);
  std::vector<BatchHandle> held;
  for (int round = 0; round < 6; ++round) {
    // Hold up to depth - 1 batches while the workers have time to run ahead.
    while (static_cast<int>(held.size()) < o.prefetch_depth_batches - 1) {
      auto h = loader.next();
      ASSERT_TRUE(h.has_value());
      held.push_back(std::move(*h));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_LE(loader.stats().max_batches_in_flight, o.prefetch_depth_batches);
    held.erase(held.begin());
  }
  // Holding all depth batches and asking for another would wait forever: it throws.
  while (static_cast<int>(held.size()) < o.prefetch_depth_batches) {
    auto h = loader.next();
    ASSERT_TRUE(h.has_value());
    held.push_back(std::move(*h));
  }
  EXPECT_THROW(loader.next(), std::logic_error);
  held.clear();
  EXPECT_TRUE(loader.next().has_value());
  EXPECT_EQ(loader.stats().max_batches_in_flight, o.prefetch_depth_batches);
}

TEST_F(LoaderTest, WorkStartedIsBoundedByThePrefetchDepth) {
  // Observed from outside the pool's own counter: the trace's "read" spans count the
  // samples the workers actually processed. With the consumer holding one batch and
  // sleeping, a loader without the bound would read the whole dataset.
  ImageFolder ds(*root_);
  LoaderOptions o = small_options();
  o.batch_size = 4;
  o.prefetch_depth_batches = 2;
  o.workers = 2;
  TraceRecorder trace;
  o.trace = &trace;
  ASSERT_GT(ds.size(), static_cast<size_t>(4 * o.batch_size));
  Loader loader(ds, o);
  auto held = loader.next();
  ASSERT_TRUE(held.has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto file = testing::scratch_dir("inflight-trace") / "t.json";
  trace.write(file);
  nlohmann::json doc;
  std::ifstream(file) >> doc;
  size_t reads = 0;
  for (const auto& e : doc["traceEvents"]) reads += e["ph"] == "X" && e["name"] == "read";
  // 1 batch taken + at most `depth` in flight (one of them the held one).
  EXPECT_LE(reads, static_cast<size_t>(1 + o.prefetch_depth_batches) * o.batch_size);
  EXPECT_GE(reads, static_cast<size_t>(o.batch_size));
}

// A copy of the dataset with garbage in place of sample `victim`; returns its path.
std::filesystem::path corrupt_copy(const std::string& name, size_t victim) {
  auto copy = testing::make_dataset(name, dataset_options());
  ImageFolder ds(copy);
  std::vector<uint8_t> garbage(700);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(i * 37 + 5);
  write_file(ds.sample(victim).path, garbage.data(), garbage.size());
  return ds.sample(victim).path;
}

TEST_F(LoaderTest, CorruptFileStopsWithItsName) {
  const auto bad = corrupt_copy("loader_corrupt_stop", 17);
  ImageFolder ds(bad.parent_path().parent_path());
  LoaderOptions o = small_options();
  o.on_error = OnError::kStop;
  Loader loader(ds, o);
  bool thrown = false;
  int batches = 0;
  try {
    while (loader.next()) ++batches;
  } catch (const LoaderError& e) {
    thrown = true;
    EXPECT_EQ(e.file(), bad.string());
    EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos) << e.what();
  }
  EXPECT_TRUE(thrown) << "no LoaderError after " << batches << " batches";
  EXPECT_LE(batches, 17 / 6);  // at most the batches before the failing one (order kept)
  EXPECT_THROW(loader.next(), LoaderError);  // and again
}

TEST_F(LoaderTest, CorruptFileSkippedKeepsBatchesFull) {
  const auto bad = corrupt_copy("loader_corrupt_skip", 1);
  ImageFolder ds(bad.parent_path().parent_path());
  LoaderOptions o = small_options();
  o.on_error = OnError::kSkip;
  o.batch_size = 8;
  o.workers = 2;
  Loader loader(ds, o);
  Collected c = drain(loader);
  const LoaderStats st = loader.stats();
  EXPECT_EQ(st.skipped, 1);
  ASSERT_EQ(st.skipped_samples.size(), 1u);
  EXPECT_EQ(st.skipped_samples[0].path, bad.string());
  EXPECT_FALSE(st.skipped_samples[0].reason.empty());
  ASSERT_EQ(c.sizes.size(), 5u);
  for (size_t b = 0; b + 1 < c.sizes.size(); ++b) EXPECT_EQ(c.sizes[b], 8) << "batch " << b;
  EXPECT_EQ(c.sizes.back(), 7);
  std::vector<int64_t> all;
  for (auto& b : c.indices) all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < kImages; ++i) {
    if (i != 1) expected.push_back(i);
  }
  EXPECT_EQ(all, expected);
  EXPECT_EQ(st.samples, kImages - 1);
}

TEST_F(LoaderTest, SkipStopsWhenEverySampleFails) {
  // Every file garbage: skipping cannot fill a batch, ever. The loader must stop with an
  // error naming a file, not cycle through its epochs.
  auto root = testing::make_dataset("loader_all_bad", dataset_options());
  ImageFolder ds(root);
  std::vector<uint8_t> garbage(300, 7);
  for (size_t i = 0; i < ds.size(); ++i) write_file(ds.sample(i).path, garbage.data(), garbage.size());
  LoaderOptions o = small_options();
  o.on_error = OnError::kSkip;
  o.epochs = 1 << 20;
  Loader loader(ds, o);
  try {
    while (loader.next()) {
    }
    FAIL() << "no error";
  } catch (const LoaderError& e) {
    EXPECT_NE(std::string(e.what()).find("every one of the dataset's 40 samples failed"), std::string::npos) << e.what();
    EXPECT_FALSE(e.file().empty());
  }
  // Stopped at the 40th distinct failure, plus at most what the graph lets run meanwhile:
  // - epoch 0's 40 positions are each tried once (a failed slot takes its replacement from
  //   its own epoch's cursor): 40 skips, all distinct;
  // - while one of them is still pending, its batch (the oldest in flight) is not
  //   delivered, so no later batch is released either: at most prefetch - 1 = 1 other batch
  //   is in flight, and a batch (with its replacements) tries at most one epoch's 40
  //   positions: at most 40 repeats;
  // - after the stop, each other worker finishes the one sample it holds: workers - 1 = 1.
  // 40 + 40 x (prefetch - 1) + (workers - 1) = 81. A loader cycling through its 2^20 epochs
  // would be far beyond. (Measured: 40-52 idle, up to 62 on a loaded machine.)
  const int64_t n = 40, prefetch = o.prefetch_depth_batches, workers = o.workers;
  EXPECT_LE(loader.stats().skipped, n + n * (prefetch - 1) + (workers - 1));
}

TEST_F(LoaderTest, SkipOverManyEpochsWithHalfTheFilesBadKeepsGoing) {
  // Bad files met again in later epochs (and in any order across workers) are not "every
  // sample failed": only distinct failures since the last success count.
  auto root = testing::make_dataset("loader_half_bad", dataset_options());
  ImageFolder ds(root);
  std::vector<uint8_t> garbage(300, 7);
  for (size_t i = 0; i < ds.size(); i += 2) write_file(ds.sample(i).path, garbage.data(), garbage.size());
  LoaderOptions o = small_options();
  o.on_error = OnError::kSkip;
  o.sampler.shuffle = true;
  o.workers = 3;
  o.epochs = 30;
  Loader loader(ds, o);
  int64_t samples = 0;
  while (auto b = loader.next()) samples += (*b)->size;
  EXPECT_EQ(samples, 30 * 20);
  EXPECT_EQ(loader.stats().skipped, 30 * 20);
}

TEST_F(LoaderTest, SkipWithDropLastFillsTheLastBatchFromTheDroppedTail) {
  // 40 samples, batch 6, drop_last: 6 full batches and a tail of 4 that is dropped. A bad
  // sample in the last full batch takes its replacement from that tail, so every batch
  // still has 6 samples.
  const auto bad = corrupt_copy("loader_corrupt_skip_tail", 33);
  ImageFolder ds(bad.parent_path().parent_path());
  LoaderOptions o = small_options();
  o.on_error = OnError::kSkip;
  o.sampler.drop_last = true;
  o.workers = 2;
  Loader loader(ds, o);
  Collected c = drain(loader);
  EXPECT_EQ(loader.stats().skipped, 1);
  ASSERT_EQ(c.sizes.size(), 6u);
  for (size_t b = 0; b < c.sizes.size(); ++b) EXPECT_EQ(c.sizes[b], 6) << "batch " << b;
}

// Out of order, the rest of the loader's contract holds as in order: a bad file skipped
// (every other sample once, batches full), or stopping with its name; shards disjoint and
// covering; destroyed mid-epoch with a batch held.
TEST_F(LoaderTest, OutOfOrderSkipsStopsShardsAndStopsMidEpochAsInOrder) {
  {
    const auto bad = corrupt_copy("loader_ooo_skip", 1);
    ImageFolder ds(bad.parent_path().parent_path());
    LoaderOptions o = small_options();
    o.on_error = OnError::kSkip;
    o.batch_size = 8;
    o.in_order = false;
    Loader loader(ds, o);
    Collected c = drain(loader);
    EXPECT_EQ(loader.stats().skipped, 1);
    std::vector<int64_t> all;
    for (auto& b : c.indices) all.insert(all.end(), b.begin(), b.end());
    std::sort(all.begin(), all.end());
    std::vector<int64_t> expected;
    for (int64_t i = 0; i < kImages; ++i)
      if (i != 1) expected.push_back(i);
    EXPECT_EQ(all, expected);
    EXPECT_EQ(std::count(c.sizes.begin(), c.sizes.end(), 8), 4) << "four full batches, one of 7";
  }
  {
    const auto bad = corrupt_copy("loader_ooo_stop", 17);
    ImageFolder ds(bad.parent_path().parent_path());
    LoaderOptions o = small_options();
    o.in_order = false;
    Loader loader(ds, o);
    try {
      while (loader.next()) {
      }
      ADD_FAILURE() << "no LoaderError";
    } catch (const LoaderError& e) {
      EXPECT_EQ(e.file(), bad.string());
    }
    EXPECT_THROW(loader.next(), LoaderError);
  }
  expect_shards_cover(false);
  {
    ImageFolder ds(*root_);
    LoaderOptions o = small_options();
    o.in_order = false;
    o.prefetch_depth_batches = 3;
    o.epochs = 50;
    const int before = own_thread_count();
    BatchHandle held;
    {
      Loader loader(ds, o);
      auto h = loader.next();
      ASSERT_TRUE(h.has_value());
      held = std::move(*h);
    }
    EXPECT_EQ(own_thread_count(), before);
    EXPECT_EQ(held->size, 6);
  }
}

TEST(OwnThreads, CountedWhileRunningAndNamed) {
  const int before = own_thread_count();
  std::atomic<bool> go{false};
  std::thread t = start_own_thread("a-very-long-thread-name", [&] {
    while (!go.load()) std::this_thread::yield();
  });
  EXPECT_EQ(own_thread_count(), before + 1);  // counted from before start_own_thread returns
  char name[16] = {};
  ASSERT_EQ(pthread_getname_np(t.native_handle(), name, sizeof name), 0);
  EXPECT_STREQ(name, "pb-a-very-long-");  // 15 characters
  go = true;
  t.join();
  EXPECT_EQ(own_thread_count(), before);
  std::thread quiet = start_own_thread("", [] {});
  quiet.join();
  EXPECT_EQ(own_thread_count(), before);
}

TEST_F(LoaderTest, DestroyMidEpochReturnsAndLeavesNoThread) {
  ImageFolder ds(*root_);
  LoaderOptions o = small_options();
  o.prefetch_depth_batches = 3;
  o.epochs = 50;
  {
    Loader warm(ds, o);  // starts the scheduler's worker threads once
    drain(warm);
  }
  // Only the threads pipebench starts are counted (own_threads.h): oneTBB's pool is shared
  // by the process and may start or park a worker at any moment (a fresh CI runner did,
  // between two counts), so a count of every thread in /proc/self/task is not the loader's.
  const int before = own_thread_count();
  BatchHandle held;
  {
    Loader loader(ds, o);
    EXPECT_EQ(own_thread_count(), before + 1) << "the loader's graph thread";
    auto h = loader.next();
    ASSERT_TRUE(h.has_value());
    held = std::move(*h);
    auto h2 = loader.next();  // a second, dropped at once
    ASSERT_TRUE(h2.has_value());
  }  // destroyed mid-epoch while `held` is alive
  EXPECT_EQ(own_thread_count(), before);
  // The held batch stays readable after the loader is gone.
  ASSERT_EQ(held->size, 6);
  float sum = 0;
  for (size_t i = 0; i < held->bytes() / 4; ++i) sum += held->data[i];
  EXPECT_TRUE(std::isfinite(sum));
  held.release();
  { Loader untouched(ds, o); }  // destroyed before any next()
  EXPECT_EQ(own_thread_count(), before);
}

TEST_F(LoaderTest, StageTimersAndTrace) {
  ImageFolder ds(*root_);
  LoaderOptions o = small_options();
  TraceRecorder trace;
  o.trace = &trace;
  {
    const auto t0 = std::chrono::steady_clock::now();
    Loader loader(ds, o);
    drain(loader);
    const auto drain_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - t0).count();
    const LoaderStats st = loader.stats();
    for (Stage s : {Stage::kRead, Stage::kDecode, Stage::kTransform}) {
      EXPECT_GT(st.stage_ns[static_cast<int>(s)], 0) << stage_name(s);
      EXPECT_GT(st.stage_ms_per_sample(s), 0.0) << stage_name(s);
    }
    // Collate is in place: no time of its own; no device: no copy.
    EXPECT_EQ(st.stage_ns[static_cast<int>(Stage::kCollate)], 0);
    EXPECT_EQ(st.stage_ns[static_cast<int>(Stage::kH2D)], 0);
    // Every sample was produced; the workers' CPU time is positive and, on one worker
    // thread per sample, no more than the wall time of the stages it covers (+ clock slack).
    EXPECT_EQ(st.processed, st.samples);
    const int64_t wall = st.stage_ns[0] + st.stage_ns[1] + st.stage_ns[2];
    EXPECT_GT(st.sample_cpu_ns, 0);
    EXPECT_LE(st.sample_cpu_ns, wall + 1000000);
    // The consumer waited inside next(), which the drain's wall time encloses.
    EXPECT_GT(st.consumer_wait_ns, 0);
    EXPECT_LE(st.consumer_wait_ns, drain_ns);
  }
  // read, decode, transform per sample, plus a wait per next().
  EXPECT_GE(trace.size(), static_cast<size_t>(3 * kImages));
  o.trace = nullptr;
  o.stage_timers = false;
  ImageFolder cached(*root_);
  cached.cache_in_memory();
  Loader loader(cached, o);
  Collected c = drain(loader);
  EXPECT_EQ(c.sizes.size(), 7u);
  const LoaderStats st = loader.stats();
  for (int s = 0; s < static_cast<int>(Stage::kCount); ++s) EXPECT_EQ(st.stage_ns[s], 0);
}

TEST_F(LoaderTest, RejectsBadOptions) {
  ImageFolder ds(*root_);
  auto expect_invalid = [&](LoaderOptions o, const std::string& word) {
    try {
      Loader loader(ds, o);
      ADD_FAILURE() << "expected std::invalid_argument naming " << word;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  LoaderOptions o = small_options();
  o.workers = 0;
  expect_invalid(o, "workers");
  o = small_options();
  o.batch_size = 0;
  expect_invalid(o, "batch_size");
  o = small_options();
  o.prefetch_depth_batches = 0;
  expect_invalid(o, "prefetch_depth_batches");
  o = small_options();
  o.epochs = 0;
  expect_invalid(o, "epochs");
  o = small_options();
  o.pipeline = nullptr;
  expect_invalid(o, "pipeline");
  o = small_options();
  o.sampler.world_size = 2;
  o.sampler.rank = 5;
  expect_invalid(o, "rank");
}

TEST_F(LoaderTest, PinnedAndDeviceCopyNeedCuda) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: " << cuda_info().device_name;
  ImageFolder ds(*root_);
  LoaderOptions o = small_options();
  o.memory = MemoryKind::kPinned;
  EXPECT_THROW(Loader(ds, o), CudaUnavailable);
  o.memory = MemoryKind::kPageable;
  o.copy_to_device = true;
  EXPECT_THROW(Loader(ds, o), CudaUnavailable);
}

TEST_F(LoaderTest, PinnedWithDeviceCopy) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  ImageFolder ds(*root_);
  LoaderOptions o = small_options();
  o.memory = MemoryKind::kPinned;
  o.copy_to_device = true;
  Loader loader(ds, o);
  Collected c = drain(loader);
  EXPECT_EQ(c.sizes.size(), 7u);
  EXPECT_GT(loader.stats().stage_ns[static_cast<int>(Stage::kH2D)], 0);
}

}  // namespace
}  // namespace pipebench

namespace pipebench {
namespace {

// Per-operator timers: one per planned step, each seen, together within the transform
// stage they split (they miss only the clock reads between steps).
TEST_F(LoaderTest, PerOperatorTimersSplitTheTransformStage) {
  ImageFolder ds(*root_);
  LoaderOptions o = small_options();
  Loader loader(ds, o);
  drain(loader);
  const LoaderStats st = loader.stats();
  ASSERT_EQ(st.step_labels, o.pipeline->step_labels());
  ASSERT_EQ(st.step_labels, (std::vector<std::string>{"random_resized_crop+horizontal_flip+normalize"}));
  int64_t sum = 0;
  for (int64_t ns : st.step_ns) {
    EXPECT_GT(ns, 0);
    sum += ns;
  }
  const int64_t transform = st.stage_ns[static_cast<int>(Stage::kTransform)];
  EXPECT_LE(sum, transform);
  EXPECT_GT(sum, transform / 2);
}

}  // namespace
}  // namespace pipebench

// --- collate dtype uint8 / layout NHWC ------------------------------------------------------

namespace pipebench {
namespace {

// imagenet_train at 32 px with another collate dtype / layout (and optionally a batch list
// and where the batch is finished).
std::shared_ptr<const Pipeline> collated(const std::string& dtype, const std::string& layout,
                                         const std::vector<std::string>& batch_ops = {},
                                         const std::string& finish = "host") {
  PipelineSpec spec = recipe_spec("imagenet_train", 32);
  spec.collate_dtype = dtype;
  spec.collate_layout = layout;
  spec.collate_finish = finish;
  spec.name = "imagenet_train_" + dtype + "_" + layout;
  for (const auto& b : batch_ops) spec.batch.push_back(parse_pipeline_spec("[" + b + "]", "test").batch.at(0));
  return Pipeline::build(spec);
}

struct RawBatches {
  std::vector<std::vector<uint8_t>> bytes;  // per batch, host_data() as it came
  std::vector<std::vector<int64_t>> indices;
  std::vector<std::vector<int32_t>> labels;
  std::vector<int> sizes;
  std::vector<int> epochs;
};

RawBatches drain_raw(Loader& loader) {
  RawBatches r;
  while (auto h = loader.next()) {
    const Batch& b = **h;
    const auto* p = static_cast<const uint8_t*>(b.host_data());
    r.bytes.emplace_back(p, p + b.bytes());
    r.indices.emplace_back(b.sample_indices.begin(), b.sample_indices.end());
    r.labels.emplace_back(b.labels, b.labels + b.size);
    r.sizes.push_back(b.size);
    r.epochs.push_back(b.epoch);
  }
  return r;
}

RawBatches load(const std::filesystem::path& root, std::shared_ptr<const Pipeline> p, int workers) {
  ImageFolder ds(root);
  LoaderOptions o;
  o.pipeline = std::move(p);
  o.batch_size = 6;
  o.workers = workers;
  o.sampler.seed = 77;
  o.sampler.shuffle = true;
  o.epochs = 2;
  Loader loader(ds, o);
  return drain_raw(loader);
}

TEST_F(LoaderTest, Uint8BatchDescribesItself) {
  ImageFolder ds(*root_);
  LoaderOptions o = small_options();
  o.pipeline = collated("uint8", "NHWC");
  Loader loader(ds, o);
  auto h = loader.next();
  ASSERT_TRUE(h);
  const Batch& b = **h;
  EXPECT_EQ(b.format.dtype, SampleDtype::kUint8);
  EXPECT_EQ(b.format.layout, BatchLayout::kNHWC);
  EXPECT_EQ(b.data, nullptr);
  ASSERT_NE(b.data_u8, nullptr);
  EXPECT_EQ(b.host_data(), static_cast<const void*>(b.data_u8));
  EXPECT_EQ(b.bytes(), 6u * 32 * 32 * 3);  // a quarter of float32's 6 x 3 x 32 x 32 x 4
  ASSERT_NE(b.normalize, nullptr);
  EXPECT_FLOAT_EQ(b.normalize->mean[0], 0.485f);
  EXPECT_FLOAT_EQ(b.normalize->std[2], 0.225f);
  // The plan says where normalize went.
  EXPECT_NE(o.pipeline->plan_text().find("collate(uint8 NHWC; normalize after the copy)"), std::string::npos)
      << o.pipeline->plan_text();
}

// The uint8 batch is the float32 batch before normalize: normalized by the formula (in
// double, independent of both code paths) it gives the float32 pipeline's batch, within
// float rounding (the fused resize + normalize is within 4.8e-7 of the formula).
TEST_F(LoaderTest, Uint8BatchNormalizedIsTheFloatBatch) {
  const RawBatches f = load(*root_, collated("float32", "NCHW"), 2);
  const RawBatches u = load(*root_, collated("uint8", "NHWC"), 2);
  ASSERT_EQ(f.sizes, u.sizes);
  ASSERT_FALSE(f.sizes.empty());
  const double mean[3] = {0.485, 0.456, 0.406}, stdv[3] = {0.229, 0.224, 0.225};
  const int hw = 32 * 32;
  double worst = 0, worst_ref = 0;
  std::vector<float> via_reference;
  const DeferredNormalize norm{{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}};
  for (size_t b = 0; b < f.sizes.size(); ++b) {
    EXPECT_EQ(f.indices[b], u.indices[b]);
    const auto* fl = reinterpret_cast<const float*>(f.bytes[b].data());
    const uint8_t* q = u.bytes[b].data();
    for (int i = 0; i < f.sizes[b]; ++i)
      for (int c = 0; c < 3; ++c)
        for (int p = 0; p < hw; ++p) {
          const double want = (q[(i * hw + p) * 3 + c] / 255.0 - mean[c]) / stdv[c];
          worst = std::max(worst, std::abs(fl[(i * 3 + c) * hw + p] - want));
        }
    // And through normalize_u8_batch, the CPU reference of the accelerator's normalize.
    via_reference.assign(f.bytes[b].size() / 4, 0.0f);
    normalize_u8_batch(q, BatchLayout::kNHWC, f.sizes[b], 3, 32, 32, &norm, via_reference.data());
    for (size_t k = 0; k < via_reference.size(); ++k)
      worst_ref = std::max(worst_ref, static_cast<double>(std::abs(via_reference[k] - fl[k])));
  }
  EXPECT_LE(worst, 2e-6) << "max |float batch - formula(uint8 batch)|";
  EXPECT_LE(worst_ref, 1e-6) << "max |float batch - normalize_u8_batch(uint8 batch)|";
}

// One element of a batch of n samples, C x H x W, in either layout.
size_t at(BatchLayout l, int i, int c, int y, int x, int C, int H, int W) {
  return l == BatchLayout::kNHWC ? ((static_cast<size_t>(i) * H + y) * W + x) * C + c
                                 : ((static_cast<size_t>(i) * C + c) * H + y) * W + x;
}

template <typename T>
void expect_transposes(const RawBatches& nchw, const RawBatches& nhwc) {
  ASSERT_EQ(nchw.sizes, nhwc.sizes);
  for (size_t b = 0; b < nchw.sizes.size(); ++b) {
    ASSERT_EQ(nchw.bytes[b].size(), nhwc.bytes[b].size());
    const auto* a = reinterpret_cast<const T*>(nchw.bytes[b].data());
    const auto* h = reinterpret_cast<const T*>(nhwc.bytes[b].data());
    for (int i = 0; i < nchw.sizes[b]; ++i)
      for (int c = 0; c < 3; ++c)
        for (int y = 0; y < 32; ++y)
          for (int x = 0; x < 32; ++x)
            ASSERT_EQ(a[at(BatchLayout::kNCHW, i, c, y, x, 3, 32, 32)],
                      h[at(BatchLayout::kNHWC, i, c, y, x, 3, 32, 32)])
                << "batch " << b << " sample " << i << " c " << c << " y " << y << " x " << x;
  }
}

TEST_F(LoaderTest, NhwcAndNchwAreTransposesOfEachOther) {
  expect_transposes<uint8_t>(load(*root_, collated("uint8", "NCHW"), 2), load(*root_, collated("uint8", "NHWC"), 2));
  expect_transposes<float>(load(*root_, collated("float32", "NCHW"), 2),
                           load(*root_, collated("float32", "NHWC"), 2));
}

TEST_F(LoaderTest, Uint8BatchesAreTheSameAtOneAndTwoWorkers) {
  for (const char* layout : {"NHWC", "NCHW"}) {
    const RawBatches one = load(*root_, collated("uint8", layout), 1);
    const RawBatches two = load(*root_, collated("uint8", layout), 2);
    ASSERT_EQ(one.sizes, two.sizes) << layout;
    EXPECT_EQ(one.indices, two.indices) << layout;
    EXPECT_EQ(one.labels, two.labels) << layout;
    for (size_t b = 0; b < one.bytes.size(); ++b) EXPECT_EQ(one.bytes[b], two.bytes[b]) << layout << " batch " << b;
  }
}

// Each slot of a uint8 batch is the pipeline's image run directly on the file (no graph,
// no pool), in the batch's layout; collate is timed as its own stage.
TEST_F(LoaderTest, Uint8BatchesMatchThePipelineRunDirectly) {
  ImageFolder ds(*root_);
  const auto p = collated("uint8", "NHWC");
  const RawBatches r = load(*root_, p, 2);
  PipelineWorkspace ws(*p);
  std::vector<uint8_t> bytes;
  const size_t sample = 32 * 32 * 3;
  for (size_t b = 0; b < r.sizes.size(); b += 3) {
    for (size_t i = 0; i < r.indices[b].size(); ++i) {
      const auto index = static_cast<size_t>(r.indices[b][i]);
      read_file(ds.sample(index).path, bytes);
      Rng rng = Rng::for_sample(77, static_cast<uint64_t>(r.epochs[b]), index);
      p->run(bytes, ds.sample(index).path.string(), rng, ws, nullptr);
      const Image& img = ws.output_image();
      ASSERT_EQ(img.size_bytes(), sample);
      ASSERT_EQ(std::memcmp(r.bytes[b].data() + i * sample, img.ptr(), sample), 0)
          << "batch " << b << " slot " << i << " sample " << index;
    }
  }
  ImageFolder ds2(*root_);
  LoaderOptions o = small_options();
  o.pipeline = p;
  Loader loader(ds2, o);
  drain(loader);
  EXPECT_GT(loader.stats().stage_ns[static_cast<int>(Stage::kCollate)], 0);
}

// run() with a buffer on a uint8 pipeline writes the image there in the layout's order
// (what BM_Sample and other float-buffer callers get); a float32 one needs a buffer.
TEST_F(LoaderTest, RunWritesUint8SamplesInTheirLayout) {
  const auto nhwc = collated("uint8", "NHWC"), nchw = collated("uint8", "NCHW");
  const auto f32 = build_recipe("imagenet_train", 32);
  ImageFolder ds(*root_);
  std::vector<uint8_t> bytes;
  read_file(ds.sample(0).path, bytes);
  std::vector<float> a(nhwc->output_floats(), -1.0f), b(nchw->output_floats(), -1.0f);
  PipelineWorkspace wa(*nhwc), wb(*nchw), wf(*f32);
  Rng r1(5), r2(5), r3(5);
  nhwc->run(bytes, "x.jpg", r1, wa, a.data());
  nchw->run(bytes, "x.jpg", r2, wb, b.data());
  const Image& img = wa.output_image();
  ASSERT_EQ(img.size_bytes(), 32u * 32 * 3);
  const auto* pa = reinterpret_cast<const uint8_t*>(a.data());
  const auto* pb = reinterpret_cast<const uint8_t*>(b.data());
  EXPECT_EQ(std::memcmp(pa, img.ptr(), img.size_bytes()), 0);
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 32; ++x)
      for (int c = 0; c < 3; ++c) ASSERT_EQ(pb[(c * 32 + y) * 32 + x], img.row(y)[x * 3 + c]);
  EXPECT_EQ(a[nhwc->output_floats() - 1], -1.0f);  // only output().bytes() written
  EXPECT_THROW(f32->run(bytes, "x.jpg", r3, wf, nullptr), std::logic_error);
}

// label_smoothing only touches labels, so it runs on uint8 batches.
TEST_F(LoaderTest, LabelSmoothingRunsOnUint8Batches) {
  ImageFolder ds(*root_);
  LoaderOptions o = small_options();
  o.pipeline = collated("uint8", "NHWC", {"{label_smoothing: {smoothing: 0.2}}"});
  Loader loader(ds, o);
  auto h = loader.next();
  ASSERT_TRUE(h);
  const Batch& b = **h;
  ASSERT_NE(b.soft_labels, nullptr);
  ASSERT_EQ(b.num_classes, 4);
  for (int i = 0; i < b.size; ++i)
    for (int k = 0; k < 4; ++k)
      EXPECT_FLOAT_EQ(b.soft_labels[i * 4 + k], k == b.labels[i] ? 0.8f + 0.05f : 0.05f);
}

}  // namespace
}  // namespace pipebench

// --- collate finish: device (the flip and the mixing left for after the copy) ---------------

namespace pipebench {
namespace {

struct FinishedBatches {
  std::vector<std::vector<uint8_t>> bytes;  // per batch, as delivered
  std::vector<std::vector<uint8_t>> flips;  // per batch, Batch::flips (empty: none)
  std::vector<std::vector<MixDraw>> mixes;
  std::vector<std::vector<float>> soft_labels;
  std::vector<int> sizes;
};

FinishedBatches load_finished(const std::filesystem::path& root, std::shared_ptr<const Pipeline> p) {
  ImageFolder ds(root);
  LoaderOptions o;
  o.pipeline = std::move(p);
  o.batch_size = 6;
  o.workers = 2;
  o.sampler.seed = 77;
  o.sampler.shuffle = true;
  o.epochs = 2;
  Loader loader(ds, o);
  FinishedBatches r;
  while (auto h = loader.next()) {
    const Batch& b = **h;
    const auto* q = static_cast<const uint8_t*>(b.host_data());
    r.bytes.emplace_back(q, q + b.bytes());
    r.flips.emplace_back();
    if (b.flips != nullptr) r.flips.back().assign(b.flips, b.flips + b.size);
    r.mixes.emplace_back(b.mixes.begin(), b.mixes.end());
    r.soft_labels.emplace_back();
    if (b.soft_labels != nullptr)
      r.soft_labels.back().assign(b.soft_labels, b.soft_labels + static_cast<size_t>(b.size) * b.num_classes);
    r.sizes.push_back(b.size);
  }
  return r;
}

// With finish: device the loader stops before imagenet_train's horizontal_flip and its
// mixup_cutmix's pixels, and hands over their draws. Finished on the host by the CPU
// reference of the device's work (finish_u8_batch), the batch is exactly the uint8 batch
// whose flip ran on the CPU, and, normalized, the float32 batch mixed on the CPU (to the
// uint8 rounding of mixup, timm's FastCollateMixup); the soft labels are the float32
// pipeline's exactly: the same draws, from each operator's own stream.
TEST_F(LoaderTest, FinishOnDeviceHandsOverTheSameDrawsAsTheCpuRuns) {
  const auto device = collated("uint8", "NHWC", {"mixup_cutmix: {mixup_alpha: 0.8, cutmix_alpha: 1.0}"}, "device");
  EXPECT_TRUE(device->defers_flip());
  EXPECT_EQ(device->step_labels(), (std::vector<std::string>{"random_resized_crop"}));
  EXPECT_NE(device->plan_text().find("collate(uint8 NHWC; horizontal_flip, mixup_cutmix, normalize after the copy)"),
            std::string::npos) << device->plan_text();
  const FinishedBatches d = load_finished(*root_, device);
  const FinishedBatches u = load_finished(*root_, collated("uint8", "NHWC"));
  const FinishedBatches f = load_finished(
      *root_, collated("float32", "NCHW", {"mixup_cutmix: {mixup_alpha: 0.8, cutmix_alpha: 1.0}"}));
  ASSERT_EQ(d.sizes, u.sizes);
  ASSERT_EQ(d.sizes, f.sizes);
  int flipped = 0, kept = 0, cut = 0, mixed = 0;
  double worst = 0;
  const DeferredNormalize norm{{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}};
  for (size_t b = 0; b < d.sizes.size(); ++b) {
    const int n = d.sizes[b];
    ASSERT_EQ(d.flips[b].size(), static_cast<size_t>(n));
    for (uint8_t x : d.flips[b]) (x != 0 ? flipped : kept)++;
    ASSERT_EQ(d.mixes[b].size(), 1u) << "one mixing operator, one draw per batch";
    (d.mixes[b][0].cut ? cut : mixed)++;
    EXPECT_EQ(d.soft_labels[b], f.soft_labels[b]) << "batch " << b;
    // The flips alone give the CPU-flipped uint8 batch, byte for byte.
    std::vector<uint8_t> x = d.bytes[b];
    finish_u8_batch(x.data(), n, 3, 32, 32, d.flips[b].data(), {});
    EXPECT_EQ(x, u.bytes[b]) << "batch " << b;
    // Flips and mixing, then normalize: the float32 batch mixed on the CPU.
    finish_u8_batch(x.data(), n, 3, 32, 32, nullptr, d.mixes[b]);
    std::vector<float> got(static_cast<size_t>(n) * 3 * 32 * 32);
    normalize_u8_batch(x.data(), BatchLayout::kNHWC, n, 3, 32, 32, &norm, got.data());
    const auto* want = reinterpret_cast<const float*>(f.bytes[b].data());
    for (size_t k = 0; k < got.size(); ++k) worst = std::max(worst, static_cast<double>(std::abs(got[k] - want[k])));
  }
  EXPECT_GT(flipped, 0);
  EXPECT_GT(kept, 0);
  EXPECT_GT(cut, 0);
  EXPECT_GT(mixed, 0);
  // mixup rounds to uint8 (half a level: 0.5 / 255 / 0.224 = 0.0088 after normalize);
  // cutmix and the flips move bytes and are exact.
  EXPECT_LE(worst, 0.0088) << "max |float batch - normalize(finish(device batch))|";
}

}  // namespace
}  // namespace pipebench


namespace pipebench {
namespace {

// A heavy-tailed mix (issue 34 item 2): 30 small images and two large originals. The
// loader's per-sample costs (Loader::record_sample_costs) see every sample once recording
// is on, each with its dataset index, so the costliest files are the large ones and the
// distribution has their tail, which the mean of the stage timers hides.
TEST(LoaderSampleCosts, AHeavyTailedMixNamesItsLargeFilesAsTheCostliest) {
  SyntheticOptions small;
  small.count = 30;
  small.classes = 2;
  small.min_width = small.max_width = 96;
  small.min_height = small.max_height = 80;
  const auto root = testing::make_dataset("loader_tail_mix", small);
  for (int i = 0; i < 2; ++i)
    testing::put_file(root / "class_000" / ("big_" + std::to_string(i) + ".jpg"),
                      testing::make_jpeg(1600, 1200, 77 + i));
  ImageFolder ds(root);
  ASSERT_EQ(ds.size(), 32u);
  LoaderOptions o;
  o.pipeline = build_recipe("imagenet_train", 32);
  o.batch_size = 4;
  o.workers = 2;
  o.prefetch_depth_batches = 2;
  o.epochs = 3;
  o.stage_timers = true;
  Loader loader(ds, o);
  loader.record_sample_costs(true);
  while (loader.next()) {
  }
  loader.record_sample_costs(false);
  const auto costs = loader.take_sample_costs();
  // At most depth x batch samples were done before recording began: epochs 2 and 3 whole.
  EXPECT_GE(costs.size(), 2 * ds.size());
  EXPECT_LE(static_cast<int64_t>(costs.size()), loader.stats().processed);
  EXPECT_TRUE(loader.take_sample_costs().empty()) << "taken: cleared";
  std::map<int64_t, std::pair<double, int>> per_index;
  std::vector<double> ms;
  for (const auto& c : costs) {
    ASSERT_GE(c.index, 0);
    ASSERT_LT(c.index, static_cast<int64_t>(ds.size()));
    per_index[c.index].first += c.ns / 1e6;
    per_index[c.index].second += 1;
    ms.push_back(c.ns / 1e6);
  }
  std::vector<std::pair<double, int64_t>> by_cost;
  for (const auto& [i, v] : per_index) by_cost.emplace_back(v.first / v.second, i);
  std::sort(by_cost.rbegin(), by_cost.rend());
  ASSERT_GE(by_cost.size(), 2u);
  for (int k = 0; k < 2; ++k)
    EXPECT_NE(ds.name(static_cast<size_t>(by_cost[static_cast<size_t>(k)].second)).find("big_"), std::string::npos)
        << ds.name(static_cast<size_t>(by_cost[static_cast<size_t>(k)].second));
  std::sort(ms.begin(), ms.end());
  EXPECT_GT(ms.back(), 5 * ms[ms.size() / 2]) << "the tail: a large original against the median";
}

}  // namespace
}  // namespace pipebench
