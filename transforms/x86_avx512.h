// AVX-512 for the pixel kernels (resize_kernels.cpp, normalize.cpp), in one place: the
// intrinsics, the target attribute that lets a function use them in a baseline x86-64
// build, and the runtime check that the CPU has them. On other compilers or CPUs
// PB_X86_AVX512 stays undefined and the kernels keep their scalar paths, which give the
// same values.
//
// The intrinsics' header is wrapped because GCC 12 warns (-Wmaybe-uninitialized) about
// its own _mm512_undefined_* idiom (GCC bug 105593); clang has no such warning and would
// warn about the pragma.
#pragma once

#if defined(__GNUC__) && defined(__x86_64__)
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#pragma GCC diagnostic pop

#define PB_X86_AVX512 1
/// Compiles a function for AVX-512 F, BW, VL and DQ (call it only when cpu_has_avx512()).
#define PB_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

namespace pipebench::detail {

/// The CPU runs AVX-512 F, BW, VL and DQ (cpuid, checked once).
inline bool cpu_has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return yes;
}

}  // namespace pipebench::detail
#endif
