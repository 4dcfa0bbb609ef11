// Images that are not JPEGs (issue 14 item 4): chosen by content, never by name, and decoded
// by every backend through OpenCV imgcodecs. References, independent of the decoders: the
// pixels the lossless files were encoded from (OpenCV's encoders), and cv::imdecode itself
// for what IMREAD_COLOR does to gray, alpha and 16-bit files. Also: the header sizes every
// format declares, max_pixels refused before allocating, truncation and corruption named,
// GIF and unknown bytes refused, and an ROI decode of a PNG equal to full decode + crop.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "datasets/synthetic.h"
#include "tests/fault_decoders.h"
#include "tests/test_data.h"
#include "transforms/image_format.h"
#include "transforms/jpeg_decode.h"
#include "transforms/pipeline.h"
#include "transforms/rng.h"
#include "transforms/spec.h"

namespace pipebench {
namespace {

using Reason = DecodeError::Reason;

// The four backends of the decode fault tests (tests/fault_decoders.h).
using fault::Backend;
using fault::backend_name;
using fault::kBackends;

struct Decoders {
  explicit Decoders(DecodeOptions o = {}) : options(o), turbo(o), roi(o) {}
  DecodeOptions options;
  TurboDecoder turbo;
  RoiDecoder roi;

  // The whole image (ROI: the whole window; scaled: asked for half size, which a non-JPEG
  // cannot give, so it must come back full size at 1/1).
  Image decode(Backend b, const std::vector<uint8_t>& bytes, int w, int h,
               const std::string& file = "img.jpg") {
    Image out;
    ScalingFactor f;
    switch (b) {
      case Backend::kTurbo: turbo.decode(bytes, file, out); break;
      case Backend::kTurboScaled: f = turbo.decode_scaled(bytes, file, w / 2, h / 2, out); break;
      case Backend::kRoi: f = roi.decode(bytes, file, {0, 0, w, h}, w / 2, h / 2, out); break;
      case Backend::kOpenCv: decode_opencv(bytes, file, out, options); break;
    }
    EXPECT_EQ(f.num, 1);
    EXPECT_EQ(f.denom, 1);
    return out;
  }
};

// Photo-like RGB pixels, and the same as a BGR Mat for OpenCV's encoders.
std::vector<uint8_t> pixels(int w, int h, uint64_t seed) { return render_synthetic_rgb(w, h, seed); }
cv::Mat bgr_of(std::vector<uint8_t>& rgb, int w, int h) {
  cv::Mat bgr;
  cv::cvtColor(cv::Mat(h, w, CV_8UC3, rgb.data()), bgr, cv::COLOR_RGB2BGR);
  return bgr;
}
std::vector<uint8_t> encode(const std::string& ext, const cv::Mat& m,
                            const std::vector<int>& params = {}) {
  std::vector<uint8_t> out;
  EXPECT_TRUE(cv::imencode(ext, m, out, params)) << ext;
  return out;
}

// cv::imdecode(IMREAD_COLOR) -> RGB: what the slower path must give.
std::vector<uint8_t> opencv_rgb(const std::vector<uint8_t>& bytes) {
  cv::Mat bgr = cv::imdecode(bytes, cv::IMREAD_COLOR | cv::IMREAD_IGNORE_ORIENTATION), rgb;
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  return std::vector<uint8_t>(rgb.data, rgb.data + rgb.total() * 3);
}

bool same(const Image& img, const std::vector<uint8_t>& ref) {
  return img.size_bytes() == ref.size() && std::equal(ref.begin(), ref.end(), img.ptr());
}

TEST(DecodeFormats, SniffByContent) {
  auto rgb = pixels(8, 6, 1);
  const cv::Mat m = bgr_of(rgb, 8, 6);
  EXPECT_EQ(sniff_format(testing::make_jpeg(8, 6)), ImageFormat::kJpeg);
  EXPECT_EQ(sniff_format(encode(".png", m)), ImageFormat::kPng);
  EXPECT_EQ(sniff_format(encode(".webp", m)), ImageFormat::kWebp);
  EXPECT_EQ(sniff_format(encode(".bmp", m)), ImageFormat::kBmp);
  EXPECT_EQ(sniff_format(encode(".ppm", m)), ImageFormat::kPnm);
  EXPECT_EQ(sniff_format(encode(".tiff", m)), ImageFormat::kTiff);
  const std::string gif = "GIF89a\x01\x00\x01\x00";
  EXPECT_EQ(sniff_format(std::vector<uint8_t>(gif.begin(), gif.end())), ImageFormat::kGif);
  EXPECT_EQ(sniff_format(std::vector<uint8_t>{0x00, 0x05, 0x16, 0x07}), ImageFormat::kUnknown);
  EXPECT_EQ(sniff_format(std::vector<uint8_t>{}), ImageFormat::kUnknown);
  EXPECT_EQ(sniff_format(std::vector<uint8_t>{'P', '7', '\n'}), ImageFormat::kUnknown);  // PAM
  EXPECT_STREQ(format_name(ImageFormat::kPnm), "pnm");
}

// Lossless formats: every backend gives back exactly the encoded pixels, whatever the file
// is called (the file name is only a label in messages).
TEST(DecodeFormats, LosslessFormatsGiveTheEncodedPixelsInEveryBackend) {
  const int w = 97, h = 61;
  auto rgb = pixels(w, h, 3);
  const cv::Mat bgr = bgr_of(rgb, w, h);
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> files = {
      {"png", encode(".png", bgr)},
      {"webp", encode(".webp", bgr, {cv::IMWRITE_WEBP_QUALITY, 101})},  // > 100: lossless
      {"bmp", encode(".bmp", bgr)},
      {"ppm", encode(".ppm", bgr)},
      {"tiff", encode(".tiff", bgr)}};
  Decoders d;
  for (const auto& [name, bytes] : files) {
    const ImageInfo info = read_image_info(bytes, name);
    EXPECT_EQ(info.width, w) << name;
    EXPECT_EQ(info.height, h) << name;
    for (Backend b : kBackends) {
      SCOPED_TRACE(name + " " + backend_name(b));
      const Image out = d.decode(b, bytes, w, h, "named_as.jpg");
      ASSERT_EQ(out.width, w);
      ASSERT_EQ(out.height, h);
      ASSERT_EQ(out.channels, 3);
      EXPECT_TRUE(same(out, rgb));
    }
  }
}

// A PNG named .jpg (as in ImageNet) and the same PNG named .png decode to the same pixels
// as cv::imdecode, in every backend.
TEST(DecodeFormats, PngNamedJpgDecodesAsPng) {
  const int w = 50, h = 40;
  auto rgb = pixels(w, h, 4);
  const auto png = encode(".png", bgr_of(rgb, w, h));
  const auto reference = opencv_rgb(png);
  Decoders d;
  for (Backend b : kBackends) {
    SCOPED_TRACE(backend_name(b));
    EXPECT_TRUE(same(d.decode(b, png, w, h, "n01440764/x.JPEG"), reference));
    EXPECT_TRUE(same(d.decode(b, png, w, h, "x.png"), reference));
  }
  // read_jpeg_info is JPEG-only and says what the bytes are.
  try {
    read_jpeg_info(png, "x.JPEG");
    FAIL() << "no error";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.reason(), Reason::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("png image"), std::string::npos) << e.what();
  }
}

// What IMREAD_COLOR does (gray expanded, alpha dropped, 16 bits to 8) is what we give.
TEST(DecodeFormats, GrayAlphaAnd16BitFollowImdecode) {
  const int w = 33, h = 21;
  auto rgb = pixels(w, h, 5);
  const cv::Mat bgr = bgr_of(rgb, w, h);
  cv::Mat gray, bgra, deep;
  cv::cvtColor(bgr, gray, cv::COLOR_BGR2GRAY);
  cv::cvtColor(bgr, bgra, cv::COLOR_BGR2BGRA);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) bgra.at<cv::Vec4b>(y, x)[3] = static_cast<uint8_t>(x * 7);
  bgr.convertTo(deep, CV_16UC3, 257.0);
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> files = {
      {"gray png", encode(".png", gray)},
      {"pgm", encode(".pgm", gray)},
      {"rgba png", encode(".png", bgra)},
      {"16-bit png", encode(".png", deep)}};
  Decoders d;
  for (const auto& [name, bytes] : files) {
    const auto reference = opencv_rgb(bytes);
    for (Backend b : kBackends) {
      SCOPED_TRACE(name + " " + backend_name(b));
      EXPECT_TRUE(same(d.decode(b, bytes, w, h), reference));
    }
  }
  // And the reference is what we expect of it: gray replicated, alpha dropped, 16 -> 8.
  const auto g = opencv_rgb(files[0].second);
  EXPECT_EQ(g[0], gray.at<uint8_t>(0, 0));
  EXPECT_EQ(g[1], g[0]);
  EXPECT_TRUE(std::equal(rgb.begin(), rgb.end(), opencv_rgb(files[2].second).begin()));
  EXPECT_TRUE(std::equal(rgb.begin(), rgb.end(), opencv_rgb(files[3].second).begin()));
}

// A pipeline whose decode is roi (or auto) runs on a PNG named .jpg: the window is cut
// from the whole image, so the sample equals the same spec decoded in full.
TEST(DecodeFormats, RoiPipelineOnAPngEqualsTheFullDecodePipeline) {
  const int w = 160, h = 120;
  auto rgb = pixels(w, h, 9);
  const auto png = encode(".png", bgr_of(rgb, w, h));
  const auto roi = Pipeline::build(parse_pipeline_spec(
      "{decode: {mode: roi}, transforms: [{random_resized_crop: {size: 64}}, normalize]}", "t"));
  const auto full = Pipeline::build(parse_pipeline_spec(
      "{decode: {mode: full}, transforms: [{random_resized_crop: {size: 64}}, normalize]}", "t"));
  ASSERT_EQ(roi->decode_plan(), "roi");
  PipelineWorkspace ws_roi(*roi), ws_full(*full);
  std::vector<float> a(roi->output_floats()), b(full->output_floats());
  for (uint64_t i = 0; i < 5; ++i) {
    Rng r1 = Rng::for_sample(7, 0, i), r2 = Rng::for_sample(7, 0, i);
    roi->run(png, "n01440764/x.JPEG", r1, ws_roi, a.data());
    full->run(png, "n01440764/x.JPEG", r2, ws_full, b.data());
    for (size_t k = 0; k < a.size(); ++k) ASSERT_NEAR(a[k], b[k], 1e-5) << "sample " << i << " value " << k;
  }
}

TEST(DecodeFormats, RoiOfAPngIsFullDecodePlusCrop) {
  const int w = 120, h = 90;
  auto rgb = pixels(w, h, 6);
  const auto png = encode(".png", bgr_of(rgb, w, h));
  RoiDecoder roi;
  for (const CropWindow win : {CropWindow{0, 0, w, h}, CropWindow{10, 7, 50, 31},
                               CropWindow{w - 1, h - 1, 1, 1}, CropWindow{64, 0, 56, 90}}) {
    SCOPED_TRACE(std::to_string(win.x) + "," + std::to_string(win.y) + " " +
                 std::to_string(win.width) + "x" + std::to_string(win.height));
    Image out;
    // Asking for DCT scaling changes nothing for a PNG: 1/1, the window as stored.
    const ScalingFactor f = roi.decode(png, "p.png", win, win.width / 4, win.height / 4, out);
    EXPECT_EQ(f.num, f.denom);
    ASSERT_EQ(out.width, win.width);
    ASSERT_EQ(out.height, win.height);
    for (int y = 0; y < win.height; ++y)
      ASSERT_TRUE(std::equal(out.row(y), out.row(y) + win.width * 3,
                             rgb.begin() + ((win.y + y) * w + win.x) * 3))
          << "row " << y;
  }
  Image out;
  try {
    roi.decode(png, "p.png", {100, 0, 30, 10}, 0, 0, out);
    FAIL() << "no error";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.reason(), Reason::kBadArgument);
  }
}

void expect_reason(Decoders& d, const std::vector<uint8_t>& bytes, Reason reason,
                   const std::string& needle, int w = 8, int h = 8) {
  for (Backend b : kBackends) {
    SCOPED_TRACE(backend_name(b));
    try {
      d.decode(b, bytes, w, h, "bad.jpg");
      ADD_FAILURE() << "decoded without error";
    } catch (const DecodeError& e) {
      EXPECT_EQ(e.reason(), reason) << e.what();
      EXPECT_EQ(e.file(), "bad.jpg");
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

TEST(DecodeFormats, TruncatedCorruptAndUnsupportedAreNamed) {
  const int w = 64, h = 48;
  auto rgb = pixels(w, h, 7);
  const cv::Mat bgr = bgr_of(rgb, w, h);
  const auto png = encode(".png", bgr);
  Decoders d;
  for (const size_t cut : {size_t{8}, size_t{20}, png.size() / 2, png.size() - 12}) {
    SCOPED_TRACE("png cut at " + std::to_string(cut));
    expect_reason(d, std::vector<uint8_t>(png.begin(), png.begin() + cut), Reason::kTruncated,
                  "truncated image", w, h);
  }
  auto corrupt = png;
  for (size_t i = 60; i < 90; ++i) corrupt[i] ^= 0x5A;  // inside IDAT: CRC and zlib fail
  expect_reason(d, corrupt, Reason::kCorrupt, "cv::imdecode could not decode this png", w, h);
  const auto webp = encode(".webp", bgr);
  expect_reason(d, std::vector<uint8_t>(webp.begin(), webp.end() - 10), Reason::kTruncated,
                "RIFF", w, h);
  const std::string gif = "GIF89a\x40\x00\x30\x00\xf0\x00\x00";
  expect_reason(d, std::vector<uint8_t>(gif.begin(), gif.end()), Reason::kUnsupported, "GIF");
  expect_reason(d, {0x00, 0x05, 0x16, 0x07, 0x00, 0x02, 0x00, 0x00}, Reason::kNotImage,
                "AppleDouble");
  expect_reason(d, {'h', 'e', 'l', 'l', 'o'}, Reason::kNotImage, "starts with 0x68");
  expect_reason(d, {}, Reason::kEmpty, "0 bytes");
  // Afterwards the decoders still decode a JPEG and a PNG.
  EXPECT_TRUE(same(d.decode(Backend::kRoi, png, w, h), rgb));
  Image ok;
  EXPECT_NO_THROW(d.turbo.decode(testing::make_jpeg(32, 16), "ok.jpg", ok));
}

// cv::imdecode tries DICOM (GDCM, "DICM" at byte 128) when the named format's own check
// fails; fuzz_decode_opencv found a WebP-signed file that GDCM read as a 136 MiB element.
// Any file with both signatures is refused, in every backend, before OpenCV sees it; the
// same file without the DICOM magic still decodes.
TEST(DecodeFormats, ADicomSignatureBehindAnotherFormatIsRefused) {
  const int w = 64, h = 48;
  auto rgb = pixels(w, h, 11);
  const cv::Mat bgr = bgr_of(rgb, w, h);
  Decoders d;
  for (const std::string ext : {".webp", ".png", ".bmp", ".tiff"}) {
    SCOPED_TRACE(ext);
    const auto clean = encode(ext, bgr);
    ASSERT_GT(clean.size(), 132u);
    auto both = clean;
    std::memcpy(both.data() + 128, "DICM", 4);
    expect_reason(d, both, Reason::kUnsupported, "DICOM's ('DICM' at byte 128)", w, h);
    EXPECT_EQ(d.decode(Backend::kOpenCv, clean, w, h).width, w);
  }
}

// Headers declaring more than max_pixels are refused before any pixel buffer exists, for
// each format's own size fields.
TEST(DecodeFormats, AboveMaxPixelsIsRefusedBeforeAllocating) {
  auto rgb = pixels(40, 40, 8);
  const cv::Mat bgr = bgr_of(rgb, 40, 40);  // 1600 pixels
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> files = {
      {"png", encode(".png", bgr)},   {"webp", encode(".webp", bgr)},
      {"webp lossless", encode(".webp", bgr, {cv::IMWRITE_WEBP_QUALITY, 101})},
      {"bmp", encode(".bmp", bgr)},   {"ppm", encode(".ppm", bgr)},
      {"tiff", encode(".tiff", bgr)}};
  for (const auto& [name, bytes] : files) {
    SCOPED_TRACE(name);
    EXPECT_EQ(read_image_info(bytes, name).width, 40);
    Decoders small(DecodeOptions{1599});
    for (Backend b : kBackends) {
      SCOPED_TRACE(backend_name(b));
      Image out;
      try {
        switch (b) {
          case Backend::kTurbo: small.turbo.decode(bytes, name, out); break;
          case Backend::kTurboScaled: small.turbo.decode_scaled(bytes, name, 20, 20, out); break;
          case Backend::kRoi: small.roi.decode(bytes, name, {0, 0, 40, 40}, 0, 0, out); break;
          case Backend::kOpenCv: decode_opencv(bytes, name, out, small.options); break;
        }
        ADD_FAILURE() << "decoded";
      } catch (const DecodeError& e) {
        EXPECT_EQ(e.reason(), Reason::kTooLarge) << e.what();
      }
      EXPECT_EQ(out.data.capacity(), 0u);
    }
    Decoders exact(DecodeOptions{1600});
    EXPECT_NO_THROW(exact.decode(Backend::kTurbo, bytes, 40, 40));
  }
  // A PNG whose IHDR declares 60000 x 60000 (10.8 GB of RGB) with nothing behind it.
  auto huge = encode(".png", bgr);
  for (int at : {16, 20}) {
    huge[at] = 0x00, huge[at + 1] = 0x00, huge[at + 2] = 0xEA, huge[at + 3] = 0x60;
  }
  const ImageInfo info = read_image_info(huge, "huge.png", DecodeOptions{4'000'000'000LL});
  EXPECT_EQ(info.width, 60000);
  EXPECT_EQ(info.height, 60000);
  Decoders d;
  Image out;
  try {
    d.turbo.decode(huge, "huge.png", out);
    FAIL() << "decoded";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.reason(), Reason::kTooLarge) << e.what();
    EXPECT_NE(std::string(e.what()).find("60000 x 60000"), std::string::npos) << e.what();
  }
  EXPECT_EQ(out.data.capacity(), 0u);
}

// Header sizes of hand-written headers (the fields each specification defines).
TEST(DecodeFormats, HeaderSizesFromTheSpecificationFields) {
  auto info = [](const std::string& s) {
    return read_image_info(std::vector<uint8_t>(s.begin(), s.end()), "h", DecodeOptions{1LL << 40});
  };
  // PNM with a comment and mixed whitespace.
  ImageInfo i = info("P6\n# made by hand\n 1234\t\n567 255\n");
  EXPECT_EQ(i.format, ImageFormat::kPnm);
  EXPECT_EQ(i.width, 1234);
  EXPECT_EQ(i.height, 567);
  EXPECT_THROW(info("P6\n12x 34"), DecodeError);
  EXPECT_THROW(info("P5 99999999999 2"), DecodeError);
  // '#' right after a number: a comment to Netpbm, the next number to OpenCV 4.6 (which
  // would allocate 3821 x 5880 here, found by fuzz_decode_opencv): refused. A comment after
  // whitespace is read as Netpbm and OpenCV both read it, and the file decodes at that size.
  try {
    info("P5 3821#5880P4 212#1\n4V");
    ADD_FAILURE() << "accepted";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.reason(), Reason::kUnsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("'#' right after a number (byte 7)"), std::string::npos) << e.what();
  }
  std::string pgm = "P5 4 #c 99\n2 255\n";
  pgm.append(8, '\x80');
  EXPECT_EQ(info(pgm).width, 4);
  EXPECT_EQ(info(pgm).height, 2);
  Image gray;
  decode_opencv(std::vector<uint8_t>(pgm.begin(), pgm.end()), "c.pgm", gray);
  EXPECT_EQ(gray.width, 4);
  EXPECT_EQ(gray.height, 2);
  // BMP, BITMAPINFOHEADER with a negative (top-down) height.
  std::string bmp(54, '\0');
  bmp[0] = 'B', bmp[1] = 'M', bmp[14] = 40;
  bmp[18] = static_cast<char>(0x10), bmp[19] = 0x27;  // 10000
  bmp[22] = static_cast<char>(0x9C), bmp[23] = static_cast<char>(0xFF);
  bmp[24] = static_cast<char>(0xFF), bmp[25] = static_cast<char>(0xFF);  // -100
  i = info(bmp);
  EXPECT_EQ(i.width, 10000);
  EXPECT_EQ(i.height, 100);
  // Big-endian TIFF: IFD0 at 8 with ImageWidth (SHORT 300) and ImageLength (LONG 70000).
  const std::string tiff = std::string("MM\0*\0\0\0\x08\0\x02", 10) +
                           std::string("\x01\x00\x00\x03\x00\x00\x00\x01\x01\x2c\x00\x00", 12) +
                           std::string("\x01\x01\x00\x04\x00\x00\x00\x01\x00\x01\x11\x70", 12);
  i = info(tiff);
  EXPECT_EQ(i.width, 300);
  EXPECT_EQ(i.height, 70000);
  EXPECT_THROW(info(tiff.substr(0, 20)), DecodeError);  // IFD cut short
}

// A little-endian TIFF IFD0 at offset 8 with these (tag, SHORT value) entries.
// A little-endian TIFF header and IFD0 of (tag, value) entries: SHORT values, LONG above
// 65535.
std::vector<uint8_t> tiff_with(const std::vector<std::pair<uint16_t, uint32_t>>& entries) {
  std::vector<uint8_t> b = {'I', 'I', 42, 0, 8, 0, 0, 0, static_cast<uint8_t>(entries.size()), 0};
  for (const auto& [tag, value] : entries) {
    const uint8_t type = value > 0xFFFF ? 4 : 3;
    const uint8_t e[12] = {static_cast<uint8_t>(tag), static_cast<uint8_t>(tag >> 8), type, 0, 1, 0, 0, 0,
                           static_cast<uint8_t>(value), static_cast<uint8_t>(value >> 8),
                           static_cast<uint8_t>(value >> 16), static_cast<uint8_t>(value >> 24)};
    b.insert(b.end(), e, e + 12);
  }
  return b;
}

// OpenCV 4.6 sizes its TIFF buffer by one strip (width x RowsPerStrip, not bounded by the
// height) or one tile, from the tags libtiff kept: a 792-byte file (found by
// fuzz_decode_opencv) declared ImageWidth twice (16400, then 621), 12 rows and 4108 rows
// per strip, and OpenCV allocated 16400 x 4108 x 4 bytes. Both are refused, named.
TEST(DecodeFormats, TiffStripsAndDuplicateSizesAreCheckedBeforeOpenCv) {
  const DecodeOptions limit{4'000'000};
  auto reason_of = [&](const std::vector<uint8_t>& b) {
    try {
      read_image_info(b, "t.tiff", limit);
    } catch (const DecodeError& e) {
      return std::make_pair(e.reason(), std::string(e.what()));
    }
    return std::make_pair(Reason::kBadArgument, std::string("accepted"));
  };
  auto [why, text] = reason_of(tiff_with({{256, 16400}, {257, 12}, {278, 4108}, {256, 621}}));
  EXPECT_EQ(why, Reason::kCorrupt) << text;
  EXPECT_NE(text.find("two ImageWidth entries"), std::string::npos) << text;
  std::tie(why, text) = reason_of(tiff_with({{256, 16400}, {257, 12}, {278, 4108}}));
  EXPECT_EQ(why, Reason::kTooLarge) << text;
  EXPECT_NE(text.find("67371200 pixels"), std::string::npos) << text;  // 16400 x 4108
  std::tie(why, text) = reason_of(tiff_with({{256, 100}, {257, 12}, {322, 4096}, {323, 4096}}));
  EXPECT_EQ(why, Reason::kTooLarge) << text;  // a 4096 x 4096 tile
  // A tile (or strip) of two LONGs near 2^32: the product is above int64's range (UBSan's
  // signed overflow, found by fuzz_decode_opencv); it saturates and is refused.
  std::tie(why, text) = reason_of(tiff_with({{256, 100}, {257, 12}, {322, 0xFFFFFFFF}, {323, 0xFF00FF03}}));
  EXPECT_EQ(why, Reason::kTooLarge) << text;
  std::tie(why, text) = reason_of(tiff_with({{256, 100}, {257, 12}, {278, 0xFFFFFFFE}}));
  EXPECT_EQ(why, Reason::kTooLarge) << text;
  // What real files hold: a strip inside the image, the whole image (RowsPerStrip 0 or
  // absent: one strip), a strip a little taller than a short image, a tile larger than it.
  for (const auto& ok : {tiff_with({{256, 2000}, {257, 1500}, {278, 8}}),
                         tiff_with({{256, 2000}, {257, 1500}}),
                         tiff_with({{256, 2000}, {257, 1500}, {278, 0}}),
                         tiff_with({{256, 500}, {257, 5}, {278, 16}}),
                         tiff_with({{256, 100}, {257, 100}, {322, 256}, {323, 256}})}) {
    EXPECT_EQ(reason_of(ok).second, "accepted");
  }
}

}  // namespace
}  // namespace pipebench
