// Batch operators: the steps that run on a collated batch rather than on one sample
// (mixup, cutmix, timm's switch between them, label smoothing), listed under a spec's
// `batch:` (transforms/spec.h) and run by the loader once a batch is complete, on the
// worker that completed it.
//
// Data: the batch as the loader collated it,
//   data         N x C x H x W float32 (NCHW), or N x H x W x C for a float32 NHWC collate
//                (mixup is layout-free; cutmix refuses NHWC), changed in place;
//   labels       N int32 class indices, as read;
//   soft_labels  N x num_classes float32, one-hot of `labels` when the first batch operator
//                runs (the loader writes them), mixed and smoothed by the operators: what
//                a loss with soft targets (timm's SoftTargetCrossEntropy) consumes.
// Pairing follows timm's Mixup (mode "batch"): sample i is mixed with sample N-1-i (the
// batch flipped), so every operator works in place; with an odd N the middle sample is
// paired with itself and keeps its pixels and label.
//
// Randomness: each operator draws from the batch's Rng (Rng::for_batch(seed, epoch,
// batch index)), so batches are bit-identical at any worker count.
//
// Errors: factories throw std::invalid_argument for bad parameters (the spec names the
// file and line); apply() throws std::invalid_argument for a batch it cannot mix (no
// soft labels).
#pragma once

#include <cstdint>
#include <string>

#include "transforms/rng.h"

namespace pipebench {

struct BatchData {
  float* data = nullptr;  ///< size x channels x height x width float32, NCHW (or NHWC, above)
  int size = 0, channels = 0, height = 0, width = 0;
  const int32_t* labels = nullptr;  ///< size class indices
  float* soft_labels = nullptr;     ///< size x num_classes float32
  int num_classes = 0;
  size_t sample_floats() const { return static_cast<size_t>(channels) * height * width; }
};

struct MixDraw;  // batch_mix.h

class BatchOperator {
 public:
  virtual ~BatchOperator() = default;
  /// The registry name ("mixup", "cutmix", "mixup_cutmix", "label_smoothing").
  virtual const std::string& name() const = 0;
  virtual void apply(BatchData& batch, Rng& rng) const = 0;
  /// True for an operator that changes pixels (mixup, cutmix, mixup_cutmix), false for a
  /// labels-only one (label_smoothing).
  virtual bool mixes_pixels() const { return false; }
  /// The host's half for a batch whose pixels the device finishes (`collate: {...,
  /// finish: device}`, uint8 NHWC; batch.data may be null): apply()'s draws on rng and the
  /// labels. A pixel-mixing operator sets `draw` for the device, also when its prob coin
  /// left the batch unmixed (draw.apply false: the device does nothing); a labels-only
  /// operator is applied whole and leaves `draw` alone.
  virtual void apply_labels(BatchData& batch, Rng& rng, MixDraw& draw) const {
    (void)draw;
    apply(batch, rng);
  }
};

}  // namespace pipebench
