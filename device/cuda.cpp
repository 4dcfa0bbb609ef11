// CUDA runtime wrappers (see cuda.h). Compiled as C++; the runtime API is used only under
// PIPEBENCH_HAVE_CUDA, so a build without the toolkit still provides every symbol:
// cuda_info() then says "built without CUDA", pageable HostBuffers work and everything
// that needs a device throws CudaUnavailable.
#include "device/cuda.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <utility>

#ifdef PIPEBENCH_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace pipebench {
namespace {

constexpr size_t kHostAlignment = 64;

#ifdef PIPEBENCH_HAVE_CUDA
std::string version_string(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
#endif

CudaInfo probe() {
  CudaInfo info;
#ifndef PIPEBENCH_HAVE_CUDA
  info.reason = "built without CUDA";
#else
  info.compiled = true;
  int runtime = 0, driver = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) info.runtime_version = version_string(runtime);
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) {
    info.driver_version = version_string(driver);
  }
  const NodeLocalRank local = node_local_rank();
  info.local_rank = local.rank;
  info.local_rank_source = local.source;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (err == cudaErrorInsufficientDriver && info.driver_version.empty()) {
      // cudart reports a missing driver as an "insufficient" one: say what it is.
      info.reason = "no CUDA driver on this machine (no GPU)";
    } else if (err == cudaErrorInsufficientDriver) {
      info.reason = "the CUDA driver (" + info.driver_version + ") is older than the runtime (" +
                    info.runtime_version + ")";
    } else {
      info.reason = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(err);
    }
    (void)cudaGetLastError();  // clear the (non-sticky) error state
    return info;
  }
  if (count <= 0) {
    info.reason = "no CUDA-capable device is detected (cudaGetDeviceCount returned 0)";
    return info;
  }
  info.device_count = count;
  const int device = device_for_local_rank(local.rank, count);
  cudaDeviceProp prop{};
  const cudaError_t perr = cudaGetDeviceProperties(&prop, device);
  if (perr != cudaSuccess) {
    info.reason = "cudaGetDeviceProperties(" + std::to_string(device) + ") failed: " + cudaGetErrorString(perr);
    return info;
  }
  char bus[32] = {};  // "0000:41:00.0" is 13 bytes with its terminator; the runtime's docs ask for 13+
  if (cudaDeviceGetPCIBusId(bus, static_cast<int>(sizeof bus), device) == cudaSuccess) {
    info.pci_bus_id = bus;
  } else {
    (void)cudaGetLastError();  // an unknown bus id only costs NVML its device match
  }
  info.device_name = prop.name;
  info.device = device;
  info.available = true;
#endif
  return info;
}

std::string error_message(int status, const char* call, const char* file, int line) {
#ifdef PIPEBENCH_HAVE_CUDA
  const char* what = cudaGetErrorString(static_cast<cudaError_t>(status));
#else
  const char* what = "CUDA error";
#endif
  return std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " + what +
         " (" + std::to_string(status) + ")";
}

}  // namespace

NodeLocalRank node_local_rank() {
  for (const char* name : {"PIPEBENCH_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    errno = 0;
    const long r = std::strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || r < 0 || r > INT_MAX) continue;  // malformed: the next source
    return {static_cast<int>(r), name};
  }
  return {};
}

int device_for_local_rank(int local_rank, int device_count) {
  if (device_count < 1 || local_rank < 0)
    throw std::invalid_argument("device_for_local_rank: need device_count >= 1 and local_rank >= 0, got " +
                                std::to_string(device_count) + " and " + std::to_string(local_rank));
  return local_rank % device_count;
}

namespace detail {
void throw_cuda_error(int status, const char* call, const char* file, int line) {
  throw CudaError(error_message(status, call, file, line));
}
void warn_cuda_error(int status, const char* call, const char* file, int line) noexcept {
  try {
    std::fprintf(stderr, "pipebench: %s\n", error_message(status, call, file, line).c_str());
  } catch (...) {
    std::fprintf(stderr, "pipebench: %s failed at %s:%d\n", call, file, line);
  }
}
}  // namespace detail

const CudaInfo& cuda_info() {
  static const CudaInfo info = probe();  // thread-safe one-time probe
  return info;
}

#ifdef PIPEBENCH_HAVE_CUDA
namespace {

// The first use in the process: the device's primary context, created with blocking-sync
// scheduling (cuda.h, the top). cudaInitDevice (CUDA 12.0+) applies the flags as
// cudaSetDeviceFlags would, before the context exists. It fails when another library of
// the process (a user's LibTorch) already made the context with other flags: then the
// waits keep that context's policy, and the events' own cudaEventBlockingSync still makes
// CudaEvent::synchronize sleep. Said once on stderr, not an error.
void init_device_once(int device) {
  static std::once_flag once;
  std::call_once(once, [device] {
    const cudaError_t err =
        cudaInitDevice(device, cudaDeviceScheduleBlockingSync, cudaInitDeviceFlagsAreValid);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky: clear it
      std::fprintf(stderr, "pipebench: note: cudaInitDevice(%d, cudaDeviceScheduleBlockingSync) failed (%s): "
                   "host waits on streams keep the device's current scheduling\n", device,
                   cudaGetErrorString(err));
    }
  });
}

}  // namespace
#endif

void require_cuda() {
  const CudaInfo& info = cuda_info();
  if (!info.available) throw CudaUnavailable("CUDA unavailable: " + info.reason);
#ifdef PIPEBENCH_HAVE_CUDA
  thread_local bool bound = false;  // this thread's current device is info.device
  if (bound) return;
  init_device_once(info.device);
  PIPEBENCH_CUDA_CHECK(cudaSetDevice(info.device));
  bound = true;
#endif
}

const char* memory_kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kPageable: return "pageable";
    case MemoryKind::kPinned: return "pinned";
  }
  return "unknown";
}

// --- HostBuffer -------------------------------------------------------------------------

HostBuffer::HostBuffer(size_t bytes, MemoryKind kind) : bytes_(bytes), kind_(kind) {
  if (kind == MemoryKind::kPinned) {
    require_cuda();
#ifdef PIPEBENCH_HAVE_CUDA
    if (bytes > 0) PIPEBENCH_CUDA_CHECK(cudaHostAlloc(&data_, bytes, cudaHostAllocDefault));
#endif
    return;
  }
  if (bytes == 0) return;
  const size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  data_ = std::aligned_alloc(kHostAlignment, rounded);
  if (data_ == nullptr) throw std::bad_alloc();
}

HostBuffer::~HostBuffer() {
  if (data_ == nullptr) return;
  if (kind_ == MemoryKind::kPinned) {
#ifdef PIPEBENCH_HAVE_CUDA
    PIPEBENCH_CUDA_WARN(cudaFreeHost(data_));
#endif
  } else {
    std::free(data_);
  }
}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      kind_(other.kind_) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    HostBuffer tmp(std::move(*this));
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    kind_ = other.kind_;
  }
  return *this;
}

// --- DeviceBuffer -----------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  require_cuda();
#ifdef PIPEBENCH_HAVE_CUDA
  if (bytes > 0) PIPEBENCH_CUDA_CHECK(cudaMalloc(&data_, bytes));
#endif
}

DeviceBuffer::~DeviceBuffer() {
#ifdef PIPEBENCH_HAVE_CUDA
  if (data_ != nullptr) PIPEBENCH_CUDA_WARN(cudaFree(data_));
#endif
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    DeviceBuffer tmp(std::move(*this));
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

// --- CudaStream / CudaEvent -------------------------------------------------------------

CudaStream::CudaStream() {
  require_cuda();
#ifdef PIPEBENCH_HAVE_CUDA
  cudaStream_t s = nullptr;
  PIPEBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  stream_ = s;
#endif
}

CudaStream::~CudaStream() {
#ifdef PIPEBENCH_HAVE_CUDA
  if (stream_ != nullptr) PIPEBENCH_CUDA_WARN(cudaStreamDestroy(static_cast<cudaStream_t>(stream_)));
#endif
}

void CudaStream::synchronize() const {
#ifdef PIPEBENCH_HAVE_CUDA
  PIPEBENCH_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)));
#endif
}

CudaEvent::CudaEvent(Timing timing) {
  require_cuda();
#ifdef PIPEBENCH_HAVE_CUDA
  cudaEvent_t e = nullptr;
  const unsigned flags = cudaEventBlockingSync | (timing == Timing::kUntimed ? cudaEventDisableTiming : 0u);
  PIPEBENCH_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
  event_ = e;
#else
  (void)timing;
#endif
}

CudaEvent::~CudaEvent() {
#ifdef PIPEBENCH_HAVE_CUDA
  if (event_ != nullptr) PIPEBENCH_CUDA_WARN(cudaEventDestroy(static_cast<cudaEvent_t>(event_)));
#endif
}

void CudaEvent::record(const CudaStream& stream) {
#ifdef PIPEBENCH_HAVE_CUDA
  PIPEBENCH_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event_),
                                       static_cast<cudaStream_t>(stream.handle())));
#else
  (void)stream;
#endif
}

void CudaEvent::synchronize() const {
#ifdef PIPEBENCH_HAVE_CUDA
  PIPEBENCH_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)));
#endif
}

float CudaEvent::elapsed_ms(const CudaEvent& start, const CudaEvent& stop) {
  float ms = 0.0f;
#ifdef PIPEBENCH_HAVE_CUDA
  PIPEBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start.event_),
                                            static_cast<cudaEvent_t>(stop.event_)));
#else
  (void)start;
  (void)stop;
#endif
  return ms;
}

void device_synchronize() {
  require_cuda();
#ifdef PIPEBENCH_HAVE_CUDA
  PIPEBENCH_CUDA_CHECK(cudaDeviceSynchronize());
#endif
}

void copy_to_device(void* device, const void* host, size_t bytes, const CudaStream* stream) {
  require_cuda();
#ifdef PIPEBENCH_HAVE_CUDA
  if (stream == nullptr) {
    PIPEBENCH_CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
  } else {
    PIPEBENCH_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice,
                                         static_cast<cudaStream_t>(stream->handle())));
  }
#else
  (void)device;
  (void)host;
  (void)bytes;
  (void)stream;
#endif
}

void copy_to_host(void* host, const void* device, size_t bytes, const CudaStream* stream) {
  require_cuda();
#ifdef PIPEBENCH_HAVE_CUDA
  if (stream == nullptr) {
    PIPEBENCH_CUDA_CHECK(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
  } else {
    PIPEBENCH_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost,
                                         static_cast<cudaStream_t>(stream->handle())));
  }
#else
  (void)host;
  (void)device;
  (void)bytes;
  (void)stream;
#endif
}

}  // namespace pipebench
