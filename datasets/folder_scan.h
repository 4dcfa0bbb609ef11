// The one dataset scanner: torchvision 0.14's ImageFolder rules
// (torchvision/datasets/folder.py: find_classes, make_dataset, IMG_EXTENSIONS), used by
// ImageFolder and therefore by pipebench, its loader and `pipebench-data inspect` alike, so
// they agree on the images by construction.
//
//   classes   the first-level directories of root (symbolic links to directories count),
//             sorted byte-wise (Python's sorted() on str: code-point order, the same as
//             UTF-8 byte order);
//   samples   every file below a class directory, recursively, following symbolic links to
//             directories (os.walk(followlinks=True)), whose lower-cased name ends with one
//             of kImageExtensions; ordered as sorted(os.walk(...)) then sorted(fnames):
//             by the directory's path relative to the class, then by file name;
//   labels    the class's index in classes().
//
// Deviations from torchvision, each reported in `ignored` rather than silent:
//   - a class directory with no image file below it is not a class (no label index);
//     torchvision raises FileNotFoundError("Found no valid file for the classes ...");
//   - a symbolic link to one of its own ancestor directories is a loop and is not
//     followed (os.walk follows it until the path is too long, listing files many times);
//   - a dangling symbolic link, a link loop the kernel reports (ELOOP), an entry that
//     cannot be stat'ed or a directory that cannot be listed is reported, not listed
//     (os.walk drops an unlistable directory silently and lists a dangling link as a file);
//   - a name with an image extension that is not a regular file (a fifo, socket or device)
//     is reported, not listed (reading a fifo would block).
// Everything else the scanner passes over is reported too, with the reason: entries
// directly under root that are not directories, files without an image extension.
// Files named like images are listed whatever their content (a macOS "._x.jpg" AppleDouble
// file, a truncated file): they fail at decode, where --on-error decides.
//
// Errors: DatasetError naming the path when root is missing, not a directory or cannot be
// listed. An empty result is not an error here (ImageFolder decides).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pipebench {

class DatasetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SampleEntry {
  std::filesystem::path path;  ///< root / class / [sub-directories /] file name
  int32_t label = 0;
  uint64_t size_bytes = 0;  ///< file size at scan time
  int64_t mtime_ns = 0;     ///< modification time at scan time, ns since the Unix epoch
};

/// An entry the scanner did not list, and why (one line, no trailing newline).
struct IgnoredEntry {
  std::filesystem::path path;
  std::string reason;
};

/// torchvision 0.14 IMG_EXTENSIONS, compared with the lower-cased file name.
inline constexpr std::array<std::string_view, 9> kImageExtensions = {
    ".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp"};

/// True when the lower-cased (ASCII) name ends with one of kImageExtensions, as
/// torchvision's has_file_allowed_extension (so a file named just ".jpg" counts too).
bool has_image_extension(std::string_view file_name);

struct FolderScan {
  std::vector<std::string> classes;    ///< non-empty class directories, sorted
  std::vector<SampleEntry> samples;    ///< in torchvision's order
  std::vector<IgnoredEntry> ignored;   ///< sorted by path
  size_t class_directories = 0;        ///< first-level directories, empty ones included
};

/// Scans root by the rules above. Throws DatasetError (see above).
FolderScan scan_image_folder(const std::filesystem::path& root);

}  // namespace pipebench
