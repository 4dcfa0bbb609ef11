// Extreme aspect ratios (issue 15 defect 2): valid JPEGs of 65000 x 1, 1 x 65000 and
// 20000 x 3 pixels through the shipped recipes. Resize(256) of a 65000 x 1 image is 256 x
// 16.6 million pixels; imagenet_val keeps 224 x 224 of it, and its memory must follow that
// output and the source, not the whole resize (it took 0.45 GB and 3.6 s per sample, 13 GB
// through the per-operator bench). References, independent of the engine:
//   - OpenCV 4.6's INTER_LINEAR on 8-bit images written out below for the kept pixels only
//     (its float source coordinate, 11-bit weights, integer horizontal sums and the vector
//     vertical pass), itself checked against cv::resize on smaller images of the same
//     shapes, and on a 65000 x 1 image against cv::resize of a column slice (exact there:
//     the scale is 1/256, so the slice's coordinates are the whole image's shifted);
//   - for the training recipes, whose crop falls back to a 1 x 1 window on such images, the
//     decoded pixel itself.
// Heap use is counted by tests/alloc_counter.h (operator new; TurboJPEG's own mallocs are
// not seen, and they follow the source, not the resize).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "datasets/synthetic.h"
#include "tests/alloc_counter.h"
#include "transforms/crop.h"
#include "transforms/jpeg_decode.h"
#include "transforms/normalize.h"
#include "transforms/pipeline.h"
#include "transforms/recipes.h"
#include "transforms/spec.h"

namespace pipebench {
namespace {

// A JPEG of w x h pixels with content that varies along the long side (gradients plus a
// pseudo-random term), 4:4:4 so that no chroma is shared across the single row / column.
std::vector<uint8_t> thin_jpeg(int w, int h) {
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < rgb.size(); ++i) {
    const size_t p = i / 3;
    rgb[i] = static_cast<uint8_t>((p * (7 + i % 3) / 5 + (p * 2654435761u >> 13) % 37) & 0xFF);
  }
  return encode_jpeg(rgb.data(), w, h, 95, "4:4:4", false);
}

Image decode(const std::vector<uint8_t>& jpeg) {
  Image img;
  TurboDecoder().decode(jpeg, "thin.jpg", img);
  return img;
}

// ---- OpenCV 4.6 INTER_LINEAR, 8-bit, written out (modules/imgproc/src/resize.cpp) ----------

struct Tap {
  int s0, s1;      // source indices, clamped to the image
  int16_t w0, w1;  // saturate_cast<short>(c * 2048)
};

// fx = (float)((d + 0.5) * scale - 0.5), scale = 1 / (dst / (double)src); sx = floor(fx);
// on the horizontal axis sx < 0 or sx >= src - 1 set fx = 0 and clamp sx (resize()'s xofs
// loop); vertically only the rows are clamped (the invoker's "sy + k" clamp).
Tap opencv_tap(int d, int src, int dst, bool horizontal) {
  const double scale = 1.0 / (static_cast<double>(dst) / src);
  float f = static_cast<float>((d + 0.5) * scale - 0.5);
  int s = static_cast<int>(std::floor(f));
  f -= static_cast<float>(s);
  if (horizontal && s < 0) f = 0, s = 0;
  if (horizontal && s >= src - 1) f = 0, s = src - 1;
  const auto fixed = [](float c) {
    return static_cast<int16_t>(std::clamp<long>(std::lrint(c * 2048.0f), SHRT_MIN, SHRT_MAX));
  };
  return {std::clamp(s, 0, src - 1), std::clamp(s + 1, 0, src - 1), fixed(1.f - f), fixed(f)};
}

// Pixels [x0, x0 + kw) x [y0, y0 + kh) of the resize of `src` to oh x ow: horizontal sums
// S = a0 * p[s0] + a1 * p[s1], then the vector vertical pass
// ((S0 >> 4) * b0 >> 16) + ((S1 >> 4) * b1 >> 16), + 2 >> 2, saturated to uint8.
Image opencv_linear(const Image& src, int oh, int ow, int x0, int y0, int kw, int kh) {
  const int C = src.channels;
  Image out;
  out.resize(kh, kw, C);
  for (int y = 0; y < kh; ++y) {
    const Tap ty = opencv_tap(y0 + y, src.height, oh, false);
    for (int x = 0; x < kw; ++x) {
      const Tap tx = opencv_tap(x0 + x, src.width, ow, true);
      for (int c = 0; c < C; ++c) {
        const auto hsum = [&](int row) {
          const uint8_t* r = src.row(row);
          return r[tx.s0 * C + c] * tx.w0 + r[tx.s1 * C + c] * tx.w1;
        };
        const int v0 = static_cast<int16_t>(hsum(ty.s0) >> 4) * ty.w0 >> 16;
        const int v1 = static_cast<int16_t>(hsum(ty.s1) >> 4) * ty.w1 >> 16;
        out.row(y)[x * C + c] = static_cast<uint8_t>(std::clamp((v0 + v1 + 2) >> 2, 0, 255));
      }
    }
  }
  return out;
}

// torchvision Resize(size) + CenterCrop(crop) sizes: long = int(size * long / short),
// offsets round((dim - crop) / 2) (half to even).
struct ValGeometry {
  int oh, ow, x0, y0;
};
ValGeometry val_geometry(const Image& src, int size, int crop) {
  ValGeometry g;
  if (src.width <= src.height) {
    g.ow = size, g.oh = static_cast<int>(int64_t{size} * src.height / src.width);
  } else {
    g.oh = size, g.ow = static_cast<int>(int64_t{size} * src.width / src.height);
  }
  g.x0 = static_cast<int>(std::nearbyint((g.ow - crop) / 2.0));
  g.y0 = static_cast<int>(std::nearbyint((g.oh - crop) / 2.0));
  return g;
}

bool same(const Image& a, const Image& b) {
  return a.height == b.height && a.width == b.width && a.channels == b.channels &&
         std::equal(a.ptr(), a.ptr() + a.size_bytes(), b.ptr());
}

// (q / 255 - mean) / std per channel of a uint8 HWC image, as CHW floats.
std::vector<float> normalized(const Image& q) {
  std::vector<float> out(3 * static_cast<size_t>(q.height) * q.width);
  const size_t plane = static_cast<size_t>(q.height) * q.width;
  for (int y = 0; y < q.height; ++y)
    for (int x = 0; x < q.width; ++x)
      for (int c = 0; c < 3; ++c)
        out[c * plane + static_cast<size_t>(y) * q.width + x] =
            (q.row(y)[x * 3 + c] / 255.0f - kImageNetMean[c]) / kImageNetStd[c];
  return out;
}

// Largest |a - b|; the fused and table normalizes differ from the formula by float
// rounding only (normalize.h: 4.8e-7 with ImageNet's statistics), one uint8 step is 0.017.
double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = a.size() == b.size() ? 0.0 : INFINITY;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, std::fabs(double(a[i]) - b[i]));
  return m;
}
constexpr double kRounding = 2e-6;

// One sample through `p` on a fresh workspace; *peak: the most bytes operator new held
// above what was held before (the workspace's first growth included).
std::vector<float> run_counted(const Pipeline& p, const std::vector<uint8_t>& jpeg,
                               uint64_t index, size_t* peak) {
  std::vector<float> out(p.output_floats());
  PipelineWorkspace ws(p);
  const size_t before = testing::allocated_bytes();
  testing::reset_peak_bytes();
  Rng rng = Rng::for_sample(5, 0, index);
  p.run(jpeg, "thin.jpg", rng, ws, out.data());
  *peak = testing::peak_allocated_bytes() - before;
  return out;
}

// What one sample may hold: the decoded image twice, a source row as floats and as bytes
// (the engine's scratch), the ROI decoder's iMCU row (16 source rows of 3 bytes) and 1 MiB
// of tables and slack, plus the 224 x 224 output twice (uint8 and float). For 65000 x 1:
// 6.9 MB; the whole resize's tap tables alone took 0.45 GB.
size_t sample_bound(const Image& src) {
  const size_t source = src.size_bytes();
  const size_t row = static_cast<size_t>(std::max(src.width, src.height)) * 3;
  return 2 * source + (6 + 16) * row + 224 * 224 * 3 * 5 + (size_t{1} << 20);
}

struct Shape {
  int w, h;
};
constexpr Shape kThin[] = {{65000, 1}, {1, 65000}, {20000, 3}};

std::string name(Shape s) { return std::to_string(s.w) + "x" + std::to_string(s.h); }

// The written-out reference is OpenCV's: equal to cv::resize on whole resizes of the same
// shapes (shorter side to 16, every pixel), and on the 65000 x 1 image's kept pixels to
// cv::resize of a column slice around them (scale 1/256 exactly: fx of the slice's output
// d is the whole image's fx of d + 256 * first column, exactly, in float).
TEST(FaultAspect, WrittenOutLinearIsOpenCvs) {
  for (const Shape s : {Shape{650, 1}, Shape{1, 650}, Shape{200, 3}, Shape{3, 200}}) {
    SCOPED_TRACE(name(s));
    const Image src = decode(thin_jpeg(s.w, s.h));
    const ValGeometry g = val_geometry(src, 16, 1);  // 16 x 10400: every pixel stays cheap
    cv::Mat whole;
    cv::resize(cv::Mat(src.height, src.width, CV_8UC3, const_cast<uint8_t*>(src.ptr())), whole,
               cv::Size(g.ow, g.oh), 0, 0, cv::INTER_LINEAR);
    const Image ref = opencv_linear(src, g.oh, g.ow, 0, 0, g.ow, g.oh);
    ASSERT_EQ(whole.total() * 3, ref.size_bytes());
    EXPECT_TRUE(std::equal(ref.ptr(), ref.ptr() + ref.size_bytes(), whole.data));
  }
  const Image src = decode(thin_jpeg(65000, 1));
  const ValGeometry g = val_geometry(src, 256, 224);
  ASSERT_EQ(g.ow, 256 * 65000);
  const int first = g.x0 / 256 - 4, cols = 224 / 256 + 9;  // the kept columns' taps, +-4
  cv::Mat slice;
  cv::resize(cv::Mat(1, cols, CV_8UC3, const_cast<uint8_t*>(src.ptr()) + first * 3), slice,
             cv::Size(cols * 256, 256), 0, 0, cv::INTER_LINEAR);
  const Image ref = opencv_linear(src, g.oh, g.ow, g.x0, g.y0, 224, 224);
  for (int y = 0; y < 224; ++y) {
    const uint8_t* want = slice.ptr<uint8_t>(g.y0 + y) + (g.x0 - first * 256) * 3;
    ASSERT_TRUE(std::equal(ref.row(y), ref.row(y) + 224 * 3, want)) << "row " << y;
  }
}

// imagenet_val (fused, and the unfused plan) and resize_shorter_center_crop give OpenCV's
// kept pixels, with memory bounded by the output and the source.
TEST(FaultAspect, ImagenetValComputesOnlyTheCropWhateverTheAspectRatio) {
  const auto fused = build_recipe("imagenet_val");
  const auto unfused = Pipeline::build(recipe_spec("imagenet_val"), {}, PlanOptions{false});
  for (const Shape s : kThin) {
    SCOPED_TRACE(name(s));
    const auto jpeg = thin_jpeg(s.w, s.h);
    const Image src = decode(jpeg);
    const ValGeometry g = val_geometry(src, 256, 224);
    const Image ref = opencv_linear(src, g.oh, g.ow, g.x0, g.y0, 224, 224);

    Image crop;
    resize_shorter_center_crop(src, 256, 224, crop);
    EXPECT_TRUE(same(crop, ref)) << "resize_shorter_center_crop differs from OpenCV's pixels";

    const std::vector<float> want = normalized(ref);
    for (const auto* p : {fused.get(), unfused.get()}) {
      SCOPED_TRACE(p->plan_text());
      size_t peak = 0;
      const auto got = run_counted(*p, jpeg, 0, &peak);
      EXPECT_LE(max_diff(got, want), kRounding);
      EXPECT_LE(peak, sample_bound(src)) << "bytes held by one sample";
    }
  }
}

// The training recipes: random_resized_crop finds no window on such images and falls back
// to the central one with the ratio clamped to [3/4, 4/3]: 1 x 1 on a 1-pixel side, so the
// sample is that decoded pixel everywhere (imagenet_train; its flip changes nothing).
// deit_train's policies change values, so there: a finite sample, bounded memory.
TEST(FaultAspect, TrainingRecipesOnExtremeAspectRatios) {
  for (const Shape s : kThin) {
    SCOPED_TRACE(name(s));
    const auto jpeg = thin_jpeg(s.w, s.h);
    const Image src = decode(jpeg);
    for (const char* recipe : {"imagenet_train", "imagenet_train_roi", "deit_train"}) {
      SCOPED_TRACE(recipe);
      const auto p = build_recipe(recipe);
      size_t peak = 0;
      std::vector<float> got;
      ASSERT_NO_THROW(got = run_counted(*p, jpeg, 3, &peak));
      EXPECT_LE(peak, sample_bound(src)) << "bytes held by one sample";
      EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](float v) { return std::isfinite(v); }));
      if (std::string(recipe) == "deit_train" || std::min(s.w, s.h) != 1) continue;
      Image pixel;
      pixel.resize(1, 1, 3);
      const int x = (s.w - 1) / 2, y = (s.h - 1) / 2;
      std::copy_n(src.row(y) + x * 3, 3, pixel.ptr());
      const auto one = normalized(pixel);
      std::vector<float> want(got.size());
      for (size_t i = 0; i < want.size(); ++i) want[i] = one[i / (224 * 224)];
      EXPECT_LE(max_diff(got, want), kRounding);
    }
  }
}

// ROI decode of a crop larger than a 1-pixel-high image: center_crop pads as torchvision's
// CenterCrop does (pad (224 - 1) // 2 = 111 rows on top, then the central 224 columns:
// zeros around the image's middle 224 pixels, on output row 111); random_crop (no padding)
// refuses with a clear error. center_crop pads the whole 65000-wide row to 224 rows before
// cropping (44 MB, ops/geometry.cpp: CenterCropOp), so its bound here is that padded image.
// (Pipeline::run names the file only for errors after decode: the ROI window is drawn
// before its try block; the loader adds the path itself.) And the resize alone, as
// BM_Transform/resize runs it, refuses a whole resized image above kMaxResizePixels
// instead of allocating 12.8 GB.
TEST(FaultAspect, CropsLargerThanTheImageAndWholeResizes) {
  const auto jpeg = thin_jpeg(65000, 1);
  const Image src = decode(jpeg);
  {
    const auto p = Pipeline::build(parse_pipeline_spec(
        "{decode: {mode: roi}, transforms: [{center_crop: {size: 224}}, normalize]}", "fault_aspect"));
    size_t peak = 0;
    const auto got = run_counted(*p, jpeg, 0, &peak);
    EXPECT_LE(peak, sample_bound(src) + size_t{224} * src.size_bytes());
    Image middle, zero;
    middle.resize(1, 224, 3);
    std::copy_n(src.ptr() + 32388 * 3, 224 * 3, middle.ptr());
    zero.resize(1, 1, 3);
    std::fill_n(zero.ptr(), 3, 0);
    const auto row = normalized(middle), pad = normalized(zero);
    std::vector<float> want(got.size());
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < 224; ++y)
        for (int x = 0; x < 224; ++x)
          want[(c * 224 + y) * 224 + x] = y == 111 ? row[c * 224 + x] : pad[c];
    EXPECT_LE(max_diff(got, want), kRounding);
  }
  {
    const auto p = Pipeline::build(parse_pipeline_spec(
        "{decode: {mode: roi}, transforms: [{random_crop: {size: 224}}, normalize]}", "fault_aspect"));
    std::vector<float> out(p->output_floats());
    PipelineWorkspace ws(*p);
    Rng rng(1);
    try {
      p->run(jpeg, "thin.jpg", rng, ws, out.data());
      ADD_FAILURE() << "a 224 random crop of a 65000 x 1 image ran";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("1 x 65000"), std::string::npos) << e.what();
    }
  }
  Image out;
  const size_t before = testing::allocated_bytes();
  testing::reset_peak_bytes();
  try {
    resize_shorter(src, 256, out);
    ADD_FAILURE() << "a 256 x 16.6 million resize ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("256 x 16640000"), std::string::npos) << e.what();
  }
  EXPECT_LE(testing::peak_allocated_bytes() - before, size_t{1} << 20);
  EXPECT_THROW(resize_shorter(src, 40000, out), std::invalid_argument);  // side past INT_MAX
  resize_shorter(decode(thin_jpeg(100, 1)), 256, out);  // 256 x 25600: within the limit
  EXPECT_EQ(out.width, 25600);
}

// Images smaller than the crop (8 x 6 against 224): imagenet_val enlarges them (OpenCV's
// pixels, as above), the training recipes' windows grow to 224, center_crop pads with
// zeros as torchvision's CenterCrop, and random_crop without pad_if_needed refuses with an
// error saying how to allow it (torchvision fails too).
TEST(FaultAspect, ImagesSmallerThanTheCrop) {
  const auto jpeg = thin_jpeg(8, 6);
  const Image src = decode(jpeg);
  {
    const ValGeometry g = val_geometry(src, 256, 224);
    const auto want = normalized(opencv_linear(src, g.oh, g.ow, g.x0, g.y0, 224, 224));
    size_t peak = 0;
    EXPECT_LE(max_diff(run_counted(*build_recipe("imagenet_val"), jpeg, 0, &peak), want), kRounding);
  }
  for (const char* recipe : {"imagenet_train", "imagenet_train_roi", "deit_train"}) {
    SCOPED_TRACE(recipe);
    size_t peak = 0;
    std::vector<float> got;
    ASSERT_NO_THROW(got = run_counted(*build_recipe(recipe), jpeg, 1, &peak));
    EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](float v) { return std::isfinite(v); }));
  }
  {
    const auto p = Pipeline::build(parse_pipeline_spec("[{center_crop: {size: 224}}, normalize]", "small"));
    size_t peak = 0;
    const auto got = run_counted(*p, jpeg, 0, &peak);
    Image zero;
    zero.resize(1, 1, 3);
    std::fill_n(zero.ptr(), 3, 0);
    const auto pad = normalized(zero), px = normalized(src);
    // Padding (224 - 8) / 2 = 108 columns left, (224 - 6) / 2 = 109 rows on top.
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < 224; ++y)
        for (int x = 0; x < 224; ++x) {
          const bool in = y >= 109 && y < 115 && x >= 108 && x < 116;
          const float want = in ? px[(c * 6 + (y - 109)) * 8 + (x - 108)] : pad[c];
          ASSERT_NEAR(got[(c * 224 + y) * 224 + x], want, kRounding) << c << "," << y << "," << x;
        }
  }
  const auto p = Pipeline::build(parse_pipeline_spec("[{random_crop: {size: 224}}, normalize]", "small"));
  std::vector<float> out(p->output_floats());
  PipelineWorkspace ws(*p);
  Rng rng(1);
  try {
    p->run(jpeg, "small.jpg", rng, ws, out.data());
    ADD_FAILURE() << "random_crop 224 of an 8 x 6 image ran";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("small.jpg"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pad_if_needed"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pipebench
