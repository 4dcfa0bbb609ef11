#include "transforms/ops/geometry.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "transforms/registry.h"

namespace pipebench {
namespace {

const std::vector<std::string> kInterpolations = {"bilinear", "nearest", "bicubic", "area"};


// Copies src into out with `left/top/right/bottom` pixels of `fill` around it.
void pad(const Image& src, int left, int top, int right, int bottom, int fill, Image& out) {
  const int h = src.height + top + bottom, w = src.width + left + right;
  out.resize(h, w, src.channels);
  std::memset(out.ptr(), fill, out.size_bytes());
  for (int y = 0; y < src.height; ++y)
    std::memcpy(out.row(y + top) + static_cast<size_t>(left) * src.channels, src.row(y),
                src.row_bytes());
}

ParamSchema size_param(const std::string& doc) {
  return {"size", ParamType::kInt, "--size", 1, 8192, {}, 0, {}, doc};
}
ParamSchema interpolation_param() {
  return {"interpolation", ParamType::kString, "bilinear", -1e300, 1e300, kInterpolations, 0, {},
          "resampling filter (bilinear: area averaging when shrinking, as torchvision's antialias)"};
}
ParamSchema p_param(const std::string& doc) {
  return {"p", ParamType::kFloat, "0.5", 0, 1, {}, 0, {}, doc};
}

}  // namespace

Interpolation interpolation_from_name(const std::string& name) {
  if (name == "nearest") return Interpolation::kNearest;
  if (name == "bicubic") return Interpolation::kBicubic;
  if (name == "area") return Interpolation::kArea;
  return Interpolation::kBilinear;
}

// --- random_resized_crop -------------------------------------------------------------------

RandomResizedCropOp::RandomResizedCropOp(int size, RandomResizedCropParams params,
                                         Interpolation interpolation)
    : size_(size), params_(params), interpolation_(interpolation) {
  if (params_.scale_min > params_.scale_max || params_.ratio_min > params_.ratio_max)
    throw std::invalid_argument("random_resized_crop: scale and ratio must be [low, high] with low <= high");
}

const std::string& RandomResizedCropOp::name() const {
  static const std::string n = "random_resized_crop";
  return n;
}

DataShape RandomResizedCropOp::output_shape(const DataShape& in) const {
  require_image(in, name());
  return DataShape{false, in.channels, size_, size_};
}

CropWindow RandomResizedCropOp::window(int height, int width, Rng& rng) const {
  return random_resized_crop_window(height, width, rng, params_);
}

void RandomResizedCropOp::finish(Image& src, Image& out, bool mirror) const {
  resized_crop(src, CropWindow{0, 0, src.width, src.height}, size_, size_, out, mirror,
               interpolation_);
}

void RandomResizedCropOp::apply_mirrored(SampleData& s, const CropWindow& w, bool mirror) const {
  resized_crop(s.image, w, size_, size_, s.scratch, mirror, interpolation_);
  std::swap(s.image, s.scratch);
}

void RandomResizedCropOp::apply(SampleData& s, Rng& rng, OpState*) const {
  apply_mirrored(s, window(s.image.height, s.image.width, rng), false);
}

// --- center_crop ---------------------------------------------------------------------------

const std::string& CenterCropOp::name() const {
  static const std::string n = "center_crop";
  return n;
}

DataShape CenterCropOp::output_shape(const DataShape& in) const {
  require_image(in, name());
  return DataShape{false, in.channels, size_, size_};
}

CropWindow CenterCropOp::window(int height, int width, Rng&) const {
  // An image smaller than the crop on a side is padded, not cropped: keep all of it.
  if (height < size_ || width < size_) return CropWindow{0, 0, width, height};
  return center_crop_window(height, width, size_);
}

void CenterCropOp::crop(Image& src, Image& tmp, Image& out) const {
  if (src.height < size_ || src.width < size_) {
    // torchvision pads with 0 to the crop size (the extra pixel of an odd difference
    // right/bottom), then takes the centre. On a side longer than the crop that centre is
    // the original's centre window, so cut it first and pad only what is missing: memory
    // stays bounded by the output (a 65000 x 1 image under a 224 crop is 224 x 224, not a
    // padded 65000 x 224 first).
    const CropWindow c = center_crop_window(std::max(src.height, size_), std::max(src.width, size_), size_);
    const int kw = std::min(src.width, size_), kh = std::min(src.height, size_);
    tmp.resize(kh, kw, src.channels);
    for (int y = 0; y < kh; ++y)
      std::memcpy(tmp.row(y), src.row(c.y + y) + static_cast<size_t>(c.x) * src.channels, tmp.row_bytes());
    const int dw = size_ - kw, dh = size_ - kh;
    pad(tmp, dw / 2, dh / 2, (dw + 1) / 2, (dh + 1) / 2, 0, src);  // src is no longer needed
  }
  if (src.height == size_ && src.width == size_) {
    std::swap(src, out);
  } else {
    center_crop(src, size_, out);
  }
}

void CenterCropOp::finish(Image& src, Image& out, bool mirror) const {
  Image tmp;  // touched only for an image smaller than the crop
  crop(src, tmp, out);
  if (mirror) horizontal_flip(out);
}

void CenterCropOp::apply(SampleData& s, Rng&, OpState*) const {
  crop(s.image, s.scratch, s.scratch);
  std::swap(s.image, s.scratch);
}

// --- random_crop ---------------------------------------------------------------------------

const std::string& RandomCropOp::name() const {
  static const std::string n = "random_crop";
  return n;
}

DataShape RandomCropOp::output_shape(const DataShape& in) const {
  require_image(in, name());
  if (in.fixed() && !pad_if_needed_ &&
      (in.height + 2 * padding_ < size_ || in.width + 2 * padding_ < size_)) {
    throw std::invalid_argument("random_crop: size " + std::to_string(size_) +
                                " is larger than its input (" + std::to_string(in.height) + " x " +
                                std::to_string(in.width) + " H x W, padding " +
                                std::to_string(padding_) + "); set pad_if_needed: true");
  }
  return DataShape{false, in.channels, size_, size_};
}

CropWindow RandomCropOp::window(int height, int width, Rng& rng) const {
  return random_crop_window(height, width, size_, rng);
}

void RandomCropOp::finish(Image& src, Image& out, bool mirror) const {
  std::swap(src, out);  // an unpadded crop's window is its output
  if (mirror) horizontal_flip(out);
}

void RandomCropOp::apply(SampleData& s, Rng& rng, OpState*) const {
  if (padding_ > 0) {
    pad(s.image, padding_, padding_, padding_, padding_, fill_, s.scratch);
    std::swap(s.image, s.scratch);
  }
  if (pad_if_needed_ && (s.image.width < size_ || s.image.height < size_)) {
    const int dw = std::max(0, size_ - s.image.width), dh = std::max(0, size_ - s.image.height);
    pad(s.image, dw, dh, dw, dh, fill_, s.scratch);  // torchvision pads both sides by the gap
    std::swap(s.image, s.scratch);
  }
  if (s.image.height < size_ || s.image.width < size_) {
    throw std::invalid_argument("random_crop: the image (" + std::to_string(s.image.width) + " x " +
                                std::to_string(s.image.height) + " W x H) is smaller than the crop " +
                                std::to_string(size_) + " (torchvision fails too; set pad_if_needed: true)");
  }
  random_crop(s.image, size_, rng, s.scratch);
  std::swap(s.image, s.scratch);
}

// --- resize --------------------------------------------------------------------------------

const std::string& ResizeOp::name() const {
  static const std::string n = "resize";
  return n;
}

DataShape ResizeOp::output_shape(const DataShape& in) const {
  require_image(in, name());
  if (shorter_side()) return DataShape{false, in.channels, -1, -1};  // aspect kept: varies
  return DataShape{false, in.channels, height_, width_};
}

void ResizeOp::apply(SampleData& s, Rng&, OpState*) const {
  const CropWindow all{0, 0, s.image.width, s.image.height};
  if (shorter_side()) {
    resize_shorter(s.image, width_, s.scratch, interpolation_);
  } else {
    resized_crop(s.image, all, height_, width_, s.scratch, false, interpolation_);
  }
  std::swap(s.image, s.scratch);
}

// --- flips ---------------------------------------------------------------------------------

const std::string& FlipOp::name() const {
  static const std::string h = "horizontal_flip", v = "vertical_flip";
  return horizontal_ ? h : v;
}

DataShape FlipOp::output_shape(const DataShape& in) const {
  require_image(in, name());
  return in;
}

void FlipOp::apply(SampleData& s, Rng& rng, OpState*) const {
  if (!draw(rng)) return;
  if (horizontal_) {
    horizontal_flip(s.image);
  } else {
    vertical_flip(s.image);
  }
}

// --- registration ---------------------------------------------------------------------------

void register_geometry_ops(OpRegistry& r) {
  r.add({"random_resized_crop", OpStage::kImage, "RandomResizedCrop",
         "a random window (area fraction `scale`, aspect `ratio`) resized to size x size",
         {size_param("output side, pixels"),
          {"scale", ParamType::kFloatList, "[0.08, 1.0]", 0, 1, {}, 2, {}, "area fraction range"},
          {"ratio", ParamType::kFloatList, "[0.75, 1.3333333333333333]", 1e-6, 1e6, {}, 2, {},
           "aspect ratio (w / h) range, log-uniform"},
          interpolation_param()},
         {},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           const auto& sc = p.get_list("scale");
           const auto& ra = p.get_list("ratio");
           return std::make_unique<RandomResizedCropOp>(
               static_cast<int>(p.get_int("size")),
               RandomResizedCropParams{sc[0], sc[1], ra[0], ra[1]},
               interpolation_from_name(p.get_string("interpolation")));
         }});
  r.add({"center_crop", OpStage::kImage, "CenterCrop",
         "the central size x size window (zero padding where the image is smaller)",
         {size_param("output side, pixels")},
         {},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           return std::make_unique<CenterCropOp>(static_cast<int>(p.get_int("size")));
         }});
  r.add({"random_crop", OpStage::kImage, "RandomCrop",
         "a size x size window at a uniform random offset",
         {size_param("output side, pixels"),
          {"padding", ParamType::kInt, "0", 0, 4096, {}, 0, {}, "pixels of `fill` added on every side first"},
          {"pad_if_needed", ParamType::kBool, "false", -1e300, 1e300, {}, 0, {},
           "pad an image smaller than the crop instead of failing"},
          {"fill", ParamType::kInt, "0", 0, 255, {}, 0, {}, "padding value"}},
         {"{size: 256}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           return std::make_unique<RandomCropOp>(
               static_cast<int>(p.get_int("size")), static_cast<int>(p.get_int("padding")),
               p.get_bool("pad_if_needed"), static_cast<int>(p.get_int("fill")));
         }});
  r.add({"resize", OpStage::kImage, "Resize",
         "an int resizes the shorter side to it (aspect kept); [h, w] resizes to exactly that",
         {{"size", ParamType::kFloatList, "", 1, 8192, {}, 0, {}, "int (shorter side) or [h, w], pixels"},
          interpolation_param()},
         {"{size: 256}", "{size: 256, interpolation: bicubic}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           const auto& s = p.get_list("size");
           if (s.size() != 1 && s.size() != 2)
             throw std::invalid_argument("resize: size must be an int or [h, w], got a list of " +
                                         std::to_string(s.size()));
           const auto interp = interpolation_from_name(p.get_string("interpolation"));
           if (s.size() == 1) return std::make_unique<ResizeOp>(0, static_cast<int>(s[0]), interp);
           return std::make_unique<ResizeOp>(static_cast<int>(s[0]), static_cast<int>(s[1]), interp);
         }});
  r.add({"horizontal_flip", OpStage::kImage, "RandomHorizontalFlip",
         "mirror left-right with probability p", {p_param("probability of a flip")}, {"{p: 1.0}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           return std::make_unique<FlipOp>(true, p.get_float("p"));
         }});
  r.add({"vertical_flip", OpStage::kImage, "RandomVerticalFlip",
         "mirror top-bottom with probability p", {p_param("probability of a flip")}, {"{p: 1.0}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           return std::make_unique<FlipOp>(false, p.get_float("p"));
         }});
}

}  // namespace pipebench
