// GPU JPEG decode with NVIDIA nvJPEG, a decode candidate (BM_Decode/nvjpeg,
// bench/cases/decode_bench.cpp). The library is loaded at run time with dlopen (as NVML is,
// device/nvml.h): the CUDA toolkit pipebench builds with may have no nvJPEG headers, and a
// machine without the library still runs everything else. The few types and entry points
// used are declared in nvjpeg_decode.cpp after NVIDIA's nvJPEG documentation (docs.nvidia.com
// /cuda/nvjpeg, "nvJPEG Type Declarations": nvjpegStatus_t, nvjpegOutputFormat_t,
// nvjpegChromaSubsampling_t, nvjpegImage_t with NVJPEG_MAX_COMPONENT = 4 channel pointers and
// size_t pitches; "nvJPEG API Reference": nvjpegCreateSimple, nvjpegJpegStateCreate,
// nvjpegGetImageInfo, nvjpegDecode, nvjpegJpegStateDestroy, nvjpegDestroy; "Single Image
// Decoding": the call sequence used here).
//
// Output: the image as H x W x 3 interleaved RGB uint8 (NVJPEG_OUTPUT_RGBI, pitch 3 W), in
// device memory, the layout TurboDecoder gives on the host (transforms/jpeg_decode.h).
// nvJPEG's default backend decodes the Huffman stage on the host inside the call (the
// thread's CPU time) and the rest on the GPU, queued on the given stream.
//
// Errors: the constructor never throws (available() false, note() says why: the library is
// not found, lacks an entry point, no CUDA device, or nvjpegCreateSimple failed). decode()
// throws CudaUnavailable when !available(), DecodeError naming the file (kCorrupt, with
// nvJPEG's status number, for data nvJPEG rejects; kUnsupported for other than 1 or 3
// components) and CudaError for a failed allocation. One decoder per thread (nvJPEG's
// decode state is not thread-safe).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "device/cuda.h"

namespace pipebench {

/// The sonames tried, in order, when no library is named: "libnvjpeg.so.13" (CUDA 13's),
/// "libnvjpeg.so".
const std::vector<std::string>& nvjpeg_library_names();

class NvjpegDecoder {
 public:
  /// Loads `library` (or the first of nvjpeg_library_names() that loads) and, where a CUDA
  /// device exists, creates nvJPEG's handle and a decode state on it.
  explicit NvjpegDecoder(const std::string& library = "");
  ~NvjpegDecoder();
  NvjpegDecoder(const NvjpegDecoder&) = delete;
  NvjpegDecoder& operator=(const NvjpegDecoder&) = delete;

  bool available() const { return ready_; }
  /// "nvJPEG <major>.<minor> (<path>)" when available, else why not, in one line.
  const std::string& note() const { return note_; }

  struct Size {
    int height = 0, width = 0;
  };
  /// Decodes `jpeg` (host bytes) into `out` as H x W x 3 RGB uint8 (replaced by a larger
  /// buffer when too small), queued on `stream` (a cudaStream_t; the pixels are there once
  /// the stream is synchronised). Returns the image's size. See the top for errors.
  Size decode(std::span<const uint8_t> jpeg, const std::string& file, DeviceBuffer& out, void* stream);

 private:
  struct Api;
  void* lib_ = nullptr;
  Api* api_ = nullptr;
  void* handle_ = nullptr;  // nvjpegHandle_t
  void* state_ = nullptr;   // nvjpegJpegState_t
  bool ready_ = false;
  std::string note_;
};

}  // namespace pipebench
