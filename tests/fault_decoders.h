// The decode fault tests' harness (decode_bad_input_test.cpp, fault_jpeg_test.cpp): the
// four backends (TurboJPEG full, TurboJPEG DCT scaled, libjpeg ROI, OpenCV) behind one
// call, the expected DecodeError (its reason, and a message naming the file and the
// reason), JPEG marker offsets, and the check that decoders reused across bad inputs still
// decode a valid JPEG like fresh ones.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/test_data.h"
#include "transforms/jpeg_decode.h"

namespace pipebench::fault {

using Reason = DecodeError::Reason;

enum class Backend { kTurbo, kTurboScaled, kRoi, kOpenCv };
constexpr Backend kBackends[] = {Backend::kTurbo, Backend::kTurboScaled, Backend::kRoi,
                                 Backend::kOpenCv};

inline const char* backend_name(Backend b) {
  switch (b) {
    case Backend::kTurbo: return "turbo";
    case Backend::kTurboScaled: return "turbo_scaled";
    case Backend::kRoi: return "roi";
    case Backend::kOpenCv: return "opencv";
  }
  return "?";
}

struct Outcome {
  std::optional<Reason> error;  // empty: decoded
  std::string what;
};

// One set of decoders, reused for every input of a test.
struct Decoders {
  explicit Decoders(DecodeOptions o = {}) : options(o), turbo(o), roi(o) {}
  DecodeOptions options;
  TurboDecoder turbo;
  RoiDecoder roi;
  Image out;

  // Full-size decode with each backend (scaled: a target equal to the full size, i.e. 1/1,
  // or half the size when `half`; ROI: the window `window`, default the whole image).
  Outcome run(Backend b, const std::vector<uint8_t>& jpeg, const std::string& file,
              CropWindow window, bool half = false) {
    try {
      switch (b) {
        case Backend::kTurbo: turbo.decode(jpeg, file, out); break;
        case Backend::kTurboScaled:
          turbo.decode_scaled(jpeg, file, half ? window.width / 2 : window.width,
                              half ? window.height / 2 : window.height, out);
          break;
        case Backend::kRoi: roi.decode(jpeg, file, window, 0, 0, out); break;
        case Backend::kOpenCv: decode_opencv(jpeg, file, out, options); break;
      }
      return {};
    } catch (const DecodeError& e) {
      EXPECT_EQ(e.file(), file);
      return {e.reason(), e.what()};
    }
  }
};

// The error must be `reason`, and what() must name the file and the reason.
inline void expect_error(const Outcome& o, Reason reason, const std::string& file, Backend b) {
  SCOPED_TRACE(backend_name(b));
  ASSERT_TRUE(o.error.has_value()) << "decoded without error";
  EXPECT_EQ(*o.error, reason) << o.what;
  EXPECT_NE(o.what.find(file), std::string::npos) << o.what;
  EXPECT_NE(o.what.find(DecodeError::reason_name(reason)), std::string::npos) << o.what;
}

// Offsets of the first marker `code` (e.g. 0xC0 SOF0) and of the first scan's entropy data,
// walking marker segments from SOI.
inline size_t marker_offset(const std::vector<uint8_t>& j, uint8_t code) {
  size_t pos = 2;
  while (pos + 4 <= j.size() && j[pos] == 0xFF) {
    if (j[pos + 1] == code) return pos;
    if (j[pos + 1] == 0xDA) break;
    pos += 2 + ((j[pos + 2] << 8) | j[pos + 3]);
  }
  return std::string::npos;
}
inline size_t entropy_offset(const std::vector<uint8_t>& j) {
  const size_t sos = marker_offset(j, 0xDA);
  return sos + 2 + ((j[sos + 2] << 8) | j[sos + 3]);
}

// After the bad inputs, each decoder must still decode a valid JPEG like a fresh one.
inline void expect_still_usable(Decoders& d) {
  const auto jpeg = testing::make_jpeg(96, 64, 21);
  Image fresh;
  TurboDecoder().decode(jpeg, "fresh.jpg", fresh);
  for (Backend b : kBackends) {
    SCOPED_TRACE(backend_name(b));
    const Outcome o = d.run(b, jpeg, "valid.jpg", {0, 0, 96, 64});
    ASSERT_FALSE(o.error.has_value()) << o.what;
    ASSERT_EQ(d.out.width, 96);
    ASSERT_EQ(d.out.height, 64);
    EXPECT_TRUE(std::equal(fresh.ptr(), fresh.ptr() + fresh.size_bytes(), d.out.ptr()));
  }
}

}  // namespace pipebench::fault
