// OpenCV imgcodecs, loaded on first use: the decode path for non-JPEG images (PNG, WebP,
// BMP, PNM, TIFF: imgcodecs_decode.h) and the `decode_opencv` backend (jpeg_decode.h).
//
// Why a plugin: Debian's libopencv-imgcodecs406 pulls in GDAL and about 700 MB of shared
// libraries, which would make every binary depend on them; the relocatable bundle for GPU
// nodes (scripts/bundle.sh, at most 64 MiB) leaves them out. So pipebench's binaries do
// not link imgcodecs: the only code that does is libpipebench_opencv_codecs.so
// (opencv_codecs_plugin.cpp), built when the CMake option PIPEBENCH_OPENCV_CODECS is ON
// (the default) into <build>/lib. It is looked for first at <the executable's
// folder>/../lib/ (build/<preset>/{bench,tests}/ -> build/<preset>/lib/, and a bundle's
// bin/ -> lib/), then by name through the library search path. The explicit path comes
// first because a sanitizer runtime intercepts dlopen, and glibc then searches the
// interceptor's RUNPATH instead of the executable's (seen under ASan: "cannot open shared
// object file" with the plugin in place). dlopen is tried once per process; where the plugin (or imgcodecs under it)
// cannot be loaded, the functions below say why, and the callers turn that into a
// DecodeError kUnsupported naming the file ("... needs OpenCV imgcodecs: ...").
// The environment variable PIPEBENCH_OPENCV_CODECS, when set, is the plugin's path
// (tried instead of the library search path).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace pipebench::detail {

/// True when the plugin is loaded (loads it on the first call; thread-safe).
bool opencv_codecs_available();

/// Why the plugin is not available ("" when it is): the dlopen error, or that this build
/// was configured with -DPIPEBENCH_OPENCV_CODECS=OFF.
const std::string& opencv_codecs_unavailable_reason();

/// Why the plugin cannot be expected to load ("" when it can), without loading it where
/// that can be told from files: "" when its file lies beside the executable (or
/// PIPEBENCH_OPENCV_CODECS names an existing file), the reason when the build has no
/// plugin; otherwise (a search by name) it loads the plugin to find out. For listing the
/// cases that need it without paying for the load (about 700 MB of libraries: 62 % of a
/// one-case pipebench run's instructions under Valgrind's Callgrind): the plugin's own
/// libraries can still fail at the first real use, which then says why.
std::string opencv_codecs_not_found();

/// What imdecode_bgr found.
struct ImdecodeResult {
  enum class Status { kOk, kUnavailable, kException, kEmpty, kOtherShape };
  Status status = Status::kOk;
  int rows = 0, cols = 0, type = 0;  ///< what OpenCV returned (kOtherShape)
  std::string message;               ///< kException: OpenCV's what(); kUnavailable: why
};

/// cv::imdecode(bytes, IMREAD_COLOR | IMREAD_IGNORE_ORIENTATION) into `dst`, a
/// rows x cols x 3 uint8 BGR buffer (HWC, stride cols * 3) that the caller sized from the
/// file's header. Never throws; kUnavailable when the plugin cannot be loaded.
ImdecodeResult imdecode_bgr(std::span<const uint8_t> bytes, uint8_t* dst, int rows, int cols);

}  // namespace pipebench::detail
