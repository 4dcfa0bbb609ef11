// inspect_dataset: header-only statistics of an ImageFolder (see inspect.h).
#include "datasets/inspect.h"

#include <cstdio>
#include <exception>

#include "datasets/file_io.h"
#include "datasets/image_folder.h"
#include "transforms/jpeg_decode.h"

namespace pipebench {

DatasetStats inspect_dataset(const std::filesystem::path& root) {
  ImageFolder folder(root);  // throws DatasetError for missing/empty roots
  DatasetStats s;
  s.root = root;
  s.classes = folder.classes().size();
  double sum_w = 0, sum_h = 0, sum_bpp = 0;
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < folder.size(); ++i) {
    const std::string file = folder.sample(i).path.string();
    JpegInfo info;
    try {
      folder.read(i, bytes);
      info = read_jpeg_info(bytes, file);
    } catch (const std::exception& e) {
      ++s.unreadable;
      if (s.unreadable_examples.size() < 5) {
        const std::string what = e.what();
        // Messages from DecodeError/DatasetError already name the file.
        s.unreadable_examples.push_back(what.find(file) == std::string::npos ? file + ": " + what
                                                                              : what);
      }
      continue;
    }
    ++s.images;
    s.total_bytes += bytes.size();
    sum_w += info.width;
    sum_h += info.height;
    sum_bpp += 8.0 * static_cast<double>(bytes.size()) /
               (static_cast<double>(info.width) * info.height);
    (info.progressive ? s.progressive : s.baseline)++;
    ++s.subsampling[info.subsampling ? info.subsampling : "other"];
  }
  if (s.images == 0) {
    std::string msg = root.string() + ": no readable JPEG among " +
                      std::to_string(folder.size()) + " .jpg/.jpeg file(s)";
    if (!s.unreadable_examples.empty()) msg += " (first: " + s.unreadable_examples[0] + ")";
    throw DatasetError(msg);
  }
  const double n = static_cast<double>(s.images);
  s.mean_width = sum_w / n;
  s.mean_height = sum_h / n;
  s.mean_bytes = static_cast<double>(s.total_bytes) / n;
  s.mean_bpp = sum_bpp / n;
  return s;
}

std::string format_stats(const DatasetStats& s) {
  std::string out;
  char line[256];
  auto pct = [&](size_t k) { return s.images ? 100.0 * static_cast<double>(k) / s.images : 0.0; };
  out += "dataset:          " + s.root.string() + "\n";
  std::snprintf(line, sizeof line, "images:           %zu images in %zu classes\n", s.images,
                s.classes);
  out += line;
  std::snprintf(line, sizeof line, "total size:       %.1f MB (%llu bytes)\n",
                static_cast<double>(s.total_bytes) / 1e6,
                static_cast<unsigned long long>(s.total_bytes));
  out += line;
  std::snprintf(line, sizeof line, "mean resolution:  %.1f x %.1f px (W x H)\n", s.mean_width,
                s.mean_height);
  out += line;
  std::snprintf(line, sizeof line, "mean file size:   %.1f KB (1 KB = 1000 bytes)\n",
                s.mean_bytes / 1000.0);
  out += line;
  std::snprintf(line, sizeof line, "bits per pixel:   %.2f bpp (mean of 8 * bytes / pixels)\n",
                s.mean_bpp);
  out += line;
  std::snprintf(line, sizeof line,
                "coding:           baseline %zu images (%.1f %%), progressive %zu images "
                "(%.1f %%)\n",
                s.baseline, pct(s.baseline), s.progressive, pct(s.progressive));
  out += line;
  out += "subsampling:     ";
  bool first = true;
  for (const auto& [name, count] : s.subsampling) {
    std::snprintf(line, sizeof line, "%s %s %zu images (%.1f %%)", first ? "" : ",",
                  name.c_str(), count, pct(count));
    out += line;
    first = false;
  }
  out += "\n";
  if (s.unreadable > 0) {
    std::snprintf(line, sizeof line, "unreadable:       %zu files (header failed to parse)\n",
                  s.unreadable);
    out += line;
    for (const auto& e : s.unreadable_examples) out += "  " + e + "\n";
  }
  return out;
}

}  // namespace pipebench
