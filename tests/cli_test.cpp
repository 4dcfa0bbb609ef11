// pipebench-data, end to end and by its library parts:
//  - the built binary (PIPEBENCH_DATA_BIN): synthetic + inspect on a small set, checked
//    against the files on disk; exit code 2 with one line naming the path for bad input;
//  - inspect_dataset on a mixed set (progressive, 4:4:4) against what was written;
//  - the photo-set builder on a fake unpacked package (no network): original discovery
//    (SOI bytes, size floor, links, previews, duplicates), class names, the exact 2x2 box
//    downscale, the tile grid, tiles compared with OpenCV's decode of the original, and
//    byte-identical rebuilds.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <regex>
#include <sstream>

#include "datasets/file_io.h"
#include "datasets/image_folder.h"
#include "datasets/inspect.h"
#include "datasets/photos.h"
#include "datasets/synthetic.h"
#include "tests/test_data.h"

#ifndef PIPEBENCH_DATA_BIN
#error "PIPEBENCH_DATA_BIN must name the pipebench-data binary"
#endif

namespace pipebench {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

std::string slurp_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}


/// Runs pipebench-data with shell-quoted args; captures stdout and stderr separately.
CliRun run_cli(const std::vector<std::string>& args) {
  static int counter = 0;
  const fs::path dir = testing::scratch_dir("cli_run_" + std::to_string(counter++));
  std::string cmd = std::string("'") + PIPEBENCH_DATA_BIN + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'";
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp_text(dir / "out");
  r.err = slurp_text(dir / "err");
  return r;
}

int count_lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

double number_after(const std::string& text, const std::string& label) {
  const auto pos = text.find(label);
  EXPECT_NE(pos, std::string::npos) << "no \"" << label << "\" in:\n" << text;
  if (pos == std::string::npos) return -1;
  return std::stod(text.substr(pos + label.size()));
}

TEST(Cli, SyntheticThenInspect) {
  const fs::path root = testing::scratch_dir("cli_syn") / "set";
  CliRun r = run_cli({"synthetic", root.string(), "--count", "9", "--classes", "3", "--width", "96",
                   "--height", "64", "--seed", "5"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("9 images in 3 classes"), std::string::npos) << r.out;
  ImageFolder f(root);
  ASSERT_EQ(f.size(), 9u);
  ASSERT_EQ(f.classes().size(), 3u);

  // Independent reference for the printed figures: the files on disk.
  double bpp = 0;
  for (size_t i = 0; i < f.size(); ++i) bpp += 8.0 * f.sample(i).size_bytes / (96.0 * 64.0);
  bpp /= 9;
  const double mean_kb = static_cast<double>(f.total_bytes()) / 9 / 1000.0;

  r = run_cli({"inspect", root.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("9 images in 3 classes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("96.0 x 64.0 px"), std::string::npos) << r.out;
  EXPECT_NEAR(number_after(r.out, "bits per pixel:"), bpp, 0.006);
  EXPECT_NEAR(number_after(r.out, "mean file size:"), mean_kb, 0.06);
  EXPECT_NE(r.out.find("baseline 9 images (100.0 %)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4:2:0 9 images (100.0 %)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" KB"), std::string::npos);
  EXPECT_NE(r.out.find(" bpp"), std::string::npos);

  // Same seed, same bytes, through the CLI too.
  const fs::path again = testing::scratch_dir("cli_syn_again") / "set";
  ASSERT_EQ(run_cli({"synthetic", again.string(), "--count", "9", "--classes", "3", "--width",
                     "96", "--height", "64", "--seed", "5"})
                .code,
            0);
  ImageFolder g(again);
  for (size_t i = 0; i < f.size(); ++i) EXPECT_EQ(testing::file_bytes(f.sample(i).path), testing::file_bytes(g.sample(i).path));
}

TEST(Cli, SyntheticOptionsReachTheFiles) {
  const fs::path root = testing::scratch_dir("cli_syn_opts") / "set";
  CliRun r = run_cli({"synthetic", root.string(), "--count", "4", "--classes", "1", "--min-width",
                   "40", "--max-width", "60", "--min-height", "30", "--max-height", "50",
                   "--quality", "80", "--subsampling", "4:4:4", "--progressive"});
  ASSERT_EQ(r.code, 0) << r.err;
  r = run_cli({"inspect", root.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("progressive 4 images (100.0 %)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4:4:4 4 images (100.0 %)"), std::string::npos) << r.out;
  const double w = number_after(r.out, "mean resolution:");
  EXPECT_GE(w, 40.0);
  EXPECT_LE(w, 60.0);
}

TEST(Cli, BadInputExitsWithTwoAndNamesThePath) {
  const fs::path base = testing::scratch_dir("cli_bad");
  auto expect_bad = [](const std::vector<std::string>& args, const std::string& needle) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args[0] << " " << (args.size() > 1 ? args[1] : "") << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  };
  expect_bad({"inspect", (base / "missing").string()}, (base / "missing").string());
  fs::create_directories(base / "empty");
  expect_bad({"inspect", (base / "empty").string()}, (base / "empty").string());
  // A class directory with no .jpg at all.
  const std::vector<uint8_t> junk = {'h', 'e', 'l', 'l', 'o'};
  write_file(base / "nojpeg" / "cls" / "a.png", junk.data(), junk.size());
  expect_bad({"inspect", (base / "nojpeg").string()}, (base / "nojpeg").string());
  // .jpg files that are not JPEGs: no readable JPEG.
  write_file(base / "fake" / "cls" / "a.jpg", junk.data(), junk.size());
  write_file(base / "fake" / "cls" / "b.jpg", junk.data(), junk.size());
  expect_bad({"inspect", (base / "fake").string()}, (base / "fake").string());
  // Usage errors.
  expect_bad({"inspect", (base / "empty").string(), "--bogus"}, "--bogus");
  expect_bad({"frobnicate"}, "frobnicate");
  expect_bad({"synthetic", (base / "q").string(), "--quality", "0"}, "[1, 100]");
  expect_bad({"synthetic", (base / "q").string(), "--count", "many"}, "--count");
  expect_bad({"synthetic", (base / "q").string(), "--width", "64", "--min-width", "32"},
             "excludes");
  const CliRun none = run_cli({});
  EXPECT_EQ(none.code, 2);
  EXPECT_EQ(run_cli({"--help"}).code, 0);
}

TEST(Inspect, CountsTheMix) {
  const fs::path root = testing::scratch_dir("inspect_mix");
  struct Spec {
    int w, h;
    const char* sub;
    bool prog;
  };
  const Spec specs[] = {{64, 48, "4:2:0", false}, {80, 40, "4:4:4", true},
                        {32, 32, "4:2:0", true},  {48, 64, "gray", false}};
  double sum_w = 0, sum_h = 0, sum_bpp = 0;
  for (int i = 0; i < 4; ++i) {
    const auto& s = specs[i];
    const auto jpeg = testing::make_jpeg(s.w, s.h, static_cast<uint64_t>(i), 90, s.sub, s.prog);
    write_file(root / ("c" + std::to_string(i % 2)) / ("i" + std::to_string(i) + ".jpg"),
               jpeg.data(), jpeg.size());
    sum_w += s.w;
    sum_h += s.h;
    sum_bpp += 8.0 * jpeg.size() / (s.w * s.h);
  }
  const std::vector<uint8_t> junk = {1, 2, 3};
  write_file(root / "c1" / "broken.jpg", junk.data(), junk.size());

  const DatasetStats st = inspect_dataset(root);
  EXPECT_EQ(st.images, 4u);
  EXPECT_EQ(st.classes, 2u);
  EXPECT_EQ(st.unreadable, 1u);
  ASSERT_EQ(st.unreadable_examples.size(), 1u);
  EXPECT_NE(st.unreadable_examples[0].find("broken.jpg"), std::string::npos);
  EXPECT_DOUBLE_EQ(st.mean_width, sum_w / 4);
  EXPECT_DOUBLE_EQ(st.mean_height, sum_h / 4);
  EXPECT_NEAR(st.mean_bpp, sum_bpp / 4, 1e-9);
  EXPECT_EQ(st.baseline, 2u);
  EXPECT_EQ(st.progressive, 2u);
  EXPECT_EQ(st.subsampling.at("4:2:0"), 2u);
  EXPECT_EQ(st.subsampling.at("4:4:4"), 1u);
  EXPECT_EQ(st.subsampling.at("gray"), 1u);
  const std::string text = format_stats(st);
  EXPECT_NE(text.find("4:2:0 2 images (50.0 %)"), std::string::npos) << text;
  EXPECT_NE(text.find("unreadable:       1 files"), std::string::npos) << text;
}

TEST(Photos, ClassNames) {
  EXPECT_EQ(photo_class_name("usr/share/wallpapers/Flow/contents/images_dark/5120x2880.jpg"),
            "Flow_dark_5120x2880");
  EXPECT_EQ(photo_class_name("usr/share/wallpapers/Autumn/contents/images/2560x1600.jpg"),
            "Autumn_2560x1600");
  EXPECT_EQ(photo_class_name("usr/share/backgrounds/mate/nature/Aqua.jpg"), "mate_nature_Aqua");
  EXPECT_EQ(photo_class_name("usr/share/backgrounds/2004default.jpg"), "2004default");
  EXPECT_EQ(photo_class_name("opt/a b/c&d.JPG"), "opt_a-b_c-d");
}

TEST(Photos, BoxDownscaleIsExact) {
  // 5x3 image (odd sizes: the last column and row are dropped). Channel c of pixel (x, y)
  // is 10 * x + 3 * y + c, except one 2x2 block set to exercise rounding.
  const int w = 5, h = 3;
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) rgb[(y * w + x) * 3 + c] = static_cast<uint8_t>(10 * x + 3 * y + c);
  // Block at (2..3, 0..1), channel 0: 0, 1, 1, 1 -> mean 0.75 -> rounds to 1.
  rgb[(0 * w + 2) * 3] = 0;
  rgb[(0 * w + 3) * 3] = 1;
  rgb[(1 * w + 2) * 3] = 1;
  rgb[(1 * w + 3) * 3] = 1;
  const auto out = downscale_box2(rgb.data(), w, h);
  ASSERT_EQ(out.size(), 2u * 1u * 3u);
  // Block (0..1, 0..1), channel c: values c, 10+c, 3+c, 13+c -> mean 6.5 + c -> 7 + c.
  EXPECT_EQ(out[0], 7);
  EXPECT_EQ(out[1], 8);
  EXPECT_EQ(out[2], 9);
  // Block (2..3, 0..1): channel 0 is 0, 1, 1, 1 -> 0.75 -> 1; channel 1 is 21, 31, 24, 34
  // -> 27.5 -> 28 (half rounds up); channel 2 is 22, 32, 25, 35 -> 28.5 -> 29.
  EXPECT_EQ(out[3], 1);
  EXPECT_EQ(out[4], 28);
  EXPECT_EQ(out[5], 29);
  EXPECT_THROW(downscale_box2(rgb.data(), 1, 3), std::invalid_argument);
}

TEST(Photos, TileGrid) {
  TileGrid g = tile_grid(1600, 1000, 500, 375);
  EXPECT_EQ(g.cols, 3);
  EXPECT_EQ(g.rows, 2);
  EXPECT_EQ(g.x0, 50);   // (1600 - 1500) / 2
  EXPECT_EQ(g.y0, 125);  // (1000 - 750) / 2
  g = tile_grid(499, 2000, 500, 375);
  EXPECT_EQ(g.cols, 0);
  EXPECT_EQ(g.rows, 0);
  g = tile_grid(500, 375, 500, 375);
  EXPECT_EQ(g.cols * g.rows, 1);
  EXPECT_EQ(g.x0, 0);
}

/// Converts OpenCV's BGR decode to RGB bytes.
std::vector<uint8_t> cv_decode_rgb(const std::vector<uint8_t>& jpeg, int& w, int& h) {
  cv::Mat bgr = cv::imdecode(cv::Mat(1, static_cast<int>(jpeg.size()), CV_8U,
                                     const_cast<uint8_t*>(jpeg.data())),
                             cv::IMREAD_COLOR);
  cv::Mat rgb;
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  w = rgb.cols;
  h = rgb.rows;
  return std::vector<uint8_t>(rgb.data, rgb.data + rgb.total() * 3);
}

std::vector<uint8_t> crop(const std::vector<uint8_t>& rgb, int w, int x, int y, int cw, int ch) {
  std::vector<uint8_t> out;
  for (int r = 0; r < ch; ++r) {
    const auto* src = &rgb[(static_cast<size_t>(y + r) * w + x) * 3];
    out.insert(out.end(), src, src + static_cast<size_t>(cw) * 3);
  }
  return out;
}

TEST(Photos, FindsOriginalsAndBuildsBothSets) {
  const fs::path base = testing::scratch_dir("photos");
  const fs::path pkg = base / "unpacked" / "pkg";
  const fs::path walls = pkg / "usr" / "share" / "wallpapers";
  // A landscape and a portrait original, high quality so they pass a 20 KB floor.
  const auto land = testing::make_jpeg(1100, 800, 21, 95, "4:4:4", false);
  const auto port = testing::make_jpeg(400, 1050, 22, 95, "4:2:0", true);
  write_file(walls / "Land" / "contents" / "images" / "1100x800.jpg", land.data(), land.size());
  write_file(walls / "Port" / "contents" / "images" / "400x1050.png", port.data(), port.size());
  // Duplicate content, a link, a large preview, a small JPEG, a large non-JPEG.
  write_file(walls / "Copy" / "contents" / "images" / "1100x800.jpg", land.data(), land.size());
  fs::create_symlink(walls / "Land" / "contents" / "images" / "1100x800.jpg",
                     walls / "Land" / "contents" / "images" / "800x600.jpg");
  write_file(walls / "Land" / "contents" / "screenshot.jpg", land.data(), land.size());
  const auto small = testing::make_jpeg(40, 40, 23);
  write_file(walls / "Small" / "small.jpg", small.data(), small.size());
  std::vector<uint8_t> not_jpeg(200'000, 0x42);
  write_file(walls / "Noise" / "big.jpg", not_jpeg.data(), not_jpeg.size());
  // A truncated JPEG over the floor: found, then skipped at decode with a warning.
  auto broken = testing::make_jpeg(1000, 800, 24, 95, "4:4:4", false);
  broken.resize(broken.size() / 2);
  write_file(walls / "Broken" / "b.jpg", broken.data(), broken.size());

  ASSERT_GE(port.size(), 20'000u);
  const auto originals = find_photo_originals({pkg}, 20'000);
  std::vector<std::string> names;
  for (const auto& o : originals) names.push_back(o.class_name);
  // "Copy" sorts before "Land" by path, so the duplicate keeps the name Copy_1100x800.
  const std::vector<std::string> expected = {"Broken_b", "Copy_1100x800", "Port_400x1050"};
  EXPECT_EQ(names, expected);

  std::ostringstream log;
  PhotoSetOptions opt;
  opt.threads = 2;
  const fs::path out = base / "out";
  const PhotoSetSummary s = build_photo_sets(originals, out, opt, log);
  EXPECT_NE(log.str().find("Broken"), std::string::npos) << log.str();
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_NE(s.skipped[0].find("b.jpg"), std::string::npos);
  EXPECT_FALSE(fs::exists(out / "photos-in.tmp"));
  EXPECT_FALSE(fs::exists(out / "photos-full.tmp"));

  // photos-full: the originals' bytes unchanged.
  ImageFolder full(out / "photos-full");
  ASSERT_EQ(full.size(), 2u);
  EXPECT_EQ(s.full_images, 2u);
  EXPECT_EQ(s.full_bytes, full.total_bytes());
  EXPECT_EQ(testing::file_bytes(full.sample(0).path), land);
  EXPECT_EQ(testing::file_bytes(full.sample(1).path), port);

  // photos-in: landscape 1100x800 -> 2x2 tiles of 500x375 natively, 550x400 -> 1x1 at 1/2;
  // portrait 400x1050 -> 1x2 tiles of 375x500 natively, 200x525 -> none at 1/2.
  ImageFolder in(out / "photos-in");
  ASSERT_EQ(in.size(), 4u + 1u + 2u);
  EXPECT_EQ(s.in_images, in.size());
  EXPECT_EQ(s.in_classes, 2u);
  EXPECT_EQ(s.in_bytes, in.total_bytes());

  int lw = 0, lh = 0;
  const auto land_rgb = cv_decode_rgb(land, lw, lh);
  // Tile r0 c1 at native scale: grid origin (50, 25), so x = 550, y = 25.
  const fs::path t01 = out / "photos-in" / "Copy_1100x800" / "Copy_1100x800_s1_r00_c01.jpg";
  ASSERT_TRUE(fs::exists(t01));
  int tw = 0, th = 0;
  const auto tile = cv_decode_rgb(testing::file_bytes(t01), tw, th);
  ASSERT_EQ(tw, 500);
  ASSERT_EQ(th, 375);
  const auto ref = crop(land_rgb, lw, 550, 25, 500, 375);
  EXPECT_GT(testing::psnr(tile.data(), ref.data(), ref.size()), 30.0);

  // The 1/2-scale tile against OpenCV's area resize of OpenCV's decode.
  cv::Mat src(lh, lw, CV_8UC3, const_cast<uint8_t*>(land_rgb.data())), half;
  cv::resize(src, half, cv::Size(lw / 2, lh / 2), 0, 0, cv::INTER_AREA);
  std::vector<uint8_t> half_rgb(half.data, half.data + half.total() * 3);
  const fs::path t2 = out / "photos-in" / "Copy_1100x800" / "Copy_1100x800_s2_r00_c00.jpg";
  const auto tile2 = cv_decode_rgb(testing::file_bytes(t2), tw, th);
  ASSERT_EQ(tw, 500);
  const auto ref2 = crop(half_rgb, lw / 2, 25, 12, 500, 375);
  EXPECT_GT(testing::psnr(tile2.data(), ref2.data(), ref2.size()), 30.0);

  const fs::path tp = out / "photos-in" / "Port_400x1050" / "Port_400x1050_s1_r01_c00.jpg";
  const auto ptile = cv_decode_rgb(testing::file_bytes(tp), tw, th);
  EXPECT_EQ(tw, 375);
  EXPECT_EQ(th, 500);

  // Rebuilding gives the same bytes (and replaces the old sets).
  std::vector<std::vector<uint8_t>> first;
  for (size_t i = 0; i < in.size(); ++i) first.push_back(testing::file_bytes(in.sample(i).path));
  std::ostringstream log2;
  opt.threads = 1;
  build_photo_sets(originals, out, opt, log2);
  ImageFolder in2(out / "photos-in");
  ASSERT_EQ(in2.size(), first.size());
  for (size_t i = 0; i < in2.size(); ++i) EXPECT_EQ(testing::file_bytes(in2.sample(i).path), first[i]);
}

TEST(Photos, AFailedBuildLeavesNoTemporaryFolders) {
  const fs::path base = testing::scratch_dir("photos_fail");
  const fs::path pkg = base / "unpacked" / "pkg";
  // One "original" over the size floor that is not a decodable JPEG: nothing to build.
  std::vector<uint8_t> garbage(50'000, 0x42);
  garbage[0] = 0xFF;
  garbage[1] = 0xD8;
  write_file(pkg / "usr" / "share" / "wallpapers" / "X" / "x.jpg", garbage.data(), garbage.size());
  const auto originals = find_photo_originals({pkg}, 20'000);
  const fs::path out = base / "out";
  std::ostringstream log;
  EXPECT_THROW(build_photo_sets(originals, out, PhotoSetOptions{}, log), DatasetError);
  EXPECT_FALSE(fs::exists(out / "photos-full.tmp"));
  EXPECT_FALSE(fs::exists(out / "photos-in.tmp"));
  EXPECT_FALSE(fs::exists(out / "photos-in"));
}

TEST(Photos, MissingAptGetIsNamedAsSuch) {
  const fs::path base = testing::scratch_dir("photos_noapt");
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  setenv("PATH", (base / "empty-bin").c_str(), 1);  // no apt-get, no dpkg
  std::ostringstream log;
  try {
    fetch_photo_packages(base / "scratch", {"mate-backgrounds"}, log);
    ADD_FAILURE() << "expected DatasetError";
  } catch (const DatasetError& e) {
    EXPECT_NE(std::string(e.what()).find("apt-get not found on PATH"), std::string::npos) << e.what();
  }
  setenv("PATH", saved.c_str(), 1);
}

}  // namespace
}  // namespace pipebench
