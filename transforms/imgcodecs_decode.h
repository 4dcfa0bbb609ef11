// Internal to the decoders (jpeg_decode.cpp, jpeg_roi.cpp, jpeg_opencv.cpp): the slower
// path for images that are not JPEGs. Not part of the public API.
//
// decode_imgcodecs decodes png, webp, bmp, pnm and tiff (chosen by content, see
// image_format.h) with OpenCV 4.6's cv::imdecode(IMREAD_COLOR | IMREAD_IGNORE_ORIENTATION)
// straight into `out` (HWC RGB uint8, height x width x 3), then swaps BGR to RGB in place.
// IMREAD_COLOR gives 8-bit, 3-channel pixels whatever the file holds: gray and palette
// images are expanded, an alpha channel is dropped (not composited), 16-bit samples are
// scaled to 8 bits; as torchvision's default loader (PIL's convert("RGB")) does for 8-bit
// files. Pixels come in stored order (no EXIF rotation), as for JPEGs.
//
// Before OpenCV allocates, the header's size is read (read_image_info) and checked against
// options.max_pixels, and two cheap checks name truncation precisely: a PNG must hold its
// IEND chunk and a WebP file must be as long as its RIFF header says. A file that also
// carries DICOM's signature ("DICM" at byte 128) is kUnsupported: cv::imdecode picks its
// decoder by signature and could hand it to GDCM, which allocates before any size check.
// Anything else OpenCV cannot decode is kCorrupt (OpenCV returns an empty image without a
// reason).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "transforms/buffer_trim.h"
#include "transforms/image.h"
#include "transforms/image_format.h"

namespace pipebench::detail {

/// True when the bytes start with the JPEG SOI marker (decoded by the JPEG backends).
inline bool is_jpeg(std::span<const uint8_t> bytes) {
  return bytes.size() >= 2 && bytes[0] == 0xFF && bytes[1] == 0xD8;
}

/// Decodes a non-JPEG image into out (see above); `out_trim` releases out's storage after
/// an outlier (buffer_trim.h). Returns the header facts. Throws DecodeError naming `file`:
/// kEmpty, kNotImage, kUnsupported, kTruncated, kCorrupt, kTooLarge.
ImageInfo decode_imgcodecs(std::span<const uint8_t> bytes, std::string_view file,
                           const DecodeOptions& options, BufferTrim& out_trim, Image& out);

}  // namespace pipebench::detail
