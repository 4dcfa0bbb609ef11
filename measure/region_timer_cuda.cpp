// CudaEventRegionClock (region_timer.h): CUDA events on a stream, synchronised only when
// results are read (Deep500's CUDA timer). Compiled as C++ in every build; the runtime API
// only under PIPEBENCH_HAVE_CUDA (as device/cuda.cpp), so a build without the toolkit
// still links and the constructor throws CudaUnavailable saying why.
#include <stdexcept>

#include "device/cuda.h"
#include "measure/region_timer.h"
#include "measure/stage_timers.h"

#ifdef PIPEBENCH_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace pipebench {

#ifdef PIPEBENCH_HAVE_CUDA

CudaEventRegionClock::CudaEventRegionClock(void* stream) : stream_(stream) { require_cuda(); }
CudaEventRegionClock::CudaEventRegionClock(const CudaStream& stream) : CudaEventRegionClock(stream.handle()) {}

CudaEventRegionClock::~CudaEventRegionClock() {
  for (void* e : events_) PIPEBENCH_CUDA_WARN(cudaEventDestroy(static_cast<cudaEvent_t>(e)));
}

int64_t CudaEventRegionClock::mark() {
  cudaEvent_t e = nullptr;
  // With timing; blocking sync, so resolve() sleeps instead of spinning (device/cuda.h).
  PIPEBENCH_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventBlockingSync));
  events_.push_back(e);
  if (events_.size() == 1) first_host_ns_ = now_ns();
  PIPEBENCH_CUDA_CHECK(cudaEventRecord(e, static_cast<cudaStream_t>(stream_)));
  return static_cast<int64_t>(events_.size() - 1);
}

void CudaEventRegionClock::resolve() {
  if (!events_.empty()) PIPEBENCH_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(events_.back())));
}

double CudaEventRegionClock::ms_between(int64_t a, int64_t b) {
  float ms = 0;
  PIPEBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(events_.at(static_cast<size_t>(a))),
                                            static_cast<cudaEvent_t>(events_.at(static_cast<size_t>(b)))));
  return ms;
}

int64_t CudaEventRegionClock::host_ns(int64_t mark) {
  return first_host_ns_ + static_cast<int64_t>(ms_between(0, mark) * 1e6);
}

#else  // built without CUDA

CudaEventRegionClock::CudaEventRegionClock(void* stream) : stream_(stream) {
  throw CudaUnavailable("CUDA-event region timers: " + cuda_info().reason);
}
CudaEventRegionClock::CudaEventRegionClock(const CudaStream& stream) : CudaEventRegionClock(stream.handle()) {}
CudaEventRegionClock::~CudaEventRegionClock() = default;
int64_t CudaEventRegionClock::mark() { return 0; }
void CudaEventRegionClock::resolve() {}
double CudaEventRegionClock::ms_between(int64_t, int64_t) { return 0; }
int64_t CudaEventRegionClock::host_ns(int64_t) { return first_host_ns_; }

#endif

}  // namespace pipebench
