// ShardSet: indexing WebDataset tar shards into samples, pread of members, the byte cache
// and the fingerprint (shard_set.h).
#include "datasets/shard_set.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <utility>

#include "datasets/fnv.h"
#include "datasets/tar_format.h"

namespace pipebench {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxLabelBytes = 32;
constexpr int kOpenFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;  // a fifo named .tar must not block

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// A member path split by webdataset's base_plus_ext: key = up to the first '.' of the last
// component, extension = the rest, lower-cased. nullopt when the component has no '.' or
// starts with one (the regex ^((?:.*/|)[^.]+)[.]([^/]*)$ does not match).
std::optional<std::pair<std::string, std::string>> split_key(const std::string& name) {
  const size_t slash = name.rfind('/');
  const size_t start = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = name.find('.', start);
  if (dot == std::string::npos || dot == start) return std::nullopt;
  std::string ext = name.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return std::pair{name.substr(0, dot), ext};
}

bool is_image_extension(const std::string& ext) {
  return std::any_of(kImageExtensions.begin(), kImageExtensions.end(),
                     [&](std::string_view e) { return e.substr(1) == ext; });
}

// One problem with a shard or a sample: the DatasetError message, or an ignored() entry.
struct Problem {
  std::string shard, member;  // member "" for the shard as a whole
  std::string reason;         // includes the byte offset where there is one
  std::string message() const {
    return shard + ": " + (member.empty() ? "" : "member \"" + member + "\" ") + reason;
  }
  IgnoredEntry entry() const {
    return {member.empty() ? fs::path(shard) : fs::path(shard + ":" + member), reason};
  }
};

std::string at_byte(uint64_t header_offset) {
  return "(header at byte " + std::to_string(header_offset) + "): ";
}

// The label in a .cls member's text: decimal digits, surrounding whitespace allowed.
// Returns the label, or -1 with `why` set.
int64_t parse_label(std::string_view text, std::string& why) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  std::string shown;
  for (char c : text.substr(0, kMaxLabelBytes))
    shown += (c >= 0x20 && c < 0x7f) ? c : '?';
  const bool negative = !text.empty() && text.front() == '-';
  const std::string_view digits = negative ? text.substr(1) : text;
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(),
                                     [](char c) { return c >= '0' && c <= '9'; })) {
    why = "label \"" + shown + "\" is not a decimal integer";
    return -1;
  }
  if (negative) {
    why = "label \"" + shown + "\" is negative";
    return -1;
  }
  int64_t v = 0;
  for (char c : digits) {
    v = v * 10 + (c - '0');
    if (v > INT32_MAX) {
      why = "label \"" + shown + "\" is larger than 2^31 - 1";
      return -1;
    }
  }
  return v;
}

// Members of one sample (consecutive members with one key), by extension.
struct Group {
  std::string key;
  std::vector<std::pair<std::string, const TarMember*>> fields;
};

// What one group of members makes: a sample (image and label), or why not (`bad`, about
// the member `where`).
struct GroupCheck {
  const TarMember* image = nullptr;
  const TarMember* where = nullptr;
  int32_t label = -1;
  std::string bad;
};

// The image and .cls members of a group: exactly one of each, no extension twice.
GroupCheck find_fields(const Group& g) {
  GroupCheck c;
  const TarMember* cls = nullptr;
  c.where = g.fields.front().second;
  for (size_t a = 0; a < g.fields.size(); ++a) {
    const auto& [ext, m] = g.fields[a];
    c.where = m;
    for (size_t b = 0; b < a; ++b)
      if (g.fields[b].first == ext) {
        c.bad = "duplicate member: the sample \"" + g.key + "\" has two \"." + ext + "\" members";
        return c;
      }
    if (is_image_extension(ext) && c.image) {
      c.bad = "two image members in the sample \"" + g.key + "\" (\"" + c.image->name + "\" first)";
      return c;
    }
    if (is_image_extension(ext)) c.image = m;
    if (ext == "cls") cls = m;
  }
  if (!c.image && !cls) {
    c.where = g.fields.front().second;
    c.bad = "no image and no .cls member in the sample \"" + g.key + "\"";
  } else if (!cls) {
    c.where = c.image;
    c.bad = "image without its .cls label (sample \"" + g.key + "\")";
  } else if (!c.image) {
    c.where = cls;
    c.bad = ".cls label without an image member (sample \"" + g.key + "\")";
  } else {
    c.where = cls;
  }
  return c;
}

// find_fields, then the label read from the .cls member (a few bytes, pread).
GroupCheck check_group(const Group& g, int fd) {
  GroupCheck c = find_fields(g);
  if (!c.bad.empty()) return c;
  const TarMember* cls = c.where;
  if (cls->size > kMaxLabelBytes) {
    c.bad = "label member of " + std::to_string(cls->size) + " bytes (more than " +
            std::to_string(kMaxLabelBytes) + ")";
    return c;
  }
  std::string text(cls->size, '\0');
  if (pread_full(fd, reinterpret_cast<uint8_t*>(text.data()), text.size(), cls->data_offset) !=
      static_cast<int64_t>(text.size())) {
    c.bad = std::string("cannot read the label: ") + std::strerror(errno);
    return c;
  }
  const int64_t label = parse_label(text, c.bad);
  if (label >= 0) c.label = static_cast<int32_t>(label);
  return c;
}

size_t open_fd_budget() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return 512;
  return static_cast<size_t>(lim.rlim_cur / 2);
}

}  // namespace

std::vector<fs::path> list_shards(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw DatasetError(dir.string() + ": not a directory");
  std::vector<fs::path> out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    std::error_code e2;
    if (p.extension() == ".tar" && fs::is_regular_file(p, e2)) out.push_back(p);
  }
  if (ec) throw DatasetError(dir.string() + ": cannot list: " + ec.message());
  std::sort(out.begin(), out.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename().native() < b.filename().native(); });
  return out;
}

ShardSet::ShardSet(const fs::path& dir_or_shard, bool skip_bad) {
  std::error_code ec;
  if (!fs::is_directory(dir_or_shard, ec)) {
    if (!fs::exists(dir_or_shard, ec)) throw DatasetError(dir_or_shard.string() + ": does not exist");
    index({dir_or_shard}, skip_bad);
    return;
  }
  std::vector<fs::path> paths = list_shards(dir_or_shard);
  if (paths.empty()) throw DatasetError(dir_or_shard.string() + ": no *.tar shard in the directory");
  std::ifstream names(dir_or_shard / "classes.txt");
  for (std::string line; std::getline(names, line);) classes_.push_back(line);
  index(std::move(paths), skip_bad);
}

ShardSet::ShardSet(std::vector<fs::path> shards, bool skip_bad) {
  if (shards.empty()) throw DatasetError("ShardSet: no shard given");
  index(std::move(shards), skip_bad);
}

ShardSet::~ShardSet() {
  for (const Shard& s : shards_)
    if (s.fd >= 0) ::close(s.fd);
}

void ShardSet::index(std::vector<fs::path> paths, bool skip_bad) {
  for (const fs::path& p : paths) index_shard(p, skip_bad);
  if (samples_.empty()) {
    std::string first;
    for (const auto& e : ignored_)
      if (first.empty()) first = e.path.string() + ": " + e.reason;
    throw DatasetError((paths.size() == 1 ? paths[0].string() : paths[0].parent_path().string()) +
                       ": no valid sample in " + std::to_string(paths.size()) + " shard(s)" +
                       (first.empty() ? "" : " (first problem: " + first + ")"));
  }
  int32_t max_label = -1;
  for (const Sample& s : samples_) {
    max_label = std::max(max_label, s.label);
    sample_bytes_ += s.size;
  }
  num_classes_ = static_cast<size_t>(max_label) + 1;
}

void ShardSet::index_shard(const fs::path& path, bool skip_bad) {
  const std::string shard = path.string();
  std::vector<Problem> problems;
  const auto report = [&](Problem p) {
    if (!skip_bad) throw DatasetError(p.message());
    problems.push_back(std::move(p));
  };
  const auto finish = [&] {
    for (const Problem& p : problems) ignored_.push_back(p.entry());
  };
  Fd fd{::open(path.c_str(), kOpenFlags)};
  struct stat st {};
  if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0) {
    report({shard, "", std::string("cannot open: ") + std::strerror(errno)});
    return finish();
  }
  if (!S_ISREG(st.st_mode)) {
    report({shard, "", "not a regular file"});
    return finish();
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  const TarIndex tar = index_tar(fd.fd, file_size, shard);
  std::string cut_key;  // the key of a member the index could not complete
  if (!tar.error.empty()) {
    report({shard, "", tar.error.substr(shard.size() + 2)});  // "<where>: <reason>"
    if (const auto k = split_key(tar.error_member)) cut_key = k->first;
  }
  if (tar.members.empty() && tar.error.empty()) {
    report({shard, "", tar.headers == 0 ? "empty shard (no member; " + std::to_string(file_size) + " bytes)"
                                        : "no regular-file member among " +
                                              std::to_string(tar.headers) + " headers"});
    return finish();
  }
  // Group consecutive members by key (webdataset's group_by_keys).
  std::vector<Group> groups;
  for (const TarMember& m : tar.members) {
    const auto kx = split_key(m.name);
    if (!kx) {
      ignored_.push_back({fs::path(shard + ":" + m.name),
                          "no '.' in the file name: not part of a WebDataset sample"});
      continue;
    }
    if (groups.empty() || groups.back().key != kx->first) groups.push_back({kx->first, {}});
    groups.back().fields.emplace_back(kx->second, &m);
  }
  if (!cut_key.empty() && !groups.empty() && groups.back().key == cut_key) groups.pop_back();
  const uint32_t shard_index = static_cast<uint32_t>(shards_.size());
  const size_t first_sample = samples_.size();
  for (const Group& g : groups) {
    const GroupCheck c = check_group(g, fd.fd);
    if (!c.bad.empty()) {
      report({shard, c.where->name, at_byte(c.where->header_offset) + c.bad});
      continue;
    }
    samples_.push_back({shard_index, c.label, c.image->data_offset, c.image->size, c.image->name});
  }
  if (samples_.size() == first_sample) {
    if (problems.empty())
      report({shard, "", "no sample (an image member with its .cls label) among " +
                             std::to_string(tar.members.size()) + " members"});
    return finish();
  }
  finish();
  Shard s;
  s.path = path;
  s.size = file_size;
  s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (shards_.size() < open_fd_budget()) {  // beyond half the limit: opened per read
    s.fd = fd.fd;
    fd.fd = -1;
  }
  shards_.push_back(std::move(s));
}

std::string ShardSet::name(size_t i) const {
  const Sample& s = samples_.at(i);
  return shards_[s.shard].path.string() + ":" + s.member;
}

void ShardSet::read_at(const Shard& shard, const Sample& s, uint8_t* out) const {
  Fd own;
  int fd = shard.fd;
  if (fd < 0) {
    own.fd = ::open(shard.path.c_str(), kOpenFlags);
    if (own.fd < 0)
      throw DatasetError(shard.path.string() + ":" + s.member + ": cannot open the shard: " +
                         std::strerror(errno));
    fd = own.fd;
  }
  const int64_t got = pread_full(fd, out, s.size, s.offset);
  if (got < 0)
    throw DatasetError(shard.path.string() + ":" + s.member + ": read failed at byte " +
                       std::to_string(s.offset) + ": " + std::strerror(errno));
  if (static_cast<uint64_t>(got) != s.size)
    throw DatasetError(shard.path.string() + ":" + s.member + ": the shard shrank (expected " +
                       std::to_string(s.size) + " bytes at byte " + std::to_string(s.offset) +
                       ", got " + std::to_string(got) + ")");
}

std::span<const uint8_t> ShardSet::bytes(size_t i, std::vector<uint8_t>& buffer) const {
  const Sample& s = samples_.at(i);
  if (!cache_.empty()) {
    if (!cache_errors_[i].empty()) throw DatasetError(cache_errors_[i]);
    return cache_[i];
  }
  buffer.resize(s.size);
  read_at(shards_[s.shard], s, buffer.data());
  return {buffer.data(), buffer.size()};
}

void ShardSet::cache_in_memory() {
  if (!cache_.empty()) return;
  std::vector<std::vector<uint8_t>> cache(samples_.size());
  std::vector<std::string> errors(samples_.size());
  for (size_t i = 0; i < samples_.size(); ++i) {
    try {
      cache[i].resize(samples_[i].size);
      read_at(shards_[samples_[i].shard], samples_[i], cache[i].data());
    } catch (const DatasetError& e) {
      errors[i] = e.what();
    }
  }
  cache_errors_ = std::move(errors);
  cache_ = std::move(cache);
}

std::vector<size_t> ShardSet::group_starts() const {
  std::vector<size_t> starts;
  for (size_t i = 0; i < samples_.size(); ++i)
    if (i == 0 || samples_[i].shard != samples_[i - 1].shard) starts.push_back(i);
  return starts;
}

uint64_t ShardSet::shard_bytes() const {
  uint64_t total = 0;
  for (const Shard& s : shards_) total += s.size;
  return total;
}

std::string ShardSet::fingerprint() const {
  Fnv1a h;
  for (const Shard& s : shards_) {
    h.add_name(s.path.filename().string());
    h.add_u64(s.size);
    h.add_u64(static_cast<uint64_t>(s.mtime_ns));
  }
  return h.hex();
}

}  // namespace pipebench
