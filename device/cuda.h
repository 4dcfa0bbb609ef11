// Optional CUDA support. Everything here compiles with or without the CUDA toolkit
// (PIPEBENCH_HAVE_CUDA); without it, or on a machine with no device, cuda_available()
// is false and the functions that need a device throw CudaUnavailable with a message a
// benchmark can pass to SkipWithError.
//
// Errors: CudaError for a failed CUDA runtime or cuBLAS call, with the call, file and line
// ("cudaMemcpy(...) failed at pipeline/h2d.cpp:42: invalid argument"). Destructors never
// throw (a failure there is printed to stderr).
//
// Host waits block, they do not spin: the process's device is initialised with
// cudaDeviceScheduleBlockingSync (cudaInitDevice, before anything else creates its
// context) and every CudaEvent is created with cudaEventBlockingSync, so a thread waiting
// for the GPU (CudaEvent::synchronize, CudaStream::synchronize, a synchronous cudaMemcpy)
// sleeps in the driver instead of busy-polling a core (the CUDA Runtime API reference,
// cudaSetDeviceFlags and cudaEventCreateWithFlags). The price is the wake-up: a wait ends
// some microseconds after the GPU finished (an OS wake-up, not measured here), against a
// loop's steps of milliseconds; in exchange the consumer thread's CPU counters and the
// loader's workers no longer lose a core to the wait.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace pipebench {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
/// Thrown where a CUDA device is needed and none is usable; what() says why.
class CudaUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CudaInfo {
  bool compiled = false;        ///< built with the CUDA toolkit
  bool available = false;       ///< a device is usable now
  std::string reason;           ///< why not, when !available
  std::string device_name;      ///< e.g. "NVIDIA H100 80GB HBM3"
  int device = -1;              ///< the CUDA device index this process uses; -1 when !available
  int device_count = 0;         ///< CUDA devices visible to the process (CUDA_VISIBLE_DEVICES)
  std::string pci_bus_id;       ///< the device's, "0000:41:00.0" (cudaDeviceGetPCIBusId)
  int local_rank = 0;           ///< node-local rank that chose the device (NodeLocalRank)
  std::string local_rank_source;  ///< the variable it came from, or "" (a single process)
  std::string runtime_version;  ///< e.g. "13.0"
  std::string driver_version;
};

/// This process's rank among the processes of its node, from the environment: the first
/// of PIPEBENCH_LOCAL_RANK (set by dist::Session from MPI_Comm_split_type with
/// MPI_COMM_TYPE_SHARED, pipeline/dist/dist.h), OMPI_COMM_WORLD_LOCAL_RANK (Open MPI's
/// mpirun), MPI_LOCALRANKID (MPICH's Hydra), SLURM_LOCALID (srun) that holds a
/// non-negative integer; rank 0 with an empty source otherwise (a single process). A
/// malformed value is skipped. Never throws.
struct NodeLocalRank {
  int rank = 0;
  std::string source;  ///< the variable's name, or ""
};
NodeLocalRank node_local_rank();
/// The device a node-local rank uses: local_rank % device_count (ranks beyond the count
/// share devices round-robin). std::invalid_argument for device_count < 1 or a negative rank.
int device_for_local_rank(int local_rank, int device_count);

/// Probes once (cached) and returns the CUDA state of this process. The device is
/// device_for_local_rank(node_local_rank().rank, device count): under mpirun each rank of a
/// node takes its own GPU, where every rank used device 0 before. Probing creates no CUDA
/// context (require_cuda() does, on the first use).
const CudaInfo& cuda_info();
inline bool cuda_available() { return cuda_info().available; }
/// Throws CudaUnavailable with cuda_info().reason unless a device is usable. Otherwise makes
/// the process's device current on the calling thread (cudaSetDevice, once per thread; the
/// first call in the process initialises the device with cudaDeviceScheduleBlockingSync,
/// see the top): every function here that needs a device calls it first, so CUDA work
/// from any thread (a loader's worker too) lands on that device. CudaError when
/// cudaSetDevice fails.
void require_cuda();

/// Where host memory comes from.
enum class MemoryKind {
  kPageable,  ///< ordinary heap memory (aligned to 64 bytes)
  kPinned,    ///< page-locked with cudaHostAlloc: needs a device (else CudaUnavailable)
};
const char* memory_kind_name(MemoryKind kind);  ///< "pageable", "pinned"

/// An owning host allocation, pageable or pinned. Move-only.
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(size_t bytes, MemoryKind kind);
  ~HostBuffer();
  HostBuffer(HostBuffer&& other) noexcept;
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }
  size_t bytes() const { return bytes_; }
  MemoryKind kind() const { return kind_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  MemoryKind kind_ = MemoryKind::kPageable;
};

/// An owning device allocation (cudaMalloc). Move-only. Throws CudaUnavailable without a device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

/// A CUDA stream (cudaStreamNonBlocking) and events for timing on it. Opaque handles keep
/// cuda_runtime.h out of this header.
class CudaStream {
 public:
  CudaStream();  ///< throws CudaUnavailable without a device
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  void* handle() const { return stream_; }  ///< cudaStream_t
  void synchronize() const;

 private:
  void* stream_ = nullptr;
};

/// A CUDA event, always with cudaEventBlockingSync (synchronize() sleeps, see the top).
/// kTimed events carry a timestamp for elapsed_ms; kUntimed ones only order work and are
/// cheaper to record and wait on (cudaEventDisableTiming).
class CudaEvent {
 public:
  enum class Timing { kTimed, kUntimed };
  explicit CudaEvent(Timing timing = Timing::kTimed);  ///< throws CudaUnavailable without a device
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  void record(const CudaStream& stream);
  void synchronize() const;
  /// Milliseconds between two recorded, completed kTimed events (cudaEventElapsedTime).
  static float elapsed_ms(const CudaEvent& start, const CudaEvent& stop);
  void* handle() const { return event_; }  ///< cudaEvent_t

 private:
  void* event_ = nullptr;
};

/// PIPEBENCH_CUDA_CHECK(call): evaluates a CUDA runtime call (anything returning
/// cudaError_t) and throws CudaError "<call> failed at <file>:<line>: <cudaGetErrorString>"
/// unless it returned cudaSuccess. PIPEBENCH_CUDA_WARN(call) prints the same message to
/// stderr instead of throwing (for destructors). Usable without including cuda_runtime.h
/// here: the status goes through an int.
namespace detail {
[[noreturn]] void throw_cuda_error(int status, const char* call, const char* file, int line);
void warn_cuda_error(int status, const char* call, const char* file, int line) noexcept;
}  // namespace detail
#define PIPEBENCH_CUDA_CHECK(call)                                                 \
  do {                                                                             \
    const int pipebench_cuda_status_ = static_cast<int>(call);                     \
    if (pipebench_cuda_status_ != 0)                                               \
      ::pipebench::detail::throw_cuda_error(pipebench_cuda_status_, #call, __FILE__, __LINE__); \
  } while (0)
#define PIPEBENCH_CUDA_WARN(call)                                                  \
  do {                                                                             \
    const int pipebench_cuda_status_ = static_cast<int>(call);                     \
    if (pipebench_cuda_status_ != 0)                                               \
      ::pipebench::detail::warn_cuda_error(pipebench_cuda_status_, #call, __FILE__, __LINE__); \
  } while (0)

/// Waits until every operation submitted to the process's device, from any thread and on
/// any stream, has finished (cudaDeviceSynchronize; the wait sleeps, see the top).
/// CudaUnavailable without a device; CudaError when a submitted operation failed.
void device_synchronize();

/// Host-to-device copy of `bytes`. Synchronous (cudaMemcpy) when stream is null, else
/// cudaMemcpyAsync on the stream (truly asynchronous only from pinned memory).
void copy_to_device(void* device, const void* host, size_t bytes, const CudaStream* stream);
/// Device-to-host copy of `bytes`, the same way round (cudaMemcpy when stream is null, else
/// cudaMemcpyAsync on it: the host bytes are there after the stream is synchronised).
void copy_to_host(void* host, const void* device, size_t bytes, const CudaStream* stream);

}  // namespace pipebench
