// Synthetic datasets: the renderer is deterministic and photo-like, encode_jpeg honours its
// quality / subsampling / progressive arguments (checked by decoding with OpenCV and by
// reading the headers with TurboJPEG), and write_synthetic_dataset lays out an ImageFolder.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <opencv2/imgcodecs.hpp>
#include <set>

#include "datasets/image_folder.h"
#include "datasets/synthetic.h"
#include "tests/test_data.h"

namespace pipebench {
namespace {

struct Header {
  int width = 0, height = 0, subsamp = -1;
};

Header header_of(const std::vector<uint8_t>& jpeg) {
  tjhandle h = tjInitDecompress();
  Header out;
  int colorspace = 0;
  EXPECT_EQ(tjDecompressHeader3(h, jpeg.data(), jpeg.size(), &out.width, &out.height,
                                &out.subsamp, &colorspace),
            0);
  tjDestroy(h);
  return out;
}

/// True if a start-of-frame marker of this type (0xC0 baseline, 0xC2 progressive) occurs.
bool has_marker(const std::vector<uint8_t>& jpeg, uint8_t marker) {
  for (size_t i = 0; i + 1 < jpeg.size(); ++i)
    if (jpeg[i] == 0xFF && jpeg[i + 1] == marker) return true;
  return false;
}

std::vector<uint8_t> slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(Synthetic, RenderIsDeterministicAndSeedDependent) {
  const auto a = render_synthetic_rgb(123, 77, 42);
  const auto b = render_synthetic_rgb(123, 77, 42);
  const auto c = render_synthetic_rgb(123, 77, 43);
  ASSERT_EQ(a.size(), 123u * 77u * 3u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Synthetic, RenderIsPhotoLike) {
  const int w = 320, h = 240;
  const auto rgb = render_synthetic_rgb(w, h, 7);
  // Not flat: a wide spread of values.
  double sum = 0, sum2 = 0;
  for (uint8_t v : rgb) {
    sum += v;
    sum2 += static_cast<double>(v) * v;
  }
  const double n = static_cast<double>(rgb.size());
  const double stddev = std::sqrt(sum2 / n - (sum / n) * (sum / n));
  EXPECT_GT(stddev, 20.0);
  // Smooth yet noisy: neighbours differ a little (per-pixel noise) but far less than
  // random pixels do (spatial correlation, as in photographs).
  double neighbour = 0, distant = 0;
  int pairs = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x + 1 < w; ++x) {
      const size_t i = (static_cast<size_t>(y) * w + x) * 3;
      const size_t j = ((static_cast<size_t>((y * 7919 + x * 104729) % h)) * w +
                        static_cast<size_t>((x * 31 + y * 17) % w)) * 3;
      neighbour += std::abs(rgb[i] - rgb[i + 3]);
      distant += std::abs(rgb[i] - rgb[j]);
      ++pairs;
    }
  neighbour /= pairs;
  distant /= pairs;
  EXPECT_GT(neighbour, 1.0);         // per-pixel noise is there
  EXPECT_LT(neighbour, 0.5 * distant);  // but the image is spatially correlated
}

TEST(Synthetic, BitsPerPixelLikePhotographs) {
  // ImageNet-like 500x375 at quality 90, 4:2:0: about 1.5 to 4 bits per pixel.
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const auto jpeg = testing::make_jpeg(500, 375, seed, 90, "4:2:0", false);
    const double bpp = 8.0 * static_cast<double>(jpeg.size()) / (500.0 * 375.0);
    EXPECT_GE(bpp, 1.5) << "seed " << seed;
    EXPECT_LE(bpp, 4.0) << "seed " << seed;
  }
}

TEST(Synthetic, EncodeDecodesToTheRenderedPixels) {
  const int w = 200, h = 150;
  const auto rgb = render_synthetic_rgb(w, h, 3);
  const auto jpeg = encode_jpeg(rgb.data(), w, h, 95, "4:4:4", false);
  cv::Mat bgr = cv::imdecode(cv::Mat(1, static_cast<int>(jpeg.size()), CV_8U,
                                     const_cast<uint8_t*>(jpeg.data())),
                             cv::IMREAD_COLOR);
  ASSERT_EQ(bgr.cols, w);
  ASSERT_EQ(bgr.rows, h);
  std::vector<uint8_t> decoded(rgb.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        decoded[(static_cast<size_t>(y) * w + x) * 3 + c] = bgr.at<cv::Vec3b>(y, x)[2 - c];
  EXPECT_GT(testing::psnr(rgb.data(), decoded.data(), rgb.size()), 33.0);
}

TEST(Synthetic, EncodeHonoursSubsamplingAndProgressive) {
  const int w = 64, h = 48;
  const auto rgb = render_synthetic_rgb(w, h, 5);
  const std::pair<const char*, int> cases[] = {{"4:4:4", TJSAMP_444}, {"4:2:2", TJSAMP_422},
                                               {"4:2:0", TJSAMP_420}, {"4:4:0", TJSAMP_440},
                                               {"gray", TJSAMP_GRAY}};
  for (const auto& [name, tj] : cases) {
    const auto jpeg = encode_jpeg(rgb.data(), w, h, 90, name, false);
    const Header hd = header_of(jpeg);
    EXPECT_EQ(hd.width, w);
    EXPECT_EQ(hd.height, h);
    EXPECT_EQ(hd.subsamp, tj) << name;
  }
  const auto baseline = encode_jpeg(rgb.data(), w, h, 90, "4:2:0", false);
  const auto progressive = encode_jpeg(rgb.data(), w, h, 90, "4:2:0", true);
  EXPECT_TRUE(has_marker(baseline, 0xC0));
  EXPECT_FALSE(has_marker(baseline, 0xC2));
  EXPECT_TRUE(has_marker(progressive, 0xC2));
  EXPECT_FALSE(has_marker(progressive, 0xC0));
  // Lower quality gives fewer bytes.
  EXPECT_LT(encode_jpeg(rgb.data(), w, h, 50, "4:2:0", false).size(), baseline.size());
}

TEST(Synthetic, InvalidArgumentsNameTheValidRange) {
  const auto rgb = render_synthetic_rgb(8, 8, 1);
  try {
    encode_jpeg(rgb.data(), 8, 8, 0, "4:2:0", false);
    FAIL() << "quality 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("[1, 100]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(encode_jpeg(rgb.data(), 8, 8, 101, "4:2:0", false), std::invalid_argument);
  EXPECT_THROW(encode_jpeg(rgb.data(), 8, 8, 90, "4:1:1x", false), std::invalid_argument);
  EXPECT_THROW(encode_jpeg(rgb.data(), 0, 8, 90, "4:2:0", false), std::invalid_argument);
  EXPECT_THROW(encode_jpeg(nullptr, 8, 8, 90, "4:2:0", false), std::invalid_argument);
  EXPECT_THROW(render_synthetic_rgb(-1, 8, 1), std::invalid_argument);

  const auto root = testing::scratch_dir("synthetic_invalid");
  SyntheticOptions o;
  o.count = 0;
  EXPECT_THROW(write_synthetic_dataset(root, o), std::invalid_argument);
  o = {};
  o.count = 2;
  o.classes = 3;
  EXPECT_THROW(write_synthetic_dataset(root, o), std::invalid_argument);
  o = {};
  o.min_width = 100;
  o.max_width = 50;
  EXPECT_THROW(write_synthetic_dataset(root, o), std::invalid_argument);
  o = {};
  o.quality = 0;
  EXPECT_THROW(write_synthetic_dataset(root, o), std::invalid_argument);
  o = {};
  o.subsampling = "4:2:1";
  EXPECT_THROW(write_synthetic_dataset(root, o), std::invalid_argument);
}

TEST(Synthetic, DatasetLayoutSizesAndDeterminism) {
  SyntheticOptions o;
  o.count = 10;
  o.classes = 3;
  o.min_width = 40;
  o.max_width = 90;
  o.min_height = 30;
  o.max_height = 70;
  o.seed = 11;
  const auto root_a = testing::scratch_dir("synthetic_a");
  const auto root_b = testing::scratch_dir("synthetic_b");
  const auto paths_a = write_synthetic_dataset(root_a, o);
  const auto paths_b = write_synthetic_dataset(root_b, o);
  ASSERT_EQ(paths_a.size(), 10u);
  std::set<std::pair<int, int>> sizes;
  for (size_t i = 0; i < paths_a.size(); ++i) {
    // Round-robin classes: image i in class_(i % 3).
    const std::string expected_class = "class_00" + std::to_string(i % 3);
    EXPECT_EQ(paths_a[i].parent_path().filename().string(), expected_class);
    EXPECT_EQ(paths_a[i].parent_path().parent_path(), root_a);
    const auto a = slurp(paths_a[i]);
    const auto b = slurp(paths_b[i]);
    EXPECT_EQ(a, b) << paths_a[i];  // same seed, same bytes
    const Header hd = header_of(a);
    EXPECT_GE(hd.width, 40);
    EXPECT_LE(hd.width, 90);
    EXPECT_GE(hd.height, 30);
    EXPECT_LE(hd.height, 70);
    EXPECT_EQ(hd.subsamp, TJSAMP_420);
    sizes.insert({hd.width, hd.height});
  }
  EXPECT_GT(sizes.size(), 1u);  // sizes are drawn, not constant

  ImageFolder folder(root_a);
  EXPECT_EQ(folder.size(), 10u);
  EXPECT_EQ(folder.classes().size(), 3u);

  o.seed = 12;
  const auto root_c = testing::scratch_dir("synthetic_c");
  const auto paths_c = write_synthetic_dataset(root_c, o);
  EXPECT_NE(slurp(paths_a[0]), slurp(paths_c[0]));
}

}  // namespace
}  // namespace pipebench
