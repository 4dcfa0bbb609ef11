// Geometric operators on uint8 HWC images (transforms/crop.h does the pixel work):
//   random_resized_crop  torchvision RandomResizedCrop(size, scale, ratio, interpolation)
//   center_crop          torchvision CenterCrop(size); pads with 0 when the crop is larger
//   random_crop          torchvision RandomCrop(size, padding, pad_if_needed, fill)
//   resize               torchvision Resize(size, interpolation): an int resizes the shorter
//                        side (aspect kept), [h, w] resizes to exactly that
//   horizontal_flip      torchvision RandomHorizontalFlip(p)
//   vertical_flip        torchvision RandomVerticalFlip(p)
// The classes are declared here because the Pipeline's planner fuses some of them: a
// window op followed by horizontal_flip resizes mirrored in one pass, resize(int) followed
// by center_crop computes only the kept pixels, and a window op after decode lets an ROI
// decode read only the window. Fused or not, the outputs are bit-identical; a normalize
// fused into the resize as well differs by float rounding only (pipeline.h).
#pragma once

#include <string>

#include "transforms/crop.h"
#include "transforms/operator.h"

namespace pipebench {

/// "bilinear" -> Interpolation::kBilinear, and so on.
Interpolation interpolation_from_name(const std::string& name);

class RandomResizedCropOp final : public WindowOp {
 public:
  RandomResizedCropOp(int size, RandomResizedCropParams params, Interpolation interpolation);
  const std::string& name() const override;
  OpStage stage() const override { return OpStage::kImage; }
  DataShape output_shape(const DataShape& in) const override;
  void apply(SampleData& s, Rng& rng, OpState* state) const override;
  CropWindow window(int height, int width, Rng& rng) const override;
  void finish(Image& src, Image& out, bool mirror) const override;
  int size() const override { return size_; }
  bool scalable() const override { return true; }
  /// window + resize mirrored in one pass (the planner's fusion with horizontal_flip).
  void apply_mirrored(SampleData& s, const CropWindow& w, bool mirror) const;
  Interpolation interpolation() const { return interpolation_; }

 private:
  int size_;
  RandomResizedCropParams params_;
  Interpolation interpolation_;
};

class CenterCropOp final : public WindowOp {
 public:
  explicit CenterCropOp(int size) : size_(size) {}
  const std::string& name() const override;
  OpStage stage() const override { return OpStage::kImage; }
  DataShape output_shape(const DataShape& in) const override;
  void apply(SampleData& s, Rng& rng, OpState* state) const override;
  /// The central window; an image smaller than the crop has no window (apply() pads).
  CropWindow window(int height, int width, Rng& rng) const override;
  void finish(Image& src, Image& out, bool mirror) const override;
  int size() const override { return size_; }
  bool scalable() const override { return false; }

 private:
  // Pads (as torchvision) where src is smaller than the crop, then crops; src may be consumed.
  void crop(Image& src, Image& tmp, Image& out) const;
  int size_;
};

class RandomCropOp final : public WindowOp {
 public:
  RandomCropOp(int size, int padding, bool pad_if_needed, int fill)
      : size_(size), padding_(padding), pad_if_needed_(pad_if_needed), fill_(fill) {}
  const std::string& name() const override;
  OpStage stage() const override { return OpStage::kImage; }
  DataShape output_shape(const DataShape& in) const override;
  void apply(SampleData& s, Rng& rng, OpState* state) const override;
  CropWindow window(int height, int width, Rng& rng) const override;
  void finish(Image& src, Image& out, bool mirror) const override;
  int size() const override { return size_; }
  bool scalable() const override { return false; }
  /// Whether the window alone (no padding) describes this crop, so an ROI decode can serve it.
  bool unpadded() const { return padding_ == 0 && !pad_if_needed_; }

 private:
  int size_, padding_;
  bool pad_if_needed_;
  int fill_;
};

class ResizeOp final : public Operator {
 public:
  /// height == 0: resize the shorter side to `width` (torchvision Resize(int)).
  ResizeOp(int height, int width, Interpolation interpolation)
      : height_(height), width_(width), interpolation_(interpolation) {}
  const std::string& name() const override;
  OpStage stage() const override { return OpStage::kImage; }
  DataShape output_shape(const DataShape& in) const override;
  void apply(SampleData& s, Rng& rng, OpState* state) const override;
  bool shorter_side() const { return height_ == 0; }
  int shorter_size() const { return width_; }
  Interpolation interpolation() const { return interpolation_; }

 private:
  int height_, width_;
  Interpolation interpolation_;
};

class FlipOp final : public Operator {
 public:
  FlipOp(bool horizontal, double p) : horizontal_(horizontal), p_(p) {}
  const std::string& name() const override;
  OpStage stage() const override { return OpStage::kImage; }
  DataShape output_shape(const DataShape& in) const override;
  void apply(SampleData& s, Rng& rng, OpState* state) const override;
  /// The flip's one draw (torchvision: flip when rand < p).
  bool draw(Rng& rng) const { return rng.bernoulli(p_); }
  bool horizontal() const { return horizontal_; }

 private:
  bool horizontal_;
  double p_;
};

}  // namespace pipebench
