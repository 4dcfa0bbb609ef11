// Opening a dataset by its layout on storage: a folder of WebDataset tar shards becomes a
// ShardSet (shard_set.h), anything else an ImageFolder (image_folder.h); both are
// SampleSources (sample_source.h), so the loader and the benchmark take either.
//
//   shards   a directory holding at least one "*.tar" file and no sub-directory (an
//            ImageFolder's classes are sub-directories), or a single ".tar" file;
//   files    any other directory (ImageFolder's rules, folder_scan.h).
//
// Errors: DatasetError naming the path: missing; a directory that is neither (no *.tar
// and no class directory: "neither an ImageFolder tree ... nor a shard set"); and what
// ShardSet or ImageFolder throw.
#pragma once

#include <filesystem>
#include <memory>

#include "datasets/sample_source.h"

namespace pipebench {

/// True when path is a shard set by the rule above (reads no file's contents).
bool is_shard_dir(const std::filesystem::path& path);

/// The dataset at path, as a ShardSet (skip_bad: bad shards and samples listed in its
/// ignored() instead of thrown) or an ImageFolder (skip_bad does not apply: its odd
/// entries are always listed, and unreadable files fail when read).
std::unique_ptr<SampleSource> open_dataset(const std::filesystem::path& path, bool skip_bad);

}  // namespace pipebench
