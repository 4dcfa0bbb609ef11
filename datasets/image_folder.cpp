// ImageFolder: the scan (folder_scan.cpp), byte reads, the in-memory cache, format
// sniffing and the FNV-1a fingerprints.
#include "datasets/image_folder.h"

#include <algorithm>
#include <cstdio>

#include "datasets/file_io.h"
#include "datasets/fnv.h"

namespace pipebench {
namespace {

namespace fs = std::filesystem;

// The relative path as a name (fnv.h: then a NUL).
void add_relative(Fnv1a& h, const fs::path& path, const fs::path& root) {
  h.add_name(path.lexically_relative(root).generic_string());
}

std::string extension_list() {
  std::string s;
  for (const auto ext : kImageExtensions) {
    if (!s.empty()) s += ' ';
    s += ext;
  }
  return s;
}

}  // namespace

ImageFolder::ImageFolder(const std::filesystem::path& root) : root_(root) {
  FolderScan scan = scan_image_folder(root_);
  if (scan.class_directories == 0)
    throw DatasetError(root_.string() +
                       ": no class directory (expected root/<class>/<image>.jpg)");
  if (scan.samples.empty())
    throw DatasetError(root_.string() + ": no image file (" + extension_list() +
                       ") in any of " + std::to_string(scan.class_directories) +
                       " class directories");
  classes_ = std::move(scan.classes);
  samples_ = std::move(scan.samples);
  ignored_ = std::move(scan.ignored);
}

uint64_t ImageFolder::total_bytes() const {
  uint64_t total = 0;
  for (const auto& s : samples_) total += s.size_bytes;
  return total;
}

void ImageFolder::read(size_t i, std::vector<uint8_t>& out) const {
  const SampleEntry& s = sample(i);
  if (is_cached()) {
    const auto bytes = cached(i);
    out.assign(bytes.begin(), bytes.end());
    return;
  }
  read_file(s.path, s.size_bytes, out);  // the scan's size: no fstat when it still holds
}

std::span<const uint8_t> ImageFolder::cached(size_t i) const {
  if (!is_cached())
    throw DatasetError(root_.string() + ": cached() called before cache_in_memory()");
  if (i >= cache_.size())
    throw DatasetError(root_.string() + ": sample index " + std::to_string(i) +
                       " out of range [0, " + std::to_string(cache_.size()) + ")");
  if (!cache_errors_[i].empty()) throw DatasetError(cache_errors_[i]);
  return cache_[i];
}

void ImageFolder::cache_in_memory() {
  if (is_cached()) return;
  std::vector<std::vector<uint8_t>> cache(samples_.size());
  std::vector<std::string> errors(samples_.size());
  for (size_t i = 0; i < samples_.size(); ++i) {
    try {
      read_file(samples_[i].path, cache[i]);
    } catch (const DatasetError& e) {
      errors[i] = e.what();
    }
  }
  cache_errors_ = std::move(errors);
  cache_ = std::move(cache);
}

ImageFormat ImageFolder::format(size_t i) const {
  if (is_cached()) return sniff_format(cached(i));
  uint8_t head[kSniffBytes];
  const size_t n = read_head(sample(i).path, head, sizeof head);
  return sniff_format(std::span<const uint8_t>(head, n));
}

std::map<std::string, size_t> ImageFolder::formats() const {
  std::map<std::string, size_t> counts;
  for (size_t i = 0; i < samples_.size(); ++i) {
    try {
      ++counts[format_name(format(i))];
    } catch (const DatasetError&) {
      ++counts["unreadable"];
    }
  }
  return counts;
}

std::string ImageFolder::fingerprint() const {
  Fnv1a h;
  for (const auto& s : samples_) {
    add_relative(h, s.path, root_);
    h.add_u64(s.size_bytes);
    h.add_u64(static_cast<uint64_t>(s.mtime_ns));
  }
  return h.hex();
}

std::string ImageFolder::content_fingerprint() const {
  Fnv1a h;
  std::vector<uint8_t> buffer;
  for (size_t i = 0; i < samples_.size(); ++i) {
    add_relative(h, samples_[i].path, root_);
    const std::span<const uint8_t> b = bytes(i, buffer);
    h.add_u64(b.size());
    h.add(b.data(), b.size());
  }
  return h.hex();
}

}  // namespace pipebench
