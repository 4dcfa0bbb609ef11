// BM_Collate: B per-sample outputs into one contiguous NCHW batch, one batch per iteration.
//   f32_chw/<memory>/batch:B          B float32 CHW samples -> B x 3 x S x S float32
//   u8_nchw/<memory>/batch:B          B uint8 HWC crops -> B x 3 x S x S uint8 (normalisation
//                                     deferred to a batch transform)
//   per_sample_normalize/batch:B      Normalize each sample, then collate float32
//   batch_normalize/batch:B           collate uint8, then Normalize the batch at once (the
//                                     case study's last fix: a batch transform)
// <memory> is pageable (heap) or pinned (cudaHostAlloc; registered only with a CUDA device).
// items_per_second = images/s; bytes_per_second = bytes written to the batch.
#include <benchmark/benchmark.h>

#include <functional>

#include "bench/run/benchmarks.h"
#include "device/cuda.h"
#include "pipeline/collate.h"
#include "transforms/crop.h"
#include "transforms/normalize.h"

namespace pipebench::bench {
namespace {

/// B crops of size x size cycled from the decoded images.
std::vector<Image> batch_crops(BenchContext& ctx, int batch, int size) {
  std::vector<Image> out;
  const auto& imgs = ctx.decoded_images();
  std::vector<const Image*> usable;
  for (const auto& img : imgs)
    if (img.height >= size && img.width >= size) usable.push_back(&img);
  if (usable.empty()) return out;
  for (int i = 0; i < batch; ++i) {
    Image c;
    center_crop(*usable[i % usable.size()], size, c);
    out.push_back(std::move(c));
  }
  return out;
}

enum class Variant { kF32, kU8, kPerSampleNormalize, kBatchNormalize };

void BM_Collate(benchmark::State& state, BenchContext& ctx, Variant variant, MemoryKind memory,
                int batch) {
  const int s = ctx.config().size;
  const size_t sample_floats = 3 * static_cast<size_t>(s) * s;
  auto crops = batch_crops(ctx, batch, s);
  if (crops.empty()) {
    ctx.fail_case(state, "no decoded image of the dataset is at least --size on both sides");
    return;
  }
  HostBuffer out;
  HostBuffer staging;  // uint8 NCHW for the batch-normalize variant
  try {
    const size_t elem = variant == Variant::kU8 ? 1 : 4;
    out = HostBuffer(batch * sample_floats * elem, memory);
    if (variant == Variant::kBatchNormalize) staging = HostBuffer(batch * sample_floats, memory);
  } catch (const std::exception& e) {
    ctx.fail_case(state, e.what());
    return;
  }
  std::vector<std::vector<float>> samples(batch, std::vector<float>(sample_floats));
  for (int i = 0; i < batch; ++i) normalize_to_chw(crops[i], samples[i].data());
  std::vector<const float*> sample_ptrs;
  std::vector<const Image*> image_ptrs;
  for (int i = 0; i < batch; ++i) {
    sample_ptrs.push_back(samples[i].data());
    image_ptrs.push_back(&crops[i]);
  }
  for (auto _ : state) {
    switch (variant) {
      case Variant::kF32:
        collate_chw_f32(sample_ptrs, sample_floats, out.as<float>());
        break;
      case Variant::kU8:
        collate_hwc_u8_to_nchw(image_ptrs, out.as<uint8_t>());
        break;
      case Variant::kPerSampleNormalize:
        for (int i = 0; i < batch; ++i) normalize_to_chw(crops[i], samples[i].data());
        collate_chw_f32(sample_ptrs, sample_floats, out.as<float>());
        break;
      case Variant::kBatchNormalize:
        collate_hwc_u8_to_nchw(image_ptrs, staging.as<uint8_t>());
        normalize_batch_nchw(staging.as<uint8_t>(), batch, s, s, out.as<float>());
        break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(out.bytes()));
}

}  // namespace

void register_collate_benchmarks(BenchContext& ctx) {
  const int b = ctx.config().batch;
  const std::string bs = "batch:" + std::to_string(b);
  const auto key = [](const std::string& op, const std::string& detail) {
    model::CaseKey k;
    k.family = model::Family::kCollate;
    k.op = op;
    k.detail = detail;
    return k;
  };
  for (auto memory : {MemoryKind::kPageable, MemoryKind::kPinned}) {
    if (memory == MemoryKind::kPinned && !cuda_available()) continue;  // needs a device
    const std::string m = memory_kind_name(memory);
    register_case(ctx, key("f32_chw", m + "/" + bs), BM_Collate, Variant::kF32, memory, b)
        ->Unit(benchmark::kMicrosecond);
    register_case(ctx, key("u8_nchw", m + "/" + bs), BM_Collate, Variant::kU8, memory, b)
        ->Unit(benchmark::kMicrosecond);
  }
  register_case(ctx, key("per_sample_normalize", bs), BM_Collate, Variant::kPerSampleNormalize,
                MemoryKind::kPageable, b)
      ->Unit(benchmark::kMicrosecond);
  register_case(ctx, key("batch_normalize", bs), BM_Collate, Variant::kBatchNormalize,
                MemoryKind::kPageable, b)
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace pipebench::bench
