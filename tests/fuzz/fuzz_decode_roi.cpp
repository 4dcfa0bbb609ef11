// The libjpeg-API backend on arbitrary bytes: the header parser (read_jpeg_info, also what
// read_image_info uses for JPEG) and RoiDecoder::decode of a window inside the announced
// image, unscaled or DCT scaled to a minimum side of 8..128, window and scale drawn from the
// input's hash. Accepted: DecodeError, or the window at the returned scale
// (scaled(window.width) x scaled(window.height)). fuzz_common.h has the limits.
#include <span>

#include "tests/fuzz/fuzz_common.h"
#include "transforms/image_format.h"
#include "transforms/jpeg_decode.h"

using namespace pipebench;

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  fuzz::apply_contract(argc, argv, 64 * 1024);
  return 0;
}

namespace {

/// A window inside a width x height image, from 64 bits of hash.
CropWindow window_from(uint64_t h, int width, int height) {
  CropWindow w;
  w.x = static_cast<int>(h % static_cast<uint64_t>(width));
  w.y = static_cast<int>((h >> 16) % static_cast<uint64_t>(height));
  w.width = 1 + static_cast<int>((h >> 32) % static_cast<uint64_t>(width - w.x));
  w.height = 1 + static_cast<int>((h >> 48) % static_cast<uint64_t>(height - w.y));
  return w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static RoiDecoder decoder(fuzz::decode_options());
  static Image out;
  const std::span<const uint8_t> bytes(data, size);
  try {
    (void)read_jpeg_info(bytes, "fuzz", fuzz::decode_options());
  } catch (const DecodeError&) {
    // not a JPEG, or a bad header: the ROI decoder may still take other formats
  }
  ImageInfo info;
  try {
    info = read_image_info(bytes, "fuzz", fuzz::decode_options());
  } catch (const DecodeError&) {
    return 0;
  }
  fuzz::require(info.width > 0 && info.height > 0, "read_image_info accepted an empty image");
  const uint64_t h = fuzz::input_hash(bytes);
  const CropWindow window = window_from(h, info.width, info.height);
  const int min_side = (h & 0x100) ? 0 : 8 << ((h >> 9) % 5);
  try {
    const ScalingFactor f = decoder.decode(bytes, "fuzz", window, min_side, min_side, out);
    fuzz::require(f.num >= 1 && f.denom >= 1, "RoiDecoder returned a factor < 1/inf");
    fuzz::require_image(out, f.scaled(window.width), f.scaled(window.height),
                        "RoiDecoder::decode");
  } catch (const DecodeError&) {
  }
  return 0;
}
