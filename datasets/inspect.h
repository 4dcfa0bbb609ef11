// Statistics of an ImageFolder dataset, read from the JPEG headers (read_jpeg_info in
// transforms/jpeg_decode.h; no pixels are decoded): counts, mean resolution, mean file
// size, bits per pixel and the mix of baseline/progressive and chroma subsampling.
// Errors: DatasetError naming the root when it is missing, empty, or holds no readable
// JPEG. Files whose header cannot be parsed are counted in `unreadable` (and their first
// few names kept), not thrown.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace pipebench {

struct DatasetStats {
  std::filesystem::path root;
  size_t images = 0;         ///< readable JPEGs (header parsed)
  size_t classes = 0;        ///< class directories
  uint64_t total_bytes = 0;  ///< bytes of the readable JPEGs
  double mean_width = 0;     ///< pixels, over readable images
  double mean_height = 0;    ///< pixels
  double mean_bytes = 0;     ///< bytes per file
  /// Bits per pixel, 8 * file bytes / (width * height), averaged over images (a mean of
  /// per-image ratios, not a ratio of totals).
  double mean_bpp = 0;
  size_t baseline = 0;       ///< images with a sequential (non-progressive) frame
  size_t progressive = 0;
  /// Count of images per subsampling name ("4:2:0", "4:4:4", "gray", ... see JpegInfo).
  std::map<std::string, size_t> subsampling;
  size_t unreadable = 0;     ///< .jpg/.jpeg files whose header failed to parse
  std::vector<std::string> unreadable_examples;  ///< up to 5 "path: reason" lines
};

/// Scans root as an ImageFolder and reads every header. Throws DatasetError (see above).
DatasetStats inspect_dataset(const std::filesystem::path& root);

/// Multi-line human-readable report; every number carries its unit, mixes give count
/// and percentage.
std::string format_stats(const DatasetStats& stats);

}  // namespace pipebench
