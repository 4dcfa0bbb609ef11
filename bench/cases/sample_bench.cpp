// BM_Sample/<pipeline>: one whole sample on one thread: read the file (warm page cache),
// decode, and the pipeline's operators, into a float32 CHW output (a uint8 pipeline writes
// its uint8 sample, in its layout, into that buffer); one round of images per
// iteration (bench/run/image_round.h: every BM_Sample case averages the same images). This is the per-sample
// CPU cost of a pipeline, the number a worker count is sized from. One case per shipped
// recipe, and one for --pipeline (which takes the place of a recipe of the same name).
// items_per_second = images/s; us_per_image = thread CPU time per image, µs; read_ms,
// decode_ms and transform_ms are the mean wall time per sample, ms.
// A pipeline with batch operators (mixup, cutmix, label smoothing) writes each sample into
// its slot of a --batch buffer, as the loader does, and runs the batch operators whenever
// the buffer is full, inside the timed loop: their cost is shared by the batch's samples
// (batch_ops_ms, per sample of the completed batches), because workers pay it too; the
// samples of a last, unfilled batch have not paid their share in items_per_second.
// BM_Sample/<pipeline>/<change>: the what-if candidates of the run's pipeline (below);
// presized:<N> adds presize_shorter_side_px and presize_jpeg_quality.
// BM_Sample/casestudy/pair:casestudy_shifts: the case study's two recipes paired.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "bench/run/benchmarks.h"
#include "bench/run/counter_put.h"
#include "bench/cases/what_if_candidates.h"
#include "bench/run/image_round.h"
#include "bench/cases/paired_fidelity.h"
#include "bench/cases/paired_runner.h"
#include "bench/run/presized_copy.h"
#include "model/catalogue.h"
#include "model/paired.h"
#include "measure/stage_timers.h"
#include "transforms/aligned_vector.h"
#include "transforms/image_format.h"
#include "transforms/recipes.h"

namespace pipebench::bench {
namespace {

// The body of every BM_Sample case: `pipeline` over the images of `ds` that `run_one_round`
// hands out, one round (of round_size images) per iteration. run_one_round(images, fn)
// calls fn(index) for each index of its round, adds the count done to `images`, and
// returns false when the case must stop (image_round.h run_round's contract).
template <class RunRound>
void sample_case(benchmark::State& state, BenchContext& ctx, const std::shared_ptr<const Pipeline>& pipeline,
                 const SampleSource& ds, size_t round_size, RunRound&& run_one_round) {
  const auto& c = ctx.config();
  PipelineWorkspace ws(*pipeline);
  const bool batched = pipeline->batch_operator_count() > 0;
  const int batch = batched ? c.batch : 1;
  const size_t floats = pipeline->output_floats();
  std::vector<float> out(floats * static_cast<size_t>(batch));
  const int classes = std::max<int>(1, static_cast<int>(ds.num_classes()));
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
    const std::span<const uint8_t> encoded = ds.bytes(i, bytes);
    read_ns += now_ns() - t0;
    Rng rng = Rng::for_sample(c.seed, 0, i);
    SampleTimes times;
    pipeline->run(encoded, ds.name(i), rng, ws, out.data() + floats * filled, &times);
    total.decode_ns += times.decode_ns;
    total.transform_ns += times.transform_ns;
    labels[static_cast<size_t>(filled)] = ds.label(i);
    benchmark::DoNotOptimize(out.data());
    nbytes += static_cast<int64_t>(encoded.size());
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
    const bool go_on = run_one_round(images, sample);
    cpu_ns += thread_cpu_ns() - t0;
    if (!go_on || batch_failed) break;
  }
  state.SetBytesProcessed(nbytes);
  set_round_counters(state, images, round_size, cpu_ns);
  const double n = static_cast<double>(std::max<int64_t>(1, images));
  put(state, CounterId::kReadMs, read_ns / 1e6 / n);
  put(state, CounterId::kDecodeMs, total.decode_ns / 1e6 / n);
  put(state, CounterId::kTransformMs, total.transform_ns / 1e6 / n);
  // Per sample of the batches completed (a last, unfilled batch has not paid yet).
  if (batched && batches > 0) put(state, CounterId::kBatchOpsMs, batch_ns / 1e6 / (batches * batch));
}

// BM_Sample/<pipeline>/<kind>:<param> (a what-if candidate, and control:aa, today against
// itself): the candidate B paired with today's pipeline A (issue 26), A B B A over each
// block of kPairBlock images of the round (B A A B on every second block: counterbalanced;
// the two sides' scratch memory exchanged every second pair of blocks, both patterns
// turned over from one round to the next;
// smaller blocks on a round of fewer than 128 images, in whole groups of four blocks so
// that both patterns are balanced within one round, model::paired_block_sizes, each group's
// images spread over the round, model::group_spread_order; the round repeated for at least
// kPairedBudgetShare of --budget, or cut after the whole groups that took it when one round
// would take over twice that (cut_round): images_per_round then counts the images
// measured), the same bytes (read once per block, before the
// four runs: a pure CPU comparison) and the same random draws (one stream per operator,
// transforms/rng.h). presized:<N> pairs today's pipeline on the originals (A) with the same
// pipeline on the presized copy of the same images (B: the copy's file of the same name,
// its own bytes). Per block, A and B are each the mean of their two runs, thread CPU ms
// per sample; model/paired.h gives the saving A - B with its 95 % t interval and the ratio
// B / A: after two or more rounds by round position (paired_by_position 1: from the log
// ratios, the repeats' noise and, for a round that is a share paired_round_share of the
// dataset, the images' spread), after one round over the blocks. Counters: us_per_image and
// items_per_second (B's own thread CPU per image and rate, as every BM_Sample case's are its
// pipeline's), paired_today_us (A's, in the same case), paired_saving_ms, paired_saving_ci_ms (the
// interval's half width), paired_ratio, paired_ratio_lo, paired_ratio_hi, paired_blocks,
// paired_rounds (per iteration), paired_by_position, paired_round_share; after the timed
// rounds, outside them, the fidelity pass (issue 35, bench/cases/paired_fidelity.h: every case but
// an operator's price): fidelity_* (A's output against B's as pixels) and upsampled_*.
// Per-sample operators only: batch operators are priced per batch (BM_Transform).
constexpr size_t kPairBlock = 16;
// Rounds are repeated within one iteration until this share of --budget (seconds per
// case) has passed, 1.6 s by default: on photos-in one round of 256 images (16 blocks)
// gave intervals of +-4 % of the sample for decode:auto, three rounds about +-2 %.
constexpr double kPairedBudgetShare = 0.2;

// An image's class folder and file name ("n01440764/img_0001.png").
std::string folder_file(const std::filesystem::path& p) { return (p.parent_path().filename() / p.filename()).string(); }

// Pairs each image of `original_side` with the copy's file of it, by presize's naming rule
// (datasets/presize.h): the original's name with its extension replaced by .jpg, or, when
// that name was taken (x.png beside x.jpg), its whole name + .jpg; looked up in that
// order, the collision form first. An original the copy lacks (pipebench-data presize
// could not read it: a bad file) leaves both sides; none left is an error naming the copy.
void match_copy(PairedSide& original_side, PairedSide& copy_side, const std::string& copy_dir) {
  std::unordered_map<std::string, size_t> by_name;
  const SampleSource& copy = *copy_side.source;
  for (size_t j = 0; j < copy.size(); ++j) by_name.emplace(folder_file(copy.name(j)), j);
  std::vector<size_t> kept;
  copy_side.index.clear();
  for (size_t i : original_side.index) {
    std::filesystem::path p(original_side.source->name(i));
    auto it = by_name.find(folder_file(std::filesystem::path(p) += ".jpg"));  // x.png -> x.png.jpg
    if (it == by_name.end()) it = by_name.find(folder_file(p.replace_extension(".jpg")));
    if (it == by_name.end()) continue;
    kept.push_back(i);
    copy_side.index.push_back(it->second);
  }
  if (kept.empty()) throw std::runtime_error("presized copy " + copy_dir + " holds none of the round's images");
  original_side.index = std::move(kept);
}


// The paired case's counters (model/counters.h, family kPaired), and the candidate's own
// figures, from B's thread CPU over its two runs of every block: its time per image and its
// rate (items_per_second, images/s). Never the A B B A pair's rate: the case's time holds
// A's runs too, and a candidate at 2,441 images/s read as 510.8 (issue 37). No
// SetItemsProcessed for that reason.
void put_paired_counters(benchmark::State& state, const PairedTimes& t, size_t round_size, size_t dataset_size) {
  put(state, CounterId::kImagesPerRound, static_cast<double>(round_size));
  if (t.b_images == 0 || t.b_cpu_ns <= 0) return;
  const double b_images = static_cast<double>(t.b_images);
  put(state, CounterId::kUsPerImage, static_cast<double>(t.b_cpu_ns) / 1e3 / b_images);
  put(state, CounterId::kItemsPerSecond, b_images / (static_cast<double>(t.b_cpu_ns) / 1e9));
  put(state, CounterId::kPairedTodayUs, static_cast<double>(t.a_cpu_ns) / 1e3 / b_images);
  // The round's share of the dataset: a saving measured on part of it carries the images'
  // spread into its interval; on all of it, only the noise (model/paired.h).
  const double share = std::min(1.0, static_cast<double>(round_size) / static_cast<double>(std::max<size_t>(1, dataset_size)));
  const model::PairedEstimate e = model::paired_estimate(t.a_ms, t.b_ms, t.position, share);
  put(state, CounterId::kPairedRoundShare, share);
  put(state, CounterId::kPairedBlocks, e.blocks);
  // Rounds per iteration, as the row's times are (Google Benchmark may run the case for
  // several iterations under a short --benchmark_min_time, each of at least one round).
  put(state, CounterId::kPairedRounds, benchmark::Counter(t.rounds, benchmark::Counter::kAvgIterations));
  // How the interval was made: by round position (the same images measured paired_rounds
  // times) or, after one round, over the blocks.
  put(state, CounterId::kPairedByPosition, e.positions > 0 ? 1 : 0);
  put(state, CounterId::kPairedSavingMs, e.diff);
  if (e.blocks >= 2) {
    put(state, CounterId::kPairedSavingCiMs, e.diff_half);
    put(state, CounterId::kPairedRatioLo, e.ratio_lo);
    put(state, CounterId::kPairedRatioHi, e.ratio_hi);
  }
  put(state, CounterId::kPairedRatio, e.ratio);
}

// Whether the first round stops after `done` of its `blocks` blocks (a whole group): its
// budget share is spent and the whole round would take over twice that share (large
// originals: photos-full's round of 44 took 10 s against 1.6 s). A round only a little over
// the share (photos-in's 256 images, about 2 s) runs whole, as every round did before.
bool cut_round(int64_t elapsed_ns, int64_t share_ns, size_t done, size_t blocks) {
  if (elapsed_ns < share_ns) return false;
  const double whole_ns = static_cast<double>(elapsed_ns) * static_cast<double>(blocks) / static_cast<double>(done);
  return whole_ns > 2.0 * static_cast<double>(share_ns);
}

// The two sides with their images in the order the blocks meet them (the originals' and
// the candidate's index permuted alike: model::group_spread_order).
std::pair<PairedSide, PairedSide> in_block_order(const PairedSide& a, const PairedSide& b,
                                                 const std::vector<size_t>& order) {
  std::pair<PairedSide, PairedSide> out{a, b};
  for (size_t j = 0; j < order.size(); ++j) {
    out.first.index[j] = a.index[order[j]];
    out.second.index[j] = b.index[order[j]];
  }
  return out;
}

// `fidelity`: after the timed rounds, the fidelity pass (bench/cases/paired_fidelity.h) compares
// A's and B's outputs that way; nullopt for an operator's price (without:<op>), no fix.
// `fidelity_only`: the positions in the round the pass compares (the images a large-only
// copy changed); empty: all of them.
// With per_image, returns each image's costs as timed (model::PairedImageCost: the
// original's dataset index, today's and the candidate's thread CPU ms per sample) for the
// images the rounds visited; else nothing (no clock read per image).
std::vector<model::PairedImageCost> paired_case(benchmark::State& state, BenchContext& ctx, const PairedSide& today,
                                                const PairedSide& cand, std::optional<FidelityMode> fidelity,
                                                const std::vector<size_t>& fidelity_only = {}, bool per_image = false) {
  const auto& c = ctx.config();
  // Blocks of up to kPairBlock images, smaller on a small round (about 8 blocks where the
  // round allows, at least 4 images each: more blocks narrow the interval), in whole
  // groups of four so that order and placement (below) are balanced within one round;
  // each group's images spread over the round.
  const size_t n = today.index.size();
  const std::vector<size_t> blocks = model::paired_block_sizes(n, std::clamp<size_t>(n / 8, 4, kPairBlock), 4);
  const auto [a, b] = in_block_order(today, cand, model::group_spread_order(blocks, 4));
  PairedRunner runner(a, b, c.seed);
  const size_t most = blocks.empty() ? 0 : *std::max_element(blocks.begin(), blocks.end());
  std::vector<std::vector<uint8_t>> buf_a(most), buf_b(most);
  std::vector<std::span<const uint8_t>> bytes_a(most), bytes_b(most);
  PairedTimes t;
  t.per_image = per_image;
  bool failed = n == 0;
  if (failed) ctx.fail_case(state, "every file of the round is bad (see the skipped files)");
  const auto paired_ns = static_cast<int64_t>(kPairedBudgetShare * c.budget_s * 1e9);
  // Blocks per round: all of them, or the whole groups the first round had time for (a
  // round of large originals: one group of photos-full's two took 5 s of its 10).
  size_t used = blocks.size();
  for (auto _ : state) {
    if (failed) break;
    // As many rounds as kPairedBudgetShare allows (at least one group): the case's time budget.
    const int64_t start = now_ns();
    do {
      size_t first = 0;
      for (size_t p = 0; p < used && !failed; first += blocks[p], ++p) {
        const size_t k_images = blocks[p];
        try {
          for (size_t k = 0; k < k_images; ++k) {
            bytes_a[k] = a.source->bytes(a.index[first + k], buf_a[k]);
            bytes_b[k] = b.source == a.source ? bytes_a[k] : b.source->bytes(b.index[first + k], buf_b[k]);
          }
          // A B B A or B A A B: the first run after the bytes were read meets colder caches,
          // and that penalty must not always fall on A (an A/A control read +0.4 % in 5 of
          // 20 runs on photos-in with A always first). And the sides exchange the memory
          // they work in (PipelineWorkspace::swap_scratch: with a fixed placement the A/A
          // control still read 0.2-0.5 % outside its interval in 5 of 20). Order and
          // placement cycle over four blocks and turn over from one round to the next, so
          // that every block of images meets each of them equally often over two rounds.
          const int pos = static_cast<int>(p);
          const bool a_first = (pos + t.rounds) % 2 == 0;
          const bool swapped = (pos / 2 + t.rounds) % 2 == 1;
          runner.block(bytes_a, bytes_b, first, k_images, pos, a_first, swapped, t);
        } catch (const std::exception& e) {  // a bad file in this block: the block is left out
          if (!ctx.on_bad_file(state, a.index[first], e.what())) failed = true;
        }
        if (t.rounds == 0 && (p + 1) % 4 == 0 && p + 1 < used && cut_round(now_ns() - start, paired_ns, p + 1, used))
          used = p + 1;
      }
      ++t.rounds;
    } while (!failed && now_ns() - start < paired_ns);
  }
  const size_t measured = std::accumulate(blocks.begin(), blocks.begin() + static_cast<std::ptrdiff_t>(used), size_t{0});
  put_paired_counters(state, t, measured, a.source->size());
  if (fidelity && !failed) {  // outside the timed rounds
    std::vector<size_t> index_a = today.index, index_b = cand.index;
    if (!fidelity_only.empty()) {
      index_a.clear();
      index_b.clear();
      for (size_t j : fidelity_only) {
        index_a.push_back(today.index[j]);
        index_b.push_back(cand.index[j]);
      }
    }
    put_fidelity_counters(state, measure_paired_fidelity({today.pipeline, today.source, &index_a},
                                                         {cand.pipeline, cand.source, &index_b}, c.seed, *fidelity,
                                                         kFidelitySamples, kPairedBudgetShare * c.budget_s));
  }
  return image_costs(t, a);
}

// The positions of `side`'s round whose image is large under `plan` (its header: width x
// height; model::is_large): the images a large-only copy re-encoded. An image whose header
// cannot be read is left out (the timed rounds report it).
std::vector<size_t> large_positions(const PairedSide& side, const model::LargeImages& plan) {
  std::vector<size_t> out;
  std::vector<uint8_t> buf;
  for (size_t j = 0; j < side.index.size(); ++j) {
    try {
      const auto bytes = side.source->bytes(side.index[j], buf);
      const ImageInfo info = read_image_info(bytes, side.source->name(side.index[j]));
      if (model::is_large(static_cast<uint64_t>(info.width) * static_cast<uint64_t>(info.height),
                          std::min(info.width, info.height), plan))
        out.push_back(j);
    } catch (const std::exception&) {
    }
  }
  return out;
}

// The round less the files known bad.
std::vector<size_t> good_round(BenchContext& ctx) {
  std::vector<size_t> round;
  for (size_t i : ctx.round())
    if (!ctx.bad_files().known_bad(i)) round.push_back(i);
  return round;
}

// `fix_label`: a fix that also runs end to end on the dataset (decode:auto): each round
// image's costs are kept under it for that case's price (BenchContext::note_fix_image_costs);
// empty for the others.
void BM_SamplePaired(benchmark::State& state, BenchContext& ctx, const std::shared_ptr<const Pipeline>& today,
                     const std::shared_ptr<const Pipeline>& candidate, bool fidelity, const std::string& fix_label) {
  const PairedSide a{today.get(), &ctx.disk(), good_round(ctx)};
  const PairedSide b{candidate.get(), &ctx.disk(), a.index};
  const auto costs = paired_case(state, ctx, a, b, fidelity ? std::optional(FidelityMode::kSameDraws) : std::nullopt,
                                 {}, /*per_image=*/!fix_label.empty());
  if (!fix_label.empty()) ctx.note_fix_round_costs(fix_label, costs);
}

void BM_Sample(benchmark::State& state, BenchContext& ctx,
               const std::shared_ptr<const Pipeline>& pipeline) {
  sample_case(state, ctx, pipeline, ctx.disk(), ctx.round().size(), [&](int64_t& images, auto& fn) {
    return run_round(ctx, state, ctx.round(), images, fn);
  });
}

// BM_Sample/<pipeline>/presized:<N> and presized_large:<N> (only the large images
// presized; presize_min_megapixels and presize_changed_pct say which and how many): the
// run's pipeline on the presized copy of the round
// (PresizedCopy above; datasets/presize_cache.h), made before the first timed round, paired
// with the same pipeline on the originals (paired_case). presize_shorter_side_px and
// presize_jpeg_quality say what was kept. The copy's files were all written by pipebench:
// one that is missing or fails is the case's error, not a bad file of the dataset.
void BM_SamplePresized(benchmark::State& state, BenchContext& ctx,
                       const std::shared_ptr<const Pipeline>& pipeline,
                       const std::shared_ptr<PresizedCopy>& copy) {
  const PresizedCopy::Ready* ready = copy->get(ctx);
  if (!ready) {
    ctx.fail_case(state, copy->error());
    return;
  }
  PairedSide a{pipeline.get(), &ctx.disk(), good_round(ctx)};
  PairedSide b{pipeline.get(), ready->dataset.get(), {}};
  try {
    match_copy(a, b, copy->dir().string());
  } catch (const std::exception& e) {
    ctx.fail_case(state, e.what());
    return;
  }
  // A large-only copy's other images are the originals byte for byte (presize_test checks
  // it): the fidelity pass compares the images it changed.
  // None of them left (every large original a bad file): no pass, rather than one over the
  // unchanged images that would read "identical".
  const std::vector<size_t> changed = copy->large() ? large_positions(a, *copy->large()) : std::vector<size_t>{};
  const bool compare = !copy->large() || !changed.empty();
  // Each image's costs, for the copy's end-to-end case to be priced from before it runs
  // (model/copy_fix_price.h).
  copy->note_paired_costs(
      paired_case(state, ctx, a, b, compare ? std::optional(FidelityMode::kSameRegion) : std::nullopt, changed,
                  /*per_image=*/true));
  put(state, CounterId::kPresizeShorterSidePx, copy->shorter_side());
  put(state, CounterId::kPresizeJpegQuality, copy->quality());
  if (const auto& large = copy->large()) {
    put(state, CounterId::kPresizeMinMegapixels, static_cast<double>(large->min_pixels) / 1e6);
    put(state, CounterId::kPresizeChangedPct, large->large_pct());
  }
}

}  // namespace

void register_sample_benchmarks(BenchContext& ctx) {
  const auto& mine = ctx.config().pipeline;
  const auto key = [](const std::string& pipeline, const std::string& variant = "",
                      const std::string& param = "") {
    model::CaseKey k;
    k.family = model::Family::kSample;
    k.pipeline = pipeline;
    k.variant = variant;
    k.variant_param = param;
    return k;
  };
  for (const auto& name : recipe_names()) {
    if (name == mine->name()) continue;  // registered below, as the run's pipeline
    register_case(ctx, key(name), BM_Sample, build_recipe(name, ctx.config().size))
        ->Unit(benchmark::kMicrosecond);
  }
  register_case(ctx, key(mine->name()), BM_Sample, mine)->Unit(benchmark::kMicrosecond);
  // The candidates, each paired with today's pipeline; and the A/A control: today against a
  // second instance of itself, measured exactly as a candidate is.
  for (const auto& c : what_if_candidates(*mine)) {
    const model::CaseKey k = key(mine->name(), c.kind, c.param);
    const model::CandidateKind* kind = model::find_candidate(c.kind);
    register_case(ctx, k, BM_SamplePaired, mine, c.pipeline, c.kind != "without",
                  kind && kind->end_to_end ? k.variant_label() : std::string())
        ->Unit(benchmark::kMicrosecond);
  }
  register_case(ctx, key(mine->name(), "control", "aa"), BM_SamplePaired, mine,
                std::shared_ptr<const Pipeline>(Pipeline::build(mine->spec(), mine->decode_options())), true,
                std::string())
      ->Unit(benchmark::kMicrosecond);
  // The spec's declared faster variants (variants: [{recipe: R, fixes: stage}]), each paired
  // with today's pipeline: BM_Sample/<pipeline>/variant:<R> (the report's "faster variant").
  for (const auto& v : mine->spec().variants) {
    const auto all = recipe_names();
    if (std::find(all.begin(), all.end(), v.recipe) == all.end()) continue;
    register_case(ctx, key(mine->name(), "variant", v.recipe), BM_SamplePaired, mine,
                  build_recipe(v.recipe, ctx.config().size), true, std::string())
        ->Unit(benchmark::kMicrosecond);
  }
  // The case study (report: "Case study"), paired as a candidate is: the casestudy recipe
  // (RandomMask dilated by convolution) against casestudy_shifts (by boolean shifts), A B B A
  // over the same images with the same draws: BM_Sample/casestudy/pair:casestudy_shifts.
  const auto names = recipe_names();
  if (std::find(names.begin(), names.end(), "casestudy") != names.end() &&
      std::find(names.begin(), names.end(), "casestudy_shifts") != names.end())
    register_case(ctx, key("casestudy", "pair", "casestudy_shifts"), BM_SamplePaired,
                  build_recipe("casestudy", ctx.config().size), build_recipe("casestudy_shifts", ctx.config().size), true,
                  std::string())
        ->Unit(benchmark::kMicrosecond);
  // Presizing rewrites an ImageFolder tree; shards (--data of tar files) have none.
  for (const auto& copy : ctx.presized_copies())
    register_case(ctx, model::presized(key(mine->name()), copy->shorter_side(), copy->kind()),
                  BM_SamplePresized, mine, copy)
        ->Unit(benchmark::kMicrosecond);
}

}  // namespace pipebench::bench
