// decode_opencv: cv::imdecode (OpenCV 4.6 imgcodecs, which decodes JPEG with the system
// libjpeg-turbo 2.1.5 through the libjpeg API, smooth upsampling and JDCT_ISLOW, like
// TurboJPEG's defaults), then BGR -> RGB with cv::cvtColor.
//
// Before OpenCV sees the bytes, the header is parsed with our own libjpeg reader
// (read_header), so empty, non-JPEG, unsupported and over-max_pixels inputs are refused
// with a precise DecodeError before OpenCV allocates anything.
// OpenCV's own libjpeg error manager prints warnings to stderr and carries on (a truncated
// file comes back grey-padded), so truncation is detected here instead: the file must hold
// an EOI marker after its first scan's data (see detail::has_eoi_after). Other warnings
// inside OpenCV (e.g. "Corrupt JPEG data: bad Huffman code") cannot be intercepted: for
// corrupt entropy-coded data this backend may return garbled pixels where the other three
// throw kCorrupt.
//
// A non-JPEG (by content) goes the way every decoder sends it: imgcodecs_decode.h.
//
// IMREAD_IGNORE_ORIENTATION is added to IMREAD_COLOR so that, like the other backends,
// pixels come back in stored order (OpenCV would otherwise apply an EXIF rotation).
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <string>

#include "transforms/imgcodecs_decode.h"
#include "transforms/jpeg_decode.h"
#include "transforms/jpeg_libjpeg.h"
#include "transforms/opencv_codecs.h"

namespace pipebench {

void decode_opencv(std::span<const uint8_t> jpeg, std::string_view file, Image& out,
                   const DecodeOptions& options) {
  // One per thread: the function stays thread-safe and still releases `out`'s storage
  // after an outlier (buffer_trim.h).
  thread_local BufferTrim out_trim;
  if (!detail::is_jpeg(jpeg) && !jpeg.empty()) {
    detail::decode_imgcodecs(jpeg, file, options, out_trim, out);
    return;
  }
  size_t entropy_offset = 0;
  const JpegInfo info = detail::read_header(jpeg, file, options, &entropy_offset);
  if (!detail::has_eoi_after(jpeg, entropy_offset))
    throw DecodeError(file, DecodeError::Reason::kTruncated,
                      "no EOI marker (0xFF 0xD9) after the image data: the file ends before "
                      "the image does");

  // imdecode writes into out's storage (the plugin passes it as dst, so Mat::create is a
  // no-op; opencv_codecs.h); then BGR -> RGB in place.
  out_trim.fit(out.data, static_cast<size_t>(info.width) * info.height * 3);
  out.resize(info.height, info.width, 3);
  const detail::ImdecodeResult r = detail::imdecode_bgr(jpeg, out.ptr(), info.height, info.width);
  using Status = detail::ImdecodeResult::Status;
  if (r.status != Status::kOk) out.resize(0, 0, 3);
  switch (r.status) {
    case Status::kOk: break;
    case Status::kUnavailable:
      throw DecodeError(file, DecodeError::Reason::kUnsupported,
                        "the opencv decode backend needs OpenCV imgcodecs: " + r.message);
    case Status::kException:
      throw DecodeError(file, DecodeError::Reason::kCorrupt, "cv::imdecode: " + r.message);
    case Status::kEmpty:
      throw DecodeError(file, DecodeError::Reason::kCorrupt,
                        "cv::imdecode returned an empty image");
    case Status::kOtherShape:
      throw DecodeError(file, DecodeError::Reason::kCorrupt,
                        "cv::imdecode returned " + std::to_string(r.cols) + " x " +
                            std::to_string(r.rows) + " type " + std::to_string(r.type) +
                            ", header says " + std::to_string(info.width) + " x " +
                            std::to_string(info.height) + " CV_8UC3");
  }
  cv::Mat bgr(info.height, info.width, CV_8UC3, out.ptr());
  cv::cvtColor(bgr, bgr, cv::COLOR_BGR2RGB);
}

std::string opencv_codecs_missing() {
  return detail::opencv_codecs_available() ? "" : detail::opencv_codecs_unavailable_reason();
}

std::string opencv_codecs_not_found() { return detail::opencv_codecs_not_found(); }

}  // namespace pipebench
