// cuBLAS through dlopen (see cublas.h).
#include "device/cublas.h"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "device/cuda.h"
#include "device/dl_symbol.h"

namespace pipebench {

#ifdef PIPEBENCH_HAVE_CUDA
namespace {

// The soname of the cuBLAS the build compiled against: libcublas.so.<CUBLAS_VER_MAJOR>.
std::string cublas_soname() { return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR); }


CublasApi load() {
  CublasApi api;
  api.library = cublas_soname();
  void* lib = dlopen(api.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    throw CudaError("cuBLAS could not be loaded (" + std::string(why != nullptr ? why : api.library) +
                    "); put its folder in LD_LIBRARY_PATH (on a GPU node scripts/gpu-suite.sh "
                    "finds python3's nvidia/cublas/lib)");
  }
  using detail::bind_symbol;
  if (!bind_symbol(lib, "cublasCreate_v2", api.create) || !bind_symbol(lib, "cublasDestroy_v2", api.destroy) ||
      !bind_symbol(lib, "cublasSetStream_v2", api.set_stream) || !bind_symbol(lib, "cublasSgemm_v2", api.sgemm) ||
      !bind_symbol(lib, "cublasSaxpy_v2", api.saxpy) ||
      !bind_symbol(lib, "cublasGetStatusString", api.status_string)) {
    const char* err = dlerror();
    const std::string why = err != nullptr ? err : "dlsym failed";
    dlclose(lib);
    throw CudaError(api.library + " lacks a cuBLAS function pipebench uses (" + why + ")");
  }
  return api;  // the library stays loaded for the process
}

}  // namespace

const CublasApi& cublas() {
  static const CublasApi api = load();  // a throw leaves it unset: the next call tries again
  return api;
}

std::string cublas_missing() {
  try {
    (void)cublas();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}
#else
std::string cublas_missing() { return "this build has no CUDA (cuBLAS is CUDA's)"; }
#endif

}  // namespace pipebench
