#include "transforms/pipeline.h"

#include <chrono>
#include <stdexcept>
#include <utility>

#include "transforms/batch_mix.h"
#include "transforms/ops/geometry.h"
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

}  // namespace

PipelineWorkspace::PipelineWorkspace(const Pipeline& pipeline)
    : turbo_(pipeline.decode_options()), roi_(pipeline.decode_options()) {
  for (size_t i = 0; i < pipeline.operator_count(); ++i) states_.push_back(pipeline.op(i).make_state());
}

std::shared_ptr<const Pipeline> Pipeline::build(const PipelineSpec& spec,
                                                const DecodeOptions& decode) {
  std::shared_ptr<Pipeline> p(new Pipeline());
  p->spec_ = spec;
  p->decode_options_ = decode;
  OpBuildContext ctx;
  ctx.decode = decode;
  for (const auto& o : spec.transforms) {
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
    shape = p->roi_window_->output_shape(shape);
    first_op = p->first_step_op_;
  }
  for (size_t i = first_op; i < p->ops_.size();) {
    Step step;
    step.first = i;
    step.in = shape;
    const Operator* op = p->ops_[i].get();
    const Operator* next = i + 1 < p->ops_.size() ? p->ops_[i + 1].get() : nullptr;
    const auto* resize = dynamic_cast<const ResizeOp*>(op);
    if (dynamic_cast<const RandomResizedCropOp*>(op) && as_horizontal_flip(next)) {
      step.kind = StepKind::kWindowFlip;
      step.count = 2;
    } else if (resize != nullptr && resize->shorter_side() &&
               resize->interpolation() == Interpolation::kBilinear && next != nullptr &&
               dynamic_cast<const CenterCropOp*>(next) &&
               static_cast<const CenterCropOp*>(next)->size() <= resize->shorter_size()) {
      step.kind = StepKind::kResizeCenterCrop;
      step.count = 2;
    }
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
  if (!shape.tensor || !shape.fixed()) {
    const SpecMark m = spec.transforms.empty() ? spec.decode_mark : spec.transforms.back().mark;
    fail_at(m, "the pipeline ends with a uint8 image; end it with normalize (or "
               "convert_color_yuv) after a crop or resize to a fixed size, so that samples "
               "collate into one float32 NCHW batch");
  }
  p->shape_ = shape;
  if (p->decode_ == Decode::kRoi) {
    p->step_labels_.push_back(p->roi_window_->name() + (p->roi_flip_ ? "+horizontal_flip" : ""));
  }
  for (const auto& step : p->steps_) {
    std::string label;
    for (size_t k = step.first; k < step.first + step.count; ++k)
      label += (k > step.first ? "+" : "") + p->ops_[k]->name();
    p->step_labels_.push_back(label);
  }
  return p;
}

std::string Pipeline::plan_text() const {
  std::string s = "decode(" + decode_label_;
  if (decode_ == Decode::kRoi) {
    s += " of " + roi_window_->name() + "'s window";
    if (roi_window_->scalable()) s += ", dct 1/2..1/8";
    s += ")";
    if (roi_flip_ != nullptr) s += " -> " + roi_window_->name() + "+horizontal_flip";
    else s += " -> " + roi_window_->name();
  } else if (decode_ == Decode::kScaled) {
    s += ", >= " + std::to_string(scaled_target_) + " px)";
  } else {
    s += ")";
  }
  for (size_t i = decode_ == Decode::kRoi ? 1 : 0; i < step_labels_.size(); ++i)
    s += " -> " + step_labels_[i];
  if (!batch_ops_.empty()) {
    s += " => collate";
    for (const auto& b : batch_ops_) s += " -> " + b->name();
  }
  return s;
}

void Pipeline::run_batch(BatchData& batch, Rng& rng, int64_t* op_ns) const {
  if (batch_ops_.empty()) return;
  const BatchOperator* current = nullptr;
  try {
    one_hot_labels(batch);
    for (size_t i = 0; i < batch_ops_.size(); ++i) {
      current = batch_ops_[i].get();
      const int64_t t0 = op_ns != nullptr ? now_ns() : 0;
      current->apply(batch, rng);
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
    case StepKind::kOp:
      ops_[step.first]->apply(s, rng, ws.states_[step.first].get());
      return;
    case StepKind::kWindowFlip: {
      // The same draws in the same order as the two operators: window, then the flip.
      const auto& rrc = static_cast<const RandomResizedCropOp&>(*ops_[step.first]);
      const auto& flip = static_cast<const FlipOp&>(*ops_[step.first + 1]);
      const CropWindow w = rrc.window(s.image.height, s.image.width, rng);
      rrc.apply_mirrored(s, w, flip.draw(rng));
      return;
    }
    case StepKind::kResizeCenterCrop: {
      const auto& resize = static_cast<const ResizeOp&>(*ops_[step.first]);
      const auto& crop = static_cast<const CenterCropOp&>(*ops_[step.first + 1]);
      resize_shorter_center_crop(s.image, resize.shorter_size(), crop.size(), s.scratch);
      std::swap(s.image, s.scratch);
      return;
    }
  }
}

void Pipeline::run(std::span<const uint8_t> bytes, std::string_view file, Rng& rng,
                   PipelineWorkspace& ws, float* out, SampleTimes* times) const {
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
      // The window comes from the header's size, with the crop's own draws, so the same
      // Rng picks the same window as a full decode followed by the crop would.
      const JpegInfo info = read_jpeg_info(bytes, file, decode_options_);
      const CropWindow w = roi_window_->window(info.height, info.width, rng);
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
      const bool mirror = roi_flip_ != nullptr && roi_flip_->draw(rng);
      roi_window_->finish(s.scratch, s.image, mirror);
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
}

}  // namespace pipebench
