// BM_Transform/<op>/device/<format>/batch:<n>: a device batch operator
// (transforms/batch_ops_device.h) on a batch already in device memory, one batch per
// iteration, timed with CUDA events on its stream (manual time):
//   horizontal_flip  each sample flagged by the horizontal_flip operator's own draw (p 0.5)
//                    on its per-sample stream (draw_horizontal_flips)
//   mixup            lam from draw_mix with mixup_alpha 0.8 (timm's DeiT setting)
//   cutmix           the box from draw_mix with cutmix_alpha 1.0
//   normalize        uint8 NHWC in, float32 NCHW out (a second device buffer):
//                    (q / 255 - mean) / std with ImageNet's mean and std, the kernel the
//                    CUDA steps run after the copy of a uint8 batch
//                    (cuda_kernels::normalize_u8, pipeline/train_step_cuda.cu); uint8 only
// for uint8 NHWC and float32 NCHW batches of 3 x --size x --size, n = 64, 256
// (model::kDeviceOpBatches) and the run's --batch. The draws are made on the host before
// each iteration, outside the timed span; the soft labels (host work, N x classes floats) are
// not in it. Counters: batch_ms (the CUDA-event time of one batch, ms, mean over the
// iterations), batch_images (n), batch_bytes (the input batch's bytes; normalize also
// writes 4 bytes per value), GB_per_second (batch_bytes / the time, 1e9 bytes/s),
// us_per_image.
// Named in the Transform family with the detail "device/<format>/batch:<n>"
// (model::device_op_case); the what-if row "finish on the accelerator" (report/whatif.h)
// reads the uint8 NHWC cases at the run's batch.
// Registered only where a CUDA device exists (main says once why the CUDA cases are not run).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "bench/run/benchmarks.h"
#include "bench/run/counter_put.h"
#include "device/cuda.h"
#include "model/catalogue.h"
#include "transforms/batch_ops_device.h"
#include "transforms/normalize.h"

#ifdef PIPEBENCH_HAVE_CUDA
#include "pipeline/cuda_step_base.h"  // cuda_kernels::normalize_u8
#endif

namespace pipebench::bench {
namespace {

constexpr double kFlipP = 0.5;
const MixParams kMixup{0.8, 0.0, 1.0, 0.5};
const MixParams kCutmix{0.0, 1.0, 1.0, 0.5};

// Distinct values in the batch's device memory (uint8 or float32 by its format), so that
// the kernels move real data.
void fill_distinct(const DeviceBatch& b, DeviceBuffer& device) {
  HostBuffer host(b.bytes(), MemoryKind::kPageable);
  if (b.format == DeviceBatchFormat::kUint8Nhwc) {
    auto* p = host.as<uint8_t>();
    for (size_t i = 0; i < b.bytes(); ++i) p[i] = static_cast<uint8_t>((i * 37) >> 3);
  } else {
    auto* p = host.as<float>();
    for (size_t i = 0; i < b.bytes() / 4; ++i) p[i] = static_cast<float>((i * 37) % 1001) / 7.0f;
  }
  copy_to_device(device.data(), host.data(), b.bytes(), nullptr);
}

// One device operator on one batch: the host's draws for the next batch (outside the timed
// span) and the operator's launch on the stream.
class DeviceOpRunner {
 public:
  /// `normalized`: normalize's float32 NCHW output (n x c x h x w floats); unused otherwise.
  DeviceOpRunner(const std::string& op, const DeviceBatch& b, uint64_t seed, void* normalized,
                 const CudaStream& stream)
      : op_(op), b_(b), seed_(seed), normalized_(normalized), stream_(stream),
        batch_rng_(Rng::for_batch(seed, 0, 0)), flip_salt_(Rng::stream_salt("horizontal_flip", 1)) {}

  /// The host's draws for the next batch: each sample's flip, or the batch's mix; none for
  /// normalize.
  void draw_next() {
    if (op_ == "normalize") return;
    if (op_ == "horizontal_flip") {
      rngs_.clear();
      for (int i = 0; i < b_.n; ++i) rngs_.push_back(Rng::for_sample(seed_, 0, sample_++).stream(flip_salt_));
      flips_ = draw_horizontal_flips(kFlipP, rngs_);
    } else {
      draw_ = draw_mix(op_ == "mixup" ? kMixup : kCutmix, b_.h, b_.w, batch_rng_);
    }
  }

  /// Launches the operator on the last draws (asynchronous on the stream).
  void run() {
    if (op_ == "normalize") {
#ifdef PIPEBENCH_HAVE_CUDA
      cuda_kernels::normalize_u8(static_cast<const uint8_t*>(b_.data), static_cast<float*>(normalized_), b_.n,
                                 b_.c, b_.h, b_.w, /*nhwc=*/true, kImageNetMean.data(), kImageNetStd.data(), 255.0f,
                                 stream_.handle());
#endif
    } else if (op_ == "horizontal_flip") {
      device_horizontal_flip(b_, flips_, stream_.handle());
    } else {
      device_apply_mix(b_, draw_, stream_.handle());
    }
  }

 private:
  const std::string& op_;
  const DeviceBatch& b_;
  uint64_t seed_;
  void* normalized_;
  const CudaStream& stream_;
  Rng batch_rng_;
  uint64_t flip_salt_;
  uint64_t sample_ = 0;
  std::vector<Rng> rngs_;
  std::vector<uint8_t> flips_;
  MixDraw draw_;
};

// batch_ms (the mean CUDA-event ms per batch), batch_images, batch_bytes, GB_per_second and
// us_per_image of the timed batches.
void put_device_op_counters(benchmark::State& state, const DeviceBatch& b, double total_ms) {
  const int n = b.n;
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(b.bytes()));
  put(state, CounterId::kBatchMs, state.iterations() > 0 ? total_ms / static_cast<double>(state.iterations()) : 0.0);
  put(state, CounterId::kBatchImages, n);
  put(state, CounterId::kBatchBytes, static_cast<double>(b.bytes()));
  put(state, CounterId::kGBPerSecond, benchmark::Counter(
      static_cast<double>(state.iterations()) * b.bytes() / 1e9, benchmark::Counter::kIsRate));
  put(state, CounterId::kUsPerImage, benchmark::Counter(
      static_cast<double>(state.iterations()) * n / 1e6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert));
}

void BM_DeviceOp(benchmark::State& state, BenchContext& ctx, const std::string& op, DeviceBatchFormat format,
                 int n) {
  if (!cuda_available()) {
    ctx.fail_case(state, ("no CUDA device: " + cuda_info().reason).c_str());
    return;
  }
  const auto& c = ctx.config();
  double total_ms = 0;  // the CUDA-event times of the timed batches
  DeviceBatch b;
  b.n = n, b.c = 3, b.h = c.size, b.w = c.size, b.format = format;
  try {
    DeviceBuffer device(b.bytes());
    b.data = device.data();
    fill_distinct(b, device);
    DeviceBuffer normalized(op == "normalize" ? b.sample_elements() * n * sizeof(float) : 0);
    CudaStream stream;
    CudaEvent start, stop;
    DeviceOpRunner runner(op, b, c.seed, normalized.data(), stream);
    runner.draw_next();
    runner.run();  // warm-up: the module's first launch
    stream.synchronize();
    for (auto _ : state) {
      runner.draw_next();
      start.record(stream);
      runner.run();
      stop.record(stream);
      stop.synchronize();
      const double ms = CudaEvent::elapsed_ms(start, stop);
      total_ms += ms;
      state.SetIterationTime(ms / 1e3);
    }
  } catch (const std::exception& e) {
    ctx.fail_case(state, e.what());
    return;
  }
  put_device_op_counters(state, b, total_ms);
}

}  // namespace

void register_device_op_benchmarks(BenchContext& ctx) {
  if (!cuda_available()) return;  // main() says once why the CUDA cases are not run
  std::set<int> batches(std::begin(model::kDeviceOpBatches), std::end(model::kDeviceOpBatches));
  batches.insert(ctx.config().batch);  // the size the what-if table prices
  const auto add = [&](const std::string& op, DeviceBatchFormat format, int n) {
    const model::CaseKey key = model::device_op_case(op, device_batch_format_name(format), n);
    register_case(ctx, key, BM_DeviceOp, op, format, n)->UseManualTime()->Unit(benchmark::kMicrosecond);
  };
  for (const std::string_view op : model::kDeviceBatchOps)
    for (auto format : {DeviceBatchFormat::kUint8Nhwc, DeviceBatchFormat::kFloat32Nchw})
      for (int n : batches) add(std::string(op), format, n);
  // normalize turns the uint8 batch into the float32 one: uint8 in only.
  for (int n : batches) add(std::string(model::kDeviceNormalizeOp), DeviceBatchFormat::kUint8Nhwc, n);
}

}  // namespace pipebench::bench
