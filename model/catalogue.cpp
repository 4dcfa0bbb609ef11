#include "model/catalogue.h"

#include <array>

namespace pipebench::model {
namespace {

constexpr std::array<Baseline, 4> kBaselines = {{
    {"emulated", false, "an emulated step of fixed duration (--compute-ms)"},
    {"cuda", true, "the MLP on the GPU (cuBLAS; the same as cuda:mlp)"},
    {"cuda:mlp", true, "the MLP on the GPU (cuBLAS)"},
    {"cuda:cnn", true, "the case study's toy CNN on the GPU (cuDNN; pipeline/train_step_cnn.h)"},
}};

constexpr std::array<CandidateKind, 6> kCandidates = {{
    {"decode", CandidateRole::kFix, true, "decode",
     "the same spec with the ROI / DCT-scaled decode planner (decode: {mode: auto})"},
    {"presized", CandidateRole::kFix, true, "decode",
     "the same spec on a copy of the data with every shorter side reduced to N px (--presize)"},
    {"presized_large", CandidateRole::kFix, true, "decode",
     "the same spec on a copy of the data where only the large images (model/large_images.h) have their "
     "shorter side reduced to N px, the others byte for byte (--presize-large): a tail fix"},
    {"collate", CandidateRole::kFix, false, "collate",
     "uint8 batches, the trailing normalize after the H2D copy (the accelerator's share estimated)"},
    {"without", CandidateRole::kPrice, false, "",
     "the spec without one per-sample operator: what that operator costs (a price, not a fix)"},
    {"control", CandidateRole::kControl, false, "",
     "today's pipeline against itself, paired as a candidate is: must read zero (the A/A test)"},
}};

constexpr std::array<LoaderFix, 2> kLoaderFixes = {{
    {"prefetch", "a deeper prefetch: the loader keeps N batches in flight instead of --prefetch "
                 "(N - --prefetch more batch buffers of host memory; the samples and their order unchanged)"},
    {"delivery", "out-of-order delivery (PyTorch's DataLoader(in_order=False)): the loop takes whichever "
                 "complete batch is ready first; changes the order in which samples reach the model, not their pixels"},
}};

}  // namespace

std::span<const LoaderFix> loader_fixes() { return kLoaderFixes; }

const LoaderFix* find_loader_fix(std::string_view kind) {
  for (const auto& f : kLoaderFixes)
    if (f.kind == kind) return &f;
  return nullptr;
}

std::span<const Baseline> baselines() { return kBaselines; }

const Baseline* find_baseline(std::string_view name) {
  for (const auto& b : kBaselines)
    if (b.name == name) return &b;
  return nullptr;
}

std::span<const CandidateKind> candidate_kinds() { return kCandidates; }

const CandidateKind* find_candidate(std::string_view kind) {
  for (const auto& c : kCandidates)
    if (c.kind == kind) return &c;
  return nullptr;
}

}  // namespace pipebench::model
