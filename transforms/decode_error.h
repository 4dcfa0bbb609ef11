// The one error type of decoding: which file, and why.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace pipebench {

class DecodeError : public std::runtime_error {
 public:
  enum class Reason {
    kEmpty,        ///< zero bytes
    kNotJpeg,      ///< no SOI marker (0xFFD8) at the start
    kTruncated,    ///< data ends before the image does
    kCorrupt,      ///< the library rejected the data
    kTooLarge,     ///< width * height above DecodeOptions::max_pixels
    kUnsupported,  ///< a colour space or layout we do not convert
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
      case Reason::kNotJpeg: return "not a JPEG";
      case Reason::kTruncated: return "truncated JPEG";
      case Reason::kCorrupt: return "corrupt JPEG";
      case Reason::kTooLarge: return "image too large";
      case Reason::kUnsupported: return "unsupported JPEG";
      case Reason::kBadArgument: return "bad argument";
    }
    return "decode error";
  }

 private:
  std::string file_;
  Reason reason_;
};

}  // namespace pipebench
