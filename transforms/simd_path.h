// Which SIMD code path pipebench's pixel kernels take on this CPU, as one word for the run's
// context ("simd_path", bench/run/run_context.cpp) and the instruction-count gate
// (scripts/instr_gate.py, docs/ab-gate.md): two runs that took different paths executed
// different code, so their instruction counts (and times) are not comparable.
//
//   "avx512"  the CPU runs AVX-512 F, BW, VL and DQ (transforms/x86_avx512.h) and the
//             x86-64-v4 set: the resize and normalize kernels (resize_kernels.cpp,
//             normalize.cpp) take their AVX-512 code, the photometric and affine kernels
//             their target_clones("arch=x86-64-v4") clone;
//   "avx2"    no AVX-512 but AVX2: those kernels' scalar (baseline x86-64) code for resize
//             and normalize, the "avx2" clone for photometric and affine; libjpeg-turbo's
//             AVX2 code (it has no AVX-512 path). This is what a run under Valgrind takes on
//             an AVX-512 machine: Valgrind does not execute AVX-512 and its CPUID hides it;
//   "scalar"  neither: the baseline x86-64 (SSE2) code everywhere, or a compiler or CPU
//             without the x86 dispatch.
// The same checks the kernels make (cpu_has_avx512(), the resize switch resample_simd()
// that the tests turn off, and GCC's target_clones resolver's x86-64-v4 / avx2 tests).
#pragma once

namespace pipebench {

/// "avx512", "avx2" or "scalar", as above. Checked on each call (cheap: cached cpuid bits).
const char* simd_path();

}  // namespace pipebench
