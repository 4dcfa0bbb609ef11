// Operators that produce or change the float32 CHW tensor (the sample's slot of the batch):
//   normalize          torchvision ToTensor + Normalize(mean, std) on an image (one pass,
//                      normalize.h), or Normalize alone on a tensor; "imagenet" names
//                      ImageNet's statistics
//   to_dtype           torchvision v2 ToDtype(float32, scale): the image into float32 CHW,
//                      divided by 255 when scale (0.14's ConvertImageDtype(float) always
//                      scales); Normalize after it sees [0, 1] pixels as in torchvision
//   convert_color_yuv  the case study's ConvertColor: RGB -> YUV (BT.601 full range) floats
//   scale              the case study's Scale: x / 255 on the tensor
#include <stdexcept>

#include "transforms/casestudy.h"
#include "transforms/normalize.h"
#include "transforms/registry.h"

namespace pipebench {
namespace {

void need_fixed_image(const DataShape& in, const std::string& op) {
  require_image(in, op);
  if (!in.fixed())
    throw std::invalid_argument(op + " writes the batch, whose samples must all be one size, but "
                                "the size still varies per image here: put a crop (or a resize "
                                "to [h, w]) before it");
}

class NormalizeOp final : public Operator {
 public:
  NormalizeOp(std::array<float, 3> mean, std::array<float, 3> std) : mean_(mean), std_(std) {}
  const std::string& name() const override {
    static const std::string n = "normalize";
    return n;
  }
  OpStage stage() const override { return OpStage::kTensor; }
  DataShape output_shape(const DataShape& in) const override {
    if (in.tensor) return in;
    need_fixed_image(in, name());
    if (in.channels != 3) throw std::invalid_argument("normalize: needs 3 channels, got " + std::to_string(in.channels));
    return DataShape{true, 3, in.height, in.width};
  }
  void apply(SampleData& s, Rng&, OpState*) const override {
    if (!s.shape.tensor) {
      normalize_to_chw(s.image, s.tensor, mean_, std_);
      return;
    }
    const size_t plane = static_cast<size_t>(s.shape.height) * s.shape.width;
    for (int c = 0; c < s.shape.channels; ++c) {
      float* p = s.tensor + c * plane;
      const float m = mean_[static_cast<size_t>(c) % 3], inv = 1.0f / std_[static_cast<size_t>(c) % 3];
      for (size_t i = 0; i < plane; ++i) p[i] = (p[i] - m) * inv;
    }
  }

 private:
  std::array<float, 3> mean_, std_;
};

class ToDtypeOp final : public Operator {
 public:
  explicit ToDtypeOp(bool scale) : scale_(scale) {}
  const std::string& name() const override {
    static const std::string n = "to_dtype";
    return n;
  }
  OpStage stage() const override { return OpStage::kTensor; }
  DataShape output_shape(const DataShape& in) const override {
    need_fixed_image(in, name());
    return DataShape{true, in.channels, in.height, in.width};
  }
  void apply(SampleData& s, Rng&, OpState*) const override {
    const int c = s.image.channels;
    const size_t plane = static_cast<size_t>(s.image.height) * s.image.width;
    if (c == 3 && scale_) {  // torchvision's x / 255, by normalize's lookup table
      normalize_to_chw(s.image, s.tensor, {0.0f, 0.0f, 0.0f}, {1.0f, 1.0f, 1.0f});
      return;
    }
    const uint8_t* src = s.image.ptr();
    for (int ch = 0; ch < c; ++ch) {
      float* dst = s.tensor + ch * plane;
      for (size_t i = 0; i < plane; ++i) {
        const float v = static_cast<float>(src[i * c + ch]);
        dst[i] = scale_ ? v / 255.0f : v;
      }
    }
  }

 private:
  bool scale_;
};

class ConvertColorYuvOp final : public Operator {
 public:
  const std::string& name() const override {
    static const std::string n = "convert_color_yuv";
    return n;
  }
  OpStage stage() const override { return OpStage::kTensor; }
  DataShape output_shape(const DataShape& in) const override {
    need_fixed_image(in, name());
    return DataShape{true, 3, in.height, in.width};
  }
  void apply(SampleData& s, Rng&, OpState*) const override { rgb_to_yuv_chw(s.image, s.tensor); }
};

class ScaleOp final : public Operator {
 public:
  const std::string& name() const override {
    static const std::string n = "scale";
    return n;
  }
  OpStage stage() const override { return OpStage::kTensor; }
  DataShape output_shape(const DataShape& in) const override {
    if (!in.tensor) throw std::invalid_argument("scale works on the tensor: put it after convert_color_yuv or normalize");
    return in;
  }
  void apply(SampleData& s, Rng&, OpState*) const override {
    scale_unit(s.tensor, static_cast<size_t>(s.shape.channels) * s.shape.height * s.shape.width);
  }
};

std::array<float, 3> floats3(const std::vector<double>& v) {
  return {static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2])};
}

}  // namespace

void register_tensor_ops(OpRegistry& r) {
  const std::vector<double> mean(kImageNetMean.begin(), kImageNetMean.end());
  const std::vector<double> stdv(kImageNetStd.begin(), kImageNetStd.end());
  r.add({"normalize", OpStage::kTensor, "Normalize",
         "(x / 255 - mean) / std per channel into float32 CHW (ToTensor + Normalize); on a tensor, (x - mean) / std",
         {{"mean", ParamType::kFloatList, "imagenet", -1e6, 1e6, {}, 3, {{"imagenet", mean}},
           "per-channel mean (RGB, of [0, 1] pixels)"},
          {"std", ParamType::kFloatList, "imagenet", 1e-9, 1e6, {}, 3, {{"imagenet", stdv}},
           "per-channel standard deviation"}},
         {},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           return std::make_unique<NormalizeOp>(floats3(p.get_list("mean")), floats3(p.get_list("std")));
         }});
  r.add({"to_dtype", OpStage::kTensor, "v2.ToDtype",
         "the uint8 HWC image into a float32 CHW tensor, x / 255 when scale",
         {{"dtype", ParamType::kString, "float32", -1e300, 1e300, {"float32"}, 0, {},
           "the tensor's type (the batch is float32)"},
          {"scale", ParamType::kBool, "false", -1e300, 1e300, {}, 0, {}, "divide by 255 (values in [0, 1])"}},
         {"{scale: true}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           return std::make_unique<ToDtypeOp>(p.get_bool("scale"));
         }});
  r.add({"convert_color_yuv", OpStage::kTensor, "",
         "the case study's ConvertColor: RGB -> YUV (BT.601 full range) into float32 CHW", {},
         {},
         [](const OpParams&, const OpBuildContext&) -> std::unique_ptr<Operator> {
           return std::make_unique<ConvertColorYuvOp>();
         }});
  r.add({"scale", OpStage::kTensor, "", "the case study's Scale: x / 255 on the tensor", {},
         {},
         [](const OpParams&, const OpBuildContext&) -> std::unique_ptr<Operator> {
           return std::make_unique<ScaleOp>();
         }});
}

}  // namespace pipebench
