// What an encoded image is, from its bytes (never its file name), and its size from the
// header alone.
//
// sniff_format looks at the first kSniffBytes bytes for a signature (magic number):
//   jpeg  FF D8                       (JPEG SOI marker, ITU-T T.81 B.1.1.2)
//   png   89 'PNG' 0D 0A 1A 0A        (PNG 3rd ed. 5.2)
//   webp  'RIFF' <size> 'WEBP'        (RFC 9649 2.5)
//   bmp   'BM'                        (Windows BITMAPFILEHEADER)
//   pnm   'P1'..'P6' + whitespace     (Netpbm PBM/PGM/PPM, plain and raw)
//   tiff  'II*\0' or 'MM\0*'          (TIFF 6.0 section 2, classic TIFF; BigTIFF is "other")
//   gif   'GIF87a' / 'GIF89a'         (recognised so the error can say so; not decoded)
// so a PNG named .jpg (there are some in ImageNet) is a png. jpeg is decoded by the JPEG
// backends (jpeg_decode.h); png, webp, bmp, pnm and tiff through OpenCV 4.6 imgcodecs
// (cv::imdecode), a slower path; anything else is refused with a DecodeError.
//
// read_image_info gives width and height without decoding pixels: for JPEG through the
// libjpeg header parser (read_jpeg_info, with the JPEG facts in ImageInfo::jpeg); for the
// OpenCV formats from the fixed header fields each specification defines (PNG IHDR, WebP
// VP8/VP8L/VP8X frame header, BMP info header, PNM header tokens, TIFF IFD0 tags 256/257).
// OpenCV 4.6 has no public header-only reader, and the size must be known before
// cv::imdecode allocates, so that DecodeOptions::max_pixels bounds the memory of every
// format alike.
//
// Errors (DecodeError naming the file): kEmpty (0 bytes), kNotImage (no known signature;
// the detail names what it looks like, e.g. a macOS AppleDouble "._" file or a BigTIFF),
// kUnsupported (GIF), kTruncated (the header ends early), kCorrupt (impossible header values),
// kTooLarge (above max_pixels).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "transforms/jpeg_decode.h"

namespace pipebench {

enum class ImageFormat { kJpeg, kPng, kWebp, kBmp, kPnm, kTiff, kGif, kUnknown };

/// Bytes sniff_format needs at most (fewer are fine: a short file is kUnknown or its
/// format, whatever its first bytes allow).
inline constexpr size_t kSniffBytes = 16;

/// The format from the leading bytes (only the first kSniffBytes are looked at).
ImageFormat sniff_format(std::span<const uint8_t> head);

/// "jpeg", "png", "webp", "bmp", "pnm", "tiff", "gif" or "unknown".
const char* format_name(ImageFormat format);

/// True for the formats decoded through OpenCV imgcodecs (png, webp, bmp, pnm, tiff).
bool decoded_by_opencv(ImageFormat format);

struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int width = 0;   ///< pixels
  int height = 0;  ///< pixels
  /// The JPEG header's facts (progressive, subsampling, components); valid only when
  /// format == kJpeg.
  JpegInfo jpeg;
};

/// Size and format from the header, any supported format. Throws DecodeError (see above).
ImageInfo read_image_info(std::span<const uint8_t> bytes, std::string_view file,
                          const DecodeOptions& options = {});

namespace detail {

/// "<format> image" for a known signature, else a description of the first bytes
/// ("starts with 0x00 0x05 0x16 0x07: a macOS AppleDouble ('._') resource file, not an
/// image"); used in kNotImage / kUnsupported messages.
std::string describe_signature(std::span<const uint8_t> bytes);

/// Throws kTooLarge when width * height > options.max_pixels (defined in jpeg_decode.cpp;
/// every format's size is checked by this one rule before any pixel buffer exists).
void check_pixel_limit(int width, int height, std::string_view file, const DecodeOptions& options);

}  // namespace detail
}  // namespace pipebench
