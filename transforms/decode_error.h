// The one error type of decoding: which file, and why. The same reasons serve every format
// (JPEG through libjpeg-turbo, PNG/WebP/BMP/PNM/TIFF through OpenCV imgcodecs; see
// image_format.h), so the names say "image", not "JPEG".
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace pipebench {

class DecodeError : public std::runtime_error {
 public:
  enum class Reason {
    kEmpty,        ///< zero bytes
    kNotImage,     ///< no signature of a supported format (JPEG SOI 0xFFD8, PNG, ...)
    kTruncated,    ///< data ends before the image does
    kCorrupt,      ///< the library rejected the data
    kTooLarge,     ///< width * height above DecodeOptions::max_pixels
    kUnsupported,  ///< a format, colour space or layout we do not decode (GIF, 12-bit JPEG)
    kBadArgument,  ///< e.g. an ROI window outside the image
  };

  /// Message: "<file>: <reason name>: <detail>".
  DecodeError(std::string_view file, Reason reason, std::string_view detail)
      : std::runtime_error(std::string(file) + ": " + reason_name(reason) + ": " +
                           std::string(detail)),
        file_(file),
        reason_(reason) {}

  const std::string& file() const { return file_; }
  Reason reason() const { return reason_; }

  static const char* reason_name(Reason r) {
    switch (r) {
      case Reason::kEmpty: return "empty file";
      case Reason::kNotImage: return "not an image";
      case Reason::kTruncated: return "truncated image";
      case Reason::kCorrupt: return "corrupt image";
      case Reason::kTooLarge: return "image too large";
      case Reason::kUnsupported: return "unsupported image";
      case Reason::kBadArgument: return "bad argument";
    }
    return "decode error";
  }

 private:
  std::string file_;
  Reason reason_;
};

}  // namespace pipebench
