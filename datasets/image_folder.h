// ImageFolder: a dataset in torchvision's ImageFolder layout, root/<class>/.../<image>,
// scanned by torchvision 0.14's rules (datasets/folder_scan.h: classes are the first-level
// directories, images found recursively below them, IMG_EXTENSIONS case-insensitive, an
// empty class gets no label, loops and odd entries reported in ignored()). Label = class
// index; index i means the same file on every machine with the same tree.
//
// Bytes are read from disk on every read() or, after cache_in_memory(), served from an
// in-memory byte cache (what a benchmark of decode alone wants). Scanning reads no file's
// contents (one stat() per entry), nor does fingerprint().
//
// It is a SampleSource (sample_source.h) of layout "files".
//
// Errors: DatasetError naming the path: root missing or not a directory, no class
// directory, no image file in any class, an unreadable file (on read).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "datasets/folder_scan.h"
#include "datasets/sample_source.h"
#include "transforms/image_format.h"

namespace pipebench {

class ImageFolder : public SampleSource {
 public:
  /// Scans root. Throws DatasetError when root is missing, has no class directory or no
  /// image file below any class directory.
  explicit ImageFolder(const std::filesystem::path& root);

  const std::filesystem::path& root() const { return root_; }
  size_t size() const override { return samples_.size(); }
  const SampleEntry& sample(size_t i) const { return samples_.at(i); }
  /// Class names, label order; classes without any image are not among them (ignored()).
  const std::vector<std::string>& classes() const { return classes_; }
  /// What the scanner passed over, with reasons, sorted by path (folder_scan.h).
  const std::vector<IgnoredEntry>& ignored() const { return ignored_; }
  uint64_t total_bytes() const;

  /// Reads sample i's bytes into `out` (resized; capacity kept across calls). From the
  /// cache if cache_in_memory() was called. Throws DatasetError naming the file.
  void read(size_t i, std::vector<uint8_t>& out) const;
  /// Sample i's bytes from the in-memory cache (requires cache_in_memory()). Throws
  /// DatasetError naming the file when it could not be read into the cache.
  std::span<const uint8_t> cached(size_t i) const;
  /// Sample i's bytes wherever they are: a view of the cache when cached (no copy), else
  /// read into `buffer` and a view of it. The view lives until the next call with `buffer`
  /// (or as long as the cache). Throws DatasetError naming the file.
  std::span<const uint8_t> bytes(size_t i, std::vector<uint8_t>& buffer) const override {
    if (is_cached()) return cached(i);
    read(i, buffer);
    return buffer;
  }

  // SampleSource: one file per sample, each its own group.
  size_t num_classes() const override { return classes_.size(); }
  int32_t label(size_t i) const override { return samples_.at(i).label; }
  std::string name(size_t i) const override { return samples_.at(i).path.native(); }
  size_t file_count() const override { return samples_.size(); }
  const std::filesystem::path& file(size_t f) const override { return samples_.at(f).path; }
  size_t file_of(size_t i) const override { return i; }
  uint64_t sample_bytes() const override { return total_bytes(); }
  std::string layout() const override { return "files"; }
  bool in_memory() const override { return is_cached(); }

  /// Loads every file into memory once (bytes, not decoded pixels). A file that cannot be
  /// read (no permission, vanished) is remembered with its error, which cached(i) and
  /// read(i) then throw, so a bad file is the business of the case that meets it
  /// (--on-error), not of the whole run.
  void cache_in_memory() override;
  bool is_cached() const { return !cache_.empty(); }

  /// Sample i's format by content (sniff_format on its first kSniffBytes bytes: from the
  /// cache, else one open and a 16-byte read). Throws DatasetError when unreadable.
  ImageFormat format(size_t i) const;
  /// Samples per format name ("jpeg", "png", ..., "unknown"; see image_format.h), by
  /// content, not extension; files that cannot be opened count as "unreadable". Costs one
  /// open and a 16-byte read per file unless cached; decodes nothing.
  std::map<std::string, size_t> formats() const;

  /// FNV-1a 64-bit over (relative path, size, modification time in ns) of every sample, as
  /// 16 hex digits: changes when files are added, removed, renamed, resized or rewritten
  /// (touched), and with the set of classes. Reads no file (issue 15, defect 5: start-up
  /// must not read the dataset). A copy that does not keep modification times (cp without
  /// -p) gets another fingerprint; content_fingerprint() is the one for that.
  std::string fingerprint() const override;
  /// FNV-1a 64-bit over (relative path, size, every byte) of every sample: the same for
  /// identical trees wherever they are and whenever written. Reads the whole dataset
  /// (from the cache when cached). Throws DatasetError when a file cannot be read.
  std::string content_fingerprint() const;
  /// content_fingerprint() when `contents`, else fingerprint(). Kept for callers of the
  /// former signature; new code calls the two above.
  std::string fingerprint(bool contents) const {
    return contents ? content_fingerprint() : fingerprint();
  }

 private:
  std::filesystem::path root_;
  std::vector<std::string> classes_;
  std::vector<SampleEntry> samples_;
  std::vector<IgnoredEntry> ignored_;
  std::vector<std::vector<uint8_t>> cache_;
  std::vector<std::string> cache_errors_;  // per sample: why it is not cached ("" = cached)
};

}  // namespace pipebench
