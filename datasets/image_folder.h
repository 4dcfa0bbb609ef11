// ImageFolder: a directory in torchvision's ImageFolder layout,
//   root/<class>/<image>.jpg|.jpeg   (extension case-insensitive)
// Classes are the sub-directory names sorted byte-wise; label = class index. Samples are
// sorted by (class, file name), so index i means the same file on every machine. Files
// directly under root, in nested sub-directories of a class, and other extensions are
// ignored. An empty class directory still counts as a class. Symbolic links to files and
// class directories are followed.
//
// Bytes are read from disk on every read() or, after cache_in_memory(), served from an
// in-memory byte cache (what a benchmark of decode alone wants).
//
// Errors: DatasetError naming the path: root missing or not a directory, no class
// directory, no image at all, an unreadable file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipebench {

class DatasetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SampleEntry {
  std::filesystem::path path;
  int32_t label = 0;
  uint64_t size_bytes = 0;  ///< file size at scan time
};

class ImageFolder {
 public:
  /// Scans root. Throws DatasetError when root is missing, has no class directory or no
  /// .jpg/.jpeg file.
  explicit ImageFolder(const std::filesystem::path& root);

  const std::filesystem::path& root() const { return root_; }
  size_t size() const { return samples_.size(); }
  const SampleEntry& sample(size_t i) const { return samples_.at(i); }
  const std::vector<std::string>& classes() const { return classes_; }
  uint64_t total_bytes() const;

  /// Reads sample i's bytes into `out` (resized; capacity kept across calls). From the
  /// cache if cache_in_memory() was called. Throws DatasetError naming the file.
  void read(size_t i, std::vector<uint8_t>& out) const;
  /// Sample i's bytes from the in-memory cache (requires cache_in_memory()).
  std::span<const uint8_t> cached(size_t i) const;
  /// Sample i's bytes wherever they are: a view of the cache when cached (no copy), else
  /// read into `buffer` and a view of it. The view lives until the next call with `buffer`
  /// (or as long as the cache). Throws DatasetError naming the file.
  std::span<const uint8_t> bytes(size_t i, std::vector<uint8_t>& buffer) const {
    if (is_cached()) return cached(i);
    read(i, buffer);
    return buffer;
  }

  /// Loads every file into memory once (bytes, not decoded pixels).
  void cache_in_memory();
  bool is_cached() const { return !cache_.empty(); }

  /// FNV-1a 64-bit over (relative path, size) of every sample, as 16 hex digits: changes
  /// when files are added, removed, renamed or resized. With contents = true it also
  /// hashes every byte (slower; what the benchmark context records for a cached set).
  std::string fingerprint(bool contents = false) const;

 private:
  std::filesystem::path root_;
  std::vector<std::string> classes_;
  std::vector<SampleEntry> samples_;
  std::vector<std::vector<uint8_t>> cache_;
};

}  // namespace pipebench
