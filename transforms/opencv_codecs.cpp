// Loading libpipebench_opencv_codecs.so (see opencv_codecs.h).
#include "transforms/opencv_codecs.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <mutex>

#include "transforms/opencv_codecs_abi.h"

namespace pipebench::detail {
namespace {

constexpr const char* kPluginName = "libpipebench_opencv_codecs.so";

// <executable's folder>/../lib/<plugin>, when that file exists; "" otherwise.
std::string plugin_beside_executable() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const auto path = exe.parent_path().parent_path() / "lib" / kPluginName;
  return std::filesystem::exists(path, ec) ? path.string() : "";
}

struct Plugin {
  PipebenchImdecodeFn imdecode = nullptr;
  std::string reason;  // why imdecode is null
};

const Plugin& plugin() {
  static const Plugin loaded = [] {
    Plugin p;
#ifdef PIPEBENCH_NO_OPENCV_CODECS
    p.reason = "this build was configured with -DPIPEBENCH_OPENCV_CODECS=OFF";
#else
    const char* env = std::getenv("PIPEBENCH_OPENCV_CODECS");
    const bool given = env != nullptr && *env != '\0';
    const char* name = given ? env : kPluginName;
    void* handle = nullptr;
    const std::string beside = given ? std::string() : plugin_beside_executable();
    if (!beside.empty()) {  // found by its file: its own failure is the reason, no search by name
      handle = dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* err = dlerror();
        p.reason = beside + " could not be loaded (" + (err != nullptr ? err : "dlopen failed") + ")";
        return p;
      }
    }
    if (handle == nullptr) handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* err = dlerror();
      p.reason = std::string("OpenCV imgcodecs is not in this installation (") +
                 (err != nullptr ? err : name) +
                 "; a scripts/bundle.sh bundle leaves it out, see docs/gpu.md)";
      return p;
    }
    p.imdecode = reinterpret_cast<PipebenchImdecodeFn>(dlsym(handle, "pipebench_imdecode_bgr"));
    if (p.imdecode == nullptr) p.reason = std::string(name) + " has no pipebench_imdecode_bgr";
#endif
    return p;
  }();
  return loaded;
}

}  // namespace

bool opencv_codecs_available() { return plugin().imdecode != nullptr; }

std::string opencv_codecs_not_found() {
#ifdef PIPEBENCH_NO_OPENCV_CODECS
  return opencv_codecs_unavailable_reason();
#else
  const char* env = std::getenv("PIPEBENCH_OPENCV_CODECS");
  std::error_code ec;
  const bool given = env != nullptr && *env != '\0';
  if (given ? std::filesystem::exists(env, ec) : !plugin_beside_executable().empty()) return "";
  return opencv_codecs_available() ? "" : opencv_codecs_unavailable_reason();
#endif
}

const std::string& opencv_codecs_unavailable_reason() { return plugin().reason; }

ImdecodeResult imdecode_bgr(std::span<const uint8_t> bytes, uint8_t* dst, int rows, int cols) {
  ImdecodeResult r;
  const Plugin& p = plugin();
  if (p.imdecode == nullptr) {
    r.status = ImdecodeResult::Status::kUnavailable;
    r.message = p.reason;
    return r;
  }
  char message[512] = "";
  PipebenchImdecodeShape got{0, 0, 0};
  const int status = p.imdecode(bytes.data(), bytes.size(), dst, rows, cols, &got, message,
                                sizeof message);
  r.rows = got.rows;
  r.cols = got.cols;
  r.type = got.type;
  switch (status) {
    case kPipebenchImdecodeOk: r.status = ImdecodeResult::Status::kOk; break;
    case kPipebenchImdecodeException:
      r.status = ImdecodeResult::Status::kException;
      r.message = message;
      break;
    case kPipebenchImdecodeEmpty: r.status = ImdecodeResult::Status::kEmpty; break;
    default: r.status = ImdecodeResult::Status::kOtherShape; break;
  }
  return r;
}

}  // namespace pipebench::detail
