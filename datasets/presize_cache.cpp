// cached_presize: find or make the presized copy in the cache folder (presize_cache.h).
#include "datasets/presize_cache.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <system_error>

#include "datasets/file_io.h"
#include "datasets/folder_scan.h"

namespace pipebench {
namespace {

namespace fs = std::filesystem;

// True when `dir` exists or can be made, and a file can be created in it.
bool writable_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec)) return false;
  const fs::path probe = dir / (".probe-" + std::to_string(::getpid()));
  const bool ok = static_cast<bool>(std::ofstream(probe));
  fs::remove(probe, ec);
  return ok;
}

}  // namespace

fs::path presize_cache_root(const fs::path& data, const fs::path& fallback_root) {
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(data, ec), ec);
  if (abs.filename().empty()) abs = abs.parent_path();
  const fs::path next_to_data = abs.parent_path() / ".pipebench-cache";
  if (writable_dir(next_to_data)) return next_to_data;
  if (writable_dir(fallback_root)) return fallback_root;
  throw DatasetError(data.string() + ": no writable cache folder for a derived copy (presized or packed; tried " +
                     next_to_data.string() + " and " + fallback_root.string() + ")");
}

CachedPresize cached_presize(const fs::path& data, const std::string& fingerprint,
                             const PresizeOptions& options, const fs::path& fallback_root,
                             std::ostream& log, const std::string& tag) {
  CachedPresize c;
  c.dir = presize_cache_root(data, fallback_root) /
          (folder_name(data) + "-presized-" + std::to_string(options.shorter_side) + "-q" +
           std::to_string(options.quality) +
           (options.min_pixels > 0 ? "-above" + std::to_string(options.min_pixels) + "px" : "") +
           (tag.empty() ? "" : "-" + tag));
  const std::string selection = options.only.empty() ? "all" : options.selection;
  const auto valid = [&] {
    const auto m = read_presize_manifest(c.dir);
    if (!m || m->source_fingerprint != fingerprint || m->shorter_side != options.shorter_side ||
        m->quality != options.quality || m->selection != selection ||
        m->min_pixels != options.min_pixels)
      return false;
    c.reused = true;
    c.manifest = *m;
    log << "presized copy: reusing " << c.dir.string() << " (fingerprint " << fingerprint << ")\n";
    return true;
  };
  if (valid()) return c;
  const auto t0 = std::chrono::steady_clock::now();
  std::ostringstream quiet;  // bad files: the run's own cases report them on the original
  PresizeResult r;
  try {
    r = presize_dataset(data, c.dir, options, quiet);
  } catch (const std::runtime_error&) {
    if (valid()) return c;  // another run published the same copy first (its rename won)
    throw;
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.manifest = r.manifest;
  log << "presized copy: made " << c.dir.string() << " in " << c.seconds << " s ("
      << r.manifest.images << " images, shorter side " << options.shorter_side << " px, quality "
      << options.quality << ", " << r.manifest.bad << " bad file(s) left out)\n";
  return c;
}

}  // namespace pipebench
