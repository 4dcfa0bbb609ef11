// How a run reads its data from storage: warm or cold page cache, and an emulated slow
// link. StoredSource wraps any SampleSource (ImageFolder files or WebDataset shards) with
// these settings; the loader and the read cases take it as they take the source itself.
//
// Cold runs without root, DS-Analyzer's method (Mohan et al., "Analyzing and Mitigating
// Data Stalls in DNN Training", VLDB 2021): the pages of every file are dropped with
// posix_fadvise(POSIX_FADV_DONTNEED) when the wrapper is made, and each file's again once
// all its samples have been read (after every read for one file per sample; after the
// shard's last member for a shard), so every epoch reads from the device. The drop after a
// read costs an open, an fadvise and a close (a few µs) and is part of the read stage's
// time. A filesystem may ignore the advice (tmpfs, some overlays): check_cold() measures
// what is resident (mincore) so a run can say whether it was really cold. Two readers of
// one shard at its first read may find some of its pages still cached from the last epoch:
// cold is per file, not per page.
//
// The throttle emulates slow storage on a fast local disk (a network filesystem, a cloud
// bucket): every read occupies one shared link of `mib_per_s` for bytes / rate seconds, in
// arrival order, so reads of all workers together never exceed the rate over any window
// longer than the bucket's 2 ms depth (a token bucket: ReadThrottle::kBurstNs). It is an
// emulation and every result made with it says so
// (--read-throttle-mib-s). Sleeping workers use no CPU, as threads waiting on real I/O.
//
// Errors: std::invalid_argument for a rate <= 0, an unknown cache mode, or cold over a
// source held in memory; DatasetError (folder_scan.h) from the wrapped source, naming the
// file, and from the drops (a file that vanished).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "datasets/sample_source.h"

namespace pipebench {

enum class CacheMode { kWarm, kCold };
/// "warm" or "cold".
std::string to_string(CacheMode mode);
/// Parses "warm" or "cold"; throws std::invalid_argument naming the value otherwise.
CacheMode parse_cache_mode(const std::string& text);

/// One shared link of a fixed bandwidth (see above). Thread-safe.
class ReadThrottle {
 public:
  /// Throws std::invalid_argument when mib_per_s <= 0 (or not finite).
  explicit ReadThrottle(double mib_per_s);
  /// Blocks until `bytes` have passed the link after every earlier read.
  void consume(size_t bytes);
  double mib_per_s() const { return mib_per_s_; }

  /// Link time a read may draw from before it arrived: the token bucket's depth (2 ms,
  /// 40 KiB at 20 MiB/s). Without it one reader's wake-up latency (~0.1 ms per sleep)
  /// left the link idle: 8 % under the rate at 20 MiB/s on 32 KiB reads.
  static constexpr int64_t kBurstNs = 2'000'000;

 private:
  double mib_per_s_;
  double ns_per_byte_;
  std::mutex mu_;
  int64_t link_free_ns_ = 0;  // steady clock, when the link finishes the last read
};

struct StorageOptions {
  CacheMode cache = CacheMode::kWarm;
  /// Null: no throttle. Shared by every source of the process (one link per process).
  std::shared_ptr<ReadThrottle> throttle;
};

/// What mincore found on a sample of the source's files.
struct ResidencyCheck {
  size_t files_checked = 0;
  double resident_share = 0;  ///< pages in the page cache / pages, over the files checked
};

class StoredSource : public SampleSource {
 public:
  /// Wraps `inner`, which must outlive it. Cold drops every file's pages now (drop_all()).
  /// Throws std::invalid_argument for cold over an in-memory source.
  StoredSource(const SampleSource& inner, StorageOptions options);

  const SampleSource& inner() const { return inner_; }
  const StorageOptions& options() const { return options_; }

  /// The wrapped source's bytes, after the link's delay when throttled; cold drops the
  /// file afterwards once all its samples have been read since its last drop.
  std::span<const uint8_t> bytes(size_t i, std::vector<uint8_t>& buffer) const override;

  /// Drops every file's pages again (fdatasync first); what the read cases call before a
  /// timed round. A file that cannot be opened is passed over (its read will fail, naming
  /// it, in the case that meets it: --on-error decides); returns how many were.
  size_t drop_all() const;
  /// Drops the pages of the files holding `samples` (each file once, fdatasync first);
  /// unreadable files are passed over as by drop_all(); returns how many were.
  size_t drop_files_of(const std::vector<size_t>& samples) const;
  /// Reads every file once, whole, so that the page cache holds the dataset (a warm case
  /// after a cold one would otherwise start cold). No throttle. Unreadable files are passed
  /// over as by drop_all(); returns how many were.
  size_t fill_cache() const;
  /// Residency of up to `max_files` files spread over the source (every file when it has
  /// fewer). Right after drop_all() a share near 0 means the cold setting works here.
  ResidencyCheck check_residency(size_t max_files = 32) const;

  size_t size() const override { return inner_.size(); }
  size_t num_classes() const override { return inner_.num_classes(); }
  int32_t label(size_t i) const override { return inner_.label(i); }
  std::string name(size_t i) const override { return inner_.name(i); }
  size_t file_count() const override { return inner_.file_count(); }
  const std::filesystem::path& file(size_t f) const override { return inner_.file(f); }
  size_t file_of(size_t i) const override { return inner_.file_of(i); }
  std::vector<size_t> group_starts() const override { return inner_.group_starts(); }
  uint64_t sample_bytes() const override { return inner_.sample_bytes(); }
  std::string layout() const override { return inner_.layout(); }
  /// Not supported: a stored source reads storage by definition. Throws std::logic_error.
  void cache_in_memory() override;
  bool in_memory() const override { return false; }
  std::string fingerprint() const override { return inner_.fingerprint(); }

 private:
  const SampleSource& inner_;
  StorageOptions options_;
  std::vector<uint32_t> samples_per_file_;
  // Reads of each file since it was made; a file is dropped when its count reaches a
  // multiple of its samples.
  std::unique_ptr<std::atomic<uint64_t>[]> reads_;
};

}  // namespace pipebench
