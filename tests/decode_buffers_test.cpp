// Decoder memory after an outlier (issue 15, defect 6): one large image among small ones
// must not leave a worker holding its buffers for the rest of the run. Checked by the
// capacities the decoders and the caller's Image hold (not RSS), and by glibc's count of
// heap bytes in use (mallinfo2), which also covers what TurboJPEG's handle might keep.
// Also: sizes within BufferTrim's factor never reallocate (steady state allocates nothing).
#include <gtest/gtest.h>
#include <malloc.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <vector>

#include "datasets/synthetic.h"
#include "tests/test_data.h"
#include "transforms/buffer_trim.h"
#include "transforms/jpeg_decode.h"

namespace pipebench {
namespace {

constexpr int kBigW = 2400, kBigH = 1800;  // 13 MB of RGB: above BufferTrim's 4 MiB floor
constexpr size_t kBigBytes = size_t{kBigW} * kBigH * 3;
constexpr size_t kSmallLimit = 1 << 20;  // what "released" means here: under 1 MiB

const std::vector<uint8_t>& big_jpeg() {
  static const auto j = testing::make_jpeg(kBigW, kBigH, 11, 90, "4:2:0", true);  // progressive
  return j;
}
const std::vector<uint8_t>& small_jpeg() {
  static const auto j = testing::make_jpeg(64, 48, 12);
  return j;
}
const std::vector<uint8_t>& big_png() {
  static const auto p = [] {
    auto rgb = render_synthetic_rgb(kBigW, kBigH, 13);
    cv::Mat bgr;
    cv::cvtColor(cv::Mat(kBigH, kBigW, CV_8UC3, rgb.data()), bgr, cv::COLOR_RGB2BGR);
    std::vector<uint8_t> out;
    cv::imencode(".png", bgr, out, {cv::IMWRITE_PNG_COMPRESSION, 1});
    return out;
  }();
  return p;
}

size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;  // heap chunks in use + mmapped chunks
}

// After the outlier, small decodes release every buffer `capacities()` lists within
// BufferTrim::kWindow + 1 calls, and none before the window has passed (a mixed dataset
// must not thrash).
template <class Decode, class Capacities>
void expect_released_after_window(Decode decode_small, Capacities capacities) {
  for (size_t c : capacities()) ASSERT_GE(c, kBigBytes);
  for (size_t i = 0; i + 1 < BufferTrim::kWindow; ++i) {
    decode_small();
    for (size_t c : capacities())
      ASSERT_GE(c, kBigBytes) << "released after only " << i + 1 << " small decodes";
  }
  for (int i = 0; i < 2; ++i) decode_small();
  for (size_t c : capacities()) EXPECT_LT(c, kSmallLimit);
}

std::vector<size_t> capacity_of(const Image& out) { return {out.data.capacity()}; }

TEST(DecodeBuffers, TurboReleasesTheOutputAfterAnOutlier) {
  TurboDecoder turbo;
  Image out;
  big_jpeg(), small_jpeg();  // made before the baseline
  const size_t base = heap_in_use();
  turbo.decode(big_jpeg(), "big.jpg", out);
  expect_released_after_window([&] { turbo.decode(small_jpeg(), "s.jpg", out); },
                               [&] { return capacity_of(out); });
  EXPECT_EQ(out.width, 64);
  // Nothing image-sized is left anywhere on the heap (TurboJPEG's handle included).
  EXPECT_LT(heap_in_use(), base + (2u << 20)) << "heap in use grew by "
                                              << (heap_in_use() - base) / 1000 << " KB";
}

TEST(DecodeBuffers, TurboScaledAndNonJpegRelease) {
  TurboDecoder turbo;
  Image out;
  turbo.decode_scaled(big_jpeg(), "big.jpg", kBigW, kBigH, out);  // 1/1
  expect_released_after_window([&] { turbo.decode_scaled(small_jpeg(), "s.jpg", 32, 24, out); },
                               [&] { return capacity_of(out); });
  turbo.decode(big_png(), "big.png", out);
  expect_released_after_window([&] { turbo.decode(small_jpeg(), "s.jpg", out); },
                               [&] { return capacity_of(out); });
}

TEST(DecodeBuffers, RoiReleasesItsScratchAndTheOutput) {
  RoiDecoder roi;
  Image out;
  big_jpeg(), small_jpeg(), big_png();  // made before the baseline
  const size_t base = heap_in_use();
  // A non-JPEG is decoded whole into the decoder's own scratch, then the window copied.
  roi.decode(big_png(), "big.png", {0, 0, kBigW, kBigH}, 0, 0, out);
  ASSERT_GE(roi.scratch_bytes(), kBigBytes);
  expect_released_after_window(
      [&] { roi.decode(small_jpeg(), "s.jpg", {0, 0, 64, 48}, 0, 0, out); },
      [&] { return std::vector<size_t>{roi.scratch_bytes(), out.data.capacity()}; });
  // A JPEG window of the big image: only the output is image-sized.
  roi.decode(big_jpeg(), "big.jpg", {0, 0, kBigW, kBigH}, 0, 0, out);
  expect_released_after_window(
      [&] { roi.decode(small_jpeg(), "s.jpg", {8, 8, 32, 32}, 0, 0, out); },
      [&] { return capacity_of(out); });
  EXPECT_LT(heap_in_use(), base + (2u << 20));
}

TEST(DecodeBuffers, OpenCvReleasesTheOutput) {
  Image out;
  decode_opencv(big_jpeg(), "big.jpg", out);
  expect_released_after_window([&] { decode_opencv(small_jpeg(), "s.jpg", out); },
                               [&] { return capacity_of(out); });
}

TEST(DecodeBuffers, MixedSizesWithinTheFactorNeverReallocate) {
  // 1200 x 1200 (4.3 MB) and 800 x 800 (1.9 MB) alternate: within 4x, so after the first
  // large one the output keeps its storage (no allocation per sample).
  const auto a = testing::make_jpeg(1200, 1200, 14), b = testing::make_jpeg(800, 800, 15);
  TurboDecoder turbo;
  Image out;
  turbo.decode(a, "a.jpg", out);
  const uint8_t* storage = out.ptr();
  for (int i = 0; i < 40; ++i) {
    turbo.decode(i % 3 == 0 ? a : b, "ab.jpg", out);
    ASSERT_EQ(out.ptr(), storage) << "reallocated at decode " << i;
  }
}

TEST(DecodeBuffers, BufferTrimRule) {
  BufferTrim t;
  EXPECT_FALSE(t.oversized(BufferTrim::kFloorBytes));      // at the floor: kept
  EXPECT_TRUE(t.oversized(BufferTrim::kFloorBytes + 1));   // nothing needed yet
  t.record(10 << 20);
  EXPECT_FALSE(t.oversized(40 << 20));                     // exactly 4x: kept
  EXPECT_TRUE(t.oversized((40 << 20) + 4));
  std::vector<uint8_t> v(50 << 20);
  t.fit(v, 1000);  // the 10 MB need is still in the window: 50 MB > 40 MB, released
  EXPECT_EQ(v.capacity(), 0u);
}

}  // namespace
}  // namespace pipebench
