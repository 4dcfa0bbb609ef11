// nvJPEG as a decode candidate (transforms/nvjpeg_decode.h): loading it says why it cannot be
// used (no library, a library without its entry points, no device) and decode() then throws
// CudaUnavailable; on a device with nvJPEG (CudaNvjpeg.*, skipped otherwise with the reason)
// its RGB output against TurboJPEG's on the same files (IDCT and chroma upsampling differ
// between the two, so a bound on the mean and largest difference, not bits) and a corrupt
// file rejected as a DecodeError naming it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "device/cuda.h"
#include "tests/test_data.h"
#include "transforms/decode_error.h"
#include "transforms/jpeg_decode.h"
#include "transforms/nvjpeg_decode.h"

namespace pipebench {
namespace {

TEST(NvjpegLoad, TriesCuda13First) {
  ASSERT_FALSE(nvjpeg_library_names().empty());
  EXPECT_EQ(nvjpeg_library_names().front(), "libnvjpeg.so.13");
}

TEST(NvjpegLoad, AMissingLibrarySaysWhyAndDecodeThrows) {
  NvjpegDecoder d("libpipebench-no-such-nvjpeg.so.13");
  EXPECT_FALSE(d.available());
  EXPECT_NE(d.note().find("nvJPEG not found"), std::string::npos) << d.note();
  EXPECT_NE(d.note().find("libpipebench-no-such-nvjpeg.so.13"), std::string::npos) << d.note();
  EXPECT_EQ(d.note().find('\n'), std::string::npos) << "one line";
  DeviceBuffer out;
  const std::vector<uint8_t> jpeg = testing::make_jpeg(16, 16);
  EXPECT_THROW(d.decode(jpeg, "x.jpg", out, nullptr), CudaUnavailable);
}

TEST(NvjpegLoad, ALibraryWithoutItsEntryPointsIsNamed) {
  NvjpegDecoder d("libm.so.6");  // loads, but is no nvJPEG
  EXPECT_FALSE(d.available());
  EXPECT_NE(d.note().find("libm.so.6 lacks nvjpegCreateSimple"), std::string::npos) << d.note();
}

TEST(NvjpegLoad, TheDefaultSaysWhatItFound) {
  NvjpegDecoder d;
  if (d.available()) {
    EXPECT_EQ(d.note().rfind("nvJPEG", 0), 0u) << d.note();
  } else {
    EXPECT_FALSE(d.note().empty());
    if (!cuda_available()) {
      EXPECT_EQ(d.note().find("nvjpegCreateSimple failed"), std::string::npos) << d.note();
    }
  }
}

// --- on a device with nvJPEG -------------------------------------------------------------------

std::string no_nvjpeg(const NvjpegDecoder& d) {
  if (!cuda_available()) return "no CUDA device: " + cuda_info().reason;
  return d.available() ? "" : d.note();
}

TEST(CudaNvjpeg, DecodesLikeTurboJpeg) {
  NvjpegDecoder d;
  if (const std::string why = no_nvjpeg(d); !why.empty()) GTEST_SKIP() << why;
  TurboDecoder turbo;
  CudaStream stream;
  DeviceBuffer out;
  for (const auto& [w, h, seed] : {std::tuple{500, 375, 1}, std::tuple{224, 224, 2}, std::tuple{33, 17, 3}}) {
    const std::vector<uint8_t> jpeg = testing::make_jpeg(w, h, seed);
    Image ref;
    turbo.decode(jpeg, "t.jpg", ref);
    const NvjpegDecoder::Size s = d.decode(jpeg, "t.jpg", out, stream.handle());
    stream.synchronize();
    ASSERT_EQ(s.width, w);
    ASSERT_EQ(s.height, h);
    std::vector<uint8_t> got(static_cast<size_t>(w) * h * 3);
    copy_to_host(got.data(), out.data(), got.size(), nullptr);
    double sum = 0;
    int worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const int diff = std::abs(int(got[i]) - int(ref.data[i]));
      sum += diff;
      worst = std::max(worst, diff);
    }
    EXPECT_LE(sum / got.size(), 1.5) << w << " x " << h;
    EXPECT_LE(worst, 40) << w << " x " << h;
  }
}

TEST(CudaNvjpeg, RejectsACorruptFileNamingIt) {
  NvjpegDecoder d;
  if (const std::string why = no_nvjpeg(d); !why.empty()) GTEST_SKIP() << why;
  CudaStream stream;
  DeviceBuffer out;
  std::vector<uint8_t> bad = {0xFF, 0xD8, 0xFF, 0x00, 0x12, 0x34};
  try {
    d.decode(bad, "broken.jpg", out, stream.handle());
    stream.synchronize();
    FAIL() << "a 6-byte JPEG decoded";
  } catch (const DecodeError& e) {
    EXPECT_EQ(e.file(), "broken.jpg");
  }
  EXPECT_THROW(d.decode({}, "empty.jpg", out, stream.handle()), DecodeError);
}

}  // namespace
}  // namespace pipebench
