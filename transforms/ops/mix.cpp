// Batch operators (batch_op.h), after a spec's collate:
//   mixup            torchvision v2 MixUp(alpha): lam ~ Beta(alpha, alpha) per batch
//   cutmix           torchvision v2 CutMix(alpha): a box of area fraction 1 - lam swapped
//                    (both pair sample i with N-1-i as timm does, where torchvision pairs
//                    i with i-1, batch.roll(1): the same distribution of pairs for an even
//                    N; with an odd N the middle sample stays unmixed)
//   mixup_cutmix     timm Mixup(mixup_alpha, cutmix_alpha, prob, switch_prob): per batch,
//                    with probability prob, cutmix (with probability switch_prob when both
//                    alphas are > 0) or mixup
//   label_smoothing  soft labels smoothed (timm Mixup's label_smoothing; torch's
//                    CrossEntropyLoss(label_smoothing) computes the same targets)
// Pairing and in-place work: batch_mix.h. Draw order per batch (draw_mix, batch_mix.h): the
// prob coin, the switch coin (mixup_cutmix only), lam, then the cutmix box's centre.
#include <memory>
#include <stdexcept>
#include <string>

#include "transforms/batch_mix.h"
#include "transforms/registry.h"

namespace pipebench {
namespace {

class MixOp final : public BatchOperator {
 public:
  // mixup_alpha / cutmix_alpha == 0 disables that kind; switch_prob picks between them.
  MixOp(std::string name, double mixup_alpha, double cutmix_alpha, double prob, double switch_prob)
      : name_(std::move(name)), params_{mixup_alpha, cutmix_alpha, prob, switch_prob} {}
  const std::string& name() const override { return name_; }
  bool mixes_pixels() const override { return true; }
  // The draws in draw_mix (batch_mix.h), shared with the device version (batch_ops_device.h).
  void apply(BatchData& b, Rng& rng) const override { apply_mix(b, draw_mix(params_, b.height, b.width, rng)); }
  // The same draws; the soft labels mixed with the weight the pixels will get.
  void apply_labels(BatchData& b, Rng& rng, MixDraw& draw) const override {
    draw = draw_mix(params_, b.height, b.width, rng);
    if (draw.apply)
      mix_soft_labels(b.soft_labels, b.size, b.num_classes,
                      draw.cut ? cut_lam(b.height, b.width, draw.box) : static_cast<float>(draw.lam));
  }

 private:
  std::string name_;
  MixParams params_;
};

class LabelSmoothingOp final : public BatchOperator {
 public:
  explicit LabelSmoothingOp(double smoothing) : smoothing_(static_cast<float>(smoothing)) {}
  const std::string& name() const override {
    static const std::string n = "label_smoothing";
    return n;
  }
  void apply(BatchData& b, Rng&) const override { smooth_labels(b, smoothing_); }

 private:
  float smoothing_;
};

ParamSchema alpha_param(const char* name, const char* default_text, double min, const char* doc) {
  return {name, ParamType::kFloat, default_text, min, 1e6, {}, 0, {}, doc};
}

ParamSchema prob_param(const char* name, const char* doc) {
  return {name, ParamType::kFloat, "1.0", 0, 1, {}, 0, {}, doc};
}

}  // namespace

void register_mix_ops(OpRegistry& r) {
  OpSchema mixup{"mixup", OpStage::kBatch, "v2.MixUp",
                 "mixes each sample with its partner in the flipped batch: lam x + (1 - lam) x', "
                 "lam ~ Beta(alpha, alpha); soft labels alike",
                 {alpha_param("alpha", "1.0", 1e-6, "Beta distribution parameter"),
                  prob_param("p", "probability a batch is mixed")},
                 {}, nullptr};
  mixup.make_batch = [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<BatchOperator> {
    return std::make_unique<MixOp>("mixup", p.get_float("alpha"), 0.0, p.get_float("p"), 0.0);
  };
  r.add(std::move(mixup));

  OpSchema cutmix{"cutmix", OpStage::kBatch, "v2.CutMix",
                  "swaps a random box (area fraction 1 - lam, lam ~ Beta(alpha, alpha)) with the "
                  "partner in the flipped batch; soft labels mixed by the box's area",
                  {alpha_param("alpha", "1.0", 1e-6, "Beta distribution parameter"),
                   prob_param("p", "probability a batch is mixed")},
                  {}, nullptr};
  cutmix.make_batch = [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<BatchOperator> {
    return std::make_unique<MixOp>("cutmix", 0.0, p.get_float("alpha"), p.get_float("p"), 0.0);
  };
  r.add(std::move(cutmix));

  OpSchema both{"mixup_cutmix", OpStage::kBatch, "",
                "timm's Mixup: per batch, with probability prob, cutmix (probability switch_prob "
                "when both alphas > 0) or mixup; an alpha of 0 disables that kind",
                {alpha_param("mixup_alpha", "1.0", 0, "mixup's Beta parameter (0: off)"),
                 alpha_param("cutmix_alpha", "0.0", 0, "cutmix's Beta parameter (0: off)"),
                 prob_param("prob", "probability a batch is mixed"),
                 {"switch_prob", ParamType::kFloat, "0.5", 0, 1, {}, 0, {},
                  "probability of cutmix when both are enabled"}},
                {"{mixup_alpha: 0.8, cutmix_alpha: 1.0}"}, nullptr};
  both.make_batch = [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<BatchOperator> {
    const double m = p.get_float("mixup_alpha"), c = p.get_float("cutmix_alpha");
    if (m <= 0.0 && c <= 0.0)
      throw std::invalid_argument("mixup_cutmix: mixup_alpha and cutmix_alpha are both 0; enable one (> 0)");
    return std::make_unique<MixOp>("mixup_cutmix", m, c, p.get_float("prob"), p.get_float("switch_prob"));
  };
  r.add(std::move(both));

  OpSchema smooth{"label_smoothing", OpStage::kBatch, "",
                  "soft labels (1 - smoothing) one-hot + smoothing / num_classes (timm Mixup's "
                  "label_smoothing, torch CrossEntropyLoss(label_smoothing))",
                  {{"smoothing", ParamType::kFloat, "0.1", 0, 1, {}, 0, {}, "mass spread over all classes"}},
                  {}, nullptr};
  smooth.make_batch = [](const OpParams& p, const OpBuildContext&) -> std::unique_ptr<BatchOperator> {
    return std::make_unique<LabelSmoothingOp>(p.get_float("smoothing"));
  };
  r.add(std::move(smooth));
}

}  // namespace pipebench
