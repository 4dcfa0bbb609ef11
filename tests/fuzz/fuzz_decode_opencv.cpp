// The OpenCV backend on arbitrary bytes: decode_opencv (cv::imdecode after pipebench's own
// header check, so max_pixels holds before OpenCV allocates). Accepted: DecodeError, or an
// image of the size read_image_info announces. fuzz_common.h has the limits.
#include <span>

#include "tests/fuzz/fuzz_common.h"
#include "transforms/image_format.h"
#include "transforms/jpeg_decode.h"

using namespace pipebench;

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  fuzz::apply_contract(argc, argv, 64 * 1024);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Image out;
  const std::span<const uint8_t> bytes(data, size);
  try {
    decode_opencv(bytes, "fuzz", out, fuzz::decode_options());
  } catch (const DecodeError&) {
    return 0;
  }
  const ImageInfo info = read_image_info(bytes, "fuzz", fuzz::decode_options());
  fuzz::require_image(out, info.width, info.height, "decode_opencv");
  return 0;
}
