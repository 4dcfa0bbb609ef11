// Presizing (issue 8, candidate 3): a copy of an ImageFolder tree with every image's
// shorter side reduced to N pixels, re-encoded as JPEG, so that a pipeline decodes and
// resamples fewer pixels per sample (as FFCV's max_resolution does when it writes a
// dataset). It changes what the model sees: the kept resolution must be stated wherever
// the saving is shown.
//
//   files      the samples datasets/folder_scan.h lists (the one scanner), each written to
//              OUT/<the same path relative to IN, extension replaced by .jpg>; a name that
//              would collide with an earlier one (a.png beside a.jpg) keeps its extension
//              before the new one (a.png.jpg). Class folders, and so labels, are unchanged.
//   large only with min_pixels > 0 (issue 34's tail fix, "presize only the large images"):
//              an image of at most min_pixels (w x h), or one whose shorter side is at most
//              N already (presizing would not shrink it), is copied byte for byte (after a
//              decode that checks it), under the name the files rule above gives; only the
//              others are scaled and re-encoded.
//   size       shorter side s = min(w, h) > N: scaled to N, the longer side by torchvision
//              0.14's Resize(int) rule, int(N * long / short) (truncated); s <= N: the size
//              is kept (never upscaled). Downscaling with OpenCV's INTER_AREA (pixel-area
//              averaging: no aliasing when shrinking).
//   encoding   TurboJPEG, quality Q, baseline, 4:2:0 (datasets/synthetic.h encode_jpeg),
//              from RGB uint8 HWC decoded by TurboDecoder (any format ImageFolder decodes).
//   bad files  a file that cannot be read or decoded is skipped and listed with the reason
//              (as `pipebench-data inspect --check` lists it).
//   atomicity  everything is written to OUT.partial-<pid> (a sibling) and renamed to OUT
//              when complete; the manifest (kPresizeManifest) is the last file written
//              into it. A folder without a readable manifest is never a presize output.
//
// Errors: DatasetError naming the path: IN missing or not an ImageFolder tree (folder_scan.h),
// OUT existing and neither empty nor an earlier presize output (it is not overwritten), no
// image of IN decoding. std::runtime_error naming the path for a write, remove or rename
// that fails (the partial folder is removed). std::invalid_argument for N < 1 or Q outside
// [1, 100].
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "datasets/folder_scan.h"

namespace pipebench {

/// The manifest's file name, directly under OUT (the scanner lists it as ignored: a file
/// directly under the root belongs to no class).
inline constexpr const char* kPresizeManifest = "presize.json";

struct PresizeOptions {
  int shorter_side = 256;  ///< N, pixels (>= 1)
  int quality = 90;        ///< JPEG quality Q, 1..100
  int threads = 0;         ///< images converted in parallel; 0 = all cores
  /// Only these sample indices of IN (ImageFolder order), when not empty: a benchmark's
  /// round needs a copy of its own images only, not of a dataset of a million files.
  std::vector<size_t> only;
  /// What `only` is, in words, recorded in the manifest ("all" when `only` is empty).
  std::string selection = "all";
  /// Images of at most this many pixels (width x height), or whose shorter side is at
  /// most shorter_side, are copied unchanged; 0: every image is presized (pipebench-data
  /// presize --min-megapixels).
  uint64_t min_pixels = 0;
};

/// What a presize output declares about itself (kPresizeManifest, JSON).
struct PresizeManifest {
  std::string source;              ///< IN as given
  std::string source_fingerprint;  ///< ImageFolder(IN).fingerprint() (metadata: path, size, mtime)
  int shorter_side = 0;            ///< N, pixels
  int quality = 0;                 ///< Q
  std::string selection;           ///< PresizeOptions::selection
  size_t images = 0;               ///< written
  size_t downscaled = 0;           ///< of those, reduced (the others kept their size)
  uint64_t min_pixels = 0;         ///< PresizeOptions::min_pixels (0: every image presized)
  size_t copied = 0;               ///< of the images written, copied byte for byte (<= min_pixels)
  size_t bad = 0;                  ///< skipped
  uint64_t source_bytes = 0;       ///< of the images written, before
  uint64_t output_bytes = 0;       ///< of the images written, after
};

struct PresizeResult {
  PresizeManifest manifest;
  std::vector<IgnoredEntry> bad;   ///< files skipped: path and reason, in dataset order
  std::filesystem::path out;       ///< the complete output folder
};

/// The output size of a w x h image (pixels) for shorter side n: {width, height}.
std::pair<int, int> presized_dimensions(int width, int height, int shorter_side);

/// Writes the presized copy of `in` to `out` (see the file comment). Progress and
/// warnings go to `log` (one line per bad file). Throws as the file comment says.
PresizeResult presize_dataset(const std::filesystem::path& in, const std::filesystem::path& out,
                              const PresizeOptions& options, std::ostream& log);

/// The manifest of a presize output folder; nullopt when it has none or it does not parse
/// (a folder being written, or not a presize output).
std::optional<PresizeManifest> read_presize_manifest(const std::filesystem::path& out);

}  // namespace pipebench
