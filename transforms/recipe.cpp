// The recipes of recipe.h: decode + per-sample transform chains.
#include "transforms/recipe.h"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "transforms/crop.h"
#include "transforms/normalize.h"

namespace pipebench {
namespace {

constexpr int kCaseStudyCrop = 256;        // the study's img_size
constexpr double kCaseStudyMaskRatio = 0.25;  // RandomMask(ratio=0.25)

// Laps of steady_clock, read only when the caller asked for SampleTimes.
class Lap {
 public:
  explicit Lap(bool on) : on_(on) {
    if (on_) last_ = std::chrono::steady_clock::now();
  }
  int64_t ns() {
    if (!on_) return 0;
    const auto now = std::chrono::steady_clock::now();
    const auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_).count();
    last_ = now;
    return static_cast<int64_t>(d);
  }

 private:
  bool on_;
  std::chrono::steady_clock::time_point last_{};
};

class NamedRecipe : public Recipe {
 public:
  NamedRecipe(std::string name, std::array<int, 3> shape)
      : name_(std::move(name)), shape_(shape) {}
  const std::string& name() const override { return name_; }
  std::array<int, 3> output_shape() const override { return shape_; }

 private:
  std::string name_;
  std::array<int, 3> shape_;
};


class ImagenetTrain final : public NamedRecipe {
 public:
  explicit ImagenetTrain(int size) : NamedRecipe("imagenet_train", {3, size, size}), size_(size) {}
  void run(std::span<const uint8_t> jpeg, std::string_view file, Rng& rng, RecipeWorkspace& ws,
           float* out, SampleTimes* times) const override {
    Lap lap(times != nullptr);
    ws.turbo.decode(jpeg, file, ws.decoded);
    const int64_t decode_ns = lap.ns();
    const CropWindow w = random_resized_crop_window(ws.decoded.height, ws.decoded.width, rng);
    // RandomHorizontalFlip(0.5), drawn after the window as torchvision does, applied by the
    // resize itself (bit-identical to flipping its output).
    const bool flip = rng.bernoulli(0.5);
    resized_crop(ws.decoded, w, size_, size_, ws.resized, flip);
    normalize_to_chw(ws.resized, out);
    if (times != nullptr) *times = SampleTimes{decode_ns, lap.ns()};
  }

 private:
  int size_;
};

class ImagenetTrainRoi final : public NamedRecipe {
 public:
  ImagenetTrainRoi(int size, DecodeOptions decode)
      : NamedRecipe("imagenet_train_roi", {3, size, size}), size_(size), decode_(decode) {}
  void run(std::span<const uint8_t> jpeg, std::string_view file, Rng& rng, RecipeWorkspace& ws,
           float* out, SampleTimes* times) const override {
    Lap lap(times != nullptr);
    // The same draws, in the same order, as imagenet_train: the window comes from the
    // header's size, so a given Rng picks the same window in both recipes.
    const JpegInfo info = read_jpeg_info(jpeg, file, decode_);
    const CropWindow w = random_resized_crop_window(info.height, info.width, rng);
    // DCT scaling by the largest power of two, 1/2, 1/4 or 1/8, that keeps both scaled
    // sides >= size, so the resize below never enlarges a window that the full decode would
    // have shrunk. Only these factors: libjpeg-turbo has SIMD IDCTs for 8x8, 4x4, 2x2 and
    // 1x1 outputs, while the other n/8 factors (3/8, 5/8, 3/4, 7/8, ...) run scalar IDCTs
    // that measured slower than the unscaled decode (500 x 375 q90: 7/8 took 1.6x the time
    // of 8/8). The min sizes passed make choose_scaling() pick exactly 1/f (see scaling()).
    const auto [min_w, min_h] = scaling(w);
    ws.roi.decode(jpeg, file, w, min_w, min_h, ws.cropped);
    const int64_t decode_ns = lap.ns();
    const bool flip = rng.bernoulli(0.5);
    resized_crop(ws.cropped, CropWindow{0, 0, ws.cropped.width, ws.cropped.height}, size_, size_,
                 ws.resized, flip);
    normalize_to_chw(ws.resized, out);
    if (times != nullptr) *times = SampleTimes{decode_ns, lap.ns()};
  }

 private:
  // Minimum decoded sizes for RoiDecoder: {0, 0} (unscaled) unless a power-of-two factor
  // 1/f (f = 2, 4, 8) keeps both sides >= size; then the window's size at 1/f, the least
  // size that factor reaches, so the smallest n/8 factor reaching it is 1/f itself.
  std::pair<int, int> scaling(const CropWindow& w) const {
    int f = 1;
    while (f < 8 && (w.width + 2 * f - 1) / (2 * f) >= size_ &&
           (w.height + 2 * f - 1) / (2 * f) >= size_) {
      f *= 2;
    }
    if (f == 1) return {0, 0};
    return {(w.width + f - 1) / f, (w.height + f - 1) / f};
  }

  int size_;
  DecodeOptions decode_;
};

class ImagenetVal final : public NamedRecipe {
 public:
  explicit ImagenetVal(int size)
      : NamedRecipe("imagenet_val", {3, size, size}),
        size_(size),
        resize_(static_cast<int>(std::lround(size * 256.0 / 224.0))) {}
  void run(std::span<const uint8_t> jpeg, std::string_view file, Rng& /*rng*/,
           RecipeWorkspace& ws, float* out, SampleTimes* times) const override {
    Lap lap(times != nullptr);
    ws.turbo.decode(jpeg, file, ws.decoded);
    const int64_t decode_ns = lap.ns();
    // Resize + CenterCrop in one call: the same bits, computing only the kept pixels.
    resize_shorter_center_crop(ws.decoded, resize_, size_, ws.cropped);
    normalize_to_chw(ws.cropped, out);
    if (times != nullptr) *times = SampleTimes{decode_ns, lap.ns()};
  }

 private:
  int size_;
  int resize_;  // Resize(size * 256 / 224), rounded: 256 for 224
};

class CaseStudy final : public NamedRecipe {
 public:
  CaseStudy(std::string name, DilationMethod dilation)
      : NamedRecipe(std::move(name), {3, kCaseStudyCrop, kCaseStudyCrop}), dilation_(dilation) {}
  void run(std::span<const uint8_t> jpeg, std::string_view file, Rng& rng, RecipeWorkspace& ws,
           float* out, SampleTimes* times) const override {
    Lap lap(times != nullptr);
    ws.turbo.decode(jpeg, file, ws.decoded);
    const int64_t decode_ns = lap.ns();
    if (ws.decoded.height < kCaseStudyCrop || ws.decoded.width < kCaseStudyCrop) {
      throw std::invalid_argument(
          std::string(file) + ": recipe " + name() + " needs an image of at least " +
          std::to_string(kCaseStudyCrop) + " x " + std::to_string(kCaseStudyCrop) +
          " pixels (RandomCrop(256) without padding), got " + std::to_string(ws.decoded.width) +
          " x " + std::to_string(ws.decoded.height) + " (W x H)");
    }
    random_crop(ws.decoded, kCaseStudyCrop, rng, ws.cropped);
    random_mask(ws.cropped, kCaseStudyMaskRatio, dilation_, rng, ws.mask);
    rgb_to_yuv_chw(ws.cropped, out);
    scale_unit(out, output_floats());
    if (times != nullptr) *times = SampleTimes{decode_ns, lap.ns()};
  }

 private:
  DilationMethod dilation_;
};

}  // namespace

std::vector<std::string> Recipe::names() {
  return {"imagenet_train", "imagenet_val", "imagenet_train_roi", "casestudy",
          "casestudy_shifts"};
}

std::unique_ptr<Recipe> Recipe::create(std::string_view name, const RecipeOptions& options) {
  if (options.crop_size <= 0) {
    throw std::invalid_argument("Recipe::create: crop_size must be positive, got " +
                                std::to_string(options.crop_size));
  }
  const int size = options.crop_size;
  if (name == "imagenet_train") return std::make_unique<ImagenetTrain>(size);
  if (name == "imagenet_val") return std::make_unique<ImagenetVal>(size);
  if (name == "imagenet_train_roi") return std::make_unique<ImagenetTrainRoi>(size, options.decode);
  if (name == "casestudy") {
    return std::make_unique<CaseStudy>("casestudy", DilationMethod::kConvolution);
  }
  if (name == "casestudy_shifts") {
    return std::make_unique<CaseStudy>("casestudy_shifts", DilationMethod::kBooleanShifts);
  }
  std::string known;
  for (const auto& n : names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown recipe '" + std::string(name) + "'; known recipes: " +
                              known);
}

}  // namespace pipebench
