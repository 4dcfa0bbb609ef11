// FNV-1a 64-bit (Fowler, Noll, Vo; offset basis 14695981039346656037, prime
// 1099511628211): the cheap, stable hash behind the datasets' fingerprints
// (ImageFolder::fingerprint, ShardSet::fingerprint) and photos' duplicate filter. Not
// cryptographic: it tells a changed dataset from an unchanged one, not a forged one.
// Integers are hashed as 8 little-endian bytes, so a fingerprint is the same on every host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace pipebench {

class Fnv1a {
 public:
  /// Hashes n bytes.
  void add(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < n; ++i) {
      h_ ^= p[i];
      h_ *= 1099511628211ull;
    }
  }
  /// An integer as 8 little-endian bytes.
  void add_u64(uint64_t v) {
    uint8_t le[8];
    for (int b = 0; b < 8; ++b) le[b] = static_cast<uint8_t>(v >> (8 * b));
    add(le, 8);
  }
  /// A name, then a NUL (no file name holds one), so "ab" + "c" != "a" + "bc".
  void add_name(std::string_view name) {
    add(name.data(), name.size());
    const uint8_t sep = 0;
    add(&sep, 1);
  }
  uint64_t value() const { return h_; }
  /// The value as 16 lower-case hex digits.
  std::string hex() const {
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h_));
    return out;
  }

 private:
  uint64_t h_ = 14695981039346656037ull;
};

}  // namespace pipebench
