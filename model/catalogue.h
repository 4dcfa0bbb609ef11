// The catalogues of a run: the training-step baselines, the what-if candidate kinds and
// the loader stages, one table each. bench registers cases from them; the report reads
// them to know what a key's fields mean. A newcomer adds a candidate kind or a baseline
// with one entry here plus the code that measures it (bench/README.md).
#pragma once

#include <span>
#include <string_view>

namespace pipebench::model {

/// A training-step baseline (pipeline/train_step.h builds it).
struct Baseline {
  std::string_view name;         ///< as --baseline takes it and the key records it
  bool on_device;                ///< needs a CUDA device
  std::string_view description;  ///< one line for the report
};

/// emulated, cuda (= cuda:mlp), cuda:mlp, cuda:cnn.
std::span<const Baseline> baselines();
/// The entry of `name`, or nullptr.
const Baseline* find_baseline(std::string_view name);

/// What a candidate does to the per-sample cost: a fix keeps the model's input the same
/// (a cheaper way to the same training), a price removes work (what an operator costs).
/// A control is today against itself, measured as a candidate is (the A/A test): it must
/// read zero within its interval, or the run cannot rank candidates.
enum class CandidateRole { kFix, kPrice, kControl };

/// One what-if candidate kind: BM_Sample/<pipeline>/<kind>:<param> beside today's.
struct CandidateKind {
  std::string_view kind;         ///< the key's variant: "decode", "presized", ...
  CandidateRole role;
  bool end_to_end;               ///< also run as BM_EndToEnd/<pipeline>/<kind>:<param>/...
  std::string_view stage;        ///< the loader stage it changes ("decode", ...), "" = any
  std::string_view note;         ///< what it is, for the report and --help
};

/// decode, presized, presized_large, collate, without, control (in the order the report
/// lists them).
std::span<const CandidateKind> candidate_kinds();
/// The entry of `kind`, or nullptr.
const CandidateKind* find_candidate(std::string_view kind);

/// A tail fix (issue 34 item 4): a change of the loader's shape, not of the per-sample
/// work, so it has no BM_Sample case: it runs end to end as
/// BM_EndToEnd/<pipeline>/<kind>:<param>/<baseline>/workers:<w> beside today's case at the
/// same workers, which prices it with the step model from its own timed costs
/// (pred_step_deep_prefetch_ms, pred_step_out_of_order_ms); the fix's case measures it and
/// records that prediction (fix_pred_step_ms) beside its step (bench/cases/tail_fixes.h).
struct LoaderFix {
  std::string_view kind;   ///< the key's variant
  std::string_view note;   ///< what it changes, for the report
};

/// prefetch (param: the deeper depth, twice --prefetch), delivery (param kOutOfOrder).
std::span<const LoaderFix> loader_fixes();
/// The entry of `kind`, or nullptr.
const LoaderFix* find_loader_fix(std::string_view kind);
/// The delivery fix's parameter: LoaderOptions::in_order false.
inline constexpr std::string_view kOutOfOrder = "out_of_order";

/// The loader's stages in pipeline order (measure/stage_timers.h's Stage enum follows
/// it); bench writes each as a counter <stage>_ms, ms per sample.
inline constexpr std::string_view kStageNames[] = {"read",      "decode", "transform",
                                                   "collate",   "batch_ops", "h2d"};

/// The device batch operators bench times (bench/cases/device_op_bench.cpp, model::device_op_case:
/// BM_Transform/<op>/device/<format>/batch:<n>, counter batch_ms: CUDA-event ms per batch),
/// at each of kDeviceOpBatches and the run's own --batch. The what-if row "finish on the
/// accelerator" (report/whatif.h) reads them at the run's batch in kDeviceFinishFormat, and
/// kDeviceNormalizeOp's case (uint8 NHWC in, float32 NCHW out: the CUDA steps' own kernel).
inline constexpr std::string_view kDeviceBatchOps[] = {"horizontal_flip", "mixup", "cutmix"};
inline constexpr std::string_view kDeviceNormalizeOp = "normalize";
inline constexpr int kDeviceOpBatches[] = {64, 256};
/// The batch the loader hands over when the device finishes it: uint8 NHWC, the uint8
/// collate's (transforms/batch_ops_device.h's device_batch_format_name(kUint8Nhwc)).
inline constexpr std::string_view kDeviceFinishFormat = "uint8_nhwc";

}  // namespace pipebench::model
