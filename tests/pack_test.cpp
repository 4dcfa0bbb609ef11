// pipebench-data pack (datasets/pack.h) and its benchmark cache (datasets/pack_cache.h):
// the shards read back through ShardSet hold exactly the source files' bytes and labels
// (matched by content against the ImageFolder, each source once); the order is a seeded
// shuffle (or ImageFolder order with shuffle off); member names, sizes and group
// boundaries against GNU tar's own listing (`tar -tvf`); --shard-mib splits by size
// (checked from GNU tar's sizes); an unreadable source is listed and left out; OUT that is
// not a pack output is refused; the cache is reused, and remade when the data changes.
// Python's tarfile lists the same shards in tests/scripts/pack_tarfile_test.py.
#include "datasets/pack.h"
#include "datasets/pack_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "datasets/file_io.h"
#include "datasets/image_folder.h"
#include "datasets/shard_set.h"
#include "tests/test_data.h"

namespace pipebench {
namespace {

namespace fs = std::filesystem;
using testing::make_jpeg;
using testing::scratch_dir;
using testing::put_file;



// GNU tar's listing of a shard: {name, size} per member ("tar -tvf": mode owner size date
// time name).
std::vector<std::pair<std::string, uint64_t>> gnu_listing(const fs::path& tar) {
  std::vector<std::pair<std::string, uint64_t>> out;
  std::istringstream in(testing::shell_output("tar -tvf '" + tar.string() + "'"));
  for (std::string line; std::getline(in, line);) {
    std::istringstream l(line);
    std::string mode, owner, date, time, name;
    uint64_t size = 0;
    l >> mode >> owner >> size >> date >> time >> name;
    out.emplace_back(name, size);
  }
  return out;
}

// A synthetic tree of 3 classes plus a PNG with an upper-case extension.
fs::path make_source(const std::string& name, int count) {
  SyntheticOptions o;
  o.count = count;
  o.classes = 3;
  o.min_width = 60;
  o.max_width = 160;
  o.min_height = 50;
  o.max_height = 120;
  const fs::path root = testing::make_dataset(name, o);
  std::vector<uint8_t> png = make_jpeg(20, 20);  // content does not matter to pack
  put_file(root / "class_001" / "Upper.PNG", png);
  return root;
}

// Sample i's bytes as a string (a map key).
std::string bytes_of(const SampleSource& s, size_t i) {
  std::vector<uint8_t> buf;
  const auto b = s.bytes(i, buf);
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

TEST(Pack, ShardsHoldExactlyTheSourceBytesAndLabels) {
  const fs::path in = make_source("pack_src", 41), out = scratch_dir("pack_out") / "shards";
  std::ostringstream log;
  PackOptions o;
  o.shard_size = 8;
  o.seed = 3;
  const PackResult r = pack_dataset(in, out, o, log);
  const ImageFolder folder(in);
  ASSERT_EQ(folder.size(), 42u);
  EXPECT_TRUE(r.bad.empty()) << log.str();
  // Every source file's bytes once, under its own label, matched by content.
  std::map<std::string, std::vector<size_t>> by_content;
  for (size_t i = 0; i < folder.size(); ++i) by_content[bytes_of(folder, i)].push_back(i);
  const ShardSet shards(out);
  ASSERT_EQ(shards.size(), folder.size());
  std::set<size_t> seen;
  std::vector<size_t> packed_order;
  for (size_t k = 0; k < shards.size(); ++k) {
    const auto it = by_content.find(bytes_of(shards, k));
    ASSERT_NE(it, by_content.end()) << shards.name(k);
    const size_t src = it->second.front();
    EXPECT_TRUE(seen.insert(src).second) << shards.name(k);
    EXPECT_EQ(shards.label(k), folder.label(src)) << shards.name(k);
    packed_order.push_back(src);
    // key = packed position, extension = the source's, lower-cased
    char key[32];
    std::snprintf(key, sizeof key, "%08zu.", k);
    const std::string ext = folder.sample(src).path.extension().string();
    EXPECT_EQ(shards.member(k), key + std::string(ext == ".PNG" ? "png" : "jpg"));
  }
  EXPECT_EQ(seen.size(), folder.size());
  EXPECT_EQ(packed_order, r.order);  // the order the pack reports is what it wrote
  EXPECT_EQ(shards.num_classes(), 3u);
  EXPECT_EQ(shards.classes(), folder.classes());  // classes.txt
  // Shuffled: not ImageFolder order, the same for the same seed, another for another seed.
  std::vector<size_t> identity(folder.size());
  for (size_t i = 0; i < identity.size(); ++i) identity[i] = i;
  EXPECT_NE(r.order, identity);
  EXPECT_EQ(pack_order(42, 3, true), r.order);
  EXPECT_NE(pack_order(42, 4, true), r.order);
  EXPECT_EQ(pack_order(42, 3, false), identity);
}

TEST(Pack, MembersAndGroupsMatchGnuTarsListing) {
  const fs::path in = make_source("pack_list_src", 21), out = scratch_dir("pack_list") / "o";
  std::ostringstream log;
  PackOptions o;
  o.shard_size = 5;
  o.shuffle = false;
  o.prefix = "part";
  const PackResult r = pack_dataset(in, out, o, log);
  const ImageFolder folder(in);
  const ShardSet shards(out);
  ASSERT_EQ(r.manifest.shards.size(), 5u);  // 22 images: 5 + 5 + 5 + 5 + 2
  std::vector<size_t> starts;
  size_t position = 0;
  for (size_t g = 0; g < 5; ++g) {
    char name[32];
    std::snprintf(name, sizeof name, "part-%06zu.tar", g);
    const auto listing = gnu_listing(out / name);
    ASSERT_EQ(listing.size() % 2, 0u);
    starts.push_back(position);
    for (size_t m = 0; m < listing.size(); m += 2, ++position) {
      char key[32];
      std::snprintf(key, sizeof key, "%08zu", position);
      // ImageFolder order (no shuffle): the image member is source `position`'s file.
      const SampleEntry& s = folder.sample(position);
      EXPECT_EQ(listing[m].first.substr(0, 9), std::string(key) + ".");
      EXPECT_EQ(listing[m].second, s.size_bytes);
      EXPECT_EQ(listing[m + 1].first, std::string(key) + ".cls");
      EXPECT_EQ(listing[m + 1].second, std::to_string(s.label).size());
    }
  }
  EXPECT_EQ(position, 22u);
  EXPECT_EQ(shards.group_starts(), starts);
  EXPECT_EQ(testing::shell_output("cat '" + (out / "classes.txt").string() + "'"), "class_000\nclass_001\nclass_002\n");
}

TEST(Pack, ShardMibSplitsBySize) {
  const fs::path in = make_source("pack_mib_src", 30), out = scratch_dir("pack_mib") / "o";
  std::ostringstream log;
  PackOptions o;
  o.shard_mib = 0.05;  // 52428 bytes: a few images per shard
  const PackResult r = pack_dataset(in, out, o, log);
  const uint64_t limit = static_cast<uint64_t>(0.05 * 1048576);
  ASSERT_GE(r.manifest.shards.size(), 3u);
  size_t images = 0;
  for (size_t g = 0; g < r.manifest.shards.size(); ++g) {
    const fs::path tar = out / r.manifest.shards[g].name;
    const auto listing = gnu_listing(tar);
    images += listing.size() / 2;
    // Tar bytes before the shard's last sample (headers, padded data) and with it.
    uint64_t before_last = 0, all = 0;
    for (size_t m = 0; m < listing.size(); ++m) {
      const uint64_t member = 512 + (listing[m].second + 511) / 512 * 512;
      all += member;
      if (m + 2 < listing.size()) before_last += member;
    }
    EXPECT_EQ(fs::file_size(tar), all + 1024) << tar;  // plus the two zero blocks
    EXPECT_LT(before_last, limit) << tar;  // a new shard only once the limit was reached
    if (g + 1 < r.manifest.shards.size()) {
      EXPECT_GE(all, limit) << tar;
    }
  }
  EXPECT_EQ(images, 31u);
}

TEST(Pack, UnreadableSourceIsListedAndLeftOut) {
  const fs::path in = make_source("pack_bad_src", 6);
  const fs::path unreadable = "/proc/sys/vm/compact_memory";  // write-only, even for root
  if (::access(unreadable.c_str(), F_OK) != 0 || ::access(unreadable.c_str(), R_OK) == 0)
    GTEST_SKIP() << unreadable << " is not a write-only file here";
  fs::create_symlink(unreadable, in / "class_000" / "zz_unreadable.jpg");
  const fs::path out = scratch_dir("pack_bad") / "o";
  std::ostringstream log;
  PackOptions o;
  o.shard_size = 100;
  const PackResult r = pack_dataset(in, out, o, log);
  ASSERT_EQ(r.bad.size(), 1u) << log.str();
  EXPECT_EQ(r.bad[0].path.filename(), "zz_unreadable.jpg");
  EXPECT_NE(log.str().find("zz_unreadable.jpg"), std::string::npos) << log.str();
  EXPECT_EQ(r.manifest.images, 7u);
  const ShardSet shards(out);
  EXPECT_EQ(shards.size(), 7u);
  EXPECT_EQ(shards.member(6), "00000006.jpg");  // positions stay contiguous
  EXPECT_EQ(read_pack_manifest(out)->bad, 1u);
}

TEST(Pack, RefusesAFolderThatIsNotItsOutputAndReplacesItsOwn) {
  const fs::path in = make_source("pack_refuse_src", 9), parent = scratch_dir("pack_refuse");
  put_file(parent / "other" / "keep.txt", {'x'});
  std::ostringstream log;
  PackOptions o;
  o.shard_size = 2;
  EXPECT_THROW(pack_dataset(in, parent / "other", o, log), DatasetError);
  EXPECT_TRUE(fs::exists(parent / "other" / "keep.txt"));
  EXPECT_THROW(pack_dataset(in, parent / "x", PackOptions{}, log), std::invalid_argument);
  const fs::path out = parent / "out";
  EXPECT_EQ(pack_dataset(in, out, o, log).manifest.shards.size(), 5u);  // 10 images
  o.shard_size = 4;
  EXPECT_EQ(pack_dataset(in, out, o, log).manifest.shards.size(), 3u);
  // The earlier output's extra shards are gone: no stale sample is read.
  EXPECT_EQ(list_shards(out).size(), 3u);
  EXPECT_EQ(ShardSet(out).size(), 10u);
  for (const auto& e : fs::directory_iterator(out))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

TEST(PackCache, MadeOnceReusedThenRemadeWhenTheDataChanges) {
  const fs::path parent = scratch_dir("pack_cache");
  const fs::path data = parent / "set";
  fs::rename(make_source("pack_cache_src", 7), data);
  std::ostringstream log;
  const auto fp = [&] { return ImageFolder(data).fingerprint(); };
  const CachedPack a = cached_pack(data, fp(), 3, 0, parent / "fallback", log);
  EXPECT_FALSE(a.reused);
  EXPECT_EQ(a.dir, parent / ".pipebench-cache" / "set-shards-3");
  EXPECT_EQ(ShardSet(a.dir).size(), 8u);
  EXPECT_TRUE(cached_pack(data, fp(), 3, 0, parent / "fallback", log).reused);
  EXPECT_FALSE(cached_pack(data, fp(), 3, 1, parent / "fallback", log).reused);  // another seed
  put_file(data / "class_000" / "new.jpg", make_jpeg(30, 30));
  const CachedPack b = cached_pack(data, fp(), 3, 1, parent / "fallback", log);
  EXPECT_FALSE(b.reused);
  EXPECT_EQ(ShardSet(b.dir).size(), 9u);
  // A shard removed behind the cache's back: made again.
  fs::remove(b.dir / b.manifest.shards[0].name);
  EXPECT_FALSE(cached_pack(data, fp(), 3, 1, parent / "fallback", log).reused);
}

}  // namespace
}  // namespace pipebench
