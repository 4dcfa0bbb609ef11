// The pixel and label work of the batch operators (batch_op.h), after timm's Mixup
// (timm/data/mixup.py, mode "batch"; Zhang et al., "mixup: Beyond Empirical Risk
// Minimization", ICLR 2018; Yun et al., "CutMix", ICCV 2019). Every function pairs sample
// i with sample N-1-i and works in place.
//
// Shapes: BatchData (batch_op.h): data N x C x H x W float32, soft_labels N x num_classes
// float32. Errors: std::invalid_argument for lam outside [0, 1] or a box outside the image.
#pragma once

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

/// Label smoothing (Szegedy et al., "Rethinking the Inception Architecture", CVPR 2016;
/// timm's one_hot(..., on_value, off_value)): soft = soft (1 - s) + s / num_classes.
/// Linear, so applying it after mixing equals timm's smoothing before. s in [0, 1].
void smooth_labels(BatchData& b, float smoothing);

}  // namespace pipebench
