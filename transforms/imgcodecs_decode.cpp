// decode_imgcodecs: non-JPEG images through OpenCV imgcodecs (see imgcodecs_decode.h).
#include "transforms/imgcodecs_decode.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cstring>
#include <string>

#include "transforms/opencv_codecs.h"

namespace pipebench::detail {
namespace {

using Reason = DecodeError::Reason;

// PNG 3rd ed. 5.6: the last chunk is IEND; a file cut anywhere before it lacks the chunk
// type "IEND" (searched backwards, so trailing bytes after IEND are tolerated).
bool has_png_iend(std::span<const uint8_t> b) {
  static constexpr char kIend[] = "IEND";
  for (size_t end = b.size(); end >= 8 + 4; --end)
    if (std::memcmp(b.data() + end - 4, kIend, 4) == 0) return true;
  return false;
}

// RFC 9649 2.5: the RIFF chunk size (little-endian at 4) counts the bytes after offset 8.
bool webp_complete(std::span<const uint8_t> b) {
  if (b.size() < 8) return false;
  const uint64_t riff = uint64_t{b[4]} | (uint64_t{b[5]} << 8) | (uint64_t{b[6]} << 16) |
                        (uint64_t{b[7]} << 24);
  return b.size() >= riff + 8;
}

void check_complete(const ImageInfo& info, std::span<const uint8_t> b, std::string_view file) {
  if (info.format == ImageFormat::kPng && !has_png_iend(b))
    throw DecodeError(file, Reason::kTruncated,
                      "PNG has no IEND chunk: the file ends before the image does");
  if (info.format == ImageFormat::kWebp && !webp_complete(b))
    throw DecodeError(file, Reason::kTruncated,
                      "WebP is shorter than its RIFF header says (" + std::to_string(b.size()) +
                          " bytes)");
}

// cv::imdecode (OpenCV 4.6, loadsave.cpp findDecoder) hands the bytes to the first of its
// decoders whose signature check accepts them. Every decoder Debian's build has reads its
// signature at offset 0, where the formats above cannot be confused, except DICOM (GDCM):
// "DICM" at byte 128, after the 128-byte preamble (DICOM PS3.10, 7.1). A file sniffed as,
// say, WebP whose header libwebp refuses would go on to GDCM, which reads lengths from the
// file and allocates them before any size check (found by fuzz_decode_opencv: a 690-byte
// input, a 136 MiB allocation). Such a file is refused: it is not the format it names.
void check_no_other_decoder(std::span<const uint8_t> b, const ImageInfo& info,
                            std::string_view file) {
  static constexpr size_t kDicomMagicAt = 128;
  if (b.size() >= kDicomMagicAt + 4 && std::memcmp(b.data() + kDicomMagicAt, "DICM", 4) == 0)
    throw DecodeError(file, Reason::kUnsupported,
                      std::string("both a ") + format_name(info.format) +
                          " signature and DICOM's ('DICM' at byte 128): cv::imdecode could "
                          "read it as DICOM, which pipebench does not decode");
}

}  // namespace

ImageInfo decode_imgcodecs(std::span<const uint8_t> bytes, std::string_view file,
                           const DecodeOptions& options, BufferTrim& out_trim, Image& out) {
  const ImageInfo info = read_image_info(bytes, file, options);  // size limit, signature
  if (!decoded_by_opencv(info.format))
    throw DecodeError(file, Reason::kUnsupported, describe_signature(bytes));
  check_complete(info, bytes, file);
  check_no_other_decoder(bytes, info, file);

  const size_t need = static_cast<size_t>(info.width) * info.height * 3;
  out_trim.fit(out.data, need);
  out.resize(info.height, info.width, 3);
  const char* name = format_name(info.format);
  const ImdecodeResult r = imdecode_bgr(bytes, out.ptr(), info.height, info.width);
  if (r.status != ImdecodeResult::Status::kOk) out.resize(0, 0, 3);
  switch (r.status) {
    case ImdecodeResult::Status::kOk: break;
    case ImdecodeResult::Status::kUnavailable:
      throw DecodeError(file, Reason::kUnsupported,
                        std::string("decoding a ") + name + " file needs OpenCV imgcodecs: " +
                            r.message);
    case ImdecodeResult::Status::kException:
      throw DecodeError(file, Reason::kCorrupt, "cv::imdecode: " + r.message);
    case ImdecodeResult::Status::kEmpty:
      throw DecodeError(file, Reason::kCorrupt,
                        std::string("cv::imdecode could not decode this ") + name + " file");
    case ImdecodeResult::Status::kOtherShape:
      throw DecodeError(file, Reason::kCorrupt,
                        std::string("cv::imdecode returned ") + std::to_string(r.cols) + " x " +
                            std::to_string(r.rows) + ", the " + name + " header says " +
                            std::to_string(info.width) + " x " + std::to_string(info.height));
  }
  cv::Mat dst(info.height, info.width, CV_8UC3, out.ptr());
  cv::cvtColor(dst, dst, cv::COLOR_BGR2RGB);  // in place: a channel swap
  return info;
}

}  // namespace pipebench::detail
