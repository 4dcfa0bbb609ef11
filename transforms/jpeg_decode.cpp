// TurboJPEG decoding (full and DCT scaled), header parsing with the libjpeg API, and the
// libjpeg error wrapper shared with jpeg_roi.cpp and jpeg_opencv.cpp (jpeg_libjpeg.h).
//
// TurboJPEG flags: TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS and nothing else, so smooth
// ("fancy") chroma upsampling and the accurate integer IDCT (JDCT_ISLOW) stay on: the
// defaults of tjDecompress2() and of tjbench (libjpeg-turbo 2.1.5), which makes the
// "decode vs tjbench" comparison like for like. STOPONWARNING and LIMITSCANS only change
// what happens on bad data (stop at the first warning; refuse > 500 progressive scans).
#include "transforms/jpeg_decode.h"

#include <turbojpeg.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "transforms/imgcodecs_decode.h"
#include "transforms/jpeg_libjpeg.h"
#include "transforms/ops/test_slowdown.h"

namespace pipebench {
namespace detail {
namespace {

void error_exit_longjmp(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<LibjpegDecompressor::ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  err->msg_code = cinfo->err->msg_code;
  std::longjmp(err->jump, 1);
}

// msg_level -1 is a warning (corrupt or truncated data that libjpeg would paper over);
// 0 and up are trace messages, ignored.
void emit_message_longjmp(j_common_ptr cinfo, int msg_level) {
  if (msg_level >= 0) return;
  cinfo->err->num_warnings++;
  error_exit_longjmp(cinfo);
}

void output_message_silent(j_common_ptr) {}

void progress_limit_scans(j_common_ptr cinfo) {
  if (!cinfo->is_decompressor) return;
  auto* dinfo = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (dinfo->input_scan_number <= kMaxProgressiveScans) return;
  auto* progress = reinterpret_cast<LibjpegDecompressor::Progress*>(cinfo->progress);
  std::snprintf(progress->err->message, sizeof progress->err->message,
                "progressive JPEG has more than %d scans", kMaxProgressiveScans);
  progress->err->msg_code = -1;
  progress->err->scan_limit_hit = true;
  std::longjmp(progress->err->jump, 1);
}

DecodeError::Reason reason_for_code(int code) {
  switch (code) {
    case JWRN_JPEG_EOF:
    case JERR_INPUT_EOF:
    case JERR_INPUT_EMPTY:
      return DecodeError::Reason::kTruncated;
    case JERR_NO_SOI:
      return DecodeError::Reason::kNotImage;
    case JERR_BAD_PRECISION:
    case JERR_CONVERSION_NOTIMPL:
    case JERR_NOTIMPL:
    case JERR_NOT_COMPILED:
    case JERR_ARITH_NOTIMPL:
    case JERR_SOF_UNSUPPORTED:  // e.g. SOF3, lossless: not in libjpeg-turbo 2.1
    case JERR_EMPTY_IMAGE:
      return DecodeError::Reason::kUnsupported;
    case JERR_IMAGE_TOO_BIG:
      return DecodeError::Reason::kTooLarge;
    default:
      return DecodeError::Reason::kCorrupt;
  }
}

constexpr int kClassifiedCodes[] = {
    JWRN_JPEG_EOF,       JERR_INPUT_EOF,          JERR_INPUT_EMPTY, JERR_NO_SOI,
    JERR_BAD_PRECISION,  JERR_CONVERSION_NOTIMPL, JERR_NOTIMPL,     JERR_NOT_COMPILED,
    JERR_ARITH_NOTIMPL,  JERR_EMPTY_IMAGE,        JERR_IMAGE_TOO_BIG, JERR_SOF_UNSUPPORTED};

const char* subsampling_name(const jpeg_decompress_struct& cinfo) {
  if (cinfo.num_components == 1) return "gray";
  const jpeg_component_info* c = cinfo.comp_info;
  // Chroma (components 1 and 2) must be 1x1; a CMYK/YCCK K channel must match Y.
  for (int i = 1; i < 3; ++i) {
    if (c[i].h_samp_factor != 1 || c[i].v_samp_factor != 1) {
      // All components equal (e.g. 2x2 everywhere) is still 4:4:4.
      bool all_equal = true;
      for (int k = 1; k < cinfo.num_components; ++k)
        all_equal = all_equal && c[k].h_samp_factor == c[0].h_samp_factor &&
                    c[k].v_samp_factor == c[0].v_samp_factor;
      return all_equal ? "4:4:4" : "other";
    }
  }
  if (cinfo.num_components == 4 &&
      (c[3].h_samp_factor != c[0].h_samp_factor || c[3].v_samp_factor != c[0].v_samp_factor))
    return "other";
  const int h = c[0].h_samp_factor, v = c[0].v_samp_factor;
  if (h == 1 && v == 1) return "4:4:4";
  if (h == 2 && v == 1) return "4:2:2";
  if (h == 2 && v == 2) return "4:2:0";
  if (h == 1 && v == 2) return "4:4:0";
  if (h == 4 && v == 1) return "4:1:1";
  return "other";
}

const tjscalingfactor* turbo_factors(int* count) {
  static int n = 0;
  static const tjscalingfactor* factors = tjGetScalingFactors(&n);
  *count = factors ? n : 0;
  return factors;
}

}  // namespace

void check_signature(std::span<const uint8_t> jpeg, std::string_view file) {
  if (jpeg.empty()) throw DecodeError(file, DecodeError::Reason::kEmpty, "0 bytes");
  if (!is_jpeg(jpeg)) {
    const ImageFormat f = sniff_format(jpeg);
    throw DecodeError(file,
                      f == ImageFormat::kUnknown ? DecodeError::Reason::kNotImage
                                                 : DecodeError::Reason::kUnsupported,
                      "no JPEG SOI marker 0xFF 0xD8: " + describe_signature(jpeg));
  }
}

LibjpegDecompressor::LibjpegDecompressor() {
  std::memset(&cinfo, 0, sizeof cinfo);
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = error_exit_longjmp;
  err.pub.emit_message = emit_message_longjmp;
  err.pub.output_message = output_message_silent;
  progress.pub.progress_monitor = progress_limit_scans;
  progress.err = &err;
  if (setjmp(err.jump)) {
    throw std::runtime_error(std::string("jpeg_create_decompress failed: ") + err.message);
  }
  jpeg_create_decompress(&cinfo);
  cinfo.progress = &progress.pub;  // after create, which clears the struct
}

LibjpegDecompressor::~LibjpegDecompressor() { jpeg_destroy_decompress(&cinfo); }

DecodeError libjpeg_error(const LibjpegDecompressor::ErrorManager& err, std::string_view file) {
  const DecodeError::Reason reason =
      err.scan_limit_hit ? DecodeError::Reason::kCorrupt : reason_for_code(err.msg_code);
  return DecodeError(file, reason, std::string("libjpeg: ") + err.message);
}

DecodeError::Reason reason_for_message(std::string_view message) {
  static const char* const* table = [] {
    static jpeg_error_mgr std_err;
    jpeg_std_error(&std_err);
    return std_err.jpeg_message_table;
  }();
  for (const int code : kClassifiedCodes) {
    std::string_view templ = table[code];
    templ = templ.substr(0, templ.find('%'));  // the fixed part before any argument
    if (!templ.empty() && message.starts_with(templ)) return reason_for_code(code);
  }
  return DecodeError::Reason::kCorrupt;
}

// kTooLarge when width x height exceeds options.max_pixels: checked from the header, before
// any pixel buffer is allocated.
void check_pixel_limit(int width, int height, std::string_view file, const DecodeOptions& options) {
  const int64_t pixels = static_cast<int64_t>(width) * height;
  if (pixels > options.max_pixels) {
    char detail[160];
    std::snprintf(detail, sizeof detail, "%d x %d = %" PRId64 " pixels, above max_pixels = %" PRId64,
                  width, height, pixels, options.max_pixels);
    throw DecodeError(file, DecodeError::Reason::kTooLarge, detail);
  }
}

JpegInfo info_from_header(const jpeg_decompress_struct& cinfo, std::string_view file,
                          const DecodeOptions& options) {
  JpegInfo info;
  info.width = static_cast<int>(cinfo.image_width);
  info.height = static_cast<int>(cinfo.image_height);
  info.components = cinfo.num_components;
  info.progressive = cinfo.progressive_mode != 0;
  check_pixel_limit(info.width, info.height, file, options);
  const J_COLOR_SPACE cs = cinfo.jpeg_color_space;
  const int n = cinfo.num_components;
  const bool supported = (n == 1 && cs == JCS_GRAYSCALE) ||
                         (n == 3 && (cs == JCS_YCbCr || cs == JCS_RGB)) ||
                         (n == 4 && (cs == JCS_CMYK || cs == JCS_YCCK));
  if (!supported) {
    char detail[128];
    std::snprintf(detail, sizeof detail,
                  "libjpeg colour space %d with %d components has no RGB conversion",
                  static_cast<int>(cs), n);
    throw DecodeError(file, DecodeError::Reason::kUnsupported, detail);
  }
  info.subsampling = subsampling_name(cinfo);
  return info;
}

JpegInfo read_header(std::span<const uint8_t> jpeg, std::string_view file,
                     const DecodeOptions& options, size_t* entropy_offset) {
  check_signature(jpeg, file);
  thread_local LibjpegDecompressor dec;
  j_decompress_ptr cinfo = &dec.cinfo;
  dec.err.scan_limit_hit = false;
  if (setjmp(dec.err.jump)) {
    jpeg_abort_decompress(cinfo);
    throw libjpeg_error(dec.err, file);
  }
  jpeg_mem_src(cinfo, jpeg.data(), static_cast<unsigned long>(jpeg.size()));
  jpeg_read_header(cinfo, TRUE);
  if (entropy_offset) *entropy_offset = jpeg.size() - cinfo->src->bytes_in_buffer;
  JpegInfo info;
  try {
    info = info_from_header(*cinfo, file, options);
  } catch (...) {
    jpeg_abort_decompress(cinfo);
    throw;
  }
  jpeg_abort_decompress(cinfo);
  return info;
}

bool has_eoi_after(std::span<const uint8_t> jpeg, size_t offset) {
  for (size_t end = jpeg.size(); end >= offset + 2; --end) {
    if (jpeg[end - 1] == 0xD9 && jpeg[end - 2] == 0xFF) return true;
  }
  return false;
}

void cmyk_to_rgb(const uint8_t* cmyk, uint8_t* rgb, size_t n) {
  // x * k / 255 rounded to nearest, exact for all 8-bit x, k.
  auto mul = [](unsigned x, unsigned k) {
    const unsigned t = x * k + 128;
    return static_cast<uint8_t>((t + (t >> 8)) >> 8);
  };
  for (size_t i = 0; i < n; ++i) {
    const unsigned c = cmyk[4 * i], m = cmyk[4 * i + 1], y = cmyk[4 * i + 2],
                   k = cmyk[4 * i + 3];
    rgb[3 * i] = mul(c, k);
    rgb[3 * i + 1] = mul(m, k);
    rgb[3 * i + 2] = mul(y, k);
  }
}

}  // namespace detail

JpegInfo read_jpeg_info(std::span<const uint8_t> jpeg, std::string_view file,
                        const DecodeOptions& options) {
  return detail::read_header(jpeg, file, options, nullptr);
}

ScalingFactor choose_scaling(int width, int height, int min_width, int min_height) {
  int count = 0;
  const tjscalingfactor* factors = detail::turbo_factors(&count);
  ScalingFactor best;  // 1/1
  for (int i = 0; i < count; ++i) {
    const ScalingFactor f{factors[i].num, factors[i].denom};
    if (f.num >= f.denom) continue;  // never upscale; 1/1 is the default
    if (min_width > 0 && f.scaled(width) < min_width) continue;
    if (min_height > 0 && f.scaled(height) < min_height) continue;
    if (f.num * best.denom < best.num * f.denom) best = f;
  }
  return best;
}

namespace {

constexpr int kTurboFlags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;

struct TurboHeader {
  int width = 0;
  int height = 0;
  bool cmyk = false;  // CMYK or YCCK: decoded to TJPF_CMYK, then converted
};

// `handle` is replaced by a fresh one when the header cannot be read: libjpeg-turbo
// 2.1.5's tjDecompressHeader3() returns from an error without jpeg_abort_decompress(),
// leaving the instance mid-header, and the next call on it then fails on a valid file
// ("Invalid JPEG file structure: two SOI markers").
TurboHeader turbo_header(void*& handle, std::span<const uint8_t> jpeg, std::string_view file,
                         const DecodeOptions& options) {
  detail::check_signature(jpeg, file);
  TurboHeader h;
  int subsamp = 0, colorspace = 0;
  const bool read = tjDecompressHeader3(static_cast<tjhandle>(handle), jpeg.data(),
                                        static_cast<unsigned long>(jpeg.size()), &h.width,
                                        &h.height, &subsamp, &colorspace) == 0;
  // It also returns 0, leaving the sizes unset, for a "tables-only" datastream, which is
  // what a file cut before its SOF looks like (with the EOF warning ignored, as on a handle
  // that has not decoded yet): then tjDecompress2 failed with "Invalid argument", called
  // corrupt. The libjpeg reader below calls it truncated.
  if (!read || h.width <= 0 || h.height <= 0) {
    tjhandle fresh = tjInitDecompress();
    if (!fresh)
      throw std::runtime_error(std::string("tjInitDecompress failed: ") +
                               tjGetErrorStr2(nullptr));
    tjDestroy(static_cast<tjhandle>(handle));
    handle = fresh;
    // The libjpeg reader classifies the failure by message code and throws; it succeeds
    // only where TurboJPEG cannot name the chroma subsampling, which tjDecompress2 does
    // not need.
    const JpegInfo info = detail::read_header(jpeg, file, options, nullptr);
    h.width = info.width;
    h.height = info.height;
    h.cmyk = info.components == 4;
    return h;
  }
  h.cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  detail::check_pixel_limit(h.width, h.height, file, options);
  return h;
}

// Decompresses at the factor that yields exactly out_width x out_height (tjDecompress2
// picks the largest factor whose output fits), converting CMYK in place.
void turbo_decompress(tjhandle handle, std::span<const uint8_t> jpeg, std::string_view file,
                      const TurboHeader& h, int out_width, int out_height, Image& out) {
  out.resize(out_height, out_width, h.cmyk ? 4 : 3);
  if (tjDecompress2(handle, jpeg.data(), static_cast<unsigned long>(jpeg.size()), out.ptr(),
                    out_width, 0, out_height, h.cmyk ? TJPF_CMYK : TJPF_RGB,
                    kTurboFlags) != 0) {
    const bool warning = tjGetErrorCode(handle) == TJERR_WARNING;
    const char* message = tjGetErrorStr2(handle);
    out.resize(0, 0, 3);
    throw DecodeError(file, detail::reason_for_message(message),
                      std::string("TurboJPEG ") + (warning ? "warning: " : "error: ") +
                          message);
  }
  if (h.cmyk) {
    detail::cmyk_to_rgb(out.ptr(), out.ptr(), static_cast<size_t>(out_width) * out_height);
    out.resize(out_height, out_width, 3);
  }
}

}  // namespace

TurboDecoder::TurboDecoder(DecodeOptions options) : options_(options) {
  handle_ = tjInitDecompress();
  if (!handle_)
    throw std::runtime_error(std::string("tjInitDecompress failed: ") +
                             tjGetErrorStr2(nullptr));
}

void TurboDecoder::swap_scratch(TurboDecoder& other) noexcept {
  std::swap(handle_, other.handle_);
  std::swap(out_trim_, other.out_trim_);
}

TurboDecoder::~TurboDecoder() {
  if (handle_) tjDestroy(static_cast<tjhandle>(handle_));
}

void TurboDecoder::decode(std::span<const uint8_t> jpeg, std::string_view file, Image& out) {
  const TestSlowdown& hook = test_slowdown();
  if (hook.op != kTurboDecodeHook || hook.pct <= 0) {
    decode_once(jpeg, file, out);
    return;
  }
  // TEST-ONLY (transforms/ops/test_slowdown.h): the full decode slowed by pct % of its
  // time, or made to do about pct % more work: the image's first rows decoded again.
  const auto t0 = std::chrono::steady_clock::now();
  decode_once(jpeg, file, out);
  if (!hook.work) {
    apply_test_slowdown(kTurboDecodeHook, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::steady_clock::now() - t0)
                                              .count());
    return;
  }
  if (!detail::is_jpeg(jpeg) || out.height <= 0) return;  // only JPEGs carry the extra rows
  // A row credit of pct % of each image's height, spent in windows of kHookRows rows (one
  // iMCU row of 4:2:0, the decoder's unit) decoded again through the ROI decoder, which
  // stops after the window's last row. A window also parses the header again and sets up
  // the decoder (Huffman and colour tables): about kSetupRows rows' worth on the gate's
  // 500 x 375 images, so each window is charged for that too. Measured under Callgrind on
  // the gate's 8-image set: pct 2 adds 2.02 % to BM_Decode/turbo_full's instructions
  // (3.0 % without the charge). The remainder carries to the next call: a run of images
  // gets about pct % more decode work, within one window. A progressive JPEG reads every
  // scan before its first row comes out, so there a window costs nearly a whole decode.
  constexpr int kHookRows = 16;
  constexpr int kSetupRows = 14;
  thread_local double row_credit = 0;
  thread_local RoiDecoder again;
  thread_local Image extra;
  row_credit += out.height * hook.pct / 100.0;
  const int rows = std::min(kHookRows, out.height);
  while (row_credit >= rows + kSetupRows) {
    row_credit -= rows + kSetupRows;
    try {
      again.decode(jpeg, file, CropWindow{0, 0, out.width, rows}, 0, 0, extra);
    } catch (const std::exception&) {  // `out` is already decoded: the extra work is moot
      row_credit = 0;
      return;
    }
  }
}

void TurboDecoder::decode_once(std::span<const uint8_t> jpeg, std::string_view file, Image& out) {
  if (!detail::is_jpeg(jpeg) && !jpeg.empty()) {
    detail::decode_imgcodecs(jpeg, file, options_, out_trim_, out);
    return;
  }
  const TurboHeader h = turbo_header(handle_, jpeg, file, options_);
  fit_output(h.width, h.height, h.cmyk, out);
  turbo_decompress(static_cast<tjhandle>(handle_), jpeg, file, h, h.width, h.height, out);
}

ScalingFactor TurboDecoder::decode_scaled(std::span<const uint8_t> jpeg, std::string_view file,
                                          int min_width, int min_height, Image& out) {
  if (!detail::is_jpeg(jpeg) && !jpeg.empty()) {
    detail::decode_imgcodecs(jpeg, file, options_, out_trim_, out);
    return ScalingFactor{};  // no DCT to scale: full size
  }
  const TurboHeader h = turbo_header(handle_, jpeg, file, options_);
  const ScalingFactor chosen = choose_scaling(h.width, h.height, min_width, min_height);
  const int out_width = chosen.scaled(h.width), out_height = chosen.scaled(h.height);
  // Several factors can give the same output size for tiny images; report the one
  // tjDecompress2 uses: the largest whose output fits (its list runs largest first).
  ScalingFactor used = chosen;
  int count = 0;
  const tjscalingfactor* factors = detail::turbo_factors(&count);
  for (int i = 0; i < count; ++i) {
    const ScalingFactor f{factors[i].num, factors[i].denom};
    if (f.scaled(h.width) <= out_width && f.scaled(h.height) <= out_height) {
      used = f;
      break;
    }
  }
  fit_output(out_width, out_height, h.cmyk, out);
  turbo_decompress(static_cast<tjhandle>(handle_), jpeg, file, h, out_width, out_height, out);
  return used;
}

void TurboDecoder::fit_output(int width, int height, bool cmyk, Image& out) {
  out_trim_.fit(out.data, static_cast<size_t>(width) * height * (cmyk ? 4 : 3));
}

}  // namespace pipebench
