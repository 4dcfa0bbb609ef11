#include "tests/test_data.h"

#include "transforms/x86_avx512.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <limits>

#include "datasets/file_io.h"
#include "transforms/registry.h"
#include "transforms/spec.h"

namespace pipebench::testing {

std::unique_ptr<Operator> make_op(const std::string& op_yaml) {
  const auto spec = parse_pipeline_spec("[" + op_yaml + "]", "test");
  const auto& o = spec.transforms.at(0);
  return OpRegistry::instance().find(o.name)->make(o.params, {});
}

Image run_op(const Operator& op, const Image& in, uint64_t seed) {
  SampleData s;
  s.image = in;
  auto state = op.make_state();
  Rng rng(seed);
  op.apply(s, rng, state.get());
  return s.image;
}

Image run_op(const std::string& op_yaml, const Image& in, uint64_t seed) {
  return run_op(*make_op(op_yaml), in, seed);
}

bool simd_path_available() {
#ifdef PB_X86_AVX512
  return detail::cpu_has_avx512();
#else
  return false;
#endif
}

namespace {
// This process's scratch folder, removed when the process exits normally (a crashed test
// leaves it for inspection).
struct ScratchRoot {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("pipebench-test-" + std::to_string(::getpid()));
  ~ScratchRoot() {
    std::error_code ec;
    if (::getpid() == owner) std::filesystem::remove_all(path, ec);  // not in a forked child
  }
  pid_t owner = ::getpid();
};
const std::filesystem::path& scratch_root() {
  static ScratchRoot root;
  return root.path;
}
}  // namespace

std::filesystem::path scratch_dir(const std::string& name) {
  auto dir = scratch_root() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::vector<uint8_t> make_jpeg(int width, int height, uint64_t seed, int quality,
                               const std::string& subsampling, bool progressive) {
  auto rgb = render_synthetic_rgb(width, height, seed);
  return encode_jpeg(rgb.data(), width, height, quality, subsampling, progressive);
}

std::filesystem::path make_dataset(const std::string& name, const SyntheticOptions& options) {
  auto root = scratch_dir(name);
  write_synthetic_dataset(root, options);
  return root;
}

double psnr(const uint8_t* a, const uint8_t* b, size_t n) {
  double se = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    se += d * d;
  }
  if (se == 0) return std::numeric_limits<double>::infinity();
  const double mse = se / static_cast<double>(n);
  return 10.0 * std::log10(255.0 * 255.0 / mse);
}

std::vector<uint8_t> file_bytes(const std::filesystem::path& p) {
  std::vector<uint8_t> b;
  read_file(p, b);
  return b;
}

void put_file(const std::filesystem::path& p, const std::vector<uint8_t>& bytes) {
  write_file(p, bytes.data(), bytes.size());
}

void put_file(const std::filesystem::path& p, std::string_view text) {
  write_file(p, reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

std::string shell_output(const std::string& command) {
  std::string out;
  FILE* f = ::popen(command.c_str(), "r");
  if (!f) {
    ADD_FAILURE() << "cannot run: " << command;
    return out;
  }
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  EXPECT_EQ(::pclose(f), 0) << command;
  return out;
}

}  // namespace pipebench::testing
