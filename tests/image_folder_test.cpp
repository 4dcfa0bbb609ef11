// ImageFolder and file_io: the torchvision layout rules (sorted classes, sorted samples,
// extension filter, files under root ignored, links followed), byte reads checked against
// std::ifstream, the cache, the fingerprint's sensitivity, and errors that name the path.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "datasets/file_io.h"
#include "datasets/image_folder.h"
#include "tests/test_data.h"

namespace pipebench {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void put(const fs::path& p, const std::vector<uint8_t>& bytes) {
  write_file(p, bytes.data(), bytes.size());
}

/// A hand-made tree: classes "b", "a", "C" (byte order: C < a < b) with mixed extensions.
fs::path make_tree(const std::string& name) {
  const auto root = testing::scratch_dir(name);
  const auto jpeg = testing::make_jpeg(16, 16, 1);
  const auto jpeg2 = testing::make_jpeg(24, 16, 2);
  put(root / "b" / "z.jpg", jpeg);
  put(root / "b" / "y.JPEG", jpeg2);
  put(root / "b" / "notes.txt", {1, 2, 3});
  put(root / "b" / "x.png", jpeg);
  put(root / "a" / "m.jpeg", jpeg);
  put(root / "a" / "nested" / "deep.jpg", jpeg);  // nested: ignored
  put(root / "C" / "k.Jpg", jpeg2);
  put(root / "top.jpg", jpeg);                    // directly under root: ignored
  fs::create_directories(root / "empty");
  return root;
}

TEST(ImageFolder, ScansClassesAndSamplesInByteOrder) {
  const auto root = make_tree("if_scan");
  ImageFolder f(root);
  const std::vector<std::string> classes = {"C", "a", "b", "empty"};
  EXPECT_EQ(f.classes(), classes);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f.sample(0).path, root / "C" / "k.Jpg");
  EXPECT_EQ(f.sample(0).label, 0);
  EXPECT_EQ(f.sample(1).path, root / "a" / "m.jpeg");
  EXPECT_EQ(f.sample(1).label, 1);
  EXPECT_EQ(f.sample(2).path, root / "b" / "y.JPEG");
  EXPECT_EQ(f.sample(3).path, root / "b" / "z.jpg");
  EXPECT_EQ(f.sample(3).label, 2);
  uint64_t total = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    EXPECT_EQ(f.sample(i).size_bytes, fs::file_size(f.sample(i).path));
    total += fs::file_size(f.sample(i).path);
  }
  EXPECT_EQ(f.total_bytes(), total);
  EXPECT_THROW(f.sample(4), std::out_of_range);
}

TEST(ImageFolder, FollowsSymbolicLinks) {
  const auto root = testing::scratch_dir("if_links");
  const auto outside = testing::scratch_dir("if_links_target");
  put(outside / "real.jpg", testing::make_jpeg(16, 16, 3));
  put(outside / "cls" / "r.jpg", testing::make_jpeg(16, 16, 4));
  fs::create_directories(root / "a");
  fs::create_symlink(outside / "real.jpg", root / "a" / "link.jpg");
  fs::create_directory_symlink(outside / "cls", root / "b");
  ImageFolder f(root);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f.sample(0).size_bytes, fs::file_size(outside / "real.jpg"));
  std::vector<uint8_t> bytes;
  f.read(1, bytes);
  EXPECT_EQ(bytes, slurp(outside / "cls" / "r.jpg"));
}

TEST(ImageFolder, ReadAndCacheReturnTheFileBytes) {
  SyntheticOptions o;
  o.count = 6;
  o.classes = 2;
  o.min_width = o.max_width = 48;
  o.min_height = o.max_height = 32;
  const auto root = testing::make_dataset("if_read", o);
  ImageFolder f(root);
  ASSERT_EQ(f.size(), 6u);
  EXPECT_FALSE(f.is_cached());
  EXPECT_THROW(f.cached(0), DatasetError);
  std::vector<uint8_t> out;
  out.reserve(1 << 20);
  const auto capacity = out.capacity();
  for (size_t i = 0; i < f.size(); ++i) {
    f.read(i, out);
    EXPECT_EQ(out, slurp(f.sample(i).path));
    EXPECT_EQ(out.capacity(), capacity);  // capacity kept across calls
  }
  f.cache_in_memory();
  ASSERT_TRUE(f.is_cached());
  // Serving from the cache: the bytes survive deleting the files.
  const auto expected = slurp(f.sample(2).path);
  fs::remove(f.sample(2).path);
  auto span = f.cached(2);
  EXPECT_EQ(std::vector<uint8_t>(span.begin(), span.end()), expected);
  f.read(2, out);
  EXPECT_EQ(out, expected);
}

TEST(ImageFolder, FingerprintTracksNamesSizesAndContents) {
  SyntheticOptions o;
  o.count = 4;
  o.classes = 2;
  o.min_width = o.max_width = 32;
  o.min_height = o.max_height = 32;
  const auto root = testing::make_dataset("if_fp", o);
  const auto other = testing::make_dataset("if_fp_other", o);  // same names and bytes
  const std::string fp = ImageFolder(root).fingerprint();
  const std::string fpc = ImageFolder(root).fingerprint(true);
  EXPECT_EQ(fp.size(), 16u);
  EXPECT_EQ(fp.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(fp, ImageFolder(root).fingerprint());
  EXPECT_EQ(fp, ImageFolder(other).fingerprint());  // relative paths, not absolute
  EXPECT_NE(fp, fpc);

  // Same size, one byte changed: only the content fingerprint moves.
  ImageFolder before(root);
  const auto p = before.sample(1).path;
  auto bytes = slurp(p);
  bytes[bytes.size() / 2] ^= 0x55;
  put(p, bytes);
  EXPECT_EQ(ImageFolder(root).fingerprint(), fp);
  EXPECT_NE(ImageFolder(root).fingerprint(true), fpc);
  ImageFolder cached(root);
  cached.cache_in_memory();
  EXPECT_EQ(cached.fingerprint(true), ImageFolder(root).fingerprint(true));

  // Renamed file: the name fingerprint moves.
  fs::rename(p, p.parent_path() / "renamed.jpg");
  EXPECT_NE(ImageFolder(root).fingerprint(), fp);
}

TEST(ImageFolder, ErrorsNameThePath) {
  const auto base = testing::scratch_dir("if_errors");
  auto expect_error = [](const fs::path& root, const std::string& reason) {
    try {
      ImageFolder f(root);
      ADD_FAILURE() << "no error for " << root;
    } catch (const DatasetError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(root.string()), std::string::npos) << what;
      EXPECT_NE(what.find(reason), std::string::npos) << what;
    }
  };
  expect_error(base / "missing", "does not exist");
  put(base / "file.jpg", {1});
  expect_error(base / "file.jpg", "not a directory");
  fs::create_directories(base / "no_classes");
  put(base / "no_classes" / "a.jpg", {1});
  expect_error(base / "no_classes", "no class directory");
  fs::create_directories(base / "no_images" / "cls");
  put(base / "no_images" / "cls" / "a.png", {1});
  expect_error(base / "no_images", "no .jpg/.jpeg image");
}

TEST(FileIo, ReadWriteAndErrors) {
  const auto dir = testing::scratch_dir("file_io");
  const std::vector<uint8_t> data = {0, 1, 2, 250, 255};
  write_file(dir / "x" / "y" / "f.bin", data.data(), data.size());  // creates parents
  std::vector<uint8_t> out;
  EXPECT_EQ(read_file(dir / "x" / "y" / "f.bin", out), data.size());
  EXPECT_EQ(out, data);
  write_file(dir / "empty.bin", nullptr, 0);
  EXPECT_EQ(read_file(dir / "empty.bin", out), 0u);
  EXPECT_TRUE(out.empty());
  EXPECT_NO_THROW(drop_page_cache(dir / "x" / "y" / "f.bin"));
  try {
    read_file(dir / "nope.bin", out);
    FAIL();
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.bin"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  }
  EXPECT_THROW(drop_page_cache(dir / "nope.bin"), DatasetError);
  EXPECT_THROW(read_file(dir, out), DatasetError);  // a directory
}

}  // namespace
}  // namespace pipebench
