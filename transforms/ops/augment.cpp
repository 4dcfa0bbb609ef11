// The automatic augmentation operators (transforms/augment.h does the work):
//   rand_augment          torchvision RandAugment(num_ops, magnitude, num_magnitude_bins,
//                         interpolation, fill), plus timm's magnitude_std and increasing
//                         (rand_augment_transform "rand-m9-mstd0.5-inc1")
//   trivial_augment_wide  torchvision TrivialAugmentWide(num_magnitude_bins, interpolation, fill)
//   auto_augment          torchvision AutoAugment(policy, interpolation, fill)
// All take the uint8 HWC image and keep its shape; each worker keeps its scratch image and
// step list in an OpState, so no heap allocation per sample after warm-up.
#include "transforms/augment.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "transforms/ops/warp_params.h"
#include "transforms/registry.h"

namespace pipebench {
namespace {

struct AugmentState final : OpState {
  Image scratch;
  std::vector<AugStep> steps;
};

// Common to the three policies: draw the steps, then apply them.
class PolicyOp : public Operator {
 public:
  explicit PolicyOp(WarpOptions warp) : warp_(warp) {}
  OpStage stage() const override { return OpStage::kImage; }
  DataShape output_shape(const DataShape& in) const override {
    require_image(in, name());
    return in;
  }
  void apply(SampleData& s, Rng& rng, OpState* state) const override {
    AugmentState local;  // only for callers that pass no state (tests)
    AugmentState& st = state != nullptr ? *static_cast<AugmentState*>(state) : local;
    sample(s.image.height, s.image.width, rng, st.steps);
    apply_augment_steps(s.image, st.steps, warp_, st.scratch);
  }
  std::unique_ptr<OpState> make_state() const override {
    auto st = std::make_unique<AugmentState>();
    st->steps.reserve(max_steps());
    return st;
  }

 protected:
  virtual void sample(int height, int width, Rng& rng, std::vector<AugStep>& steps) const = 0;
  virtual size_t max_steps() const = 0;

 private:
  WarpOptions warp_;
};

class RandAugmentOp final : public PolicyOp {
 public:
  RandAugmentOp(const RandAugmentParams& p, WarpOptions warp) : PolicyOp(warp), params_(p) {
    check_rand_augment(params_);
  }
  const std::string& name() const override {
    static const std::string n = "rand_augment";
    return n;
  }

 protected:
  void sample(int height, int width, Rng& rng, std::vector<AugStep>& steps) const override {
    sample_rand_augment(params_, height, width, rng, steps);
  }
  size_t max_steps() const override { return static_cast<size_t>(params_.num_ops); }

 private:
  RandAugmentParams params_;
};

class TrivialAugmentWideOp final : public PolicyOp {
 public:
  TrivialAugmentWideOp(int num_magnitude_bins, WarpOptions warp)
      : PolicyOp(warp), num_magnitude_bins_(num_magnitude_bins) {
    check_trivial_augment_wide(num_magnitude_bins_);
  }
  const std::string& name() const override {
    static const std::string n = "trivial_augment_wide";
    return n;
  }

 protected:
  void sample(int, int, Rng& rng, std::vector<AugStep>& steps) const override {
    sample_trivial_augment_wide(num_magnitude_bins_, rng, steps);
  }
  size_t max_steps() const override { return 1; }

 private:
  int num_magnitude_bins_;
};

class AutoAugmentOp final : public PolicyOp {
 public:
  AutoAugmentOp(AutoAugmentPolicy policy, WarpOptions warp) : PolicyOp(warp), policy_(policy) {}
  const std::string& name() const override {
    static const std::string n = "auto_augment";
    return n;
  }

 protected:
  void sample(int height, int width, Rng& rng, std::vector<AugStep>& steps) const override {
    sample_auto_augment(policy_, height, width, rng, steps);
  }
  size_t max_steps() const override { return 2; }

 private:
  AutoAugmentPolicy policy_;
};

// --- parameters ------------------------------------------------------------------------------

ParamSchema bins_param() {
  return {"num_magnitude_bins",
          ParamType::kInt,
          "31",
          2,
          1e6,
          {},
          0,
          {},
          "number of magnitude values each operation's range is divided into"};
}

WarpOptions warp_options(const OpParams& p, const std::string& op) {
  return WarpOptions{warp_interpolation(p), warp_fill(p, op)};
}

AutoAugmentPolicy policy_from_name(const std::string& name) {
  if (name == "cifar10") return AutoAugmentPolicy::kCifar10;
  if (name == "svhn") return AutoAugmentPolicy::kSvhn;
  if (name == "imagenet") return AutoAugmentPolicy::kImageNet;
  throw std::invalid_argument("auto_augment: policy must be one of imagenet, cifar10, svhn, got " +
                              name);
}

}  // namespace

void register_augment_ops(OpRegistry& r) {
  r.add({"rand_augment",
         OpStage::kImage,
         "RandAugment",
         "num_ops operations drawn uniformly from RandAugment's space, each at `magnitude` with a "
         "random sign",
         {{"num_ops", ParamType::kInt, "2", 0, 1000, {}, 0, {}, "operations applied in sequence"},
          {"magnitude",
           ParamType::kInt,
           "9",
           0,
           1e6,
           {},
           0,
           {},
           "magnitude bin of every operation, in [0, num_magnitude_bins - 1] ([0, 10] when "
           "increasing)"},
          bins_param(),
          warp_interpolation_param(),
          warp_fill_param("none"),
          {"magnitude_std",
           ParamType::kFloat,
           "0",
           0,
           1e300,
           {},
           0,
           {},
           "timm: per operation a magnitude from N(magnitude, magnitude_std) clipped to the scale "
           "(> 100: uniform in [0, magnitude]); 0: fixed (torchvision)"},
          {"increasing",
           ParamType::kBool,
           "false",
           -1e300,
           1e300,
           {},
           0,
           {},
           "timm's inc1 op set (severity grows with magnitude), its 0..10 scale and each operation "
           "applied with probability 0.5"}},
         {"{}", "{interpolation: bilinear}", "{magnitude_std: 0.5, increasing: true}"},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           RandAugmentParams ra;
           ra.num_ops = static_cast<int>(p.get_int("num_ops"));
           ra.magnitude = static_cast<int>(p.get_int("magnitude"));
           ra.num_magnitude_bins = static_cast<int>(p.get_int("num_magnitude_bins"));
           ra.magnitude_std = p.get_float("magnitude_std");
           ra.increasing = p.get_bool("increasing");
           return std::make_unique<RandAugmentOp>(ra, warp_options(p, "rand_augment"));
         }});
  r.add({"trivial_augment_wide",
         OpStage::kImage,
         "TrivialAugmentWide",
         "one operation drawn uniformly from TrivialAugmentWide's space at a uniform magnitude bin",
         {bins_param(), warp_interpolation_param(), warp_fill_param("none")},
         {},
         [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
           return std::make_unique<TrivialAugmentWideOp>(
               static_cast<int>(p.get_int("num_magnitude_bins")),
               warp_options(p, "trivial_augment_wide"));
         }});
  r.add(
      {"auto_augment",
       OpStage::kImage,
       "AutoAugment",
       "one of the policy's 25 learned sub-policies: two operations, each with its probability and "
       "magnitude",
       {{"policy",
         ParamType::kString,
         "imagenet",
         -1e300,
         1e300,
         {"imagenet", "cifar10", "svhn"},
         0,
         {},
         "the learned policy (torchvision AutoAugmentPolicy)"},
        warp_interpolation_param(),
        warp_fill_param("none")},
       {},
       [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<Operator> {
         return std::make_unique<AutoAugmentOp>(policy_from_name(p.get_string("policy")),
                                                warp_options(p, "auto_augment"));
       }});
}

}  // namespace pipebench
