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
// IMREAD_IGNORE_ORIENTATION is added to IMREAD_COLOR so that, like the other backends,
// pixels come back in stored order (OpenCV would otherwise apply an EXIF rotation).
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <string>
#include <vector>

#include "transforms/jpeg_decode.h"
#include "transforms/jpeg_libjpeg.h"

namespace pipebench {

void decode_opencv(std::span<const uint8_t> jpeg, std::string_view file, Image& out,
                   const DecodeOptions& options) {
  size_t entropy_offset = 0;
  const JpegInfo info = detail::read_header(jpeg, file, options, &entropy_offset);
  if (!detail::has_eoi_after(jpeg, entropy_offset))
    throw DecodeError(file, DecodeError::Reason::kTruncated,
                      "no EOI marker (0xFF 0xD9) after the image data: the file ends before "
                      "the image does");

  // BGR scratch reused per thread, so steady state allocates nothing; imdecode writes into
  // it because a Mat of the right size and type is passed as dst (Mat::create is a no-op).
  thread_local std::vector<uint8_t> bgr_storage;
  const size_t bytes = static_cast<size_t>(info.width) * info.height * 3;
  if (bgr_storage.size() < bytes) bgr_storage.resize(bytes);
  cv::Mat bgr(info.height, info.width, CV_8UC3, bgr_storage.data());

  const cv::Mat encoded(1, static_cast<int>(jpeg.size()), CV_8UC1,
                        const_cast<uint8_t*>(jpeg.data()));
  cv::Mat decoded;
  try {
    decoded = cv::imdecode(encoded, cv::IMREAD_COLOR | cv::IMREAD_IGNORE_ORIENTATION, &bgr);
  } catch (const cv::Exception& e) {
    throw DecodeError(file, DecodeError::Reason::kCorrupt,
                      std::string("cv::imdecode: ") + e.what());
  }
  if (decoded.empty())
    throw DecodeError(file, DecodeError::Reason::kCorrupt,
                      "cv::imdecode returned an empty image");
  if (decoded.rows != info.height || decoded.cols != info.width || decoded.type() != CV_8UC3)
    throw DecodeError(file, DecodeError::Reason::kCorrupt,
                      "cv::imdecode returned " + std::to_string(decoded.cols) + " x " +
                          std::to_string(decoded.rows) + " type " +
                          std::to_string(decoded.type()) + ", header says " +
                          std::to_string(info.width) + " x " + std::to_string(info.height) +
                          " CV_8UC3");
  out.resize(info.height, info.width, 3);
  cv::Mat rgb(info.height, info.width, CV_8UC3, out.ptr());
  cv::cvtColor(decoded, rgb, cv::COLOR_BGR2RGB);
}

}  // namespace pipebench
