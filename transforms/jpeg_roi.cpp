// Region-of-interest decode through the libjpeg API (libjpeg-turbo 2.1.5, libjpeg.txt
// "Partial image decompression"):
//   1. jpeg_read_header, then the checks (size limit, colour space, window inside image);
//   2. scale_num/scale_denom for DCT scaling, out_color_space RGB (or CMYK, converted
//      here), jpeg_start_decompress;
//   3. jpeg_crop_scanline narrows the output columns to the window, widened outwards to
//      whole iMCUs; the extra columns are dropped while copying each row;
//   4. jpeg_skip_scanlines skips the rows above the window (for a baseline JPEG they are
//      still entropy decoded, but not IDCT'd, upsampled or colour converted);
//   5. the window's rows are read; if they end at the image's last row the decode is
//      finished (so a truncated tail is still reported), otherwise it is aborted there.
//
// The crop asked for is the window plus kEdgeMargin columns on each side (within the
// image), so that smooth ("fancy") chroma upsampling sees every window column's
// neighbours: the window's pixels are then those of a full decode at the same scale, bit
// for bit (tests/fidelity_test.cpp, tests/decode_test.cpp). Without it the columns at a crop
// edge differed by a few levels (the upsampler replicates the edge sample) and libjpeg-turbo's
// SIMD upsampler read samples past the crop's right edge that were never decoded.
//
// A non-JPEG (by content) has no partial decode: it is decoded whole through OpenCV
// imgcodecs into State::full and the window copied out. Both buffers, and the caller's
// `out`, are released after an outlier (BufferTrim).
#include <cstring>
#include <vector>

#include "transforms/imgcodecs_decode.h"
#include "transforms/jpeg_decode.h"
#include "transforms/jpeg_libjpeg.h"

namespace pipebench {

struct RoiDecoder::State {
  detail::LibjpegDecompressor dec;
  std::vector<uint8_t> row;  // kRoiBlockRows scanlines of the widened window, 3 or 4 channels
  Image full;                // a non-JPEG decoded whole
  BufferTrim row_trim, full_trim, out_trim;
};

namespace {

constexpr int kRoiBlockRows = 16;  // rows per jpeg_read_scanlines call
// Columns decoded beyond the window on each side: one chroma sample of 2x horizontal
// subsampling (the widest libjpeg-turbo's smooth upsampler interpolates over).
constexpr int kEdgeMargin = 2;

// What the decode phase needs; plain data only (it runs under setjmp).
struct RoiPlan {
  CropWindow window;  // source pixels
  ScalingFactor factor;
  bool cmyk = false;
  uint8_t* out = nullptr;  // scaled(window.height) x scaled(window.width) x 3
  uint8_t* row = nullptr;  // scratch: kRoiBlockRows scanlines of the widened window
  size_t row_capacity = 0;
};

// Phase 1: parse the header. Returns false after a libjpeg error or warning (caught by
// longjmp; the message is in dec.err).
bool read_header_phase(detail::LibjpegDecompressor& dec, std::span<const uint8_t> jpeg) {
  j_decompress_ptr cinfo = &dec.cinfo;
  if (setjmp(dec.err.jump)) return false;
  jpeg_mem_src(cinfo, jpeg.data(), static_cast<unsigned long>(jpeg.size()));
  jpeg_read_header(cinfo, TRUE);
  return true;
}

bool fail_phase(detail::LibjpegDecompressor& dec, const char* message) {
  std::snprintf(dec.err.message, sizeof dec.err.message, "%s", message);
  dec.err.msg_code = -1;  // -> kCorrupt
  return false;
}

// Phase 2: decode the window's rows into plan.out. Returns false on any error, with the
// message in dec.err. No C++ object with a destructor lives here (longjmp target).
bool decode_phase(detail::LibjpegDecompressor& dec, const RoiPlan& plan) {
  j_decompress_ptr cinfo = &dec.cinfo;
  if (setjmp(dec.err.jump)) return false;

  cinfo->scale_num = static_cast<unsigned>(plan.factor.num);
  cinfo->scale_denom = static_cast<unsigned>(plan.factor.denom);
  cinfo->out_color_space = plan.cmyk ? JCS_CMYK : JCS_EXT_RGB;
  jpeg_start_decompress(cinfo);

  // The window in output (scaled) pixels: origin rounded down, size rounded up, then
  // shifted left/up if needed to stay inside the scaled image.
  const int full_width = static_cast<int>(cinfo->output_width);
  const int full_height = static_cast<int>(cinfo->output_height);
  const int width = plan.factor.scaled(plan.window.width);
  const int height = plan.factor.scaled(plan.window.height);
  if (width > full_width || height > full_height)
    return fail_phase(dec, "scaled window larger than the scaled image");
  int x = static_cast<int>(static_cast<int64_t>(plan.window.x) * plan.factor.num /
                           plan.factor.denom);
  int y = static_cast<int>(static_cast<int64_t>(plan.window.y) * plan.factor.num /
                           plan.factor.denom);
  if (x > full_width - width) x = full_width - width;
  if (y > full_height - height) y = full_height - height;

  // The crop asked for keeps kEdgeMargin columns beyond the window on each side (inside
  // the image): smooth chroma upsampling interpolates a column with its neighbours, and at
  // a crop edge it has none (libjpeg-turbo replicates the edge sample, and its SIMD
  // upsampler reads past the crop's right edge into samples never decoded: valgrind's
  // uninitialised reads). With the margin every window column is upsampled as in a whole
  // decode; the margin's columns are dropped with the widening's.
  const int ask_x = x > kEdgeMargin ? x - kEdgeMargin : 0;
  const int ask_right = x + width + kEdgeMargin < full_width ? x + width + kEdgeMargin : full_width;
  JDIMENSION crop_x = static_cast<JDIMENSION>(ask_x), crop_width = static_cast<JDIMENSION>(ask_right - ask_x);
  if (ask_right - ask_x < full_width) jpeg_crop_scanline(cinfo, &crop_x, &crop_width);
  else crop_x = 0, crop_width = cinfo->output_width;
  const int components = cinfo->output_components;  // 3 (RGB) or 4 (CMYK)
  const size_t skip_bytes = static_cast<size_t>(x - static_cast<int>(crop_x)) * components;
  if (static_cast<size_t>(crop_width) * components * kRoiBlockRows > plan.row_capacity ||
      skip_bytes + static_cast<size_t>(width) * components >
          static_cast<size_t>(crop_width) * components)
    return fail_phase(dec, "jpeg_crop_scanline returned an unexpected region");

  if (y > 0 && jpeg_skip_scanlines(cinfo, static_cast<JDIMENSION>(y)) !=
                   static_cast<JDIMENSION>(y))
    return fail_phase(dec, "jpeg_skip_scanlines skipped fewer rows than asked");

  // Rows are read kRoiBlockRows at a time: straight into `out` when the crop needed no
  // widening (and no CMYK conversion), else into the scratch block and copied from there.
  // (Many rows per jpeg_read_scanlines call let the upsampler write its rows in place.)
  const size_t out_row_bytes = static_cast<size_t>(width) * 3;
  const size_t crop_row_bytes = static_cast<size_t>(crop_width) * components;
  const bool direct = !plan.cmyk && skip_bytes == 0 && static_cast<int>(crop_width) == width;
  JSAMPROW rows[kRoiBlockRows];
  for (int r = 0; r < height;) {
    const int want = height - r < kRoiBlockRows ? height - r : kRoiBlockRows;
    for (int i = 0; i < want; ++i)
      rows[i] = direct ? plan.out + (r + i) * out_row_bytes : plan.row + i * crop_row_bytes;
    const int got = static_cast<int>(jpeg_read_scanlines(cinfo, rows, want));
    if (got <= 0) return fail_phase(dec, "jpeg_read_scanlines returned no row");
    if (!direct) {
      for (int i = 0; i < got; ++i) {
        uint8_t* dst = plan.out + (r + i) * out_row_bytes;
        if (plan.cmyk)
          detail::cmyk_to_rgb(rows[i] + skip_bytes, dst, static_cast<size_t>(width));
        else
          std::memcpy(dst, rows[i] + skip_bytes, out_row_bytes);
      }
    }
    r += got;
  }
  // Reading on to the end only costs something when rows remain; when the window ends at
  // the image's bottom, finishing also checks the data up to EOI.
  if (cinfo->output_scanline == cinfo->output_height) jpeg_finish_decompress(cinfo);
  else jpeg_abort_decompress(cinfo);
  return true;
}

void check_window(const CropWindow& window, int width, int height, std::string_view file) {
  const int64_t right = static_cast<int64_t>(window.x) + window.width;
  const int64_t bottom = static_cast<int64_t>(window.y) + window.height;
  if (window.x < 0 || window.y < 0 || window.width <= 0 || window.height <= 0 ||
      right > width || bottom > height) {
    char detail[200];
    std::snprintf(detail, sizeof detail,
                  "ROI window x=%d y=%d width=%d height=%d is not inside the %d x %d image",
                  window.x, window.y, window.width, window.height, width, height);
    throw DecodeError(file, DecodeError::Reason::kBadArgument, detail);
  }
}

// The window's rows of `full` (3 channels) into out.
void copy_window(const Image& full, const CropWindow& w, Image& out) {
  out.resize(w.height, w.width, 3);
  const size_t bytes = static_cast<size_t>(w.width) * 3;
  for (int r = 0; r < w.height; ++r)
    std::memcpy(out.row(r), full.row(w.y + r) + static_cast<size_t>(w.x) * 3, bytes);
}

}  // namespace

RoiDecoder::RoiDecoder(DecodeOptions options)
    : options_(options), state_(std::make_unique<State>()) {}

RoiDecoder::~RoiDecoder() = default;

size_t RoiDecoder::scratch_bytes() const {
  return state_->row.capacity() + state_->full.data.capacity();
}

ScalingFactor RoiDecoder::decode(std::span<const uint8_t> jpeg, std::string_view file,
                                 const CropWindow& window, int min_width, int min_height,
                                 Image& out) {
  if (!detail::is_jpeg(jpeg) && !jpeg.empty()) {
    state_->row_trim.fit(state_->row, 0);  // unused on this path: released after an outlier
    detail::decode_imgcodecs(jpeg, file, options_, state_->full_trim, state_->full);
    check_window(window, state_->full.width, state_->full.height, file);
    state_->out_trim.fit(out.data, static_cast<size_t>(window.width) * window.height * 3);
    copy_window(state_->full, window, out);
    return ScalingFactor{};
  }
  detail::check_signature(jpeg, file);
  state_->full_trim.fit(state_->full.data, 0);  // only non-JPEGs use it
  detail::LibjpegDecompressor& dec = state_->dec;
  dec.err.scan_limit_hit = false;
  if (!read_header_phase(dec, jpeg)) {
    jpeg_abort_decompress(&dec.cinfo);
    throw detail::libjpeg_error(dec.err, file);
  }

  RoiPlan plan;
  plan.window = window;
  try {
    const JpegInfo info = detail::info_from_header(dec.cinfo, file, options_);
    check_window(window, info.width, info.height, file);
    if (min_width > 0 || min_height > 0)
      plan.factor = choose_scaling(window.width, window.height, min_width, min_height);
    plan.cmyk = info.components == 4;
    const int out_h = plan.factor.scaled(window.height), out_w = plan.factor.scaled(window.width);
    state_->out_trim.fit(out.data, static_cast<size_t>(out_w) * out_h * 3);
    out.resize(out_h, out_w, 3);
    // The widened crop never exceeds the scaled image's width.
    const size_t row_bytes =
        static_cast<size_t>(plan.factor.scaled(info.width)) * 4 * kRoiBlockRows;
    state_->row_trim.fit(state_->row, row_bytes);
    if (state_->row.size() < row_bytes) state_->row.resize(row_bytes);
  } catch (...) {
    jpeg_abort_decompress(&dec.cinfo);
    throw;
  }
  plan.out = out.ptr();
  plan.row = state_->row.data();
  plan.row_capacity = state_->row.size();

  if (!decode_phase(dec, plan)) {
    jpeg_abort_decompress(&dec.cinfo);
    out.resize(0, 0, 3);
    throw detail::libjpeg_error(dec.err, file);
  }
  return plan.factor;
}

}  // namespace pipebench
