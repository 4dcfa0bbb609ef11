// random_erasing: torchvision RandomErasing(p, scale, ratio, value) on the float32 CHW
// tensor (after normalize, as in torchvision's and timm's recipes): with probability p, a
// box (erasing.h erasing_box) set to `value`: a number, one per channel, or "random"
// (per-element N(0, 1), timm's mode "pixel"). Draw order: the p coin, the box's tries, then
// the random values.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "transforms/erasing.h"
#include "transforms/registry.h"

namespace pipebench {
namespace {

class RandomErasingOp final : public Operator {
 public:
  RandomErasingOp(double p, std::vector<double> scale, std::vector<double> ratio, std::vector<float> value)
      : p_(p), scale_(std::move(scale)), ratio_(std::move(ratio)), value_(std::move(value)) {}
  const std::string& name() const override {
    static const std::string n = "random_erasing";
    return n;
  }
  OpStage stage() const override { return OpStage::kTensor; }
  DataShape output_shape(const DataShape& in) const override {
    if (!in.tensor)
      throw std::invalid_argument("random_erasing works on the tensor: put it after normalize (as torchvision does)");
    if (!value_.empty() && value_.size() != 1 && static_cast<int>(value_.size()) != in.channels)
      throw std::invalid_argument("random_erasing: value has " + std::to_string(value_.size()) +
                                  " entries; the tensor has " + std::to_string(in.channels) + " channels");
    return in;
  }
  void apply(SampleData& s, Rng& rng, OpState*) const override {
    if (!rng.bernoulli(p_)) return;
    const CropWindow box =
        erasing_box(s.shape.height, s.shape.width, scale_[0], scale_[1], ratio_[0], ratio_[1], rng);
    if (box.width == 0) return;  // ten tries found no box that fits: unchanged, as torchvision
    if (value_.empty()) {
      erase_random(s.tensor, s.shape.channels, s.shape.height, s.shape.width, box, rng);
    } else {
      erase(s.tensor, s.shape.channels, s.shape.height, s.shape.width, box, value_);
    }
  }

 private:
  double p_;
  std::vector<double> scale_, ratio_;
  std::vector<float> value_;  // empty: "random"
};

std::vector<double> ordered_pair(const std::vector<double>& v, const char* name) {
  if (v[0] > v[1])
    throw std::invalid_argument(std::string("random_erasing: ") + name + " must be [min, max] with min <= max, got [" +
                                std::to_string(v[0]) + ", " + std::to_string(v[1]) + "]");
  return v;
}

}  // namespace

void register_erasing_ops(OpRegistry& r) {
  r.add({"random_erasing", OpStage::kTensor, "RandomErasing",
         "with probability p, a random box of the tensor (area fraction `scale`, aspect `ratio`) "
         "set to `value` (a number, one per channel, or random: per-element N(0, 1))",
         {{"p", ParamType::kFloat, "0.5", 0, 1, {}, 0, {}, "probability a sample is erased"},
          {"scale", ParamType::kFloatList, "[0.02, 0.33]", 0, 1, {}, 2, {}, "area fraction range"},
          {"ratio", ParamType::kFloatList, "[0.3, 3.3]", 1e-6, 1e6, {}, 2, {}, "aspect ratio range, log-uniform"},
          {"value", ParamType::kFloatList, "0", -1e6, 1e6, {}, 0, {{"random", {}}},
           "fill: a number, one per channel, or random"}},
         {"{p: 1.0}", "{p: 1.0, value: random}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           const auto& v = p.get_list("value");
           return std::make_unique<RandomErasingOp>(
               p.get_float("p"), ordered_pair(p.get_list("scale"), "scale"),
               ordered_pair(p.get_list("ratio"), "ratio"), std::vector<float>(v.begin(), v.end()));
         }});
}

}  // namespace pipebench
