// simd_path(): the code path the pixel kernels dispatch to (simd_path.h).
#include "transforms/simd_path.h"

#include "transforms/resize.h"
#include "transforms/x86_avx512.h"

namespace pipebench {

const char* simd_path() {
#if defined(PB_X86_AVX512)
  // The resize / normalize kernels' test (and its switch), and the x86-64-v4 clone's.
  if (detail::cpu_has_avx512() && resample_simd() && __builtin_cpu_supports("x86-64-v4"))
    return "avx512";
  if (__builtin_cpu_supports("avx2")) return "avx2";
#endif
  return "scalar";
}

}  // namespace pipebench
