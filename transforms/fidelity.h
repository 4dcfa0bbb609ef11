// Fidelity of one sample: today's pipeline output against a candidate's for the same image
// and the same random draws, as PSNR and SSIM (issue 35). bench's paired cases call it
// outside their timed region; model/fidelity.h turns a round of results into the figures
// the report prints.
//
// Representation: both outputs are brought to pixels (output_pixels): C x H x W planar
// float32, values 0-255, the image before normalize. A float32 pipeline's normalized tensor
// is mapped back through its spec's last normalize, x = (v * std + mean) * 255; normalize
// reads uint8, so a value that came through it lies within 3e-5 of a whole level (float
// rounding; the fused resize + normalize steps differ from normalize's table by 4.8e-7 at
// most, pipeline.h) and is snapped to that level (within kSnapLevels): a float32 and a uint8
// collation of the same image then read identical. Values written after the normalize
// (random_erasing's noise) are kept as they are, and are the same on both sides (same draws).
// A uint8 pipeline's image (either layout) is its pixels.
//
// Metrics, from OpenCV's quality module (opencv_contrib, Debian's libopencv-contrib-dev):
//   - PSNR (dB) = 10 log10(255^2 / MSE), the MSE over every value of the image: the mean of
//     cv::quality::QualityMSE's per-channel MSEs (equal pixel counts per channel), peak 255;
//     images equal value for value are "identical" (model::SampleFidelity::identical), no
//     number;
//   - SSIM: Wang, Bovik, Sheikh and Simoncelli, "Image quality assessment: from error
//     visibility to structural similarity", IEEE TIP 13(4), 2004: an 11 x 11 Gaussian window
//     of sigma 1.5, K1 = 0.01, K2 = 0.03, L = 255 (cv::quality::QualitySSIM's constants),
//     per channel; the index is the mean of the SSIM map over the positions where the window
//     lies wholly inside the image (Wang's reference code's 'valid' filtering, and
//     scikit-image's structural_similarity(gaussian_weights=True, sigma=1.5,
//     use_sample_covariance=False, data_range=255), which crops the same border), then the
//     mean over the channels. An image smaller than 11 px on a side is averaged whole.
//   Images of whole levels (the usual case) go to OpenCV as uint8, exactly, which it works
//   on in float32; others as float, which it works on in float64 (about twice the time:
//   some 4 ms of CPU per 224 x 224 channel against 8).
// tests/fidelity_test.cpp checks both against scikit-image on a photo and its quality-75
// JPEG re-encode (tests/scripts/fidelity_reference.py).
//
// Errors: compare_images throws std::invalid_argument for sizes that do not match the
// shape or a shape that is not positive; output_pixels returns false (no pixels) for an
// output that is not an image of 0-255 values (a float32 pipeline not normalized, e.g. the
// case study's convert_color_yuv + scale).
#pragma once

#include <span>
#include <vector>

#include "model/fidelity.h"
#include "transforms/pipeline.h"

namespace pipebench {

/// A value within this many levels of a whole level is snapped to it (see the file comment).
inline constexpr float kSnapLevels = 0.01f;

/// PSNR and SSIM of `b` against `a`, each C x H x W planar float32 of values 0-255 (so
/// channels * height * width values). Identical when every value is equal.
model::SampleFidelity compare_images(std::span<const float> a, std::span<const float> b,
                                     int channels, int height, int width);

/// The sample `p` wrote to `out` (Pipeline::run: output_floats() floats of a float32
/// pipeline, or output().bytes() uint8 values of a uint8 pipeline in its layout) as
/// C x H x W float32 pixels 0-255 in `pixels` (resized to output_floats()). False, and
/// `pixels` left empty, when the output is not such an image.
bool output_pixels(const Pipeline& p, const float* out, std::vector<float>& pixels);

}  // namespace pipebench
