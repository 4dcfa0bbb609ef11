// Tar header parsing (ustar, pax 'x'/'g', GNU 'L'/'K') and ustar writing (tar_format.h).
#include "datasets/tar_format.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace pipebench {
namespace {

// Field offsets and lengths of the ustar header (POSIX.1-1988, pax "ustar Interchange
// Format").
constexpr size_t kNameOff = 0, kNameLen = 100;
constexpr size_t kModeOff = 100, kUidOff = 108, kGidOff = 116, kIdLen = 8;
constexpr size_t kSizeOff = 124, kMtimeOff = 136, kNumLen = 12;
constexpr size_t kChksumOff = 148, kChksumLen = 8;
constexpr size_t kTypeOff = 156;
constexpr size_t kMagicOff = 257, kVersionOff = 263;
constexpr size_t kPrefixOff = 345, kPrefixLen = 155;

uint64_t round_up_block(uint64_t n) { return (n + kTarBlock - 1) / kTarBlock * kTarBlock; }

std::string field_string(const uint8_t* h, size_t off, size_t len) {
  const char* p = reinterpret_cast<const char*>(h + off);
  return std::string(p, strnlen(p, len));
}

// A numeric field: octal text (leading spaces/NULs, terminated by NUL or space), or GNU
// base-256 (first byte's high bit set, big-endian). nullopt when malformed.
std::optional<uint64_t> parse_number(const uint8_t* h, size_t off, size_t len) {
  const uint8_t* p = h + off;
  if (p[0] & 0x80) {
    if (p[0] & 0x40) return std::nullopt;  // negative
    uint64_t v = p[0] & 0x3f;
    for (size_t i = 1; i < len; ++i) {
      if (v >> 56) return std::nullopt;
      v = (v << 8) | p[i];
    }
    return v;
  }
  size_t i = 0;
  while (i < len && (p[i] == ' ' || p[i] == 0)) ++i;
  uint64_t v = 0;
  bool digits = false;
  for (; i < len && p[i] >= '0' && p[i] <= '7'; ++i) {
    if (v >> 60) return std::nullopt;
    v = v * 8 + (p[i] - '0');
    digits = true;
  }
  for (; i < len; ++i)
    if (p[i] != ' ' && p[i] != 0) return std::nullopt;
  if (!digits) return 0;  // an all-blank field reads as 0, as tarfile's nti does
  return v;
}

bool is_zero_block(const uint8_t* h) {
  return std::all_of(h, h + kTarBlock, [](uint8_t b) { return b == 0; });
}

bool checksum_ok(const uint8_t* h) {
  const auto stored = parse_number(h, kChksumOff, kChksumLen);
  if (!stored) return false;
  int64_t signed_sum = 0;
  for (size_t i = 0; i < kTarBlock; ++i) {
    const bool in_field = i >= kChksumOff && i < kChksumOff + kChksumLen;
    signed_sum += in_field ? ' ' : static_cast<int8_t>(h[i]);
  }
  return *stored == ustar_checksum(h) || static_cast<int64_t>(*stored) == signed_sum;
}

// Where an error is: "member \"NAME\" (header at byte N)", or for a header that cannot be
// read, "header at byte N (after member \"PREV\")".
std::string at_member(const std::string& name, uint64_t offset) {
  return "member \"" + name + "\" (header at byte " + std::to_string(offset) + ")";
}
std::string at_header(uint64_t offset, const std::string& previous) {
  return "header at byte " + std::to_string(offset) +
         (previous.empty() ? std::string() : " (after member \"" + previous + "\")");
}

// Parses pax records "LEN key=value\n" (POSIX.1-2001 pax "extended header"); sets path and
// size when present. Returns "" or the reason it is malformed.
std::string parse_pax(std::string_view data, std::optional<std::string>& path,
                      std::optional<uint64_t>& size) {
  size_t pos = 0;
  while (pos < data.size()) {
    if (data[pos] == 0) break;  // NUL padding after the last record
    size_t i = pos, len = 0;
    while (i < data.size() && data[i] >= '0' && data[i] <= '9' && len < data.size() + 1)
      len = len * 10 + static_cast<size_t>(data[i++] - '0');
    if (i == pos || i >= data.size() || data[i] != ' ' || len <= i - pos + 1 ||
        pos + len > data.size() || data[pos + len - 1] != '\n')
      return "malformed pax record at record byte " + std::to_string(pos);
    const std::string_view record = data.substr(i + 1, pos + len - 1 - (i + 1));
    const size_t eq = record.find('=');
    if (eq == std::string_view::npos)
      return "malformed pax record at record byte " + std::to_string(pos) + " (no '=')";
    const std::string_view key = record.substr(0, eq), value = record.substr(eq + 1);
    if (key == "path") path = std::string(value);
    if (key == "size") {
      uint64_t v = 0;
      if (value.empty() || value.size() > 19 ||
          !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return "pax size \"" + std::string(value) + "\" is not a decimal number";
      for (char c : value) v = v * 10 + static_cast<uint64_t>(c - '0');
      size = v;
    }
    pos += len;
  }
  return "";
}

// The regular-file types, the types whose size field tarfile ignores, and the extension
// headers.
bool is_regular_type(char t) { return t == '0' || t == 0 || t == '7'; }
bool is_sizeless_type(char t) { return t >= '1' && t <= '6'; }

// The index loop's state between headers: pending extension values for the next member.
struct Pending {
  std::optional<std::string> path;  // pax 'x' path or GNU 'L' long name
  std::optional<uint64_t> size;     // pax 'x' size
  bool any = false;
};

}  // namespace

int64_t pread_full(int fd, uint8_t* out, size_t n, uint64_t offset) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, out + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return static_cast<int64_t>(done);
}

uint32_t ustar_checksum(const uint8_t* h) {
  uint32_t sum = 0;
  for (size_t i = 0; i < kTarBlock; ++i)
    sum += (i >= kChksumOff && i < kChksumOff + kChksumLen) ? ' ' : h[i];
  return sum;
}

TarIndex index_tar(int fd, uint64_t file_size, const std::string& archive) {
  TarIndex r;
  uint8_t h[kTarBlock];
  uint64_t off = 0;
  std::string previous;  // last member's name, for messages
  Pending pending;
  bool ended = false;  // the end-of-archive zero block was seen
  const auto fail = [&](const std::string& where, const std::string& reason) {
    r.error = archive + ": " + where + ": " + reason;
    return r;
  };
  while (off < file_size) {
    if (file_size - off < kTarBlock)
      return fail(at_header(off, previous),
                  "truncated tar: the file ends " + std::to_string(file_size - off) +
                      " bytes into a 512-byte header");
    if (pread_full(fd, h, kTarBlock, off) != static_cast<int64_t>(kTarBlock))
      return fail(at_header(off, previous), std::string("read failed: ") + std::strerror(errno));
    if (is_zero_block(h)) {  // end of archive (tarfile stops at the first zero block)
      ended = true;
      break;
    }
    ++r.headers;
    if (!checksum_ok(h))
      return fail(at_header(off, previous),
                  off == 0 ? "not a tar file (header checksum mismatch)"
                           : "corrupt tar header (checksum mismatch)");
    const char type = static_cast<char>(h[kTypeOff]);
    std::string name = field_string(h, kNameOff, kNameLen);
    if (std::memcmp(h + kMagicOff, "ustar\0", 6) == 0 && h[kPrefixOff] != 0)
      name = field_string(h, kPrefixOff, kPrefixLen) + "/" + name;
    const auto size_field = parse_number(h, kSizeOff, kNumLen);
    if (!size_field) return fail(at_member(name, off), "corrupt tar header (size field is not a number)");
    uint64_t size = is_sizeless_type(type) ? 0 : *size_field;
    if (pending.size && is_regular_type(type)) size = *pending.size;
    const uint64_t data = off + kTarBlock;
    if (size > file_size - data) {
      r.error_member = pending.path.value_or(name);
      return fail(at_member(r.error_member, off),
                  "truncated tar: the member's " + std::to_string(size) + " data bytes run past " +
                      "the end of the file (" + std::to_string(file_size - data) + " left)");
    }
    const uint64_t next = data + round_up_block(size);
    if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
      if (size > kMaxExtendedHeader)
        return fail(at_member(name, off), "extended header of " + std::to_string(size) +
                                              " bytes (more than " +
                                              std::to_string(kMaxExtendedHeader) + ")");
      std::string text(size, '\0');
      if (pread_full(fd, reinterpret_cast<uint8_t*>(text.data()), size, data) !=
          static_cast<int64_t>(size))
        return fail(at_member(name, off), std::string("read failed: ") + std::strerror(errno));
      if (type == 'x') {
        const std::string bad = parse_pax(text, pending.path, pending.size);
        if (!bad.empty()) return fail(at_member(name, off), bad);
      } else if (type == 'L') {
        pending.path = std::string(text.c_str());  // NUL-terminated
      }
      pending.any = pending.any || type != 'g';  // a global header applies to no one member
      off = next;
      continue;
    }
    if (pending.path) name = *pending.path;
    pending = Pending{};
    const bool directory = type == 0 && !name.empty() && name.back() == '/';
    if (is_regular_type(type) && !directory) r.members.push_back({name, off, data, size});
    previous = name;
    off = std::min(next, file_size);  // the last member's padding may be cut: tarfile reads it
  }
  if (pending.any)
    return fail(at_header(off, previous), "truncated tar: an extended header has no member after it");
  if (!ended && r.headers > 0)  // cut on a block boundary: POSIX ends an archive with zero blocks
    return fail(at_header(off, previous),
                "truncated tar: the file ends without the end-of-archive zero blocks");
  return r;
}

void append_ustar_member(std::string& out, std::string_view name, std::string_view data,
                         int64_t mtime_seconds, unsigned mode) {
  if (name.empty() || name.size() > kNameLen)
    throw std::invalid_argument("tar member name \"" + std::string(name) +
                                "\" must be 1 to 100 bytes");
  if (data.size() >= (uint64_t{1} << 33))  // 11 octal digits
    throw std::invalid_argument("tar member \"" + std::string(name) + "\" of " +
                                std::to_string(data.size()) + " bytes: 8 GiB or more");
  uint8_t h[kTarBlock] = {};
  std::memcpy(h + kNameOff, name.data(), name.size());
  // len - 1 zero-padded octal digits and a NUL (callers keep v below 8^(len - 1)).
  const auto octal = [&h](size_t off, size_t len, uint64_t v) {
    for (size_t i = len - 1; i-- > 0; v >>= 3) h[off + i] = static_cast<uint8_t>('0' + (v & 7));
    h[off + len - 1] = 0;
  };
  octal(kModeOff, kIdLen, mode);
  octal(kUidOff, kIdLen, 0);
  octal(kGidOff, kIdLen, 0);
  octal(kSizeOff, kNumLen, data.size());
  octal(kMtimeOff, kNumLen,
        std::min<uint64_t>(static_cast<uint64_t>(std::max<int64_t>(0, mtime_seconds)),
                           (uint64_t{1} << 33) - 1));
  h[kTypeOff] = '0';
  std::memcpy(h + kMagicOff, "ustar\0", 6);
  std::memcpy(h + kVersionOff, "00", 2);
  // chksum: six octal digits, NUL, space (the form POSIX and GNU tar write).
  octal(kChksumOff, 7, ustar_checksum(h));
  h[kChksumOff + 7] = ' ';
  out.append(reinterpret_cast<const char*>(h), kTarBlock);
  out.append(data);
  out.append(round_up_block(data.size()) - data.size(), '\0');
}

void append_end_of_archive(std::string& out) { out.append(2 * kTarBlock, '\0'); }

}  // namespace pipebench
