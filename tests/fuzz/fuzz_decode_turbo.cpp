// TurboJPEG on arbitrary bytes: TurboDecoder::decode (full size) and decode_scaled (DCT
// scaling to a minimum side of 8..256 drawn from the input's hash), and through them the
// OpenCV imgcodecs path that every backend takes for PNG/WebP/BMP/PNM/TIFF bytes.
// Accepted: DecodeError, or an image of the size the header announces (read_image_info:
// the size max_pixels is checked on) at the returned scale. fuzz_common.h has the limits.
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
  // One decoder and one output reused across inputs, as a loader worker reuses them: state
  // left behind by a failed decode is part of what is tested.
  static TurboDecoder decoder(fuzz::decode_options());
  static Image out;
  const std::span<const uint8_t> bytes(data, size);
  try {
    decoder.decode(bytes, "fuzz", out);
  } catch (const DecodeError&) {
    return 0;
  }
  // It decoded, so the header parser must accept it too and agree on the size.
  const ImageInfo info = read_image_info(bytes, "fuzz", fuzz::decode_options());
  fuzz::require_image(out, info.width, info.height, "TurboDecoder::decode");

  const int min_side = 8 << (fuzz::input_hash(bytes) % 6);
  try {
    const ScalingFactor f = decoder.decode_scaled(bytes, "fuzz", min_side, min_side, out);
    fuzz::require(f.num >= 1 && f.denom >= 1, "decode_scaled returned a factor < 1/inf");
    fuzz::require_image(out, f.scaled(info.width), f.scaled(info.height),
                        "TurboDecoder::decode_scaled");
  } catch (const DecodeError&) {
    // The same bytes decoded in full a moment ago; a scaled decode may still refuse what
    // only the scaled path reads (documented: same reasons, e.g. corrupt data).
  }
  return 0;
}
