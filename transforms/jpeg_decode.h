// Image decoding to RGB uint8 HWC (see image.h), four backends on the same bytes. They are
// JPEG decoders; an image that is not a JPEG by content (PNG, WebP, BMP, PNM, TIFF, see
// image_format.h; whatever its file name says) is decoded by every backend through OpenCV
// imgcodecs instead (imgcodecs_decode.h): a documented slower path, whole images only (no
// DCT scaling, no partial decode; the ROI decoder cuts the window from the whole image).
//
//   TurboDecoder::decode          TurboJPEG (tjDecompress2), full resolution.
//   TurboDecoder::decode_scaled   TurboJPEG with DCT scaling: the smallest of the scaling
//                                 factors tjGetScalingFactors() offers (libjpeg-turbo 2.1:
//                                 n/8, n = 1..16) whose output is at least min_width x
//                                 min_height. Decoding at 1/2, 1/4 or 1/8 skips most of
//                                 the IDCT and upsampling work.
//   RoiDecoder::decode            region-of-interest (ROI) decode through the libjpeg API:
//                                 jpeg_crop_scanline() narrows the columns (to whole iMCUs,
//                                 so the window is widened and we crop the rest in memory),
//                                 jpeg_skip_scanlines() skips rows above the window, and
//                                 decoding stops at the window's last row. Optionally DCT
//                                 scaled like decode_scaled. See libjpeg-turbo's
//                                 libjpeg.txt, "Partial image decompression".
//   decode_opencv                 cv::imdecode(IMREAD_COLOR), converted BGR -> RGB.
//
// Inputs and outputs: `jpeg` is the whole file's bytes; `file` names the sample in error
// messages (a path, or any label). Grayscale, CMYK/YCCK and progressive JPEGs are decoded
// and converted to 3-channel RGB (gray replicated by libjpeg; CMYK/YCCK decoded to CMYK by
// libjpeg, then converted as Adobe inverted CMYK: R = C*K/255, G = M*K/255, B = Y*K/255).
// Decoder settings are libjpeg-turbo's and tjbench's defaults: accurate integer IDCT
// (JDCT_ISLOW) and smooth ("fancy") chroma upsampling, so all four backends give the same
// pixels for a full decode (OpenCV and TurboJPEG agree exactly; decode_test.cpp).
// Errors: every function throws DecodeError (decode_error.h) naming the file and the
// reason: empty input, not an image, truncated or corrupt data, an image larger than
// DecodeOptions::max_pixels, or an unsupported colour space. libjpeg *warnings* (such as
// "premature end of data segment" on a truncated file, which libjpeg pads with grey) are
// treated as errors, since a silently grey-padded image is a wrong number. Two limits of
// that rule: decode_opencv cannot see warnings inside OpenCV, so it checks truncation
// itself (no EOI marker after the image data) but may return garbled pixels for corrupt
// entropy-coded data; RoiDecoder stops at the window's last row, so damage below the
// window goes unnoticed (the window's pixels are still right).
//
// Memory: buffers are reused across calls (no allocation in steady state), and released
// after an outlier: a buffer (the decoder's own scratch, and the caller's `out`) whose
// capacity exceeds 4 x the largest need of the last 16 calls, and 4 MiB, is freed before
// the next decode (buffer_trim.h; issue 15 defect 6). TurboJPEG's handle keeps no image-
// sized memory between calls (libjpeg frees its per-image pools in jpeg_abort;
// decode_buffers_test.cpp checks the heap in use after an outlier).
//
// Thread safety: a decoder object holds library handles and must be used by one thread at
// a time; make one per worker.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "transforms/buffer_trim.h"
#include "transforms/decode_error.h"
#include "transforms/image.h"

namespace pipebench {

struct DecodeOptions {
  /// Largest accepted source image, width * height in pixels. Default 100 megapixels.
  int64_t max_pixels = 100'000'000;
};

/// What a JPEG header says, read without decoding pixels.
struct JpegInfo {
  int width = 0;         ///< pixels
  int height = 0;        ///< pixels
  int components = 0;    ///< 1 gray, 3 YCbCr/RGB, 4 CMYK/YCCK
  bool progressive = false;
  /// Chroma subsampling as "4:4:4", "4:2:2", "4:2:0", "4:4:0", "4:1:1", "gray" or "other".
  const char* subsampling = "other";
};

/// Parses a JPEG header with the libjpeg API. Throws DecodeError (also for > max_pixels;
/// kUnsupported naming the format for a PNG etc.: read_image_info in image_format.h reads
/// any supported format).
JpegInfo read_jpeg_info(std::span<const uint8_t> jpeg, std::string_view file,
                        const DecodeOptions& options = {});

/// A DCT scaling factor num/denom (libjpeg-turbo's tjscalingfactor).
struct ScalingFactor {
  int num = 1;
  int denom = 1;
  /// Output size of a `size`-pixel dimension: ceil(size * num / denom) (TJSCALED).
  int scaled(int size) const { return (size * num + denom - 1) / denom; }
};

/// The smallest TurboJPEG scaling factor with scaled(width) >= min_width and
/// scaled(height) >= min_height; 1/1 if none is smaller. min_* <= 0 means "no limit".
ScalingFactor choose_scaling(int width, int height, int min_width, int min_height);

class TurboDecoder {
 public:
  explicit TurboDecoder(DecodeOptions options = {});
  ~TurboDecoder();
  TurboDecoder(const TurboDecoder&) = delete;
  TurboDecoder& operator=(const TurboDecoder&) = delete;

  /// Full-resolution decode into `out` (HWC RGB uint8, height x width x 3). Any format
  /// (see above): a non-JPEG goes through OpenCV imgcodecs.
  void decode(std::span<const uint8_t> jpeg, std::string_view file, Image& out);
  /// DCT-scaled decode: out is scaled(height) x scaled(width) x 3 for the factor
  /// choose_scaling(width, height, min_width, min_height). Returns the factor used. A
  /// non-JPEG has no DCT to scale: it is decoded at full size and 1/1 is returned.
  ScalingFactor decode_scaled(std::span<const uint8_t> jpeg, std::string_view file,
                              int min_width, int min_height, Image& out);

  /// Exchanges the two decoders' working memory (the TurboJPEG handle with its buffers,
  /// and the outlier-release history), each keeping its own options. For paired cases
  /// (PipelineWorkspace::swap_scratch). Never throws.
  void swap_scratch(TurboDecoder& other) noexcept;

 private:
  void fit_output(int width, int height, bool cmyk, Image& out);
  void decode_once(std::span<const uint8_t> jpeg, std::string_view file, Image& out);

  DecodeOptions options_;
  void* handle_ = nullptr;  // tjhandle
  BufferTrim out_trim_;     // releases out's storage after an outlier
};

class RoiDecoder {
 public:
  explicit RoiDecoder(DecodeOptions options = {});
  ~RoiDecoder();
  RoiDecoder(const RoiDecoder&) = delete;
  RoiDecoder& operator=(const RoiDecoder&) = delete;

  /// Decodes only `window` (source pixel coordinates; must lie inside the image, else
  /// DecodeError with reason kBadArgument). With min_width/min_height > 0 the decode is
  /// also DCT scaled by choose_scaling(window.width, window.height, min_width, min_height),
  /// and out holds the window at that scale: scaled(window.height) x scaled(window.width)
  /// x 3 (the scaled window's edges are rounded to whole output pixels). Returns the factor.
  /// A non-JPEG is decoded whole through OpenCV imgcodecs and the window cut from it,
  /// unscaled (min_width/min_height ignored, 1/1 returned): the same pixels as a full
  /// decode followed by the crop.
  ScalingFactor decode(std::span<const uint8_t> jpeg, std::string_view file,
                       const CropWindow& window, int min_width, int min_height, Image& out);

  /// Bytes of storage the decoder itself holds between calls (its row scratch and, after
  /// a non-JPEG, the whole decoded image), for tests of the outlier release.
  size_t scratch_bytes() const;

  /// Exchanges the two decoders' working memory (row scratch, a non-JPEG's full image),
  /// each keeping its own options. Never throws.
  void swap_scratch(RoiDecoder& other) noexcept { state_.swap(other.state_); }

 private:
  struct State;
  DecodeOptions options_;
  std::unique_ptr<State> state_;
};

/// OpenCV's cv::imdecode with IMREAD_COLOR | IMREAD_IGNORE_ORIENTATION (pixels in stored
/// order, like the other backends), converted to RGB. The header is first read with
/// read_jpeg_info's parser (read_image_info's for a non-JPEG), so size limits and bad
/// headers are refused before OpenCV allocates. Thread-safe (the outlier release of `out`
/// keeps its recent sizes per thread; no other state).
void decode_opencv(std::span<const uint8_t> jpeg, std::string_view file, Image& out,
                   const DecodeOptions& options = {});

/// "" when OpenCV imgcodecs (loaded at run time: opencv_codecs.h) is there for
/// decode_opencv and non-JPEG images; otherwise why not (a build with
/// -DPIPEBENCH_OPENCV_CODECS=OFF, or a scripts/bundle.sh bundle, leaves it out). Without
/// it both throw DecodeError kUnsupported naming the file and this reason. Loads the
/// plugin (once per process).
std::string opencv_codecs_missing();

/// The same question answered from the plugin's file where it can be (no load: see
/// detail::opencv_codecs_not_found in opencv_codecs.h), for listing cases that need it.
std::string opencv_codecs_not_found();

}  // namespace pipebench
