// random_mask: the case study's RandomMask(ratio) on a uint8 image (casestudy.h): each
// pixel is picked with probability `ratio`, the picks are dilated to their 4 neighbours
// (`dilation`: conv, the study's convolution; shifts, its fix; opencv, cv::dilate), and
// every pixel under the dilated mask becomes 0.
#include <stdexcept>

#include "transforms/casestudy.h"
#include "transforms/registry.h"

namespace pipebench {
namespace {

struct MaskState final : OpState {
  MaskScratch scratch;
};

class RandomMaskOp final : public Operator {
 public:
  RandomMaskOp(double ratio, DilationMethod method) : ratio_(ratio), method_(method) {}
  const std::string& name() const override {
    static const std::string n = "random_mask";
    return n;
  }
  OpStage stage() const override { return OpStage::kImage; }
  DataShape output_shape(const DataShape& in) const override {
    require_image(in, name());
    return in;
  }
  void apply(SampleData& s, Rng& rng, OpState* state) const override {
    random_mask(s.image, ratio_, method_, rng, static_cast<MaskState*>(state)->scratch);
  }
  std::unique_ptr<OpState> make_state() const override { return std::make_unique<MaskState>(); }

 private:
  double ratio_;
  DilationMethod method_;
};

}  // namespace

void register_random_mask_ops(OpRegistry& r) {
  r.add({"random_mask", OpStage::kImage, "",
         "the case study's RandomMask: pixels picked with probability ratio, dilated, zeroed",
         {{"ratio", ParamType::kFloat, "0.25", 0, 1, {}, 0, {}, "probability a pixel is picked"},
          {"dilation", ParamType::kString, "conv", -1e300, 1e300, {"conv", "shifts", "opencv"}, 0, {},
           "how the mask is dilated (same mask, different cost)"}},
         {"{dilation: conv}", "{dilation: shifts}", "{dilation: opencv}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           const std::string& d = p.get_string("dilation");
           const DilationMethod m = d == "shifts"   ? DilationMethod::kBooleanShifts
                                    : d == "opencv" ? DilationMethod::kOpenCV
                                                    : DilationMethod::kConvolution;
           return std::make_unique<RandomMaskOp>(p.get_float("ratio"), m);
         }});
}

}  // namespace pipebench
