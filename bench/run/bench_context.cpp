#include "bench/run/bench_context.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "bench/run/file_header.h"
#include "bench/run/image_round.h"
#include "bench/run/machine.h"
#include "datasets/open_dataset.h"
#include "pipeline/dist/dist.h"
#include "transforms/jpeg_decode.h"

namespace pipebench::bench {
namespace {

// The dataset must hold at least one image that decodes; stops at the first that does.
void check_decodable(const SampleSource& ds, const std::filesystem::path& root) {
  TurboDecoder decoder;
  Image img;
  std::vector<uint8_t> bytes;
  std::string last_error;
  for (size_t i = 0; i < ds.size(); ++i) {
    try {
      decoder.decode(ds.bytes(i, bytes), ds.name(i), img);
      return;
    } catch (const std::exception& e) {
      last_error = e.what();
    }
  }
  throw DatasetError(root.string() + ": no readable image among " + std::to_string(ds.size()) +
                     " samples (last error: " + last_error + ")");
}

// The dataset at `path`: WebDataset shards or an ImageFolder tree.
std::unique_ptr<SampleSource> open_source(const std::filesystem::path& path, OnError on_error) {
  return open_dataset(path, /*skip_bad=*/on_error == OnError::kSkip);
}

}  // namespace

BenchContext::BenchContext(BenchConfig config)
    : config_(std::move(config)), series_(config_.system_sample_hz) {
  disk_ = open_source(config_.data, config_.on_error);
  if (config_.read_throttle_mib_s > 0)
    throttle_ = std::make_shared<ReadThrottle>(config_.read_throttle_mib_s);
  check_decodable(*disk_, config_.data);
  bad_ = std::make_unique<BadFiles>(*disk_, config_.on_error);
  if (folder() != nullptr)
    for (int n : config_.shard_sizes) packed_.push_back(std::make_shared<PackedCopy>(n));
  const auto presize_side = presize_shorter_side(config_.presize, config_.pipeline->spec());
  if (folder() != nullptr && presize_side)
    presized_.push_back(std::make_shared<PresizedCopy>(*presize_side, kPresizeQuality));
  if (!config_.trace.empty()) trace_ = std::make_unique<TraceRecorder>();
  round_ = round_indices(disk_->size(), static_cast<size_t>(config_.round));
  if (folder() != nullptr) {
    // --presize-large's side is at least the one --presize=auto would keep for this spec.
    const auto auto_side = presize_shorter_side("auto", config_.pipeline->spec());
    if (const auto plan = plan_presize_large(config_.presize_large, *folder(), round_, auto_side.value_or(0)))
      presized_.push_back(std::make_shared<PresizedCopy>(*plan, kPresizeQuality));
  }
  per_image_ = std::make_unique<PerImageCosts>(disk_->size());
}

std::optional<model::FileHeader> BenchContext::file_header(size_t i) {
  const ImageFolder* f = folder();
  if (f == nullptr || i >= f->size()) return std::nullopt;
  std::lock_guard<std::mutex> lock(headers_mu_);
  const auto it = headers_.find(i);
  if (it != headers_.end()) return it->second;
  return headers_.emplace(i, read_file_header(*f, i)).first->second;
}

std::vector<std::string> BenchContext::relative_files() const {
  std::vector<std::string> out;
  out.reserve(disk_->size());
  const ImageFolder* files = folder();
  for (size_t i = 0; i < disk_->size(); ++i)
    out.push_back(files ? files->sample(i).path.lexically_relative(files->root()).generic_string()
                        : disk_->name(i));
  return out;
}

const SampleSource& BenchContext::memory() {
  std::call_once(memory_once_, [this] {
    memory_ = open_source(config_.data, config_.on_error);
    memory_->cache_in_memory();
  });
  return *memory_;
}

const StoredSource& BenchContext::stored(CacheMode mode, bool throttled) {
  std::lock_guard lock(stored_mu_);
  auto& s = stored_[{mode, throttled && throttle_}];
  if (!s) s = std::make_unique<StoredSource>(*disk_, StorageOptions{mode, throttled ? throttle_ : nullptr});
  return *s;
}

const std::vector<Image>& BenchContext::decoded_images(size_t count) {
  std::lock_guard lock(decoded_mu_);
  const auto& ds = memory();
  TurboDecoder decoder;
  std::vector<uint8_t> scratch;  // unused: the memory copy hands out views
  for (size_t i = decoded_.size(); i < std::min(count, ds.size()); ++i) {
    Image img;
    try {
      decoder.decode(ds.bytes(i, scratch), ds.name(i), img);
    } catch (const std::exception&) {
      continue;  // a bad file is the bad-input tests' business; skip it here
    }
    decoded_.push_back(std::move(img));
  }
  return decoded_;
}

int BenchContext::table_workers() const {
  const int cores = config_.whole_cores();
  int at = 0;
  for (int w : config_.workers)
    if (w <= cores) at = std::max(at, w);
  return at;
}

bool BenchContext::drop_last(const SampleSource* source) const {
  if (config_.drop_last) return *config_.drop_last;
  // The smallest rank's shard under mpirun (pipeline/sampler.h), the whole source alone.
  const size_t size = (source ? source : disk_.get())->size();
  return size / static_cast<size_t>(dist::world_size()) >= static_cast<size_t>(config_.batch);
}

std::filesystem::path BenchContext::write_trace() {
  if (!trace_) return {};
  trace_->write(config_.trace);
  return config_.trace;
}

void BenchContext::note_case(const model::CaseKey& key) {
  std::string name = key.name();
  if (!keys_.emplace(name, key).second) throw std::logic_error("two cases registered as " + name);
  case_names_.push_back(std::move(name));
}

const model::CaseKey* BenchContext::key_of(const std::string& name) const {
  const auto it = keys_.find(name);
  return it == keys_.end() ? nullptr : &it->second;
}

}  // namespace pipebench::bench
