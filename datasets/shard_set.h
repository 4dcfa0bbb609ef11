// ShardSet: a dataset stored as WebDataset tar shards (many samples per file), read by
// member offset: the SampleSource (sample_source.h) of layout "shards".
//
// Format (WebDataset's, https://github.com/webdataset/webdataset README, "The WebDataset
// Format"): each shard is a POSIX tar archive (ustar, pax or GNU headers; tar_format.h);
// consecutive members sharing a key form one sample, where a member path splits into
// key = everything up to the first '.' of its last component and extension = the rest,
// lower-cased (webdataset's base_plus_ext and group_by_keys). Members whose last
// component has no '.' (or starts with one) belong to no sample, as in webdataset, and
// are listed in ignored(). pipebench's samples are classification samples:
//   image   exactly one member whose extension is an image type ImageFolder decodes
//           (jpg jpeg png ppm bmp pgm tif tiff webp, folder_scan.h kImageExtensions; the
//           content decides the decoder, transforms/image_format.h); other fields
//           (.json, .txt, ...) are allowed and not read;
//   label   one ".cls" member holding the class index as decimal text (ASCII digits,
//           surrounding whitespace allowed, at most 32 bytes), in [0, 2^31).
// num_classes() = max label + 1. classes() gives the names from "classes.txt" (one per
// line, label order; `pipebench-data pack` writes it) when the shard directory has one.
//
// Shards: a directory's "*.tar" files sorted by name (byte-wise), or an explicit list, in
// the order given. Sample i's order is shard order, then member order; group g = shard g
// (group_starts()), file(g) = the shard's path. name(i) = "<shard path>:<image member>".
//
// Cost: construction reads every 512-byte header (pread, data seeked over) and each
// .cls member's few bytes; no image byte. Each shard's descriptor is kept open (up to half
// of RLIMIT_NOFILE; beyond that a shard is opened per read) and bytes(i) is one pread of
// the member's data, so many threads read at once. After cache_in_memory(), from memory.
// fingerprint(): FNV-1a 64 over (shard file name, size, mtime ns), reads nothing.
//
// Errors (DatasetError, "<shard>: member \"NAME\" (header at byte N): reason"): a shard
// that cannot be opened or is not a regular file; a shard that is not a tar (checksum
// mismatch at byte 0) or has a corrupt header later; a truncated tar (a member's data runs
// past the end of the file, or a header is cut); an empty shard (no member); a shard
// with no sample; an image without its .cls label, a .cls without an image, two images
// or two members with one extension in a sample; a label that is not a decimal integer
// or is negative or too large; a directory without *.tar. With skip_bad, each of these
// instead puts the sample (or the shard, or the rest of a shard after a bad header) in
// ignored() and the rest is used; with no valid sample left it throws naming the first
// problem. bytes() throws DatasetError naming the sample when a read fails or the shard
// shrank.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "datasets/folder_scan.h"
#include "datasets/sample_source.h"

namespace pipebench {

class ShardSet : public SampleSource {
 public:
  /// The "*.tar" files of a directory, sorted by name (or one .tar file). Throws as above.
  explicit ShardSet(const std::filesystem::path& dir_or_shard, bool skip_bad = false);
  /// These shards, in this order. Throws as above (also for an empty list).
  explicit ShardSet(std::vector<std::filesystem::path> shards, bool skip_bad = false);
  ~ShardSet() override;
  ShardSet(const ShardSet&) = delete;
  ShardSet& operator=(const ShardSet&) = delete;

  size_t size() const override { return samples_.size(); }
  size_t num_classes() const override { return num_classes_; }
  int32_t label(size_t i) const override { return samples_.at(i).label; }
  /// "<shard path>:<image member name>".
  std::string name(size_t i) const override;
  /// The image member's name inside its shard, e.g. "00000042.jpg".
  const std::string& member(size_t i) const { return samples_.at(i).member; }
  std::span<const uint8_t> bytes(size_t i, std::vector<uint8_t>& buffer) const override;

  size_t file_count() const override { return shards_.size(); }
  const std::filesystem::path& file(size_t f) const override { return shards_.at(f).path; }
  size_t file_of(size_t i) const override { return samples_.at(i).shard; }
  std::vector<size_t> group_starts() const override;
  uint64_t sample_bytes() const override { return sample_bytes_; }
  std::string layout() const override { return "shards"; }
  void cache_in_memory() override;
  bool in_memory() const override { return !cache_.empty(); }
  std::string fingerprint() const override;

  /// Samples, shards or members passed over, with reasons: {"<shard>:<member>" or
  /// "<shard>", reason}, in shard order. Non-sample members always; bad input with skip_bad.
  const std::vector<IgnoredEntry>& ignored() const { return ignored_; }
  /// Class names from the directory's classes.txt (label order); empty when it has none.
  const std::vector<std::string>& classes() const { return classes_; }
  /// Total size of the shard files, bytes.
  uint64_t shard_bytes() const;

 private:
  struct Shard {
    std::filesystem::path path;
    uint64_t size = 0;      ///< bytes at indexing
    int64_t mtime_ns = 0;
    int fd = -1;            ///< kept open, or -1: opened per read
  };
  struct Sample {
    uint32_t shard = 0;
    int32_t label = 0;
    uint64_t offset = 0;    ///< image data's byte offset in the shard
    uint64_t size = 0;      ///< image data bytes
    std::string member;     ///< image member name
  };

  void index(std::vector<std::filesystem::path> paths, bool skip_bad);
  void index_shard(const std::filesystem::path& path, bool skip_bad);
  void read_at(const Shard& shard, const Sample& s, uint8_t* out) const;

  std::vector<Shard> shards_;
  std::vector<Sample> samples_;
  std::vector<IgnoredEntry> ignored_;
  std::vector<std::string> classes_;
  size_t num_classes_ = 0;
  uint64_t sample_bytes_ = 0;
  std::vector<std::vector<uint8_t>> cache_;
  std::vector<std::string> cache_errors_;  // per sample: why it is not cached ("" = cached)
};

/// The "*.tar" regular files (or links to them) directly in dir, sorted by name.
std::vector<std::filesystem::path> list_shards(const std::filesystem::path& dir);

}  // namespace pipebench
