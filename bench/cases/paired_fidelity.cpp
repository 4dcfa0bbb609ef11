#include "bench/cases/paired_fidelity.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <span>
#include <vector>

#include "bench/run/counter_put.h"
#include "measure/stage_timers.h"
#include "transforms/aligned_vector.h"
#include "transforms/crop.h"
#include "transforms/jpeg_decode.h"
#include "transforms/fidelity.h"

namespace pipebench::bench {
namespace {

// One side's run of one image into `out`; false when its bytes fail (a bad file).
bool run_side(const FidelitySide& side, std::size_t k, std::size_t key, uint64_t seed, PipelineWorkspace& ws,
              std::vector<uint8_t>& buf, float* out) {
  try {
    const std::size_t i = (*side.index)[k];
    const std::span<const uint8_t> bytes = side.source->bytes(i, buf);
    Rng rng = Rng::for_sample(seed, 0, key);
    side.pipeline->run(bytes, side.source->name(i), rng, ws, out);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Whether the side's crop of image k is enlarged (its window smaller than the output);
// nullopt without a window op or with a header that cannot be read.
std::optional<bool> enlarged(const FidelitySide& side, std::size_t k, std::size_t key, uint64_t seed,
                             std::vector<uint8_t>& buf) {
  try {
    const std::size_t i = (*side.index)[k];
    const Rng rng = Rng::for_sample(seed, 0, key);
    const auto w = side.pipeline->source_window(side.source->bytes(i, buf), side.source->name(i), rng);
    if (!w) return std::nullopt;
    const auto shape = side.pipeline->output_shape();  // C, H, W
    return w->height < shape[1] || w->width < shape[2];
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// kSameRegion's two outputs of image k: today's window of the original, and the same
// window scaled to the copy, each decoded whole and resized to the output, as C x H x W
// pixels; the windows' enlargement into *up_a / *up_b. False when either side fails or A
// has no window.
struct RegionScratch {
  TurboDecoder decoder;
  Image original, copy, crop;
};

void planar_pixels(const Image& im, std::vector<float>& out) {
  const std::size_t plane = static_cast<std::size_t>(im.height) * im.width;
  const int ch = im.channels;
  out.resize(plane * ch);
  for (int c = 0; c < ch; ++c)
    for (std::size_t p = 0; p < plane; ++p) out[c * plane + p] = im.ptr()[p * ch + c];
}

bool same_region(const FidelitySide& a, const FidelitySide& b, std::size_t k, std::size_t key, uint64_t seed,
                 RegionScratch& s, std::vector<uint8_t>& buf, std::vector<float>& pa, std::vector<float>& pb,
                 bool& up_a, bool& up_b) {
  try {
    const std::size_t ia = (*a.index)[k], ib = (*b.index)[k];
    const std::span<const uint8_t> bytes_a = a.source->bytes(ia, buf);
    const auto w = a.pipeline->source_window(bytes_a, a.source->name(ia), Rng::for_sample(seed, 0, key));
    if (!w) return false;
    s.decoder.decode(bytes_a, a.source->name(ia), s.original);
    s.decoder.decode(b.source->bytes(ib, buf), b.source->name(ib), s.copy);
    const auto shape = a.pipeline->output_shape();  // C, H, W
    resized_crop(s.original, *w, shape[1], shape[2], s.crop);
    planar_pixels(s.crop, pa);
    const double fx = static_cast<double>(s.copy.width) / s.original.width;
    const double fy = static_cast<double>(s.copy.height) / s.original.height;
    CropWindow v;
    v.x = std::clamp(static_cast<int>(std::lround(w->x * fx)), 0, s.copy.width - 1);
    v.y = std::clamp(static_cast<int>(std::lround(w->y * fy)), 0, s.copy.height - 1);
    v.width = std::clamp(static_cast<int>(std::lround(w->width * fx)), 1, s.copy.width - v.x);
    v.height = std::clamp(static_cast<int>(std::lround(w->height * fy)), 1, s.copy.height - v.y);
    resized_crop(s.copy, v, shape[1], shape[2], s.crop);
    planar_pixels(s.crop, pb);
    up_a = w->height < shape[1] || w->width < shape[2];
    up_b = v.height < shape[1] || v.width < shape[2];
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// 0 .. count - 1 in bit-reversed order (van der Corput): every prefix is spread evenly.
std::vector<std::size_t> spread_order(std::size_t count) {
  std::size_t bits = 0;
  while ((std::size_t{1} << bits) < count) ++bits;
  std::vector<std::size_t> out;
  out.reserve(count);
  for (std::size_t i = 0; i < (std::size_t{1} << bits); ++i) {
    std::size_t r = 0;
    for (std::size_t b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
    if (r < count) out.push_back(r);
  }
  return out;
}

}  // namespace

PairedFidelity measure_paired_fidelity(const FidelitySide& a, const FidelitySide& b, uint64_t seed,
                                       FidelityMode mode, std::size_t max_samples, double budget_s) {
  const int64_t t0 = now_ns();
  PairedFidelity f;
  const std::size_t n = a.index->size();
  const auto sa = a.pipeline->output_shape(), sb = b.pipeline->output_shape();
  if (n == 0 || max_samples == 0 || sa != sb) {
    f.wall_ms = static_cast<double>(now_ns() - t0) / 1e6;
    return f;
  }
  PipelineWorkspace wa(*a.pipeline), wb(*b.pipeline);
  AlignedVector<float> out_a(a.pipeline->output_floats()), out_b(b.pipeline->output_floats());
  std::vector<uint8_t> buf;
  std::vector<float> pa, pb;
  std::vector<model::SampleFidelity> samples;
  int up_a = 0, up_b = 0, windows = 0;
  const std::size_t count = std::min(n, max_samples);
  const bool region = mode == FidelityMode::kSameRegion && a.pipeline->has_source_window();
  RegionScratch scratch;
  const std::vector<std::size_t> order = spread_order(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (budget_s > 0 && i >= kFidelityMinSamples && static_cast<double>(now_ns() - t0) / 1e9 >= budget_s) break;
    const std::size_t k = order[i] * n / count;  // evenly over the round, any prefix too
    const std::size_t key = (*a.index)[k];  // the originals' index keys the draws
    if (region) {
      bool ea = false, eb = false;
      if (!same_region(a, b, k, key, seed, scratch, buf, pa, pb, ea, eb)) continue;
      ++windows;
      up_a += ea ? 1 : 0;
      up_b += eb ? 1 : 0;
      samples.push_back(compare_images(pa, pb, sa[0], sa[1], sa[2]));
      continue;
    }
    const auto ea = enlarged(a, k, key, seed, buf), eb = enlarged(b, k, key, seed, buf);
    if (ea && eb) {
      ++windows;
      up_a += *ea ? 1 : 0;
      up_b += *eb ? 1 : 0;
    }
    if (!run_side(a, k, key, seed, wa, buf, out_a.data()) || !run_side(b, k, key, seed, wb, buf, out_b.data()))
      continue;
    if (!output_pixels(*a.pipeline, out_a.data(), pa) || !output_pixels(*b.pipeline, out_b.data(), pb)) break;
    samples.push_back(compare_images(pa, pb, sa[0], sa[1], sa[2]));
  }
  f.summary = model::summarize_fidelity(samples);
  if (windows > 0) {
    f.upsampled_a_pct = 100.0 * up_a / windows;
    f.upsampled_b_pct = 100.0 * up_b / windows;
  }
  f.wall_ms = static_cast<double>(now_ns() - t0) / 1e6;
  return f;
}

void put_fidelity_counters(benchmark::State& state, const PairedFidelity& f) {
  put(state, CounterId::kFidelityMs, f.wall_ms);
  if (f.upsampled_a_pct && f.upsampled_b_pct) {
    put(state, CounterId::kUpsampledTodayPct, *f.upsampled_a_pct);
    put(state, CounterId::kUpsampledCandidatePct, *f.upsampled_b_pct);
  }
  const model::FidelitySummary& s = f.summary;
  if (s.samples == 0) return;
  put(state, CounterId::kFidelitySamples, static_cast<double>(s.samples));
  put(state, CounterId::kFidelityIdenticalPct, 100.0 * s.identical_share());
  if (s.psnr_median_db) put(state, CounterId::kFidelityPsnrMedianDb, *s.psnr_median_db);
  if (s.psnr_p5_db) put(state, CounterId::kFidelityPsnrP5Db, *s.psnr_p5_db);
  if (s.ssim_median) put(state, CounterId::kFidelitySsimMedian, *s.ssim_median);
  if (s.ssim_p5) put(state, CounterId::kFidelitySsimP5, *s.ssim_p5);
}

}  // namespace pipebench::bench
