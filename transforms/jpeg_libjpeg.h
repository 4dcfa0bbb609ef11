// Internal to the JPEG decoders (jpeg_decode.cpp, jpeg_roi.cpp, jpeg_opencv.cpp): one
// wrapper of the libjpeg API's error handling, shared header parsing and colour helpers.
// Not part of the public API.
//
// Error policy: libjpeg reports fatal errors through error_exit() (whose default calls
// exit()) and warnings through emit_message(-1). LibjpegDecompressor replaces both: each
// formats the library's own message, records its code and longjmp()s to `err.jump`, so a
// warning (e.g. JWRN_JPEG_EOF "Premature end of JPEG file", after which libjpeg would pad
// the image with grey) stops the decode like an error. Nothing is printed.
//
// setjmp/longjmp rule for callers: the function that calls setjmp(err.jump) must hold no
// automatic object with a non-trivial destructor alive between the setjmp and a libjpeg
// call (C++ [csetjmp.syn]); after the jump it must call jpeg_abort_decompress() before
// reusing the object, then throw libjpeg_error().
#pragma once

#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <span>
#include <string_view>

#include <jpeglib.h>
#include <jerror.h>  // J_MESSAGE_CODE values (JWRN_JPEG_EOF, ...)

#include "transforms/decode_error.h"
#include "transforms/jpeg_decode.h"

namespace pipebench::detail {

/// Progressive JPEGs with more scans than this are refused (kCorrupt), as TurboJPEG's
/// TJFLAG_LIMITSCANS does (libjpeg-turbo 2.1 uses the same bound, 500), so that a crafted
/// file cannot make a decode take minutes.
inline constexpr int kMaxProgressiveScans = 500;

/// Throws DecodeError kEmpty (zero bytes) or kNotImage (no 0xFF 0xD8 at the start).
void check_signature(std::span<const uint8_t> jpeg, std::string_view file);

/// A reusable libjpeg decompressor (jpeg_create_decompress once; jpeg_abort_decompress
/// between images). Not copyable or movable: libjpeg keeps pointers into it.
struct LibjpegDecompressor {
  struct ErrorManager {
    jpeg_error_mgr pub;                  // must stay first: libjpeg casts to it
    std::jmp_buf jump;                   // where error_exit / warnings longjmp to
    char message[JMSG_LENGTH_MAX] = {};  // the library's formatted message
    int msg_code = 0;                    // J_MESSAGE_CODE of that message
    bool scan_limit_hit = false;         // set by the progress monitor
  };
  struct Progress {
    jpeg_progress_mgr pub;  // must stay first
    ErrorManager* err = nullptr;
  };

  LibjpegDecompressor();
  ~LibjpegDecompressor();
  LibjpegDecompressor(const LibjpegDecompressor&) = delete;
  LibjpegDecompressor& operator=(const LibjpegDecompressor&) = delete;

  jpeg_decompress_struct cinfo;
  ErrorManager err;
  Progress progress;
};

/// The DecodeError for the message a LibjpegDecompressor caught (after the longjmp).
DecodeError libjpeg_error(const LibjpegDecompressor::ErrorManager& err, std::string_view file);

/// Reason for a libjpeg message (TurboJPEG only hands out the text, not the code):
/// "Premature end of JPEG file" -> kTruncated; unsupported precision, colour conversion or
/// feature -> kUnsupported; anything else -> kCorrupt.
DecodeError::Reason reason_for_message(std::string_view message);

/// Header facts after jpeg_read_header(); throws kUnsupported for a colour space we do not
/// convert to RGB and kTooLarge above options.max_pixels.
JpegInfo info_from_header(const jpeg_decompress_struct& cinfo, std::string_view file,
                          const DecodeOptions& options);

/// read_jpeg_info() with a thread-local decompressor (no allocation after the first call);
/// also returns the byte offset where the first scan's entropy-coded data starts.
JpegInfo read_header(std::span<const uint8_t> jpeg, std::string_view file,
                     const DecodeOptions& options, size_t* entropy_offset);

/// True when an EOI marker (0xFF 0xD9) occurs at or after `offset`. Entropy-coded data
/// cannot contain one (0xFF is stuffed as 0xFF 0x00; only RSTn markers appear), so a file
/// cut anywhere after its first SOS lacks it. Scans backwards from the end.
bool has_eoi_after(std::span<const uint8_t> jpeg, size_t offset);

/// Adobe (inverted) CMYK -> RGB for n pixels: R = C*K/255, G = M*K/255, B = Y*K/255,
/// rounded to nearest (the convention of Photoshop's CMYK JPEGs, which libjpeg leaves
/// as stored). `rgb` may equal `cmyk` (converts in place, front to back).
void cmyk_to_rgb(const uint8_t* cmyk, uint8_t* rgb, size_t n);

}  // namespace pipebench::detail
