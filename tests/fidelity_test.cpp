// Fidelity (issue 35): the metrics a what-if candidate's pixels are judged by, checked
// against an independent computation, and the reference checks of what each candidate
// changes:
//   - PSNR / SSIM (transforms/fidelity.h, OpenCV's quality module) of a photo against its
//     quality-75 JPEG re-encode match scikit-image's (tests/scripts/fidelity_reference.py;
//     skipped without python3-skimage, which scripts/setup.sh --reference installs);
//   - the round's distribution (model/fidelity.h): identical samples apart, median and 5th
//     percentile over the others, "identical" never a number;
//   - collate:uint8 against float32: within half a uint8 level after normalize, and the
//     same pixels before it (identical);
//   - decode:auto at a DCT scale of 1 against the full decode: identical on every sample
//     (the ROI decode's two-column margin keeps chroma upsampling at its edges exact);
//   - an ROI decode against libjpeg-turbo's decompression of the whole image at the same
//     scaling factor (tjDecompress2): bit for bit at 1, 1/2 and 1/4.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench/cases/paired_fidelity.h"
#include "datasets/image_folder.h"
#include "model/fidelity.h"
#include "tests/libjpeg_encode.h"
#include "tests/test_data.h"
#include "transforms/fidelity.h"
#include "transforms/jpeg_decode.h"
#include "transforms/pipeline.h"
#include "transforms/rng.h"
#include "transforms/spec.h"

namespace pipebench {
namespace {

using testing::make_jpeg;
using testing::scratch_dir;

// H x W x 3 uint8 -> 3 x H x W float32 0-255.
std::vector<float> planar(const Image& im) {
  const size_t plane = static_cast<size_t>(im.height) * im.width;
  std::vector<float> out(plane * 3);
  for (size_t p = 0; p < plane; ++p)
    for (int c = 0; c < 3; ++c) out[c * plane + p] = im.ptr()[p * 3 + c];
  return out;
}

Image decode(const std::vector<uint8_t>& jpeg) {
  TurboDecoder turbo;
  Image im;
  turbo.decode(jpeg, "pair.jpg", im);
  return im;
}

void write_raw(const std::filesystem::path& p, const std::vector<float>& v) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
}

// --- the metrics ----------------------------------------------------------------------

TEST(Fidelity, EqualImagesAreIdenticalNotANumber) {
  const Image im = decode(make_jpeg(64, 48, 3));
  const auto a = planar(im);
  const model::SampleFidelity f = compare_images(a, a, 3, 48, 64);
  EXPECT_TRUE(f.identical);
  const std::vector<model::SampleFidelity> all(4, f);
  const model::FidelitySummary s = model::summarize_fidelity(all);
  EXPECT_TRUE(s.all_identical());
  EXPECT_FALSE(s.psnr_median_db.has_value());
  EXPECT_FALSE(s.psnr_p5_db.has_value());
  EXPECT_EQ(model::fidelity_cell(s), "identical");
}

TEST(Fidelity, OneLevelEverywhereIsPsnrOf255Squared) {
  const Image im = decode(make_jpeg(64, 48, 4));
  auto a = planar(im), b = a;
  for (float& v : b) v = v < 255 ? v + 1 : v - 1;  // |a - b| = 1 everywhere: MSE 1
  const model::SampleFidelity f = compare_images(a, b, 3, 48, 64);
  EXPECT_FALSE(f.identical);
  EXPECT_NEAR(f.psnr_db, 20 * std::log10(255.0), 1e-4);
  EXPECT_LT(f.ssim, 1.0);
  EXPECT_GT(f.ssim, 0.9);
}

TEST(Fidelity, WrongSizesAreRefusedWithTheShape) {
  const std::vector<float> a(12), b(11);
  EXPECT_THROW(compare_images(a, b, 3, 2, 2), std::invalid_argument);
  EXPECT_THROW(compare_images(a, a, 0, 2, 2), std::invalid_argument);
}

TEST(FidelitySummary, MedianAndP5OverTheSamplesNotIdentical) {
  std::vector<model::SampleFidelity> v;
  for (const double db : {60.0, 30.0, 50.0, 40.0}) v.push_back({false, db, db / 100});
  v.push_back({true, 0, 1});
  v.push_back({true, 0, 1});
  const model::FidelitySummary s = model::summarize_fidelity(v);
  EXPECT_EQ(s.samples, 6u);
  EXPECT_EQ(s.identical, 2u);
  EXPECT_NEAR(s.identical_share(), 2.0 / 6.0, 1e-12);
  // Hyndman-Fan 7 over {30, 40, 50, 60}: median 45; p5 at h = 0.05 * 3 = 0.15: 31.5.
  EXPECT_DOUBLE_EQ(*s.psnr_median_db, 45.0);
  EXPECT_DOUBLE_EQ(*s.psnr_p5_db, 31.5);
  EXPECT_DOUBLE_EQ(*s.ssim_p5, 0.315);
  EXPECT_EQ(model::fidelity_cell(s), "45.0 / 31.5 dB");
  EXPECT_EQ(model::fidelity_cell(model::summarize_fidelity({})), "");
}

// PSNR and SSIM of a photo-like image against its quality-75 re-encode, against
// scikit-image. Tolerances: PSNR 1e-3 dB (OpenCV's float32 MSE against numpy's float64);
// SSIM 2e-4 (OpenCV computes the Gaussian moments in float32, scikit-image in float64; the
// same window, constants and cropped border).
TEST(FidelityReference, Quality75ReencodeMatchesScikitImage) {
  const int w = 320, h = 240;
  const Image original = decode(make_jpeg(w, h, 7, 95));
  testing::LibjpegOptions o;
  o.quality = 75;
  const std::vector<uint8_t> pixels(original.ptr(), original.ptr() + original.size_bytes());
  const Image reencoded = decode(testing::encode_libjpeg(pixels, w, h, o));
  const auto a = planar(original), b = planar(reencoded);
  const model::SampleFidelity f = compare_images(a, b, 3, h, w);
  ASSERT_FALSE(f.identical);
  std::printf("quality-75 re-encode: PSNR %.4f dB, SSIM %.5f (pipebench)\n", f.psnr_db, f.ssim);

  const auto dir = scratch_dir("fidelity_reference");
  write_raw(dir / "a.raw", a);
  write_raw(dir / "b.raw", b);
  const std::string script = std::string(PIPEBENCH_SOURCE_DIR) + "/tests/scripts/fidelity_reference.py";
  const std::string cmd = "/usr/bin/python3 " + script + " " + (dir / "a.raw").string() + " " +
                          (dir / "b.raw").string() + " 3 " + std::to_string(h) + " " + std::to_string(w) +
                          " > " + (dir / "out.txt").string();
  const int rc = std::system(cmd.c_str());
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) GTEST_SKIP() << "python3-skimage is not installed";
  ASSERT_EQ(rc, 0) << cmd;
  std::ifstream in(dir / "out.txt");
  double ref_psnr = 0, ref_ssim = 0;
  ASSERT_TRUE(in >> ref_psnr >> ref_ssim);
  std::printf("quality-75 re-encode: PSNR %.4f dB, SSIM %.5f (scikit-image)\n", ref_psnr, ref_ssim);
  EXPECT_NEAR(f.psnr_db, ref_psnr, 1e-3);
  EXPECT_NEAR(f.ssim, ref_ssim, 2e-4);
}

// --- what the candidates change --------------------------------------------------------

std::shared_ptr<const Pipeline> pipeline_of(const std::string& text) {
  return Pipeline::build(parse_pipeline_spec(text, "fidelity_test"));
}

// collate:uint8 against float32, the same spec otherwise: the pixels before normalize are the
// same (identical), and the uint8 batch normalized after the copy (DeferredNormalize's
// formula) is within half a uint8 level of the float32 tensor, 0.5 / (255 std) per channel.
TEST(FidelityReference, Uint8CollateIsWithinHalfALevelOfFloat32) {
  const std::string ops = "transforms:\n  - random_resized_crop: {size: 96}\n  - horizontal_flip\n"
                          "  - normalize: {mean: imagenet, std: imagenet}\n";
  const auto f32 = pipeline_of("decode: {mode: full}\n" + ops);
  const auto u8 = pipeline_of("decode: {mode: full}\n" + ops + "collate: {dtype: uint8, layout: NHWC}\n");
  ASSERT_TRUE(u8->deferred_normalize().has_value());
  const DeferredNormalize& n = *u8->deferred_normalize();
  PipelineWorkspace wf(*f32), wu(*u8);
  std::vector<float> x(f32->output_floats()), y(u8->output_floats()), px, py;
  const size_t plane = x.size() / 3;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const auto jpeg = make_jpeg(200 + 10 * static_cast<int>(seed), 150, seed);
    Rng ra = Rng::for_sample(9, 0, seed), rb = Rng::for_sample(9, 0, seed);
    f32->run(jpeg, "a.jpg", ra, wf, x.data());
    u8->run(jpeg, "a.jpg", rb, wu, y.data());
    ASSERT_TRUE(output_pixels(*f32, x.data(), px));
    ASSERT_TRUE(output_pixels(*u8, y.data(), py));
    EXPECT_TRUE(compare_images(px, py, 3, 96, 96).identical) << "seed " << seed;
    const auto* q = reinterpret_cast<const uint8_t*>(y.data());  // H x W x C
    for (int c = 0; c < 3; ++c) {
      const double half_level = 0.5 / (255.0 * n.std[c]);
      double worst = 0;
      for (size_t p = 0; p < plane; ++p) {
        const float v = (static_cast<float>(q[p * 3 + c]) / 255.0f - n.mean[c]) / n.std[c];
        worst = std::max(worst, std::fabs(static_cast<double>(v) - x[c * plane + p]));
      }
      EXPECT_LE(worst, half_level) << "seed " << seed << " channel " << c;
    }
  }
}

// decode:auto where every window keeps a DCT scale of 1 (the image's sides below twice the
// output's: no factor 1/2 keeps the window at least 96 px) against the full decode: bit
// identical on every sample. The ROI decode asks for two columns beyond the window on each
// side, so smooth chroma upsampling interpolates every window column as a whole decode
// does; without that margin a window starting on an iMCU boundary, or ending on an odd
// column, moved one column by a few levels (found here, PSNR above 50 dB, and valgrind
// saw the SIMD upsampler read undecoded samples past the crop's right edge).
TEST(FidelityReference, DecodeAutoAtScaleOneIsBitIdentical) {
  const std::string ops = "transforms:\n  - random_resized_crop: {size: 96}\n  - horizontal_flip\n"
                          "  - normalize: {mean: imagenet, std: imagenet}\n";
  const auto full = pipeline_of("decode: {mode: full}\n" + ops);
  const auto roi = pipeline_of("decode: {mode: auto}\n" + ops);
  ASSERT_EQ(roi->decode_plan(), "roi");
  PipelineWorkspace wf(*full), wr(*roi);
  std::vector<float> x(full->output_floats()), y(roi->output_floats()), px, py;
  std::vector<model::SampleFidelity> all;
  int edge_windows = 0;  // windows the margin matters for (starting on an iMCU boundary, or ending odd)
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    const int width = 150 + 3 * static_cast<int>(seed), height = 120 + 5 * static_cast<int>(seed % 12);
    const auto jpeg = make_jpeg(width, height, seed);
    Rng ra = Rng::for_sample(5, 0, seed), rb = Rng::for_sample(5, 0, seed);
    const std::optional<CropWindow> w = roi->source_window(jpeg, "a.jpg", rb);
    ASSERT_TRUE(w.has_value());
    full->run(jpeg, "a.jpg", ra, wf, x.data());
    roi->run(jpeg, "a.jpg", rb, wr, y.data());
    ASSERT_TRUE(output_pixels(*full, x.data(), px));
    ASSERT_TRUE(output_pixels(*roi, y.data(), py));
    const model::SampleFidelity f = compare_images(px, py, 3, 96, 96);
    const int last = w->x + w->width - 1;
    edge_windows += (w->x > 0 && w->x % 16 == 0) || (last + 1 < width && last % 2 == 1);
    EXPECT_TRUE(f.identical) << "seed " << seed << " window x " << w->x << " width " << w->width;
    all.push_back(f);
  }
  const model::FidelitySummary s = model::summarize_fidelity(all);
  std::printf("decode:auto at scale 1: %zu of %zu samples identical (%d windows on an iMCU edge or ending odd)\n",
              s.identical, s.samples, edge_windows);
  EXPECT_GT(edge_windows, 0);  // the margin was put to the test
}

// libjpeg-turbo's own decompression of the whole image at 1/denom (tjDecompress2).
Image tj_decompress(const std::vector<uint8_t>& jpeg, int denom) {
  tjhandle t = tjInitDecompress();
  int w = 0, h = 0, sub = 0, cs = 0;
  EXPECT_EQ(tjDecompressHeader3(t, jpeg.data(), jpeg.size(), &w, &h, &sub, &cs), 0);
  Image out;
  const int sw = (w + denom - 1) / denom, sh = (h + denom - 1) / denom;
  out.resize(sh, sw, 3);
  EXPECT_EQ(tjDecompress2(t, jpeg.data(), jpeg.size(), out.ptr(), sw, 0, sh, TJPF_RGB, 0), 0) << tjGetErrorStr2(t);
  tjDestroy(t);
  return out;
}

// An ROI decode of a window against the same region of tjDecompress2's whole image at the
// same factor: bit for bit. At scale 1 that rests on the ROI decode's margin (without it
// the window's first column differed when it started on an iMCU boundary, its last when
// it ended odd); rows never differ (the skipped rows keep the upsampler's context), and
// DCT-scaled decodes (1/2, 1/4) decode the chroma planes at the luma's scaled size.
TEST(FidelityReference, RoiDecodeMatchesTjDecompress2AtTheSameScale) {
  const int image_w = 400, image_h = 300;
  const auto jpeg = make_jpeg(image_w, image_h, 11);
  RoiDecoder roi;
  Image part;
  for (const int denom : {1, 2, 4}) {
    const Image whole = tj_decompress(jpeg, denom);
    for (const CropWindow& w : {CropWindow{37, 21, 240, 200}, CropWindow{16, 16, 128, 128},
                                CropWindow{5, 7, 123, 50}, CropWindow{3, 5, 390, 290}}) {
      SCOPED_TRACE("1/" + std::to_string(denom) + " window " + std::to_string(w.x) + "," + std::to_string(w.y));
      const int min_w = denom == 1 ? 0 : (w.width + denom - 1) / denom;
      const int min_h = denom == 1 ? 0 : (w.height + denom - 1) / denom;
      const ScalingFactor f = roi.decode(jpeg, "r.jpg", w, min_w, min_h, part);
      ASSERT_EQ(f.denom, denom);
      const int x0 = w.x / denom, y0 = w.y / denom;  // the scaled window's origin (rounded down)
      ASSERT_LE(x0 + part.width, whole.width);
      ASSERT_LE(y0 + part.height, whole.height);
      std::set<int> columns, rows;
      for (int y = 0; y < part.height; ++y)
        for (int x = 0; x < part.width; ++x)
          for (int c = 0; c < 3; ++c)
            if (part.row(y)[x * 3 + c] != whole.row(y0 + y)[(x0 + x) * 3 + c]) {
              columns.insert(x);
              rows.insert(y);
            }
      const std::set<int> expected;  // none: the ROI decode's margin keeps its edges exact
      std::string where;
      for (int x : columns) where += " column " + std::to_string(x);
      std::printf("ROI 1/%d window %d,%d %dx%d against tjDecompress2:%s\n", denom, w.x, w.y, w.width, w.height,
                  where.empty() ? " bit for bit" : (where + " (rows " + std::to_string(rows.size()) + ")").c_str());
      EXPECT_EQ(columns, expected);
    }
  }
}

// --- the paired case's pass (bench/cases/paired_fidelity.h) ------------------------------------

// The A/A control (today against a second instance of itself) must read identical on every
// sample: anything else is a pairing bug. decode:auto on 500 x 375 images (1/2 DCT scaling
// for the larger windows) is measured, with the share of enlarged crops the same on both
// sides (the scaling never enlarges a window).
TEST(PairedFidelity, TheAAControlIsIdenticalAndDecodeAutoIsMeasured) {
  SyntheticOptions o;
  o.count = 12;
  o.classes = 2;
  const ImageFolder ds(testing::make_dataset("paired_fidelity", o));
  std::vector<size_t> index(ds.size());
  for (size_t i = 0; i < index.size(); ++i) index[i] = i;
  const std::string ops = "transforms:\n  - random_resized_crop: {size: 96}\n  - horizontal_flip\n"
                          "  - normalize: {mean: imagenet, std: imagenet}\n";
  const auto today = pipeline_of("decode: {mode: full}\n" + ops);
  const auto again = pipeline_of("decode: {mode: full}\n" + ops);
  const auto roi = pipeline_of("decode: {mode: auto}\n" + ops);
  const bench::FidelitySide a{today.get(), &ds, &index};
  const bench::PairedFidelity aa = bench::measure_paired_fidelity(a, {again.get(), &ds, &index}, 7);
  EXPECT_EQ(aa.summary.samples, ds.size());
  EXPECT_TRUE(aa.summary.all_identical()) << model::fidelity_cell(aa.summary);
  EXPECT_GE(aa.wall_ms, 0.0);
  const bench::PairedFidelity auto_fix = bench::measure_paired_fidelity(a, {roi.get(), &ds, &index}, 7);
  EXPECT_EQ(auto_fix.summary.samples, ds.size());
  std::printf("decode:auto on 12 images of 500 x 375: %s, %zu identical\n",
              model::fidelity_cell(auto_fix.summary).c_str(), auto_fix.summary.identical);
  EXPECT_FALSE(auto_fix.summary.all_identical());
  ASSERT_TRUE(auto_fix.upsampled_a_pct && auto_fix.upsampled_b_pct);
  EXPECT_DOUBLE_EQ(*auto_fix.upsampled_a_pct, *auto_fix.upsampled_b_pct);
  // max_samples bounds the pass.
  EXPECT_EQ(bench::measure_paired_fidelity(a, {again.get(), &ds, &index}, 7, bench::FidelityMode::kSameDraws, 5)
                .summary.samples, 5u);
}

}  // namespace
}  // namespace pipebench
