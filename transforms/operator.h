// Operators: the per-sample steps of a pipeline (crop, flip, normalize, ...), each
// declared once with a parameter schema in the spirit of DALI's operator schema (name,
// type, default, valid range, doc), built from a spec (transforms/spec.h) and run by a
// Pipeline (transforms/pipeline.h).
//
// Data between operators (one sample, on one worker thread):
//   image   uint8 HWC, RGB (Image, transforms/image.h), the size varying per sample until
//           an operator fixes it (a crop or a resize to a fixed size);
//   tensor  float32 CHW, written straight into the sample's slot of the batch buffer by the
//           operator that converts the image (normalize, convert_color_yuv): collate in
//           place, no per-sample copy. Operators after it work on that tensor in place.
//
// Randomness: every draw comes from the Rng passed to apply() (Rng::for_sample(seed,
// epoch, index)), in operator order, so a sample's output depends only on its bytes and
// (seed, epoch, index), whatever the worker count.
//
// Errors: a factory throws SpecError (spec.h) for a parameter outside its schema; apply()
// throws std::invalid_argument or std::runtime_error with the reason (the Pipeline adds the
// file name and the operator's name).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "transforms/image.h"
#include "transforms/rng.h"

namespace pipebench {

/// The type a parameter takes in a spec.
enum class ParamType { kInt, kFloat, kBool, kString, kFloatList };

/// One declared parameter of an operator. Ranges are inclusive; for kFloatList they bound
/// every element, and list_size (when > 0) fixes the number of elements.
struct ParamSchema {
  std::string name;
  ParamType type = ParamType::kFloat;
  std::string default_text;        ///< as shown by --list-ops; empty = required
  double min = -1e300, max = 1e300;  ///< valid range (kInt, kFloat, kFloatList)
  std::vector<std::string> choices;  ///< valid values (kString); empty = any
  int list_size = 0;               ///< kFloatList: required length (0 = any, >= 1)
  /// kFloatList: names that stand for a list (normalize's "imagenet").
  std::vector<std::pair<std::string, std::vector<double>>> named_lists;
  std::string doc;
};

/// A parameter value after parsing and checking against its schema.
using ParamValue = std::variant<int64_t, double, bool, std::string, std::vector<double>>;

/// An operator's parameters by name, every declared one present (defaults filled in).
class OpParams {
 public:
  void set(const std::string& name, ParamValue v) { values_[name] = std::move(v); }
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  int64_t get_int(const std::string& name) const { return std::get<int64_t>(values_.at(name)); }
  double get_float(const std::string& name) const;  ///< kFloat (kInt is accepted)
  bool get_bool(const std::string& name) const { return std::get<bool>(values_.at(name)); }
  const std::string& get_string(const std::string& name) const {
    return std::get<std::string>(values_.at(name));
  }
  const std::vector<double>& get_list(const std::string& name) const {
    return std::get<std::vector<double>>(values_.at(name));
  }
  const std::map<std::string, ParamValue>& values() const { return values_; }

 private:
  std::map<std::string, ParamValue> values_;
};

/// Where an operator runs in the data path: per sample (decode, image, tensor), or on the
/// collated batch (batch operators: transforms/batch_op.h).
enum class OpStage { kDecode, kImage, kTensor, kBatch };

/// The shape of the data between two operators: -1 where it varies per sample.
struct DataShape {
  bool tensor = false;  ///< false: uint8 HWC image; true: float32 CHW tensor
  int channels = 3;
  int height = -1;
  int width = -1;
  bool fixed() const { return height > 0 && width > 0; }
};

/// For output_shape(): throws std::invalid_argument naming `op` when the data is already
/// the float32 tensor (an image operator placed after normalize / convert_color_yuv).
inline void require_image(const DataShape& in, const std::string& op) {
  if (in.tensor)
    throw std::invalid_argument(op + " works on images (uint8 HWC) and must come before "
                                "normalize / convert_color_yuv / to_dtype");
}

/// One sample flowing through the operators on one worker.
struct SampleData {
  Image image;              ///< the current image (uint8 HWC)
  Image scratch;            ///< a second buffer for operators that cannot work in place
  float* tensor = nullptr;  ///< the output slot (float32 CHW), set by the Pipeline
  DataShape shape;          ///< what image / tensor currently hold
};

/// Per-worker mutable state an operator needs (scratch buffers); one per operator per worker.
struct OpState {
  virtual ~OpState() = default;
};

class Operator {
 public:
  virtual ~Operator() = default;
  /// The registry name (snake_case of torchvision's class name).
  virtual const std::string& name() const = 0;
  virtual OpStage stage() const = 0;
  /// The shape after this operator given the shape before it. Throws std::invalid_argument
  /// with the reason when the input cannot be valid (a tensor where an image is needed, a
  /// fixed size smaller than the crop).
  virtual DataShape output_shape(const DataShape& in) const = 0;
  /// Runs on one sample. `state` is what make_state() returned, for this worker.
  virtual void apply(SampleData& sample, Rng& rng, OpState* state) const = 0;
  virtual std::unique_ptr<OpState> make_state() const { return nullptr; }
};

/// A crop whose window can be chosen from the image size alone (before decoding), so the
/// pipeline can decode only that window (ROI decode) and fold a following horizontal flip
/// into its resize. apply() == window() + finish() on the window's pixels.
class WindowOp : public Operator {
 public:
  /// The window of a height x width source, drawing from rng exactly as apply() does.
  virtual CropWindow window(int height, int width, Rng& rng) const = 0;
  /// The operator's output from `src`, the window's pixels only (possibly DCT-downscaled
  /// by a power of two), mirrored left-right when `mirror`, into `out`. `src` may be
  /// consumed (swapped with out when it is already the output: no copy per sample).
  virtual void finish(Image& src, Image& out, bool mirror) const = 0;
  /// Output side length (window ops produce size x size).
  virtual int size() const = 0;
  /// Whether the window may be decoded DCT-downscaled (the op resizes afterwards anyway).
  virtual bool scalable() const = 0;
};

}  // namespace pipebench
