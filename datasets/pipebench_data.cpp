// pipebench-data: make, fetch and inspect datasets.
//
//   pipebench-data synthetic OUTDIR [--count N --classes K --width W --height H
//                  (or --min-width/--max-width/--min-height/--max-height) --quality Q
//                  --subsampling 4:2:0 --progressive --seed S]
//   pipebench-data photos OUTDIR [--scratch DIR --threads N]
//   pipebench-data inspect DIR [--check] [--headers-only] [--list]
//   pipebench-data presize IN OUT [--shorter-side N --quality Q --threads T --min-megapixels M]
//   pipebench-data pack IN OUT (--shard-size N | --shard-mib M) [--prefix NAME --seed S
//                  --no-shuffle]
//
// `inspect --list` lists a WebDataset shard folder too (open_dataset.h), as
// LABEL<TAB>shard.tar:member.
//
// Exit codes: 0 success; 2 bad usage or bad input (unknown flag, invalid value, missing or
// empty dataset, no readable image, presize's OUT holding something else), with one line on
// stderr naming the path or the flag; 1 any other failure (a download or unpack that fails,
// a disk error), and for `inspect --check`, `presize` and `pack`, at least one bad file
// (listed on stdout; the output is complete without it).
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "datasets/image_folder.h"
#include "datasets/inspect.h"
#include "datasets/open_dataset.h"
#include "datasets/pack.h"
#include "datasets/photos.h"
#include "datasets/presize.h"
#include "datasets/synthetic.h"

namespace {

namespace fs = std::filesystem;
using namespace pipebench;

constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;

int run_synthetic(const fs::path& out, SyntheticOptions o, const int* width, const int* height) {
  if (width) o.min_width = o.max_width = *width;
  if (height) o.min_height = o.max_height = *height;
  const auto paths = write_synthetic_dataset(out, o);
  uint64_t bytes = 0;
  for (const auto& p : paths) bytes += fs::file_size(p);
  std::printf("wrote %zu images in %d classes to %s: %.2f MB (%llu bytes), %d-%d x %d-%d px, "
              "quality %d, %s, %s, seed %llu\n",
              paths.size(), o.classes, out.string().c_str(), static_cast<double>(bytes) / 1e6,
              static_cast<unsigned long long>(bytes), o.min_width, o.max_width, o.min_height,
              o.max_height, o.quality, o.subsampling.c_str(),
              o.progressive ? "progressive" : "baseline",
              static_cast<unsigned long long>(o.seed));
  return 0;
}

int run_photos(const fs::path& out, fs::path scratch, int threads) {
  if (scratch.empty()) scratch = out / "photos-scratch";
  const auto roots = fetch_photo_packages(scratch, kPhotoPackages, std::cerr);
  const auto originals = find_photo_originals(roots, PhotoSetOptions{}.min_original_bytes);
  std::cerr << "found " << originals.size() << " distinct JPEG original(s) >= 100 KB\n";
  if (originals.empty())
    throw DatasetError(scratch.string() + ": no JPEG of 100 KB or more in the packages");
  PhotoSetOptions o;
  o.threads = threads;
  const PhotoSetSummary s = build_photo_sets(originals, out, o, std::cerr);
  std::printf("%s: %zu images in %zu classes, %.1f MB (%llu bytes)\n",
              (out / "photos-full").string().c_str(), s.full_images, s.full_classes,
              static_cast<double>(s.full_bytes) / 1e6,
              static_cast<unsigned long long>(s.full_bytes));
  std::printf("%s: %zu images in %zu classes, %.1f MB (%llu bytes)\n",
              (out / "photos-in").string().c_str(), s.in_images, s.in_classes,
              static_cast<double>(s.in_bytes) / 1e6, static_cast<unsigned long long>(s.in_bytes));
  if (!s.skipped.empty()) std::printf("skipped %zu original(s) that failed to decode\n", s.skipped.size());
  return 0;
}

// Every sample pipebench loads, in its order: "<label>\t<path>" (reads no image; a shard
// folder's "<label>\t<shard>:<member>").
int run_list(const fs::path& dir) {
  const auto source = open_dataset(dir, false);
  for (size_t i = 0; i < source->size(); ++i)
    std::printf("%d\t%s\n", source->label(i), source->name(i).c_str());
  return 0;
}

int run_inspect(const fs::path& dir, bool check, bool headers_only) {
  InspectOptions o;
  o.decode = !headers_only;
  o.require_good = !check;  // --check lists the bad files even when all are bad
  const DatasetStats s = inspect_dataset(dir, o);
  if (!check) {
    std::fputs(format_stats(s).c_str(), stdout);
    return 0;
  }
  std::fputs(format_check(s).c_str(), stdout);
  return s.bad.empty() ? 0 : kExitFailure;
}

// The presized copy; bad files are listed as inspect --check lists them (exit 1 if any).
int run_presize(const fs::path& in, const fs::path& out, const PresizeOptions& o) {
  std::ostringstream log;  // the bad files, listed on stdout below instead
  const PresizeResult r = presize_dataset(in, out, o, log);
  const PresizeManifest& m = r.manifest;
  std::printf("wrote %zu images to %s: shorter side %d px (%zu downscaled, %zu kept their size), "
              "JPEG quality %d, 4:2:0, baseline; %.2f MB from %.2f MB; %zu bad file(s) skipped\n",
              m.images, r.out.string().c_str(), m.shorter_side, m.downscaled,
              m.images - m.downscaled, m.quality, static_cast<double>(m.output_bytes) / 1e6,
              static_cast<double>(m.source_bytes) / 1e6, m.bad);
  if (m.min_pixels > 0)
    std::printf("large only: %zu images of at most %.2f MP copied byte for byte, %zu above it "
                "re-encoded\n", m.copied, static_cast<double>(m.min_pixels) / 1e6, m.images - m.copied);
  for (const auto& b : r.bad) {  // as inspect --check: the reason names the file already or not
    const bool named = b.reason.find(b.path.string()) != std::string::npos;
    std::printf("bad: %s%s%s\n", named ? "" : b.path.c_str(), named ? "" : ": ", b.reason.c_str());
  }
  return r.bad.empty() ? 0 : kExitFailure;
}

// Tar shards in the WebDataset layout; bad files listed on stdout (exit 1 if any).
int run_pack(const fs::path& in, const fs::path& out, const PackOptions& o) {
  std::ostringstream log;  // the bad files, listed on stdout below instead
  const PackResult r = pack_dataset(in, out, o, log);
  const PackManifest& m = r.manifest;
  uint64_t bytes = 0;
  for (const auto& s : m.shards) bytes += s.bytes;
  std::printf("wrote %zu images in %zu shards to %s: %s-%06d.tar .. %s-%06zu.tar, %.2f MB "
              "(%llu bytes) from %.2f MB of images; %s; %zu bad file(s) skipped\n",
              m.images, m.shards.size(), r.out.string().c_str(), m.prefix.c_str(), 0,
              m.prefix.c_str(), m.shards.size() - 1, static_cast<double>(bytes) / 1e6,
              static_cast<unsigned long long>(bytes), static_cast<double>(m.source_bytes) / 1e6,
              m.shuffle ? ("shuffled with seed " + std::to_string(m.seed)).c_str()
                        : "ImageFolder order",
              m.bad);
  for (const auto& b : r.bad) {
    const bool named = b.reason.find(b.path.string()) != std::string::npos;
    std::printf("bad: %s%s%s\n", named ? "" : b.path.c_str(), named ? "" : ": ", b.reason.c_str());
  }
  return r.bad.empty() ? 0 : kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pipebench-data: make, fetch, inspect, presize and pack datasets"};
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("pipebench-data: error: ") + e.what() + " (see --help)\n";
  });

  fs::path out_dir;
  SyntheticOptions syn;
  int width = 0, height = 0;
  auto* synthetic = app.add_subcommand("synthetic", "Write a synthetic photo-like JPEG dataset");
  synthetic->add_option("OUTDIR", out_dir, "Output root (ImageFolder layout)")->required();
  synthetic->add_option("--count", syn.count, "Images in total")->capture_default_str();
  synthetic->add_option("--classes", syn.classes, "Class directories")->capture_default_str();
  auto* w = synthetic->add_option("--width", width, "Image width, pixels (sets min and max)");
  auto* h = synthetic->add_option("--height", height, "Image height, pixels (sets min and max)");
  synthetic->add_option("--min-width", syn.min_width, "Minimum width, pixels")
      ->capture_default_str()->excludes(w);
  synthetic->add_option("--max-width", syn.max_width, "Maximum width, pixels")
      ->capture_default_str()->excludes(w);
  synthetic->add_option("--min-height", syn.min_height, "Minimum height, pixels")
      ->capture_default_str()->excludes(h);
  synthetic->add_option("--max-height", syn.max_height, "Maximum height, pixels")
      ->capture_default_str()->excludes(h);
  synthetic->add_option("--quality", syn.quality, "JPEG quality, 1..100")->capture_default_str();
  synthetic->add_option("--subsampling", syn.subsampling, "4:4:4, 4:2:2, 4:2:0, 4:4:0 or gray")
      ->capture_default_str();
  synthetic->add_flag("--progressive", syn.progressive, "Progressive JPEG (default baseline)");
  synthetic->add_option("--seed", syn.seed, "Random seed")->capture_default_str();

  fs::path photos_out, scratch;
  int threads = 0;
  auto* photos = app.add_subcommand(
      "photos", "Build OUTDIR/photos-full and OUTDIR/photos-in from Debian wallpaper packages");
  photos->add_option("OUTDIR", photos_out, "Output folder (e.g. data/)")->required();
  photos->add_option("--scratch", scratch, "Download/unpack folder (default OUTDIR/photos-scratch)");
  photos->add_option("--threads", threads, "Originals processed in parallel (0 = all cores)")
      ->capture_default_str();

  fs::path inspect_dir;
  bool check = false, headers_only = false, list = false;
  auto* inspect = app.add_subcommand(
      "inspect", "Print counts, size distribution, formats, JPEG mix, slowest decodes, bad files");
  inspect->add_option("DIR", inspect_dir, "Dataset root (ImageFolder layout)")->required();
  inspect->add_flag("--check", check,
                    "Decode every file and list the bad ones with reasons; exit 1 if any");
  inspect->add_flag("--headers-only", headers_only,
                    "Read headers only: no decode, no timings (faster on a large set)");
  inspect->add_flag("--list", list,
                    "Only list the samples pipebench loads, in order: label<TAB>path")
      ->excludes("--check")
      ->excludes("--headers-only");

  fs::path presize_in, presize_out;
  PresizeOptions pre;
  auto* presize = app.add_subcommand(
      "presize", "Write a copy of IN with every image's shorter side reduced to N px, as JPEG "
                 "(manifest presize.json written last)");
  presize->add_option("IN", presize_in, "Source dataset root (ImageFolder layout)")->required();
  presize->add_option("OUT", presize_out, "Output root (absent, empty or an earlier presize output)")
      ->required();
  presize->add_option("--shorter-side", pre.shorter_side,
                      "Shorter side after presizing, pixels (never upscaled)")
      ->capture_default_str()->check(CLI::Range(1, 65535));
  presize->add_option("--quality", pre.quality, "JPEG quality, 1..100 (baseline, 4:2:0)")
      ->capture_default_str()->check(CLI::Range(1, 100));
  presize->add_option("--threads", pre.threads, "Images converted in parallel (0 = all cores)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  double min_megapixels = 0;
  presize->add_option("--min-megapixels", min_megapixels,
                      "Presize only the images above M megapixels (width x height / 1e6); the "
                      "others are copied byte for byte (0: every image; else 1e-6 to 1e6)")
      ->capture_default_str()->check(CLI::Range(0.0, 1e6));

  fs::path pack_in, pack_out;
  PackOptions pk;
  bool no_shuffle = false;
  auto* pack = app.add_subcommand(
      "pack", "Write IN as WebDataset tar shards OUT/<prefix>-000000.tar, ... (<key>.<ext> + "
              "<key>.cls members; classes.txt; manifest pack.json written last)");
  pack->add_option("IN", pack_in, "Source dataset root (ImageFolder layout)")->required();
  pack->add_option("OUT", pack_out, "Output folder (absent, empty or an earlier pack output)")
      ->required();
  auto* shard_size = pack->add_option("--shard-size", pk.shard_size, "Images per shard")
                         ->check(CLI::PositiveNumber);
  auto* shard_mib = pack->add_option("--shard-mib", pk.shard_mib,
                                     "Start a new shard once this many MiB are written")
                        ->check(CLI::PositiveNumber);
  pack->add_option("--prefix", pk.prefix, "Shard name prefix (default: IN's folder name)");
  pack->add_option("--seed", pk.seed, "Shuffle seed")->capture_default_str();
  pack->add_flag("--no-shuffle", no_shuffle, "Keep ImageFolder order (default: shuffled)");

  if (argc > 1 && argv[1][0] != '-' && std::string_view(argv[1]) != "synthetic" &&
      std::string_view(argv[1]) != "photos" && std::string_view(argv[1]) != "inspect" &&
      std::string_view(argv[1]) != "presize" && std::string_view(argv[1]) != "pack") {
    std::cerr << "pipebench-data: error: unknown subcommand \"" << argv[1]
              << "\" (expected synthetic, photos, inspect, presize or pack; see --help)\n";
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the one-line reason
    return kExitBadInput;
  }

  try {
    if (*synthetic)
      return run_synthetic(out_dir, syn, w->count() ? &width : nullptr,
                           h->count() ? &height : nullptr);
    if (*photos) return run_photos(photos_out, scratch, threads);
    if (*inspect) return list ? run_list(inspect_dir) : run_inspect(inspect_dir, check, headers_only);
    if (*presize) {
      if (min_megapixels > 0 && min_megapixels < 1e-6) {
        std::fprintf(stderr, "pipebench-data: --min-megapixels: %g is below one pixel (1e-6)\n", min_megapixels);
        return 2;
      }
      pre.min_pixels = static_cast<uint64_t>(std::llround(min_megapixels * 1e6));
      return run_presize(presize_in, presize_out, pre);
    }
    if (*pack) {
      if (!shard_size->count() && !shard_mib->count())
        throw std::invalid_argument("pack: give --shard-size N (images per shard) or --shard-mib M");
      pk.shuffle = !no_shuffle;
      return run_pack(pack_in, pack_out, pk);
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "pipebench-data: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const DatasetError& e) {
    std::cerr << "pipebench-data: error: " << e.what() << "\n";
    return *photos ? kExitFailure : kExitBadInput;  // photos: a fetch or disk failure
  } catch (const std::exception& e) {
    std::cerr << "pipebench-data: error: " << e.what() << "\n";
    return kExitFailure;
  }
  return kExitFailure;
}
