// BM_Sample/<pipeline>: one whole sample on one thread: read the file (warm page cache),
// decode, and the pipeline's operators, into a float32 CHW output; one round of images per
// iteration (bench/image_round.h: every BM_Sample case averages the same images). This is the per-sample
// CPU cost of a pipeline, the number a worker count is sized from. One case per shipped
// recipe, and one for --pipeline (which takes the place of a recipe of the same name).
// items_per_second = images/s; us_per_image = thread CPU time per image, µs; read_ms,
// decode_ms and transform_ms are the mean wall time per sample, ms.
// A pipeline with batch operators (mixup, cutmix, label smoothing) writes each sample into
// its slot of a --batch buffer, as the loader does, and runs the batch operators whenever
// the buffer is full, inside the timed loop: their cost is shared by the batch's samples
// (batch_ops_ms, per sample of the completed batches), because workers pay it too; the
// samples of a last, unfilled batch have not paid their share in items_per_second.
// BM_Sample/<pipeline>/<change>: the what-if candidates of the run's pipeline (below).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <utility>

#include <functional>

#include "bench/benchmarks.h"
#include "bench/image_round.h"
#include "pipeline/stage_timers.h"
#include "transforms/recipes.h"

namespace pipebench::bench {
namespace {

void BM_Sample(benchmark::State& state, BenchContext& ctx,
               const std::shared_ptr<const Pipeline>& pipeline) {
  const auto& c = ctx.config();
  const auto& ds = ctx.disk();
  PipelineWorkspace ws(*pipeline);
  const bool batched = pipeline->batch_operator_count() > 0;
  const int batch = batched ? c.batch : 1;
  const size_t floats = pipeline->output_floats();
  std::vector<float> out(floats * static_cast<size_t>(batch));
  const int classes = std::max<int>(1, static_cast<int>(ds.classes().size()));
  std::vector<int32_t> labels(static_cast<size_t>(batch));
  std::vector<float> soft(static_cast<size_t>(batch) * classes);
  const auto shape = pipeline->output_shape();
  int filled = 0;
  int64_t batches = 0, batch_ns = 0;
  std::vector<uint8_t> bytes;
  int64_t read_ns = 0, nbytes = 0, images = 0, cpu_ns = 0;
  SampleTimes total;
  bool batch_failed = false;
  // One sample: read, decode and the operators into its slot of the batch buffer; the
  // batch operators when the buffer is full. A throw is the file's fault.
  const auto sample = [&](size_t i) {
    const int64_t t0 = now_ns();
    ds.read(i, bytes);
    read_ns += now_ns() - t0;
    Rng rng = Rng::for_sample(c.seed, 0, i);
    SampleTimes times;
    pipeline->run(bytes, ds.sample(i).path.native(), rng, ws, out.data() + floats * filled, &times);
    total.decode_ns += times.decode_ns;
    total.transform_ns += times.transform_ns;
    labels[static_cast<size_t>(filled)] = ds.sample(i).label;
    benchmark::DoNotOptimize(out.data());
    nbytes += static_cast<int64_t>(bytes.size());
    if (!batched || ++filled < batch) return;
    filled = 0;
    const int64_t t1 = now_ns();
    BatchData b{out.data(), batch, shape[0], shape[1], shape[2], labels.data(), soft.data(), classes};
    Rng batch_rng = Rng::for_batch(c.seed, 0, static_cast<uint64_t>(batches++));
    try {
      pipeline->run_batch(b, batch_rng);
    } catch (const std::exception& e) {  // not a file's fault: the case fails
      if (!batch_failed) ctx.fail_case(state, e.what());
      batch_failed = true;
    }
    batch_ns += now_ns() - t1;
  };
  for (auto _ : state) {
    const int64_t t0 = thread_cpu_ns();
    const bool go_on = run_round(ctx, state, ctx.round(), images, sample);
    cpu_ns += thread_cpu_ns() - t0;
    if (!go_on || batch_failed) break;
  }
  state.SetBytesProcessed(nbytes);
  set_round_counters(state, images, ctx.round().size(), cpu_ns);
  const double n = static_cast<double>(std::max<int64_t>(1, images));
  state.counters["read_ms"] = read_ns / 1e6 / n;
  state.counters["decode_ms"] = total.decode_ns / 1e6 / n;
  state.counters["transform_ms"] = total.transform_ns / 1e6 / n;
  // Per sample of the batches completed (a last, unfilled batch has not paid yet).
  if (batched && batches > 0) state.counters["batch_ops_ms"] = batch_ns / 1e6 / (batches * batch);
}

// The what-if candidates (issue 8): the run's pipeline with one change each, measured
// beside it so that pipebench-report can say what each change saves:
//   decode:auto          the same spec with the ROI / DCT-scaled decode planner, when the
//                        spec asks for another decode and the planner would change it;
//   without:<op>[#k]     the spec without that one operator (per-sample or batch), when
//                        the rest still builds: what the operator costs (it changes what
//                        the model sees, so it is a price, not a fix).
std::vector<std::pair<std::string, std::shared_ptr<const Pipeline>>> what_if_candidates(
    const Pipeline& p) {
  std::vector<std::pair<std::string, std::shared_ptr<const Pipeline>>> out;
  const PipelineSpec& spec = p.spec();
  const auto add = [&](const std::string& label, const PipelineSpec& changed) {
    try {
      out.emplace_back(label, Pipeline::build(changed, p.decode_options()));
    } catch (const std::invalid_argument&) {  // the rest does not build without it
    }
  };
  if (spec.decode_mode != "auto" && spec.decode_mode != "roi") {
    PipelineSpec s = spec;
    s.decode_mode = "auto";
    try {
      auto c = Pipeline::build(s, p.decode_options());
      if (c->decode_plan() != p.decode_plan()) out.emplace_back("decode:auto", c);
    } catch (const std::invalid_argument&) {
    }
  }
  std::map<std::string, int> seen;
  const auto label_of = [&](const std::string& op) {
    const int k = ++seen[op];
    return "without:" + op + (k > 1 ? "#" + std::to_string(k) : "");
  };
  for (size_t i = 0; i < spec.transforms.size(); ++i) {
    PipelineSpec s = spec;
    s.transforms.erase(s.transforms.begin() + static_cast<std::ptrdiff_t>(i));
    add(label_of(spec.transforms[i].name), s);
  }
  for (size_t i = 0; i < spec.batch.size(); ++i) {
    PipelineSpec s = spec;
    s.batch.erase(s.batch.begin() + static_cast<std::ptrdiff_t>(i));
    add(label_of(spec.batch[i].name), s);
  }
  return out;
}

}  // namespace

void register_sample_benchmarks(BenchContext& ctx) {
  const auto& mine = ctx.config().pipeline;
  for (const auto& name : recipe_names()) {
    if (name == mine->name()) continue;  // registered below, as the run's pipeline
    register_case(ctx, ("BM_Sample/" + name).c_str(), BM_Sample,
                                 build_recipe(name, ctx.config().size))
        ->Unit(benchmark::kMicrosecond);
  }
  register_case(ctx, "BM_Sample/" + mine->name(), BM_Sample, mine)
      ->Unit(benchmark::kMicrosecond);
  for (const auto& [label, candidate] : what_if_candidates(*mine))
    register_case(ctx, "BM_Sample/" + mine->name() + "/" + label, BM_Sample, candidate)
        ->Unit(benchmark::kMicrosecond);
}

}  // namespace pipebench::bench
