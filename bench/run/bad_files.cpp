#include "bench/run/bad_files.h"

namespace pipebench::bench {
namespace {

constexpr size_t kListMax = 20;  // the JSON lists this many; the total counts all

// "path: reason", unless the reason already names the file.
std::string bad_file_message(const std::string& path, const std::string& reason) {
  return reason.find(path) != std::string::npos ? reason : path + ": " + reason;
}

}  // namespace

BadFiles::BadFiles(const SampleSource& dataset, OnError policy)
    : dataset_(dataset), policy_(policy), bad_(std::make_unique<std::atomic<bool>[]>(dataset.size())) {}

void BadFiles::add(const std::string& entry) {
  std::lock_guard lock(mu_);
  ++total_;
  if (list_.size() < kListMax) list_.push_back(to_valid_utf8(entry));
}

void BadFiles::fail_case(benchmark::State& state, const std::string& message) {
  errored_cases_.fetch_add(1, std::memory_order_relaxed);
  state.SkipWithError(to_valid_utf8(message).c_str());
}

bool BadFiles::on_bad_file(benchmark::State& state, size_t index, const std::string& reason) {
  const std::string message = bad_file_message(dataset_.name(index), reason);
  if (policy_ == OnError::kStop) {
    fail_case(state, message + " (--on-error=skip passes over bad files)");
    return false;
  }
  if (!bad_[index].exchange(true)) add(message);
  return true;
}

bool BadFiles::known_bad(size_t index) const { return bad_[index].load(std::memory_order_relaxed); }

void BadFiles::record_skipped(const std::vector<SkippedSample>& samples) {
  for (const auto& s : samples) {
    const auto i = static_cast<size_t>(s.index);
    if (i < dataset_.size() && !bad_[i].exchange(true)) add(bad_file_message(s.path, s.reason));
  }
}

RunEpilogue BadFiles::epilogue() const {
  RunEpilogue e;
  e.errored_cases = errored_cases_.load();
  std::lock_guard lock(mu_);
  e.skipped_files = list_;
  e.skipped_total = total_;
  return e;
}

bool DatasetCursor::good(size_t& index) {
  for (size_t tried = 0; tried < size_; ++tried, advance()) {
    if (!bad_.known_bad(i_)) {
      index = i_;
      return true;
    }
  }
  return false;
}

}  // namespace pipebench::bench
