// The sharded copy of a dataset a benchmark run measures (issue 12): `pack_dataset`
// (pack.h) with N images per shard, made once into a cache folder next to the data and
// reused while it still describes the same dataset (as presize_cache.h does for presizing).
//
//   folder   <data>/../.pipebench-cache/<data's folder name>-shards-<N>/ (photos-in's is
//            data/.pipebench-cache/photos-in-shards-256), or <fallback_root>/<the same
//            name> when that cannot be written (presize_cache_root, presize_cache.h).
//   reused   when its manifest (pack.json, pack.h) names the dataset's current metadata
//            fingerprint (ImageFolder::fingerprint()), N, the seed and shuffling, and every
//            shard it lists is there with its recorded size; otherwise it is packed again
//            (pack_dataset replaces an earlier output).
//
// Errors: what pack_dataset throws (pack.h); DatasetError when no folder can be written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>

#include "datasets/pack.h"

namespace pipebench {

struct CachedPack {
  std::filesystem::path dir;   ///< the shard folder (open_dataset / ShardSet reads it)
  bool reused = false;         ///< found valid in the cache
  double seconds = 0;          ///< wall time spent packing (0 when reused)
  PackManifest manifest;
};

/// The cached copy of `data` (whose ImageFolder fingerprint() is `fingerprint`) packed
/// `shard_size` images per shard, shuffled with `seed`; made when missing or stale. One
/// line to `log` saying which.
CachedPack cached_pack(const std::filesystem::path& data, const std::string& fingerprint,
                       size_t shard_size, uint64_t seed,
                       const std::filesystem::path& fallback_root, std::ostream& log);

}  // namespace pipebench
