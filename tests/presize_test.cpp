// pipebench-data presize (datasets/presize.h) and its benchmark cache
// (datasets/presize_cache.h): output dimensions by torchvision's Resize(int) rule, the JPEG
// quality read back from the quantisation tables against the IJG standard tables scaled
// for that quality, baseline 4:2:0 from the SOF0 marker, pixels against a hand-made 2x2
// box average, labels and class folders against the source's scan, bad files, name
// collisions, the manifest and the cache's reuse rule.
#include "datasets/presize.h"
#include "datasets/presize_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "datasets/file_io.h"
#include "datasets/image_folder.h"
#include "tests/test_data.h"

namespace pipebench {
namespace {

namespace fs = std::filesystem;
using testing::make_jpeg;
using testing::scratch_dir;
using testing::put_file;
using testing::file_bytes;



// Width and height as OpenCV reads them (an independent decoder).
std::pair<int, int> dims(const fs::path& p) {
  const cv::Mat m = cv::imread(p.string(), cv::IMREAD_COLOR);
  return {m.cols, m.rows};
}

// The JPEG's markers: every DQT table's 64 values, and the SOF marker with its components'
// sampling factors (ITU-T T.81, B.2.2 and B.2.4.1).
struct JpegMarkers {
  std::vector<std::vector<int>> tables;
  int sof = -1;  // 0xC0 baseline, 0xC2 progressive, ...
  std::vector<int> sampling;  // per component, 0xHV
};

JpegMarkers markers(const std::vector<uint8_t>& j) {
  JpegMarkers m;
  size_t i = 2;
  while (i + 4 <= j.size() && j[i] == 0xFF) {
    const int marker = j[i + 1];
    const size_t len = (static_cast<size_t>(j[i + 2]) << 8) | j[i + 3];
    const size_t body = i + 4, end = i + 2 + len;
    if (marker == 0xDB) {
      for (size_t p = body; p < end;) {
        const bool sixteen = (j[p] >> 4) != 0;
        ++p;
        std::vector<int> t;
        for (int k = 0; k < 64; ++k, p += sixteen ? 2 : 1)
          t.push_back(sixteen ? (j[p] << 8 | j[p + 1]) : j[p]);
        m.tables.push_back(t);
      }
    } else if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
      m.sof = marker;
      const int components = j[body + 5];
      for (int c = 0; c < components; ++c) m.sampling.push_back(j[body + 6 + 3 * c + 1]);
    }
    if (marker == 0xDA) break;  // start of scan: the markers we need come before it
    i = end;
  }
  return m;
}

// The IJG standard tables (ITU-T T.81, Annex K, tables K.1 and K.2), natural order.
constexpr std::array<int, 64> kLuma = {
    16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57,
    69, 56, 14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64,
    81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99};
constexpr std::array<int, 64> kChroma = {
    17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99,
    99, 99, 47, 66, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
    99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99};

// libjpeg's jpeg_quality_scaling and jpeg_add_quant_table, sorted (a DQT is in zigzag
// order; sorting both sides compares the values without the scan order).
std::vector<int> scaled_sorted(const std::array<int, 64>& base, int quality) {
  const int scale = quality < 50 ? 5000 / quality : 200 - 2 * quality;
  std::vector<int> t;
  for (int v : base) t.push_back(std::clamp((v * scale + 50) / 100, 1, 255));
  std::sort(t.begin(), t.end());
  return t;
}

// An ImageFolder tree with landscape, portrait, small and odd-sized JPEGs, a PNG, a nested
// folder and a file name collision (x.png beside x.jpg).
fs::path make_source(const std::string& name) {
  const fs::path root = scratch_dir(name);
  put_file(root / "cat" / "land.jpg", make_jpeg(500, 375, 1));
  put_file(root / "cat" / "portrait.JPEG", make_jpeg(375, 500, 2));
  put_file(root / "cat" / "nested" / "deep.jpg", make_jpeg(640, 480, 3));
  put_file(root / "dog" / "small.jpg", make_jpeg(200, 120, 4));   // shorter side 120 < 256: kept
  put_file(root / "dog" / "square.jpg", make_jpeg(512, 512, 5));
  const cv::Mat png(300, 400, CV_8UC3, cv::Scalar(10, 200, 30));
  std::vector<uint8_t> png_bytes;
  cv::imencode(".png", png, png_bytes);
  put_file(root / "dog" / "x.png", png_bytes);
  put_file(root / "dog" / "x.jpg", make_jpeg(300, 260, 6));
  return root;
}

TEST(Presize, DimensionsFollowTorchvisionsResizeRule) {
  EXPECT_EQ(presized_dimensions(500, 375, 256), std::make_pair(341, 256));  // int(256 x 500 / 375)
  EXPECT_EQ(presized_dimensions(375, 500, 256), std::make_pair(256, 341));
  EXPECT_EQ(presized_dimensions(640, 480, 256), std::make_pair(341, 256));
  EXPECT_EQ(presized_dimensions(1000, 1000, 256), std::make_pair(256, 256));
  EXPECT_EQ(presized_dimensions(200, 120, 256), std::make_pair(200, 120));  // never upscaled
  EXPECT_EQ(presized_dimensions(256, 900, 256), std::make_pair(256, 900));  // already there
  EXPECT_EQ(presized_dimensions(3000, 257, 256), std::make_pair(2988, 256));  // int(256 x 3000 / 257)
}

TEST(Presize, WritesEveryImageAtTheRightSizeWithTheSameLabels) {
  const fs::path in = make_source("presize_in"), out = scratch_dir("presize_out_parent") / "out";
  std::ostringstream log;
  const PresizeResult r = presize_dataset(in, out, {256, 90, 2}, log);
  EXPECT_TRUE(r.bad.empty()) << log.str();
  EXPECT_EQ(r.manifest.images, 7u);
  EXPECT_EQ(r.manifest.downscaled, 6u);  // all but small.jpg (shorter side 120)
  const std::vector<std::pair<std::string, std::pair<int, int>>> expect = {
      {"cat/land.jpg", {341, 256}},         {"cat/portrait.jpg", {256, 341}},
      {"cat/nested/deep.jpg", {341, 256}},  {"dog/small.jpg", {200, 120}},
      {"dog/square.jpg", {256, 256}},       {"dog/x.jpg", {295, 256}},  // int(256 x 300 / 260)
      {"dog/x.png.jpg", {341, 256}}};  // x.jpg was taken by x.jpg (sorted first)
  for (const auto& [rel, wh] : expect) {
    ASSERT_TRUE(fs::exists(out / rel)) << rel;
    EXPECT_EQ(dims(out / rel), wh) << rel;
  }
  // Labels and class folders: the output's own scan against the source's.
  const ImageFolder src(in), dst(out);
  EXPECT_EQ(dst.classes(), src.classes());
  ASSERT_EQ(dst.size(), src.size());
  for (size_t i = 0; i < dst.size(); ++i) {
    const std::string cls = dst.sample(i).path.lexically_relative(out).begin()->string();
    EXPECT_EQ(dst.classes()[static_cast<size_t>(dst.sample(i).label)], cls);
  }
  // The manifest is complete and names the source's fingerprint.
  const auto m = read_presize_manifest(out);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->source_fingerprint, src.fingerprint());
  EXPECT_EQ(m->shorter_side, 256);
  EXPECT_EQ(m->quality, 90);
  EXPECT_EQ(m->images, 7u);
  EXPECT_FALSE(fs::exists(out.parent_path() / ("out.partial-" + std::to_string(::getpid()))));
}

// Large only (the tail fix, PresizeOptions::min_pixels): an image of at most min_pixels is
// the source's bytes exactly (a PNG too, under the output name rule), the larger ones are
// presized as above; the manifest counts both and records the threshold.
TEST(Presize, LargeOnlyCopiesTheOthersByteForByte) {
  const fs::path in = make_source("presize_large_in"), out = scratch_dir("presize_large_parent") / "out";
  PresizeOptions o{256, 90, 2};
  o.min_pixels = 500 * 375;  // land and portrait sit exactly on it: copied
  std::ostringstream log;
  const PresizeResult r = presize_dataset(in, out, o, log);
  EXPECT_TRUE(r.bad.empty()) << log.str();
  EXPECT_EQ(r.manifest.images, 7u);
  EXPECT_EQ(r.manifest.copied, 5u);
  EXPECT_EQ(r.manifest.downscaled, 2u);  // deep (640 x 480) and square (512 x 512)
  EXPECT_EQ(r.manifest.min_pixels, 187500u);
  const std::vector<std::pair<std::string, std::string>> copied = {
      {"cat/land.jpg", "cat/land.jpg"},       {"cat/portrait.JPEG", "cat/portrait.jpg"},
      {"dog/small.jpg", "dog/small.jpg"},     {"dog/x.jpg", "dog/x.jpg"},
      {"dog/x.png", "dog/x.png.jpg"}};
  for (const auto& [src, dst] : copied) {
    ASSERT_TRUE(fs::exists(out / dst)) << dst;
    EXPECT_EQ(file_bytes(out / dst), file_bytes(in / src)) << src << " is not a byte-for-byte copy";
  }
  EXPECT_EQ(dims(out / "cat/nested/deep.jpg"), std::make_pair(341, 256));
  EXPECT_EQ(dims(out / "dog/square.jpg"), std::make_pair(256, 256));
  EXPECT_NE(file_bytes(out / "dog/square.jpg"), file_bytes(in / "dog/square.jpg"));
  const auto m = read_presize_manifest(out);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->min_pixels, 187500u);
  EXPECT_EQ(m->copied, 5u);
  // The cache keeps a large-only copy apart from the whole copy of the same side.
  std::ostringstream quiet;
  const ImageFolder src(in);
  const CachedPresize all = cached_presize(in, src.fingerprint(), {256, 90, 2}, scratch_dir("presize_large_fb"), quiet);
  const CachedPresize large = cached_presize(in, src.fingerprint(), o, scratch_dir("presize_large_fb"), quiet);
  EXPECT_NE(all.dir, large.dir);
  EXPECT_EQ(large.manifest.copied, 5u);
  EXPECT_EQ(all.manifest.copied, 0u);
}

TEST(Presize, QualityBaselineAndSubsamplingReadBackFromTheFile) {
  const fs::path in = make_source("presize_q_in"), out = scratch_dir("presize_q") / "out";
  std::ostringstream log;
  presize_dataset(in, out, {256, 75, 1}, log);
  for (const char* rel : {"cat/land.jpg", "dog/small.jpg", "dog/x.png.jpg"}) {
    const JpegMarkers m = markers(file_bytes(out / rel));
    ASSERT_EQ(m.tables.size(), 2u) << rel;
    std::vector<int> luma = m.tables[0], chroma = m.tables[1];
    std::sort(luma.begin(), luma.end());
    std::sort(chroma.begin(), chroma.end());
    EXPECT_EQ(luma, scaled_sorted(kLuma, 75)) << rel;
    EXPECT_EQ(chroma, scaled_sorted(kChroma, 75)) << rel;
    EXPECT_NE(luma, scaled_sorted(kLuma, 90)) << rel;  // the test can tell qualities apart
    EXPECT_EQ(m.sof, 0xC0) << rel;  // baseline
    ASSERT_EQ(m.sampling.size(), 3u) << rel;
    EXPECT_EQ(m.sampling[0], 0x22) << rel;  // 4:2:0: luma 2x2, chroma 1x1
    EXPECT_EQ(m.sampling[1], 0x11) << rel;
    EXPECT_EQ(m.sampling[2], 0x11) << rel;
  }
}

TEST(Presize, PixelsAreTheAreaAverageOfTheSource) {
  // 512 x 512 -> 256 x 256: INTER_AREA at exactly 2x is the 2x2 mean, computed here by hand
  // from OpenCV's decode of the source; what is left is JPEG loss at quality 95.
  const fs::path in = scratch_dir("presize_px_in");
  put_file(in / "a" / "img.jpg", make_jpeg(512, 512, 9, 95));
  const fs::path out = scratch_dir("presize_px") / "out";
  std::ostringstream log;
  presize_dataset(in, out, {256, 95, 1}, log);
  const cv::Mat src = cv::imread((in / "a" / "img.jpg").string(), cv::IMREAD_COLOR);
  const cv::Mat got = cv::imread((out / "a" / "img.jpg").string(), cv::IMREAD_COLOR);
  ASSERT_EQ(got.cols, 256);
  std::vector<uint8_t> ref(256 * 256 * 3), mine(got.data, got.data + ref.size());
  for (int y = 0; y < 256; ++y)
    for (int x = 0; x < 256; ++x)
      for (int c = 0; c < 3; ++c) {
        int sum = 0;
        for (int dy = 0; dy < 2; ++dy)
          for (int dx = 0; dx < 2; ++dx) sum += src.at<cv::Vec3b>(2 * y + dy, 2 * x + dx)[c];
        ref[(static_cast<size_t>(y) * 256 + x) * 3 + c] = static_cast<uint8_t>((sum + 2) / 4);
      }
  const double area = testing::psnr(ref.data(), mine.data(), ref.size());
  EXPECT_GT(area, 32.0);
  // A nearest-neighbour pick (every other pixel) is further from the 2x2 mean on this
  // noisy content than the presized file is: the test tells INTER_AREA from INTER_NEAREST.
  std::vector<uint8_t> nearest(ref.size());
  for (int y = 0; y < 256; ++y)
    for (int x = 0; x < 256; ++x)
      for (int c = 0; c < 3; ++c)
        nearest[(static_cast<size_t>(y) * 256 + x) * 3 + c] = src.at<cv::Vec3b>(2 * y, 2 * x)[c];
  EXPECT_LT(testing::psnr(ref.data(), nearest.data(), ref.size()), area);
}

TEST(Presize, BadFilesAreSkippedAndListed) {
  const fs::path in = make_source("presize_bad_in");
  std::vector<uint8_t> cut = make_jpeg(500, 375, 7);
  cut.resize(100);  // inside the header: no decoder can make an image of it
  put_file(in / "cat" / "truncated.jpg", cut);
  put_file(in / "dog" / "text.jpg", {'h', 'e', 'l', 'l', 'o'});
  const fs::path out = scratch_dir("presize_bad") / "out";
  std::ostringstream log;
  const PresizeResult r = presize_dataset(in, out, {256, 90, 2}, log);
  ASSERT_EQ(r.bad.size(), 2u) << log.str();
  bool text_listed = false;
  for (const auto& b : r.bad) text_listed |= b.path.filename() == "text.jpg";
  EXPECT_TRUE(text_listed);
  EXPECT_NE(log.str().find("bad: " + (in / "dog" / "text.jpg").string()), std::string::npos) << log.str();
  EXPECT_FALSE(fs::exists(out / "dog" / "text.jpg"));
  EXPECT_FALSE(fs::exists(out / "cat" / "truncated.jpg"));
  EXPECT_EQ(read_presize_manifest(out)->bad, 2u);
  EXPECT_EQ(read_presize_manifest(out)->images, 7u);
}

TEST(Presize, RefusesToOverwriteAFolderThatIsNotItsOutput) {
  const fs::path in = make_source("presize_refuse_in");
  const fs::path out = scratch_dir("presize_refuse");
  put_file(out / "keep.txt", {'x'});
  std::ostringstream log;
  EXPECT_THROW(presize_dataset(in, out, {256, 90, 1}, log), DatasetError);
  EXPECT_TRUE(fs::exists(out / "keep.txt"));
  EXPECT_THROW(presize_dataset(in, scratch_dir("presize_refuse2") / "o", {0, 90, 1}, log),
               std::invalid_argument);
  EXPECT_THROW(presize_dataset(in, scratch_dir("presize_refuse3") / "o", {256, 101, 1}, log),
               std::invalid_argument);
}

TEST(Presize, AFolderWithoutAManifestIsNotAnOutput) {
  const fs::path dir = scratch_dir("presize_nomanifest");
  EXPECT_FALSE(read_presize_manifest(dir).has_value());
  put_file(dir / kPresizeManifest, {'{', '}'});  // parses, but is not a presize manifest
  EXPECT_FALSE(read_presize_manifest(dir).has_value());
}

TEST(PresizeCache, MadeOnceReusedThenRemadeWhenTheDataChanges) {
  const fs::path parent = scratch_dir("presize_cache");
  const fs::path data = parent / "mydata";
  put_file(data / "a" / "1.jpg", make_jpeg(400, 300, 1));
  put_file(data / "b" / "2.jpg", make_jpeg(300, 400, 2));
  std::ostringstream log;
  const PresizeOptions o{128, 80, 1};
  const CachedPresize first =
      cached_presize(data, ImageFolder(data).fingerprint(), o, parent / "fallback", log);
  EXPECT_FALSE(first.reused);
  EXPECT_EQ(first.dir, fs::weakly_canonical(parent) / ".pipebench-cache" / "mydata-presized-128-q80");
  EXPECT_EQ(dims(first.dir / "a" / "1.jpg"), std::make_pair(170, 128));
  const CachedPresize again =
      cached_presize(data, ImageFolder(data).fingerprint(), o, parent / "fallback", log);
  EXPECT_TRUE(again.reused);
  put_file(data / "b" / "3.jpg", make_jpeg(300, 400, 3));  // the dataset changed
  const CachedPresize remade =
      cached_presize(data, ImageFolder(data).fingerprint(), o, parent / "fallback", log);
  EXPECT_FALSE(remade.reused);
  EXPECT_TRUE(fs::exists(remade.dir / "b" / "3.jpg"));
}

TEST(PresizeCache, ARoundIsCopiedAloneUnderItsOwnTag) {
  const fs::path parent = scratch_dir("presize_round");
  const fs::path data = make_source("presize_round/src");
  const ImageFolder src(data);
  PresizeOptions o{256, 90, 1, {0, 3}, "round of 2 of 7 images"};
  std::ostringstream log;
  const CachedPresize c = cached_presize(data, src.fingerprint(), o, parent / "fallback", log, "round2");
  EXPECT_EQ(c.dir.filename(), "src-presized-256-q90-round2");
  const ImageFolder copy(c.dir);
  ASSERT_EQ(copy.size(), 2u);
  // The copy holds exactly samples 0 and 3 of the source, in that order.
  for (size_t k = 0; k < 2; ++k) {
    fs::path want = src.sample(k == 0 ? 0 : 3).path.lexically_relative(data);
    want.replace_extension(".jpg");
    EXPECT_EQ(copy.sample(k).path.lexically_relative(c.dir), want);
  }
  EXPECT_EQ(c.manifest.selection, "round of 2 of 7 images");
  EXPECT_TRUE(cached_presize(data, src.fingerprint(), o, parent / "fallback", log, "round2").reused);
  o.only = {1, 3};  // another round under the same tag: not the same copy
  o.selection = "round of 2 of 7 images, another";
  EXPECT_FALSE(cached_presize(data, src.fingerprint(), o, parent / "fallback", log, "round2").reused);
}

}  // namespace
}  // namespace pipebench
