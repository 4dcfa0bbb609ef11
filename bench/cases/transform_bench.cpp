// BM_Transform/<op>[/<param>:<value>...]: every registered operator alone, generated from
// the registry (transforms/registry.h): one case per parameter set the operator's schema
// lists as its bench examples (the defaults when it lists none), so a new operator is
// measured without touching this file. One image per iteration, one thread, cycling over
// decoded images of the dataset. items_per_second = images/s.
//
// Inputs, as the operator meets them in a pipeline:
//   - an operator that sets the size (crops, resize) gets the full decoded images;
//   - any other image operator gets --size x --size centre crops of them (real pixels);
//   - an operator that needs the float32 tensor (scale) gets those crops converted by
//     convert_color_yuv, outside the timed region.
// The input is restored before each iteration with the timer paused (in-place operators
// such as flips and random_mask change it), so only the operator is timed.
// Batch operators (mixup, cutmix, ...) run on one collated batch per iteration instead
// (BM_BatchTransform); their images/s counts the batch's images. Each batch operator of the
// run's pipeline also gets a case with the pipeline's own parameters,
// BM_Transform/<op>/pipeline:<name>[#k] (the k-th occurrence from the second): the price
// the what-if table puts on it, per batch (issue 26: a batch operator is priced on the
// batch, never by removing it from BM_Sample). Counters: batch_ms (mean thread CPU ms per batch
// over the iterations), batch_ms_ci (the 95 % Student t half width over the iterations,
// model/paired.h's quantile), batch_images (images per batch), batch_iterations.
// A sizing operator's case times a fixed number of iterations (sizing_iterations): its input,
// a whole decoded photo, is copied back before every iteration with the timer paused, and
// Google Benchmark sizes iterations from the timed part alone, so on large photos the
// untimed copies dominated (center_crop: 47 s of copies for 17 us per crop on 5120x2880
// originals). The count keeps those copies within kSizingCopyBytes.
// A case whose operator cannot take any image of the dataset (random_crop 256 on smaller
// photos) ends with a message saying so; that is not counted as an error of the run.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <functional>

#include "bench/run/benchmarks.h"
#include "bench/run/counter_put.h"
#include "model/paired.h"
#include "measure/stage_timers.h"
#include "transforms/batch_mix.h"
#include "transforms/crop.h"
#include "transforms/image_format.h"
#include "transforms/normalize.h"
#include "transforms/registry.h"
#include "transforms/spec.h"

namespace pipebench::bench {
namespace {

std::vector<Image> centre_crops(BenchContext& ctx, int size) {
  std::vector<Image> out;
  for (const auto& img : ctx.decoded_images()) {
    if (img.height < size || img.width < size) continue;
    Image c;
    center_crop(img, size, c);
    out.push_back(std::move(c));
  }
  return out;
}

// What an operator takes: sizing operators (crops, resize) fix the size from a varying
// input, or change a --size input's size (they get whole decoded photos); operators that
// refuse an image (scale) need the tensor.
struct InputKind {
  bool sizing = false, needs_tensor = false;
};

InputKind input_kind(const Operator& op, int size) {
  InputKind k;
  const DataShape crop{false, 3, size, size};
  try {
    const DataShape out = op.output_shape(DataShape{});
    k.sizing = !out.tensor && out.fixed();
  } catch (const std::invalid_argument&) {
  }
  try {
    const DataShape out = op.output_shape(crop);
    k.sizing = k.sizing || (!out.tensor && (out.height != size || out.width != size));
  } catch (const std::invalid_argument&) {
    try {  // refuses an image, takes a tensor
      op.output_shape(DataShape{true, 3, size, size});
      k.needs_tensor = !k.sizing;
    } catch (const std::invalid_argument&) {
    }
  }
  return k;
}

/// The untimed copies a sizing operator's case may make: 1 GiB (a third of a second at a
/// memcpy's 3 GB/s), and the iterations' bounds.
constexpr double kSizingCopyBytes = 1024.0 * 1024 * 1024;
constexpr int64_t kSizingMinIterations = 32, kSizingMaxIterations = 2000;

// Iterations of a sizing operator's case: kSizingCopyBytes over the mean decoded size of
// the images BM_Transform decodes (the dataset's first 32, sized from their headers).
int64_t sizing_iterations(BenchContext& ctx) {
  const SampleSource& ds = ctx.disk();
  std::vector<uint8_t> buffer;
  double bytes = 0;
  int n = 0;
  for (size_t i = 0; i < std::min<size_t>(32, ds.size()); ++i) {
    try {
      const ImageInfo info = read_image_info(ds.bytes(i, buffer), ds.name(i));
      bytes += 3.0 * info.width * info.height;
      ++n;
    } catch (const std::exception&) {
      // a bad file: decoded_images() skips it too
    }
  }
  if (n == 0) return kSizingMinIterations;
  const double per_image = bytes / n;
  return std::clamp<int64_t>(static_cast<int64_t>(kSizingCopyBytes / per_image), kSizingMinIterations,
                             kSizingMaxIterations);
}

struct Case {
  std::unique_ptr<Operator> op;
  std::unique_ptr<Operator> to_tensor;  // builds a tensor input, untimed (scale)
};

void BM_Transform(benchmark::State& state, BenchContext& ctx, const std::string& spec_item) {
  const int size = ctx.config().size;
  Case c;
  try {
    const auto spec = parse_pipeline_spec("[" + spec_item + "]", "BM_Transform", size);
    const auto& o = spec.transforms.at(0);
    c.op = OpRegistry::instance().find(o.name)->make(o.params, {});
  } catch (const std::exception& e) {
    ctx.fail_case(state, e.what());
    return;
  }
  const InputKind kind = input_kind(*c.op, size);
  const bool sizing = kind.sizing, needs_tensor = kind.needs_tensor;
  std::vector<Image> inputs;
  if (sizing) {
    inputs = ctx.decoded_images();
  } else {
    inputs = centre_crops(ctx, size);
  }
  if (needs_tensor) {
    const auto yuv = parse_pipeline_spec("[convert_color_yuv]", "BM_Transform", size);
    c.to_tensor = OpRegistry::instance().find("convert_color_yuv")->make(yuv.transforms[0].params, {});
  }
  if (inputs.empty()) {
    state.SkipWithError("no decoded image of the dataset is at least --size on both sides");
    return;
  }
  auto op_state = c.op->make_state();
  SampleData s;
  std::vector<float> tensor(3 * static_cast<size_t>(size) * size);
  std::vector<std::vector<float>> tensors;
  if (needs_tensor) {
    for (const auto& in : inputs) {
      s.image = in;
      s.tensor = tensor.data();
      Rng unused(0);
      c.to_tensor->apply(s, unused, nullptr);
      tensors.push_back(tensor);
    }
  }
  s.tensor = tensor.data();
  size_t i = 0;
  uint64_t n = 0;
  bool ran = false;
  for (auto _ : state) {
    state.PauseTiming();
    if (needs_tensor) {
      std::copy(tensors[i].begin(), tensors[i].end(), tensor.begin());
      s.shape = DataShape{true, 3, size, size};
    } else {
      s.image = inputs[i];
      s.shape = DataShape{false, 3, s.image.height, s.image.width};
    }
    Rng rng = Rng::for_sample(ctx.config().seed, 0, n++);
    state.ResumeTiming();
    try {
      c.op->apply(s, rng, op_state.get());
    } catch (const std::exception& e) {  // e.g. random_crop 256 on a smaller image
      if (!ran) {
        state.SkipWithError((std::string("cannot run on this dataset's images: ") + e.what()).c_str());
      } else {
        ctx.fail_case(state, e.what());
      }
      break;
    }
    ran = true;
    benchmark::DoNotOptimize(s.image.data.data());
    benchmark::DoNotOptimize(tensor.data());
    i = (i + 1) % inputs.size();
  }
  state.SetItemsProcessed(state.iterations());
}

// A batch operator (mixup, cutmix, label_smoothing) on one batch of --batch normalized
// --size crops with one-hot soft labels over 1000 classes (ImageNet's count). The labels
// are made one-hot again before each iteration, untimed; the pixels are not restored:
// mixing already mixed images costs the same (the operators' arithmetic does not depend on
// pixel values), while copying the 38 MB batch back before each of the thousands of
// iterations of a cheap operator (label_smoothing) cost over a minute of untimed wall
// time per run. items_per_second = images/s.
// `spec_item`: "{op: {params}}" (a registry example), or empty with `given` the operator as
// the run's pipeline has it.
void BM_BatchTransform(benchmark::State& state, BenchContext& ctx, const std::string& spec_item,
                       const std::optional<OpSpec>& given) {
  const int size = ctx.config().size, n = ctx.config().batch, classes = 1000;
  std::unique_ptr<BatchOperator> op;
  try {
    const OpSpec o = given ? *given : parse_pipeline_spec("[" + spec_item + "]", "BM_Transform", size).batch.at(0);
    op = OpRegistry::instance().find(o.name)->make_batch(o.params, {});
  } catch (const std::exception& e) {
    ctx.fail_case(state, e.what());
    return;
  }
  const std::vector<Image> crops = centre_crops(ctx, size);
  if (crops.empty()) {
    state.SkipWithError("no decoded image of the dataset is at least --size on both sides");
    return;
  }
  const size_t sample = 3 * static_cast<size_t>(size) * size;
  std::vector<float> data(sample * n), soft(static_cast<size_t>(n) * classes);
  std::vector<int32_t> labels(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    normalize_to_chw(crops[static_cast<size_t>(i) % crops.size()], data.data() + sample * i);
    labels[static_cast<size_t>(i)] = (i * 7919) % classes;
  }
  BatchData b{data.data(), n, 3, size, size, labels.data(), soft.data(), classes};
  // The run's pipeline finishing on the device: the host's share is the draws and the
  // labels (apply_labels), the pixels are the device's.
  const bool host_share = given && ctx.config().pipeline->finishes_on_device();
  int64_t k = 0;
  std::vector<double> batch_ms;  // CPU ms per batch, for the mean and its interval
  for (auto _ : state) {
    state.PauseTiming();
    one_hot_labels(b);
    Rng rng = Rng::for_batch(ctx.config().seed, 0, static_cast<uint64_t>(k++));
    state.ResumeTiming();
    const int64_t t0 = thread_cpu_ns();  // CPU, as every per-sample price (us_per_image)
    MixDraw draw;
    if (host_share) op->apply_labels(b, rng, draw);
    else op->apply(b, rng);
    const double ms = (thread_cpu_ns() - t0) / 1e6;
    benchmark::DoNotOptimize(data.data());
    benchmark::DoNotOptimize(soft.data());
    batch_ms.push_back(ms);
  }
  state.SetItemsProcessed(state.iterations() * n);
  if (!given || k == 0) return;
  const model::MeanEstimate e = model::mean_interval(batch_ms);
  put(state, CounterId::kBatchMs, e.mean);
  put(state, CounterId::kBatchImages, n);
  put(state, CounterId::kBatchIterations, static_cast<double>(e.n));
  if (e.n >= 2) put(state, CounterId::kBatchMsCi, e.half);
}

// "{dilation: conv, p: 1.0}" -> "dilation:conv/p:1.0" (the key's detail)
std::string name_detail(const std::string& example) {
  std::string s;
  for (char ch : example) {
    if (ch == '{' || ch == '}' || ch == ' ') continue;
    s += ch == ',' ? '/' : ch;
  }
  return s;
}

}  // namespace

void register_transform_benchmarks(BenchContext& ctx) {
  const int size = ctx.config().size;
  std::optional<int64_t> sizing_count;  // read from the headers once, when a sizing op needs it
  for (const auto& op : OpRegistry::instance().all()) {
    if (op.stage == OpStage::kDecode) continue;  // BM_Decode measures the decoders
    std::vector<std::string> examples = op.bench_examples;
    if (examples.empty()) examples.push_back("{}");
    for (const auto& ex : examples) {
      const std::string item = "{" + op.name + ": " + ex + "}";
      model::CaseKey key;
      key.family = model::Family::kTransform;
      key.op = op.name;
      key.detail = name_detail(ex);
      if (op.stage == OpStage::kBatch) {
        register_case(ctx, key, BM_BatchTransform, item, std::optional<OpSpec>())->Unit(benchmark::kMillisecond);
      } else {
        auto* b = register_case(ctx, key, BM_Transform, item)->Unit(benchmark::kMicrosecond);
        bool sizing = false;
        try {
          const auto spec = parse_pipeline_spec("[" + item + "]", "BM_Transform", size);
          sizing = input_kind(*op.make(spec.transforms.at(0).params, {}), size).sizing;
        } catch (const std::exception&) {
          // the case reports it when it runs
        }
        if (sizing) {
          if (!sizing_count) sizing_count = sizing_iterations(ctx);
          b->Iterations(*sizing_count);
        }
      }
    }
  }
  // The run's pipeline's batch operators with its own parameters: their per-batch prices.
  const auto& pipeline = *ctx.config().pipeline;
  std::map<std::string, int> seen;
  for (const OpSpec& o : pipeline.spec().batch) {
    const int k = ++seen[o.name];
    const model::CaseKey key = model::batch_op_price_case(o.name, pipeline.name(), k);
    register_case(ctx, key, BM_BatchTransform, std::string(), std::optional<OpSpec>(o))
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace pipebench::bench
