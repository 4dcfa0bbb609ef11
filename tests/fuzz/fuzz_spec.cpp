// The pipeline-spec parser on arbitrary text (transforms/spec.h; yaml-cpp underneath), and
// what it lets through: parse_pipeline_spec, then
//   - the round trip the run's JSON relies on: to_yaml() parses back to the same spec
//     (spec.h: "a valid --pipeline value that rebuilds it");
//   - Pipeline::build, and the built pipeline run on a fixed 48 x 40 photo-like JPEG twice
//     (a batch of 2 with 2 classes), then its batch operators on that batch. Only specs
//     whose integer parameters are all <= 256 run: a run's memory and time grow with the
//     sizes a spec asks for ({center_crop: {size: 3802}} is a 347 MB batch), which are the
//     spec author's choice, not untrusted input; the schema checks of larger values are
//     still parsed and built.
// Accepted: SpecError from parse/build, and from run() the documented "FILE: OPERATOR:
// reason" error about the image (an image smaller than a crop without padding, say).
// Anything else, a failed round trip or a non-finite tensor value is a finding.
// fuzz_common.h has the limits.
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "datasets/synthetic.h"
#include "tests/fuzz/fuzz_common.h"
#include "transforms/pipeline.h"
#include "transforms/spec.h"

using namespace pipebench;

namespace {

constexpr const char* kImage = "fixed.jpg";

const std::vector<uint8_t>& fixed_jpeg() {
  static const std::vector<uint8_t> jpeg = [] {
    const auto rgb = render_synthetic_rgb(48, 40, 7);
    return encode_jpeg(rgb.data(), 48, 40, 90, "4:2:0", false);
  }();
  return jpeg;
}

/// Every integer parameter (sizes, kernel sizes, counts) within [-256, 256].
bool small_sizes(const PipelineSpec& spec) {
  for (const auto* ops : {&spec.transforms, &spec.batch}) {
    for (const OpSpec& op : *ops) {
      for (const auto& [name, value] : op.params.values()) {
        if (const auto* v = std::get_if<int64_t>(&value); v && (*v > 256 || *v < -256)) return false;
      }
    }
  }
  return true;
}

void require_round_trip(const PipelineSpec& spec) {
  const std::string yaml = spec.to_yaml();
  try {
    const PipelineSpec again = parse_pipeline_spec(yaml, "roundtrip", 32);
    if (again.to_yaml() == yaml) return;
    std::fprintf(stderr, "to_yaml not stable:\n  %s\n  %s\n", yaml.c_str(), again.to_yaml().c_str());
  } catch (const SpecError& e) {
    std::fprintf(stderr, "to_yaml does not parse back: %s\n  %s\n", e.what(), yaml.c_str());
  }
  fuzz::require(false, "PipelineSpec::to_yaml round trip");
}

/// Runs the pipeline on two samples and its batch operators on them.
void run_built(const Pipeline& p) {
  PipelineWorkspace ws(p);
  const size_t n = p.output_floats();
  std::vector<float> batch(2 * n);
  for (int i = 0; i < 2; ++i) {
    Rng rng(static_cast<uint64_t>(i + 1));
    try {
      p.run(fixed_jpeg(), kImage, rng, ws, batch.data() + i * n);
    } catch (const std::runtime_error& e) {
      if (!fuzz::names_file(e, kImage)) throw;
      return;
    }
  }
  const auto shape = p.output_shape();
  const int32_t labels[2] = {0, 1};
  std::vector<float> soft(4);
  BatchData b;
  b.data = batch.data();
  b.size = 2;
  b.channels = shape[0];
  b.height = shape[1];
  b.width = shape[2];
  b.labels = labels;
  b.soft_labels = soft.data();
  b.num_classes = 2;
  Rng rng(3);
  p.run_batch(b, rng);
  // A uint8 spec writes bytes into the float buffer (pipeline.h run()): no floats to check.
  if (p.output().dtype == SampleDtype::kFloat32)
    for (float v : batch) fuzz::require(std::isfinite(v), "a spec's pipeline wrote a non-finite value");
  for (float v : soft) fuzz::require(std::isfinite(v), "a batch operator wrote a non-finite label");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  fuzz::apply_contract(argc, argv, 8 * 1024);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  PipelineSpec spec;
  try {
    spec = parse_pipeline_spec(text, "fuzz", 32);
  } catch (const SpecError&) {
    return 0;
  }
  require_round_trip(spec);
  std::shared_ptr<const Pipeline> pipeline;
  try {
    pipeline = Pipeline::build(spec, fuzz::decode_options());
  } catch (const SpecError&) {
    return 0;
  }
  if (small_sizes(spec)) run_built(*pipeline);
  return 0;
}
