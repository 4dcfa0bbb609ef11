#include "bench/run/presized_copy.h"

#include <cmath>
#include <iostream>

#include "bench/run/bench_context.h"
#include "bench/run/image_round.h"
#include "datasets/presize_cache.h"
#include "transforms/image_format.h"

namespace pipebench::bench {
namespace {

// --presize=auto: the shorter side kept, per pixel of the crop (presized_copy.h).
constexpr double kPresizePerCropPixel = 256.0 / 224.0;

// The crop (or resize) the pipeline's first operator fixes, in pixels; nullopt when the
// first operator is no crop, or a resize to [h, w].
std::optional<int> crop_of(const PipelineSpec& spec) {
  if (spec.transforms.empty()) return std::nullopt;
  const OpSpec& op = spec.transforms.front();
  if (op.name == "random_resized_crop" || op.name == "center_crop" || op.name == "random_crop")
    return static_cast<int>(std::lround(op.params.get_int("size") * kPresizePerCropPixel));
  if (op.name == "resize" && op.params.get_list("size").size() == 1)
    return static_cast<int>(std::lround(op.params.get_list("size")[0]));  // resize's own side
  return std::nullopt;
}

// Beside the pipebench binary, for a dataset whose folder is read-only.
std::filesystem::path binary_folder() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : exe.parent_path();
}

}  // namespace

std::optional<int> presize_shorter_side(const std::string& flag, const PipelineSpec& spec) {
  if (flag == "off") return std::nullopt;
  if (flag == "auto") return crop_of(spec);
  return std::stoi(flag);
}

std::optional<model::LargeImages> plan_presize_large(const std::string& flag, const ImageFolder& folder,
                                                     const std::vector<size_t>& round, int min_side) {
  if (flag == "off") return std::nullopt;
  std::vector<std::pair<int, int>> dims;
  dims.reserve(round.size());
  std::vector<uint8_t> bytes;
  for (size_t i : round) {
    try {
      folder.read(i, bytes);
      const ImageInfo info = read_image_info(bytes, folder.sample(i).path.string());
      dims.emplace_back(info.width, info.height);
    } catch (const std::exception&) {
      // a bad file: the run's cases list it (bad_files.h); the plan goes on without it
    }
  }
  return model::plan_large_images(dims, flag == "auto" ? 0.0 : std::stod(flag), min_side);
}

const PresizedCopy::Ready* PresizedCopy::get(BenchContext& ctx) {
  std::call_once(once_, [&] {
    try {
      const ImageFolder* original = ctx.folder();
      if (!original) throw std::runtime_error("--data is not an ImageFolder tree: nothing to presize");
      const auto& round = ctx.round();
      PresizeOptions o;
      o.shorter_side = shorter_side_;
      o.quality = quality_;
      if (large_) o.min_pixels = large_->min_pixels;
      std::string tag;
      if (round.size() < original->size()) {
        o.only = round;
        o.selection = "round of " + std::to_string(round.size()) + " of " +
                      std::to_string(original->size()) + " images (bench/run/image_round.h)";
        tag = "round" + std::to_string(round.size());
      }
      const CachedPresize c = cached_presize(ctx.config().data, original->fingerprint(), o,
                                             binary_folder() / ".pipebench-cache", std::cerr, tag);
      dir_ = c.dir;
      Ready r;
      r.dataset = std::make_unique<ImageFolder>(c.dir);
      r.round = round_indices(r.dataset->size(), 0);  // the copy is the round
      ready_ = std::move(r);
    } catch (const std::exception& e) {
      error_ = std::string("presized copy: ") + e.what();
    }
  });
  return ready_ ? &*ready_ : nullptr;
}

}  // namespace pipebench::bench
