#!/usr/bin/python3
"""ab_gate_test.py - the paired A/B gate: scripts/compare.sh --ab (scripts/pbgate/ab.py),
scripts/build_ref.sh, scripts/gate_calibration.sh's hook and examples/github-actions-ab.yml.

Why it exists: the gate's exit status (0 no regression, 1 regression, 2 bad input) is what
fails a pull request, so its statistic is checked against examples worked by hand, its
verdict rules case by case, its refusals (missing binary, different case sets, another
pipebench version) on wrapper scripts around the real binary, and an A/A run of the real
binary must not cry REGRESSION while a 50 % slowdown injected through the test-only hook
(PIPEBENCH_TEST_SLOWDOWN, transforms/ops/test_slowdown.h) must be caught. The example
workflow is parsed and its commands run here, with the refs replaced by HEAD.

  /usr/bin/python3 ab_gate_test.py --pipebench PATH [--scripts DIR] [--pipebench-data PATH]

The real runs use tiny filters (1 to 3 BM_Transform cases, 2 to 5 ABBA rounds, short
blocks): about 270 s in all on a quiet 2-core VM, 140 s of it in the three tests that judge
time (TIMED, run alone by ctest as ab_gate_timed; --timed=only|none|all). build_ref.sh is run with --dry-run (a real build takes
minutes without a warm ccache); PIPEBENCH_AB_TEST_BUILD=1 also builds HEAD with it, and
the workflow's two build steps for real.
"""

import argparse
import json
import math
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

from ctest_unittest import run_tests

ARGS = None
BUILD = os.environ.get("PIPEBENCH_AB_TEST_BUILD") == "1"  # run build_ref.sh for real
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FEW = "BM_Transform/(normalize|horizontal_flip/p:1.0)$"  # steady cases
# A sizing operator's case fixes its iterations (bench/cases/transform_bench.cpp: 1 GiB of
# input copies over the images' size), about 2 s a block whatever --min-time: gated alone on
# two short rounds (test_a_case_that_fixes_its_iterations_keeps_its_name), not in the A/A run,
# where its 40 blocks (16 of the screen, 24 when confirmed) took some 80 s.
FIXED = "BM_Transform/random_resized_crop(/iterations:[0-9]+)?$"
QUICK = ["--min-time", "0.02"]


def scripts_dir():
    return ARGS.scripts if ARGS and ARGS.scripts else os.path.join(REPO, "scripts")


def import_gate():
    """pbgate.ab, the time gate's module (the one whose names a test may replace)."""
    if scripts_dir() not in sys.path:
        sys.path.insert(0, scripts_dir())
    from pbgate import ab
    return ab


def import_paired():
    """pbgate.paired, the paired statistic and verdicts."""
    import_gate()
    from pbgate import paired
    return paired


def run(cmd, timeout=300, env=None, cwd=None):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    print(f"$ {' '.join(shlex.quote(c) for c in cmd)}  -> rc {p.returncode}")
    return p


def write_exe(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


# --- the statistic and the verdicts ---------------------------------------------------------

class PairedStatsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.g = import_gate()
        cls.s = import_paired()

    def test_abba_ratio_cancels_linear_drift(self):
        # No change, the machine slows by 10 ns per block: A1=100, B1=110, B2=120, A2=130.
        # An AB comparison would say B1/A1 = 1.10; ABBA: (110 + 120) / (100 + 130) = 1.
        self.assertEqual(self.s.quad_ratio(100, 110, 120, 130), 1.0)
        # A real +5 % on top of the same drift: B = 1.05 x (drift): (115.5 + 126) / 230.
        self.assertAlmostEqual(self.s.quad_ratio(100, 115.5, 126, 130), 1.05, places=12)

    def test_hand_worked_no_change(self):
        # Rounds with ratios 1.10, 1.05, 1.15 (e.g. A 100+100, B 110+110; ...):
        #   ln r = 0.0953102, 0.0487902, 0.1397619; mean = 0.2838623 / 3 = 0.0946208
        #   deviations 0.0006894, -0.0458306, 0.0451411; sum of squares 0.0041386
        #   s = sqrt(0.0041386 / 2) = 0.045489; s / sqrt(3) = 0.026263
        #   t(0.975, 2) = 4.302653 -> half-width 0.113001
        #   ratio exp(0.0946208) = 1.099242, interval exp(-0.018380) = 0.981788 ..
        #   exp(0.207622) = 1.230753: contains 1, and ±12.4 % is far wider than the
        #   precision a 3 % threshold needs (±1.5 %): inconclusive, never "no change".
        st = self.s.paired_stats([1.10, 1.05, 1.15])
        self.assertAlmostEqual(st["mean_log"], 0.0946208, places=6)
        self.assertAlmostEqual(st["sd_log"], 0.045489, places=5)
        self.assertAlmostEqual(st["t"], 4.302653, places=5)
        self.assertAlmostEqual(st["ratio"], 1.099242, places=5)
        self.assertAlmostEqual(st["ci_low"], 0.981788, places=5)
        self.assertAlmostEqual(st["ci_high"], 1.230753, places=4)
        v, text = self.s.verdict(st["ratio"], st["ci_low"], st["ci_high"], 3)
        self.assertEqual(v, "inconclusive")
        self.assertEqual(text, "not enough precision to judge a 3 % change (+9.9 %, "
                               "interval ±12.4 %)")
        # With the precision requirement off, rule 6 alone: not significant.
        v, text = self.s.verdict(st["ratio"], st["ci_low"], st["ci_high"], 3, math.inf)
        self.assertEqual(text, "no change (within noise ±12.4 %; +9.9 % not significant)")

    def test_hand_worked_regression(self):
        # Four rounds (A1, B1, B2, A2) -> r = (B1 + B2) / (A1 + A2):
        #   (100, 103, 105, 100) -> 208 / 200 = 1.04
        #   (200, 210, 210, 200) -> 420 / 400 = 1.05
        #   ( 50,  52,  54,  50) -> 106 / 100 = 1.06
        #   ( 99, 104, 106, 101) -> 210 / 200 = 1.05
        #   ln r = 0.0392207, 0.0487902, 0.0582689, 0.0487902; mean 0.0487675
        #   deviations -0.0095468, 0.0000227, 0.0095014, 0.0000227; squares sum 1.81419e-4
        #   s = sqrt(1.81419e-4 / 3) = 0.0077764; s / 2 = 0.0038882
        #   t(0.975, 3) = 3.182446 -> half-width 0.012374
        #   ratio exp(0.0487675) = 1.049976, interval 1.037064 .. 1.063049
        rounds = [(100, 103, 105, 100), (200, 210, 210, 200), (50, 52, 54, 50),
                  (99, 104, 106, 101)]
        r = self.s.judge_case("BM_X", "cpu_time", rounds, 3)
        self.assertEqual(r["round_ratios"], [1.04, 1.05, 1.06, 1.05])
        self.assertAlmostEqual(r["mean_log_ratio"], 0.0487675, places=6)
        self.assertAlmostEqual(r["sd_log_ratio"], 0.0077764, places=6)
        self.assertAlmostEqual(r["t_quantile"], 3.182446, places=5)
        self.assertAlmostEqual(r["ratio"], 1.049976, places=5)
        self.assertAlmostEqual(r["ci_low"], 1.037064, places=5)
        self.assertAlmostEqual(r["ci_high"], 1.063049, places=5)
        # 1.05 > 1.03 and 1.037 > 1: a regression at 3 %.
        self.assertEqual(r["verdict"], "regression")
        self.assertEqual(r["verdict_text"], "REGRESSION")
        # At 5 %: 1.049976 is not above 1.05 -> significant but within the threshold.
        r5 = self.s.judge_case("BM_X", "cpu_time", rounds, 5)
        self.assertEqual(r5["verdict"], "ok")
        self.assertEqual(r5["verdict_text"],
                         "no change (+5.0 %, significant but within the 5 % threshold)")
        # compare.judge's field names (pbgate/compare.py), plus the paired ones.
        for k in ("field", "base_ns", "new_ns", "change", "p", "n_base", "n_new", "verdict",
                  "slower_than_threshold", "cv", "cv_base", "cv_new", "paired", "ratio",
                  "ci_low", "ci_high", "blocks"):
            self.assertIn(k, r)
        self.assertIs(r["paired"], True)
        self.assertEqual(r["blocks"], 4)
        self.assertEqual((r["n_base"], r["n_new"]), (8, 8))
        self.assertAlmostEqual(r["change"], r["ratio"] - 1)
        self.assertEqual(r["base_ns"], 100)  # median of the 8 A blocks
        self.assertEqual(r["new_ns"], 104.5)  # median of the 8 B blocks (104 and 105)

    def test_hand_worked_improvement(self):
        # Ratios 0.96, 0.95, 0.97: ln r = -0.0408220, -0.0512933, -0.0304592, mean
        # -0.0408582, s = 0.0104171, t(0.975, 2) = 4.302653, half-width 0.0258775:
        # ratio 0.959965, interval 0.935442 .. 0.985131 (all below 1), half-width 2.48 %.
        st = self.s.paired_stats([0.96, 0.95, 0.97])
        self.assertAlmostEqual(st["ratio"], 0.959965, places=5)
        self.assertAlmostEqual(st["ci_low"], 0.935442, places=5)
        self.assertAlmostEqual(st["ci_high"], 0.985131, places=5)
        self.assertEqual(self.s.verdict(st["ratio"], st["ci_low"], st["ci_high"], 3, 3)[0],
                         "improvement")
        # At the default precision for 3 % (±1.5 %) the interval is too wide, and it reaches
        # back above 0.97: inconclusive.
        self.assertEqual(self.s.verdict(st["ratio"], st["ci_low"], st["ci_high"], 3)[0],
                         "inconclusive")
        self.assertEqual(self.s.verdict(st["ratio"], st["ci_low"], st["ci_high"], 5),
                         ("ok", "no change (-4.0 %, significant but within the 5 % threshold)"))

    def test_identical_rounds_give_a_point_interval(self):
        st = self.s.paired_stats([1.1, 1.1, 1.1])
        self.assertAlmostEqual(st["ci_low"], 1.1)
        self.assertAlmostEqual(st["ci_high"], 1.1)

    def test_needs_two_rounds_and_positive_ratios(self):
        with self.assertRaises(ValueError):
            self.s.paired_stats([1.1])
        with self.assertRaises(ValueError):
            self.s.paired_stats([1.1, 0.0])

    def test_verdict_rules(self):
        v = self.s.verdict
        # (ratio, low, high, threshold) -> verdict; the interval's half-width is (high -
        # low) / 2, and the precision it must reach (max_noise_pct) defaults to half the
        # threshold.
        table = [
            ((1.05, 1.04, 1.06, 3), "regression"),    # beyond the threshold, low > 1, ±1 %
            ((1.05, 0.99, 1.11, 3), "inconclusive"),  # beyond, but ±6 %: cannot judge
            ((1.02, 1.01, 1.03, 3), "ok"),            # significant, within the threshold
            ((1.03, 1.02, 1.04, 3), "ok"),            # exactly the threshold: not above it
            ((0.95, 0.94, 0.96, 3), "improvement"),   # symmetric: below 1 - 3 %, high < 1
            ((0.95, 0.90, 1.01, 3), "inconclusive"),
            ((0.98, 0.97, 0.99, 3), "ok"),
            ((1.50, 1.40, 1.60, 60), "ok"),           # a loose threshold
            ((1.00, 0.99, 1.01, 0), "ok"),            # threshold 0: significance alone
            ((1.02, 1.01, 1.03, 0), "regression"),
            # ±4 % > 1.5 % and the interval reaches below 1.03: not judged.
            ((1.05, 1.01, 1.09, 3), "inconclusive"),
            # An A/A false alarm seen in calibration (BM_Collate/f32_chw, ±10.6 %).
            ((1.1071, 1.0059, 1.2184, 3), "inconclusive"),
            # Wide, but the whole interval is beyond the threshold: judged.
            ((1.25, 1.10, 1.40, 3), "regression"),
            ((0.95, 0.91, 0.99, 3), "inconclusive"),  # the improvement side, ±4 %
            ((0.80, 0.70, 0.90, 3), "improvement"),
            ((1.001, 0.98, 1.02, 3), "inconclusive"),  # an A/A case at ±2 %
        ]
        for (ratio, lo, hi, th), want in table:
            self.assertEqual(v(ratio, lo, hi, th)[0], want, (ratio, lo, hi, th))
        # A looser precision, or none (inf): rule 6 alone.
        self.assertEqual(v(1.05, 1.01, 1.09, 3, 5)[0], "regression")
        self.assertEqual(v(1.1071, 1.0059, 1.2184, 3, math.inf)[0], "regression")
        self.assertEqual(v(0.95, 0.91, 0.99, 3, math.inf)[0], "improvement")
        self.assertEqual(v(1.001, 0.99, 1.01, 3)[1], "no change (within noise ±1.0 %)")
        self.assertEqual(v(1.05, 1.01, 1.09, 3)[1],
                         "not enough precision to judge a 3 % change (+5.0 %, interval ±4.0 %)")

    def test_analyse_reads_rows_by_their_timed_field(self):
        def doc(cpu, real, err=None):
            rows = [{"name": "BM_Cpu", "run_name": "BM_Cpu", "run_type": "iteration",
                     "real_time": real, "cpu_time": cpu, "time_unit": "us",
                     "key": {"name": "BM_Cpu", "timed_by": "cpu_time"}},
                    {"name": "BM_Wall/real_time", "run_name": "BM_Wall/real_time",
                     "run_type": "iteration", "real_time": real * 1000, "cpu_time": cpu * 1000,
                     "time_unit": "ns", "key": {"name": "BM_Wall", "timed_by": "real_time"}}]
            if err:
                rows.append({"name": "BM_Err", "run_name": "BM_Err", "error_occurred": True,
                             "error_message": err})
            else:
                rows.append({"name": "BM_Err", "run_name": "BM_Err", "run_type": "iteration",
                             "real_time": 1, "cpu_time": 1, "time_unit": "ms"})
            return {"context": {}, "benchmarks": rows}
        # NEW's real time doubles (a busy machine), its CPU time does not; BM_Err errors
        # in NEW only.
        rounds = [(doc(10, 10), doc(10, 20, "boom"), doc(10, 20), doc(10, 10))] * 3
        res, errored, skipped, lost = self.g.analyse(rounds, 3)
        self.assertEqual(res["BM_Cpu"]["field"], "cpu_time")
        self.assertEqual(res["BM_Cpu"]["verdict"], "ok")
        self.assertEqual(res["BM_Wall/real_time"]["field"], "real_time")
        self.assertEqual(res["BM_Wall/real_time"]["verdict"], "regression")
        # Each round: (B1 + B2) / (A1 + A2) = (20 + 20) / (10 + 10) us of real time = 2.
        self.assertAlmostEqual(res["BM_Wall/real_time"]["ratio"], 2.0)
        self.assertAlmostEqual(res["BM_Cpu"]["ratio"], 1.0)
        self.assertEqual(errored, {"BM_Err": "boom"})
        self.assertEqual((skipped, lost), ({}, []))

    def test_paired_cases_are_timed_per_round(self):
        # A paired BM_Sample case's iteration holds paired_rounds rounds of its images: a
        # block that ran two rounds in twice the time did the same work per round.
        def doc(cpu, rounds):
            return {"context": {}, "benchmarks": [
                {"name": "BM_Sample/x/control:aa", "run_type": "iteration", "real_time": cpu,
                 "cpu_time": cpu, "time_unit": "us", "paired_rounds": rounds,
                 "key": {"name": "BM_Sample/x/control:aa", "timed_by": "cpu_time"}}]}
        quads = [(doc(10, 1), doc(20, 2), doc(30, 3), doc(10, 1))] * 3
        res, _, _, _ = self.g.analyse(quads, 3)
        self.assertAlmostEqual(res["BM_Sample/x/control:aa"]["ratio"], 1.0)
        self.assertEqual(res["BM_Sample/x/control:aa"]["verdict"], "ok")


    def test_analyse_skips_cases_that_errored_in_base(self):
        ok = {"context": {}, "benchmarks": [
            {"name": "BM_A", "run_type": "iteration", "real_time": 1, "cpu_time": 1,
             "time_unit": "ms"}]}
        bad = {"context": {}, "benchmarks": [
            {"name": "BM_A", "error_occurred": True, "error_message": "no GPU"}]}
        res, errored, skipped, lost = self.g.analyse([(bad, ok, ok, ok), (ok, ok, ok, ok)], 3)
        self.assertEqual(res, {})
        self.assertEqual(errored, {})
        self.assertIn("BM_A", skipped)
        # Missing from a NEW block (not errored): lost.
        empty = {"context": {}, "benchmarks": []}
        res, errored, skipped, lost = self.g.analyse([(ok, empty, ok, ok), (ok, ok, ok, ok)], 3)
        self.assertEqual(lost, ["BM_A"])


class PlanTest(unittest.TestCase):
    """scripts/pbgate/plan.py: the rounds a precision needs, the cases a budget pays for,
    the power a width gives, and the position effect the alternating orders expose."""

    @classmethod
    def setUpClass(cls):
        cls.s = import_paired()
        from pbgate import plan
        cls.p = plan

    def test_rounds_for_precision_by_hand(self):
        # s = 0.02 (2 % round-to-round spread of ln r), target ±1.5 %: asinh(0.015) =
        # 0.0149994. 8 rounds: t(0.975, 7) = 2.364624 x 0.02 / sqrt(8) = 0.016721 > it;
        # 10 rounds: t(0.975, 9) = 2.262157 x 0.02 / sqrt(10) = 0.014307 <= it.
        self.assertEqual(self.p.rounds_for_precision(0.02, 1.5, 40), 10)
        self.assertAlmostEqual(self.p.half_width_pct(0.02, 10), math.sinh(0.0143071) * 100,
                               places=4)
        self.assertEqual(self.p.rounds_for_precision(0.0, 1.5, 40), 2)
        self.assertIsNone(self.p.rounds_for_precision(0.2, 1.5, 40))  # needs ~720
        self.assertIsNone(self.p.rounds_for_precision(0.02, 0, 40))
        for n in (2, 4, 10, 40):  # the rounds it gives reach the target; two fewer do not
            s = 0.05 / math.sqrt(n)
            got = self.p.rounds_for_precision(s, 1.5, 100)
            self.assertLessEqual(self.p.half_width_pct(s, got), 1.5)
            if got > 2:
                self.assertGreater(self.p.half_width_pct(s, got - 2), 1.5)

    def costs(self):
        c = self.p.BlockCosts()
        # Two blocks: "cheap" 0.1 s and "heavy" 2 s of case time, 0.5 s of overhead.
        for _ in range(2):
            c.add({"benchmarks": [
                {"name": "cheap", "run_type": "iteration", "real_time": 1, "time_unit": "ms",
                 "iterations": 100},
                {"name": "heavy", "run_type": "iteration", "real_time": 1, "time_unit": "s",
                 "iterations": 2}]}, 2.6)
        return c

    def test_block_costs_from_the_rows(self):
        c = self.costs()
        self.assertAlmostEqual(c.case("cheap"), 0.1)
        self.assertAlmostEqual(c.case("heavy"), 2.0)
        self.assertAlmostEqual(c.seconds(["cheap"]), 0.6)
        self.assertAlmostEqual(c.seconds(["cheap", "heavy"]), 2.6)

    def test_block_overhead_grows_with_the_cases(self):
        # A screen block of 64 cases spent 5 s outside their iterations, 0.5 s of it the
        # process start the gate timed: 4.5 / 64 s per case. A block of one case is then
        # planned at 0.5 + 0.0703 + its time, not at the screen's 5 s of overhead.
        c = self.p.BlockCosts(start=0.5)
        rows = [{"name": f"c{k}", "run_type": "iteration", "real_time": 10, "time_unit": "ms",
                 "iterations": 5} for k in range(64)]
        c.add({"benchmarks": rows}, 64 * 0.05 + 5.0)
        a, b = c.overhead_model()
        self.assertAlmostEqual(a, 0.5)
        self.assertAlmostEqual(b, 4.5 / 64)
        self.assertAlmostEqual(c.seconds(["c0"]), 0.5 + 4.5 / 64 + 0.05)
        # A block of two cases that spent 0.9 s outside them: fitted over both sizes by
        # least squares, through both points (b = (5 - 0.9) / 62, a = 0.9 - 2 b).
        c.add({"benchmarks": rows[:2]}, 0.1 + 0.9)
        a, b = c.overhead_model()
        self.assertAlmostEqual(b, 4.1 / 62)
        self.assertAlmostEqual(a, 0.9 - 2 * 4.1 / 62)
        # Sizes 64 and 63 (a case errored in one block): no fit, whose slope would be the
        # two processes' start-up difference; the start and the split as with one size.
        c = self.p.BlockCosts(start=0.5)
        c.add({"benchmarks": rows}, 64 * 0.05 + 5.0)
        c.add({"benchmarks": rows[:63]}, 63 * 0.05 + 5.4)
        a, b = c.overhead_model()
        self.assertAlmostEqual(a, 0.5)
        self.assertAlmostEqual(b, (5.2 - 0.5) / 64)
        # Without a start, one block size: the median overhead, whatever the block's size
        # (the old rule).
        c = self.p.BlockCosts()
        c.add({"benchmarks": rows}, 64 * 0.05 + 5.0)
        self.assertAlmostEqual(c.seconds(["c0"]), 5.05)

    def test_screen_rounds_keep_to_half_the_budget(self):
        sr = self.p.screen_rounds
        self.assertEqual(sr(4, 1, 37, 227), 4)      # 3 more rounds cost 111 s <= 113.5
        self.assertEqual(sr(4, 1, 150, 80), 2)      # none affordable: the two a t needs
        self.assertEqual(sr(8, 1, 10, 50), 2)       # 2 more fit: 3 in all, made even: 2
        self.assertEqual(sr(8, 1, 10, 80), 4)
        self.assertEqual(sr(4, 1, 0, 0), 4)         # nothing measured: as asked

    def test_plan_puts_the_deciding_cases_first(self):
        c = self.costs()
        # 60 s: cheap at its 10 rounds costs 4 x 10 x 0.6 = 24 s, heavy at its 4 rounds
        # 4 x 4 x 2.5 = 40 s, both together at 10 rounds 104 s: only one fits. Cheapest
        # first takes cheap; `first` (heavy's time can decide) takes heavy.
        cases, rounds, out = self.p.plan_stage([], {"heavy": 4, "cheap": 10}, c, 60, 6, 40)
        self.assertEqual((cases, rounds, out), (["cheap"], 10, ["heavy"]))
        cases, rounds, out = self.p.plan_stage([], {"heavy": 4, "cheap": 10}, c, 60, 6, 40,
                                               first=["heavy"])
        self.assertEqual((cases, rounds, out), (["heavy"], 4, ["cheap"]))

    def test_plan_takes_the_cheapest_that_fit(self):
        c = self.costs()
        # 60 s: cheap at 10 rounds costs 4 x 10 x 0.6 = 24 s; with heavy (8 rounds at most
        # 10) 4 x 10 x 2.6 = 104 s: left out.
        cases, rounds, out = self.p.plan_stage([], {"heavy": 8, "cheap": 10}, c, 60, 6, 40)
        self.assertEqual((cases, rounds, out), (["cheap"], 10, ["heavy"]))
        # A suspect is measured whatever the budget, its confirmation's 6 rounds at least;
        # the budget adds what it can pay for.
        cases, rounds, out = self.p.plan_stage(["heavy"], {"cheap": 4}, c, 0, 6, 40)
        self.assertEqual((cases, rounds, out), (["heavy"], 6, ["cheap"]))
        cases, rounds, out = self.p.plan_stage(["heavy"], {"heavy": 30}, c, 4 * 12 * 2.5, 6,
                                               40)
        self.assertEqual((cases, rounds), (["heavy"], 12))  # what 120 s pays for
        self.assertEqual(self.p.plan_stage([], {}, c, 100, 6, 40), ([], 0, []))
        # Odd counts are made even (as many rounds of each order).
        self.assertEqual(self.p.plan_stage(["cheap"], {}, c, 100, 5, 40)[1], 6)

    def test_power_of_a_width(self):
        # ±1.5 % over 6 rounds (t(0.975, 5) = 2.570582): se = asinh(0.015) / 2.570582 =
        # 0.0058350; a true +5 % against a 3 % threshold: (ln 1.05 - ln 1.03) / se =
        # 0.0192308 / 0.0058350 = 3.2958 standard errors: power 0.99951.
        self.assertAlmostEqual(self.p.power_at(5, 3, 1.5, 5), 0.99951, places=4)
        self.assertAlmostEqual(self.p.power_at(3, 3, 1.5, 5), 0.5, places=6)  # at the threshold
        self.assertLess(self.p.power_at(5, 3, 10, 5), 0.75)  # a wide interval: little power
        self.assertIsNone(self.p.power_at(5, 3, 1.5, 0))

    def test_position_effect_and_balanced_orders(self):
        # NEW 2 % slower in truth, and the outer blocks of every round 4 % slower than the
        # inner ones: A B B A reads 1.02 / 1.04, B A A B 1.02 x 1.04. The alternation
        # cancels the position in the mean of ln r; the position effect reads +4 %.
        orders = ["ABBA", "BAAB"] * 3
        ratios = [1.02 / 1.04 if o == "ABBA" else 1.02 * 1.04 for o in orders]
        r = self.s.judge_case("c", "cpu_time", [(1, x, x, 1) for x in ratios], 3, orders=orders)
        self.assertAlmostEqual(r["ratio"], 1.02, places=9)
        self.assertAlmostEqual(r["position_effect"]["pct"], 4.0, places=6)
        self.assertEqual(r["round_orders"], orders)
        self.assertIsNone(self.s.position_effect(ratios[:4], ["ABBA"] * 4))


class BothMetricsTest(unittest.TestCase):
    """scripts/pbgate/both.py: one decision per case from its time and instruction verdicts."""

    @classmethod
    def setUpClass(cls):
        import_gate()
        from pbgate import both
        cls.b = both

    @staticmethod
    def t(verdict, ratio=1.05):
        return {"name": "c", "verdict": verdict, "ratio": ratio}

    def test_decisions(self):
        d = self.b.decide
        i_same = {"verdict": "ok", "ratio": 1.00001}
        i_more = {"verdict": "regression", "ratio": 1.02}
        i_less = {"verdict": "improvement", "ratio": 0.98}
        # auto: an instruction regression fails, whatever the time says.
        self.assertEqual(d(self.t("ok", 1.0), i_more, "auto")[:2], ("fail", "instructions"))
        self.assertEqual(d(self.t("inconclusive"), i_more, "auto")[:2], ("fail", "instructions"))
        # auto: a time regression with unchanged instructions is a warning (layout, clock,
        # the machine), with instructions up or not counted a failure decided by time.
        dec, by, note = d(self.t("regression"), i_same, "auto")
        self.assertEqual((dec, by), ("warn", None))
        self.assertIn("time only: code layout, frequency or the machine", note)
        self.assertEqual(d(self.t("regression"), None, "auto")[:2], ("fail", "time"))
        self.assertEqual(d(self.t("regression"), i_less, "auto")[:2], ("fail", "time"))
        # The explicit choices.
        self.assertEqual(d(self.t("regression"), i_same, "time")[:2], ("fail", "time"))
        self.assertEqual(d(self.t("regression"), i_same, "instructions")[0], "warn")
        self.assertEqual(d(self.t("ok", 1.0), i_more, "time")[0], "pass")
        self.assertEqual(d(self.t("ok", 1.0), i_more, "both")[:2], ("fail", "instructions"))
        self.assertEqual(d(self.t("regression"), i_same, "both")[:2], ("fail", "time"))
        self.assertEqual(d(self.t("ok", 1.0), i_same, "auto")[0], "pass")

    def test_disagreement_is_said(self):
        line = self.b.disagreement("BM_X", self.t("improvement", 0.9),
                                   {"verdict": "regression", "ratio": 1.01})
        self.assertIn("BM_X: time says improvement (-10.0 %), instructions say regression "
                      "(+1.000 %)", line)
        self.assertIn("disagree", self.b.disagreement("BM_X", self.t("regression"),
                                                        {"verdict": "ok", "ratio": 1.0}))
        self.assertIsNone(self.b.disagreement("BM_X", self.t("regression"),
                                              {"verdict": "regression", "ratio": 1.03}))
        self.assertIsNone(self.b.disagreement("BM_X", self.t("ok", 1.0),
                                              {"verdict": "ok", "ratio": 1.0}))

    def test_options_are_split(self):
        argv = ["b", "n", "--images", "4", "--fail-on=time", "--threshold", "2",
                "--instr-threshold", "1", "--", "--size=160"]
        t, i, fail_on = self.b.split_options(argv)
        self.assertEqual(t, ["b", "n", "--threshold", "2", "--", "--size=160"])
        self.assertEqual((i, fail_on), ({"--images": "4", "--instr-threshold": "1"}, "time"))
        with self.assertRaises(self.b.BadInput):
            self.b.split_options(["b", "n", "--fail-on", "never"])
        with self.assertRaises(self.b.BadInput):
            self.b.split_options(["b", "n", "--images"])

    def test_instruction_gate_keeps_its_own_data(self):
        # --data is the time gate's: the instruction gate counts its synthetic set (made by
        # the pipebench-data beside a build) unless --instr-data names one.
        with tempfile.TemporaryDirectory() as tree:
            for sub in ("bench/pipebench", "datasets/pipebench-data"):
                os.makedirs(os.path.join(tree, os.path.dirname(sub)), exist_ok=True)
                with open(os.path.join(tree, sub), "w") as f:
                    f.write("#!/bin/sh\n")
                os.chmod(os.path.join(tree, sub), 0o755)
            built = os.path.join(tree, "bench", "pipebench")

            class T:
                base, new, filter, data, force, extra = built, built, "F", "/photos", False, []
            argv = self.b.instr_argv(T, {})
            self.assertNotIn("--data", argv)
            argv = self.b.instr_argv(T, {"--instr-data": "/small"})
            self.assertEqual(argv[argv.index("--data") + 1], "/small")

        class Bare:  # no pipebench-data beside the builds: --data is all there is
            base, new, filter, data, force, extra = "/x/b", "/x/n", "F", "/photos", False, []
        argv = self.b.instr_argv(Bare, {})
        self.assertEqual(argv[argv.index("--data") + 1], "/photos")
        t, i, _ = self.b.split_options(["b", "n", "--data", "/p", "--instr-data=/s"])
        self.assertEqual((t, i), (["b", "n", "--data", "/p"], {"--instr-data": "/s"}))

    def test_merge_keeps_both(self):
        merged = self.b.merge({"c": self.t("regression")},
                              {"c": {"verdict": "ok", "ratio": 1.0, "base_instructions": 10,
                                     "new_instructions": 10}}, "auto")
        self.assertEqual(merged["c"]["decision"], "warn")
        self.assertEqual(merged["c"]["instructions"],
                         {"ratio": 1.0, "verdict": "ok", "base": 10, "new": 10})


# --- the real binary ------------------------------------------------------------------------

class ConfirmationTest(unittest.TestCase):
    """The screen (which cases are measured again) and the merge (whose verdict counts)."""

    @classmethod
    def setUpClass(cls):
        cls.g = import_gate()
        cls.s = import_paired()

    def screened(self, ratios, threshold=2):
        rounds = [(1.0, r, r, 1.0) for r in ratios]  # (A1, B1, B2, A2) with ratio r
        return self.s.judge_case("c", "cpu_time", rounds, threshold)

    def test_suspects_by_hand(self):
        s = self.s.is_suspect
        # A +3 % case with one disturbed round (seen in calibration): the mean of logs is
        # (ln 1.042 + ln 1.033 + ln 1.037 + ln 0.868 + ln 1.045) / 5 = 0.00246, a ratio of
        # 1.0025 whose interval (±8.9 %) is far too wide to judge 2 %: inconclusive, never
        # "no change"; the median round, 1.037, is above 1 + 0.75 * 2 % = 1.015: measured
        # again.
        r = self.screened([1.042, 1.033, 1.037, 0.868, 1.045])
        self.assertAlmostEqual(r["ratio"], 1.00246, places=4)
        self.assertEqual(r["verdict"], "inconclusive")
        self.assertTrue(s(r, 2))
        # At a 5 % threshold the median must pass 1.0375: 1.037 does not, and the mean is
        # not above 1.025: not a suspect.
        self.assertFalse(s(r, 5))
        # A/A-like rounds: median 1.004, mean 1.002: no.
        self.assertFalse(s(self.screened([0.99, 1.004, 1.01, 0.998, 1.008]), 2))
        # Mean above 1 + T/2 (1.0117 > 1.01) with the interval above 1, median 1.012 below
        # 1.015: a suspect by its mean.
        r = self.screened([1.011, 1.012, 1.013, 1.011, 1.012])
        self.assertGreater(r["ci_low"], 1.0)
        self.assertTrue(s(r, 2))
        # The same mean with an interval that holds 1 and a low median: no.
        r = self.screened([1.06, 0.97, 1.0, 1.04, 0.99])
        self.assertLess(r["ci_low"], 1.0)
        self.assertLess(sorted([1.06, 0.97, 1.0, 1.04, 0.99])[2], 1.015)
        self.assertFalse(s(r, 2))
        # Every screen REGRESSION (and too-noisy slowdown) is a suspect.
        for rr, want in (([1.04, 1.05, 1.06, 1.05], "regression"),
                         ([1.09, 1.02, 1.08, 1.03, 1.09, 1.02], "inconclusive")):
            r = self.screened(rr, 3)
            self.assertEqual(r["verdict"], want)
            self.assertTrue(s(r, 3), rr)
        self.assertFalse(s({"ratio": None}, 2))

    def test_suspects_are_capped_highest_median_first(self):
        results = {n: self.screened(rr) for n, rr in (
            ("a", [1.02, 1.02, 1.02]), ("b", [1.05, 1.05, 1.05]), ("c", [1.0, 1.0, 1.0]),
            ("d", [1.03, 1.03, 1.03]))}
        self.assertEqual(self.g.suspects_of(results, 2, 2), (["b", "d"], ["a"]))
        self.assertEqual(self.g.suspects_of(results, 2, 10), (["b", "d", "a"], []))
        # With both metrics, the suspects whose time can decide come first: "b" and "d"'s
        # counts decide them, so "a" takes the first slot.
        self.assertEqual(self.g.suspects_of(results, 2, 2, {"b", "d"}), (["a", "b"], ["d"]))

    def test_the_confirmations_verdict_replaces_the_screens(self):
        screen = {"x": self.screened([1.04, 1.05, 1.06, 1.05]),   # screen: REGRESSION
                  "y": self.screened([1.0, 1.001, 0.999, 1.0])}   # screen: no change
        again = {"x": self.screened([1.0, 1.002, 0.998, 1.001, 0.999, 1.0])}
        self.assertEqual(screen["x"]["verdict"], "regression")
        merged = self.g.merge_confirmation(screen, again)
        self.assertEqual(merged["x"]["verdict"], "ok")            # cleared by fresh rounds
        self.assertEqual(merged["x"]["stage"], "confirmation")
        self.assertEqual(merged["x"]["blocks"], 6)
        self.assertEqual(merged["x"]["screen"]["verdict"], "regression")
        self.assertEqual(merged["x"]["screen"]["round_ratios"], [1.04, 1.05, 1.06, 1.05])
        self.assertEqual(merged["y"]["stage"], "screen")
        self.assertNotIn("screen", merged["y"])

    NAMES = ["BM_T/slow", "BM_T/slower", "BM_T/b_drift", "BM_T/flaky", "BM_T/capped",
             "BM_T/same"]
    FACTOR = {"BM_T/slow": 1.05, "BM_T/slower": 1.08, "BM_T/b_drift": 1.01,
              "BM_T/flaky": 1.05, "BM_T/capped": 1.04, "BM_T/same": 1.0}

    def simulate(self, argv, settled=None):
        """run() on a simulated machine: run_block returns a block's JSON from a table of
        per-case times (FACTOR: NEW's time over BASE's), so the screen, the suspects and
        their confirmation are known. "flaky" errors in the confirmation's BASE blocks.
        Returns (args, run()'s result, the blocks' (side, filter) in order)."""
        g, names = self.g, self.NAMES
        calls = []

        def fake_block(binary, side, data, filt, min_time, extra, out_json, log_path, timeout):
            calls.append((side, filt))
            confirm = filt.startswith("^(")
            rows = []
            for n in names:
                if confirm and not re.fullmatch(filt[1:-1], n):
                    continue
                if confirm and n == "BM_T/flaky" and side == "A":
                    rows.append({"name": n, "error_occurred": True, "error_message": "gone"})
                    continue
                t = 100.0 * (self.FACTOR[n] if side == "B" else 1.0)
                rows.append({"name": n, "run_type": "iteration", "real_time": t,
                             "cpu_time": t, "time_unit": "us",
                             "key": {"name": n, "timed_by": "cpu_time"}})
            return {"context": {}, "benchmarks": rows}

        def fake_list(binary, data, filt, extra):
            if filt.startswith("^("):  # the confirmation's case_filter
                return [n for n in names if re.fullmatch(filt[1:-1], n)]
            return [n for n in names if re.search(filt, n)]

        saved = {k: getattr(g, k) for k in ("run_block", "list_cases", "check_binary",
                                             "fixed_work_flags", "check_contexts")}
        g.run_block, g.list_cases = fake_block, fake_list
        g.check_binary = lambda *a: None
        g.fixed_work_flags = lambda b: []
        g.check_contexts = lambda *a: None
        try:
            args = g.parse_args(["base", "new", "--filter", "BM_T/", "--data",
                                 os.path.dirname(os.path.abspath(__file__)), *argv])
            if settled is not None:
                args.time_settled = set(settled)
            return args, g.run(args, "/nonexistent"), calls
        finally:
            for k, v in saved.items():
                setattr(g, k, v)

    def test_run_confirms_caps_and_keeps_what_it_could_not_confirm(self):
        # NEW is slower by 8 % in "slower", 5 % in "slow" and "flaky", 4 % in "capped"
        # (four suspects at a 2 % threshold: medians above 1.015), 1 % in "b_drift" (not
        # one: median and mean 1.01, not above 1 + 2 % / 2). "flaky" errors in the
        # confirmation's BASE blocks (skipped there); "capped" is beyond --confirm-max 3.
        # Both keep their screen verdict and are named as not measured again.
        # --blocks 3 runs 4 rounds: as many A B B A as B A A B.
        args, (docs, results, errored, skipped, lost, _), calls = self.simulate(
            ["--threshold", "2", "--blocks", "3", "--confirm", "4", "--confirm-max", "3"])
        # The cap: 4 suspects, 3 measured again, the highest median first (ties keep the
        # cases' order); "flaky" was skipped in its confirmation.
        self.assertEqual(args.suspects, ["BM_T/slower", "BM_T/slow", "BM_T/flaky"])
        self.assertEqual(args.unconfirmed, ["BM_T/capped", "BM_T/flaky"])
        self.assertEqual(len(docs), 4)
        self.assertEqual(sum(1 for _, f in calls if f.startswith("^(")), 16)  # 4 rounds x 4
        # Both orders, by turns: the screen's first round A B B A, its second B A A B.
        self.assertEqual([s for s, f in calls[:8]], list("ABBABAAB"))
        self.assertEqual(results["BM_T/slower"]["stage"], "confirmation")
        self.assertEqual(results["BM_T/slower"]["blocks"], 4)
        self.assertEqual(results["BM_T/slower"]["screen"]["blocks"], 4)
        self.assertEqual(results["BM_T/slower"]["round_orders"], ["ABBA", "BAAB"] * 2)
        self.assertEqual(results["BM_T/slower"]["verdict"], "regression")
        self.assertEqual(results["BM_T/flaky"]["stage"], "screen (its confirmation failed)")
        self.assertEqual(results["BM_T/flaky"]["verdict"], "regression")  # the screen's
        self.assertEqual(results["BM_T/capped"]["stage"], "screen")
        self.assertEqual(results["BM_T/capped"]["verdict"], "regression")
        self.assertEqual(results["BM_T/b_drift"]["verdict"], "ok")  # significant, +1 % < 2 %
        self.assertEqual(results["BM_T/same"]["stage"], "screen")
        self.assertEqual((errored, skipped, lost), ({}, {}, []))

    def test_with_both_metrics_the_budget_goes_where_time_can_decide(self):
        # "slow" and "slower" have unchanged counts (settled): the cap's 3 slots go to
        # "flaky" and "capped", whose time can decide, and then to "slower"; "slow" is
        # beyond the cap. With no budget, "slower" is not confirmed either: both keep their
        # screen verdicts and are named as left to the budget, not as failed
        # confirmations. The confirmation of "flaky" and "capped" runs its --confirm 4
        # rounds whatever the budget, and no more.
        args, (docs, results, errored, skipped, lost, _), calls = self.simulate(
            ["--threshold", "2", "--blocks", "4", "--confirm", "4", "--confirm-max", "3",
             "--time-budget", "0"], settled={"BM_T/slow", "BM_T/slower"})
        self.assertEqual(args.suspects, ["BM_T/flaky", "BM_T/capped", "BM_T/slower"])
        self.assertEqual(sorted(args.unconfirmed_budget), ["BM_T/slow", "BM_T/slower"])
        self.assertEqual(args.unconfirmed, ["BM_T/flaky"])  # skipped in its confirmation
        self.assertEqual(results["BM_T/capped"]["stage"], "confirmation")
        self.assertEqual(results["BM_T/capped"]["blocks"], 4)
        for name in ("BM_T/slow", "BM_T/slower"):
            self.assertTrue(results[name]["stage"].startswith("screen (not measured again"),
                            results[name]["stage"])
        confirm = [f for _, f in calls if f.startswith("^(")]
        self.assertEqual(len(confirm), 16)  # 4 rounds x 4 blocks, then the budget's end
        self.assertTrue(all("slow" not in f for f in confirm), confirm)

    def test_a_stage_stops_at_the_deadline_after_a_pair_of_rounds(self):
        # A deadline already past: once `least` rounds ran, no new pair starts (nor one that
        # would end after it).
        g = self.g
        seen = []
        saved = g.run_block
        g.run_block = lambda binary, side, *a: seen.append(side) or {
            "context": {}, "benchmarks": [{"name": "BM_T/x", "run_type": "iteration",
                                           "real_time": 1, "cpu_time": 1, "time_unit": "us"}]}

        class A:
            base, new, data, min_time, block_timeout, force = "b", "n", "d", "0.05", 9, False
        try:
            docs, orders = g.run_rounds(A, "/nonexistent", {"b": [], "n": []}, "x", 8, "c1-",
                                        deadline=0.0, least=4)
        finally:
            g.run_block = saved
        self.assertEqual(orders, ["ABBA", "BAAB", "ABBA", "BAAB"])
        self.assertEqual(len(seen), 16)

    def test_case_filter_escapes_what_the_names_hold(self):
        f = self.g.case_filter(["BM_T/affine/translate:[0.1/0.1]/scale:[0.9/1.1]", "BM_T/n"])
        self.assertEqual(f, r"^(BM_T/affine/translate:\[0\.1/0\.1]/scale:\[0\.9/1\.1]|BM_T/n)$")
        self.assertTrue(re.fullmatch(f[1:-1], "BM_T/affine/translate:[0.1/0.1]/scale:[0.9/1.1]"))
        self.assertFalse(re.fullmatch(f[1:-1], "BM_T/affine/translate:[0x1/0.1]/scale:[0.9/1.1]"))


class GateRunTest(unittest.TestCase):
    """compare.sh --ab on the real pipebench and wrappers around it."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="pipebench-ab-test-")
        cls.dir = cls.tmp.name
        cls.bin = os.path.abspath(ARGS.pipebench)
        tool = ARGS.pipebench_data or os.path.join(
            os.path.dirname(os.path.dirname(cls.bin)), "datasets", "pipebench-data")
        cls.data = os.path.join(cls.dir, "data")
        p = run([tool, "synthetic", cls.data, "--count", "8", "--classes", "2"])
        if p.returncode != 0:
            raise RuntimeError(f"pipebench-data synthetic failed: {p.stderr}")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def gate(self, base, new, *extra, timeout=300):
        # A short --time-budget bounds what the gate spends buying precision (a later one
        # in extra wins).
        return run([os.path.join(scripts_dir(), "compare.sh"), "--ab", base, new,
                    "--metric=time", "--time-budget", "8", *extra], timeout=timeout)

    def wrapper(self, name, body):
        return write_exe(os.path.join(self.dir, name),
                         f"#!/bin/sh\n# test wrapper around the real pipebench\n{body}\n")

    def test_missing_binary_is_bad_input(self):
        missing = os.path.join(self.dir, "nope", "pipebench")
        p = self.gate(missing, self.bin, "--data", self.data)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"BASE_BIN {missing}: no such file", p.stderr)
        p = self.gate(self.bin, missing, "--data", self.data)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"NEW_BIN {missing}: no such file", p.stderr)

    def test_not_executable_is_bad_input(self):
        plain = os.path.join(self.dir, "plain")
        with open(plain, "w") as f:
            f.write("not a program\n")
        p = self.gate(self.bin, plain, "--data", self.data)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("not executable", p.stderr)

    def test_bad_options_are_bad_input(self):
        for extra, words in ((["--blocks", "1"], "--blocks"), (["--threshold", "x"], "--threshold"),
                             (["--min-time", "0"], "--min-time"),
                             (["--max-noise", "-1"], "--max-noise"),
                             (["--confirm", "1"], "--confirm must be 0 (off) or an integer in [2"),
                             (["--confirm-max", "0"], "--confirm-max"),
                             (["--", "--benchmark_filter=BM_Decode"], "set by the gate"),
                             (["--data", os.path.join(self.dir, "none")], "not a directory")):
            p = self.gate(self.bin, self.bin, *extra)
            self.assertEqual(p.returncode, 2, (extra, p.stderr))
            self.assertIn(words, p.stderr)
        p = self.gate(self.bin, self.bin, "--data", self.data, "--filter", "BM_NoSuchCase")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("no case matches", p.stderr)

    def test_case_sets_that_differ_are_named(self):
        # NEW "lacks" BM_Transform/normalize: its case list leaves it out.
        fewer = self.wrapper("fewer", f"""case "$*" in
  *--benchmark_list_tests*) {shlex.quote(self.bin)} "$@" | grep -v '^BM_Transform/normalize$' ;;
  *) exec {shlex.quote(self.bin)} "$@" ;;
esac""")
        p = self.gate(self.bin, fewer, "--data", self.data, "--filter", FEW)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("only in BASE: BM_Transform/normalize. Narrow --filter", p.stderr)
        self.assertNotIn("only in NEW", p.stderr)
        p = self.gate(fewer, self.bin, "--data", self.data, "--filter", FEW)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("only in NEW: BM_Transform/normalize", p.stderr)

    def test_another_pipebench_version_is_refused(self):
        # NEW writes its JSON, then the wrapper rewrites pipebench_version in it.
        other = self.wrapper("other-version", f"""{shlex.quote(self.bin)} "$@"; rc=$?
for a in "$@"; do
  case "$a" in --benchmark_out=*) out="${{a#--benchmark_out=}}" ;; esac
done
if [ -n "$out" ] && [ -f "$out" ]; then
  {sys.executable} - "$out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["context"]["pipebench_version"] = "99.0.0-other"
json.dump(d, open(sys.argv[1], "w"))
EOF
fi
exit $rc""")
        p = self.gate(self.bin, other, "--data", self.data, "--filter", "BM_Transform/normalize$",
                      "--blocks", "2", *QUICK)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("different pipebench versions", p.stderr)
        self.assertRegex(p.stderr, r"pipebench_version differs \(BASE '[^']+', NEW "
                                   r"'99\.0\.0-other'\)")
        # --force compares them anyway, with a warning (whatever the verdict: two rounds, no
        # precision stage or confirmation, a few seconds).
        p = self.gate(self.bin, other, "--data", self.data, "--filter", "BM_Transform/normalize$",
                      "--blocks", "2", "--force", "--time-budget", "0", "--confirm", "0", *QUICK)
        self.assertIn(p.returncode, (0, 1, 3), p.stderr)
        self.assertIn("warning: comparing builds that differ (--force)", p.stderr)

    def test_a_new_build_that_crashes_fails(self):
        crash = self.wrapper("crash", f"""case "$*" in
  *--benchmark_list_tests*) exec {shlex.quote(self.bin)} "$@" ;;
  *) echo "Segmentation fault (simulated)" >&2; exit 139 ;;
esac""")
        p = self.gate(self.bin, crash, "--data", self.data, "--filter", "BM_Transform/normalize$",
                      "--blocks", "2", *QUICK)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("NEW block", p.stderr)
        self.assertIn("Segmentation fault (simulated)", p.stderr)
        p = self.gate(crash, self.bin, "--data", self.data, "--filter", "BM_Transform/normalize$",
                      "--blocks", "2", *QUICK)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("BASE block", p.stderr)

    def test_a_a_run_is_not_a_regression(self):
        # The same build as BASE and NEW on two cases, four rounds (--blocks 3 rounded
        # up to an even count); the dataset is the gate's own (made with the pipebench-data
        # beside the binary). A case short of the precision may end inconclusive (exit 3)
        # within the 8 s budget, never a regression.
        out = os.path.join(self.dir, "aa.json")
        p = self.gate(self.bin, self.bin, "--filter", FEW, "--blocks", "3", "--out", out)
        self.assertIn(p.returncode, (0, 3), p.stdout + p.stderr)
        self.assertNotIn("REGRESSION", p.stdout)
        self.assertRegex(p.stdout, r"ab: (PASS|INCONCLUSIVE \(--inconclusive=report: exit 3\)): "
                                   r"0 of 2 case\(s\) regressed by more than 3%")
        self.assertIn("ab: dataset: wrote 16 images", p.stderr)
        self.assertEqual(len(re.findall(r"^ab: round \d/4 \((ABBA|BAAB)\) block [AB][12] ",
                                        p.stderr, re.M)), 16)
        self.assertEqual(re.findall(r"^ab: round \d/4 \((ABBA|BAAB)\) block A1 ", p.stderr,
                                    re.M), ["ABBA", "BAAB", "ABBA", "BAAB"])
        header = next(ln for ln in p.stdout.splitlines() if ln.startswith("case "))
        for col in ("base", "new", "ratio", "95 % interval", "verdict"):
            self.assertIn(col, header)
        with open(out) as f:
            doc = json.load(f)
        self.assertIs(doc["paired"], True)
        self.assertEqual(doc["blocks"], 4)
        self.assertIn((doc["result"], doc["exit_status"]), (("PASS", 0), ("INCONCLUSIVE", 3)))
        self.assertEqual(doc["result"] == "INCONCLUSIVE", bool(doc["inconclusive"]))
        self.assertEqual(sorted(c["name"] for c in doc["cases"]),
                         ["BM_Transform/horizontal_flip/p:1.0", "BM_Transform/normalize"])
        for c in doc["cases"]:
            self.assertEqual(c["field"], "cpu_time")  # BM_Transform is timed by CPU time
            # A case the screen found suspect, or short of precision, was judged on its
            # own rounds.
            self.assertEqual(len((c.get("screen") or c)["round_ratios"]), 4)
            self.assertEqual(c["blocks"], len(c["round_ratios"]))
            self.assertEqual(c["stage"], "confirmation" if c["name"] in doc["suspects"]
                             else "precision" if "screen" in c else "screen")
            self.assertEqual(c["verdict"] == "inconclusive", c["half_width_pct"] > 1.5, c)
            self.assertLessEqual(c["ci_low"], c["ratio"])
            self.assertLessEqual(c["ratio"], c["ci_high"])
            lo_hi = [math.log(c["ci_low"]), math.log(c["ci_high"])]
            self.assertAlmostEqual(sum(lo_hi) / 2, c["mean_log_ratio"], places=9)
        # The file is also a run of NEW (its 8 screen blocks as repetitions) that export.py
        # reads.
        self.assertEqual(len(doc["benchmarks"]), 2 * 8)
        p = run([sys.executable, os.path.join(scripts_dir(), "export.py"), out, "--format",
                 "bencher", "--out", os.path.join(self.dir, "export")])
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(self.dir, "export", "bencher.json")) as f:
            self.assertIn("BM_Transform/normalize", json.load(f))

    def test_a_case_that_fixes_its_iterations_keeps_its_name(self):
        # A sizing operator's case runs a fixed count, which Google Benchmark names
        # (bench/cases/transform_bench.cpp: 1 GiB of input copies over 500x375x3 bytes = 1908);
        # the gate runs it, names it so and times it per iteration, by CPU time like every
        # BM_Transform case. Two rounds, no precision stage, no confirmation: its verdict is
        # the A/A test's subject, not this one's.
        out = os.path.join(self.dir, "fixed.json")
        p = self.gate(self.bin, self.bin, "--data", self.data, "--filter", FIXED, "--blocks", "2",
                      "--time-budget", "0", "--confirm", "0", *QUICK, "--out", out)
        self.assertIn(p.returncode, (0, 1, 3), p.stdout + p.stderr)
        with open(out) as f:
            doc = json.load(f)
        (c,) = doc["cases"]
        self.assertEqual(c["name"], "BM_Transform/random_resized_crop/iterations:1908")
        self.assertEqual(c["field"], "cpu_time")
        self.assertEqual((c["blocks"], len(c["round_ratios"])), (2, 2))
        self.assertEqual(len(doc["benchmarks"]), 4)  # NEW's 4 blocks, one row each
        for row in doc["benchmarks"]:
            self.assertEqual((row["name"], row["iterations"]), (c["name"], 1908))
            # per iteration: a crop of a 500 x 375 image and its input copy, not 1908 of them
            self.assertLess(row["cpu_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[
                row["time_unit"]], 0.05, row)

    def test_a_case_filter_selects_exactly_its_cases(self):
        # The confirmation's filter, checked against the binary's own regex (std::regex,
        # which refuses "\\]"): each default case alone, and all of them at once.
        g = import_gate()
        names = g.list_cases(self.bin, self.data, g.DEFAULT_FILTER, [])
        self.assertGreater(len(names), 20)
        self.assertTrue(any("[" in n for n in names))  # random_affine's translate:[...]
        self.assertEqual(g.list_cases(self.bin, self.data, g.case_filter(names), []), names)
        for n in names:
            if "[" in n or "." in n:
                self.assertEqual(g.list_cases(self.bin, self.data, g.case_filter([n]), []), [n])

    def test_hook_refuses_what_it_cannot_slow(self):
        def listing(value):
            return subprocess.run([self.bin, f"--data={self.data}", "--benchmark_list_tests=true",
                                   "--benchmark_filter=BM_Transform/normalize$"],
                                  capture_output=True, text=True,
                                  env=dict(os.environ, PIPEBENCH_TEST_SLOWDOWN=value))
        if "TEST-ONLY" not in listing("normalize:1").stderr:
            self.skipTest("this pipebench has no PIPEBENCH_TEST_SLOWDOWN hook")
        for value, words in (("horizontal_flip:5", "planned by its type"),
                             ("random_resized_crop:5", "planned by its type"),
                             ("no_such_op:3", "no per-sample operator named 'no_such_op'"),
                             ("mixup:3", "batch operators are not supported"),
                             ("normalize:x", "<pct> must be a number"),
                             ("normalize", "expected <op>:<pct>")):
            p = listing(value)
            self.assertEqual(p.returncode, 2, (value, p.stderr))
            self.assertIn(f"PIPEBENCH_TEST_SLOWDOWN={value}: ", p.stderr)
            self.assertIn(words, p.stderr)
        p = listing("")  # empty: off, silent
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("TEST-ONLY", p.stderr)
        p = listing("turbo_decode:1")  # the full decode: not an operator, its own hook
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("the full decode (TurboDecoder::decode) slowed by 1 % of its time",
                      p.stderr)
        p = listing("turbo_decode:2:work")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("slowed by 2 % of its work (its first rows decoded again)", p.stderr)
        p = listing("normalize:1:work")  # the instruction-count mode: extra rows, not time
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("slowed by 1 % of its work (extra rows)", p.stderr)
        p = listing("normalize:x:work")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("<pct> must be a number", p.stderr)

    def require_hook(self):
        """Skips the test when this pipebench has no PIPEBENCH_TEST_SLOWDOWN hook."""
        probe = subprocess.run([self.bin, f"--data={self.data}", "--benchmark_list_tests=true",
                                "--benchmark_filter=BM_Transform/normalize$"],
                               capture_output=True, text=True,
                               env=dict(os.environ, PIPEBENCH_TEST_SLOWDOWN="normalize:50"))
        if "TEST-ONLY" not in probe.stderr:
            self.skipTest("this pipebench has no PIPEBENCH_TEST_SLOWDOWN hook "
                          "(transforms/ops/test_slowdown.cpp)")

    def test_injected_slowdown_is_caught(self):
        self.require_hook()
        # +200 %: this host's normalize alone moved between 133 and 235 us per image from one
        # block to the next on a machine quiet on our side (the shared host's other tenants,
        # most likely), so one +50 % comparison in six read 1.05 (0.80..1.37) and said
        # inconclusive; a threefold cost stays a regression through a 1.8x swing.
        slow = self.wrapper("slow200", "PIPEBENCH_TEST_SLOWDOWN=normalize:200 exec "
                                      f"{shlex.quote(self.bin)} \"$@\"")
        out = os.path.join(self.dir, "slow.json")
        # 6 rounds at the default block length: one disturbed round among 3 short ones once
        # gave an interval of ±55 % (too wide to judge) on a busy machine.
        p = self.gate(self.bin, slow, "--data", self.data, "--blocks", "6", "--out", out,
                      "--filter", "BM_Transform/(normalize|vertical_flip/p:1.0)$")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        # What is asserted is the gate's behaviour, not its figure: a ratio read in one short
        # comparison on a shared host varies (round ratios 0.9 to 3.2 for a +50 % injection
        # on a quiet host), so the ratio is only required to show a slowdown.
        self.assertRegex(p.stdout, r"REGRESSION BM_Transform/normalize: cpu_time .* \(ratio "
                                   r"\d+\.\d+, 95 % interval")
        self.assertNotIn("REGRESSION BM_Transform/vertical_flip", p.stdout)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["regressions"], ["BM_Transform/normalize"])
        self.assertEqual((doc["result"], doc["exit_status"]), ("FAIL", 1))
        # Caught by the screen, then confirmed in rounds of its own (at least the default 6).
        self.assertIn("BM_Transform/normalize", doc["suspects"])
        (case,) = [c for c in doc["cases"] if c["name"] == "BM_Transform/normalize"]
        self.assertEqual(case["stage"], "confirmation")
        self.assertGreaterEqual(case["blocks"], 6)
        self.assertEqual(case["blocks"], len(case["round_ratios"]))
        self.assertEqual(case["screen"]["blocks"], 6)
        self.assertGreater(case["ratio"], 1.1, case)  # the confirmation's lower end is > 1.03
        self.assertGreater(case["ci_low"], 1.03, case)
        self.assertRegex(p.stdout, r"ab: measured again \(suspect\): BM_Transform/normalize: "
                                   r"screen \d+\.\d+ \[.*\] over 6 rounds -> \d+\.\d+ .* "
                                   r"over \d+ rounds of its own: REGRESSION")
        self.assertGreaterEqual(len(re.findall(r"^ab: round measured again \d+/\d+ \((ABBA|BAAB)\) "
                                               r"block", p.stderr, re.M)), 24)
        # The gate does not pass the variable on: with a value in the caller's environment
        # that pipebench refuses (exit 2, "no per-sample operator named ..."), a comparison
        # of the wrapper (which sets its own) against the plain binary still runs both. A
        # value that only slowed NEW was tried first and judged by the ratio; two short
        # rounds read 1.04 for an expected 0.67 once, so the check is now on exit status.
        env = dict(os.environ, PIPEBENCH_TEST_SLOWDOWN="no_such_operator:200")
        refused = run([self.bin, f"--data={self.data}", "--benchmark_filter=BM_Transform/normalize$",
                       "--benchmark_list_tests=true"], env=env)
        self.assertEqual(refused.returncode, 2, refused.stderr)  # the value is a real trap
        self.assertIn("no per-sample operator named 'no_such_operator'", refused.stderr)
        out = os.path.join(self.dir, "env.json")
        p = run([os.path.join(scripts_dir(), "compare.sh"), "--ab", "--metric=time", slow,
                 self.bin, "--data",
                 self.data, "--blocks", "2", "--filter", "BM_Transform/normalize$", "--out",
                 out, "--time-budget", "0", "--confirm", "0", *QUICK], env=env)
        self.assertIn(p.returncode, (0, 1, 3), p.stdout + p.stderr)
        self.assertNotIn("no_such_operator", p.stdout + p.stderr)
        with open(out) as f:
            (case,) = json.load(f)["cases"]
        self.assertEqual(case["blocks"], 2, case)

    def test_too_short_a_comparison_is_inconclusive(self):
        # Two rounds of the decode case and no budget to measure it again: t(0.975, 1) =
        # 12.7, so its interval is nearly always far wider than ±1.5 % (±68 % seen here):
        # inconclusive (exit 3), never "no change". Two rounds can by chance agree closely
        # enough to be precise, so what is asserted is the rule: "no change" only within
        # ±1.5 %, exit 3 exactly when a case is inconclusive, and --inconclusive=pass
        # turning that exit into 0 while still saying so.
        args = ["--data", self.data, "--blocks", "2", "--time-budget", "0", "--confirm", "0",
                "--filter", "BM_Decode/turbo_full$", *QUICK]
        for policy, status in (("report", 3), ("pass", 0)):
            out = os.path.join(self.dir, f"short-{policy}.json")
            p = self.gate(self.bin, self.bin, *args, f"--inconclusive={policy}", "--out", out)
            with open(out) as f:
                (case,) = json.load(f)["cases"]
            if case["verdict"] in ("regression", "improvement"):
                # Two rounds without a confirmation can cross by chance on a noisy host (an
                # A/A read 1.118..1.229 here): only a whole interval beyond the threshold
                # may say so while wider than the precision.
                if case["half_width_pct"] > 1.5:
                    self.assertTrue(case["ci_low"] > 1.03 or case["ci_high"] < 0.97, case)
                continue
            if case["verdict"] == "inconclusive":
                self.assertEqual(p.returncode, status, p.stdout + p.stderr)
                self.assertRegex(p.stdout, r"BM_Decode/turbo_full .*not enough precision to "
                                           r"judge a 3 % change")
                self.assertIn(f"ab: INCONCLUSIVE (--inconclusive={policy}: exit {status})",
                              p.stdout)
                self.assertGreater(case["half_width_pct"], 1.5)
            else:
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertLessEqual(case["half_width_pct"], 1.5, case)

    def test_both_metrics_fail_on_instructions(self):
        # The default where Valgrind exists: instruction counts and time together. +2 % of
        # normalize's work (the hook's work mode: 2 % more rows) is an instruction
        # regression of about +2 %, which fails whatever the time noise; vertical_flip's
        # instructions are unchanged, so it cannot fail.
        self.require_hook()
        if shutil.which("valgrind") is None:
            self.skipTest("valgrind not found (scripts/setup.sh installs it)")
        work = self.wrapper("work2", "PIPEBENCH_TEST_SLOWDOWN=normalize:2:work exec "
                                     f"{shlex.quote(self.bin)} \"$@\"")
        out = os.path.join(self.dir, "both.json")
        p = run([os.path.join(scripts_dir(), "compare.sh"), "--ab", self.bin, work,
                 "--data", self.data, "--blocks", "2", "--confirm", "0", "--time-budget", "0",
                 "--filter", "BM_Transform/(normalize|vertical_flip/p:1.0)$", "--out", out,
                 *QUICK], timeout=600)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("== instruction counts", p.stdout)
        self.assertIn("FAILED BM_Transform/normalize: decided by instructions (--fail-on=auto)",
                      p.stdout)
        self.assertNotIn("FAILED BM_Transform/vertical_flip", p.stdout)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual((doc["metric"], doc["fail_on"], doc["failed_cases"]),
                         ("both", "auto", ["BM_Transform/normalize"]))
        cases = {c["name"]: c for c in doc["cases"]}
        self.assertGreater(cases["BM_Transform/normalize"]["instructions"]["ratio"], 1.01)
        self.assertEqual(cases["BM_Transform/vertical_flip/p:1.0"]["instructions"]["verdict"],
                         "ok")
        self.assertNotEqual(cases["BM_Transform/vertical_flip/p:1.0"]["decision"], "fail")

    def test_paired_rounds_are_per_iteration(self):
        # The rows' times are per iteration, so paired_rounds must be too: at the gate's
        # --budget=0.1 a paired case runs about one round per iteration, and a longer
        # --benchmark_min_time gives it several iterations, not more rounds per iteration.
        out = os.path.join(self.dir, "rounds.json")
        p = run([self.bin, f"--data={self.data}", "--benchmark_filter=BM_Sample/.*/control:aa$",
                 "--benchmark_min_time=0.3", "--budget=0.1", f"--benchmark_out={out}",
                 "--benchmark_out_format=json"])
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            (row,) = [r for r in json.load(f)["benchmarks"] if "paired_rounds" in r]
        self.assertGreaterEqual(row["iterations"], 3, row)
        self.assertGreaterEqual(row["paired_rounds"], 1, row)
        self.assertLess(row["paired_rounds"], 2.5, row)

    def test_calibration_rejudges_at_other_thresholds(self):
        # A time calibration kept with --keep, then read again with --from: the verdicts at
        # other thresholds come from the saved round ratios alone. +400 % on normalize is
        # caught at 3 % and at 20 %, not at a threshold of 2000 %. (+100 % re-judged at 20 %
        # was missed once in CI: this host's normalize alone swings 1.8x from block to block,
        # so three short rounds of a twofold cost can leave the interval's low end under
        # 1.2; a fivefold cost cannot.)
        self.require_hook()
        cal = os.path.join(scripts_dir(), "gate_calibration.sh")
        keep = os.path.join(self.dir, "cal-keep")
        p = run([cal, "--n", "1", "--inject", "400", "--bin", self.bin, "--data", self.data,
                 "--filter", "BM_Transform/normalize$", "--blocks", "3", *QUICK,
                 "--time-budget", "15", "--keep", keep, "--thresholds", "3,2000"], timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("A/B +400 % on normalize: detected in 1 of 1", p.stdout)
        self.assertIn("at a 3 % threshold (re-judged from the round ratios): A/A false alarms "
                      "in 0 of 1; +400 % detected in 1 of 1", p.stdout)
        self.assertIn("at a 2000 % threshold (re-judged from the round ratios): A/A false "
                      "alarms in 0 of 1; +400 % detected in 0 of 1", p.stdout)
        out = os.path.join(self.dir, "cal-from.json")
        p = run([cal, "--from", keep, "--thresholds", "20", "--out", out])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("A/B +400 % on normalize: detected in 1 of 1", p.stdout)
        with open(out) as f:
            res = json.load(f)
        self.assertEqual(res["at_thresholds"]["20"]["detected"]["400"], {"detected": 1, "n": 1})
        p = run([cal, "--from", os.path.join(self.dir, "nowhere")])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("no index.txt", p.stderr)
        p = run([cal, "--metric=instructions", "--thresholds", "2", "--bin", self.bin])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--thresholds is the time gate's", p.stderr)


# --- build_ref.sh ---------------------------------------------------------------------------

class BuildRefTest(unittest.TestCase):
    def build_ref(self, *args, timeout=60):
        return run([os.path.join(scripts_dir(), "build_ref.sh"), *args], timeout=timeout)

    def test_argument_errors(self):
        with tempfile.TemporaryDirectory() as d:
            p = self.build_ref()
            self.assertEqual(p.returncode, 2)
            self.assertIn("usage: scripts/build_ref.sh", p.stderr)
            p = self.build_ref("no-such-ref-ab-gate-test", os.path.join(d, "out"))
            self.assertEqual(p.returncode, 2)
            self.assertIn("unknown ref 'no-such-ref-ab-gate-test'", p.stderr)
            busy = os.path.join(d, "busy")
            os.makedirs(busy)
            open(os.path.join(busy, "keep.txt"), "w").close()
            p = self.build_ref("HEAD", busy)
            self.assertEqual(p.returncode, 2)
            self.assertIn("not empty", p.stderr)
            p = self.build_ref("HEAD", os.path.join(d, "x"), "-DPIPEBENCH_CUDA=OFF")
            self.assertEqual(p.returncode, 2)  # cmake arguments go after --
            p = self.build_ref("--dry-run", "HEAD", os.path.join(d, "out"), "--",
                               "-DPIPEBENCH_CUDA=OFF")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("would build HEAD", p.stdout)
            self.assertFalse(os.path.exists(os.path.join(d, "out")))


    def test_on_a_temporary_clone(self):
        # build_ref.sh of a temporary clone (its own scripts/, so the clone is the
        # repository it works in): a ref only that clone has, whose configure fails on
        # purpose (seconds, no compile), exits 1 with the end of the configure log, and
        # leaves no worktree behind, no output folder, and the clone's checkout as it was.
        with tempfile.TemporaryDirectory() as d:
            clone = os.path.join(d, "clone")
            p = run(["git", "clone", "--quiet", REPO, clone])
            self.assertEqual(p.returncode, 0, p.stderr)
            git = ["git", "-C", clone, "-c", "user.name=t", "-c", "user.email=t@t"]
            run(git + ["checkout", "--quiet", "-b", "broken-on-purpose"])
            cml = os.path.join(clone, "CMakeLists.txt")
            with open(cml) as f:
                text = f.read()
            with open(cml, "w") as f:
                f.write('message(FATAL_ERROR "broken on purpose by ab_gate_test")\n' + text)
            self.assertEqual(run(git + ["commit", "--quiet", "-am", "broken"]).returncode, 0)
            run(git + ["checkout", "--quiet", "-"])
            head = run(git + ["rev-parse", "HEAD"]).stdout
            tool = os.path.join(clone, "scripts", "build_ref.sh")
            out = os.path.join(d, "out")
            p = run([tool, "--dry-run", "broken-on-purpose", out])
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("would build broken-on-purpose", p.stdout)
            p = run([tool, "broken-on-purpose", out], timeout=600)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertIn("broken on purpose by ab_gate_test", p.stderr)
            self.assertIn("build_ref: error: configuring broken-on-purpose", p.stderr)
            self.assertFalse(os.path.exists(os.path.join(out, "bench")))
            worktrees = run(git + ["worktree", "list"]).stdout.strip().splitlines()
            self.assertEqual(len(worktrees), 1, worktrees)  # the clone's own checkout only
            self.assertEqual(run(git + ["rev-parse", "HEAD"]).stdout, head)
            self.assertEqual(run(git + ["status", "--porcelain"]).stdout, "")
            # The user's repository does not have that ref.
            p = self.build_ref("--dry-run", "broken-on-purpose", out)
            self.assertEqual(p.returncode, 2)
            self.assertIn("unknown ref 'broken-on-purpose'", p.stderr)


# A real build of HEAD: seconds with a warm ccache (6 s on a 2-core VM, every object a
# hit), many minutes cold. Only with PIPEBENCH_AB_TEST_BUILD=1, and not defined otherwise
# (a skip would show the whole test as Skipped in ctest).
if BUILD:
    def test_builds_head(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "head")
            p = self.build_ref("HEAD", out, "--", "-DPIPEBENCH_CUDA=OFF", timeout=3600)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            for f in ("bench/pipebench", "datasets/pipebench-data", "bench/pipebench-report",
                      "BUILD_REF.txt"):
                self.assertTrue(os.path.isfile(os.path.join(out, f)), f)
            p = run([os.path.join(out, "bench", "pipebench"), "--help"])
            self.assertEqual(p.returncode, 0, p.stderr)
            wt = run(["git", "-C", REPO, "worktree", "list"]).stdout
            self.assertNotIn("pipebench-ref.", wt)  # the temporary worktree is gone

    BuildRefTest.test_builds_head = test_builds_head
else:
    print("ab_gate_test: build_ref.sh is tested on its arguments and --dry-run; "
          "PIPEBENCH_AB_TEST_BUILD=1 also builds HEAD with it (seconds with a warm ccache, "
          "minutes cold)")


# --- the example workflow -------------------------------------------------------------------

WORKFLOW = os.path.join(REPO, "examples", "github-actions-ab.yml")


def run_lines(text):
    """The single-line `run:` commands of a workflow, in order (no YAML library needed)."""
    return [m.group(1).strip() for m in re.finditer(r"^\s*(?:- )?run: (.+)$", text, re.M)]


class WorkflowTest(unittest.TestCase):
    def setUp(self):
        with open(WORKFLOW) as f:
            self.text = f.read()

    def test_structure(self):
        try:
            import yaml
        except ImportError:
            self.skipTest("PyYAML is not installed for this python (python3-yaml): the "
                          "workflow's structure is not checked; its commands still run below")
        doc = yaml.safe_load(self.text)
        on = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` key as true
        self.assertIn("pull_request", on)
        (job,) = doc["jobs"].values()
        self.assertRegex(job["runs-on"], r"^(ubuntu|debian)")
        steps = job["steps"]
        uses = {s["uses"].split("@")[0]: s for s in steps if "uses" in s}
        self.assertEqual(uses["actions/checkout"]["with"]["fetch-depth"], 0)
        runs = [s["run"] for s in steps if "run" in s]
        self.assertEqual(runs, run_lines(self.text))  # the fallback reads the same commands
        self.assertTrue(any(r.startswith("./scripts/setup.sh") for r in runs), runs)
        builds = [r for r in runs if "build_ref.sh" in r]
        self.assertEqual(len(builds), 2, builds)
        self.assertIn("${{ github.base_ref }}", builds[0])
        self.assertRegex(builds[0], r" base( |$)")
        self.assertRegex(builds[1], r"build_ref.sh HEAD new( |$)")
        gate = [r for r in runs if "compare.sh --ab" in r]
        self.assertEqual(gate, ["./scripts/compare.sh --ab base/bench/pipebench "
                                "new/bench/pipebench --inconclusive=pass --out ab.json"])
        upload = uses["actions/upload-artifact"]
        self.assertEqual(upload["with"]["path"], "ab.json")
        self.assertEqual(upload.get("if"), "always()")
        order = [i for i, s in enumerate(steps) if "run" in s and (
            "build_ref" in s["run"] or "compare.sh" in s["run"])]
        self.assertEqual(order, sorted(order))
        self.assertLess(order[-1], steps.index(upload))

    def test_commands_run_locally(self):
        """Each `run:` line of the workflow, here: the refs replaced by HEAD, build_ref.sh
        with --dry-run and the already-built binary in its place (a real build takes
        minutes without a warm ccache; PIPEBENCH_AB_TEST_BUILD=1 runs the builds), the gate
        on a tiny filter with 2 rounds. Container and package set-up
        steps are not run (they install packages or change global git settings)."""
        with tempfile.TemporaryDirectory(prefix="pipebench-ab-workflow-") as ws:
            binary = os.path.abspath(ARGS.pipebench)
            tool = ARGS.pipebench_data or os.path.join(
                os.path.dirname(os.path.dirname(binary)), "datasets", "pipebench-data")
            data = os.path.join(ws, "tiny")
            self.assertEqual(run([tool, "synthetic", data, "--count", "4", "--classes", "2",
                                  "--width", "256", "--height", "256"]).returncode, 0)
            ran = []
            for line in run_lines(self.text):
                cmd = re.sub(r"origin/\$\{\{ github\.base_ref \}\}", "HEAD", line)
                cmd = cmd.replace("./scripts/", shlex.quote(scripts_dir()) + "/")
                self.assertNotIn("${{", cmd)
                if line.startswith(("apt-get", "git config --global", "./scripts/setup.sh")):
                    print(f"not run here (package or global set-up): {line}")
                    continue
                if "build_ref.sh" in line and BUILD:
                    p = run(["bash", "-c", cmd], cwd=ws, timeout=3600)  # a real build
                    self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                    ran.append("build_ref")
                    continue
                if "build_ref.sh" in line:
                    dest = shlex.split(cmd)[2]
                    p = run(["bash", "-c", cmd.replace("build_ref.sh ", "build_ref.sh --dry-run ",
                                                       1)], cwd=ws)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertIn("would build HEAD", p.stdout)
                    print(f"substituted the already-built {binary} for {dest}/ (a real "
                          "build_ref.sh build takes minutes without a warm ccache; "
                          "PIPEBENCH_AB_TEST_BUILD=1 runs the two builds here)")
                    for sub, exe in (("bench/pipebench", binary),
                                     ("datasets/pipebench-data", tool)):
                        os.makedirs(os.path.join(ws, dest, os.path.dirname(sub)), exist_ok=True)
                        os.symlink(exe, os.path.join(ws, dest, sub))
                    ran.append("build_ref")
                    continue
                if "compare.sh --ab" in line:
                    # 8 s to buy precision (it was 30), as the other real runs here: what is
                    # checked is that the workflow's command runs and passes this A/A
                    # comparison under --inconclusive=pass, whatever precision it reaches.
                    cmd += (f" --data {shlex.quote(data)} --blocks 2 --min-time 0.02 "
                            "--time-budget 8 --filter 'BM_Transform/normalize$'")
                    p = run(["bash", "-c", cmd], cwd=ws)
                    if shutil.which("valgrind") is None and p.returncode == 1:
                        # Time alone decides without Valgrind, and this test runs beside
                        # others (ab_gate, not ab_gate_timed): a loaded machine may read an
                        # A/A time regression. With Valgrind (CI) the gate's default counts
                        # instructions too, exact, and a time-only regression is a warning.
                        print("the workflow's gate read a time regression without Valgrind on a "
                              "shared machine: its exit 1 is not judged here")
                    else:
                        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                    ran.append("gate")
                    continue
                self.fail(f"a run: line this test does not know: {line}")
            self.assertEqual(ran, ["build_ref", "build_ref", "gate"])
            with open(os.path.join(ws, "ab.json")) as f:  # what upload-artifact uploads
                self.assertIs(json.load(f)["paired"], True)


# The tests that judge a time comparison on the real binary and need the machine to
# themselves (an A/A run must not read a regression; an injected slowdown must be caught):
# ctest runs them alone (ab_gate_timed, RUN_SERIAL) and the rest beside other tests (ab_gate),
# which took the serial test from 273 s to about 140 s on a quiet 2-core machine.
TIMED = {"GateRunTest.test_a_a_run_is_not_a_regression",
         "GateRunTest.test_injected_slowdown_is_caught",
         "GateRunTest.test_calibration_rejudges_at_other_thresholds"}


def _all_tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _all_tests(t)
        else:
            yield t


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--pipebench", required=True)
    ap.add_argument("--pipebench-data")
    ap.add_argument("--scripts")
    ap.add_argument("--timed", choices=("only", "none", "all"), default="all",
                    help="the tests whose assertions need a quiet machine (ctest: ab_gate_timed, "
                         "RUN_SERIAL), or all the others (ab_gate, run beside other tests)")
    ARGS, rest = ap.parse_known_args()
    if ARGS.timed != "all" and any(not a.startswith("-") for a in rest):
        sys.exit("ab_gate_test: --timed=only|none selects the tests itself: give no test names with it")
    if ARGS.timed != "all":
        ids = [t.id().split(".", 1)[1] for t in _all_tests(unittest.defaultTestLoader.
                                                           loadTestsFromModule(sys.modules[__name__]))]
        if TIMED - set(ids):  # a renamed test would run in neither half
            sys.exit(f"ab_gate_test: TIMED names tests that do not exist: {sorted(TIMED - set(ids))}")
        rest += [i for i in ids if (i in TIMED) == (ARGS.timed == "only")]
    sys.exit(run_tests(rest))
