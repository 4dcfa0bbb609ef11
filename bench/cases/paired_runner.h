// The paired runner (issue 26): today's pipeline A and a candidate B over the same images,
// A B B A per block with the same bytes and the same random draws, each side's thread CPU
// per block and, on request, per image. Used by the paired BM_Sample cases
// (bench/cases/sample_bench.cpp, the rounds and their counters) and by the probe of a fix's
// costliest files (bench/cases/fix_probe.h).
// Units: thread CPU ns as measured, ms per sample where a name says ms. Errors: a side's
// Pipeline::run errors (DecodeError for a file that does not decode) pass through block().
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "datasets/sample_source.h"
#include "measure/stage_timers.h"
#include "model/copy_fix_price.h"
#include "transforms/aligned_vector.h"
#include "transforms/pipeline.h"
#include "transforms/rng.h"

namespace pipebench::bench {

// One side of a paired case: a pipeline over a source, the source's index of each image of
// the round (the same images on both sides, in the same order).
struct PairedSide {
  const Pipeline* pipeline = nullptr;
  const SampleSource* source = nullptr;
  std::vector<size_t> index;
};

// What a paired case measured: per block, A's and B's ms per sample and the block's place
// in the round; in all, each side's thread CPU and B's images (two runs of each block).
struct PairedTimes {
  std::vector<double> a_ms, b_ms;
  std::vector<int> position;
  int64_t a_cpu_ns = 0, b_cpu_ns = 0, b_images = 0;
  int rounds = 0;
  // Per image (only when per_image: the presized copies' cases, decode:auto's paired case
  // and its probe), by its place in the sides' block order: each side's thread CPU summed
  // over its runs, ns, and the runs of each side (two per block visited: A1 A2, B1 B2);
  // for the fixes' step prices (model/copy_fix_price.h, model/ratio_fix_price.h). Sized by
  // the runner.
  bool per_image = false;
  std::vector<int64_t> a_image_ns, b_image_ns;
  std::vector<int> image_runs;
};

// The two sides of a paired case at work: each side's workspace and 64-byte aligned output,
// the sides' scratch exchanged on request (PipelineWorkspace::swap_scratch).
class PairedRunner {
 public:
  PairedRunner(const PairedSide& a, const PairedSide& b, uint64_t seed)
      : a_(a), b_(b), seed_(seed), wa_(*a.pipeline), wb_(*b.pipeline),
        store_a_(a.pipeline->output_floats()), store_b_(b.pipeline->output_floats()),
        out_a_(store_a_.data()), out_b_(store_b_.data()) {}

  // One block of n images from `first`, A B B A (or B A A B when !a_first), the sides'
  // memory exchanged or not as `swapped` asks; adds both sides' times to `t`.
  void block(const std::vector<std::span<const uint8_t>>& bytes_a,
             const std::vector<std::span<const uint8_t>>& bytes_b, size_t first, size_t n, int pos,
             bool a_first, bool swapped, PairedTimes& t) {
    if (swapped != swapped_) {
      wa_.swap_scratch(wb_);
      if (store_a_.size() == store_b_.size()) std::swap(out_a_, out_b_);  // the outputs too
      swapped_ = swapped;
    }
    if (t.per_image && t.image_runs.size() < first + n) {
      t.a_image_ns.resize(first + n);
      t.b_image_ns.resize(first + n);
      t.image_runs.resize(first + n);
    }
    const auto run_a = [&] { return run(a_, wa_, out_a_, bytes_a, first, n, t.per_image ? &t.a_image_ns : nullptr); };
    const auto run_b = [&] { return run(b_, wb_, out_b_, bytes_b, first, n, t.per_image ? &t.b_image_ns : nullptr); };
    int64_t a1 = 0, a2 = 0, b1 = 0, b2 = 0;
    if (a_first) {
      a1 = run_a();
      b1 = run_b();
      b2 = run_b();
      a2 = run_a();
    } else {
      b1 = run_b();
      a1 = run_a();
      a2 = run_a();
      b2 = run_b();
    }
    const double per = 2e6 * static_cast<double>(n);  // two runs of n samples, ns -> ms
    t.a_ms.push_back(static_cast<double>(a1 + a2) / per);
    t.b_ms.push_back(static_cast<double>(b1 + b2) / per);
    t.position.push_back(pos);
    t.a_cpu_ns += a1 + a2;
    t.b_cpu_ns += b1 + b2;
    t.b_images += 2 * static_cast<int64_t>(n);
    if (t.per_image)
      for (size_t k = 0; k < n; ++k) t.image_runs[first + k] += 2;
  }

 private:
  // The block's thread CPU, ns; with image_ns, each image's added to it (one clock read
  // per image: a few hundred ns against a sample's 0.1-10 ms, the same on both sides).
  int64_t run(const PairedSide& side, PipelineWorkspace& ws, float* out,
              const std::vector<std::span<const uint8_t>>& bytes, size_t first, size_t n,
              std::vector<int64_t>* image_ns) const {
    const int64_t t0 = thread_cpu_ns();
    int64_t before = t0;
    for (size_t k = 0; k < n; ++k) {
      Rng rng = Rng::for_sample(seed_, 0, a_.index[first + k]);  // the originals' indices key the draws
      side.pipeline->run(bytes[k], side.source->name(side.index[first + k]), rng, ws, out);
      benchmark::DoNotOptimize(out);
      if (image_ns) {
        const int64_t after = thread_cpu_ns();
        (*image_ns)[first + k] += after - before;
        before = after;
      }
    }
    return image_ns ? before - t0 : thread_cpu_ns() - t0;
  }

  const PairedSide& a_;
  const PairedSide& b_;
  uint64_t seed_;
  PipelineWorkspace wa_, wb_;
  // Each side's output on a 64-byte boundary: the resampler writes whole aligned 64-byte
  // runs with streaming stores (transforms/resize.h), so two buffers at different offsets
  // from a cache line do different work. malloc gives 16 bytes; in a fresh process both
  // large buffers come from mmap at the same offset, but after the run's earlier cases
  // glibc serves them from the heap at any 16-byte offset (its mmap threshold grows as
  // large blocks are freed): the A/A control read 0.3-0.8 % outside its interval in 4 of
  // 5 default runs on photos-in, and held 0 in 19 of 20 runs of the case alone.
  AlignedVector<float> store_a_, store_b_;
  float* out_a_;
  float* out_b_;
  bool swapped_ = false;
};

// Each image the rounds visited, by the original's dataset index (side a in block order):
// today's and the candidate's thread CPU per run, ms.
std::vector<model::PairedImageCost> image_costs(const PairedTimes& t, const PairedSide& a);

}  // namespace pipebench::bench
