// inspect_dataset: one pass over the files ImageFolder lists (see inspect.h).
#include "datasets/inspect.h"

#include <algorithm>
#include <ctime>
#include <cmath>
#include <exception>

#include "datasets/file_io.h"
#include "datasets/image_folder.h"
#include "transforms/image_format.h"
#include "transforms/jpeg_decode.h"

namespace pipebench {
namespace {

// The format a file name promises, by torchvision's extensions (folder_scan.h).
ImageFormat format_of_extension(const std::filesystem::path& p) {
  std::string name = p.filename().string();
  for (char& c : name)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  auto ends = [&](const char* ext) { return name.ends_with(ext); };
  if (ends(".jpg") || ends(".jpeg")) return ImageFormat::kJpeg;
  if (ends(".png")) return ImageFormat::kPng;
  if (ends(".ppm") || ends(".pgm")) return ImageFormat::kPnm;
  if (ends(".bmp")) return ImageFormat::kBmp;
  if (ends(".tif") || ends(".tiff")) return ImageFormat::kTiff;
  if (ends(".webp")) return ImageFormat::kWebp;
  return ImageFormat::kUnknown;
}

// What one good file adds; the sums become means at the end.
struct Sums {
  double width = 0, height = 0, bpp = 0;
  std::vector<double> megapixels, kb;
};

class Inspector {
 public:
  Inspector(const std::filesystem::path& root, const InspectOptions& options)
      : folder_(root), options_(options) {
    s_.root = root;
    s_.files = folder_.size();
    s_.classes = folder_.classes().size();
    s_.decoded = options.decode;
    s_.ignored = folder_.ignored();
  }

  DatasetStats run() {
    for (size_t i = 0; i < folder_.size(); ++i) visit(i);
    finish();
    return std::move(s_);
  }

 private:
  void visit(size_t i) {
    const std::filesystem::path& path = folder_.sample(i).path;
    const std::string file = path.string();
    try {
      folder_.read(i, bytes_);
    } catch (const std::exception& e) {
      ++s_.formats["unreadable"];
      return bad(path, e.what());
    }
    const ImageFormat format = sniff_format(bytes_);
    ++s_.formats[format_name(format)];
    const ImageFormat promised = format_of_extension(path);
    if (format != promised && format != ImageFormat::kUnknown)
      s_.extension_mismatch.push_back(
          {path, std::string(format_name(format)) + " content, named as " + format_name(promised)});
    ImageInfo info;
    try {
      info = read_image_info(bytes_, file);
      if (options_.decode) time_decode(path, info);
    } catch (const std::exception& e) {
      return bad(path, e.what());
    }
    add(info);
  }

  // Thread CPU time, not wall time: on a busy machine a preempted decode would otherwise
  // top the list.
  double timed_decode(const std::filesystem::path& path) {
    const int64_t t0 = thread_cpu_ns();
    decoder_.decode(bytes_, path.string(), image_);
    return static_cast<double>(thread_cpu_ns() - t0) / 1e6;
  }

  static int64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }

  void time_decode(const std::filesystem::path& path, const ImageInfo& info) {
    const double ms = timed_decode(path);
    s_.slowest.push_back({path, ms, format_name(info.format), megapixels(info)});
    // Keep twice the candidates asked for (retimed at the end); cut when it doubles again.
    if (s_.slowest.size() >= 4 * options_.slowest + 4) keep_slowest(2 * options_.slowest);
  }

  void keep_slowest(size_t n) {
    std::sort(s_.slowest.begin(), s_.slowest.end(),
              [](const FileTime& a, const FileTime& b) { return a.ms > b.ms; });
    if (s_.slowest.size() > n) s_.slowest.resize(n);
  }

  // One decode is noisy (the first file also pays for first-touch page faults of the
  // output buffer), so each candidate is decoded once more and keeps the faster time.
  void retime_slowest() {
    keep_slowest(2 * options_.slowest);
    for (FileTime& t : s_.slowest) {
      try {
        read_file(t.path, bytes_);
        t.ms = std::min(t.ms, timed_decode(t.path));
      } catch (const std::exception&) {
        // changed since the first pass: keep the first time
      }
    }
    keep_slowest(options_.slowest);
  }

  static double megapixels(const ImageInfo& info) {
    return static_cast<double>(info.width) * info.height / 1e6;
  }

  void add(const ImageInfo& info) {
    ++s_.images;
    s_.total_bytes += bytes_.size();
    const double pixels = static_cast<double>(info.width) * info.height;
    sums_.width += info.width;
    sums_.height += info.height;
    sums_.bpp += 8.0 * static_cast<double>(bytes_.size()) / pixels;
    sums_.megapixels.push_back(pixels / 1e6);
    sums_.kb.push_back(static_cast<double>(bytes_.size()) / 1000.0);
    if (info.format != ImageFormat::kJpeg) return;
    ++s_.jpeg;
    (info.jpeg.progressive ? s_.progressive : s_.baseline)++;
    ++s_.subsampling[info.jpeg.subsampling ? info.jpeg.subsampling : "other"];
  }

  void bad(const std::filesystem::path& path, const std::string& what) {
    s_.bad.push_back({path, what});
    if (s_.unreadable_examples.size() < 5) {
      // DecodeError and DatasetError messages already name the file.
      s_.unreadable_examples.push_back(what.find(path.string()) == std::string::npos
                                           ? path.string() + ": " + what
                                           : what);
    }
  }

  void finish() {
    s_.unreadable = s_.bad.size();
    if (options_.decode) retime_slowest();
    if (s_.images == 0) {
      if (options_.require_good) {
        std::string msg = s_.root.string() + ": no readable image among " +
                          std::to_string(s_.files) + " image file(s)";
        if (!s_.unreadable_examples.empty()) msg += " (first: " + s_.unreadable_examples[0] + ")";
        throw DatasetError(msg);
      }
      return;
    }
    const double n = static_cast<double>(s_.images);
    s_.mean_width = sums_.width / n;
    s_.mean_height = sums_.height / n;
    s_.mean_bytes = static_cast<double>(s_.total_bytes) / n;
    s_.mean_bpp = sums_.bpp / n;
    s_.megapixels = distribution(std::move(sums_.megapixels));
    s_.file_kb = distribution(std::move(sums_.kb));
  }

  ImageFolder folder_;
  InspectOptions options_;
  DatasetStats s_;
  Sums sums_;
  std::vector<uint8_t> bytes_;
  TurboDecoder decoder_;
  Image image_;
};

}  // namespace

Distribution distribution(std::vector<double> v) {
  Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  // Hyndman-Fan 7: h = (n - 1) p, interpolate between v[floor h] and v[floor h + 1].
  auto at = [&](double p) {
    const double h = (static_cast<double>(v.size()) - 1) * p;
    const size_t lo = static_cast<size_t>(std::floor(h));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
  };
  d.p5 = at(0.05);
  d.p50 = at(0.50);
  d.p95 = at(0.95);
  d.max = v.back();
  return d;
}

DatasetStats inspect_dataset(const std::filesystem::path& root, const InspectOptions& options) {
  return Inspector(root, options).run();  // ImageFolder throws for missing/empty roots
}

}  // namespace pipebench
