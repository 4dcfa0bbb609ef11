// The text of `pipebench-data inspect` (format_stats) and `inspect --check` (format_check).
#include <cstdarg>
#include <cstdio>

#include "datasets/inspect.h"

namespace pipebench {
namespace {

// printf into a std::string (lines here are short; 512 bytes leaves room for long paths).
void addf(std::string& out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void addf(std::string& out, const char* fmt, ...) {
  char line[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  out += line;
}

double pct(size_t k, size_t n) { return n ? 100.0 * static_cast<double>(k) / n : 0.0; }

// "path: reason", without repeating the path when the reason already names it.
std::string file_line(const std::filesystem::path& path, const std::string& reason) {
  const std::string p = path.string();
  return reason.find(p) == std::string::npos ? p + ": " + reason : reason;
}

template <class List, class Line>
void add_list(std::string& out, const List& list, size_t limit, Line line) {
  size_t shown = 0;
  for (const auto& x : list) {
    if (shown++ == limit) break;
    out += "  " + line(x) + "\n";
  }
  if (list.size() > limit) addf(out, "  ... and %zu more\n", list.size() - limit);
}

void add_counts(std::string& out, const std::map<std::string, size_t>& counts, size_t base,
                const char* unit) {
  bool first = true;
  for (const auto& [name, count] : counts) {
    addf(out, "%s %s %zu %s (%.1f %%)", first ? "" : ",", name.c_str(), count, unit,
         pct(count, base));
    first = false;
  }
  out += "\n";
}

void add_sizes(std::string& out, const DatasetStats& s) {
  addf(out, "total size:       %.1f MB (%llu bytes)\n", static_cast<double>(s.total_bytes) / 1e6,
       static_cast<unsigned long long>(s.total_bytes));
  addf(out, "mean resolution:  %.1f x %.1f px (W x H)\n", s.mean_width, s.mean_height);
  addf(out, "megapixels:       p5 %.3f, p50 %.3f, p95 %.3f, max %.3f MP\n", s.megapixels.p5,
       s.megapixels.p50, s.megapixels.p95, s.megapixels.max);
  addf(out, "file size:        p5 %.1f, p50 %.1f, p95 %.1f, max %.1f KB\n", s.file_kb.p5,
       s.file_kb.p50, s.file_kb.p95, s.file_kb.max);
  addf(out, "mean file size:   %.1f KB (1 KB = 1000 bytes)\n", s.mean_bytes / 1000.0);
  addf(out, "bits per pixel:   %.2f bpp (mean of 8 * bytes / pixels)\n", s.mean_bpp);
}

void add_formats(std::string& out, const DatasetStats& s, size_t limit) {
  out += "formats:         ";
  add_counts(out, s.formats, s.files, "files");
  if (!s.extension_mismatch.empty()) {
    addf(out, "named as another format: %zu files (decoded by content)\n",
         s.extension_mismatch.size());
    add_list(out, s.extension_mismatch, limit,
             [](const BadFile& b) { return b.path.string() + ": " + b.reason; });
  }
  if (s.jpeg == 0) return;
  addf(out, "coding:           baseline %zu images (%.1f %%), progressive %zu images (%.1f %%) "
            "of %zu JPEGs\n",
       s.baseline, pct(s.baseline, s.jpeg), s.progressive, pct(s.progressive, s.jpeg), s.jpeg);
  out += "subsampling:     ";
  add_counts(out, s.subsampling, s.jpeg, "images");
}

void add_ignored(std::string& out, const DatasetStats& s, size_t limit) {
  if (s.ignored.empty()) return;
  addf(out, "ignored:          %zu entries (not loaded by pipebench)\n", s.ignored.size());
  add_list(out, s.ignored, limit,
           [](const IgnoredEntry& e) { return e.path.string() + ": " + e.reason; });
}

void add_bad(std::string& out, const DatasetStats& s, size_t limit) {
  if (s.bad.empty()) return;
  addf(out, "unreadable:       %zu files (failed to %s)\n", s.bad.size(),
       s.decoded ? "read, parse or decode" : "read or parse the header");
  add_list(out, s.bad, limit, [](const BadFile& b) { return file_line(b.path, b.reason); });
}

}  // namespace

std::string format_stats(const DatasetStats& s, size_t list_limit) {
  std::string out;
  out += "dataset:          " + s.root.string() + "\n";
  addf(out, "files:            %zu image files in %zu classes (what pipebench loads)\n", s.files,
       s.classes);
  addf(out, "images:           %zu images in %zu classes (%s), %zu unreadable\n", s.images,
       s.classes, s.decoded ? "read and decoded" : "header read", s.unreadable);
  if (s.images > 0) add_sizes(out, s);
  add_formats(out, s, list_limit);
  if (!s.slowest.empty()) {
    out += "slowest decodes:  (TurboDecoder, full size, thread CPU time, best of 2 runs)\n";
    for (const FileTime& t : s.slowest) {
      addf(out, "  %8.2f ms  ", t.ms);
      out += t.path.string();
      addf(out, " (%s, %.2f MP)\n", t.format.c_str(), t.megapixels);
    }
  }
  add_ignored(out, s, list_limit);
  add_bad(out, s, list_limit);
  return out;
}

std::string format_check(const DatasetStats& s) {
  std::string out;
  addf(out, "checked %zu image files: %zu good, %zu bad%s in ", s.files, s.images,
       s.bad.size(), s.decoded ? "" : " (headers only)");
  out += s.root.string() + "\n";
  for (const BadFile& b : s.bad) out += "bad: " + file_line(b.path, b.reason) + "\n";
  for (const IgnoredEntry& e : s.ignored)
    out += "ignored: " + e.path.string() + ": " + e.reason + "\n";
  return out;
}

}  // namespace pipebench
