// Why this file exists: the shipped recipes are what every published figure was measured
// on, so rebuilding them (as operator pipelines from spec files) must not change a single
// output bit. The checksums below were recorded from the hand-written recipes of commit
// 84278b7, before the operator registry existed: FNV-1a 64 over the float32 output bytes of
// each recipe on photo-like JPEGs of several sizes, subsamplings and seeds (one sample at a
// time, rng = Rng::for_sample(seed 7, epoch 0, index i)). A mismatch means the recipe's
// output changed; if that is intended, say why in the commit and record the new values.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tests/test_data.h"
#include "transforms/recipes.h"

namespace pipebench {
namespace {

uint64_t fnv1a(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// Inputs: downscaling and upscaling paths, 4:2:0 / 4:4:4 / 4:2:2, baseline and progressive.
struct Input {
  int width, height;
  uint64_t seed;
  const char* subsampling;
  bool progressive;
};
constexpr Input kInputs[] = {
    {500, 375, 1, "4:2:0", false}, {375, 500, 2, "4:4:4", false}, {640, 480, 3, "4:2:2", true},
    {300, 260, 4, "4:2:0", false}, {1024, 683, 5, "4:2:0", false},
};

uint64_t recipe_checksum(const std::string& name) {
  auto recipe = build_recipe(name, 224);
  PipelineWorkspace ws(*recipe);
  std::vector<float> out(recipe->output_floats());
  uint64_t h = 0;
  for (size_t i = 0; i < std::size(kInputs); ++i) {
    const Input& in = kInputs[i];
    const auto jpeg = testing::make_jpeg(in.width, in.height, in.seed, 90, in.subsampling,
                                         in.progressive);
    for (uint64_t rep = 0; rep < 3; ++rep) {
      Rng rng = Rng::for_sample(7, 0, i * 3 + rep);
      recipe->run(jpeg, "golden.jpg", rng, ws, out.data());
      h = h * 31 + fnv1a(out.data(), out.size() * sizeof(float));
    }
  }
  return h;
}

const std::map<std::string, uint64_t> kGolden = {
    {"imagenet_train", 0x3b722dc619c3abe2ull},
    {"imagenet_val", 0xe9b1d8aedc65e952ull},
    {"imagenet_train_roi", 0x86603b5daf59fe1bull},
    {"casestudy", 0x6fcb94219f222ef6ull},
    {"casestudy_shifts", 0x6fcb94219f222ef6ull},
};

TEST(RecipeGolden, OutputsAreBitIdenticalToTheRecordedOnes) {
  for (const auto& [name, want] : kGolden) {
    const uint64_t got = recipe_checksum(name);
    EXPECT_EQ(got, want) << name << ": got 0x" << std::hex << got;
  }
}

}  // namespace
}  // namespace pipebench
