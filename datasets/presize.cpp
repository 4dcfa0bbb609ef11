// presize_dataset: decode, INTER_AREA downscale, TurboJPEG encode, one image per task over
// a few threads; written to a sibling folder and renamed when complete (presize.h).
#include "datasets/presize.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "datasets/file_io.h"
#include "datasets/image_folder.h"
#include "datasets/synthetic.h"
#include "transforms/image_format.h"
#include "transforms/jpeg_decode.h"

namespace pipebench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Output paths relative to OUT, in dataset order: the source's relative path with the
// extension replaced by .jpg, or kept before .jpg when that name is taken already.
std::vector<fs::path> output_names(const ImageFolder& ds, const std::vector<size_t>& indices) {
  std::vector<fs::path> names;
  std::set<std::string> taken;
  for (size_t i : indices) {
    const fs::path rel = ds.sample(i).path.lexically_relative(ds.root());
    fs::path name = rel;
    name.replace_extension(".jpg");
    if (!taken.insert(name.generic_string()).second) {
      name = rel;
      name += ".jpg";
      taken.insert(name.generic_string());
    }
    names.push_back(name);
  }
  return names;
}

struct Converted {
  bool ok = false;
  bool downscaled = false;
  bool copied = false;  // at most min_pixels: written byte for byte
  std::string error;
  uint64_t in_bytes = 0, out_bytes = 0;
};

// One image: read, decode, shrink when its shorter side exceeds N, encode, write.
Converted convert(const ImageFolder& ds, size_t i, const fs::path& dest, const PresizeOptions& o,
                  TurboDecoder& decoder) {
  Converted c;
  std::vector<uint8_t> bytes;
  Image img;
  bool small = false;
  try {
    ds.read(i, bytes);
    // Decoded in every mode, so that a bad file is skipped and listed, never copied.
    decoder.decode(bytes, ds.sample(i).path.string(), img);
    if (o.min_pixels > 0)  // large only: kept byte for byte unless large and shrinkable
      small = static_cast<uint64_t>(img.width) * static_cast<uint64_t>(img.height) <= o.min_pixels ||
              std::min(img.width, img.height) <= o.shorter_side;
  } catch (const std::exception& e) {
    c.error = e.what();
    return c;
  }
  if (small) {
    write_file(dest, bytes.data(), bytes.size());  // throws DatasetError: a disk failure
    c.ok = c.copied = true;
    c.in_bytes = c.out_bytes = bytes.size();
    return c;
  }
  if (img.channels != 3) {  // TurboDecoder promises RGB; say so rather than misread
    c.error = "decoded to " + std::to_string(img.channels) + " channels, expected 3";
    return c;
  }
  const auto [w, h] = presized_dimensions(img.width, img.height, o.shorter_side);
  cv::Mat src(img.height, img.width, CV_8UC3, img.data.data());
  cv::Mat dst;
  if (w != img.width || h != img.height) {
    cv::resize(src, dst, cv::Size(w, h), 0, 0, cv::INTER_AREA);
    c.downscaled = true;
  } else {
    dst = src;
  }
  if (!dst.isContinuous()) dst = dst.clone();
  const std::vector<uint8_t> jpeg = encode_jpeg(dst.data, w, h, o.quality, "4:2:0", false);
  write_file(dest, jpeg.data(), jpeg.size());  // throws DatasetError: a disk failure
  c.ok = true;
  c.in_bytes = bytes.size();
  c.out_bytes = jpeg.size();
  return c;
}

// Converts every sample on `threads` threads; a write failure stops the whole run.
std::vector<Converted> convert_all(const ImageFolder& ds, const std::vector<size_t>& indices,
                                   const std::vector<fs::path>& names, const fs::path& tmp,
                                   const PresizeOptions& o) {
  const size_t n = indices.size();
  std::vector<Converted> results(n);
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::string fatal;
  const auto worker = [&] {
    TurboDecoder decoder;
    for (size_t k; (k = next++) < n;) {
      try {
        results[k] = convert(ds, indices[k], tmp / names[k], o, decoder);
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        if (fatal.empty()) fatal = e.what();
        next = n;
      }
    }
  };
  // A tool sizing its own thread pool, outside any benchmark run: the machine's hardware
  // threads, not a run's cores_available (bench/run/flags.h), which only the run reads.
  int threads = o.threads > 0 ? o.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::clamp(threads, 1, static_cast<int>(std::max<size_t>(1, n)));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (!fatal.empty()) throw std::runtime_error(fatal);  // a disk failure, not bad input
  return results;
}

json to_json(const PresizeManifest& m, const std::vector<IgnoredEntry>& bad) {
  json j = {{"format", "pipebench-presize"}, {"version", 1}, {"source", m.source},
            {"source_fingerprint", m.source_fingerprint}, {"shorter_side_px", m.shorter_side},
            {"jpeg_quality", m.quality}, {"jpeg_subsampling", "4:2:0"}, {"selection", m.selection},
            {"jpeg_progressive", false}, {"resampling", "OpenCV INTER_AREA"},
            {"images", m.images}, {"downscaled", m.downscaled}, {"min_pixels", m.min_pixels},
            {"copied", m.copied}, {"bad_files", m.bad},
            {"source_bytes", m.source_bytes}, {"output_bytes", m.output_bytes},
            {"bad", json::array()}};
  for (const auto& b : bad) j["bad"].push_back({{"path", b.path.string()}, {"reason", b.reason}});
  return j;
}

// OUT may be replaced only when it is absent, an empty folder or an earlier presize output.
void check_replaceable(const fs::path& out) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  if (!fs::is_directory(out, ec))
    throw DatasetError(out.string() + ": exists and is not a directory (not overwritten)");
  if (fs::is_empty(out, ec) || fs::exists(out / kPresizeManifest, ec)) return;
  throw DatasetError(out.string() + ": exists, is not empty and holds no " +
                     std::string(kPresizeManifest) + " (not a presize output; not overwritten)");
}

// Moves the complete `tmp` to `out`, replacing an earlier output (its manifest first, so
// that an interrupted replacement leaves no valid-looking folder).
void publish(const fs::path& tmp, const fs::path& out) {
  std::error_code ec;
  if (fs::exists(out, ec)) {
    fs::remove(out / kPresizeManifest, ec);
    fs::remove_all(out, ec);
    if (ec) throw std::runtime_error(out.string() + ": cannot remove the earlier output: " + ec.message());
  }
  fs::rename(tmp, out, ec);
  if (ec) throw std::runtime_error(out.string() + ": cannot rename " + tmp.string() + " to it: " + ec.message());
}

}  // namespace

std::pair<int, int> presized_dimensions(int width, int height, int shorter_side) {
  const int s = std::min(width, height), l = std::max(width, height);
  if (s <= shorter_side) return {width, height};
  // torchvision 0.14 _compute_resized_output_size: int(size * long / short), truncated.
  const int new_long = std::max(1, static_cast<int>(static_cast<int64_t>(shorter_side) * l / s));
  return width <= height ? std::pair{shorter_side, new_long} : std::pair{new_long, shorter_side};
}

PresizeResult presize_dataset(const fs::path& in, const fs::path& out, const PresizeOptions& o,
                              std::ostream& log) {
  if (o.shorter_side < 1)
    throw std::invalid_argument("--shorter-side must be >= 1 pixel, got " + std::to_string(o.shorter_side));
  if (o.quality < 1 || o.quality > 100)
    throw std::invalid_argument("--quality must be in [1, 100], got " + std::to_string(o.quality));
  const ImageFolder ds(in);
  check_replaceable(out);
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(parent, ec);
  const fs::path tmp = parent / (out.filename().string() + ".partial-" + std::to_string(::getpid()));
  fs::remove_all(tmp, ec);
  std::vector<size_t> indices = o.only;
  for (size_t i : indices)
    if (i >= ds.size())
      throw std::invalid_argument("presize: sample index " + std::to_string(i) + " out of range [0, " +
                                  std::to_string(ds.size()) + ")");
  if (indices.empty())
    for (size_t i = 0; i < ds.size(); ++i) indices.push_back(i);
  const std::vector<fs::path> names = output_names(ds, indices);
  std::vector<Converted> results;
  try {
    results = convert_all(ds, indices, names, tmp, o);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  PresizeResult r;
  PresizeManifest& m = r.manifest;
  m.source = fs::absolute(in, ec).lexically_normal().string();
  m.source_fingerprint = ds.fingerprint();
  m.shorter_side = o.shorter_side;
  m.quality = o.quality;
  m.selection = o.only.empty() ? "all" : o.selection;
  m.min_pixels = o.min_pixels;
  for (size_t k = 0; k < results.size(); ++k) {
    const Converted& c = results[k];
    const size_t i = indices[k];
    if (!c.ok) {
      r.bad.push_back({ds.sample(i).path, c.error});
      const std::string path = ds.sample(i).path.string();
      log << "bad: " << (c.error.find(path) == std::string::npos ? path + ": " : "") << c.error << "\n";
      continue;
    }
    ++m.images;
    m.downscaled += c.downscaled ? 1 : 0;
    m.copied += c.copied ? 1 : 0;
    m.source_bytes += c.in_bytes;
    m.output_bytes += c.out_bytes;
  }
  m.bad = r.bad.size();
  if (m.images == 0) {
    fs::remove_all(tmp, ec);
    throw DatasetError(in.string() + ": no image of " + std::to_string(indices.size()) +
                       " could be read and decoded (first: " + r.bad.front().reason + ")");
  }
  // File names need not be UTF-8 (a Latin-1 name from an old archive): replaced, not thrown on.
  const std::string text = to_json(m, r.bad).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  try {
    write_file(tmp / kPresizeManifest, reinterpret_cast<const uint8_t*>(text.data()), text.size());
    publish(tmp, out);
  } catch (const std::exception& e) {  // write_file's DatasetError is a disk failure here
    fs::remove_all(tmp, ec);
    throw std::runtime_error(e.what());
  }
  r.out = out;
  return r;
}

std::optional<PresizeManifest> read_presize_manifest(const fs::path& out) {
  std::ifstream f(out / kPresizeManifest);
  if (!f) return std::nullopt;
  try {
    const json j = json::parse(f);
    if (j.value("format", "") != "pipebench-presize") return std::nullopt;
    PresizeManifest m;
    m.source = j.at("source").get<std::string>();
    m.source_fingerprint = j.at("source_fingerprint").get<std::string>();
    m.shorter_side = j.at("shorter_side_px").get<int>();
    m.quality = j.at("jpeg_quality").get<int>();
    m.selection = j.value("selection", "all");
    m.images = j.at("images").get<size_t>();
    m.downscaled = j.at("downscaled").get<size_t>();
    m.min_pixels = j.value("min_pixels", uint64_t{0});  // absent before large-only copies
    m.copied = j.value("copied", size_t{0});
    m.bad = j.at("bad_files").get<size_t>();
    m.source_bytes = j.at("source_bytes").get<uint64_t>();
    m.output_bytes = j.at("output_bytes").get<uint64_t>();
    return m;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace pipebench
