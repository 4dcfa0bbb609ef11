// ShardSet (datasets/shard_set.h) and the tar index (datasets/tar_format.h) against GNU tar
// as the independent writer and reference: shards made by `tar --format=ustar|pax|gnu`
// (long names through the ustar prefix, a pax 'x' path and a GNU 'L' long name), member
// names checked against `tar -t`, header offsets against `tar -tR` block numbers; every
// bad-input case (truncated, a member without its label or a label without its image, a
// label that is not an integer or is negative, an empty shard, not a tar, a corrupt later
// header) as an error naming the shard, the member and the byte offset, and with skip_bad
// as ignored() entries; random damage to the headers never crashes or hangs.
#include "datasets/shard_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "datasets/file_io.h"
#include "datasets/open_dataset.h"
#include "datasets/tar_format.h"
#include "tests/test_data.h"

namespace pipebench {
namespace {

namespace fs = std::filesystem;
using testing::make_jpeg;
using testing::scratch_dir;
using testing::put_file;
using testing::file_bytes;



// Single-quoted for the shell (built with +=: GCC 12 misfires -Wrestrict on "x" + string).
std::string shq(const fs::path& p) {
  std::string q = "'";
  q += p.string();
  q += '\'';
  return q;
}

// GNU tar of `members` (paths relative to dir, in this order) into `tar`.
void gnu_tar(const fs::path& dir, const fs::path& tar, const std::string& format,
             const std::vector<std::string>& members) {
  std::string cmd = "tar --format=" + format + " --owner=0 --group=0 -cf " + shq(tar) +
                    " -C " + shq(dir);
  for (const auto& m : members) {
    cmd += ' ';
    cmd += shq(m);
  }
  testing::shell_output(cmd);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Header byte offsets of the members, from GNU tar's own block numbers (`tar -tR`:
// "block N: name"; N counts 512-byte blocks, extension headers included).
std::vector<uint64_t> header_offsets(const fs::path& tar) {
  std::vector<uint64_t> out;
  for (const auto& l : lines(testing::shell_output("tar -tRf " + shq(tar))))
    if (l.rfind("block ", 0) == 0 && l.find(": **") == std::string::npos)  // not "** Block of NULs **"
      out.push_back(std::stoull(l.substr(6)) * 512);
  return out;
}

// A stage folder with images and labels for samples "000", "001", ... (JPEGs of 64x48).
fs::path stage(const std::string& name, int samples) {
  const fs::path dir = scratch_dir(name);
  for (int i = 0; i < samples; ++i) {
    char key[8];
    std::snprintf(key, sizeof key, "%03d", i);
    put_file(dir / (std::string(key) + ".jpg"), make_jpeg(64, 48, static_cast<uint64_t>(i) + 1));
    put_file(dir / (std::string(key) + ".cls"), std::to_string(i % 3));
  }
  return dir;
}

// The DatasetError message ShardSet throws for `shards`, or "" when none.
std::string error_of(const std::vector<fs::path>& shards) {
  try {
    ShardSet s(shards, false);
  } catch (const DatasetError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(ShardSet, GnuTarUstarPaxAndGnuLongNamesReadBack) {
  const fs::path dir = scratch_dir("shard_gnu");
  const std::string deep = "d1234567890/e1234567890/f1234567890/g1234567890/h1234567890/"
                           "i1234567890/j1234567890/k1234567890";  // 95 bytes of folders
  const std::string long_stem = std::string(120, 'x');               // no ustar split fits
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"ustar", {deep + "/sample_one.jpg", deep + "/sample_one.cls", "b.png", "b.cls"}},
      {"pax", {long_stem + ".jpg", long_stem + ".cls", "caf\xc3\xa9.jpeg", "caf\xc3\xa9.cls"}},
      {"gnu", {long_stem + ".jpg", long_stem + ".cls", deep + "/sample_one.jpg", deep + "/sample_one.cls"}}};
  for (const auto& [format, members] : cases) {
    SCOPED_TRACE(format);
    const fs::path src = scratch_dir("shard_gnu_src_" + format);
    for (size_t i = 0; i < members.size(); i += 2) {
      put_file(src / members[i], make_jpeg(40 + static_cast<int>(i), 30, i + 7));
      std::string label = " ";  // whitespace around the digits is allowed
      label += std::to_string(i * 5);
      label += '\n';
      put_file(src / members[i + 1], label);
    }
    fs::create_directories(src / "emptydir");  // a directory member: skipped
    std::vector<std::string> with_dir = members;
    with_dir.push_back("emptydir");
    const fs::path tar = dir / (format + ".tar");
    gnu_tar(src, tar, format, with_dir);
    // GNU tar's own listing is the reference for the names.
    const std::vector<std::string> listed = lines(testing::shell_output("tar -tf " + shq(tar)));
    ASSERT_EQ(listed.size(), 5u);
    const ShardSet s(std::vector<fs::path>{tar});
    ASSERT_EQ(s.size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(s.member(k), listed[2 * k]);
      EXPECT_EQ(s.name(k), tar.string() + ":" + listed[2 * k]);
      EXPECT_EQ(s.label(k), static_cast<int32_t>(2 * k * 5));
      std::vector<uint8_t> buf;
      const auto b = s.bytes(k, buf);
      EXPECT_EQ(std::vector<uint8_t>(b.begin(), b.end()), file_bytes(src / members[2 * k]));
    }
    EXPECT_EQ(s.num_classes(), 11u);  // labels 0 and 10
    EXPECT_TRUE(s.ignored().empty());
    EXPECT_EQ(s.layout(), "shards");
    EXPECT_EQ(s.file_count(), 1u);
  }
}

TEST(ShardSet, GroupsAreShardsAndBytesAreServedFromMemoryAfterCaching) {
  const fs::path src = stage("shard_groups_src", 5), dir = scratch_dir("shard_groups");
  gnu_tar(src, dir / "a-000001.tar", "ustar", {"000.jpg", "000.cls", "001.jpg", "001.cls"});
  gnu_tar(src, dir / "a-000000.tar", "ustar", {"002.jpg", "002.cls"});
  gnu_tar(src, dir / "a-000002.tar", "pax", {"003.jpg", "003.cls", "004.jpg", "004.cls"});
  put_file(dir / "notes.txt", "not a shard");
  ShardSet s(dir);  // sorted by name: a-000000, a-000001, a-000002
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s.group_starts(), (std::vector<size_t>{0, 1, 3}));
  EXPECT_EQ(s.file(0), dir / "a-000000.tar");
  EXPECT_EQ(s.file_of(0), 0u);
  EXPECT_EQ(s.file_of(2), 1u);
  EXPECT_EQ(s.file_of(4), 2u);
  EXPECT_EQ(s.member(0), "002.jpg");
  const std::vector<std::string> order = {"002", "000", "001", "003", "004"};
  uint64_t total = 0;
  for (size_t i = 0; i < 5; ++i) total += fs::file_size(src / (order[i] + ".jpg"));
  EXPECT_EQ(s.sample_bytes(), total);
  const std::string fp = s.fingerprint();
  EXPECT_EQ(fp.size(), 16u);
  s.cache_in_memory();
  EXPECT_TRUE(s.in_memory());
  fs::remove(dir / "a-000002.tar");  // served from memory now
  for (size_t i = 0; i < 5; ++i) {
    std::vector<uint8_t> buf;
    const auto b = s.bytes(i, buf);
    EXPECT_EQ(std::vector<uint8_t>(b.begin(), b.end()), file_bytes(src / (order[i] + ".jpg"))) << i;
  }
  // The fingerprint changes with a shard's size or time.
  gnu_tar(src, dir / "a-000002.tar", "pax", {"003.jpg", "003.cls"});
  EXPECT_NE(ShardSet(dir).fingerprint(), fp);
}

TEST(ShardSet, ManyThreadsReadTheSameShardsAtOnce) {
  const fs::path src = stage("shard_threads_src", 8), dir = scratch_dir("shard_threads");
  gnu_tar(src, dir / "s-0.tar", "ustar", {"000.jpg", "000.cls", "001.jpg", "001.cls", "002.jpg", "002.cls", "003.jpg", "003.cls"});
  gnu_tar(src, dir / "s-1.tar", "ustar", {"004.jpg", "004.cls", "005.jpg", "005.cls", "006.jpg", "006.cls", "007.jpg", "007.cls"});
  const ShardSet s(dir);
  std::vector<std::vector<uint8_t>> expect;
  for (int i = 0; i < 8; ++i) {
    char key[8];
    std::snprintf(key, sizeof key, "%03d.jpg", i);
    expect.push_back(file_bytes(src / key));
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 8; ++t)
    pool.emplace_back([&, t] {
      std::vector<uint8_t> buf;
      for (int r = 0; r < 200; ++r) {
        const size_t i = static_cast<size_t>((t * 3 + r) % 8);
        const auto b = s.bytes(i, buf);
        if (std::vector<uint8_t>(b.begin(), b.end()) != expect[i]) ++mismatches;
      }
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(ShardSetBadInput, TruncatedTarNamesShardMemberAndOffset) {
  const fs::path src = stage("shard_trunc_src", 2), dir = scratch_dir("shard_trunc");
  const fs::path tar = dir / "t.tar";
  gnu_tar(src, tar, "ustar", {"000.jpg", "000.cls", "001.jpg", "001.cls"});
  const std::vector<uint64_t> at = header_offsets(tar);  // 000.jpg 000.cls 001.jpg 001.cls
  ASSERT_EQ(at.size(), 4u);
  fs::resize_file(tar, at[2] + 512 + 100);  // 100 bytes into 001.jpg's data
  const std::string e = error_of({tar});
  EXPECT_TRUE(contains(e, tar.string())) << e;
  EXPECT_TRUE(contains(e, "\"001.jpg\"")) << e;
  EXPECT_TRUE(contains(e, "byte " + std::to_string(at[2]))) << e;
  EXPECT_TRUE(contains(e, "truncated")) << e;
  // skip_bad: the complete sample before the cut is kept, the shard's problem listed.
  const ShardSet s(std::vector<fs::path>{tar}, true);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s.member(0), "000.jpg");
  ASSERT_EQ(s.ignored().size(), 1u);
  EXPECT_TRUE(contains(s.ignored()[0].reason, "truncated")) << s.ignored()[0].reason;
  // A cut on the block boundary before 001.jpg's header: no end-of-archive blocks.
  fs::resize_file(tar, at[2]);
  EXPECT_TRUE(contains(error_of({tar}), "header at byte " + std::to_string(at[2]) +
                                            " (after member \"000.cls\"): truncated tar: the "
                                            "file ends without the end-of-archive zero blocks"))
      << error_of({tar});
  // A cut inside a header.
  fs::resize_file(tar, at[2] + 300);
  EXPECT_TRUE(contains(error_of({tar}), "truncated tar: the file ends 300 bytes into a 512-byte header"))
      << error_of({tar});
}

TEST(ShardSetBadInput, MissingLabelOrImageNamesTheMember) {
  const fs::path src = stage("shard_pair_src", 3), dir = scratch_dir("shard_pair");
  const fs::path no_label = dir / "no_label.tar", no_image = dir / "no_image.tar";
  gnu_tar(src, no_label, "ustar", {"000.jpg", "000.cls", "001.jpg", "002.jpg", "002.cls"});
  gnu_tar(src, no_image, "ustar", {"000.jpg", "000.cls", "001.cls"});
  const std::vector<uint64_t> at = header_offsets(no_label);
  std::string e = error_of({no_label});
  EXPECT_TRUE(contains(e, no_label.string() + ": member \"001.jpg\" (header at byte " +
                              std::to_string(at[2]) + "): image without its .cls label")) << e;
  e = error_of({no_image});
  EXPECT_TRUE(contains(e, "member \"001.cls\"")) << e;
  EXPECT_TRUE(contains(e, ".cls label without an image member")) << e;
  const ShardSet s(std::vector<fs::path>{no_label, no_image}, true);
  ASSERT_EQ(s.size(), 3u);  // 000 and 002 of the first, 000 of the second
  EXPECT_EQ(s.member(1), "002.jpg");
  EXPECT_EQ(s.group_starts(), (std::vector<size_t>{0, 2}));
  ASSERT_EQ(s.ignored().size(), 2u);
  EXPECT_EQ(s.ignored()[0].path, fs::path(no_label.string() + ":001.jpg"));
  EXPECT_EQ(s.ignored()[1].path, fs::path(no_image.string() + ":001.cls"));
}

TEST(ShardSetBadInput, LabelsThatAreNotNonNegativeIntegers) {
  const fs::path dir = scratch_dir("shard_label");
  for (const auto& [text, reason] : std::vector<std::pair<std::string, std::string>>{
           {"cat", "is not a decimal integer"}, {"-1", "is negative"}, {"", "is not a decimal integer"},
           {"1.5", "is not a decimal integer"}, {"99999999999", "larger than 2^31 - 1"},
           {std::string(40, '1'), "more than 32"}}) {
    SCOPED_TRACE(text);
    const fs::path src = stage("shard_label_src", 1);
    put_file(src / "000.cls", text);
    const fs::path tar = dir / "l.tar";
    fs::remove(tar);
    gnu_tar(src, tar, "ustar", {"000.jpg", "000.cls"});
    const std::string e = error_of({tar});
    const uint64_t cls_at = header_offsets(tar).at(1);
    EXPECT_TRUE(contains(e, tar.string() + ": member \"000.cls\" (header at byte " +
                                std::to_string(cls_at) + ")")) << e;
    EXPECT_TRUE(contains(e, reason)) << e;
    // skip_bad with nothing valid left still throws, naming the problem.
    try {
      ShardSet s(std::vector<fs::path>{tar}, true);
      ADD_FAILURE() << "no valid sample must throw";
    } catch (const DatasetError& x) {
      EXPECT_TRUE(contains(x.what(), "no valid sample")) << x.what();
      EXPECT_TRUE(contains(x.what(), reason)) << x.what();
    }
  }
}

TEST(ShardSetBadInput, EmptyShardNotATarAndCorruptHeader) {
  const fs::path src = stage("shard_empty_src", 2), dir = scratch_dir("shard_empty");
  const fs::path empty = dir / "empty.tar", zero = dir / "zero.tar", jpeg = dir / "jpeg.tar";
  testing::shell_output("tar -cf " + shq(empty) + " -T /dev/null");  // GNU tar's empty archive: zero blocks
  put_file(zero, std::string());
  put_file(jpeg, make_jpeg(64, 48));
  EXPECT_TRUE(contains(error_of({empty}), empty.string() + ": empty shard (no member")) << error_of({empty});
  EXPECT_TRUE(contains(error_of({zero}), zero.string() + ": empty shard")) << error_of({zero});
  EXPECT_TRUE(contains(error_of({jpeg}), jpeg.string() + ": header at byte 0: not a tar file"))
      << error_of({jpeg});
  // A later header with a flipped name byte: the checksum catches it, at its offset.
  const fs::path bad = dir / "bad.tar";
  gnu_tar(src, bad, "ustar", {"000.jpg", "000.cls", "001.jpg", "001.cls"});
  const std::vector<uint64_t> at = header_offsets(bad);
  std::fstream f(bad, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(at[2]));
  f.put('Z');
  f.close();
  const std::string e = error_of({bad});
  EXPECT_TRUE(contains(e, "header at byte " + std::to_string(at[2]) + " (after member \"000.cls\")"))
      << e;
  EXPECT_TRUE(contains(e, "checksum mismatch")) << e;
  // skip_bad: the bad shards listed, the good samples of the corrupt one kept.
  const fs::path good = dir / "good.tar";
  gnu_tar(src, good, "ustar", {"001.jpg", "001.cls"});
  const ShardSet s(std::vector<fs::path>{empty, zero, jpeg, bad, good}, true);
  EXPECT_EQ(s.size(), 2u);  // 000 of bad.tar, 001 of good.tar
  EXPECT_EQ(s.file_count(), 2u);
  ASSERT_EQ(s.ignored().size(), 4u);
  EXPECT_EQ(s.ignored()[2].path, jpeg);
}

TEST(ShardSetBadInput, RandomHeaderDamageNeverCrashesOrHangs) {
  const fs::path src = stage("shard_fuzz_src", 2), dir = scratch_dir("shard_fuzz");
  const fs::path tar = dir / "f.tar";
  gnu_tar(src, tar, "pax", {"000.jpg", "000.cls", "001.jpg", "001.cls"});
  const std::vector<uint8_t> good = file_bytes(tar);
  std::mt19937 rng(5);
  const fs::path damaged = dir / "d.tar";
  int errors = 0;
  const std::vector<uint64_t> at = {0, header_offsets(tar).back()};
  for (int trial = 0; trial < 600; ++trial) {
    std::vector<uint8_t> b = good;
    const size_t pos = at[trial % 2] + rng() % 512;
    b[pos] = static_cast<uint8_t>(rng());
    if (trial % 3 == 0) {  // keep the checksum right so the fields themselves are parsed
      const size_t h = pos / 512 * 512;
      char sum[8];
      std::snprintf(sum, sizeof sum, "%06o", ustar_checksum(b.data() + h));
      std::copy(sum, sum + 7, b.begin() + static_cast<std::ptrdiff_t>(h + 148));
    }
    write_file(damaged, b.data(), b.size());
    try {
      const ShardSet s(std::vector<fs::path>{damaged}, trial % 2 == 0);
      std::vector<uint8_t> buf;
      for (size_t i = 0; i < s.size(); ++i) s.bytes(i, buf);
    } catch (const DatasetError&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);
}

TEST(OpenDataset, ShardFolderImageFolderOrNeither) {
  const fs::path src = stage("open_src", 1), shards = scratch_dir("open_shards");
  gnu_tar(src, shards / "x-000000.tar", "ustar", {"000.jpg", "000.cls"});
  EXPECT_TRUE(is_shard_dir(shards));
  EXPECT_TRUE(is_shard_dir(shards / "x-000000.tar"));
  EXPECT_EQ(open_dataset(shards, false)->layout(), "shards");
  const fs::path folder = scratch_dir("open_folder");
  put_file(folder / "cat" / "a.jpg", make_jpeg(32, 32));
  EXPECT_FALSE(is_shard_dir(folder));
  EXPECT_EQ(open_dataset(folder, false)->layout(), "files");
  const fs::path neither = scratch_dir("open_neither");
  put_file(neither / "readme.txt", "x");
  try {
    open_dataset(neither, false);
    ADD_FAILURE() << "expected DatasetError";
  } catch (const DatasetError& e) {
    EXPECT_TRUE(contains(e.what(), "neither an ImageFolder tree")) << e.what();
  }
  EXPECT_THROW(open_dataset(neither / "missing", false), DatasetError);
}

}  // namespace
}  // namespace pipebench
