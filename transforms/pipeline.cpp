#include "transforms/pipeline.h"

#include <chrono>
#include <stdexcept>
#include <utility>

#include "transforms/batch_mix.h"
#include "transforms/crop.h"
#include "transforms/normalize.h"
#include "transforms/ops/geometry.h"
#include "transforms/image_format.h"
#include "transforms/registry.h"

namespace pipebench {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void fail_at(const SpecMark& m, const std::string& what) {
  throw SpecError(m.source, m.line, m.column, what);
}

const FlipOp* as_horizontal_flip(const Operator* op) {
  const auto* f = dynamic_cast<const FlipOp*>(op);
  return f != nullptr && f->horizontal() ? f : nullptr;
}

// Minimum decoded sizes for RoiDecoder: {0, 0} (unscaled) unless a power-of-two factor
// 1/f (f = 2, 4, 8) keeps both sides >= size; then the window's size at 1/f, the least
// size that factor reaches, so the smallest n/8 factor reaching it is 1/f itself.
std::pair<int, int> roi_scaling(const CropWindow& w, int size) {
  int f = 1;
  while (f < 8 && (w.width + 2 * f - 1) / (2 * f) >= size &&
         (w.height + 2 * f - 1) / (2 * f) >= size) {
    f *= 2;
  }
  if (f == 1) return {0, 0};
  return {(w.width + f - 1) / f, (w.height + f - 1) / f};
}

// normalize's (mean, std) as its factory reads them (tensor.cpp: each rounded to float).
std::array<float, 3> float3(const std::vector<double>& v) {
  return {static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2])};
}

// A random_resized_crop whose resize the engine runs (bilinear, bicubic), so that a
// normalize can be fused into it.
const RandomResizedCropOp* fusable_crop(const Operator* op) {
  const auto* rrc = dynamic_cast<const RandomResizedCropOp*>(op);
  if (rrc == nullptr) return nullptr;
  const auto i = rrc->interpolation();
  return i == Interpolation::kBilinear || i == Interpolation::kBicubic ? rrc : nullptr;
}

}  // namespace

PipelineWorkspace::PipelineWorkspace(const Pipeline& pipeline)
    : turbo_(pipeline.decode_options()), roi_(pipeline.decode_options()) {
  for (size_t i = 0; i < pipeline.operator_count(); ++i) states_.push_back(pipeline.op(i).make_state());
}

void PipelineWorkspace::swap_scratch(PipelineWorkspace& other) noexcept {
  turbo_.swap_scratch(other.turbo_);
  roi_.swap_scratch(other.roi_);
  std::swap(resampler_, other.resampler_);
  std::swap(sample_, other.sample_);
}

std::shared_ptr<const Pipeline> Pipeline::build(const PipelineSpec& spec,
                                                const DecodeOptions& decode,
                                                const PlanOptions& plan) {
  std::shared_ptr<Pipeline> p(new Pipeline());
  p->spec_ = spec;
  p->decode_options_ = decode;
  OpBuildContext ctx;
  ctx.decode = decode;
  for (const auto& o : per_sample_ops(spec)) {  // less what is deferred past collate
    const OpSchema* schema = OpRegistry::instance().find(o.name);
    if (schema == nullptr || schema->stage == OpStage::kDecode)
      fail_at(o.mark, "'" + o.name + "' cannot be used here");
    if (schema->stage == OpStage::kBatch)
      fail_at(o.mark, o.name + " is a batch operator: it runs after collate; list it under batch");
    try {
      p->ops_.push_back(schema->make(o.params, ctx));
    } catch (const std::invalid_argument& e) {
      fail_at(o.mark, e.what());
    }
  }

  for (const auto& o : spec.batch) {
    const OpSchema* schema = OpRegistry::instance().find(o.name);
    if (schema == nullptr || schema->stage != OpStage::kBatch || !schema->make_batch)
      fail_at(o.mark, "'" + o.name + "' is not a batch operator; batch lists mixup, cutmix, "
                      "mixup_cutmix, label_smoothing");
    try {
      p->batch_ops_.push_back(schema->make_batch(o.params, ctx));
    } catch (const std::invalid_argument& e) {
      fail_at(o.mark, e.what());
    }
  }

  // Each operator's own random stream: its name and occurrence, per-sample and batch apart.
  std::map<std::string, int> seen;
  for (const auto& op : p->ops_) p->op_salts_.push_back(Rng::stream_salt(op->name().c_str(), ++seen[op->name()]));
  seen.clear();
  for (const auto& op : p->batch_ops_)
    p->batch_salts_.push_back(Rng::stream_salt(("batch:" + op->name()).c_str(), ++seen[op->name()]));

  // Decode: roi / auto fuse the first operator when it is a crop.
  const auto* window = p->ops_.empty() ? nullptr : dynamic_cast<const WindowOp*>(p->ops_[0].get());
  if (const auto* rc = dynamic_cast<const RandomCropOp*>(window); rc != nullptr && !rc->unpadded())
    window = nullptr;  // a padded random crop is not a window of the source
  const std::string& mode = spec.decode_mode;
  if (mode == "roi" && window == nullptr) {
    fail_at(spec.decode_mark, "decode: mode roi decodes only a crop's window, so a crop "
                              "(random_resized_crop, center_crop, random_crop without padding) "
                              "must follow decode; use mode full or auto");
  }
  if ((mode == "roi" || mode == "auto") && window != nullptr) {
    p->decode_ = Decode::kRoi;
    p->roi_window_ = window;
    p->first_step_op_ = 1;
    if (window->scalable() && p->ops_.size() > 1 && as_horizontal_flip(p->ops_[1].get())) {
      p->roi_flip_ = as_horizontal_flip(p->ops_[1].get());
      p->first_step_op_ = 2;
    }
    // The crop's resize can write the tensor (the image after decode is RGB).
    const size_t next = p->first_step_op_;
    if (plan.fuse_normalize && fusable_crop(window) != nullptr && next < p->ops_.size() &&
        p->ops_[next]->name() == "normalize") {
      p->roi_normalize_ = true;
      p->roi_affine_ = normalize_affine(float3(spec.transforms[next].params.get_list("mean")),
                                        float3(spec.transforms[next].params.get_list("std")));
      p->first_step_op_ = next + 1;
    }
    p->decode_label_ = "roi";
  } else if (mode == "scaled") {
    p->decode_ = Decode::kScaled;
    p->decode_label_ = "scaled";
    p->scaled_target_ = ctx.default_size;
    for (const auto& op : p->ops_) {
      if (const auto* w = dynamic_cast<const WindowOp*>(op.get())) {
        p->scaled_target_ = w->size();
        break;
      }
    }
  }

  // Shapes, and the fused steps.
  DataShape shape;  // after decode: an RGB image of varying size
  size_t first_op = 0;
  if (p->decode_ == Decode::kRoi) {
    for (size_t k = 0; k < p->first_step_op_; ++k) shape = p->ops_[k]->output_shape(shape);
    first_op = p->first_step_op_;
  }
  for (size_t i = first_op; i < p->ops_.size();) {
    const Step step = p->plan_step(i, shape, plan);
    for (size_t k = i; k < i + step.count; ++k) {
      try {
        shape = p->ops_[k]->output_shape(shape);
      } catch (const std::invalid_argument& e) {
        fail_at(spec.transforms[k].mark, e.what());
      }
    }
    p->steps_.push_back(step);
    i += step.count;
  }
  p->finish_output(shape);  // checks the last shape against the collate dtype
  if (p->decode_ == Decode::kRoi) {
    p->step_labels_.push_back(p->roi_window_->name() + (p->roi_flip_ ? "+horizontal_flip" : "") +
                              (p->roi_normalize_ ? "+normalize" : ""));
  }
  for (const auto& step : p->steps_) {
    std::string label;
    for (size_t k = step.first; k < step.first + step.count; ++k)
      label += (k > step.first ? "+" : "") + p->ops_[k]->name();
    p->step_labels_.push_back(label);
  }
  return p;
}

Pipeline::Step Pipeline::plan_step(size_t i, const DataShape& in, const PlanOptions& plan) const {
  Step step;
  step.first = i;
  step.in = in;
  const Operator* op = ops_[i].get();
  const auto at = [&](size_t k) { return k < ops_.size() ? ops_[k].get() : nullptr; };
  // The normalize at k, when it may be fused (it then reads the resized RGB image).
  const auto normalize_at = [&](size_t k) {
    return plan.fuse_normalize && in.channels == 3 && at(k) != nullptr && at(k)->name() == "normalize";
  };
  const auto affine_of = [&](size_t k) {
    const OpParams& params = spec_.transforms[k].params;
    return normalize_affine(float3(params.get_list("mean")), float3(params.get_list("std")));
  };
  const auto* resize = dynamic_cast<const ResizeOp*>(op);
  if (dynamic_cast<const RandomResizedCropOp*>(op) != nullptr) {
    const bool flip = as_horizontal_flip(at(i + 1)) != nullptr;
    const size_t norm = i + (flip ? 2 : 1);
    if (fusable_crop(op) != nullptr && normalize_at(norm)) {
      step.kind = StepKind::kWindowTensor;
      step.count = norm - i + 1;
      step.flip = flip;
      step.affine = affine_of(norm);
    } else if (flip) {
      step.kind = StepKind::kWindowFlip;
      step.count = 2;
    }
  } else if (resize != nullptr && resize->shorter_side() &&
             resize->interpolation() == Interpolation::kBilinear &&
             dynamic_cast<const CenterCropOp*>(at(i + 1)) != nullptr &&
             static_cast<const CenterCropOp*>(at(i + 1))->size() <= resize->shorter_size()) {
    step.kind = StepKind::kResizeCenterCrop;
    step.count = 2;
    if (normalize_at(i + 2)) {
      step.kind = StepKind::kResizeCenterCropTensor;
      step.count = 3;
      step.affine = affine_of(i + 2);
    }
  }
  return step;
}

std::string Pipeline::plan_text() const {
  std::string s = "decode(" + decode_label_;
  if (decode_ == Decode::kRoi) {
    s += " of " + roi_window_->name() + "'s window";
    if (roi_window_->scalable()) s += ", dct 1/2..1/8";
    s += ")";
    s += " -> " + step_labels_[0];
  } else if (decode_ == Decode::kScaled) {
    s += ", >= " + std::to_string(scaled_target_) + " px)";
  } else {
    s += ")";
  }
  for (size_t i = decode_ == Decode::kRoi ? 1 : 0; i < step_labels_.size(); ++i)
    s += " -> " + step_labels_[i];
  s += collate_plan_text();  // "" for float32 NCHW
  if (!batch_ops_.empty()) {
    if (output_.in_place()) s += " => collate";
    for (const auto& b : batch_ops_)  // a device-finished mixing: its labels only here
      s += " -> " + b->name() + (finishes_on_device() && b->mixes_pixels() ? " (labels)" : "");
  }
  return s;
}

void Pipeline::run_batch(BatchData& batch, Rng& rng, int64_t* op_ns,
                         std::vector<MixDraw>* device_mixes) const {
  if (device_mixes != nullptr) device_mixes->clear();
  if (batch_ops_.empty()) return;
  std::vector<MixDraw> dropped;  // a caller timing the host's share only
  if (finishes_on_device() && device_mixes == nullptr) device_mixes = &dropped;
  const BatchOperator* current = nullptr;
  try {
    one_hot_labels(batch);
    for (size_t i = 0; i < batch_ops_.size(); ++i) {
      current = batch_ops_[i].get();
      const int64_t t0 = op_ns != nullptr ? now_ns() : 0;
      Rng own = rng.stream(batch_salts_[i]);
      if (finishes_on_device() && current->mixes_pixels()) {
        current->apply_labels(batch, own, device_mixes->emplace_back());
      } else {
        current->apply(batch, own);
      }
      if (op_ns != nullptr) op_ns[i] += now_ns() - t0;
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(spec_.name + ": " + (current ? current->name() : std::string("labels")) +
                             ": " + e.what());
  }
}

void Pipeline::run_step(const Step& step, SampleData& s, Rng& rng, PipelineWorkspace& ws) const {
  s.shape = step.in;
  switch (step.kind) {
    case StepKind::kOp: {
      Rng own = rng.stream(op_salts_[step.first]);
      ops_[step.first]->apply(s, own, ws.states_[step.first].get());
      return;
    }
    case StepKind::kWindowFlip: {
      // The same draws as the two operators, each from its own stream.
      const auto& rrc = static_cast<const RandomResizedCropOp&>(*ops_[step.first]);
      const auto& flip = static_cast<const FlipOp&>(*ops_[step.first + 1]);
      Rng window_rng = rng.stream(op_salts_[step.first]), flip_rng = rng.stream(op_salts_[step.first + 1]);
      const CropWindow w = rrc.window(s.image.height, s.image.width, window_rng);
      rrc.apply_mirrored(s, w, flip.draw(flip_rng));
      return;
    }
    case StepKind::kResizeCenterCrop: {
      const auto& resize = static_cast<const ResizeOp&>(*ops_[step.first]);
      const auto& crop = static_cast<const CenterCropOp&>(*ops_[step.first + 1]);
      resize_shorter_center_crop(s.image, resize.shorter_size(), crop.size(), s.scratch);
      std::swap(s.image, s.scratch);
      return;
    }
    case StepKind::kWindowTensor: {
      // The same draws as the operators, each from its own stream: window, then the flip's.
      const auto& rrc = static_cast<const RandomResizedCropOp&>(*ops_[step.first]);
      Rng window_rng = rng.stream(op_salts_[step.first]);
      const CropWindow w = rrc.window(s.image.height, s.image.width, window_rng);
      Rng flip_rng = step.flip ? rng.stream(op_salts_[step.first + 1]) : Rng(0);
      const bool mirror = step.flip && static_cast<const FlipOp&>(*ops_[step.first + 1]).draw(flip_rng);
      resized_crop_to_chw(s.image, w, rrc.size(), rrc.size(), mirror, rrc.interpolation(),
                          step.affine, s.tensor, ws.resampler_);
      return;
    }
    case StepKind::kResizeCenterCropTensor: {
      const auto& resize = static_cast<const ResizeOp&>(*ops_[step.first]);
      const auto& crop = static_cast<const CenterCropOp&>(*ops_[step.first + 1]);
      resize_shorter_center_crop_to_chw(s.image, resize.shorter_size(), crop.size(), step.affine,
                                        s.tensor, ws.resampler_);
      return;
    }
  }
}

void Pipeline::run(std::span<const uint8_t> bytes, std::string_view file, Rng& rng,
                   PipelineWorkspace& ws, float* out, SampleTimes* times) const {
  check_out(out);
  SampleData& s = ws.sample_;
  s.tensor = out;
  const int64_t t0 = times != nullptr ? now_ns() : 0;
  switch (decode_) {
    case Decode::kFull:
      ws.turbo_.decode(bytes, file, s.image);
      break;
    case Decode::kScaled:
      ws.turbo_.decode_scaled(bytes, file, scaled_target_, scaled_target_, s.image);
      break;
    case Decode::kRoi: {
      // The window comes from the header's size, with the crop's own stream (ops_[0]), so
      // the same Rng picks the same window as a full decode followed by the crop would.
      // (Any format: a PNG, even one named .jpg, is decoded whole and its window cut.)
      const ImageInfo info = read_image_info(bytes, file, decode_options_);
      Rng window_rng = rng.stream(op_salts_[0]);
      const CropWindow w = roi_window_->window(info.height, info.width, window_rng);
      const auto [min_w, min_h] =
          roi_window_->scalable() ? roi_scaling(w, roi_window_->size()) : std::pair<int, int>{0, 0};
      ws.roi_.decode(bytes, file, w, min_w, min_h, s.scratch);
      break;
    }
  }
  const int64_t t1 = times != nullptr ? now_ns() : 0;
  // Per-step laps only when the caller sized step_ns (one clock read per step).
  int64_t* laps = times != nullptr && times->step_ns.size() == step_labels_.size()
                      ? times->step_ns.data() : nullptr;
  int64_t last = t1;
  const auto lap = [&](size_t k) {
    if (laps == nullptr) return;
    const int64_t t = now_ns();
    laps[k] = t - last;
    last = t;
  };
  try {
    size_t k = 0;
    if (decode_ == Decode::kRoi) {
      Rng flip_rng = roi_flip_ != nullptr ? rng.stream(op_salts_[1]) : Rng(0);  // the flip is ops_[1]
      const bool mirror = roi_flip_ != nullptr && roi_flip_->draw(flip_rng);
      if (roi_normalize_) {
        // random_resized_crop's finish (resize the decoded window) writing the tensor.
        const auto& rrc = static_cast<const RandomResizedCropOp&>(*roi_window_);
        resized_crop_to_chw(s.scratch, CropWindow{0, 0, s.scratch.width, s.scratch.height},
                            rrc.size(), rrc.size(), mirror, rrc.interpolation(), roi_affine_,
                            s.tensor, ws.resampler_);
      } else {
        roi_window_->finish(s.scratch, s.image, mirror);
      }
      lap(k++);
    }
    for (const auto& step : steps_) {
      run_step(step, s, rng, ws);
      lap(k++);
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(file) + ": " + spec_.name + ": " + e.what());
  }
  if (times != nullptr) {
    times->decode_ns = t1 - t0;
    times->transform_ns = (laps != nullptr ? last : now_ns()) - t1;
  }
  if (deferred_flip_) {  // drawn from the flip's own stream, as the operator would
    Rng own = rng.stream(deferred_flip_->salt);
    ws.flip_ = FlipOp(true, deferred_flip_->p).draw(own);
  }
  // A uint8 pipeline given a buffer: the image into it in the batch's layout (not timed
  // as transform: it is the collate's copy).
  if (out != nullptr && output_.dtype == SampleDtype::kUint8)
    write_image_u8(s.image, output_.layout, reinterpret_cast<uint8_t*>(out));
}

bool Pipeline::has_source_window() const {
  return !ops_.empty() && decode_ != Decode::kScaled && dynamic_cast<const WindowOp*>(ops_[0].get()) != nullptr;
}

std::optional<CropWindow> Pipeline::source_window(std::span<const uint8_t> bytes, std::string_view file,
                                                  const Rng& rng) const {
  if (!has_source_window()) return std::nullopt;
  const auto* window = dynamic_cast<const WindowOp*>(ops_[0].get());
  const ImageInfo info = read_image_info(bytes, file, decode_options_);
  Rng window_rng = rng.stream(op_salts_[0]);  // the crop's own stream, as run() draws it
  return window->window(info.height, info.width, window_rng);
}

// --- the output format (collate dtype / layout: pipeline_output.h) ----------------------

std::span<const OpSpec> Pipeline::per_sample_ops(const PipelineSpec& spec) {
  check_collate(spec);  // throws SpecError for an operator the dtype / layout cannot run
  std::span<const OpSpec> ops(spec.transforms);
  if (spec.collate_dtype == "uint8" && !ops.empty() && ops.back().name == "normalize")
    ops = ops.first(ops.size() - 1);  // deferred: finish_output records it
  if (spec.collate_finish == "device" && !ops.empty() && ops.back().name == "horizontal_flip")
    ops = ops.first(ops.size() - 1);  // the device's: finish_output records it
  return ops;
}

void Pipeline::finish_output(const DataShape& shape) {
  const SpecMark& last = spec_.transforms.empty() ? spec_.decode_mark : spec_.transforms.back().mark;
  output_.dtype = dtype_from_name(spec_.collate_dtype);
  output_.layout = layout_from_name(spec_.collate_layout);
  if (output_.dtype == SampleDtype::kFloat32 && (!shape.tensor || !shape.fixed())) {
    fail_at(last, "the pipeline ends with a uint8 image; end it with normalize (or "
                  "convert_color_yuv) after a crop or resize to a fixed size, so that samples "
                  "collate into one float32 batch (or collate uint8: collate: {dtype: uint8})");
  }
  if (output_.dtype == SampleDtype::kUint8 && (shape.tensor || !shape.fixed())) {  // tensor: check_collate refuses
    fail_at(last, "the pipeline ends with an image whose size varies per sample; with collate "
                  "dtype uint8 the last operator must give a fixed size (a crop, or a resize "
                  "to [h, w]) so that samples collate into one batch");
  }
  const bool deferred = output_.dtype == SampleDtype::kUint8 && !spec_.transforms.empty() &&
                        spec_.transforms.back().name == "normalize";
  if (deferred) {
    if (shape.channels != 3)
      fail_at(last, "normalize needs 3 channels, got " + std::to_string(shape.channels));
    deferred_ = DeferredNormalize{float3(spec_.transforms.back().params.get_list("mean")),
                                  float3(spec_.transforms.back().params.get_list("std"))};
  }
  const size_t kept = ops_.size();  // one per kept OpSpec (build: per_sample_ops)
  if (kept < spec_.transforms.size() && spec_.transforms[kept].name == "horizontal_flip") {
    int occurrence = 0;  // its stream salt, as op_salts_ would have given it
    for (size_t i = 0; i <= kept; ++i) occurrence += spec_.transforms[i].name == "horizontal_flip";
    deferred_flip_ = DeferredFlip{spec_.transforms[kept].params.get_float("p"),
                                  Rng::stream_salt("horizontal_flip", occurrence)};
  }
  shape_ = shape;
  output_.channels = shape.channels;
  output_.height = shape.height;
  output_.width = shape.width;
}

std::string Pipeline::collate_plan_text() const {
  if (output_.in_place()) return "";
  std::string s = std::string(" => collate(") + dtype_name(output_.dtype) + " " + layout_name(output_.layout);
  std::string after;
  if (deferred_flip_) after += "horizontal_flip, ";
  if (finishes_on_device())
    for (const auto& op : batch_ops_)
      if (op->mixes_pixels()) after += op->name() + ", ";
  if (deferred_) after += "normalize, ";
  if (!after.empty()) s += "; " + after.substr(0, after.size() - 2) + " after the copy";
  return s + ")";
}

void Pipeline::check_out(const float* out) const {
  if (output_.dtype == SampleDtype::kFloat32 && out == nullptr)
    throw std::logic_error(spec_.name + ": run(): out is null; a float32 pipeline writes " +
                           std::to_string(output_floats()) + " floats there");
}

}  // namespace pipebench
