// One symbol of a library loaded with dlopen, into a typed function pointer: the one helper
// behind the device libraries pipebench loads at run time (cublas.cpp, nvml.cpp).
#pragma once

#include <dlfcn.h>

namespace pipebench::detail {

/// f = the address of `symbol` in `lib` (a dlopen handle), cast to F (a function pointer
/// type). Returns false, with f null and dlerror() holding why, when `lib` lacks it.
template <class F>
bool bind_symbol(void* lib, const char* symbol, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, symbol));
  return f != nullptr;
}

}  // namespace pipebench::detail
