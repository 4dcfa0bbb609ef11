// The JPEG rows of the fault matrix (tests/README.md) that decode_bad_input_test.cpp does not
// cover, for all four backends (tests/fault_decoders.h). Files are made here with the
// libjpeg API (libjpeg-turbo 2.1.5: any sampling factors, restart markers, arithmetic
// coding) or patched by hand (EXIF, lossless SOF3). Expected outcomes:
//   truncated at every marker      DecodeError kTruncated, every backend, every cut
//   4:4:0, 4:1:1                   decoded; every backend equal to TurboJPEG's full decode,
//                                  near the source pixels; ROI windows equal full + crop
//   restart markers (every MCU)    decoded to the same pixels as without them; cut in a
//                                  restart interval: kTruncated
//   arithmetic coding              decoded to the same pixels as the Huffman file (the same
//                                  coefficients), or kUnsupported where a backend lacks it
//   lossless (SOF3)                kUnsupported (libjpeg-turbo 2.1.5 has no lossless mode)
//   EXIF orientation 6 (rotate)    decoded as stored, as torchvision's decode_jpeg / PIL's
//                                  open do by default: the same pixels and size as without
//                                  the EXIF segment, in every backend (OpenCV is called with
//                                  IMREAD_IGNORE_ORIENTATION for this)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/fault_decoders.h"
#include "tests/libjpeg_encode.h"
#include "tests/test_data.h"
#include "transforms/image_format.h"
#include "transforms/jpeg_decode.h"

namespace pipebench {
namespace {

using namespace fault;
using testing::encode_libjpeg;
using testing::LibjpegOptions;

// Smooth photo-like content (gradients, waves), so that subsampled chroma stays close.
std::vector<uint8_t> test_rgb(int w, int h) {
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
      p[0] = static_cast<uint8_t>(x * 255 / (w - 1));
      p[1] = static_cast<uint8_t>(128 + 80 * std::cos(y * 0.09 + x * 0.02));
      p[2] = static_cast<uint8_t>(128 + 90 * std::sin(x * 0.07 + y * 0.05));
    }
  return rgb;
}


// Every marker's offset in file order, the ones between and after scans included (entropy
// data: 0xFF is followed by 0x00 (stuffing), 0xD0-0xD7 (restart) or 0xFF (fill) inside a scan).
std::vector<std::pair<size_t, uint8_t>> markers(const std::vector<uint8_t>& j) {
  std::vector<std::pair<size_t, uint8_t>> out{{0, 0xD8}};
  size_t pos = 2;
  while (pos + 1 < j.size()) {
    if (j[pos] != 0xFF) return out;  // malformed: stop
    const uint8_t code = j[pos + 1];
    out.emplace_back(pos, code);
    if (code == 0xD9) return out;
    const size_t len = (j[pos + 2] << 8) | j[pos + 3];
    pos += 2 + len;
    if (code != 0xDA) continue;
    while (pos + 1 < j.size() &&
           !(j[pos] == 0xFF && j[pos + 1] != 0x00 && j[pos + 1] != 0xFF &&
             (j[pos + 1] < 0xD0 || j[pos + 1] > 0xD7)))
      ++pos;
  }
  return out;
}

std::string marker_name(uint8_t code) {
  switch (code) {
    case 0xD8: return "SOI";
    case 0xDB: return "DQT";
    case 0xC0: return "SOF0";
    case 0xC2: return "SOF2";
    case 0xC4: return "DHT";
    case 0xDD: return "DRI";
    case 0xDA: return "SOS";
    case 0xD9: return "EOI";
    default: return (code >= 0xE0 && code <= 0xEF) ? "APP" + std::to_string(code - 0xE0) : "marker";
  }
}

// Decodes with every backend; all must succeed and equal `ref` (TurboJPEG's full decode
// unless given).
void expect_decoded_alike(Decoders& d, const std::vector<uint8_t>& jpeg, int w, int h,
                          std::vector<uint8_t>* ref) {
  for (Backend b : kBackends) {
    SCOPED_TRACE(backend_name(b));
    const Outcome o = d.run(b, jpeg, "v.jpg", {0, 0, w, h});
    ASSERT_FALSE(o.error.has_value()) << o.what;
    ASSERT_EQ(d.out.width, w);
    ASSERT_EQ(d.out.height, h);
    if (ref->empty()) ref->assign(d.out.ptr(), d.out.ptr() + d.out.size_bytes());
    EXPECT_TRUE(std::equal(ref->begin(), ref->end(), d.out.ptr())) << "differs from the reference";
  }
}

TEST(FaultJpeg, TruncatedAtEveryMarkerInEveryBackend) {
  Decoders d;
  const int w = 120, h = 80;
  const auto rgb = test_rgb(w, h);
  for (const bool progressive : {false, true}) {
    LibjpegOptions o;
    o.progressive = progressive;
    o.restart_interval = progressive ? 0 : 4;  // DRI and RST markers in the baseline file
    const auto jpeg = encode_libjpeg(rgb, w, h, o);
    ASSERT_FALSE(jpeg.empty());
    const auto all = markers(jpeg);
    ASSERT_EQ(all.back().second, 0xD9) << "walked to EOI";
    int cuts = 0;
    for (size_t m = 0; m < all.size(); ++m) {
      const auto [at, code] = all[m];
      // Just before the marker (not SOI: 0 bytes is kEmpty), 3 bytes into it, and for a
      // scan halfway through its entropy data.
      std::vector<size_t> at_cuts = {at + 3};
      if (at > 0) at_cuts.push_back(at);
      if (code == 0xDA && m + 1 < all.size()) at_cuts.push_back((at + all[m + 1].first) / 2);
      for (const size_t cut : at_cuts) {
        if (cut >= jpeg.size()) continue;
        SCOPED_TRACE(std::string(progressive ? "progressive" : "baseline") + " cut at " +
                     std::to_string(cut) + " (" + marker_name(code) + " at " + std::to_string(at) +
                     ") of " + std::to_string(jpeg.size()));
        const std::vector<uint8_t> part(jpeg.begin(), jpeg.begin() + cut);
        for (Backend b : kBackends)
          expect_error(d.run(b, part, "cut.jpg", {0, 0, w, h}), Reason::kTruncated, "cut.jpg", b);
        ++cuts;
      }
    }
    EXPECT_GT(cuts, progressive ? 20 : 12);  // every marker of the file was reached
  }
  expect_still_usable(d);
}

TEST(FaultJpeg, SubsamplingsDecodeAlikeInEveryBackend) {
  Decoders d;
  const int w = 123, h = 77;  // not a multiple of any MCU size
  const auto rgb = test_rgb(w, h);
  const struct {
    const char* name;
    int hs, vs;
  } kinds[] = {{"4:4:0", 1, 2}, {"4:1:1", 4, 1}, {"4:2:0", 2, 2}, {"4:4:4", 1, 1}};
  for (const auto& k : kinds) {
    SCOPED_TRACE(k.name);
    LibjpegOptions o;
    o.h_samp = k.hs, o.v_samp = k.vs;
    const auto jpeg = encode_libjpeg(rgb, w, h, o);
    ASSERT_FALSE(jpeg.empty());
    std::vector<uint8_t> ref;
    expect_decoded_alike(d, jpeg, w, h, &ref);
    EXPECT_GT(testing::psnr(ref.data(), rgb.data(), ref.size()), 30.0);
    // An ROI window at odd offsets: full decode + crop, the window's edge columns apart
    // (smooth upsampling replicates the edge chroma there; decode_test.cpp measures it).
    const CropWindow win{13, 7, 50, 31};
    ASSERT_FALSE(d.run(Backend::kRoi, jpeg, "v.jpg", win).error.has_value());
    for (int y = 0; y < win.height; ++y)
      for (int x = 1; x + 1 < win.width; ++x)
        for (int c = 0; c < 3; ++c)
          ASSERT_EQ(d.out.row(y)[x * 3 + c], ref[((win.y + y) * size_t{w} + win.x + x) * 3 + c])
              << "at " << x << "," << y;
  }
  expect_still_usable(d);
}

TEST(FaultJpeg, RestartMarkersDecodeToTheSamePixels) {
  Decoders d;
  const int w = 120, h = 80;
  const auto rgb = test_rgb(w, h);
  std::vector<uint8_t> plain_ref;
  expect_decoded_alike(d, encode_libjpeg(rgb, w, h, {}), w, h, &plain_ref);
  for (const int interval : {1, 3}) {
    SCOPED_TRACE("restart every " + std::to_string(interval) + " MCU");
    LibjpegOptions o;
    o.restart_interval = interval;
    const auto jpeg = encode_libjpeg(rgb, w, h, o);
    const uint8_t rst3[] = {0xFF, 0xD3};
    ASSERT_NE(std::search(jpeg.begin(), jpeg.end(), std::begin(rst3), std::end(rst3)), jpeg.end())
        << "no RST3";
    auto ref = plain_ref;
    expect_decoded_alike(d, jpeg, w, h, &ref);
  }
  expect_still_usable(d);
}

TEST(FaultJpeg, ArithmeticCodingDecodesToTheHuffmanPixelsOrIsUnsupported) {
  Decoders d;
  const int w = 120, h = 80;
  const auto rgb = test_rgb(w, h);
  for (const bool progressive : {false, true}) {
    SCOPED_TRACE(progressive ? "progressive" : "sequential");
    LibjpegOptions o;
    o.progressive = progressive;
    std::vector<uint8_t> ref;
    expect_decoded_alike(d, encode_libjpeg(rgb, w, h, o), w, h, &ref);
    o.arithmetic = true;
    const auto jpeg = encode_libjpeg(rgb, w, h, o);
    if (jpeg.empty()) GTEST_SKIP() << "this libjpeg cannot encode arithmetic coding";
    EXPECT_NE(marker_offset(jpeg, progressive ? 0xCA : 0xC9), std::string::npos) << "SOF9/10";
    for (Backend b : kBackends) {
      SCOPED_TRACE(backend_name(b));
      const Outcome out = d.run(b, jpeg, "arith.jpg", {0, 0, w, h});
      std::printf("arithmetic %s, %s: %s\n", progressive ? "progressive" : "sequential",
                  backend_name(b), out.error ? out.what.c_str() : "decoded");
      if (out.error) {  // allowed, but then named as unsupported
        expect_error(out, Reason::kUnsupported, "arith.jpg", b);
        continue;
      }
      ASSERT_EQ(d.out.size_bytes(), ref.size());
      EXPECT_TRUE(std::equal(ref.begin(), ref.end(), d.out.ptr()));
    }
  }
  expect_still_usable(d);
}

TEST(FaultJpeg, LosslessJpegIsUnsupported) {
  Decoders d;
  auto jpeg = testing::make_jpeg(64, 48, 3, 90, "4:4:4");
  const size_t sof = marker_offset(jpeg, 0xC0);
  ASSERT_NE(sof, std::string::npos);
  jpeg[sof + 1] = 0xC3;  // SOF3: lossless (Huffman); libjpeg-turbo 2.1.5 has no such mode
  for (Backend b : kBackends)
    expect_error(d.run(b, jpeg, "lossless.jpg", {0, 0, 64, 48}), Reason::kUnsupported,
                 "lossless.jpg", b);
  EXPECT_THROW(read_jpeg_info(jpeg, "lossless.jpg"), DecodeError);
  expect_still_usable(d);
}

// APP1 "Exif" with a little-endian TIFF header and one IFD entry: Orientation (0x0112),
// SHORT, count 1, value `orientation` (6: the stored image must be rotated 90 degrees
// clockwise to display).
std::vector<uint8_t> exif_segment(uint16_t orientation) {
  const std::vector<uint8_t> tiff = {'I', 'I', 42, 0, 8, 0, 0, 0,          // header, IFD at 8
                                     1, 0,                                 // 1 entry
                                     0x12, 0x01, 3, 0, 1, 0, 0, 0,         // Orientation SHORT 1
                                     static_cast<uint8_t>(orientation), 0, 0, 0,
                                     0, 0, 0, 0};                          // no next IFD
  std::vector<uint8_t> seg = {0xFF, 0xE1, 0, 0, 'E', 'x', 'i', 'f', 0, 0};
  seg.insert(seg.end(), tiff.begin(), tiff.end());
  const size_t len = seg.size() - 2;
  seg[2] = static_cast<uint8_t>(len >> 8), seg[3] = static_cast<uint8_t>(len & 0xFF);
  return seg;
}

TEST(FaultJpeg, ExifOrientationIsIgnoredAsTorchvisionDoes) {
  Decoders d;
  const int w = 96, h = 40;  // not square: a rotation would swap the sides
  const auto plain = testing::make_jpeg(w, h, 11);
  std::vector<uint8_t> ref;
  expect_decoded_alike(d, plain, w, h, &ref);
  for (const uint16_t orientation : {3, 6, 8}) {
    SCOPED_TRACE("orientation " + std::to_string(orientation));
    auto jpeg = plain;
    const auto seg = exif_segment(orientation);
    jpeg.insert(jpeg.begin() + 2, seg.begin(), seg.end());  // right after SOI
    EXPECT_EQ(read_image_info(jpeg, "exif.jpg").width, w);
    auto want = ref;
    expect_decoded_alike(d, jpeg, w, h, &want);
  }
  expect_still_usable(d);
}

}  // namespace
}  // namespace pipebench
