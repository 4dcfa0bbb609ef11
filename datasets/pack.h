// Packing an ImageFolder tree into WebDataset tar shards (`pipebench-data pack`), the
// layout ShardSet (shard_set.h) and the `webdataset` Python library read.
//
//   order      the ImageFolder's samples (folder_scan.h order), shuffled with `seed`
//              (Fisher-Yates over std::mt19937_64, unbiased bounded draws: the same order
//              on every platform) unless `shuffle` is false. WebDataset recommends shuffled
//              packing so that every shard mixes classes (its shuffle is shard-level plus
//              a bounded buffer).
//   members    per image, consecutive: "<key>.<ext>" (the source file's bytes unchanged;
//              ext = its extension, lower-cased) and "<key>.cls" (the label as decimal
//              text, no newline), key = the packed position zero-padded to 8 digits
//              (more when there are 10^8 images or more), e.g. 00000042.jpg, 00000042.cls.
//              POSIX ustar headers (tar_format.h), mode 0644, mtime = the source file's
//              (seconds), uid/gid 0.
//   shards     OUT/<prefix>-000000.tar, -000001.tar, ...: a new shard after `shard_size`
//              images, or once the shard holds `shard_mib` MiB of tar bytes, whichever
//              comes first (at least one of the two must be set). Each shard is written to
//              ".<name>.tmp-<pid>" beside it, fsynced and renamed: whole or not at all.
//   extras     OUT/classes.txt: the class names in label order, one per line; OUT/pack.json
//              (kPackManifest): the manifest, written last (source, its ImageFolder
//              fingerprint, options, counts, shards, bad files).
//   bad files  a source file that cannot be read is left out (its position is not used)
//              and listed in PackResult::bad.
//   replacing  OUT must be absent, empty or an earlier pack output (holding pack.json):
//              its manifest is removed first and its "<prefix>-NNNNNN.tar" shards beyond
//              the new count are deleted, so no stale shard is read with the new ones.
//
// Errors: std::invalid_argument for neither shard_size nor shard_mib set or a negative
// one; DatasetError naming the path: IN not an ImageFolder tree, OUT holding something
// else, no source file readable; DatasetError naming the shard for a write that fails
// (the temporary file is removed).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "datasets/folder_scan.h"

namespace pipebench {

inline constexpr const char* kPackManifest = "pack.json";
inline constexpr const char* kPackClasses = "classes.txt";

struct PackOptions {
  size_t shard_size = 0;     ///< images per shard; 0 = no count limit
  double shard_mib = 0;      ///< MiB (2^20 bytes) of tar per shard; 0 = no size limit
  std::string prefix;        ///< shard name prefix; "" = IN's folder name
  uint64_t seed = 0;         ///< shuffle seed
  bool shuffle = true;       ///< false: ImageFolder order
};

struct PackedShard {
  std::string name;          ///< file name, e.g. photos-in-000000.tar
  size_t images = 0;
  uint64_t bytes = 0;        ///< file size
};

/// What a pack output declares about itself (kPackManifest, JSON).
struct PackManifest {
  std::string source;               ///< IN, absolute
  std::string source_fingerprint;   ///< ImageFolder(IN).fingerprint()
  size_t shard_size = 0;
  double shard_mib = 0;
  uint64_t seed = 0;
  bool shuffle = true;
  std::string prefix;
  size_t images = 0;                ///< packed
  size_t bad = 0;                   ///< left out
  uint64_t source_bytes = 0;        ///< of the images packed
  std::vector<PackedShard> shards;
};

struct PackResult {
  PackManifest manifest;
  std::vector<IgnoredEntry> bad;    ///< source files left out: path and reason
  /// Source sample index (ImageFolder order) of each packed position (key order).
  std::vector<size_t> order;
  std::filesystem::path out;
};

/// The packing order of n samples: 0..n-1, shuffled with seed when shuffle.
std::vector<size_t> pack_order(size_t n, uint64_t seed, bool shuffle);

/// Packs `in` into shards in `out` (see the file comment); one line per bad file to log.
PackResult pack_dataset(const std::filesystem::path& in, const std::filesystem::path& out,
                        const PackOptions& options, std::ostream& log);

/// The manifest of a pack output folder; nullopt when it has none or it does not parse.
std::optional<PackManifest> read_pack_manifest(const std::filesystem::path& out);

}  // namespace pipebench
