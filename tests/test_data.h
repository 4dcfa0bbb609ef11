// Shared fixtures for the tests: scratch directories and synthetic JPEGs made on the fly
// (datasets/synthetic.h), so no test depends on files outside the build.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "datasets/synthetic.h"
#include "transforms/operator.h"

namespace pipebench::testing {

/// A fresh, empty directory under the system temp dir, unique per process and name.
std::filesystem::path scratch_dir(const std::string& name);

/// The pixel kernels' AVX-512 paths run on this CPU (transforms/x86_avx512.h). Where they
/// do not, "SIMD" runs the scalar path, and a SIMD-against-scalar test would compare the
/// scalar path with itself: such tests GTEST_SKIP with kNoSimdPath instead.
bool simd_path_available();
inline constexpr const char* kNoSimdPath =
    "this CPU has no AVX-512 (F, BW, VL, DQ): the SIMD path is the scalar one, nothing to compare";

/// One photo-like JPEG in memory.
std::vector<uint8_t> make_jpeg(int width, int height, uint64_t seed = 1, int quality = 90,
                               const std::string& subsampling = "4:2:0",
                               bool progressive = false);

/// A synthetic ImageFolder tree under scratch_dir(name); returns its root.
std::filesystem::path make_dataset(const std::string& name, const SyntheticOptions& options);

/// One per-sample operator built from a one-operator spec as a user writes it, e.g.
/// "{center_crop: {size: 16}}". Throws what the spec parser or the factory throws
/// (SpecError, std::invalid_argument).
std::unique_ptr<Operator> make_op(const std::string& op_yaml);
/// `op` alone (no decode) on a copy of `in` (uint8 HWC), drawing from Rng(seed), with a
/// fresh state; returns the image it leaves.
Image run_op(const Operator& op, const Image& in, uint64_t seed = 1);
Image run_op(const std::string& op_yaml, const Image& in, uint64_t seed = 1);

/// The whole file at p (datasets/file_io.h read_file; throws DatasetError naming p).
std::vector<uint8_t> file_bytes(const std::filesystem::path& p);
/// Writes bytes to p, creating its folders (datasets/file_io.h write_file).
void put_file(const std::filesystem::path& p, const std::vector<uint8_t>& bytes);
void put_file(const std::filesystem::path& p, std::string_view text);

/// Runs a shell command and returns its stdout; a non-zero exit fails the calling test
/// (EXPECT, naming the command).
std::string shell_output(const std::string& command);

/// PSNR in dB between two equally sized uint8 buffers (infinity when identical).
double psnr(const uint8_t* a, const uint8_t* b, size_t n);

}  // namespace pipebench::testing
