// Bad and unusual input for all four decoders (TurboJPEG full, TurboJPEG DCT scaled, libjpeg
// ROI, OpenCV): each input must give a correct decode or a DecodeError naming the file and
// the reason -- never a crash, a hang, another exception type, or silently grey-padded
// pixels from a truncated file. The same decoder objects are reused across inputs, and at
// the end of each test must still decode a valid JPEG exactly as a fresh one does (so
// error recovery leaves no state behind).
#include <gtest/gtest.h>

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/fault_decoders.h"
#include "tests/libjpeg_encode.h"
#include "tests/test_data.h"
#include "transforms/jpeg_decode.h"

namespace pipebench {
namespace {

using testing::make_jpeg;
using namespace fault;  // the four backends, expected errors, marker offsets

TEST(DecodeBadInput, ZeroBytesIsEmpty) {
  Decoders d;
  for (Backend b : kBackends)
    expect_error(d.run(b, {}, "zero.jpg", {0, 0, 8, 8}), Reason::kEmpty, "zero.jpg", b);
  EXPECT_THROW(read_jpeg_info({}, "zero.jpg"), DecodeError);
  expect_still_usable(d);
}

TEST(DecodeBadInput, NoKnownSignatureIsNotAnImage) {
  Decoders d;
  const std::vector<std::vector<uint8_t>> inputs = {
      {'h', 'e', 'l', 'l', 'o', ',', ' ', 'w', 'o', 'r', 'l', 'd', '\n'},
      {0xFF},
      {0xD8, 0xFF, 0xE0},
      {0x00, 0x05, 0x16, 0x07, 0x00, 0x02}};  // macOS AppleDouble ("._x.jpg")
  for (const auto& bytes : inputs)
    for (Backend b : kBackends)
      expect_error(d.run(b, bytes, "not_a.jpg", {0, 0, 8, 8}), Reason::kNotImage, "not_a.jpg",
                   b);
  // A PNG signature with the header cut short is a PNG, truncated (decode_formats_test.cpp
  // covers whole PNGs and the other formats).
  const std::vector<uint8_t> png_head = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n',
                                         0,    0,   0,   13,  'I',  'H',  'D',  'R'};
  for (Backend b : kBackends)
    expect_error(d.run(b, png_head, "png_head.jpg", {0, 0, 8, 8}), Reason::kTruncated,
                 "png_head.jpg", b);
  expect_still_usable(d);
}

TEST(DecodeBadInput, TruncatedIsTruncatedInEveryBackend) {
  Decoders d;
  for (const bool progressive : {false, true}) {
    const auto jpeg = make_jpeg(240, 160, 4, 90, "4:2:0", progressive);
    const size_t cuts[] = {jpeg.size() / 2, jpeg.size() * 9 / 10, jpeg.size() - 2 /* no EOI */,
                           entropy_offset(jpeg) /* header only */, 20 /* inside header */};
    for (const size_t cut : cuts) {
      SCOPED_TRACE(std::string(progressive ? "progressive" : "baseline") + " cut at " +
                   std::to_string(cut) + " of " + std::to_string(jpeg.size()));
      const std::vector<uint8_t> part(jpeg.begin(), jpeg.begin() + cut);
      for (Backend b : kBackends)
        expect_error(d.run(b, part, "cut.jpg", {0, 0, 240, 160}), Reason::kTruncated,
                     "cut.jpg", b);
      // read_jpeg_info reads only up to the first scan: fine unless the cut is before it.
      if (cut < entropy_offset(jpeg)) {
        EXPECT_THROW(read_jpeg_info(part, "cut.jpg"), DecodeError);
      } else {
        EXPECT_EQ(read_jpeg_info(part, "cut.jpg").width, 240);
      }
    }
  }
  expect_still_usable(d);
}

TEST(DecodeBadInput, RoiAboveTheCutOfABaselineFileIsDecodedCorrectly) {
  // ROI decoding stops at the window's last row, so a baseline file cut below the window
  // still gives the window's true pixels (a correct decode, not a grey-padded one).
  const auto jpeg = make_jpeg(240, 160, 4);
  const std::vector<uint8_t> part(jpeg.begin(), jpeg.begin() + jpeg.size() * 9 / 10);
  RoiDecoder roi;
  Image whole, top;
  roi.decode(jpeg, "whole.jpg", {10, 0, 100, 40}, 0, 0, whole);
  roi.decode(part, "cut.jpg", {10, 0, 100, 40}, 0, 0, top);
  ASSERT_EQ(top.size_bytes(), whole.size_bytes());
  EXPECT_TRUE(std::equal(whole.ptr(), whole.ptr() + whole.size_bytes(), top.ptr()));
}

TEST(DecodeBadInput, CorruptHeaderFields) {
  Decoders d;
  const auto jpeg = make_jpeg(64, 48, 2);
  const size_t sof = marker_offset(jpeg, 0xC0), dqt = marker_offset(jpeg, 0xDB);
  ASSERT_NE(sof, std::string::npos);
  ASSERT_NE(dqt, std::string::npos);
  {
    auto bad = jpeg;
    bad[sof + 4] = 12;  // sample precision 12: libjpeg-turbo 2.1's 8-bit API cannot decode it
    for (Backend b : kBackends)
      expect_error(d.run(b, bad, "p12.jpg", {0, 0, 64, 48}), Reason::kUnsupported, "p12.jpg", b);
  }
  {
    auto bad = jpeg;
    bad[dqt + 4] = 0x05;  // quantization table index 5 (valid: 0..3)
    for (Backend b : kBackends)
      expect_error(d.run(b, bad, "dqt.jpg", {0, 0, 64, 48}), Reason::kCorrupt, "dqt.jpg", b);
  }
  {
    auto bad = jpeg;
    bad[sof + 9] = 2;  // 2 components, but the segment length says 3
    for (Backend b : kBackends)
      expect_error(d.run(b, bad, "sof.jpg", {0, 0, 64, 48}), Reason::kCorrupt, "sof.jpg", b);
  }
  expect_still_usable(d);
}

TEST(DecodeBadInput, MarkerInsideEntropyDataIsCorrupt) {
  Decoders d;
  const auto jpeg = make_jpeg(160, 120, 3);
  auto bad = jpeg;
  const size_t mid = (entropy_offset(jpeg) + jpeg.size()) / 2;
  bad[mid] = 0xFF;  // an EOI marker in the middle of the scan: libjpeg warns
  bad[mid + 1] = 0xD9;  // "Corrupt JPEG data: premature end of data segment"
  for (Backend b : {Backend::kTurbo, Backend::kTurboScaled, Backend::kRoi})
    expect_error(d.run(b, bad, "mid_eoi.jpg", {0, 0, 160, 120}), Reason::kCorrupt,
                 "mid_eoi.jpg", b);
  // OpenCV's libjpeg error manager only prints this warning (documented limitation of
  // decode_opencv): it may decode, but must not crash or throw anything else.
  const Outcome o = d.run(Backend::kOpenCv, bad, "mid_eoi.jpg", {0, 0, 160, 120});
  if (o.error) {
    EXPECT_NE(o.what.find("mid_eoi.jpg"), std::string::npos);
  }
  expect_still_usable(d);
}

TEST(DecodeBadInput, RandomBytesOverwrittenNeverCrash) {
  Decoders d;
  int errors[4] = {}, decoded[4] = {};
  for (const bool progressive : {false, true}) {
    const auto jpeg = make_jpeg(128, 96, 8, 90, "4:2:0", progressive);
    const size_t data_start = entropy_offset(jpeg);
    std::mt19937_64 rng(progressive ? 99 : 42);
    for (int trial = 0; trial < 60; ++trial) {
      auto bad = jpeg;
      const bool in_header = trial % 2 == 0;
      const size_t lo = in_header ? 2 : data_start, hi = in_header ? data_start : jpeg.size() - 2;
      const int n = 1 + static_cast<int>(rng() % 8);
      for (int k = 0; k < n; ++k) bad[lo + rng() % (hi - lo)] = static_cast<uint8_t>(rng());
      const std::string file = "fuzz_" + std::to_string(trial) + ".jpg";
      for (int bi = 0; bi < 4; ++bi) {
        SCOPED_TRACE(file + (in_header ? " header " : " entropy ") + backend_name(kBackends[bi]));
        const Outcome o = d.run(kBackends[bi], bad, file, {0, 0, 128, 96});
        if (o.error) {
          ++errors[bi];
          EXPECT_NE(o.what.find(file), std::string::npos) << o.what;
          EXPECT_NE(o.what.find(DecodeError::reason_name(*o.error)), std::string::npos);
        } else {
          ++decoded[bi];
          EXPECT_GT(d.out.width, 0);
          EXPECT_GT(d.out.height, 0);
          EXPECT_EQ(d.out.channels, 3);
        }
      }
    }
  }
  for (int bi = 0; bi < 4; ++bi)
    std::printf("%-13s 120 corrupted files: %d DecodeError, %d decoded\n",
                backend_name(kBackends[bi]), errors[bi], decoded[bi]);
  EXPECT_GT(errors[0], 0);  // TurboJPEG notices at least some of them
  // TurboJPEG and the libjpeg ROI path both stop at the first warning: same verdicts.
  EXPECT_EQ(errors[0], errors[1]);
  EXPECT_EQ(errors[0], errors[2]);
  expect_still_usable(d);
}

// A CMYK JPEG (libjpeg API, jpeg_set_colorspace(JCS_CMYK), Adobe marker) from known CMYK
// pixels; the expected RGB is the Adobe (inverted) convention R = C*K/255, etc.
std::vector<uint8_t> make_cmyk_jpeg(const std::vector<uint8_t>& cmyk, int w, int h) {
  testing::LibjpegOptions o;
  o.cmyk = true;
  o.quality = 95;
  return testing::encode_libjpeg(cmyk, w, h, o);
}

// The same pixels as a YCCK JPEG, which is what TurboJPEG makes from TJPF_CMYK.
std::vector<uint8_t> make_ycck_jpeg(const std::vector<uint8_t>& cmyk, int w, int h) {
  tjhandle tj = tjInitCompress();
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  EXPECT_EQ(tjCompress2(tj, cmyk.data(), w, 0, h, TJPF_CMYK, &buffer, &size, TJSAMP_444, 95, 0),
            0);
  std::vector<uint8_t> out(buffer, buffer + size);
  tjFree(buffer);
  tjDestroy(tj);
  return out;
}

TEST(DecodeBadInput, CmykAndYcckConvertToRgb) {
  const int w = 96, h = 64;
  std::vector<uint8_t> cmyk(static_cast<size_t>(w) * h * 4), expected(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &cmyk[(static_cast<size_t>(y) * w + x) * 4];
      p[0] = static_cast<uint8_t>(x * 255 / (w - 1));
      p[1] = static_cast<uint8_t>(y * 255 / (h - 1));
      p[2] = static_cast<uint8_t>(128 + 100 * std::sin(x * 0.1));
      p[3] = static_cast<uint8_t>(255 - (x + y));
      for (int c = 0; c < 3; ++c)
        expected[(static_cast<size_t>(y) * w + x) * 3 + c] =
            static_cast<uint8_t>(std::lround(p[c] * p[3] / 255.0));
    }
  Decoders d;
  for (const bool ycck : {false, true}) {
    SCOPED_TRACE(ycck ? "YCCK" : "CMYK");
    const auto jpeg = ycck ? make_ycck_jpeg(cmyk, w, h) : make_cmyk_jpeg(cmyk, w, h);
    const JpegInfo info = read_jpeg_info(jpeg, "cmyk.jpg");
    EXPECT_EQ(info.components, 4);
    std::vector<uint8_t> turbo;
    for (Backend b : kBackends) {
      SCOPED_TRACE(backend_name(b));
      const Outcome o = d.run(b, jpeg, "cmyk.jpg", {0, 0, w, h});
      ASSERT_FALSE(o.error.has_value()) << o.what;
      ASSERT_EQ(d.out.width, w);
      ASSERT_EQ(d.out.height, h);
      const size_t n = d.out.size_bytes();
      EXPECT_GT(testing::psnr(d.out.ptr(), expected.data(), n), 35.0);
      if (b == Backend::kTurbo) {
        turbo.assign(d.out.ptr(), d.out.ptr() + n);
      } else {
        int max_diff = 0;
        for (size_t i = 0; i < n; ++i)
          max_diff = std::max(max_diff, std::abs(int(turbo[i]) - int(d.out.ptr()[i])));
        // Same libjpeg output and formula, except OpenCV's k - (255 - c) * k / 256.
        EXPECT_LE(max_diff, b == Backend::kOpenCv ? 2 : 0);
      }
    }
  }
  expect_still_usable(d);
}

TEST(DecodeBadInput, GrayscaleAndProgressiveDecodeAlikeInEveryBackend) {
  Decoders d;
  for (const auto& [ss, progressive] :
       {std::pair{"gray", false}, std::pair{"gray", true}, std::pair{"4:2:0", true},
        std::pair{"4:4:4", true}}) {
    SCOPED_TRACE(std::string(ss) + (progressive ? " progressive" : ""));
    const auto jpeg = make_jpeg(123, 77, 6, 90, ss, progressive);
    std::vector<uint8_t> first;
    for (Backend b : kBackends) {
      SCOPED_TRACE(backend_name(b));
      const Outcome o = d.run(b, jpeg, "g.jpg", {0, 0, 123, 77});
      ASSERT_FALSE(o.error.has_value()) << o.what;
      ASSERT_EQ(d.out.width, 123);
      ASSERT_EQ(d.out.height, 77);
      ASSERT_EQ(d.out.channels, 3);
      const uint8_t* p = d.out.ptr();
      if (std::string(ss) == "gray") {
        for (size_t i = 0; i < d.out.size_bytes(); i += 3)
          ASSERT_TRUE(p[i] == p[i + 1] && p[i] == p[i + 2]) << "pixel " << i / 3;
      }
      if (first.empty()) first.assign(p, p + d.out.size_bytes());
      else EXPECT_TRUE(std::equal(first.begin(), first.end(), p));
    }
  }
  expect_still_usable(d);
}

TEST(DecodeBadInput, AboveMaxPixelsIsTooLarge) {
  const auto jpeg = make_jpeg(40, 40);  // 1600 pixels
  Decoders small(DecodeOptions{1000});
  for (Backend b : kBackends)
    expect_error(small.run(b, jpeg, "big.jpg", {0, 0, 40, 40}), Reason::kTooLarge, "big.jpg", b);
  EXPECT_THROW(read_jpeg_info(jpeg, "big.jpg", DecodeOptions{1000}), DecodeError);
  Decoders exact(DecodeOptions{1600});  // the limit itself is accepted
  for (Backend b : kBackends)
    EXPECT_FALSE(exact.run(b, jpeg, "ok.jpg", {0, 0, 40, 40}).error.has_value());
}

TEST(DecodeBadInput, HeaderClaiming60000x60000IsRefusedBeforeAllocating) {
  // SOI, SOF0 (8-bit, 60000 x 60000, 3 components, 4:2:0), SOS, a few data bytes, EOI:
  // decoding it would need 10.8 GB of RGB output.
  const std::vector<uint8_t> jpeg = {
      0xFF, 0xD8,                                                  // SOI
      0xFF, 0xC0, 0x00, 0x11, 0x08, 0xEA, 0x60, 0xEA, 0x60, 0x03,  // SOF0 60000 x 60000
      0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01,        //   Y 2x2, Cb, Cr 1x1
      0xFF, 0xDA, 0x00, 0x0C, 0x03, 0x01, 0x00, 0x02, 0x11, 0x03, 0x11, 0x00, 0x3F, 0x00,
      0x12, 0x34, 0x56, 0x78,  // entropy-coded data
      0xFF, 0xD9};             // EOI
  const JpegInfo info = read_jpeg_info(jpeg, "huge.jpg", DecodeOptions{4'000'000'000LL});
  EXPECT_EQ(info.width, 60000);
  EXPECT_EQ(info.height, 60000);
  for (Backend b : kBackends) {
    Decoders d;  // fresh, so an allocation would show in out's capacity
    expect_error(d.run(b, jpeg, "huge.jpg", {0, 0, 60000, 60000}), Reason::kTooLarge,
                 "huge.jpg", b);
    EXPECT_EQ(d.out.data.capacity(), 0u) << backend_name(b);
  }
}

}  // namespace
}  // namespace pipebench
