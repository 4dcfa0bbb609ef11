// Photo sets from Debian wallpaper packages: fetch (apt-get download, dpkg -x), find the
// original JPEGs, then copy them (photos-full) and tile them (photos-in).
#include "datasets/photos.h"

#include <sys/wait.h>
#include <turbojpeg.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "datasets/file_io.h"
#include "datasets/fnv.h"
#include "datasets/image_folder.h"
#include "datasets/synthetic.h"

namespace pipebench {
namespace {

namespace fs = std::filesystem;

/// Runs argv[0] (looked up in PATH) in directory cwd, stdout and stderr inherited.
/// Returns the exit status, or -1 when it could not be started or was killed.
int run_command(const std::vector<std::string>& argv, const fs::path& cwd) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (::chdir(cwd.c_str()) != 0) ::_exit(127);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// True when `program` is an executable file in one of $PATH's folders.
bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    if (::access((fs::path(dir) / program).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

/// Unpacks `deb` into `root` (emptied first) with dpkg -x; false when dpkg fails.
bool unpack_deb(const fs::path& deb, const fs::path& root, const fs::path& cwd) {
  std::error_code ec;
  fs::remove_all(root, ec);
  fs::create_directories(root, ec);
  if (ec) throw DatasetError(root.string() + ": cannot create: " + ec.message());
  return run_command({"dpkg", "-x", deb.string(), root.string()}, cwd) == 0;
}

/// The "<package>_*.deb" file in dir, or an empty path.
fs::path find_deb(const fs::path& dir, const std::string& package) {
  std::error_code ec;
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > package.size() + 5 && name.compare(0, package.size() + 1, package + "_") == 0 &&
        name.ends_with(".deb") && e.is_regular_file())
      found.push_back(e.path());
  }
  std::sort(found.begin(), found.end());
  return found.empty() ? fs::path() : found.back();
}

std::string to_lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// FNV-1a 64-bit over the bytes (fnv.h): a fast first filter for duplicate contents.
uint64_t fnv1a(const std::vector<uint8_t>& bytes) {
  Fnv1a h;
  h.add(bytes.data(), bytes.size());
  return h.value();
}

struct Decoded {
  std::vector<uint8_t> rgb;
  int width = 0, height = 0;
};

/// TurboJPEG decode to RGB with the accurate integer IDCT. Throws std::runtime_error with
/// TurboJPEG's message.
Decoded decode_accurate(tjhandle tj, const std::vector<uint8_t>& jpeg) {
  Decoded d;
  int subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(tj, jpeg.data(), jpeg.size(), &d.width, &d.height, &subsamp,
                          &colorspace) != 0)
    throw std::runtime_error(tjGetErrorStr2(tj));
  if (static_cast<int64_t>(d.width) * d.height > 400'000'000)
    throw std::runtime_error("image larger than 400 megapixels");
  d.rgb.resize(static_cast<size_t>(d.width) * d.height * 3);
  if (tjDecompress2(tj, jpeg.data(), jpeg.size(), d.rgb.data(), d.width, 0, d.height, TJPF_RGB,
                    TJFLAG_ACCURATEDCT | TJFLAG_STOPONWARNING) != 0)
    throw std::runtime_error(tjGetErrorStr2(tj));
  return d;
}

std::string two_digits(int v) { return (v < 10 ? "0" : "") + std::to_string(v); }

/// Writes the tiles of one image (at one scale) under dir; returns (files, bytes).
std::pair<size_t, uint64_t> write_tiles(const Decoded& img, int scale, const std::string& cls,
                                        const fs::path& dir, const PhotoSetOptions& o) {
  const bool portrait = img.height > img.width;
  const int tw = portrait ? o.tile_height : o.tile_width;
  const int th = portrait ? o.tile_width : o.tile_height;
  const TileGrid g = tile_grid(img.width, img.height, tw, th);
  std::vector<uint8_t> tile(static_cast<size_t>(tw) * th * 3);
  size_t files = 0;
  uint64_t bytes = 0;
  for (int r = 0; r < g.rows; ++r) {
    for (int c = 0; c < g.cols; ++c) {
      const int x = g.x0 + c * tw, y = g.y0 + r * th;
      for (int row = 0; row < th; ++row) {
        const uint8_t* src = &img.rgb[(static_cast<size_t>(y + row) * img.width + x) * 3];
        std::copy(src, src + static_cast<size_t>(tw) * 3, &tile[static_cast<size_t>(row) * tw * 3]);
      }
      const auto jpeg = encode_jpeg(tile.data(), tw, th, o.quality, "4:2:0", false);
      const auto name = cls + "_s" + std::to_string(scale) + "_r" + two_digits(r) + "_c" +
                        two_digits(c) + ".jpg";
      write_file(dir / name, jpeg.data(), jpeg.size());
      ++files;
      bytes += jpeg.size();
    }
  }
  return {files, bytes};
}

/// Removes `final_dir` and renames `tmp` to it.
void commit_dir(const fs::path& tmp, const fs::path& final_dir) {
  std::error_code ec;
  fs::remove_all(final_dir, ec);
  if (ec) throw DatasetError(final_dir.string() + ": cannot remove old set: " + ec.message());
  fs::rename(tmp, final_dir, ec);
  if (ec)
    throw DatasetError(tmp.string() + ": cannot rename to " + final_dir.string() + ": " +
                       ec.message());
}

}  // namespace

std::vector<fs::path> fetch_photo_packages(const fs::path& scratch,
                                           const std::vector<std::string>& packages,
                                           std::ostream& log) {
  std::error_code ec;
  fs::create_directories(scratch, ec);
  if (ec) throw DatasetError(scratch.string() + ": cannot create scratch folder: " + ec.message());
  const fs::path abs_scratch = fs::absolute(scratch);

  std::vector<std::string> missing;
  for (const auto& p : packages)
    if (find_deb(abs_scratch, p).empty()) missing.push_back(p);
  for (const char* tool : {"apt-get", "dpkg"}) {
    if (!on_path(tool))
      throw DatasetError(std::string(tool) + " not found on PATH: pipebench-data photos fetches "
                         "Debian packages with apt-get download and unpacks them with dpkg -x "
                         "(Debian or Ubuntu; no root needed once the package lists exist)");
  }
  if (!missing.empty()) {
    std::vector<std::string> argv = {"apt-get", "download"};
    argv.insert(argv.end(), missing.begin(), missing.end());
    log << "downloading " << missing.size() << " package(s) into " << abs_scratch.string() << "\n"
        << std::flush;
    if (run_command(argv, abs_scratch) != 0) {
      log << "apt-get download failed; running apt-get update and retrying\n" << std::flush;
      if (run_command({"apt-get", "update"}, abs_scratch) != 0)
        throw DatasetError(abs_scratch.string() +
                           ": apt-get update failed (needs root and network)");
      if (run_command(argv, abs_scratch) != 0)
        throw DatasetError(abs_scratch.string() + ": apt-get download failed for " +
                           [&] {
                             std::string s;
                             for (const auto& m : missing) s += (s.empty() ? "" : " ") + m;
                             return s;
                           }());
    }
  } else {
    log << "all " << packages.size() << " package(s) already in " << abs_scratch.string() << "\n";
  }

  std::vector<fs::path> roots;
  for (const auto& p : packages) {
    const fs::path deb = find_deb(abs_scratch, p);
    if (deb.empty())
      throw DatasetError(abs_scratch.string() + ": no " + p + "_*.deb after apt-get download");
    const fs::path root = abs_scratch / "unpacked" / p;
    const fs::path stamp = abs_scratch / "unpacked" / (p + ".done");
    std::string stamp_text;
    if (fs::exists(stamp)) {
      std::vector<uint8_t> b;
      read_file(stamp, b);
      stamp_text.assign(b.begin(), b.end());
    }
    fs::path unpacked = deb;
    if (stamp_text != deb.filename().string() || !fs::is_directory(root)) {
      fs::remove(stamp, ec);
      if (!unpack_deb(deb, root, abs_scratch)) {
        // A corrupt or truncated .deb (an interrupted download) is fetched again once,
        // rather than failing every later run on the same file.
        log << deb.string() << ": dpkg -x failed; downloading " << p << " again\n" << std::flush;
        fs::remove(deb, ec);
        if (run_command({"apt-get", "download", p}, abs_scratch) != 0)
          throw DatasetError(deb.string() + ": dpkg -x failed, and apt-get download " + p +
                             " failed to fetch it again");
        unpacked = find_deb(abs_scratch, p);
        if (unpacked.empty() || !unpack_deb(unpacked, root, abs_scratch))
          throw DatasetError(deb.string() + ": dpkg -x failed, also after downloading it again "
                             "(the package itself is not a valid .deb)");
      }
      const std::string name = unpacked.filename().string();
      write_file(stamp, reinterpret_cast<const uint8_t*>(name.data()), name.size());
    }
    roots.push_back(root);
  }
  return roots;
}

std::string photo_class_name(const fs::path& relative) {
  std::vector<std::string> parts;
  for (const auto& part : relative.lexically_normal()) {
    const std::string s = part.string();
    if (s.empty() || s == "." || s == "/") continue;
    parts.push_back(s);
  }
  if (parts.empty()) return "unnamed";
  parts.back() = fs::path(parts.back()).stem().string();
  size_t begin = 0;
  if (parts.size() > 3 && parts[0] == "usr" && parts[1] == "share" &&
      (parts[2] == "backgrounds" || parts[2] == "wallpapers"))
    begin = 3;
  std::string name;
  for (size_t i = begin; i < parts.size(); ++i) {
    std::string p = parts[i];
    if (i + 1 < parts.size()) {
      if (p == "contents" || p == "images") continue;
      if (p == "images_dark") p = "dark";
    }
    if (!name.empty()) name += '_';
    name += p;
  }
  for (char& c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '.' && c != '_' && c != '-') c = '-';
  }
  if (name.empty() || name == "." || name == "..") name = "unnamed";
  return name;
}

std::vector<PhotoOriginal> find_photo_originals(const std::vector<fs::path>& roots,
                                                uint64_t min_bytes) {
  struct Candidate {
    fs::path path, relative;
    uint64_t size;
  };
  std::vector<Candidate> candidates;
  for (const auto& root : roots) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) throw DatasetError(root.string() + ": not a directory");
    // recursive_directory_iterator does not follow directory links by default.
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_symlink(ec) || !it->is_regular_file(ec)) continue;
      const uint64_t size = it->file_size(ec);
      if (ec || size < min_bytes) continue;
      if (to_lower(it->path().stem().string()) == "screenshot") continue;
      candidates.push_back({it->path(), it->path().lexically_relative(root), size});
    }
    if (ec) throw DatasetError(root.string() + ": cannot walk: " + ec.message());
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.path < b.path; });

  std::vector<PhotoOriginal> out;
  std::unordered_map<uint64_t, std::vector<size_t>> by_hash;  // hash -> indices into out
  std::vector<uint8_t> bytes, other;
  for (const auto& c : candidates) {
    read_file(c.path, bytes);
    if (bytes.size() < 3 || bytes[0] != 0xFF || bytes[1] != 0xD8 || bytes[2] != 0xFF) continue;
    const uint64_t h = fnv1a(bytes);
    bool duplicate = false;
    for (size_t idx : by_hash[h]) {
      read_file(out[idx].path, other);
      if (other == bytes) {
        duplicate = true;
        break;
      }
    }
    if (duplicate) continue;
    by_hash[h].push_back(out.size());
    out.push_back({c.path, photo_class_name(c.relative), c.size});
  }
  std::stable_sort(out.begin(), out.end(), [](const PhotoOriginal& a, const PhotoOriginal& b) {
    return a.class_name < b.class_name;
  });
  std::map<std::string, int> seen;
  for (auto& o : out) {
    const int n = ++seen[o.class_name];
    if (n > 1) o.class_name += "-" + std::to_string(n);
  }
  return out;
}

std::vector<uint8_t> downscale_box2(const uint8_t* rgb, int width, int height) {
  if (width < 2 || height < 2)
    throw std::invalid_argument("downscale_box2: width and height must be >= 2, got " +
                                std::to_string(width) + "x" + std::to_string(height));
  const int ow = width / 2, oh = height / 2;
  std::vector<uint8_t> out(static_cast<size_t>(ow) * oh * 3);
  const size_t stride = static_cast<size_t>(width) * 3;
  for (int y = 0; y < oh; ++y) {
    const uint8_t* r0 = rgb + static_cast<size_t>(2 * y) * stride;
    const uint8_t* r1 = r0 + stride;
    uint8_t* o = &out[static_cast<size_t>(y) * ow * 3];
    for (int x = 0; x < ow; ++x) {
      for (int c = 0; c < 3; ++c) {
        const size_t i = static_cast<size_t>(2 * x) * 3 + c;
        const unsigned sum = r0[i] + r0[i + 3] + r1[i] + r1[i + 3];
        o[x * 3 + c] = static_cast<uint8_t>((sum + 2) / 4);
      }
    }
  }
  return out;
}

TileGrid tile_grid(int width, int height, int tile_w, int tile_h) {
  if (tile_w <= 0 || tile_h <= 0)
    throw std::invalid_argument("tile size must be > 0, got " + std::to_string(tile_w) + "x" +
                                std::to_string(tile_h));
  TileGrid g;
  g.tile_w = tile_w;
  g.tile_h = tile_h;
  g.cols = std::max(0, width / tile_w);
  g.rows = std::max(0, height / tile_h);
  g.x0 = g.cols > 0 ? (width - g.cols * tile_w) / 2 : 0;
  g.y0 = g.rows > 0 ? (height - g.rows * tile_h) / 2 : 0;
  if (g.cols == 0 || g.rows == 0) g.cols = g.rows = 0;
  return g;
}

PhotoSetSummary build_photo_sets(const std::vector<PhotoOriginal>& originals,
                                 const fs::path& out_dir, const PhotoSetOptions& options,
                                 std::ostream& log) {
  if (options.quality < 1 || options.quality > 100)
    throw std::invalid_argument("quality must be in [1, 100], got " +
                                std::to_string(options.quality));
  if (options.tile_width <= 0 || options.tile_height <= 0)
    throw std::invalid_argument("tile size must be > 0, got " +
                                std::to_string(options.tile_width) + "x" +
                                std::to_string(options.tile_height));
  const fs::path full_final = out_dir / "photos-full", in_final = out_dir / "photos-in";
  const fs::path full_tmp = out_dir / "photos-full.tmp", in_tmp = out_dir / "photos-in.tmp";
  std::error_code ec;
  fs::remove_all(full_tmp, ec);
  fs::remove_all(in_tmp, ec);
  fs::create_directories(full_tmp, ec);
  fs::create_directories(in_tmp, ec);
  // Whatever ends this function (a full disk, no decodable original), no .tmp folder is
  // left behind; after the commit below they are renamed away and this removes nothing.
  struct RemoveOnExit {
    fs::path a, b;
    ~RemoveOnExit() {
      std::error_code e;
      fs::remove_all(a, e);
      fs::remove_all(b, e);
    }
  } cleanup{full_tmp, in_tmp};
  if (ec) throw DatasetError(out_dir.string() + ": cannot create output: " + ec.message());

  struct Result {
    bool ok = false;
    std::string skipped;
    uint64_t full_bytes = 0;
    size_t tiles = 0;
    uint64_t tile_bytes = 0;
    std::exception_ptr error;
  };
  std::vector<Result> results(originals.size());
  std::atomic<size_t> next{0};
  std::mutex log_mutex;

  auto worker = [&] {
    std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitDecompress(), tjDestroy);
    std::vector<uint8_t> bytes;
    for (size_t i = next++; i < originals.size(); i = next++) {
      const PhotoOriginal& o = originals[i];
      Result& r = results[i];
      try {
        read_file(o.path, bytes);
        Decoded img;
        try {
          if (!tj) throw std::runtime_error("tjInitDecompress failed");
          img = decode_accurate(tj.get(), bytes);
        } catch (const std::exception& e) {
          r.skipped = o.path.string() + ": " + e.what();
          std::lock_guard lock(log_mutex);
          log << "warning: skipping " << r.skipped << "\n";
          continue;
        }
        write_file(full_tmp / o.class_name / (o.class_name + ".jpg"), bytes.data(), bytes.size());
        r.full_bytes = bytes.size();
        auto [n1, b1] = write_tiles(img, 1, o.class_name, in_tmp / o.class_name, options);
        size_t n2 = 0;
        uint64_t b2 = 0;
        if (img.width >= 2 && img.height >= 2) {
          Decoded half;
          half.width = img.width / 2;
          half.height = img.height / 2;
          half.rgb = downscale_box2(img.rgb.data(), img.width, img.height);
          std::tie(n2, b2) = write_tiles(half, 2, o.class_name, in_tmp / o.class_name, options);
        }
        r.tiles = n1 + n2;
        r.tile_bytes = b1 + b2;
        r.ok = true;
        std::lock_guard lock(log_mutex);
        log << "  " << o.class_name << ": " << img.width << "x" << img.height << " px, "
            << r.tiles << " tiles\n" << std::flush;
      } catch (...) {
        r.error = std::current_exception();
      }
    }
  };
  // A tool sizing its own thread pool, outside any benchmark run: the machine's hardware
  // threads, not a run's cores_available (bench/run/flags.h), which only the run reads.
  int threads = options.threads > 0 ? options.threads
                                    : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::clamp(threads, 1, std::max(1, static_cast<int>(originals.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();

  PhotoSetSummary s;
  for (const auto& r : results) {
    if (r.error) std::rethrow_exception(r.error);
    if (!r.skipped.empty()) s.skipped.push_back(r.skipped);
    if (!r.ok) continue;
    ++s.full_images;
    ++s.full_classes;
    s.full_bytes += r.full_bytes;
    s.in_images += r.tiles;
    s.in_classes += r.tiles > 0 ? 1 : 0;
    s.in_bytes += r.tile_bytes;
  }
  if (s.full_images == 0)
    throw DatasetError(out_dir.string() + ": none of " + std::to_string(originals.size()) +
                       " original(s) could be decoded");
  commit_dir(full_tmp, full_final);
  commit_dir(in_tmp, in_final);
  return s;
}

}  // namespace pipebench
