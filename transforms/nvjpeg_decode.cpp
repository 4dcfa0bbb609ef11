// nvJPEG through dlopen (see nvjpeg_decode.h). The declarations below follow NVIDIA's nvJPEG
// documentation (docs.nvidia.com/cuda/nvjpeg, "nvJPEG Type Declarations" and "nvJPEG API
// Reference"): every entry point returns an nvjpegStatus_t (an enum, NVJPEG_STATUS_SUCCESS =
// 0); the handle and decode state are opaque pointers; nvjpegOutputFormat_t numbers
// NVJPEG_OUTPUT_UNCHANGED 0, YUV 1, Y 2, RGB 3, BGR 4, RGBI 5, BGRI 6; nvjpegImage_t holds
// NVJPEG_MAX_COMPONENT (4) channel pointers and their pitches as size_t (CUDA 11 and later).
#include "transforms/nvjpeg_decode.h"

#include <dlfcn.h>

#include <cstddef>
#include <string>

#include "transforms/decode_error.h"

namespace pipebench {
namespace {

using nvjpegStatus_t = int;               // enum; NVJPEG_STATUS_SUCCESS = 0
using nvjpegHandle_t = void*;             // struct nvjpegHandle*
using nvjpegJpegState_t = void*;          // struct nvjpegJpegState*
using nvjpegChromaSubsampling_t = int;    // enum (NVJPEG_CSS_444 = 0, ...)
using nvjpegOutputFormat_t = int;         // enum
constexpr nvjpegOutputFormat_t kOutputRgbi = 5;  // NVJPEG_OUTPUT_RGBI: interleaved RGB in channel[0]
constexpr int kMaxComponent = 4;          // NVJPEG_MAX_COMPONENT
struct nvjpegImage_t {
  unsigned char* channel[kMaxComponent];
  size_t pitch[kMaxComponent];
};
constexpr int kMajorVersion = 0, kMinorVersion = 1;  // libraryPropertyType: MAJOR_VERSION, MINOR_VERSION

template <class F>
bool bind(void* lib, const char* symbol, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, symbol));
  return f != nullptr;
}

std::string loaded_path(void* lib, const std::string& fallback) {
  // dladdr of a symbol inside the library gives the file it came from.
  Dl_info info{};
  void* sym = dlsym(lib, "nvjpegCreateSimple");
  if (sym != nullptr && dladdr(sym, &info) != 0 && info.dli_fname != nullptr) return info.dli_fname;
  return fallback;
}

}  // namespace

struct NvjpegDecoder::Api {
  nvjpegStatus_t (*create_simple)(nvjpegHandle_t*);
  nvjpegStatus_t (*destroy)(nvjpegHandle_t);
  nvjpegStatus_t (*state_create)(nvjpegHandle_t, nvjpegJpegState_t*);
  nvjpegStatus_t (*state_destroy)(nvjpegJpegState_t);
  nvjpegStatus_t (*get_image_info)(nvjpegHandle_t, const unsigned char*, size_t, int*, nvjpegChromaSubsampling_t*,
                                   int*, int*);
  nvjpegStatus_t (*decode)(nvjpegHandle_t, nvjpegJpegState_t, const unsigned char*, size_t, nvjpegOutputFormat_t,
                           nvjpegImage_t*, void* /* cudaStream_t */);
  nvjpegStatus_t (*get_property)(int, int*);  // nvjpegGetProperty(libraryPropertyType, int*)
};

const std::vector<std::string>& nvjpeg_library_names() {
  static const std::vector<std::string> names = {"libnvjpeg.so.13", "libnvjpeg.so"};
  return names;
}

NvjpegDecoder::NvjpegDecoder(const std::string& library) {
  const std::vector<std::string> tries = library.empty() ? nvjpeg_library_names() : std::vector<std::string>{library};
  std::string why;
  std::string name;
  for (const std::string& t : tries) {
    lib_ = dlopen(t.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib_ != nullptr) {
      name = t;
      break;
    }
    const char* e = dlerror();
    why = e ? e : "dlopen failed";
  }
  if (lib_ == nullptr) {
    note_ = "nvJPEG not found (" + why + "; it comes with the CUDA toolkit's libnvjpeg, or set LD_LIBRARY_PATH)";
    return;
  }
  auto* api = new Api{};
  api_ = api;
  const char* missing = nullptr;
  for (const auto& [symbol, ok] : {std::pair{"nvjpegCreateSimple", bind(lib_, "nvjpegCreateSimple", api->create_simple)},
                                   std::pair{"nvjpegDestroy", bind(lib_, "nvjpegDestroy", api->destroy)},
                                   std::pair{"nvjpegJpegStateCreate", bind(lib_, "nvjpegJpegStateCreate", api->state_create)},
                                   std::pair{"nvjpegJpegStateDestroy", bind(lib_, "nvjpegJpegStateDestroy", api->state_destroy)},
                                   std::pair{"nvjpegGetImageInfo", bind(lib_, "nvjpegGetImageInfo", api->get_image_info)},
                                   std::pair{"nvjpegDecode", bind(lib_, "nvjpegDecode", api->decode)}}) {
    if (!ok && missing == nullptr) missing = symbol;
  }
  if (missing != nullptr) {
    note_ = name + " lacks " + missing + ": not an nvJPEG library pipebench can use";
    return;
  }
  bind(lib_, "nvjpegGetProperty", api->get_property);  // optional: the version in the note
  if (!cuda_available()) {
    note_ = "nvJPEG found (" + name + ") but no CUDA device: " + cuda_info().reason;
    return;
  }
  try {
    require_cuda();  // the process's device, current on this thread
  } catch (const std::exception& e) {
    note_ = std::string("nvJPEG: ") + e.what();
    return;
  }
  nvjpegHandle_t h = nullptr;
  if (const nvjpegStatus_t s = api->create_simple(&h); s != 0) {
    note_ = "nvjpegCreateSimple failed (status " + std::to_string(s) + ")";
    return;
  }
  handle_ = h;
  nvjpegJpegState_t st = nullptr;
  if (const nvjpegStatus_t s = api->state_create(h, &st); s != 0) {
    note_ = "nvjpegJpegStateCreate failed (status " + std::to_string(s) + ")";
    return;
  }
  state_ = st;
  int major = 0, minor = 0;
  std::string version;
  if (api->get_property && api->get_property(kMajorVersion, &major) == 0 &&
      api->get_property(kMinorVersion, &minor) == 0)
    version = " " + std::to_string(major) + "." + std::to_string(minor);
  note_ = "nvJPEG" + version + " (" + loaded_path(lib_, name) + ")";
  ready_ = true;
}

NvjpegDecoder::~NvjpegDecoder() {
  if (api_ != nullptr) {
    if (state_ != nullptr) api_->state_destroy(state_);
    if (handle_ != nullptr) api_->destroy(handle_);
  }
  delete api_;
  if (lib_ != nullptr) dlclose(lib_);
}

NvjpegDecoder::Size NvjpegDecoder::decode(std::span<const uint8_t> jpeg, const std::string& file, DeviceBuffer& out,
                                          void* stream) {
  if (!ready_) throw CudaUnavailable("BM_Decode/nvjpeg: " + note_);
  if (jpeg.empty()) throw DecodeError(file, DecodeError::Reason::kEmpty, "0 bytes");
  int components = 0;
  nvjpegChromaSubsampling_t css = 0;
  int widths[kMaxComponent] = {}, heights[kMaxComponent] = {};
  if (const nvjpegStatus_t s =
          api_->get_image_info(handle_, jpeg.data(), jpeg.size(), &components, &css, widths, heights);
      s != 0)
    throw DecodeError(file, DecodeError::Reason::kCorrupt, "nvjpegGetImageInfo: status " + std::to_string(s));
  if (components != 1 && components != 3)
    throw DecodeError(file, DecodeError::Reason::kUnsupported,
                      "nvJPEG: " + std::to_string(components) + " components (1 or 3 decoded)");
  const Size size{heights[0], widths[0]};
  const size_t pitch = static_cast<size_t>(size.width) * 3, bytes = pitch * size.height;
  if (out.bytes() < bytes) out = DeviceBuffer(bytes);  // cudaFree of the old one waits for the device
  nvjpegImage_t image{};
  image.channel[0] = static_cast<unsigned char*>(out.data());
  image.pitch[0] = pitch;
  if (const nvjpegStatus_t s = api_->decode(handle_, state_, jpeg.data(), jpeg.size(), kOutputRgbi, &image, stream);
      s != 0)
    throw DecodeError(file, DecodeError::Reason::kCorrupt, "nvjpegDecode: status " + std::to_string(s));
  return size;
}

}  // namespace pipebench
