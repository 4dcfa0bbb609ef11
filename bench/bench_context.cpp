#include "bench/bench_context.h"

#include <algorithm>
#include <string>

#include "bench/image_round.h"
#include "pipeline/dist/dist.h"
#include "transforms/jpeg_decode.h"

namespace pipebench::bench {
namespace {

// The dataset must hold at least one image that decodes; stops at the first that does.
void check_decodable(const ImageFolder& ds, const std::filesystem::path& root) {
  TurboDecoder decoder;
  Image img;
  std::vector<uint8_t> bytes;
  std::string last_error;
  for (size_t i = 0; i < ds.size(); ++i) {
    try {
      ds.read(i, bytes);
      decoder.decode(bytes, ds.sample(i).path.string(), img);
      return;
    } catch (const std::exception& e) {
      last_error = e.what();
    }
  }
  throw DatasetError(root.string() + ": no readable image among " + std::to_string(ds.size()) +
                     " files (last error: " + last_error + ")");
}

}  // namespace

BenchContext::BenchContext(BenchConfig config) : config_(std::move(config)) {
  disk_ = std::make_unique<ImageFolder>(config_.data);
  check_decodable(*disk_, config_.data);
  bad_ = std::make_unique<BadFiles>(*disk_, config_.on_error);
  if (!config_.trace.empty()) trace_ = std::make_unique<TraceRecorder>();
  round_ = round_indices(disk_->size(), static_cast<size_t>(config_.round));
  per_image_ = std::make_unique<PerImageCosts>(disk_->size());
}

std::vector<std::string> BenchContext::relative_files() const {
  std::vector<std::string> out;
  out.reserve(disk_->size());
  for (size_t i = 0; i < disk_->size(); ++i)
    out.push_back(disk_->sample(i).path.lexically_relative(disk_->root()).generic_string());
  return out;
}

const ImageFolder& BenchContext::memory() {
  std::call_once(memory_once_, [this] {
    memory_ = std::make_unique<ImageFolder>(config_.data);
    memory_->cache_in_memory();
  });
  return *memory_;
}

const std::vector<Image>& BenchContext::decoded_images(size_t count) {
  std::lock_guard lock(decoded_mu_);
  const auto& ds = memory();
  TurboDecoder decoder;
  for (size_t i = decoded_.size(); i < std::min(count, ds.size()); ++i) {
    Image img;
    try {
      decoder.decode(ds.cached(i), ds.sample(i).path.string(), img);
    } catch (const std::exception&) {
      continue;  // a bad file is the bad-input tests' business; skip it here
    }
    decoded_.push_back(std::move(img));
  }
  return decoded_;
}

bool BenchContext::drop_last() const {
  if (config_.drop_last) return *config_.drop_last;
  // The smallest rank's shard under mpirun (pipeline/sampler.h), the whole dataset alone.
  return disk_->size() / static_cast<size_t>(dist::world_size()) >= static_cast<size_t>(config_.batch);
}

std::filesystem::path BenchContext::write_trace() {
  if (!trace_) return {};
  trace_->write(config_.trace);
  return config_.trace;
}

}  // namespace pipebench::bench
