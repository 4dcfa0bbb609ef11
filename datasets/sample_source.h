// SampleSource: where a dataset's samples come from, whatever their layout on storage (the
// loader's byte source). Two layouts implement it: ImageFolder (one file per sample,
// image_folder.h) and ShardSet (WebDataset tar shards, many samples per file, shard_set.h);
// storage.h wraps either one to read it cold (page cache dropped) or throttled.
//
// A sample is its encoded image bytes (JPEG, PNG, ... as stored; never decoded here) and
// an int32 class label in [0, num_classes()). Samples stored in one file form a group:
// group g holds the contiguous samples [group_starts()[g], group_starts()[g + 1]), so a
// sampler can shuffle whole shards (pipeline/sampler.h) and a cold run drops each file once.
// For one-file-per-sample layouts every sample is its own group.
//
// Thread safety: every const member may be called from many threads at once (the loader's
// workers read concurrently).
// Errors: DatasetError (folder_scan.h) naming the file (and member) and the reason.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace pipebench {

class SampleSource {
 public:
  virtual ~SampleSource() = default;

  /// Number of samples.
  virtual size_t size() const = 0;
  /// Number of classes (labels are in [0, num_classes())).
  virtual size_t num_classes() const = 0;
  /// Sample i's class label.
  virtual int32_t label(size_t i) const = 0;
  /// Where sample i is stored, for messages: a path, or "shard.tar:member" for a shard member.
  virtual std::string name(size_t i) const = 0;
  /// Sample i's encoded bytes: a view of memory the source holds (cached) or of `buffer`,
  /// which it fills (capacity kept across calls). The view lives until the next call with
  /// `buffer`. Throws DatasetError naming the sample.
  virtual std::span<const uint8_t> bytes(size_t i, std::vector<uint8_t>& buffer) const = 0;

  /// Files on storage: one per sample (files) or one per group (shards).
  virtual size_t file_count() const = 0;
  virtual const std::filesystem::path& file(size_t f) const = 0;
  /// The file that holds sample i.
  virtual size_t file_of(size_t i) const = 0;
  /// Start of each group, ascending, first 0: group g = samples [starts[g], starts[g+1]) (the
  /// last runs to size()). Empty when every sample is its own group (one file per sample).
  virtual std::vector<size_t> group_starts() const { return {}; }
  /// Sum of the samples' encoded sizes, bytes.
  virtual uint64_t sample_bytes() const = 0;
  /// "files" (ImageFolder) or "shards" (WebDataset tar shards): the storage layout's name,
  /// as benchmark case names and the run context spell it.
  virtual std::string layout() const = 0;
  /// Loads every sample's bytes into memory once (not decoded pixels), so bytes() stops
  /// reading storage (what a benchmark of decode alone wants). A sample that cannot be read
  /// is remembered with its error, which bytes() then throws for it alone.
  virtual void cache_in_memory() = 0;
  /// Whether bytes() serves from memory (cache_in_memory()) rather than storage.
  virtual bool in_memory() const = 0;
  /// 16 hex digits identifying the dataset's contents cheaply, without reading sample
  /// bytes (for files: paths, sizes, modification times; for shards: the same of the shard
  /// files); changes when the data is rewritten. Run contexts and caches key on it.
  virtual std::string fingerprint() const = 0;
};

}  // namespace pipebench
