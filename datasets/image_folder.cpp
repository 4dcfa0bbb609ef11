// ImageFolder scanning (torchvision's layout), byte reads, the in-memory cache and the
// FNV-1a fingerprint.
#include "datasets/image_folder.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <system_error>

#include "datasets/file_io.h"

namespace pipebench {
namespace {

namespace fs = std::filesystem;

bool is_jpeg_name(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".jpg" || ext == ".jpeg";
}

// FNV-1a 64-bit (Fowler, Noll, Vo): offset basis 14695981039346656037, prime 1099511628211.
constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

void fnv(uint64_t& h, const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= kFnvPrime;
  }
}

}  // namespace

ImageFolder::ImageFolder(const std::filesystem::path& root) : root_(root) {
  std::error_code ec;
  if (!fs::exists(root_, ec)) throw DatasetError(root_.string() + ": dataset root does not exist");
  if (!fs::is_directory(root_, ec))
    throw DatasetError(root_.string() + ": dataset root is not a directory");

  fs::directory_iterator it(root_, ec);
  if (ec) throw DatasetError(root_.string() + ": cannot list directory: " + ec.message());
  for (const auto& entry : it) {
    std::error_code e2;
    if (entry.is_directory(e2)) classes_.push_back(entry.path().filename().string());
  }
  std::sort(classes_.begin(), classes_.end());
  if (classes_.empty())
    throw DatasetError(root_.string() +
                       ": no class directory (expected root/<class>/<image>.jpg)");

  for (size_t label = 0; label < classes_.size(); ++label) {
    const fs::path dir = root_ / classes_[label];
    std::vector<SampleEntry> in_class;
    fs::directory_iterator files(dir, ec);
    if (ec) throw DatasetError(dir.string() + ": cannot list directory: " + ec.message());
    for (const auto& entry : files) {
      std::error_code e2;
      if (!entry.is_regular_file(e2) || !is_jpeg_name(entry.path())) continue;  // follows links
      const auto size = fs::file_size(entry.path(), e2);
      if (e2) throw DatasetError(entry.path().string() + ": cannot stat: " + e2.message());
      in_class.push_back({entry.path(), static_cast<int32_t>(label), size});
    }
    std::sort(in_class.begin(), in_class.end(), [](const SampleEntry& a, const SampleEntry& b) {
      return a.path.filename().string() < b.path.filename().string();
    });
    samples_.insert(samples_.end(), in_class.begin(), in_class.end());
  }
  if (samples_.empty())
    throw DatasetError(root_.string() + ": no .jpg/.jpeg image in any of " +
                       std::to_string(classes_.size()) + " class directories");
}

uint64_t ImageFolder::total_bytes() const {
  uint64_t total = 0;
  for (const auto& s : samples_) total += s.size_bytes;
  return total;
}

void ImageFolder::read(size_t i, std::vector<uint8_t>& out) const {
  const SampleEntry& s = sample(i);
  if (is_cached()) {
    const auto& bytes = cache_[i];
    out.assign(bytes.begin(), bytes.end());
    return;
  }
  read_file(s.path, out);
}

std::span<const uint8_t> ImageFolder::cached(size_t i) const {
  if (!is_cached())
    throw DatasetError(root_.string() + ": cached() called before cache_in_memory()");
  if (i >= cache_.size())
    throw DatasetError(root_.string() + ": sample index " + std::to_string(i) +
                       " out of range [0, " + std::to_string(cache_.size()) + ")");
  return cache_[i];
}

void ImageFolder::cache_in_memory() {
  if (is_cached()) return;
  std::vector<std::vector<uint8_t>> cache(samples_.size());
  for (size_t i = 0; i < samples_.size(); ++i) read_file(samples_[i].path, cache[i]);
  cache_ = std::move(cache);
}

std::string ImageFolder::fingerprint(bool contents) const {
  uint64_t h = kFnvOffset;
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < samples_.size(); ++i) {
    const auto& s = samples_[i];
    const std::string rel = s.path.lexically_relative(root_).generic_string();
    fnv(h, reinterpret_cast<const uint8_t*>(rel.data()), rel.size());
    const uint8_t sep = 0;
    fnv(h, &sep, 1);
    uint8_t size_le[8];
    for (int b = 0; b < 8; ++b) size_le[b] = static_cast<uint8_t>(s.size_bytes >> (8 * b));
    fnv(h, size_le, 8);
    if (contents) {
      if (is_cached()) {
        fnv(h, cache_[i].data(), cache_[i].size());
      } else {
        read_file(s.path, bytes);
        fnv(h, bytes.data(), bytes.size());
      }
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace pipebench
