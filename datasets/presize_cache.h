// The presized copy a benchmark run measures (issue 8, candidate 3): made once into a
// cache folder next to the data, reused while it still describes the same dataset.
//
//   folder   <data>/../.pipebench-cache/<data's folder name>-presized-<N>-q<Q>[-<tag>]/
//            (data/ is git-ignored; photos-in's whole copy is
//            data/.pipebench-cache/photos-in-presized-256-q90; the tag names a selection,
//            e.g. round256 for the 256 images of a benchmark round),
//            or, when that folder cannot be created or written (a read-only dataset),
//            <fallback_root>/<the same name> (pipebench passes the folder of its own binary,
//            build/<preset>/bench/.pipebench-cache).
//   reused   when its manifest (presize.h) names the dataset's current metadata fingerprint
//            (ImageFolder::fingerprint(): relative paths, sizes, modification times), N, Q
//            and the selection (PresizeOptions::selection); otherwise it is made again
//            (presize_dataset replaces an earlier output).
//
// Errors: what presize_dataset throws (presize.h), and DatasetError when neither folder
// can be written.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "datasets/presize.h"

namespace pipebench {

struct CachedPresize {
  std::filesystem::path dir;   ///< the copy's root (an ImageFolder tree)
  bool reused = false;         ///< found valid in the cache
  double seconds = 0;          ///< wall time spent making it (0 when reused)
  PresizeManifest manifest;
};

/// <data>/../.pipebench-cache when it can be created and written, else fallback_root.
std::filesystem::path presize_cache_root(const std::filesystem::path& data,
                                         const std::filesystem::path& fallback_root);

/// The cached copy of `data` (whose ImageFolder fingerprint() is `fingerprint`) presized
/// with `options`, made when missing or stale. `tag` ends the folder's name (empty for a
/// whole copy). One line to `log` saying which.
CachedPresize cached_presize(const std::filesystem::path& data, const std::string& fingerprint,
                             const PresizeOptions& options,
                             const std::filesystem::path& fallback_root, std::ostream& log,
                             const std::string& tag = "");

}  // namespace pipebench
