// BM_Decode: JPEG bytes (cached in memory) to RGB uint8 HWC, one round of images per
// iteration (bench/run/image_round.h: the same images in every case), one thread. The same bytes through four backends:
//   turbo_full               TurboJPEG, full resolution (compare with tjbench)
//   turbo_scaled/target:S    TurboJPEG DCT scaling to the smallest scale >= S x S
//   roi                      libjpeg ROI decode of a RandomResizedCrop window
//   roi_scaled/target:S      the same window, DCT scaled to >= S x S
//   opencv                   cv::imdecode (not registered where OpenCV imgcodecs is not
//                            installed: transforms/opencv_codecs.h)
//   nvjpeg                   nvJPEG on the GPU (transforms/nvjpeg_decode.h), RGB into device
//                            memory, the round's images queued on one stream and waited for
//                            at the round's end: real time (UseRealTime), so images/s is the
//                            GPU's rate; us_per_image is still the thread's CPU (nvJPEG's
//                            Huffman stage runs on the host). Registered only where a CUDA
//                            device exists (main says why not) and nvJPEG loads (else one
//                            line: "BM_Decode/nvjpeg not run: ..."); with a device the
//                            context's "nvjpeg" says which library loaded, or why none did
//                            (the report's "decode on the accelerator" row quotes it)
// Counters: items_per_second (images/s), us_per_image (thread CPU time per image, µs),
// images_per_round, bytes_per_second (JPEG bytes),
// source_megapixels_per_second (pixels of the source images, whatever was decoded).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <utility>

#include <functional>

#include "bench/run/benchmarks.h"
#include "bench/run/counter_put.h"
#include "bench/run/image_round.h"
#include "device/cuda.h"
#include "transforms/crop.h"
#include "transforms/jpeg_decode.h"
#include "transforms/nvjpeg_decode.h"

namespace pipebench::bench {
namespace {

enum class Backend { kTurboFull, kTurboScaled, kRoi, kRoiScaled, kOpenCV };

void BM_Decode(benchmark::State& state, BenchContext& ctx, Backend backend) {
  const auto& ds = ctx.memory();
  const int target = ctx.config().size;
  // Headers and RandomResizedCrop windows are prepared outside the timed loop.
  std::vector<ImageInfo> infos(ds.size());
  std::vector<uint8_t> scratch;  // unused: the memory copy hands out views
  std::vector<CropWindow> windows(ds.size());
  for (size_t i : ctx.round()) {
    if (ctx.bad_files().known_bad(i)) continue;
    try {
      infos[i] = read_image_info(ds.bytes(i, scratch), ds.name(i));
      Rng rng = Rng::for_sample(ctx.config().seed, 0, i);
      windows[i] = random_resized_crop_window(infos[i].height, infos[i].width, rng);
    } catch (const std::exception& e) {
      if (!ctx.on_bad_file(state, i, e.what())) return;
    }
  }
  if (backend == Backend::kOpenCV) {
    const std::string missing = opencv_codecs_missing();  // loads the plugin, untimed
    if (!missing.empty()) {
      ctx.fail_case(state, "OpenCV imgcodecs could not be loaded: " + missing);
      return;
    }
  }
  TurboDecoder turbo;
  RoiDecoder roi;
  Image out;
  const auto& round = ctx.round();
  int64_t bytes = 0, images = 0, cpu_ns = 0;
  double pixels = 0;
  for (auto _ : state) {
    const int64_t t0 = thread_cpu_ns();
    const bool go_on = run_round(ctx, state, round, images, [&](size_t i) {
      const auto jpeg = ds.bytes(i, scratch);  // a view of the memory copy: no read
      const std::string file = ds.name(i);
      switch (backend) {
        case Backend::kTurboFull: turbo.decode(jpeg, file, out); break;
        case Backend::kTurboScaled: turbo.decode_scaled(jpeg, file, target, target, out); break;
        case Backend::kRoi: roi.decode(jpeg, file, windows[i], 0, 0, out); break;
        case Backend::kRoiScaled: roi.decode(jpeg, file, windows[i], target, target, out); break;
        case Backend::kOpenCV: decode_opencv(jpeg, file, out); break;
      }
      benchmark::DoNotOptimize(out.data.data());
      bytes += static_cast<int64_t>(jpeg.size());
      pixels += static_cast<double>(infos[i].width) * infos[i].height;
    });
    cpu_ns += thread_cpu_ns() - t0;
    if (!go_on) break;
  }
  state.SetBytesProcessed(bytes);
  set_round_counters(state, images, round.size(), cpu_ns);
  put(state, CounterId::kSourceMegapixelsPerSecond, benchmark::Counter(pixels / 1e6, benchmark::Counter::kIsRate));
}

void BM_DecodeNvjpeg(benchmark::State& state, BenchContext& ctx) {
  const auto& ds = ctx.memory();
  std::vector<uint8_t> scratch;  // unused: the memory copy hands out views
  const auto& round = ctx.round();
  int64_t bytes = 0, images = 0, cpu_ns = 0;
  double pixels = 0;
  try {
    NvjpegDecoder dec;
    if (!dec.available()) {
      ctx.fail_case(state, dec.note().c_str());
      return;
    }
    CudaStream stream;
    DeviceBuffer out;
    for (size_t i : round) {  // warm-up: nvJPEG's first decode allocates its buffers
      if (ctx.bad_files().known_bad(i)) continue;
      try {
        dec.decode(ds.bytes(i, scratch), ds.name(i), out, stream.handle());
        break;
      } catch (const DecodeError&) {
        continue;  // the timed loop says which files are bad
      }
    }
    stream.synchronize();
    for (auto _ : state) {
      const int64_t t0 = thread_cpu_ns();
      const bool go_on = run_round(ctx, state, round, images, [&](size_t i) {
        const auto jpeg = ds.bytes(i, scratch);
        const NvjpegDecoder::Size s = dec.decode(jpeg, ds.name(i), out, stream.handle());
        bytes += static_cast<int64_t>(jpeg.size());
        pixels += static_cast<double>(s.width) * s.height;
      }, CostClock::kWall);
      stream.synchronize();  // the round's last image is decoded
      cpu_ns += thread_cpu_ns() - t0;
      if (!go_on) break;
    }
  } catch (const std::exception& e) {
    ctx.fail_case(state, e.what());
    return;
  }
  state.SetBytesProcessed(bytes);
  set_round_counters(state, images, round.size(), cpu_ns);
  put(state, CounterId::kSourceMegapixelsPerSecond, benchmark::Counter(pixels / 1e6, benchmark::Counter::kIsRate));
}

}  // namespace

void register_decode_benchmarks(BenchContext& ctx) {
  const std::string t = "target:" + std::to_string(ctx.config().size);
  const std::tuple<std::string, std::string, Backend> cases[] = {
      {"turbo_full", "", Backend::kTurboFull},
      {"turbo_scaled", t, Backend::kTurboScaled},
      {"roi", "", Backend::kRoi},
      {"roi_scaled", t, Backend::kRoiScaled},
      {"opencv", "", Backend::kOpenCV},
  };
  // Listed from the plugin's file alone: loading OpenCV imgcodecs costs every run (most of
  // a short run's instructions under Callgrind, the instruction gate's) and only
  // BM_Decode/opencv needs it; the case itself loads it and says so if that fails.
  const std::string codecs_missing = opencv_codecs_not_found();
  for (const auto& [op, detail, backend] : cases) {
    if (backend == Backend::kOpenCV && !codecs_missing.empty()) {
      std::fprintf(stderr, "pipebench: BM_Decode/opencv not run: %s\n", codecs_missing.c_str());
      continue;
    }
    register_case(ctx, model::decode_case(op, detail), BM_Decode, backend)->Unit(benchmark::kMicrosecond);
  }
  if (cuda_available()) {  // without a device main() says once why the CUDA cases are not run
    const NvjpegDecoder probe;
    benchmark::AddCustomContext("nvjpeg", probe.note());
    if (!probe.available()) {
      std::fprintf(stderr, "pipebench: BM_Decode/nvjpeg not run: %s\n", probe.note().c_str());
      return;
    }
    register_case(ctx, model::decode_case("nvjpeg"), BM_DecodeNvjpeg)->UseRealTime()->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace pipebench::bench
