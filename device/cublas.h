// cuBLAS loaded on first use: the six cuBLAS functions the CUDA training step (the MLP,
// pipeline/train_step.cpp) calls, resolved from libcublas.so.<major> with dlopen instead of
// a link.
//
// Why not linked: libcublas pulls in libcublasLt (about 540 MB), which every pipebench
// process then maps and initialises at start, whether it runs a CUDA step or not. Natively
// that is a fraction of a second; under Valgrind it is most of a short run: an empty
// program linked with -lcublasLt took 18.5-19.4 s under Callgrind (quiet AMD EPYC 2 vCPU),
// the same program linked with cuDNN and cudart 0.4 s; one BM_Transform/normalize run of
// pipebench went from 31 s to 3.6 s. The instruction gate (scripts/pbgate/instr.py) runs
// pipebench under Callgrind twice per comparison.
//
// Where it is looked for: by its soname (libcublas.so.13 for CUDA 13), where the link
// would have found it: LD_LIBRARY_PATH, the executable's RUNPATH (the CUDA toolkit's
// folder, from cudart's link), ldconfig's cache; on a GPU node scripts/gpu-suite.sh puts
// python3's nvidia/cublas/lib in LD_LIBRARY_PATH. Compiles without the CUDA toolkit:
// there cublas_missing() says so.
#pragma once

#include <string>

#ifdef PIPEBENCH_HAVE_CUDA
#include <cublas_v2.h>
#endif

namespace pipebench {

#ifdef PIPEBENCH_HAVE_CUDA
/// The cuBLAS entry points pipebench uses (cublas_v2.h's names map to the _v2 symbols).
/// Shapes and units are cuBLAS's own (column-major float32 GEMM, lengths in elements).
struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasSaxpy_v2) saxpy = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
  std::string library;  ///< the soname it was loaded by
};

/// cuBLAS, loaded on the first call (thread-safe; once per process). Throws CudaError
/// with the dynamic linker's reason when the library cannot be loaded (a dependency such
/// as libcublasLt missing included) or lacks one of the functions. Needs no GPU.
const CublasApi& cublas();
#endif

/// "" when cuBLAS can be loaded (loads it); otherwise why not (a build without CUDA
/// included). Never throws.
std::string cublas_missing();

}  // namespace pipebench
