// Synthetic JPEG datasets, deterministic from a seed: photo-like content (smooth gradients,
// overlapping shapes, texture and per-pixel noise) so that bits per pixel resemble real
// photographs (about 1.5 to 4 bpp at quality 90, not the ~0.1 of flat colour), encoded
// with TurboJPEG. Used by the tests and the CI smoke run.
// Errors: std::invalid_argument for counts/sizes <= 0, classes > count, max < min size,
// quality outside [1, 100], or an unknown subsampling; DatasetError when a file cannot be written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pipebench {

struct SyntheticOptions {
  int count = 64;            ///< images in total
  int classes = 4;           ///< class directories class_000 .. ; images dealt round-robin
  int min_width = 500;       ///< pixels; width drawn uniformly from [min_width, max_width]
  int max_width = 500;
  int min_height = 375;      ///< pixels
  int max_height = 375;
  int quality = 90;          ///< JPEG quality, 1..100
  std::string subsampling = "4:2:0";  ///< "4:4:4", "4:2:2", "4:2:0", "4:4:0", "gray"
  bool progressive = false;
  uint64_t seed = 1;
};

/// Renders one photo-like RGB image (HWC uint8, height x width x 3) from a seed.
std::vector<uint8_t> render_synthetic_rgb(int width, int height, uint64_t seed);

/// Encodes RGB HWC uint8 pixels to JPEG with TurboJPEG.
std::vector<uint8_t> encode_jpeg(const uint8_t* rgb, int width, int height, int quality,
                                 const std::string& subsampling, bool progressive);

/// Writes an ImageFolder tree under root: root/class_XXX/img_XXXXXX.jpg. Returns the paths.
std::vector<std::filesystem::path> write_synthetic_dataset(const std::filesystem::path& root,
                                                           const SyntheticOptions& options);

}  // namespace pipebench
