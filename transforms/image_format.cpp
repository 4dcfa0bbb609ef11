// Format sniffing and header-only sizes (see image_format.h). Each reader takes the few
// fixed fields its specification defines and nothing else; the decode itself is OpenCV's.
#include "transforms/image_format.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "transforms/decode_error.h"

namespace pipebench {
namespace {

using Reason = DecodeError::Reason;
using Bytes = std::span<const uint8_t>;

bool starts_with(Bytes b, std::string_view sig, size_t at = 0) {
  if (b.size() < at + sig.size()) return false;
  return std::memcmp(b.data() + at, sig.data(), sig.size()) == 0;
}

uint32_t be32(Bytes b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) |
         b[at + 3];
}
uint32_t le32(Bytes b, size_t at) {
  return (uint32_t{b[at + 3]} << 24) | (uint32_t{b[at + 2]} << 16) |
         (uint32_t{b[at + 1]} << 8) | b[at];
}
uint32_t le24(Bytes b, size_t at) {
  return (uint32_t{b[at + 2]} << 16) | (uint32_t{b[at + 1]} << 8) | b[at];
}
uint16_t le16(Bytes b, size_t at) { return static_cast<uint16_t>(b[at] | (b[at + 1] << 8)); }

struct Size {
  int64_t width = 0;
  int64_t height = 0;
};

[[noreturn]] void truncated(std::string_view file, const char* format, size_t have, size_t need) {
  char detail[160];
  std::snprintf(detail, sizeof detail, "%s header needs %zu bytes, the file has %zu", format,
                need, have);
  throw DecodeError(file, Reason::kTruncated, detail);
}

void need(Bytes b, size_t n, std::string_view file, const char* format) {
  if (b.size() < n) truncated(file, format, b.size(), n);
}

// PNG 3rd edition, 11.2.1: the first chunk is IHDR (length 13), width and height as
// 4-byte big-endian integers at file offsets 16 and 20, each 1 .. 2^31 - 1.
Size png_size(Bytes b, std::string_view file) {
  need(b, 24, file, "PNG");
  if (!starts_with(b, "IHDR", 12))
    throw DecodeError(file, Reason::kCorrupt, "PNG: the first chunk is not IHDR");
  return {be32(b, 16), be32(b, 20)};
}

// RFC 9649 (WebP container): RIFF header (12 bytes), then the first chunk at 12:
//   "VP8 " lossy: frame tag (3 bytes) at 20, start code 9D 01 2A at 23, then 14-bit
//          width and height (little-endian, top 2 bits are the scale) at 26 and 28;
//   "VP8L" lossless: signature 0x2F at 20, then 14 bits width - 1, 14 bits height - 1
//          (LSB first) from 21;
//   "VP8X" extended: canvas width - 1 and height - 1, 24-bit little-endian, at 24 and 27.
Size webp_size(Bytes b, std::string_view file) {
  need(b, 16, file, "WebP");
  if (starts_with(b, "VP8 ", 12)) {
    need(b, 30, file, "WebP VP8");
    if (b[23] != 0x9D || b[24] != 0x01 || b[25] != 0x2A)
      throw DecodeError(file, Reason::kCorrupt, "WebP VP8: no start code 9D 01 2A");
    return {le16(b, 26) & 0x3FFF, le16(b, 28) & 0x3FFF};
  }
  if (starts_with(b, "VP8L", 12)) {
    need(b, 25, file, "WebP VP8L");
    if (b[20] != 0x2F) throw DecodeError(file, Reason::kCorrupt, "WebP VP8L: no signature 0x2F");
    const uint32_t bits = le32(b, 21);
    return {int64_t{bits & 0x3FFF} + 1, int64_t{(bits >> 14) & 0x3FFF} + 1};
  }
  if (starts_with(b, "VP8X", 12)) {
    need(b, 30, file, "WebP VP8X");
    return {int64_t{le24(b, 24)} + 1, int64_t{le24(b, 27)} + 1};
  }
  throw DecodeError(file, Reason::kCorrupt, "WebP: first chunk is not VP8, VP8L or VP8X");
}

// BITMAPFILEHEADER (14 bytes), then the info header, whose first 4 bytes give its size:
// 12 (BITMAPCOREHEADER: 16-bit width and height at 18 and 20) or more (32-bit signed width
// and height at 18 and 22; a negative height means top-down rows).
Size bmp_size(Bytes b, std::string_view file) {
  need(b, 18, file, "BMP");
  if (le32(b, 14) == 12) {
    need(b, 22, file, "BMP");
    return {le16(b, 18), le16(b, 20)};
  }
  need(b, 26, file, "BMP");
  const auto w = static_cast<int32_t>(le32(b, 18)), h = static_cast<int32_t>(le32(b, 22));
  return {w, h < 0 ? -int64_t{h} : h};
}

// Netpbm: "P<n>", then width and height as ASCII decimals separated by whitespace, where
// '#' starts a comment that runs to the end of the line. OpenCV 4.6's reader (grfmt_pxm.cpp,
// ReadNumber) takes the byte that ends a number as its separator, whatever it is, so after
// "3821#5880" it reads 5880 as the next number where Netpbm reads a comment: the two disagree
// on the size (fuzz_decode_opencv: a 29-byte file this check read as 3821 x 4 that OpenCV
// allocated as 3821 x 5880). A '#' right after a number is refused; every other separator
// that is not whitespace is refused below as not a number, before OpenCV sees the file.
Size pnm_size(Bytes b, std::string_view file) {
  size_t pos = 2;
  auto number = [&]() -> int64_t {
    for (;;) {
      if (pos >= b.size()) truncated(file, "PNM", b.size(), pos + 1);
      if (b[pos] == '#') {
        while (pos < b.size() && b[pos] != '\n' && b[pos] != '\r') ++pos;
      } else if (b[pos] == ' ' || (b[pos] >= '\t' && b[pos] <= '\r')) {
        ++pos;
      } else {
        break;
      }
    }
    if (b[pos] < '0' || b[pos] > '9')
      throw DecodeError(file, Reason::kCorrupt, "PNM: width or height is not a number");
    int64_t v = 0;
    while (pos < b.size() && b[pos] >= '0' && b[pos] <= '9') {
      v = v * 10 + (b[pos++] - '0');
      if (v > INT32_MAX) throw DecodeError(file, Reason::kCorrupt, "PNM: size above 2^31 - 1");
    }
    if (pos < b.size() && b[pos] == '#')
      throw DecodeError(file, Reason::kUnsupported,
                        "PNM: '#' right after a number (byte " + std::to_string(pos) +
                            "): Netpbm reads a comment there, OpenCV 4.6 the next number");
    return v;
  };
  const int64_t w = number();
  return {w, number()};
}

// TIFF 6.0, section 2: byte order "II" (little-endian) or "MM", 42, the offset of IFD0;
// the IFD is a 2-byte entry count and 12-byte entries (tag, type, count, value), where
// ImageWidth (256), ImageLength (257), RowsPerStrip (278), TileWidth (322) and TileLength
// (323) are SHORT (3) or LONG (4) values held in the entry itself. OpenCV decodes the first
// image (IFD0), and allocates one strip (width x RowsPerStrip; RowsPerStrip 0 or 2^32 - 1:
// the whole image) or one tile (TileWidth x TileLength) of 4 channels at a time, without
// bounding RowsPerStrip by the height (OpenCV 4.6, grfmt_tiff.cpp, TiffDecoder::readData):
// a 792-byte file that declared 16400 x 12 pixels with 4108 rows per strip made it
// allocate 16400 x 4108 x 4 bytes (found by tests/fuzz/fuzz_decode_opencv).
struct TiffLayout {
  Size size;
  int64_t buffer_pixels = 0;  // the strip or tile OpenCV decodes into, in pixels
};

TiffLayout tiff_layout(Bytes b, std::string_view file) {
  need(b, 8, file, "TIFF");
  const bool le = b[0] == 'I';
  auto u16 = [&](size_t at) -> uint32_t {
    return le ? le16(b, at) : static_cast<uint32_t>((b[at] << 8) | b[at + 1]);
  };
  auto u32 = [&](size_t at) { return le ? le32(b, at) : be32(b, at); };
  const uint64_t ifd = u32(4);
  if (ifd + 2 > b.size()) truncated(file, "TIFF IFD0", b.size(), static_cast<size_t>(ifd + 2));
  const uint32_t entries = u16(static_cast<size_t>(ifd));
  const uint64_t end = ifd + 2 + 12ull * entries;
  if (end > b.size()) truncated(file, "TIFF IFD0", b.size(), static_cast<size_t>(end));
  struct Field {
    uint32_t tag;
    const char* name;
    std::optional<int64_t> value;
  };
  Field fields[] = {{256, "ImageWidth", {}}, {257, "ImageLength", {}}, {278, "RowsPerStrip", {}},
                    {322, "TileWidth", {}},  {323, "TileLength", {}}};
  for (uint32_t i = 0; i < entries; ++i) {
    const size_t e = static_cast<size_t>(ifd + 2 + 12ull * i);
    const uint32_t tag = u16(e), type = u16(e + 2);
    Field* f = nullptr;
    for (Field& x : fields)
      if (x.tag == tag) f = &x;
    if (f == nullptr) continue;
    // Two entries for one field: libtiff keeps one and OpenCV sizes its buffers by it,
    // which need not be the one read here.
    if (f->value) throw DecodeError(file, Reason::kCorrupt, std::string("TIFF: IFD0 has two ") + f->name + " entries");
    if (type == 3) f->value = u16(e + 8);
    else if (type == 4) f->value = u32(e + 8);
    else throw DecodeError(file, Reason::kCorrupt, std::string("TIFF: ") + f->name + " not SHORT or LONG");
  }
  const auto& [w, h, rows, tile_w, tile_h] = fields;
  if (!w.value || !h.value) throw DecodeError(file, Reason::kCorrupt, "TIFF: IFD0 has no ImageWidth or ImageLength");
  // Each field is below 2^32, so a product of two fits in uint64; above int64's range it
  // saturates (it is refused as too large either way).
  auto pixels = [](int64_t a, int64_t b) {
    const uint64_t p = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
    return p > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(p);
  };
  TiffLayout t{{*w.value, *h.value}, 0};
  if (tile_w.value && tile_h.value) {
    t.buffer_pixels = pixels(*tile_w.value, *tile_h.value);
  } else {
    const int64_t r = rows.value.value_or(0);
    t.buffer_pixels = pixels(*w.value, r == 0 || r >= 0xFFFFFFFF ? *h.value : r);
  }
  return t;
}

Size header_size(ImageFormat f, Bytes b, std::string_view file) {
  switch (f) {
    case ImageFormat::kPng: return png_size(b, file);
    case ImageFormat::kWebp: return webp_size(b, file);
    case ImageFormat::kBmp: return bmp_size(b, file);
    case ImageFormat::kPnm: return pnm_size(b, file);
    default: break;
  }
  throw DecodeError(file, Reason::kUnsupported, detail::describe_signature(b));
}

}  // namespace

ImageFormat sniff_format(std::span<const uint8_t> head) {
  const Bytes b = head.first(std::min(head.size(), kSniffBytes));
  if (b.size() >= 2 && b[0] == 0xFF && b[1] == 0xD8) return ImageFormat::kJpeg;
  if (starts_with(b, "\x89PNG\r\n\x1a\n")) return ImageFormat::kPng;
  if (starts_with(b, "RIFF") && starts_with(b, "WEBP", 8)) return ImageFormat::kWebp;
  if (starts_with(b, "BM")) return ImageFormat::kBmp;
  if (b.size() >= 3 && b[0] == 'P' && b[1] >= '1' && b[1] <= '6' &&
      (b[2] == ' ' || (b[2] >= '\t' && b[2] <= '\r') || b[2] == '#'))
    return ImageFormat::kPnm;
  if (starts_with(b, std::string_view("II*\0", 4)) || starts_with(b, std::string_view("MM\0*", 4)))
    return ImageFormat::kTiff;
  if (starts_with(b, "GIF87a") || starts_with(b, "GIF89a")) return ImageFormat::kGif;
  return ImageFormat::kUnknown;
}

const char* format_name(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg: return "jpeg";
    case ImageFormat::kPng: return "png";
    case ImageFormat::kWebp: return "webp";
    case ImageFormat::kBmp: return "bmp";
    case ImageFormat::kPnm: return "pnm";
    case ImageFormat::kTiff: return "tiff";
    case ImageFormat::kGif: return "gif";
    case ImageFormat::kUnknown: return "unknown";
  }
  return "unknown";
}

bool decoded_by_opencv(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
    case ImageFormat::kWebp:
    case ImageFormat::kBmp:
    case ImageFormat::kPnm:
    case ImageFormat::kTiff:
      return true;
    default:
      return false;
  }
}

ImageInfo read_image_info(std::span<const uint8_t> bytes, std::string_view file,
                          const DecodeOptions& options) {
  if (bytes.empty()) throw DecodeError(file, Reason::kEmpty, "0 bytes");
  ImageInfo info;
  info.format = sniff_format(bytes);
  if (info.format == ImageFormat::kJpeg) {
    info.jpeg = read_jpeg_info(bytes, file, options);
    info.width = info.jpeg.width;
    info.height = info.jpeg.height;
    return info;
  }
  if (info.format == ImageFormat::kUnknown)
    throw DecodeError(file, Reason::kNotImage, detail::describe_signature(bytes));
  // A TIFF's IFD0 read once: its size and the strip or tile OpenCV will allocate.
  const TiffLayout tiff = info.format == ImageFormat::kTiff ? tiff_layout(bytes, file) : TiffLayout{};
  const Size s = info.format == ImageFormat::kTiff ? tiff.size : header_size(info.format, bytes, file);
  if (s.width <= 0 || s.height <= 0 || s.width > INT32_MAX || s.height > INT32_MAX) {
    char detail[160];
    std::snprintf(detail, sizeof detail, "%s header declares %" PRId64 " x %" PRId64 " pixels",
                  format_name(info.format), s.width, s.height);
    throw DecodeError(file, Reason::kCorrupt, detail);
  }
  info.width = static_cast<int>(s.width);
  info.height = static_cast<int>(s.height);
  detail::check_pixel_limit(info.width, info.height, file, options);
  if (info.format == ImageFormat::kTiff) {
    const int64_t buffer = tiff.buffer_pixels;
    if (buffer > std::max<int64_t>(options.max_pixels, int64_t{s.width} * s.height)) {
      char detail[200];
      std::snprintf(detail, sizeof detail,
                    "tiff strip or tile of %" PRId64 " pixels (RowsPerStrip or TileWidth x TileLength), "
                    "above max_pixels = %" PRId64 " and the image's %" PRId64 " x %" PRId64,
                    buffer, options.max_pixels, s.width, s.height);
      throw DecodeError(file, Reason::kTooLarge, detail);
    }
  }
  return info;
}

namespace detail {

std::string describe_signature(std::span<const uint8_t> bytes) {
  const ImageFormat f = sniff_format(bytes);
  if (f == ImageFormat::kGif) return "GIF image: no GIF decoder (OpenCV 4.6 has none)";
  if (f != ImageFormat::kUnknown) return std::string(format_name(f)) + " image";
  char hex[64] = "";
  const size_t n = std::min<size_t>(bytes.size(), 4);
  int at = std::snprintf(hex, sizeof hex, "starts with");
  for (size_t i = 0; i < n; ++i) at += std::snprintf(hex + at, sizeof hex - at, " 0x%02x", bytes[i]);
  std::string what = hex;
  // AppleDouble (RFC 1740): macOS writes these "._name" files next to copies on non-Apple
  // file systems; they carry the name of the image but no image.
  if (starts_with(bytes, std::string_view("\x00\x05\x16\x07", 4)))
    return what + ": a macOS AppleDouble ('._') resource file, not an image";
  if (starts_with(bytes, std::string_view("II+\0", 4)) ||
      starts_with(bytes, std::string_view("MM\0+", 4)))
    return what + ": a BigTIFF file (not decoded)";
  return what + ": not a JPEG, PNG, WebP, BMP, PNM or TIFF signature";
}

}  // namespace detail
}  // namespace pipebench
