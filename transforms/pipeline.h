// Pipeline: a spec (spec.h) built into operators (registry.h) and planned to run: decode,
// then the per-sample operators, producing one float32 CHW sample written straight into
// the caller's buffer (the batch slot: collate in place). The unit of per-sample CPU cost,
// what a worker runs for each sample.
//
// Planning (the plan is in plan_text(), and what the run's context records):
//   decode roi   reads the header, draws the first operator's window (a WindowOp: crop
//                ops), decodes only that window, DCT-downscaled by the largest of 1/2, 1/4,
//                1/8 that keeps both sides >= the crop's size when the crop resizes anyway
//                (random_resized_crop; libjpeg-turbo has SIMD IDCTs for those factors only,
//                the others measured slower than a full decode), then finishes the crop;
//   decode auto  roi when a crop follows decode, else full;
//   random_resized_crop + horizontal_flip   one resize pass writing mirrored rows;
//   resize(int, bilinear) + center_crop     resize computing only the kept pixels;
//   either, or an ROI decode's random_resized_crop, + normalize
//                                           the resize's last pass writes the float32 CHW
//                                           tensor itself (no uint8 image, no second pass).
// Fused steps draw the same random numbers in the same order and give bit-identical output
// to running the operators one by one, except the fusions with normalize: their resized
// uint8 values are the same, mapped to floats by q * (1 / (255 std)) - mean / std instead of
// normalize's table of (q / 255 - mean) / std, which differs by float rounding only (4.8e-7
// at most with ImageNet's statistics: normalize_affine in normalize.h; tests/fused_test.cpp).
// PlanOptions turns them off.
//
// Shapes: output() says what one sample is once collated (pipeline_output.h): by default
// C x H x W float32, and the spec must end with an operator that writes the tensor
// (normalize, convert_color_yuv) at a fixed size. With `collate: {dtype: uint8}` the chain
// stops at a uint8 H x W x C image of a fixed size: a normalize ending the operators is not
// run here but reported by deferred_normalize() (done after the copy to the accelerator),
// and run() leaves the image in the workspace (output_image()) for collate to copy into the
// batch in its layout. Batch operators (mixup, cutmix, label smoothing: batch_op.h) run on
// the collated batch through run_batch(), called by whoever collates (the loader).
// With `collate: {dtype: uint8, layout: NHWC, finish: device}` the accelerator also finishes
// the flip and the mixing (the split DALI, FFCV and timm use): a horizontal_flip ending the
// operators (before the deferred normalize) is drawn but not run (ws.deferred_flip() says
// whether this sample flips), and run_batch() draws mixup / cutmix and mixes the soft labels
// but leaves the pixels to the device (the draws come back in order). Every draw comes
// from the operator's own stream, so the device finishes the same batch the CPU would.
//
// Errors: build() throws SpecError (spec.h) naming the spec's source, line and column for a
// chain that cannot run (ROI decode with no crop to fuse, normalize before the size is
// fixed, a crop larger than a fixed input, no tensor at the end). run() throws DecodeError
// for bad JPEG bytes and std::runtime_error "FILE: OPERATOR: reason" for an operator's
// failure (an image smaller than a random_crop without padding, say).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "transforms/batch_mix.h"
#include "transforms/batch_op.h"
#include "transforms/jpeg_decode.h"
#include "transforms/operator.h"
#include "transforms/pipeline_output.h"
#include "transforms/resize.h"
#include "transforms/spec.h"

namespace pipebench {

/// Time spent in each part of one sample, in nanoseconds (run() overwrites it).
struct SampleTimes {
  int64_t decode_ns = 0;     ///< decode, including an ROI decode's header read
  int64_t transform_ns = 0;  ///< every operator after decode
  /// Per planned step (step_labels()), when the caller sized it to step_labels().size();
  /// left alone when empty. An ROI decode's fused crop counts as the first step.
  std::vector<int64_t> step_ns;
};

class Pipeline;
class FlipOp;

/// Planner switches, for tests and side-by-side measurements.
struct PlanOptions {
  /// Fuse a resize with the normalize that follows it (see the file comment); false plans
  /// the chain that ran before those fusions existed, with normalize as its own step.
  bool fuse_normalize = true;
};

/// Per-worker state: decoder handles, the sample's images, operators' scratch. Reused
/// across samples (no heap allocation per sample once the largest image was seen). Not
/// thread-safe: one per worker thread.
class PipelineWorkspace {
 public:
  explicit PipelineWorkspace(const Pipeline& pipeline);
  /// After run() of a uint8 pipeline: the sample, H x W x C uint8 (output() gives its
  /// shape). Valid until the next run() on this workspace.
  const Image& output_image() const { return sample_.image; }
  /// After run() of a pipeline that defers its flip (Pipeline::defers_flip()): whether
  /// this sample is to be mirrored after the copy; false otherwise.
  bool deferred_flip() const { return flip_; }

  /// Exchanges the memory this workspace and `other` work in (decoders' buffers, the
  /// resampler's scratch, the image and scratch buffers), each keeping its pipeline's
  /// operator states and decode options. Where a buffer lies (its pages, their cache sets)
  /// changes a sample's time by a few tenths of a percent; a paired case swaps its two
  /// sides' scratch between blocks so that neither side keeps the luckier placement for
  /// the whole case (an A/A control on photos-in read +-0.2-0.5 % outside its +-0.1-0.2 %
  /// interval in 5 of 20 runs without it; docs/paired.md). Never throws.
  void swap_scratch(PipelineWorkspace& other) noexcept;

 private:
  friend class Pipeline;
  TurboDecoder turbo_;
  RoiDecoder roi_;
  Resampler resampler_;  // the fused resize + normalize steps' scratch
  SampleData sample_;
  std::vector<std::unique_ptr<OpState>> states_;  // one per operator
  bool flip_ = false;  // the deferred flip's draw of the last run()
};

class Pipeline {
 public:
  /// Builds and plans `spec`. Throws SpecError.
  static std::shared_ptr<const Pipeline> build(const PipelineSpec& spec,
                                               const DecodeOptions& decode = {},
                                               const PlanOptions& plan = {});

  const std::string& name() const { return spec_.name; }
  const PipelineSpec& spec() const { return spec_; }
  const DecodeOptions& decode_options() const { return decode_options_; }
  /// C, H, W of one sample (whatever its dtype and layout).
  std::array<int, 3> output_shape() const { return {shape_.channels, shape_.height, shape_.width}; }
  /// Elements of one sample, C * H * W: the floats run() writes for a float32 pipeline.
  size_t output_floats() const {
    return static_cast<size_t>(shape_.channels) * shape_.height * shape_.width;
  }
  /// One sample as collated: the spec's collate dtype and layout, C, H, W.
  const SampleFormat& output() const { return output_; }
  /// The normalize left for after the copy (dtype uint8 and a normalize ending the
  /// operators); nullopt otherwise: a uint8 batch without it holds the raw pixels.
  const std::optional<DeferredNormalize>& deferred_normalize() const { return deferred_; }
  /// `collate: {..., finish: device}`: the flip and the mixing are the device's.
  bool finishes_on_device() const { return spec_.collate_finish == "device"; }
  /// A horizontal_flip ending the operators is left to the device (its draw is recorded).
  bool defers_flip() const { return deferred_flip_.has_value(); }
  /// What runs, in order, e.g. "decode(full) -> random_resized_crop+horizontal_flip+normalize".
  std::string plan_text() const;
  /// The decode actually used: "full", "scaled" or "roi" (auto resolved).
  const std::string& decode_plan() const { return decode_label_; }
  size_t operator_count() const { return ops_.size(); }
  /// The planned steps after decode, in order, each named by its operators joined with
  /// '+' ("random_resized_crop+horizontal_flip+normalize", "rand_augment"): the per-operator
  /// timers' keys.
  const std::vector<std::string>& step_labels() const { return step_labels_; }
  const Operator& op(size_t i) const { return *ops_[i]; }

  /// Batch operators (the spec's `batch:`), in order; none when the spec has no batch.
  size_t batch_operator_count() const { return batch_ops_.size(); }
  const BatchOperator& batch_op(size_t i) const { return *batch_ops_[i]; }
  /// Runs the batch operators on a collated batch: soft labels set one-hot from the hard
  /// labels, then each operator in order, drawing from rng (Rng::for_batch). Adds each
  /// operator's time to op_ns[i] (ns) when op_ns is non-null. When the pipeline finishes
  /// on the device, a mixing operator only draws and mixes the soft labels; its draw is
  /// appended to *device_mixes (cleared first; batch.data may be null then), for the device
  /// to mix the pixels in that order; a null device_mixes drops them (a caller that times
  /// the host's share only). Throws std::runtime_error "PIPELINE: OPERATOR: reason" (a
  /// label outside [0, num_classes), say).
  void run_batch(BatchData& batch, Rng& rng, int64_t* op_ns = nullptr,
                 std::vector<MixDraw>* device_mixes = nullptr) const;

  /// Decodes `bytes` (a JPEG; `file` names it in errors) and applies the operators. A
  /// float32 pipeline writes output_floats() floats, C x H x W, to `out` (either layout:
  /// collate transposes for NHWC). A uint8 pipeline leaves the image in ws.output_image()
  /// and, when `out` is non-null, also writes it there as output().bytes() uint8 values in
  /// output().layout's order (C x H x W or H x W x C; a buffer of output_floats() floats is
  /// large enough; read it as uint8_t). Draws from rng only. Fills *times if given (that
  /// last copy is in neither decode_ns nor transform_ns). Throws std::logic_error for a
  /// float32 pipeline given a null `out`.
  void run(std::span<const uint8_t> bytes, std::string_view file, Rng& rng,
           PipelineWorkspace& ws, float* out, SampleTimes* times = nullptr) const;

  /// The source region run() would crop for this sample: the window the first operator
  /// draws from `rng` (the sample's stream, as given to run(); not advanced) when it is a
  /// crop that picks its window from the image's size (a WindowOp: random_resized_crop,
  /// ...), in pixels of the decoded image, whose size comes from the header. nullopt when
  /// the chain does not start with such a crop, or the decode is DCT scaled to a fixed
  /// size (decode: scaled; the size seen is known after the decode only). For issue 35's
  /// upsampled share (a window smaller than the output is enlarged). Throws DecodeError
  /// for a header that cannot be read.
  std::optional<CropWindow> source_window(std::span<const uint8_t> bytes, std::string_view file,
                                          const Rng& rng) const;
  /// Whether source_window() gives a window (for any readable header).
  bool has_source_window() const;

 private:
  enum class Decode { kFull, kScaled, kRoi };
  enum class StepKind { kOp, kWindowFlip, kResizeCenterCrop, kWindowTensor, kResizeCenterCropTensor };
  struct Step {
    StepKind kind = StepKind::kOp;
    size_t first = 0;  // first operator index
    size_t count = 1;  // operators this step runs
    DataShape in;      // planned shape before the step
    bool flip = false;      // kWindowTensor: a horizontal_flip follows the crop
    ChannelAffine affine;   // *Tensor: the fused normalize's map
  };
  // Plans the step starting at operator i (its kind and operator count).
  Step plan_step(size_t i, const DataShape& in, const PlanOptions& plan) const;
  Pipeline() = default;
  // The output format (collate dtype / layout), kept apart from the planner:
  // the operators that run per sample (the spec's, less a normalize deferred to after the
  // copy and, with finish: device, a horizontal_flip before it), after check_collate
  // (spec.h; throws SpecError);
  static std::span<const OpSpec> per_sample_ops(const PipelineSpec& spec);
  // checks the chain's last shape against the collate dtype and sets shape_, output_,
  // deferred_ and deferred_flip_ (throws SpecError for a chain that cannot collate);
  void finish_output(const DataShape& shape);
  // " => collate(uint8 NHWC) -> normalize after the copy" and the like; "" for float32 NCHW.
  std::string collate_plan_text() const;
  // run()'s check that a float32 pipeline has somewhere to write (std::logic_error).
  void check_out(const float* out) const;
  void run_step(const Step& step, SampleData& s, Rng& rng, PipelineWorkspace& ws) const;

  PipelineSpec spec_;
  DecodeOptions decode_options_;
  std::vector<std::unique_ptr<Operator>> ops_;
  std::vector<std::unique_ptr<BatchOperator>> batch_ops_;
  // Each operator's stream salt (Rng::stream_salt: its name and occurrence in the spec).
  std::vector<uint64_t> op_salts_, batch_salts_;
  Decode decode_ = Decode::kFull;
  std::string decode_label_ = "full";
  int scaled_target_ = 0;                // kScaled: minimum side after scaling
  const WindowOp* roi_window_ = nullptr; // kRoi: the crop whose window is decoded
  const FlipOp* roi_flip_ = nullptr;     // kRoi: a horizontal flip folded into the crop
  bool roi_normalize_ = false;           // kRoi: a normalize fused into the crop's resize
  ChannelAffine roi_affine_;
  size_t first_step_op_ = 0;             // operators consumed by decode
  std::vector<Step> steps_;
  std::vector<std::string> step_labels_;
  DataShape shape_;
  SampleFormat output_;
  std::optional<DeferredNormalize> deferred_;
  struct DeferredFlip {
    double p = 0.5;     // the horizontal_flip's probability
    uint64_t salt = 0;  // its stream (op_salts_ as if it ran)
  };
  std::optional<DeferredFlip> deferred_flip_;
};

}  // namespace pipebench
