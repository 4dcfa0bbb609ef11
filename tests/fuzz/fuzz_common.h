// Shared by the libFuzzer harnesses of tests/fuzz/: the per-input resource contract, the
// decode limit that implies it, and small helpers.
//
// The contract (issue 15: "the memory limit per input is part of the contract"). Every
// harness decodes with DecodeOptions::max_pixels = kMaxPixels (2048 x 2048) and runs
// under these libFuzzer limits, which apply_contract() puts in front of the command line
// (a flag given explicitly still wins, libFuzzer keeps the last):
//
//   -malloc_limit_mb=64   no single allocation above kBytesPerPixel x kMaxPixels = 64 MiB.
//                         16 bytes per allowed pixel covers what a decode of the largest
//                         accepted image legitimately holds at once: the RGB output
//                         (3 B/px, 12 B/px for a 2x DCT upscale), a CMYK intermediate
//                         (4 B/px), a progressive file's coefficients (2 B/px per component,
//                         one allocation per component). More is an unbounded allocation:
//                         memory that max_pixels does not bound (issue 15 defect 2, 13 GB for a
//                         65000 x 1 image, is one).
//   -rss_limit_mb=2048    the whole process, ASan's shadow memory and quarantine included.
//   -timeout=10           seconds per input (ASan + UBSan builds run ~2-3x slower than
//                         Release; the slowest legitimate input, a 4 MP progressive decode
//                         plus a recipe, takes well under 1 s).
//   -max_len=N            per harness: 64 KiB for images, 8 KiB for specs, 16 KiB for JSON.
//
// Outcomes: a harness accepts only the documented error type of the API it calls
// (DecodeError, SpecError, ReportError, and for a pipeline run the "FILE: OPERATOR:
// reason" std::runtime_error). Anything else escaping, a wrong output shape, a non-finite
// tensor value, a sanitizer report, a leak, a timeout or a limit above is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "transforms/image.h"
#include "transforms/jpeg_decode.h"

namespace pipebench::fuzz {

inline constexpr int64_t kMaxPixels = int64_t{2048} * 2048;
inline constexpr int64_t kBytesPerPixel = 16;
inline constexpr int kMallocLimitMb = static_cast<int>(kBytesPerPixel * kMaxPixels >> 20);
inline constexpr int kRssLimitMb = 2048;
inline constexpr int kTimeoutS = 10;

/// Decode options of every harness: max_pixels = kMaxPixels.
DecodeOptions decode_options();

/// Call from LLVMFuzzerInitialize: puts the contract's flags (and -max_len=max_len) right
/// after argv[0], so that the command line's own flags override them.
void apply_contract(int* argc, char*** argv, size_t max_len);

/// FNV-1a 64 of the input: parameters (windows, scales, which recipe) drawn from the
/// bytes without consuming any, so seeds stay plain image files.
uint64_t input_hash(std::span<const uint8_t> bytes);

/// Aborts with a message (a finding) when `ok` is false.
void require(bool ok, const char* what);

/// Checks a decoded image: 3 channels, the given size, and storage for all its bytes.
void require_image(const Image& image, int width, int height, const char* backend);

/// True when e.what() starts with "<file>: ": the documented form of pipebench's errors
/// about one input ("FILE: OPERATOR: reason", DecodeError's "FILE: reason: detail").
bool names_file(const std::exception& e, std::string_view file);

}  // namespace pipebench::fuzz
