// Reading whole files, and dropping a file's pages from the page cache (a "cold" read
// without root: posix_fadvise(POSIX_FADV_DONTNEED), which evicts clean pages).
// Errors: DatasetError (image_folder.h) naming the path and strerror(errno).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace pipebench {

/// Reads the whole file into out (resized to the file size; capacity kept). Returns bytes.
size_t read_file(const std::filesystem::path& path, std::vector<uint8_t>& out);

/// The same with the size the caller expects (a folder scan's): one system call fewer
/// (open, read, close; no fstat) when the file still has that size; any other outcome (a
/// new size, a directory or fifo in its place, an error) goes through the read above,
/// whose result and errors it then has, as does an expected size of 0.
size_t read_file(const std::filesystem::path& path, uint64_t expected, std::vector<uint8_t>& out);

/// Reads at most n bytes from the start of the file into out; returns how many (fewer
/// when the file is shorter). Throws DatasetError naming the path.
size_t read_head(const std::filesystem::path& path, uint8_t* out, size_t n);

/// Asks the kernel to drop the file's cached pages (fdatasync first when `sync`: dirty
/// pages cannot be dropped; a dataset being read has none, so the loader's per-read drops
/// skip it). Throws on failure to open; an advisory call that the kernel ignores is not an
/// error (page_cache_resident() tells).
void drop_page_cache(const std::filesystem::path& path, bool sync = true);

/// Share of the file's pages in the page cache, in [0, 1] (mmap + mincore(2)); 0 for an
/// empty file. Throws DatasetError naming the path when it cannot be opened or mapped.
double page_cache_resident(const std::filesystem::path& path);

/// A folder's own name, whatever trailing slash or "." the path carries ("data/photos-in/."
/// -> "photos-in"); "dataset" when it has none (the root). Names cache folders and shard
/// prefixes. Reads nothing but the path (and symlinks to resolve it).
std::string folder_name(const std::filesystem::path& dir);

/// Writes bytes to path, creating parent directories.
void write_file(const std::filesystem::path& path, const uint8_t* data, size_t size);

/// Replaces path with `text`, whole or not at all: written to a temporary file beside it
/// (".NAME.tmp-PID"), fsynced, closed and renamed over it, so a full disk or an unwritable
/// folder leaves the previous file (or none) and never a truncated one. A path that exists
/// and is not a regular file (/dev/stdout, /dev/full, a pipe) is written in place, and a
/// short write or a failed close is still an error. Throws DatasetError naming the path
/// and strerror(errno); the temporary file is removed.
void replace_file(const std::filesystem::path& path, std::string_view text);

}  // namespace pipebench
