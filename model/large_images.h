// Which images of a heavy-tailed round are "large" (issue 34 item 4, the tail fix "presize
// only the images above a size"): a few large originals among small images cost most of
// the tail; presizing only them changes their pixels alone and leaves every other image
// byte for byte as it was.
//
//   threshold   auto: kLargeImageFactor x the round's median pixel count (width x height);
//               or a threshold the user gives (pipebench --presize-large=M, megapixels).
//               An image strictly above it is large.
//   side        the shorter side the large images are reduced to: the round's median
//               shorter side (they become as large as a typical image of the round), at
//               least `min_shorter_side` (the pipeline's own presize side, 8/7 of its crop:
//               below it a crop would be upsampled more than a typical image's). An image
//               above the threshold whose shorter side is at most this side (a panorama)
//               cannot shrink: it is not large (is_large), and the copy keeps its bytes.
//   none        nullopt when no image is large (uniform data: photos-in, whose largest
//               image is 1.0 x its median) or there is no image; under auto also when the
//               large images hold less than kLargeMinPixelSharePct of the round's pixels
//               (a decode's work grows with its pixels: presizing them could not save
//               much of the round's cost, and the candidate would cost its cases for
//               nothing; photos-full, a folder of originals only, has one image above 4 x
//               its own median, 10 % of its pixels).
//               A threshold given by hand is always planned when an image is above it.
// Units: pixels (width x height, and the side in px). The factor is ours, not a published
// one: 4 x the median is well above the spread of images one camera or one scraper writes
// (photos-in: every image at 1.0 x its median, `pipebench-data inspect`) and below most of
// the originals a photo folder mixes in (photos-full's 44 against photos-in's median of
// 0.19 MP: 1.4-95 x). --presize-large=M sets the threshold by hand.
// Errors: std::invalid_argument for a threshold not 0 nor within [1e-6, 1e6] MP, or a non-positive
// width or height.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace pipebench::model {

/// An image above this many times the round's median pixel count is large (auto).
inline constexpr double kLargeImageFactor = 4.0;
/// auto plans a large-only copy only when the large images hold at least this share of
/// the round's pixels, %.
inline constexpr double kLargeMinPixelSharePct = 25.0;
/// A threshold given by hand lies in [kMinThresholdMegapixels, kMaxThresholdMegapixels]
/// (one pixel to a terapixel), so that it is a whole, positive pixel count.
inline constexpr double kMinThresholdMegapixels = 1e-6;
inline constexpr double kMaxThresholdMegapixels = 1e6;

struct LargeImages {
  uint64_t min_pixels = 0;  ///< an image above it is large (pixels)
  int shorter_side = 0;     ///< the large images' shorter side after presizing, px
  std::size_t large = 0;    ///< images above min_pixels
  std::size_t images = 0;   ///< images considered
  double pixel_share_pct = 0;  ///< the large images' share of all the images' pixels, %
  /// 100 x large / images, %.
  double large_pct() const { return images ? 100.0 * static_cast<double>(large) / static_cast<double>(images) : 0.0; }
};

/// Whether an image of `pixels` (width x height) and `shorter_side` (px) is large under
/// `plan`: above its threshold, and shrinkable to its side.
bool is_large(uint64_t pixels, int shorter_side, const LargeImages& plan);

/// The plan for `dims` ({width, height} of each image): `threshold_megapixels` 0 for auto
/// (kLargeImageFactor x the median), else the threshold in megapixels (1e6 pixels).
std::optional<LargeImages> plan_large_images(const std::vector<std::pair<int, int>>& dims,
                                             double threshold_megapixels = 0, int min_shorter_side = 0);

}  // namespace pipebench::model
