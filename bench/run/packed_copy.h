// The packed copy of the run's dataset (issue 12, "pack into shards"): --data (an
// ImageFolder tree) packed into WebDataset tar shards of --shards images, made once into
// the cache folder next to the data (datasets/pack_cache.h) and reused while the dataset's
// fingerprint matches, on the first call of a case that needs it (outside timed regions).
// The read cases (BM_Read/shards-N/<cache>) and the loader's cold case on shards
// (BM_Loader/<pipeline>/shards-N/cold/workers:<w>) measure it beside the files.
// Errors: get() returns nullptr after a failure; error() says why (the pack's message,
// naming the file).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "datasets/sample_source.h"
#include "datasets/storage.h"

namespace pipebench::bench {

class BenchContext;

class PackedCopy {
 public:
  struct Ready {
    std::unique_ptr<SampleSource> source;                        // the shard set
    std::map<CacheMode, std::unique_ptr<StoredSource>> stored_;  // warm and cold, the run's throttle
    std::vector<size_t> round;  // as many samples as the run's round, spread over the copy
    const StoredSource& stored(CacheMode mode) const { return *stored_.at(mode); }
  };
  explicit PackedCopy(int shard_size) : shard_size_(shard_size) {}

  /// The copy, made or found on the first call; nullptr after a failure.
  const Ready* get(BenchContext& ctx);
  const std::string& error() const { return error_; }
  const std::filesystem::path& dir() const { return dir_; }
  int shard_size() const { return shard_size_; }
  /// "shards-N", as case names spell it.
  std::string layout() const { return "shards-" + std::to_string(shard_size_); }

 private:
  int shard_size_;
  std::once_flag once_;
  std::optional<Ready> ready_;
  std::string error_;
  std::filesystem::path dir_;
};

}  // namespace pipebench::bench
