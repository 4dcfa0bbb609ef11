// cached_pack: find or make the sharded copy in the cache folder (pack_cache.h).
#include "datasets/pack_cache.h"

#include <chrono>
#include <sstream>
#include <system_error>

#include "datasets/file_io.h"
#include "datasets/presize_cache.h"

namespace pipebench {
namespace {

namespace fs = std::filesystem;

// The manifest matches and every shard it lists is there, at its recorded size.
bool matches(const PackManifest& m, const fs::path& dir, const std::string& fingerprint,
             size_t shard_size, uint64_t seed) {
  if (m.source_fingerprint != fingerprint || m.shard_size != shard_size || m.shard_mib != 0 ||
      m.seed != seed || !m.shuffle || m.shards.empty())
    return false;
  for (const auto& s : m.shards) {
    std::error_code ec;
    if (fs::file_size(dir / s.name, ec) != s.bytes || ec) return false;
  }
  return true;
}

}  // namespace

CachedPack cached_pack(const fs::path& data, const std::string& fingerprint, size_t shard_size,
                       uint64_t seed, const fs::path& fallback_root, std::ostream& log) {
  CachedPack c;
  c.dir = presize_cache_root(data, fallback_root) /
          (folder_name(data) + "-shards-" + std::to_string(shard_size));
  const auto valid = [&] {
    const auto m = read_pack_manifest(c.dir);
    if (!m || !matches(*m, c.dir, fingerprint, shard_size, seed)) return false;
    c.reused = true;
    c.manifest = *m;
    log << "sharded copy: reusing " << c.dir.string() << " (fingerprint " << fingerprint << ")\n";
    return true;
  };
  if (valid()) return c;
  PackOptions o;
  o.shard_size = shard_size;
  o.seed = seed;
  o.prefix = folder_name(data);
  const auto t0 = std::chrono::steady_clock::now();
  std::ostringstream quiet;  // bad files: the run's own cases report them on the original
  const PackResult r = pack_dataset(data, c.dir, o, quiet);
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.manifest = r.manifest;
  log << "sharded copy: made " << c.dir.string() << " in " << c.seconds << " s ("
      << r.manifest.images << " images in " << r.manifest.shards.size() << " shards of "
      << shard_size << ", " << r.manifest.bad << " bad file(s) left out)\n";
  return c;
}

}  // namespace pipebench
