// TEST-ONLY: an injected, known slowdown of one operator, for calibrating the A/B
// regression gate (scripts/gate_calibration.sh, docs/ab-gate.md). Never set it in a real
// measurement.
//
//   PIPEBENCH_TEST_SLOWDOWN=<op>:<pct>        e.g. PIPEBENCH_TEST_SLOWDOWN=normalize:10
//   PIPEBENCH_TEST_SLOWDOWN=<op>:<pct>:work   e.g. PIPEBENCH_TEST_SLOWDOWN=normalize:1:work
//
// The first form adds time (a busy-wait; below). The second adds *work*, in instructions:
// after each apply() the operator runs once more on a copy of pct % of its input's pixels
// (the first ones, as an image of one row), so a per-pixel operator (normalize) executes
// about pct % more instructions, plus the copy of those pixels (a memcpy) and the call: what the
// instruction-count gate can be calibrated with (a busy-wait costs Valgrind few
// instructions for its time: +1 % of time added 0.027 % of normalize's instructions).
//
// read once, when the operator registry is built. When it is set, every instance of
// operator <op> that the registry makes (BM_Transform/<op>, and pipelines that run <op>
// as a step of its own) times its apply() and then busy-waits for <pct> percent of that
// time more (of the median of the worker's last 9 apply() times, so that a call preempted
// on a busy machine does not inflate the wait), so the operator costs (1 + pct / 100)
// times as much CPU and wall time. A
// step that fuses <op> into another (normalize after random_resized_crop, the default
// recipes' plan) does not call the operator's apply() and is not slowed. pipebench prints
// one "pipebench: TEST-ONLY" line on stderr when the hook is active.
//
// Unset or empty: no effect at all (the registry is left as it is). A malformed value, an
// unknown operator or one whose type the pipeline planner inspects (the crops, resize and
// the flips: transforms/pipeline.cpp casts them, a wrapper would change the plan) is
// refused: a message on stderr and exit status 2.
//
// No operator file changes: transforms/ops/test_slowdown.cpp defines
// register_test_slowdown_ops(), which the generated ops_index.cpp calls after the other
// families (CMake lists transforms/ops/*.cpp in name order, and "test_slowdown" sorts
// after every family that registers an operator); it wraps the operator's factory.
#pragma once

#include <cstdint>
#include <string>

namespace pipebench {

/// The hook's name for TurboDecoder::decode, the full-resolution decode (not a registry
/// operator): PIPEBENCH_TEST_SLOWDOWN=turbo_decode:<pct>[:work] slows BM_Decode/turbo_full,
/// every pipeline whose decode is full (BM_Sample/<recipe> of the default recipes) and the
/// loader. The work form decodes each JPEG's first rows again through RoiDecoder (which
/// stops after the window's last row): a thread's row credit grows by pct % of each image's
/// height and is spent in windows of 16 rows (one 4:2:0 iMCU row; the image's height when
/// shorter) plus 14 rows charged for the window's header parse and set-up (measured on
/// 500 x 375 baseline JPEGs), so a run of decodes carries about pct % more instructions,
/// deterministic for a fixed image sequence (the remainder carries from image to image;
/// non-JPEG images carry none; a progressive JPEG's window costs nearly a whole decode).
inline constexpr const char* kTurboDecodeHook = "turbo_decode";

struct TestSlowdown {
  std::string op;    ///< the slowed operator's registry name; empty: hook off
  double pct = 0.0;  ///< extra time (or work), percent of the operator's own
  bool work = false; ///< ":work": extra rows processed instead of a busy-wait
};

/// PIPEBENCH_TEST_SLOWDOWN, parsed on first call. Exits with status 2 (message on stderr)
/// when it is set but malformed.
const TestSlowdown& test_slowdown();

/// When `op` is the slowed operator: busy-waits pct % of `elapsed_ns` (steady clock, so the
/// thread's CPU time grows by the same amount). Otherwise returns at once.
void apply_test_slowdown(const char* op, int64_t elapsed_ns);

}  // namespace pipebench
