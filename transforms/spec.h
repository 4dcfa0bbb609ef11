// Pipeline specs: a user's chain of stages in YAML (parsed by yaml-cpp, which gives line
// and column marks), from a file or inline on the command line (YAML flow style); the same
// grammar either way:
//
//   # the long form (a map)                   # the short form: the operators alone
//   name: my_pipeline                          [decode, {random_resized_crop: {size: 176}},
//   decode: {mode: auto}                        horizontal_flip, normalize]
//   transforms:
//     - random_resized_crop: {size: 176}
//     - horizontal_flip                        # an operator without parameters
//     - normalize: {mean: imagenet, std: imagenet}
//   collate: {dtype: float32, layout: NCHW}
//   batch:                                     # batch operators, after collate
//     - mixup_cutmix: {mixup_alpha: 0.8, cutmix_alpha: 1.0}
//     - label_smoothing: {smoothing: 0.1}
//   variants:                                  # faster recipes doing the same work
//     - {recipe: imagenet_train_roi, fixes: decode}
//
// Operators and parameters are the registry's (registry.h; `pipebench --list-ops`):
// torchvision's names in snake_case with torchvision's defaults. `decode` may also stand
// first in the operator list; without one, decode is {mode: full}. Batch operators may
// also end the operator list (the one-line form has no `batch:` key); a per-sample operator
// after a batch operator is an error (the batch operator runs after collate). Every parameter is
// checked against its schema here; combinations (a crop larger than what precedes it, an
// ROI decode with no crop to fuse) are checked when the Pipeline is built.
//
// Errors: SpecError, whose what() is one line "SOURCE:LINE:COLUMN: <what is wrong>, got
// <value>" (1-based line and column; SOURCE is the file, or "--pipeline" inline), naming
// the operator, the valid range or values, and for an unknown operator the nearest names.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "transforms/operator.h"

namespace pipebench {

class SpecError : public std::invalid_argument {
 public:
  SpecError(const std::string& source, int line, int column, const std::string& what);
  const std::string& source() const { return source_; }
  int line() const { return line_; }      ///< 1-based; 0 when unknown
  int column() const { return column_; }  ///< 1-based; 0 when unknown

 private:
  std::string source_;
  int line_, column_;
};

/// Where a spec element stands in its source (for error messages).
struct SpecMark {
  std::string source;
  int line = 0, column = 0;  ///< 1-based
};

struct OpSpec {
  std::string name;
  OpParams params;  ///< every declared parameter, defaults filled in
  SpecMark mark;
};

/// `variants: [{recipe: imagenet_train_roi, fixes: decode}]`: a shipped recipe that does
/// this pipeline's work faster in one stage (read, decode, transform, collate, batch_ops).
struct SpecVariant {
  std::string recipe;
  std::string fixes;
};

struct PipelineSpec {
  std::string name = "custom";   ///< the spec's `name`, a recipe's name, or the file's stem
  std::string source;            ///< file path, "--pipeline", or "recipe:NAME"
  std::string decode_mode = "full";  ///< full | scaled | roi | auto
  SpecMark decode_mark;
  std::vector<OpSpec> transforms;    ///< per-sample operators, in order
  std::string collate_dtype = "float32";  ///< float32 | uint8 (transforms/pipeline_output.h)
  std::string collate_layout = "NCHW";    ///< NCHW | NHWC
  /// host | device: where a uint8 batch's flip and mixing finish (pipeline_output.h)
  std::string collate_finish = "host";
  SpecMark collate_mark;                  ///< where `collate:` stands; line 0 without one
  std::vector<OpSpec> batch;         ///< batch operators (transforms/batch_op.h), in order
  /// Faster variants of this pipeline (shipped recipes) and the stage each one speeds up:
  /// what pipebench-report compares it with when that stage dominates.
  std::vector<SpecVariant> variants;

  /// The resolved spec in YAML flow style on one line, every parameter written out: what
  /// the run's JSON context records, and a valid --pipeline value that rebuilds it.
  std::string to_yaml() const;
};

/// Parses YAML text. `source` names it in errors. default_size fills crop operators'
/// `size` when the spec omits it (pipebench's --size). Throws SpecError.
PipelineSpec parse_pipeline_spec(const std::string& text, const std::string& source,
                                 int default_size = 224);

/// parse_pipeline_spec on a file's contents; the name defaults to the file's stem. Throws
/// SpecError naming the file when it cannot be read.
PipelineSpec load_pipeline_spec(const std::filesystem::path& file, int default_size = 224);

/// Checks that the operators can run with the spec's collate dtype and layout
/// (transforms/pipeline_output.h); parse_pipeline_spec and Pipeline::build call it. Throws
/// SpecError at the offending operator, naming the collate's line and the way out, for:
///   dtype uint8   a tensor-stage operator (to_dtype, convert_color_yuv, scale,
///                 random_erasing, a normalize followed by another operator): they need the
///                 float32 tensor, which a uint8 batch has only after the copy; a normalize
///                 that ends the operators is allowed (it moves after the copy);
///                 a batch operator that mixes pixels (mixup, cutmix, mixup_cutmix), unless
///                 finish is device: on the CPU pipebench mixes float32 batches only
///                 (label_smoothing, labels only, runs);
///   layout NHWC   cutmix, mixup_cutmix (their boxes are cut from NCHW batches), unless
///                 finish is device;
///   finish device anything but dtype uint8 with layout NHWC (what the device operators
///                 take: transforms/batch_ops_device.h), at the collate's line.
void check_collate(const PipelineSpec& spec);

/// --pipeline=VALUE: a file when VALUE names one (or ends in .yaml / .yml), else inline
/// YAML. Throws SpecError.
PipelineSpec pipeline_spec_from_flag(const std::string& value, int default_size = 224);

}  // namespace pipebench
