// libpipebench_opencv_codecs.so: the only code of pipebench that links OpenCV imgcodecs,
// loaded at run time by opencv_codecs.cpp (see opencv_codecs.h for why). One C entry
// point, so that no C++ type crosses the library boundary.
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "transforms/opencv_codecs_abi.h"

extern "C" __attribute__((visibility("default"))) int pipebench_imdecode_bgr(
    const uint8_t* bytes, size_t size, uint8_t* dst, int rows, int cols,
    PipebenchImdecodeShape* got, char* message, size_t message_size) {
  // imdecode writes into `out` when it already has the decoded size and type (Mat::create
  // is then a no-op), so the pixels land in the caller's buffer without a copy.
  cv::Mat out(rows, cols, CV_8UC3, dst);
  const cv::Mat encoded(1, static_cast<int>(size), CV_8UC1, const_cast<uint8_t*>(bytes));
  cv::Mat decoded;
  try {
    decoded = cv::imdecode(encoded, cv::IMREAD_COLOR | cv::IMREAD_IGNORE_ORIENTATION, &out);
  } catch (const cv::Exception& e) {
    std::snprintf(message, message_size, "%s", e.what());
    return kPipebenchImdecodeException;
  } catch (const std::exception& e) {
    std::snprintf(message, message_size, "%s", e.what());
    return kPipebenchImdecodeException;
  }
  if (decoded.empty()) return kPipebenchImdecodeEmpty;
  got->rows = decoded.rows;
  got->cols = decoded.cols;
  got->type = decoded.type();
  if (decoded.data != dst || decoded.rows != rows || decoded.cols != cols ||
      decoded.type() != CV_8UC3)
    return kPipebenchImdecodeOtherShape;
  return kPipebenchImdecodeOk;
}
