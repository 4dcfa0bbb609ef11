// The operator registry: every operator pipebench can run, with its parameter schema and
// a factory. --list-ops and docs/operators.md's operator table are printed from it; the spec parser
// checks parameters against it. Operators register themselves: transforms/ops/<family>.cpp
// defines `void register_<family>_ops(OpRegistry&)`, and the build calls every such
// function it finds (CMake writes the list), so adding an operator is its file pair and
// its test, nothing else.
//
// Errors: make() gets checked parameters (spec.h fills defaults and checks ranges);
// factories may still throw SpecError for combinations a schema cannot state.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "transforms/batch_op.h"
#include "transforms/jpeg_decode.h"
#include "transforms/operator.h"

namespace pipebench {

/// What a factory may need beyond the operator's own parameters.
struct OpBuildContext {
  int default_size = 224;  ///< --size: the default of crop operators' `size`
  DecodeOptions decode;    ///< limits for decoders
};

struct OpSchema {
  std::string name;         ///< e.g. "random_resized_crop"
  OpStage stage = OpStage::kImage;
  std::string torchvision;  ///< the torchvision.transforms class it follows, or ""
  std::string doc;          ///< one line
  std::vector<ParamSchema> params;
  /// Parameter sets (YAML maps) that BM_Transform/<name>/<key>:<value>... measures; empty:
  /// one case at the defaults.
  std::vector<std::string> bench_examples;
  /// Per-sample operators (stage kImage, kTensor); null for batch operators.
  std::function<std::unique_ptr<Operator>(const OpParams&, const OpBuildContext&)> make;
  /// Batch operators (stage kBatch) only.
  std::function<std::unique_ptr<BatchOperator>(const OpParams&, const OpBuildContext&)> make_batch;
};

class OpRegistry {
 public:
  /// Every registered operator (built on first use).
  static const OpRegistry& instance();

  void add(OpSchema schema);
  /// The schema of `name`, or nullptr.
  const OpSchema* find(std::string_view name) const;
  /// Up to `n` registered names closest to `name` (edit distance), for "did you mean".
  std::vector<std::string> nearest(std::string_view name, size_t n = 3) const;
  const std::vector<OpSchema>& all() const { return ops_; }
  /// --list-ops: every operator, its parameters, types, defaults and valid ranges.
  std::string describe() const;
  /// README.md's table: torchvision class -> pipebench operator (Markdown).
  std::string markdown_table() const;

 private:
  std::vector<OpSchema> ops_;
};

/// "int", "float", "bool", "string", "list of N floats".
std::string param_type_name(const ParamSchema& p);
/// The valid values of p, e.g. "[0, 1]" or "one of nearest, bilinear".
std::string param_range_text(const ParamSchema& p);

/// Registers every operator family of transforms/ops (the generated ops_index.cpp).
void register_all_ops(OpRegistry& registry);

}  // namespace pipebench
