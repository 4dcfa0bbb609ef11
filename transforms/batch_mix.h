// The pixel and label work of the batch operators (batch_op.h), after timm's Mixup
// (timm/data/mixup.py, mode "batch"; Zhang et al., "mixup: Beyond Empirical Risk
// Minimization", ICLR 2018; Yun et al., "CutMix", ICCV 2019). Every function pairs sample
// i with sample N-1-i and works in place.
//
// Shapes: BatchData (batch_op.h): data N x C x H x W float32, soft_labels N x num_classes
// float32; the uint8 twins (mix_batch_u8, cut_batch_u8_nhwc) take N x H x W x C uint8 and
// leave the labels to mix_soft_labels. Errors: std::invalid_argument for lam outside
// [0, 1], a box outside the image, a null batch or a size < 0.
// The device versions of these operators (and of horizontal_flip): batch_ops_device.h,
// with these functions as their references.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transforms/batch_op.h"
#include "transforms/image.h"

namespace pipebench {

/// One-hot soft labels from the hard ones: soft[i][labels[i]] = 1, the rest 0. Throws
/// std::invalid_argument naming the label when one is outside [0, num_classes).
void one_hot_labels(BatchData& b);

/// mixup: x_i = lam x_i + (1 - lam) x_{N-1-i}, and the same for the soft labels.
void mix_batch(BatchData& b, float lam);

/// CutMix's box for a mixing weight `lam` (timm rand_bbox): side ratio sqrt(1 - lam),
/// centre uniform over the image, clipped to it. Draws two integers from rng.
CropWindow cutmix_box(int height, int width, double lam, Rng& rng);

/// cutmix: the box's pixels of x_i and x_{N-1-i} swap (x_i takes its partner's box), and
/// the soft labels mix with lam_box = 1 - box area / image area (timm's
/// correct_lam). Returns lam_box.
float cut_batch(BatchData& b, const CropWindow& box);

/// The soft labels' half of mix_batch and cut_batch: row i = lam row i + (1 - lam) row
/// N-1-i, in place (soft_labels: n x num_classes float32).
void mix_soft_labels(float* soft_labels, int n, int num_classes, float lam);

/// cut_batch's label weight for a box: 1 - box area / image area (timm's correct_lam).
float cut_lam(int height, int width, const CropWindow& box);

/// mixup of a uint8 batch (timm's FastCollateMixup, the mixup it runs on uint8 batches in
/// its collate): x_i = rint(lam x_i + (1 - lam) x_{N-1-i}) in float32, rounded half to
/// even (np.rint) and clamped to [0, 255], pairs as mix_batch; the pixels only. data: n
/// samples of sample_bytes each (any layout: it is elementwise).
void mix_batch_u8(uint8_t* data, int n, size_t sample_bytes, float lam);

/// cut_batch on a uint8 N x H x W x C batch: the box's pixels (every channel) of x_i and
/// x_{N-1-i} swap; the pixels only (labels: mix_soft_labels with cut_lam).
void cut_batch_u8_nhwc(uint8_t* data, int n, int height, int width, int channels, const CropWindow& box);

/// One batch's draws of a mixing operator (mixup, cutmix, mixup_cutmix;
/// transforms/ops/mix.cpp), in its order: the prob coin, the switch coin (only when both
/// alphas are > 0), lam ~ Beta(alpha, alpha), then (cutmix) the box's centre
/// (cutmix_box). The operators draw through this, so a device version handed the same
/// Rng draws the same batch.
struct MixParams {
  double mixup_alpha = 0;  ///< 0: no mixup
  double cutmix_alpha = 0;  ///< 0: no cutmix
  double prob = 1;          ///< chance that the batch is mixed at all
  double switch_prob = 0.5;  ///< with both alphas > 0: chance of cutmix
};
struct MixDraw {
  bool apply = false;  ///< the prob coin came up: the batch is mixed
  bool cut = false;    ///< cutmix with `box`, else mixup with `lam`
  double lam = 1.0;    ///< the Beta draw
  CropWindow box;      ///< cutmix only: cutmix_box(height, width, lam)
};
MixDraw draw_mix(const MixParams& p, int height, int width, Rng& rng);
/// The draw applied to a float32 batch as the operators do it: nothing, mix_batch(lam) or
/// cut_batch(box).
void apply_mix(BatchData& b, const MixDraw& d);

/// Label smoothing (Szegedy et al., "Rethinking the Inception Architecture", CVPR 2016;
/// timm's one_hot(..., on_value, off_value)): soft = soft (1 - s) + s / num_classes.
/// Linear, so applying it after mixing equals timm's smoothing before. s in [0, 1].
void smooth_labels(BatchData& b, float smoothing);

}  // namespace pipebench
