// Statistics of an ImageFolder dataset for `pipebench-data inspect`, over exactly the files
// pipebench loads (the same scanner, ImageFolder / folder_scan.h, so the counts agree by
// construction):
//   - the size distribution: p5 / p50 / p95 / max of megapixels and of file size;
//   - formats by content (a PNG named .jpg counts as png, and is listed as a mismatch);
//   - for JPEGs, the share of progressive files and of each chroma subsampling;
//   - the slowest files to decode: each file decoded once with TurboDecoder (full size,
//     the path pipebench's full decode takes; non-JPEGs through OpenCV imgcodecs), in
//     thread CPU ms (a preempted decode on a busy machine does not count), the slowest
//     decoded a second time and keeping the better time;
//   - files that fail to read, parse or decode, with the reason (DecodeError's message);
//   - the entries the scanner ignored, with the reason.
// With InspectOptions::decode = false only headers are read (no timings, and bad data
// after the header goes unnoticed).
//
// Errors: DatasetError naming the root when it is missing or holds no image file, and,
// when InspectOptions::require_good, when no file reads, parses and decodes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "datasets/folder_scan.h"

namespace pipebench {

struct InspectOptions {
  bool decode = true;         ///< decode every file (timings and a full check)
  size_t slowest = 5;         ///< files kept in DatasetStats::slowest
  bool require_good = true;   ///< throw DatasetError when no file is good
};

/// Percentiles by linear interpolation between the closest ranks (Hyndman and Fan 1996,
/// definition 7; numpy.percentile's default). All 0 for an empty set.
struct Distribution {
  double p5 = 0;
  double p50 = 0;
  double p95 = 0;
  double max = 0;
};

/// Percentiles of values (any order; copied and sorted).
Distribution distribution(std::vector<double> values);

struct FileTime {
  std::filesystem::path path;
  double ms = 0;           ///< decode, thread CPU milliseconds (the better of two runs)
  std::string format;      ///< by content
  double megapixels = 0;   ///< width * height / 1e6
};

struct BadFile {
  std::filesystem::path path;
  std::string reason;  ///< the error's message (it names the file and why)
};

struct DatasetStats {
  std::filesystem::path root;
  size_t files = 0;          ///< image files the scanner lists: what pipebench loads
  size_t images = 0;         ///< good files: read, header parsed (and decoded when decoding)
  size_t classes = 0;        ///< classes with at least one image file
  bool decoded = false;      ///< whether files were decoded (InspectOptions::decode)
  uint64_t total_bytes = 0;  ///< bytes of the good files
  double mean_width = 0;     ///< pixels, over good files
  double mean_height = 0;    ///< pixels
  double mean_bytes = 0;     ///< bytes per good file
  /// Bits per pixel, 8 * file bytes / (width * height), averaged over good files (a mean
  /// of per-image ratios, not a ratio of totals).
  double mean_bpp = 0;
  Distribution megapixels;   ///< width * height / 1e6 of good files
  Distribution file_kb;      ///< file size of good files, KB (1 KB = 1000 bytes)
  /// Files per format by content, over every listed file ("jpeg", "png", ... see
  /// image_format.h; "unknown" for no known signature, "unreadable" when it cannot be read).
  std::map<std::string, size_t> formats;
  /// Files whose content is another format than their extension says ("png named .jpg").
  std::vector<BadFile> extension_mismatch;
  size_t jpeg = 0;           ///< good JPEG files (the base of the three figures below)
  size_t baseline = 0;       ///< good JPEGs with a sequential (non-progressive) frame
  size_t progressive = 0;
  /// Good JPEGs per subsampling name ("4:2:0", "4:4:4", "gray", ... see JpegInfo).
  std::map<std::string, size_t> subsampling;
  std::vector<FileTime> slowest;  ///< slowest decodes first (empty when not decoding)
  size_t unreadable = 0;          ///< files - images
  std::vector<std::string> unreadable_examples;  ///< the first 5 "path: reason" lines
  std::vector<BadFile> bad;                      ///< every file counted in unreadable
  std::vector<IgnoredEntry> ignored;             ///< what the scanner passed over
};

/// Scans root as an ImageFolder and reads (and decodes) every file. Throws DatasetError.
DatasetStats inspect_dataset(const std::filesystem::path& root, const InspectOptions& options = {});

/// Multi-line human-readable report; every number carries its unit, mixes give count and
/// percentage. Lists of files (ignored, bad, mismatched) stop after `list_limit` lines
/// with a count of the rest.
std::string format_stats(const DatasetStats& stats, size_t list_limit = 20);

/// The `inspect --check` report: a summary line, then every bad file ("path: reason"), and
/// the ignored entries (which pipebench does not load, so they are not bad files).
std::string format_check(const DatasetStats& stats);

}  // namespace pipebench
