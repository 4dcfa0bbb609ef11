#include "tests/fuzz/fuzz_common.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace pipebench::fuzz {

DecodeOptions decode_options() {
  DecodeOptions o;
  o.max_pixels = kMaxPixels;
  return o;
}

void apply_contract(int* argc, char*** argv, size_t max_len) {
  // Kept alive for the process: libFuzzer reads argv after LLVMFuzzerInitialize returns.
  static std::vector<std::string> flags = {
      "-malloc_limit_mb=" + std::to_string(kMallocLimitMb),
      "-rss_limit_mb=" + std::to_string(kRssLimitMb),
      "-timeout=" + std::to_string(kTimeoutS),
      "-max_len=" + std::to_string(max_len),
  };
  static std::vector<char*> args;
  args.assign(*argv, *argv + 1);
  for (auto& f : flags) args.push_back(f.data());
  args.insert(args.end(), *argv + 1, *argv + *argc);
  args.push_back(nullptr);
  *argc = static_cast<int>(args.size()) - 1;
  *argv = args.data();
}

uint64_t input_hash(std::span<const uint8_t> bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz finding: %s\n", what);
  std::abort();
}

void require_image(const Image& image, int width, int height, const char* backend) {
  if (image.channels == 3 && image.width == width && image.height == height &&
      image.data.size() >= image.size_bytes())
    return;
  std::fprintf(stderr, "fuzz finding: %s gave %d x %d x %d (%zu bytes), expected %d x %d x 3\n",
               backend, image.height, image.width, image.channels, image.data.size(), height,
               width);
  std::abort();
}

bool names_file(const std::exception& e, std::string_view file) {
  const std::string_view what = e.what();
  return what.size() > file.size() + 1 && what.substr(0, file.size()) == file &&
         what[file.size()] == ':';
}

}  // namespace pipebench::fuzz
