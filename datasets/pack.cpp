// pack_dataset: an ImageFolder tree into WebDataset tar shards, each written whole or not
// at all, the manifest last (pack.h).
#include "datasets/pack.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "datasets/file_io.h"
#include "datasets/image_folder.h"
#include "datasets/tar_format.h"

namespace pipebench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A uniform draw in [0, range) without modulo bias (rejection of the short last interval).
uint64_t bounded(std::mt19937_64& rng, uint64_t range) {
  const uint64_t threshold = (0 - range) % range;  // 2^64 mod range
  for (;;) {
    const uint64_t r = rng();
    if (r >= threshold) return r % range;
  }
}

[[noreturn]] void fail(const fs::path& path, const std::string& what, int err) {
  throw DatasetError(path.string() + ": " + what + ": " + std::strerror(err));
}

// One shard being written: to ".<name>.tmp-<pid>" beside it, renamed by commit(); removed
// when destroyed uncommitted (an error part way).
class ShardWriter {
 public:
  explicit ShardWriter(fs::path path) : path_(std::move(path)) {
    std::string tmp_name = ".";  // built in steps: GCC 12 warns (-Wrestrict) on "." + string
    tmp_name += path_.filename().string();
    tmp_name += ".tmp-";
    tmp_name += std::to_string(::getpid());
    tmp_ = path_.parent_path() / tmp_name;
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(path_, "cannot create " + tmp_.string(), errno);
  }
  ~ShardWriter() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_.c_str());
  }
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  void add(std::string_view name, std::string_view data, int64_t mtime_seconds) {
    block_.clear();
    append_ustar_member(block_, name, data, mtime_seconds);
    write(block_);
  }
  uint64_t bytes() const { return bytes_; }
  size_t images = 0;

  /// End of archive, fsync, close, rename over the final name.
  void commit() {
    block_.clear();
    append_end_of_archive(block_);
    write(block_);
    if (::fsync(fd_) != 0) fail(path_, "fsync failed", errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(path_, "close failed", errno);
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail(path_, "cannot rename " + tmp_.string() + " to it", errno);
    committed_ = true;
  }

 private:
  void write(std::string_view data) {
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail(path_, "write failed", errno);
      done += static_cast<size_t>(n);
    }
    bytes_ += data.size();
  }

  fs::path path_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
  uint64_t bytes_ = 0;
  std::string block_;
};

// The image extension the file name ends with (lower-cased, no dot): "jpg", "jpeg", ...
std::string image_extension(const fs::path& path) {
  std::string name = path.filename().string();
  for (char& c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  std::string best;
  for (const auto e : kImageExtensions)
    if (name.size() >= e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0 &&
        e.size() - 1 > best.size())
      best = std::string(e.substr(1));
  return best;
}

std::string zero_padded(size_t value, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*zu", width, value);
  return buf;
}

int key_width(size_t n) {
  int digits = 1;
  for (size_t v = n > 0 ? n - 1 : 0; v >= 10; v /= 10) ++digits;
  return std::max(8, digits);
}

// OUT may be replaced only when absent, empty or an earlier pack output; returns the
// earlier output's shard names (to delete those not rewritten).
std::vector<std::string> prepare_out(const fs::path& out) {
  std::error_code ec;
  std::vector<std::string> old;
  if (fs::exists(out, ec)) {
    if (!fs::is_directory(out, ec))
      throw DatasetError(out.string() + ": exists and is not a directory (not overwritten)");
    if (!fs::is_empty(out, ec)) {
      const auto m = read_pack_manifest(out);
      if (!m)
        throw DatasetError(out.string() + ": exists, is not empty and holds no readable " +
                           std::string(kPackManifest) + " (not a pack output; not overwritten)");
      for (const auto& s : m->shards) old.push_back(s.name);
      if (!fs::remove(out / kPackManifest, ec) || ec)
        throw DatasetError((out / kPackManifest).string() + ": cannot remove: " + ec.message());
    }
  }
  fs::create_directories(out, ec);
  if (ec) throw DatasetError(out.string() + ": cannot create directory: " + ec.message());
  return old;
}

json to_json(const PackManifest& m, const std::vector<IgnoredEntry>& bad) {
  json j = {{"format", "pipebench-pack"}, {"version", 1}, {"layout", "webdataset"},
            {"source", m.source}, {"source_fingerprint", m.source_fingerprint},
            {"shard_size", m.shard_size}, {"shard_mib", m.shard_mib}, {"seed", m.seed},
            {"shuffle", m.shuffle}, {"prefix", m.prefix}, {"images", m.images},
            {"bad_files", m.bad}, {"source_bytes", m.source_bytes},
            {"shards", json::array()}, {"bad", json::array()}};
  for (const auto& s : m.shards)
    j["shards"].push_back({{"name", s.name}, {"images", s.images}, {"bytes", s.bytes}});
  for (const auto& b : bad) j["bad"].push_back({{"path", b.path.string()}, {"reason", b.reason}});
  return j;
}

void check_options(const PackOptions& o) {
  if (o.shard_mib < 0 || !(o.shard_mib == o.shard_mib))
    throw std::invalid_argument("--shard-mib must be > 0, got " + std::to_string(o.shard_mib));
  if (o.shard_size == 0 && o.shard_mib == 0)
    throw std::invalid_argument("pack: give --shard-size (images per shard) or --shard-mib (MiB per shard)");
  if (o.prefix.find('/') != std::string::npos)
    throw std::invalid_argument("--prefix \"" + o.prefix + "\" must not contain '/'");
}

}  // namespace

std::vector<size_t> pack_order(size_t n, uint64_t seed, bool shuffle) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  if (!shuffle) return order;
  std::mt19937_64 rng(seed);
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[bounded(rng, i)]);
  return order;
}

PackResult pack_dataset(const fs::path& in, const fs::path& out, const PackOptions& o,
                        std::ostream& log) {
  check_options(o);
  const ImageFolder ds(in);
  const std::vector<std::string> old = prepare_out(out);
  PackResult r;
  PackManifest& m = r.manifest;
  std::error_code ec;
  m.source = fs::absolute(in, ec).lexically_normal().string();
  m.source_fingerprint = ds.fingerprint();
  m.shard_size = o.shard_size;
  m.shard_mib = o.shard_mib;
  m.seed = o.seed;
  m.shuffle = o.shuffle;
  m.prefix = o.prefix.empty() ? folder_name(in) : o.prefix;
  const int width = key_width(ds.size());
  const uint64_t mib_bytes = static_cast<uint64_t>(o.shard_mib * 1048576.0);
  std::optional<ShardWriter> w;
  const auto close_shard = [&] {
    w->commit();
    const std::string name = m.prefix + "-" + zero_padded(m.shards.size(), 6) + ".tar";
    m.shards.push_back({name, w->images, w->bytes() });
    w.reset();
  };
  std::vector<uint8_t> buf;
  for (const size_t i : pack_order(ds.size(), o.seed, o.shuffle)) {
    const SampleEntry& s = ds.sample(i);
    try {
      read_file(s.path, buf);
    } catch (const DatasetError& e) {
      r.bad.push_back({s.path, e.what()});
      log << "bad: " << e.what() << "\n";
      continue;
    }
    if (!w) w.emplace(out / (m.prefix + "-" + zero_padded(m.shards.size(), 6) + ".tar"));
    const std::string key = zero_padded(r.order.size(), width);
    const int64_t mtime = s.mtime_ns >= 0 ? s.mtime_ns / 1000000000 : 0;
    w->add(key + "." + image_extension(s.path),
           std::string_view(reinterpret_cast<const char*>(buf.data()), buf.size()), mtime);
    w->add(key + ".cls", std::to_string(s.label), mtime);
    ++w->images;
    r.order.push_back(i);
    m.source_bytes += buf.size();
    if ((o.shard_size && w->images >= o.shard_size) || (mib_bytes && w->bytes() >= mib_bytes))
      close_shard();
  }
  if (w) close_shard();
  m.images = r.order.size();
  m.bad = r.bad.size();
  if (m.images == 0)
    throw DatasetError(in.string() + ": no image of " + std::to_string(ds.size()) +
                       " could be read (first: " + r.bad.front().reason + ")");
  std::set<std::string> written;
  for (const auto& s : m.shards) written.insert(s.name);
  for (const auto& name : old)
    if (!written.count(name) && name.find('/') == std::string::npos) fs::remove(out / name, ec);
  std::string classes;
  for (const auto& c : ds.classes()) classes += c + "\n";
  replace_file(out / kPackClasses, classes);
  // File names need not be UTF-8: replaced, not thrown on.
  replace_file(out / kPackManifest, to_json(m, r.bad).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  r.out = out;
  return r;
}

std::optional<PackManifest> read_pack_manifest(const fs::path& out) {
  std::ifstream f(out / kPackManifest);
  if (!f) return std::nullopt;
  try {
    const json j = json::parse(f);
    if (j.value("format", "") != "pipebench-pack") return std::nullopt;
    PackManifest m;
    m.source = j.at("source").get<std::string>();
    m.source_fingerprint = j.at("source_fingerprint").get<std::string>();
    m.shard_size = j.at("shard_size").get<size_t>();
    m.shard_mib = j.at("shard_mib").get<double>();
    m.seed = j.at("seed").get<uint64_t>();
    m.shuffle = j.at("shuffle").get<bool>();
    m.prefix = j.at("prefix").get<std::string>();
    m.images = j.at("images").get<size_t>();
    m.bad = j.at("bad_files").get<size_t>();
    m.source_bytes = j.at("source_bytes").get<uint64_t>();
    for (const auto& s : j.at("shards"))
      m.shards.push_back({s.at("name").get<std::string>(), s.at("images").get<size_t>(),
                          s.at("bytes").get<uint64_t>()});
    return m;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace pipebench
