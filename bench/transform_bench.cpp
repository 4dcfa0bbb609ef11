// BM_Transform: each per-sample transform alone, on decoded images of the dataset (full
// resolution for the crops; the crop's output size for the rest), one image per
// iteration, one thread. items_per_second = images/s.
//   random_resized_crop/size:S   torchvision RandomResizedCrop(S) window + resize
//   resize_center_crop/size:S    Resize(S*256/224) + CenterCrop(S)
//   horizontal_flip/size:S       on an S x S image
//   normalize/size:S             uint8 HWC -> float32 CHW, ImageNet mean/std
//   random_crop/size:256         the case study's RandomCrop(256)
//   random_mask/dilation:M       RandomMask(0.25) on 256 x 256, 4-neighbour dilation by
//                                M = conv (2-D convolution), shifts (boolean shifts), opencv
//   convert_color_yuv/size:256   RGB -> YUV BT.601, float32 CHW
//   scale/size:256               x / 255 over 3 x 256 x 256 floats
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "bench/bench_config.h"
#include "transforms/casestudy.h"
#include "transforms/crop.h"
#include "transforms/normalize.h"

namespace pipebench::bench {
namespace {

/// Centre crops of the decoded images at size x size: inputs for the per-crop transforms.
std::vector<Image> crops(int size) {
  std::vector<Image> out;
  for (const auto& img : decoded_images()) {
    if (img.height < size || img.width < size) continue;
    Image c;
    center_crop(img, size, c);
    out.push_back(std::move(c));
  }
  return out;
}

/// The decoded images at least size x size (RandomCrop takes no smaller ones).
std::vector<Image> at_least(int size) {
  std::vector<Image> out;
  for (const auto& img : decoded_images())
    if (img.height >= size && img.width >= size) out.push_back(img);
  return out;
}

using Body = std::function<void(const Image& in, Rng& rng)>;

void run(benchmark::State& state, const std::vector<Image>& inputs, const Body& body) {
  if (inputs.empty()) {
    fail_case(state, "no decoded image of the dataset is large enough for this transform");
    return;
  }
  size_t i = 0;
  uint64_t n = 0;
  for (auto _ : state) {
    Rng rng = Rng::for_sample(config().seed, 0, n++);
    try {
      body(inputs[i], rng);
    } catch (const std::exception& e) {  // e.g. an image smaller than the crop
      fail_case(state, e.what());
      break;
    }
    i = (i + 1) % inputs.size();
  }
  state.SetItemsProcessed(state.iterations());
}

void reg(const std::string& name, std::function<void(benchmark::State&)> fn) {
  benchmark::RegisterBenchmark(("BM_Transform/" + name).c_str(), std::move(fn))
      ->Unit(benchmark::kMicrosecond);
}

}  // namespace

void register_transform_benchmarks() {
  const int s = config().size;
  const std::string ss = std::to_string(s);

  reg("random_resized_crop/size:" + ss, [s](benchmark::State& st) {
    Image out;
    run(st, decoded_images(), [&](const Image& in, Rng& rng) {
      resized_crop(in, random_resized_crop_window(in.height, in.width, rng), s, s, out);
      benchmark::DoNotOptimize(out.data.data());
    });
  });
  reg("resize_center_crop/size:" + ss, [s](benchmark::State& st) {
    Image out;
    run(st, decoded_images(), [&](const Image& in, Rng&) {
      // Resize(S * 256 / 224) + CenterCrop(S), fused as the imagenet_val recipe runs it.
      resize_shorter_center_crop(in, static_cast<int>(std::lround(s * 256.0 / 224.0)), s, out);
      benchmark::DoNotOptimize(out.data.data());
    });
  });
  reg("horizontal_flip/size:" + ss, [s](benchmark::State& st) {
    auto inputs = crops(s);
    run(st, inputs, [&](const Image& in, Rng&) {
      // In place, on the input itself: flipping does the same work whatever the pixels.
      Image& img = const_cast<Image&>(in);
      horizontal_flip(img);
      benchmark::DoNotOptimize(img.data.data());
    });
  });
  reg("normalize/size:" + ss, [s](benchmark::State& st) {
    auto inputs = crops(s);
    std::vector<float> out(3 * s * s);
    run(st, inputs, [&](const Image& in, Rng&) {
      normalize_to_chw(in, out.data());
      benchmark::DoNotOptimize(out.data());
    });
  });
  reg("random_crop/size:256", [](benchmark::State& st) {
    Image out;
    run(st, at_least(256), [&](const Image& in, Rng& rng) {
      random_crop(in, 256, rng, out);
      benchmark::DoNotOptimize(out.data.data());
    });
  });
  for (auto m : {DilationMethod::kConvolution, DilationMethod::kBooleanShifts, DilationMethod::kOpenCV}) {
    reg(std::string("random_mask/dilation:") + dilation_method_name(m), [m](benchmark::State& st) {
      auto inputs = crops(256);
      MaskScratch scratch;
      run(st, inputs, [&](const Image& in, Rng& rng) {
        // In place: drawing, dilating and applying the mask cost the same whatever the
        // pixels (masked ones are already 0 after the first pass).
        Image& img = const_cast<Image&>(in);
        random_mask(img, 0.25, m, rng, scratch);
        benchmark::DoNotOptimize(img.data.data());
      });
    });
  }
  reg("convert_color_yuv/size:256", [](benchmark::State& st) {
    auto inputs = crops(256);
    std::vector<float> out(3 * 256 * 256);
    run(st, inputs, [&](const Image& in, Rng&) {
      rgb_to_yuv_chw(in, out.data());
      benchmark::DoNotOptimize(out.data());
    });
  });
  reg("scale/size:256", [](benchmark::State& st) {
    // Scale works in place: each iteration restores its input (YUV floats made once)
    // with the timer paused, so only the division is timed.
    std::vector<std::vector<float>> yuv;
    for (const auto& in : crops(256)) {
      yuv.emplace_back(3 * 256 * 256);
      rgb_to_yuv_chw(in, yuv.back().data());
    }
    if (yuv.empty()) {
      fail_case(st, "no decoded image of the dataset is at least 256 x 256");
      return;
    }
    std::vector<float> out(3 * 256 * 256);
    size_t i = 0;
    for (auto _ : st) {
      st.PauseTiming();
      std::copy(yuv[i].begin(), yuv[i].end(), out.begin());
      st.ResumeTiming();
      scale_unit(out.data(), out.size());
      benchmark::DoNotOptimize(out.data());
      i = (i + 1) % yuv.size();
    }
    st.SetItemsProcessed(st.iterations());
  });
}

}  // namespace pipebench::bench
