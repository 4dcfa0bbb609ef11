// StoredSource: cold reads (drop after read) and the read throttle (see storage.h).
#include "datasets/storage.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "datasets/file_io.h"

namespace pipebench {
namespace {

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string to_string(CacheMode mode) { return mode == CacheMode::kCold ? "cold" : "warm"; }

CacheMode parse_cache_mode(const std::string& text) {
  if (text == "warm") return CacheMode::kWarm;
  if (text == "cold") return CacheMode::kCold;
  throw std::invalid_argument("cache mode must be warm or cold, got '" + text + "'");
}

ReadThrottle::ReadThrottle(double mib_per_s) : mib_per_s_(mib_per_s) {
  if (!(mib_per_s > 0) || !std::isfinite(mib_per_s)) {
    throw std::invalid_argument("read throttle must be > 0 MiB/s, got " + std::to_string(mib_per_s));
  }
  ns_per_byte_ = 1e9 / (mib_per_s * 1024.0 * 1024.0);
}

void ReadThrottle::consume(size_t bytes) {
  int64_t done_ns = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The bucket holds up to kBurstNs of unused link time: a reader that wakes a little
    // late (timer slack, scheduling) finds the link did not go idle meanwhile.
    const int64_t start = std::max(steady_ns() - kBurstNs, link_free_ns_);
    link_free_ns_ = start + static_cast<int64_t>(std::llround(static_cast<double>(bytes) * ns_per_byte_));
    done_ns = link_free_ns_;
  }
  std::this_thread::sleep_until(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(done_ns)));
}

StoredSource::StoredSource(const SampleSource& inner, StorageOptions options)
    : inner_(inner), options_(std::move(options)) {
  if (options_.cache == CacheMode::kCold && inner_.in_memory()) {
    throw std::invalid_argument("a cold read needs a source read from storage, not one held in memory");
  }
  samples_per_file_.assign(inner_.file_count(), 0);
  for (size_t i = 0; i < inner_.size(); ++i) ++samples_per_file_[inner_.file_of(i)];
  reads_ = std::make_unique<std::atomic<uint64_t>[]>(samples_per_file_.size());
  if (options_.cache == CacheMode::kCold) drop_all();
}

std::span<const uint8_t> StoredSource::bytes(size_t i, std::vector<uint8_t>& buffer) const {
  const std::span<const uint8_t> out = inner_.bytes(i, buffer);
  if (options_.throttle) options_.throttle->consume(out.size());
  if (options_.cache == CacheMode::kCold) {
    const size_t f = inner_.file_of(i);
    const uint64_t n = reads_[f].fetch_add(1, std::memory_order_relaxed) + 1;
    if (n % samples_per_file_[f] == 0) drop_page_cache(inner_.file(f), /*sync=*/false);
  }
  return out;
}

size_t StoredSource::drop_all() const {
  size_t failed = 0;
  for (size_t f = 0; f < inner_.file_count(); ++f) {
    try {
      drop_page_cache(inner_.file(f));
    } catch (const std::exception&) {
      ++failed;
    }
  }
  return failed;
}

size_t StoredSource::drop_files_of(const std::vector<size_t>& samples) const {
  std::vector<bool> done(inner_.file_count(), false);
  size_t failed = 0;
  for (size_t i : samples) {
    const size_t f = inner_.file_of(i);
    if (done[f]) continue;
    done[f] = true;
    try {
      drop_page_cache(inner_.file(f));
    } catch (const std::exception&) {
      ++failed;
    }
  }
  return failed;
}

size_t StoredSource::fill_cache() const {
  std::vector<uint8_t> buffer;
  size_t failed = 0;
  for (size_t f = 0; f < inner_.file_count(); ++f) {
    try {
      read_file(inner_.file(f), buffer);
    } catch (const std::exception&) {
      ++failed;
    }
  }
  return failed;
}

ResidencyCheck StoredSource::check_residency(size_t max_files) const {
  ResidencyCheck r;
  const size_t files = inner_.file_count();
  if (files == 0 || max_files == 0) return r;
  const size_t step = std::max<size_t>(1, files / max_files);
  double share = 0;
  for (size_t f = 0; f < files && r.files_checked < max_files; f += step) {
    try {
      share += page_cache_resident(inner_.file(f));
      ++r.files_checked;
    } catch (const std::exception&) {  // unreadable: its read fails where it is met
    }
  }
  if (r.files_checked > 0) r.resident_share = share / static_cast<double>(r.files_checked);
  return r;
}

void StoredSource::cache_in_memory() {
  throw std::logic_error("StoredSource reads storage: cache the wrapped source instead");
}

}  // namespace pipebench
