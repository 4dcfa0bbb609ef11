// The C interface between opencv_codecs.cpp and the plugin libpipebench_opencv_codecs.so
// (opencv_codecs_plugin.cpp). Internal; see opencv_codecs.h.
#pragma once

#include <stddef.h>
#include <stdint.h>

extern "C" {

/// What cv::imdecode returned when it was not the requested shape.
struct PipebenchImdecodeShape {
  int rows;
  int cols;
  int type;  ///< OpenCV type code (CV_8UC3 = 16)
};

enum PipebenchImdecodeStatus {
  kPipebenchImdecodeOk = 0,
  kPipebenchImdecodeException = 1,   ///< cv::imdecode threw; `message` holds what()
  kPipebenchImdecodeEmpty = 2,       ///< cv::imdecode returned an empty Mat
  kPipebenchImdecodeOtherShape = 3,  ///< not rows x cols CV_8UC3 in `dst`; see `got`
};

/// cv::imdecode(bytes, IMREAD_COLOR | IMREAD_IGNORE_ORIENTATION) into `dst` (rows x cols
/// x 3, BGR, uint8, row stride cols * 3). Returns a PipebenchImdecodeStatus.
typedef int (*PipebenchImdecodeFn)(const uint8_t* bytes, size_t size, uint8_t* dst, int rows,
                                   int cols, PipebenchImdecodeShape* got, char* message,
                                   size_t message_size);

}  // extern "C"
