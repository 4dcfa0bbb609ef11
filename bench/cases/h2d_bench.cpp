// BM_H2D/<memory>/<mode>/batch:B[/uint8]: host-to-device copy of one batch of the
// pipeline's output (B x C x H x W; float32, or uint8 with `collate: {dtype: uint8}`, then
// the name ends in /uint8: a quarter of the bytes), pageable or pinned host memory,
// synchronous (cudaMemcpy, timed with a host clock from before the call to after a
// cudaDeviceSynchronize that follows it: from pageable memory cudaMemcpy may return once the
// last chunk is staged, while that chunk's DMA still runs) or asynchronous (cudaMemcpyAsync
// on a stream, timed with CUDA events). The synchronous time includes the host's wake-up
// after the wait (pipebench's waits sleep: device/cuda.h), some microseconds against
// copies of milliseconds.
// Manual time; GB_per_second = 1e9 bytes/s; batch_bytes = the bytes copied per iteration.
// BM_H2D/pinned/async/peak:256MiB: the same asynchronous pinned copy of 256 MiB, whatever
// the pipeline: the peak host-to-device rate of this machine's link measured in the same run,
// which each batch's pinned GB_per_second is compared with (scripts/gpu-suite.sh: pinned as
// a percentage of the peak). Its items are bytes / 1 MiB.
// Registered only where a CUDA device exists.
#include <benchmark/benchmark.h>

#include <cstring>

#include <functional>

#include "bench/run/benchmarks.h"
#include "bench/run/counter_put.h"
#include "device/cuda.h"
#include "measure/stage_timers.h"

namespace pipebench::bench {
namespace {

constexpr size_t kPeakBytes = size_t{256} << 20;

// batch > 0: that many of the pipeline's samples; batch == 0: kPeakBytes.
void BM_H2D(benchmark::State& state, BenchContext& ctx, MemoryKind memory, bool async, int batch) {
  if (!cuda_available()) {
    ctx.fail_case(state, ("no CUDA device: " + cuda_info().reason).c_str());
    return;
  }
  const size_t bytes = batch > 0 ? static_cast<size_t>(batch) * ctx.config().pipeline->output().bytes() : kPeakBytes;
  try {
    HostBuffer host(bytes, memory);
    std::memset(host.data(), 1, bytes);  // touch every page before timing
    DeviceBuffer device(bytes);
    CudaStream stream;
    CudaEvent start, stop;
    copy_to_device(device.data(), host.data(), bytes, nullptr);  // warm-up
    device_synchronize();
    for (auto _ : state) {
      if (async) {
        start.record(stream);
        copy_to_device(device.data(), host.data(), bytes, &stream);
        stop.record(stream);
        stop.synchronize();
        state.SetIterationTime(CudaEvent::elapsed_ms(start, stop) / 1e3);
      } else {
        const int64_t t0 = now_ns();
        copy_to_device(device.data(), host.data(), bytes, nullptr);
        device_synchronize();  // the copy's last DMA is done before the clock is read
        state.SetIterationTime((now_ns() - t0) / 1e9);
      }
    }
  } catch (const std::exception& e) {
    ctx.fail_case(state, e.what());
    return;
  }
  state.SetItemsProcessed(state.iterations() * (batch > 0 ? batch : static_cast<int64_t>(bytes >> 20)));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
  put(state, CounterId::kBatchBytes, static_cast<double>(bytes));
  put(state, CounterId::kGBPerSecond, benchmark::Counter(
      static_cast<double>(state.iterations()) * bytes / 1e9, benchmark::Counter::kIsRate));
}

}  // namespace

void register_h2d_benchmarks(BenchContext& ctx) {
  if (!cuda_available()) return;  // main() says once why the CUDA cases are not run
  // The pipeline's batch; float32 keeps the historical names (baselines compare by name).
  const bool u8 = ctx.config().pipeline->output().dtype == SampleDtype::kUint8;
  for (auto memory : {MemoryKind::kPageable, MemoryKind::kPinned}) {
    for (bool async : {false, true}) {
      for (int batch : {32, 64, 128, 256}) {
        model::CaseKey key;
        key.family = model::Family::kH2D;
        key.op = memory_kind_name(memory);
        key.detail = std::string(async ? "async" : "sync") + "/batch:" + std::to_string(batch) + (u8 ? "/uint8" : "");
        register_case(ctx, key, BM_H2D, memory, async, batch)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
  model::CaseKey peak;
  peak.family = model::Family::kH2D;
  peak.op = memory_kind_name(MemoryKind::kPinned);
  peak.detail = "async/peak:" + std::to_string(kPeakBytes >> 20) + "MiB";
  register_case(ctx, peak, BM_H2D, MemoryKind::kPinned, true, 0)->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace pipebench::bench
