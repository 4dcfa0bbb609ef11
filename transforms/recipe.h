// Recipes: named chains of decode + per-sample transforms, the unit of per-sample CPU cost.
//
//   imagenet_train      TurboJPEG full decode, RandomResizedCrop(size) (torchvision
//                       scale 0.08..1, ratio 3/4..4/3), RandomHorizontalFlip(p = 0.5),
//                       Normalize (ImageNet mean/std)                -> 3 x size x size f32
//   imagenet_val        TurboJPEG full decode, Resize(round(size * 256 / 224)), CenterCrop(size),
//                       Normalize                                    -> 3 x size x size f32
//   imagenet_train_roi  RandomResizedCrop window chosen from the header (the same draws as
//                       imagenet_train, so the same window), ROI decode of only that window
//                       (RoiDecoder), DCT scaled by the largest of 1/2, 1/4, 1/8 that keeps
//                       both sides >= size (else unscaled), resize to size, flip,
//                       Normalize                                    -> 3 x size x size f32
//   casestudy           TurboJPEG full decode, RandomCrop(256), RandomMask(0.25, dilation
//                       by convolution), ConvertColor RGB->YUV, Scale -> 3 x 256 x 256 f32
//   casestudy_shifts    the same with the study's fix (dilation by boolean shifts)
//
// Every random choice of a sample comes from the Rng passed in (Rng::for_sample), so the
// output depends only on (bytes, seed, epoch, index).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "transforms/casestudy.h"
#include "transforms/image.h"
#include "transforms/jpeg_decode.h"
#include "transforms/rng.h"

namespace pipebench {

/// Time spent in each part of one sample, in nanoseconds. Recipe::run overwrites it with
/// the times of the sample it ran (callers sum them).
struct SampleTimes {
  int64_t decode_ns = 0;
  int64_t transform_ns = 0;
};

/// Per-thread reusable state: decoder handles and scratch images. Not thread-safe: one per
/// worker thread.
struct RecipeWorkspace {
  explicit RecipeWorkspace(const DecodeOptions& options = {}) : turbo(options), roi(options) {}
  TurboDecoder turbo;
  RoiDecoder roi;
  Image decoded;
  Image cropped;
  Image resized;
  MaskScratch mask;
};

struct RecipeOptions {
  int crop_size = 224;  ///< output H = W for the imagenet recipes (casestudy: always 256)
  DecodeOptions decode;
};

class Recipe {
 public:
  virtual ~Recipe() = default;

  /// Builds a recipe by name (see the list above). Throws std::invalid_argument naming the
  /// unknown recipe and the known ones, or for crop_size <= 0.
  static std::unique_ptr<Recipe> create(std::string_view name, const RecipeOptions& options = {});
  /// All recipe names create() accepts.
  static std::vector<std::string> names();

  virtual const std::string& name() const = 0;
  /// Output shape C, H, W of one sample (float32 CHW).
  virtual std::array<int, 3> output_shape() const = 0;
  size_t output_floats() const {
    auto s = output_shape();
    return static_cast<size_t>(s[0]) * s[1] * s[2];
  }

  /// Decodes one JPEG and applies the chain, writing output_floats() floats (CHW) to out.
  /// Throws DecodeError (naming `file`) on bad input; the casestudy recipes throw
  /// std::invalid_argument naming `file` and its size for an image under 256 x 256.
  virtual void run(std::span<const uint8_t> jpeg, std::string_view file, Rng& rng,
                   RecipeWorkspace& ws, float* out, SampleTimes* times = nullptr) const = 0;
};

}  // namespace pipebench
