// The budget's probe (bench/run/case_budget.h): apart from the plan's arithmetic, which the
// tests link without a BenchContext.
#include <cstdint>
#include <vector>

#include "bench/run/bench_context.h"
#include "bench/run/case_budget.h"
#include "measure/stage_timers.h"
#include "transforms/rng.h"

namespace pipebench::bench {

double probe_sample_ms(BenchContext& ctx, int* images) {
  constexpr size_t kMaxImages = 8, kMinImages = 2;
  constexpr int64_t kMaxNs = 1'000'000'000;
  const auto& c = ctx.config();
  const Pipeline& pipeline = *c.pipeline;
  const SampleSource& ds = ctx.disk();
  PipelineWorkspace ws(pipeline);
  std::vector<float> out(pipeline.output_floats());
  std::vector<uint8_t> buffer;
  int64_t wall_ns = 0;
  size_t done = 0;
  const int64_t start = now_ns();
  const std::vector<size_t>& round = ctx.round();
  // Spread over the round (a folder's first images are one class, often one kind of photo).
  const size_t stride = std::max<size_t>(1, round.size() / kMaxImages);
  for (size_t k = 0; k < round.size(); k += stride) {
    const size_t i = round[k];
    if (done >= kMaxImages || (done >= kMinImages && now_ns() - start > kMaxNs)) break;
    try {
      const int64_t t0 = now_ns();
      const auto bytes = ds.bytes(i, buffer);
      Rng rng = Rng::for_sample(c.seed, 0, i);
      pipeline.run(bytes, ds.name(i), rng, ws, out.data());
      wall_ns += now_ns() - t0;
      ++done;
    } catch (const std::exception&) {
      // a bad file: the cases that meet it report it; the probe plans from the others
    }
  }
  if (images) *images = static_cast<int>(done);
  return done == 0 ? 0 : wall_ns / 1e6 / static_cast<double>(done);
}

}  // namespace pipebench::bench
