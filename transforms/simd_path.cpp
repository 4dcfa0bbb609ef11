// simd_path(): the code path the pixel kernels dispatch to (simd_path.h).
#include "transforms/simd_path.h"

#include "transforms/resize.h"
#include "transforms/x86_avx512.h"

namespace pipebench {

namespace {

#if defined(PB_X86_AVX512)
// The test of the target_clones resolver's "arch=x86-64-v4" clone. GCC names the ISA level;
// clang 14 (the sanitizer and fuzz builds) does not, so there: the level's AVX-512
// features and the x86-64-v3 ones they come with.
bool cpu_is_x86_64_v4() {
#if defined(__clang__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
         __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
#else
  return __builtin_cpu_supports("x86-64-v4");
#endif
}
#endif

}  // namespace

const char* simd_path() {
#if defined(PB_X86_AVX512)
  // The resize / normalize kernels' test (and its switch), and the x86-64-v4 clone's.
  if (detail::cpu_has_avx512() && resample_simd() && cpu_is_x86_64_v4()) return "avx512";
  if (__builtin_cpu_supports("avx2")) return "avx2";
#endif
  return "scalar";
}

}  // namespace pipebench
