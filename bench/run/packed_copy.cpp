#include "bench/run/packed_copy.h"

#include <algorithm>
#include <iostream>
#include <numeric>

#include "bench/run/bench_context.h"
#include "datasets/open_dataset.h"
#include "datasets/pack_cache.h"

namespace pipebench::bench {
namespace {

// Beside the pipebench binary, for a dataset whose folder is read-only (as presize does).
std::filesystem::path binary_folder() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::current_path() : exe.parent_path();
}

}  // namespace

const PackedCopy::Ready* PackedCopy::get(BenchContext& ctx) {
  std::call_once(once_, [&] {
    try {
      const auto& c = ctx.config();
      const CachedPack pack = cached_pack(c.data, ctx.disk().fingerprint(), static_cast<size_t>(shard_size_),
                                          c.seed, binary_folder() / ".pipebench-cache", std::cerr);
      dir_ = pack.dir;
      Ready r;
      r.source = open_dataset(pack.dir, /*skip_bad=*/false);
      for (CacheMode mode : {CacheMode::kWarm, CacheMode::kCold})
        r.stored_[mode] = std::make_unique<StoredSource>(*r.source, StorageOptions{mode, ctx.throttle()});
      // The round's count of samples from the first shard on, in stored order: a shard is
      // read front to back, as WebDataset streams it (a round spread over the copy would
      // read a few members of every shard and waste the readahead).
      r.round.resize(std::min(r.source->size(), ctx.round().size()));
      std::iota(r.round.begin(), r.round.end(), size_t{0});
      ready_ = std::move(r);
    } catch (const std::exception& e) {
      error_ = std::string("packed copy (--shards=") + std::to_string(shard_size_) + "): " + e.what();
    }
  });
  return ready_ ? &*ready_ : nullptr;
}

}  // namespace pipebench::bench
