// TEST-ONLY hook: PIPEBENCH_TEST_SLOWDOWN=<op>:<pct> (see test_slowdown.h). Registers no
// operator; when the variable is set it wraps <op>'s factory so that each apply() is
// followed by a busy-wait of pct % of its typical time (SlowedOp).
#include "transforms/ops/test_slowdown.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "transforms/ops/geometry.h"
#include "transforms/registry.h"

namespace pipebench {
namespace {

constexpr const char* kVar = "PIPEBENCH_TEST_SLOWDOWN";

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void refuse(const std::string& why) {
  std::fprintf(stderr, "pipebench: error: %s=%s: %s\n", kVar, std::getenv(kVar), why.c_str());
  std::exit(2);
}

TestSlowdown parse() {
  TestSlowdown t;
  const char* v = std::getenv(kVar);
  if (v == nullptr || *v == '\0') return t;
  std::string text(v);
  if (text.size() > 5 && text.compare(text.size() - 5, 5, ":work") == 0) {
    t.work = true;
    text.resize(text.size() - 5);
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    refuse("expected <op>:<pct>[:work], e.g. normalize:10 (test-only)");
  const std::string pct_text = text.substr(colon + 1);
  char* end = nullptr;
  const double pct = std::strtod(pct_text.c_str(), &end);
  if (end == pct_text.c_str() || *end != '\0' || !std::isfinite(pct) || pct < 0 || pct > 10000)
    refuse("<pct> must be a number in [0, 10000], got '" + pct_text + "'");
  t.op = text.substr(0, colon);
  t.pct = pct;
  return t;
}

// The operator's per-worker state plus its recent apply() times.
struct SlowedState final : OpState {
  std::unique_ptr<OpState> inner;
  std::array<int64_t, 9> recent{};
  size_t count = 0;
  SampleData extra;            // ":work": the copied rows, reused (no allocation per call)
  std::vector<float> tensor;   // ... and their output
};

// The operator with its apply() timed and stretched; everything else forwarded. The wait is
// pct % of the median of the worker's last 9 apply() times (this one included), not of this
// call's alone: a call the kernel preempted for a time slice (ms, on a busy machine) would
// otherwise add pct % of that slice too, and the injected slowdown would grow with the
// machine's load (measured: 2.75x CPU time for normalize:100 at load 8 on 2 cores).
class SlowedOp final : public Operator {
 public:
  explicit SlowedOp(std::unique_ptr<Operator> inner) : inner_(std::move(inner)) {}
  const std::string& name() const override { return inner_->name(); }
  OpStage stage() const override { return inner_->stage(); }
  DataShape output_shape(const DataShape& in) const override { return inner_->output_shape(in); }
  void apply(SampleData& sample, Rng& rng, OpState* state) const override {
    auto* s = static_cast<SlowedState*>(state);
    if (test_slowdown().work) {
      apply_with_extra_rows(sample, rng, s);
      return;
    }
    const int64_t t0 = steady_ns();
    inner_->apply(sample, rng, s != nullptr ? s->inner.get() : nullptr);
    int64_t elapsed = steady_ns() - t0;
    if (s != nullptr) {
      s->recent[s->count++ % s->recent.size()] = elapsed;
      const size_t n = std::min(s->count, s->recent.size());
      std::array<int64_t, 9> sorted = s->recent;
      std::nth_element(sorted.begin(), sorted.begin() + n / 2, sorted.begin() + n);
      elapsed = sorted[n / 2];
    }
    apply_test_slowdown(inner_->name().c_str(), elapsed);
  }
  // ":work": the same operator again on a copy of the first pct % of the input's rows, into
  // a scratch tensor, with a copy of the draws (the real output and stream are untouched).
  void apply_with_extra_rows(SampleData& sample, Rng& rng, SlowedState* s) const {
    OpState* inner_state = s != nullptr ? s->inner.get() : nullptr;
    const bool image_in = !sample.shape.tensor && sample.image.height > 0;
    SampleData local_extra;
    std::vector<float> local_tensor;
    SampleData& extra = s != nullptr ? s->extra : local_extra;
    std::vector<float>& tensor = s != nullptr ? s->tensor : local_tensor;
    if (image_in) {
      const Image& in = sample.image;
      // pct % of the pixels as one row (a per-pixel operator's work is per pixel; whole
      // rows would round 1 % of 224 rows up to 3, 1.34 %).
      const double all = static_cast<double>(in.height) * in.width;
      const int pixels = static_cast<int>(std::clamp(std::llround(all * test_slowdown().pct / 100.0), 1LL,
                                                     static_cast<long long>(all)));
      extra.image.resize(1, pixels, in.channels);
      std::copy(in.ptr(), in.ptr() + extra.image.size_bytes(), extra.image.ptr());
      extra.shape = DataShape{false, in.channels, 1, pixels};
      const size_t floats = static_cast<size_t>(in.channels) * pixels;
      if (tensor.size() < floats) tensor.resize(floats);
      extra.tensor = tensor.data();
    }
    Rng copy = rng;
    inner_->apply(sample, rng, inner_state);
    if (image_in) inner_->apply(extra, copy, inner_state);
  }
  std::unique_ptr<OpState> make_state() const override {
    auto s = std::make_unique<SlowedState>();
    s->inner = inner_->make_state();
    return s;
  }

 private:
  std::unique_ptr<Operator> inner_;
};

// pipeline.cpp casts these types to plan fused steps; a wrapper would change the plan.
bool planner_inspects(const Operator* op) {
  return dynamic_cast<const WindowOp*>(op) != nullptr ||
         dynamic_cast<const ResizeOp*>(op) != nullptr || dynamic_cast<const FlipOp*>(op) != nullptr;
}

}  // namespace

const TestSlowdown& test_slowdown() {
  static const TestSlowdown t = parse();
  return t;
}

void apply_test_slowdown(const char* op, int64_t elapsed_ns) {
  const TestSlowdown& t = test_slowdown();
  if (t.op.empty() || t.pct <= 0 || elapsed_ns <= 0 || t.op != op) return;
  const int64_t until = steady_ns() + static_cast<int64_t>(std::llround(static_cast<double>(elapsed_ns) * t.pct / 100.0));
  while (steady_ns() < until) {
  }
}

void register_test_slowdown_ops(OpRegistry& r) {
  const TestSlowdown& t = test_slowdown();
  if (t.op.empty()) return;
  if (t.op == kTurboDecodeHook) {  // not an operator: TurboDecoder::decode reads the hook
    std::fprintf(stderr, "pipebench: TEST-ONLY %s: the full decode (TurboDecoder::decode) slowed by %g %% of its %s (never use in a real measurement)\n",
                 kVar, t.pct, t.work ? "work (its first rows decoded again)" : "time");
    return;
  }
  // The registry is being built (a non-const object): its schema may be changed here.
  auto* schema = const_cast<OpSchema*>(r.find(t.op));
  if (schema == nullptr || !schema->make)
    refuse("no per-sample operator named '" + t.op + "' (batch operators are not supported)");
  auto inner = schema->make;
  schema->make = [inner](const OpParams& p, const OpBuildContext& c) -> std::unique_ptr<Operator> {
    std::unique_ptr<Operator> op = inner(p, c);
    if (planner_inspects(op.get()))
      refuse("'" + op->name() + "' is planned by its type (crops, resize, flips); pick "
             "normalize or another operator the planner does not fuse");
    return std::make_unique<SlowedOp>(std::move(op));
  };
  std::fprintf(stderr, "pipebench: TEST-ONLY %s: operator %s slowed by %g %% of its %s (never use in a real measurement)\n",
               kVar, t.op.c_str(), t.pct, t.work ? "work (extra rows)" : "time");
}

}  // namespace pipebench
