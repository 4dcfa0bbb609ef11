// A whole per-sample pipeline on arbitrary bytes: every shipped recipe (transforms/recipes/,
// built once with crop size 64 and the contract's max_pixels), one chosen per input by its
// hash, run on the bytes as a loader worker runs a sample (Pipeline::run into a float
// buffer, one workspace per recipe reused across inputs, Rng seeded from the hash).
// Accepted: the documented errors about the input, DecodeError or std::runtime_error
// "FILE: OPERATOR: reason"; otherwise the output must be output_floats() finite values.
// fuzz_common.h has the limits; this is where an allocation that max_pixels does not bound
// (a resize of an extreme aspect ratio) shows as an out-of-memory finding.
#include <cmath>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_common.h"
#include "transforms/pipeline.h"
#include "transforms/recipes.h"

using namespace pipebench;

namespace {

struct Built {
  std::shared_ptr<const Pipeline> pipeline;
  std::unique_ptr<PipelineWorkspace> workspace;
  std::vector<float> out;
};

std::vector<Built>& recipes() {
  static std::vector<Built> built = [] {
    std::vector<Built> v;
    for (const auto& name : recipe_names()) {
      Built b;
      b.pipeline = build_recipe(name, 64, fuzz::decode_options());
      b.workspace = std::make_unique<PipelineWorkspace>(*b.pipeline);
      b.out.resize(b.pipeline->output_floats());
      v.push_back(std::move(b));
    }
    return v;
  }();
  return built;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  fuzz::apply_contract(argc, argv, 64 * 1024);
  std::fprintf(stderr, "fuzz_recipe: %zu recipes\n", recipes().size());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  const uint64_t h = fuzz::input_hash(bytes);
  auto& all = recipes();
  Built& r = all[h % all.size()];
  Rng rng(h);
  try {
    r.pipeline->run(bytes, "fuzz", rng, *r.workspace, r.out.data());
  } catch (const std::runtime_error& e) {  // DecodeError is one
    if (!fuzz::names_file(e, "fuzz")) throw;  // not about the input: a finding
    return 0;
  }
  for (float v : r.out) fuzz::require(std::isfinite(v), "a recipe wrote a non-finite value");
  return 0;
}
