// Real photographs from Debian's wallpaper packages, turned into two ImageFolder sets:
//
//   OUTDIR/photos-full  every distinct real JPEG over 100 KB as shipped (bytes copied
//                       unchanged), one class per source file.
//   OUTDIR/photos-in    ImageNet-like images: from each original, every non-overlapping
//                       500x375 tile (375x500 for portrait originals) at native resolution
//                       and at 1/2 scale, re-encoded with libjpeg-turbo at quality 90,
//                       4:2:0, baseline. One class per original.
//
// Sources: `apt-get download` of the packages in kPhotoPackages into a scratch folder
// (nothing is installed), unpacked with `dpkg -x`. The same bytes on every machine: the
// originals are decoded with TurboJPEG's accurate integer IDCT (TJFLAG_ACCURATEDCT, whose
// SIMD paths are bit-exact with the C code), the 1/2 scale is an exact integer 2x2 box
// average (downscale_box2), and the tiles are encoded with encode_jpeg (synthetic.h).
// Each set is built under "<name>.tmp" and renamed into place once complete, so a
// half-built set is never mistaken for a finished one.
//
// Errors: DatasetError naming the package, file or directory and the reason (a failed
// download or unpack, an unwritable output). An original that fails to decode is skipped
// with a warning naming the file, not an error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace pipebench {

/// The Debian packages the photo sets come from (all "Architecture: all", free licences).
inline const std::vector<std::string> kPhotoPackages = {
    "mate-backgrounds", "ukui-wallpapers", "plasma-workspace-wallpapers"};

struct PhotoSetOptions {
  uint64_t min_original_bytes = 100 * 1024;  ///< bytes; smaller JPEGs (previews) are skipped
  int tile_width = 500;   ///< pixels, landscape tile (portrait originals use it as height)
  int tile_height = 375;  ///< pixels
  int quality = 90;       ///< JPEG quality of the photos-in tiles, 1..100
  int threads = 0;        ///< originals processed in parallel; 0 = hardware concurrency
};

/// One source JPEG found in the unpacked packages.
struct PhotoOriginal {
  std::filesystem::path path;  ///< where it lies in the scratch folder
  std::string class_name;      ///< class directory name in both sets
  uint64_t size_bytes = 0;
};

struct PhotoSetSummary {
  size_t full_images = 0, full_classes = 0;
  uint64_t full_bytes = 0;  ///< bytes of all files in photos-full
  size_t in_images = 0, in_classes = 0;
  uint64_t in_bytes = 0;    ///< bytes of all files in photos-in
  std::vector<std::string> skipped;  ///< originals that failed to decode: "path: reason"
};

/// Downloads (unless "<package>_*.deb" is already in scratch) and unpacks each package
/// into scratch/unpacked/<package>. Runs `apt-get update` once and retries only when a
/// download fails. Returns the unpacked roots. Progress lines go to `log`.
std::vector<std::filesystem::path> fetch_photo_packages(
    const std::filesystem::path& scratch, const std::vector<std::string>& packages,
    std::ostream& log);

/// Class name for a file at `relative` path inside an unpacked package: the path without
/// the usr/share/{backgrounds,wallpapers}/ prefix, "contents" and "images" components and
/// the extension, joined by '_', "images_dark" shortened to "dark", characters outside
/// [A-Za-z0-9._-] replaced by '-'. E.g. "usr/share/wallpapers/Flow/contents/images_dark/
/// 5120x2880.jpg" -> "Flow_dark_5120x2880".
std::string photo_class_name(const std::filesystem::path& relative);

/// Every regular file (symbolic links skipped) under the roots that starts with the JPEG
/// SOI bytes FF D8 FF, is at least min_bytes large and is not a "screenshot.*" preview;
/// identical contents kept once (the first in path order). Sorted by class name; clashing
/// names get a "-2", "-3"... suffix.
std::vector<PhotoOriginal> find_photo_originals(const std::vector<std::filesystem::path>& roots,
                                                uint64_t min_bytes);

/// Exact 2x2 box average of an RGB HWC uint8 image: out = (a + b + c + d + 2) / 4 per
/// channel, size floor(width/2) x floor(height/2) (the odd last row/column is dropped).
/// Throws std::invalid_argument when width or height < 2.
std::vector<uint8_t> downscale_box2(const uint8_t* rgb, int width, int height);

/// Non-overlapping tiles of tile_w x tile_h centred in a width x height image: cols x rows
/// tiles, the first at (x0, y0). cols or rows is 0 when the image is smaller than a tile.
struct TileGrid {
  int cols = 0, rows = 0, x0 = 0, y0 = 0, tile_w = 0, tile_h = 0;
};
TileGrid tile_grid(int width, int height, int tile_w, int tile_h);

/// Builds out_dir/photos-full and out_dir/photos-in from the originals (replacing earlier
/// sets). Tile files are named "<class>_s<scale>_r<row>_c<col>.jpg" (scale 1 or 2).
PhotoSetSummary build_photo_sets(const std::vector<PhotoOriginal>& originals,
                                 const std::filesystem::path& out_dir,
                                 const PhotoSetOptions& options, std::ostream& log);

}  // namespace pipebench
