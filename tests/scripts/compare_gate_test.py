#!/usr/bin/python3
"""compare_gate_test.py - scripts/compare.sh against generated Google Benchmark JSON.

Why it exists: compare.sh is the CI gate for performance regressions, so its exit status
(0 pass, 1 regression, 2 bad input) is the contract; every test below runs the gate on
files written by gen_bench_json.py with known slowdowns and noise, and checks the status
and the per-case lines. The expected p-values come from scipy directly.
Every test of CompareGateTest runs twice: on runs with the record (record version 1, a
"key" on every row) and, as CompareGateTestRecord0, on runs written before it (the legacy
adapter). Those call compare_gate.py (what compare.sh execs) in a forked child of this
process (forked_script.py: the same main, exit status and output, without importing scipy
again for each of their 150 calls); CompareShTest runs compare.sh itself.

  /usr/bin/python3 compare_gate_test.py SCRIPTS_DIR
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import unittest

from ctest_unittest import run_tests
from forked_script import Script

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_bench_json import Case, make_run, record0  # noqa: E402

SCRIPTS = os.environ.get("PIPEBENCH_SCRIPTS") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")


_GATE = {}


def gate(args):
    """(exit status, stdout, stderr) of `compare.sh BASE NEW ...` without its --ab: its
    compare_gate.py run in a forked child (forked_script.py)."""
    if SCRIPTS not in _GATE:
        _GATE[SCRIPTS] = Script(os.path.join(SCRIPTS, "compare_gate.py"),
                                warm_up=lambda _: sys.modules["pbgate.compare"].import_gbench())
    return _GATE[SCRIPTS](args)


def three_cases(slow_factor_b=1.0, noise=0.01):
    return [Case("BM_Transform/resize/real_time", real_ms=2.0, noise_cv=noise),
            Case("BM_Decode/turbo_full/real_time", real_ms=5.0 * slow_factor_b, noise_cv=noise),
            Case("BM_Collate/nhwc/pageable/batch:64", real_ms=0.5, noise_cv=noise,
                 time_unit="us")]


class CompareGateTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, doc):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            if isinstance(doc, str):
                f.write(doc)
            else:
                json.dump(doc, f)
        return path

    def compare(self, base, new, *extra):
        return gate([base, new, *extra])

    # --- passing comparisons -------------------------------------------------------

    def test_same_distribution_passes(self):
        a = self.write("a.json", make_run(three_cases(), reps=9, seed=1))
        b = self.write("b.json", make_run(three_cases(), reps=9, seed=2))
        rc, out, err = self.compare(a, b)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("compare: PASS: 0 of 3 case(s)", out)
        self.assertNotIn("REGRESSION", out)
        # compare.py's own table is printed, with its U-test rows.
        self.assertIn("Time Old", out)
        self.assertIn("BM_Decode/turbo_full/real_time_pvalue", out)

    def test_faster_passes(self):
        a = self.write("a.json", make_run(three_cases(), reps=9, seed=1))
        b = self.write("b.json", make_run(three_cases(), reps=9, seed=2, scale=0.5))
        rc, out, _ = self.compare(a, b)
        self.assertEqual(rc, 0, out)
        self.assertIn("3 faster by more than that", out)

    # --- regressions ---------------------------------------------------------------

    def test_significant_slowdown_of_one_case_fails_naming_it(self):
        a = self.write("a.json", make_run(three_cases(), reps=9, seed=1))
        b = self.write("b.json", make_run(three_cases(slow_factor_b=1.2), reps=9, seed=2))
        rc, out, _ = self.compare(a, b)
        self.assertEqual(rc, 1, out)
        lines = [ln for ln in out.splitlines() if ln.startswith("REGRESSION")]
        self.assertEqual(len(lines), 1, out)
        m = re.match(r"REGRESSION BM_Decode/turbo_full/real_time: real_time ([\d.]+) ms -> "
                     r"([\d.]+) ms \(\+([\d.]+)%, limit \+5%, p=([\d.e-]+) < 0.05\)", lines[0])
        self.assertIsNotNone(m, lines[0])
        self.assertAlmostEqual(float(m.group(1)), 5.0, delta=0.2)
        self.assertAlmostEqual(float(m.group(2)), 6.0, delta=0.25)
        self.assertAlmostEqual(float(m.group(3)), 20.0, delta=5.0)
        # 9 vs 9 fully separated samples: scipy's two-sided U test gives p < 1e-3.
        self.assertLess(float(m.group(4)), 1e-3)
        self.assertIn("compare: FAIL: 1 of 3 case(s)", out)

    def test_threshold_is_respected(self):
        # A clear +3% shift (noise 0.2%): passes at the default 5%, fails at 2%.
        a = self.write("a.json", make_run(three_cases(noise=0.002), reps=9, seed=1))
        b = self.write("b.json", make_run(three_cases(noise=0.002), reps=9, seed=2, scale=1.03))
        rc, out, _ = self.compare(a, b)
        self.assertEqual(rc, 0, out)
        rc, out, _ = self.compare(a, b, "--max-regression", "2")
        self.assertEqual(rc, 1, out)
        self.assertEqual(out.count("\nREGRESSION "), 3, out)
        rc, out, _ = self.compare(a, b, "--max-regression=3.5")
        self.assertEqual(rc, 0, out)

    def test_slower_but_not_significant_passes_with_p_value(self):
        base = [50, 100, 150, 200, 250, 300, 350, 400, 450]
        new = [60, 110, 160, 210, 290, 310, 360, 410, 460]  # median +16%, heavy overlap
        a = self.write("a.json", make_run([Case("BM_X", values_ms=base)]))
        b = self.write("b.json", make_run([Case("BM_X", values_ms=new)]))
        # CV ~55%: too noisy by default (below); judged here with a loose --max-cv.
        rc, out, _ = self.compare(a, b, "--max-cv", "100")
        self.assertEqual(rc, 0, out)
        from scipy.stats import mannwhitneyu
        p = mannwhitneyu(base, new, alternative="two-sided").pvalue
        self.assertGreater(p, 0.05)
        self.assertIn(f"BM_X is +16.0% slower but not significant (p={p:.4g} >= 0.05)", out)
        # The same shift with a loose alpha does fail.
        rc, out, _ = self.compare(a, b, "--alpha", str(min(0.99, p * 1.5)), "--max-cv", "100")
        self.assertEqual(rc, 1, out)

    def test_aggregate_rows_are_not_compared(self):
        a_doc = make_run(three_cases(), reps=9, seed=1)
        b_doc = make_run(three_cases(), reps=9, seed=2)
        for row in b_doc["benchmarks"]:  # corrupt only the aggregates: mean x10
            if row.get("run_type") == "aggregate":
                row["real_time"] *= 10
        a, b = self.write("a.json", a_doc), self.write("b.json", b_doc)
        rc, out, _ = self.compare(a, b)
        self.assertEqual(rc, 0, out)

    def test_single_runs_use_the_threshold_and_warn(self):
        a = self.write("a.json", make_run(three_cases(noise=0.0), reps=1))
        b = self.write("b.json", make_run(three_cases(noise=0.0), reps=1, scale=1.2))
        rc, out, _ = self.compare(a, b)
        self.assertEqual(rc, 1, out)
        self.assertIn("no significance test was possible", out)
        self.assertIn("p=n/a, single run", out)
        rc, out, _ = self.compare(a, b, "--max-regression", "25")
        self.assertEqual(rc, 0, out)
        self.assertIn("no significance test was possible", out)

    def test_few_repetitions_warn_that_the_test_cannot_fail(self):
        a = self.write("a.json", make_run(three_cases(), reps=3, seed=1))
        b = self.write("b.json", make_run(three_cases(), reps=3, seed=2, scale=2.0))
        rc, out, _ = self.compare(a, b)
        # 3 vs 3: the smallest exact two-sided p is 0.1 > 0.05, so nothing can fail.
        self.assertEqual(rc, 0, out)
        self.assertIn("with 3 vs 3 repetitions the U test can never reach p < 0.05", out)

    def test_time_units_are_converted(self):
        base = [Case("BM_X", real_ms=2.0, noise_cv=0.01, time_unit="ms")]
        same = [Case("BM_X", real_ms=2.0, noise_cv=0.01, time_unit="us")]
        a = self.write("a.json", make_run(base, seed=1))
        b = self.write("b.json", make_run(same, seed=2))
        c = self.write("c.json", make_run(same, seed=2, scale=1.5))
        self.assertEqual(self.compare(a, b)[0], 0)
        rc, out, _ = self.compare(a, c)
        self.assertEqual(rc, 1, out)
        m = re.search(r"REGRESSION BM_X: real_time ([\d.]+) ms -> ([\d.]+) ms", out)
        self.assertIsNotNone(m, out)
        self.assertAlmostEqual(float(m.group(1)), 2.0, delta=0.1)
        self.assertAlmostEqual(float(m.group(2)), 3.0, delta=0.15)
        # compare.py's table shows the case too, the new times converted to ms.
        self.assertRegex(out, r"\nBM_X_mean\s+\+0\.[45]\d+\s+\+0\.[45]\d+\s+2\s+3\s")
        self.assertIn("\nBM_X_cv ", out)

    def test_time_field_choice(self):
        # real_time 1.5x slower (a busy machine), cpu_time unchanged.
        cases = [Case("BM_Cpu", real_ms=1.0), Case("BM_Wall/real_time", real_ms=1.0)]
        a_doc = make_run(cases, seed=1)
        b_doc = make_run(cases, seed=2)
        for row in b_doc["benchmarks"]:
            row["real_time"] *= 1.5
        a, b = self.write("a.json", a_doc), self.write("b.json", b_doc)
        rc, out, _ = self.compare(a, b)  # default: real_time for every case
        self.assertEqual(rc, 1, out)
        self.assertIn("REGRESSION BM_Cpu: real_time", out)
        self.assertIn("REGRESSION BM_Wall/real_time: real_time", out)
        rc, out, _ = self.compare(a, b, "--time", "cpu")
        self.assertEqual(rc, 0, out)
        self.assertIn("in cpu_time", out)
        rc, out, _ = self.compare(a, b, "--time", "auto")  # cpu for BM_Cpu, real for BM_Wall
        self.assertEqual(rc, 1, out)
        self.assertNotIn("REGRESSION BM_Cpu", out)
        self.assertIn("REGRESSION BM_Wall/real_time: real_time", out)
        self.assert_bad_input([a, b, "--time", "wall"], "invalid choice")

    def test_filter_limits_the_gate(self):
        a = self.write("a.json", make_run(three_cases(), reps=9, seed=1))
        b = self.write("b.json", make_run(three_cases(slow_factor_b=1.5), reps=9, seed=2))
        self.assertEqual(self.compare(a, b, "--filter", "BM_Transform")[0], 0)
        self.assertEqual(self.compare(a, b, "--filter", "^BM_(Decode|Collate)")[0], 1)
        rc, out, err = self.compare(a, b, "--filter", "BM_DoesNotExist")
        self.assertEqual(rc, 2, out + err)
        self.assertIn("no case in common", err)

    def test_cases_errored_in_both_runs_are_skipped(self):
        both = [Case("BM_H2D/pinned/async/batch:64", error="no CUDA device"),
                Case("BM_Y", real_ms=1.0)]
        a = self.write("a.json", make_run(both, seed=1))
        b = self.write("b.json", make_run(both, seed=2))
        rc, out, _ = self.compare(a, b)
        self.assertEqual(rc, 0, out)
        self.assertIn("skipped BM_H2D/pinned/async/batch:64: reported an error in", out)
        self.assertNotIn("ERRORED", out)
        rc, _, err = self.compare(a, b, "--filter", "BM_H2D")  # nothing left to judge
        self.assertEqual(rc, 2)
        self.assertIn("no case in common", err)

    def test_case_errored_in_new_run_only_fails(self):
        base = [Case("BM_H2D/pinned/async/batch:64", real_ms=1.0), Case("BM_Y", real_ms=1.0)]
        new = [Case("BM_H2D/pinned/async/batch:64", error="bad file x.jpg: truncated"),
               Case("BM_Y", real_ms=1.0)]
        a = self.write("a.json", make_run(base, seed=1))
        b = self.write("b.json", make_run(new, seed=2))
        for extra in ((), ("--filter", "BM_H2D")):  # also when it is the only case
            rc, out, _ = self.compare(a, b, *extra)
            self.assertEqual(rc, 1, out)
            self.assertIn(f"ERRORED BM_H2D/pinned/async/batch:64: in {b}: bad file x.jpg: "
                          f"truncated (not in {a})", out)
            self.assertIn("compare: FAIL: 0 of", out)
            self.assertIn(f"0 case(s) lost and 1 newly errored in {b}", out)
        # The other way round (fixed in the new run) is no failure.
        rc, out, _ = self.compare(b, a)
        self.assertEqual(rc, 0, out)
        self.assertNotIn("ERRORED", out)

    def test_lost_case_fails(self):
        base = [Case("BM_A", real_ms=1.0), Case("BM_B", real_ms=1.0), Case("BM_C")]
        a = self.write("a.json", make_run(base, seed=1))
        b = self.write("b.json", make_run(base[:1], seed=2))
        rc, out, _ = self.compare(a, b)
        self.assertEqual(rc, 1, out)
        self.assertEqual([ln for ln in out.splitlines() if ln.startswith("LOST")],
                         [f"LOST BM_B: in {a}, not in {b}", f"LOST BM_C: in {a}, not in {b}"])
        self.assertIn("2 case(s) lost and 0 newly errored", out)
        # A case added in the new run is only a note; a filter that leaves out the lost
        # ones passes.
        rc, out, _ = self.compare(b, a)
        self.assertEqual(rc, 0, out)
        self.assertIn(f"compare: note: BM_B only in {a}", out)
        self.assertEqual(self.compare(a, b, "--filter", "^BM_A$")[0], 0)

    def test_disjoint_runs_are_bad_input(self):
        a = self.write("a.json", make_run([Case("BM_A")]))
        b = self.write("b.json", make_run([Case("BM_B")]))
        rc, _, err = self.compare(a, b)
        self.assertEqual(rc, 2)
        self.assertIn("no case in common", err)

    # --- runs that are not comparable, busy machines ---------------------------------

    CONTEXT = {"dataset_fingerprint": "0123456789abcdef", "batch_size": "64",
               "crop_size": "224", "recipe": "imagenet_train",
               "pipeline_spec": "{name: imagenet_train, transforms: [random_resized_crop]}",
               "pipebench_build": "release (optimised, NDEBUG)"}

    def pair(self, base_ctx, new_ctx, scale=1.0):
        a = self.write("a.json", make_run(three_cases(), seed=1, context=base_ctx))
        b = self.write("b.json", make_run(three_cases(), seed=2, context=new_ctx, scale=scale))
        return a, b

    def test_runs_with_different_context_are_refused_unless_forced(self):
        for key, other in (("dataset_fingerprint", "fedcba9876543210"), ("batch_size", "32"),
                           ("crop_size", "176"), ("pipeline_spec", "{name: mine}"),
                           ("pipebench_build", "DEBUG: timings of this build mean nothing")):
            with self.subTest(key=key):
                a, b = self.pair(self.CONTEXT, {**self.CONTEXT, key: other}, scale=2.0)
                rc, out, err = self.compare(a, b)
                self.assertEqual(rc, 2, out + err)
                self.assertEqual(out, "")
                self.assertEqual(len(err.splitlines()), 1, err)
                self.assertIn("compare: error: the runs are not comparable: "
                              f"{key} differs ({a}: {self.CONTEXT[key]!r}, {b}: {other!r})", err)
                self.assertIn("--force", err)
                rc, out, err = self.compare(a, b, "--force")
                self.assertEqual(rc, 1, out + err)  # compared: 2x slower
                self.assertIn(f"compare: warning: comparing runs that differ (--force): {key} "
                              "differs", out)
                self.assertIn("REGRESSION", out)

    def test_recipe_is_compared_when_a_run_has_no_pipeline_spec(self):
        old = {k: v for k, v in self.CONTEXT.items() if k != "pipeline_spec"}
        a, b = self.pair(old, {**self.CONTEXT, "recipe": "imagenet_val"})
        rc, _, err = self.compare(a, b)
        self.assertEqual(rc, 2, err)
        self.assertIn("recipe differs", err)
        # Same recipe, spec recorded in one run only: compared, with a note.
        a, b = self.pair(old, self.CONTEXT)
        rc, out, err = self.compare(a, b)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("compare: note: not checked, recorded in one run only: pipeline_spec",
                      out)
        # Same spec, different recipe name: the spec decides.
        a, b = self.pair(self.CONTEXT, {**self.CONTEXT, "recipe": "renamed"})
        self.assertEqual(self.compare(a, b)[0], 0)

    def test_busy_machine_warns(self):
        a, b = self.pair(self.CONTEXT, {**self.CONTEXT, "busy_machine": "true"})
        rc, out, _ = self.compare(a, b)
        self.assertEqual(rc, 0, out)
        self.assertIn(f"compare: warning: measured on a busy machine (context "
                      f"busy_machine=true): {b}; {a}: unknown.", out)
        a, b = self.pair({**self.CONTEXT, "busy_machine": "true"},
                         {**self.CONTEXT, "busy_machine": "false"})
        out = self.compare(a, b)[1]
        self.assertIn(f"busy_machine=true): {a}; {b}: not busy.", out)
        for flags in (({}, {}), ({"busy_machine": "false"}, {"busy_machine": "false"})):
            a, b = self.pair({**self.CONTEXT, **flags[0]}, {**self.CONTEXT, **flags[1]})
            self.assertNotIn("busy", self.compare(a, b)[1])

    # --- noise, base 0, names, aggregates only ---------------------------------------

    def test_noisy_case_is_not_judged(self):
        # CV ~10% on both sides, new 1.25x slower: the U test alone would call it
        # significant (9 vs 9 fully separated); a CV above the 5% limit with a change
        # within 3 CVs says noise.
        base = [0.85, 0.9, 0.95, 1.0, 1.0, 1.05, 1.1, 1.15, 1.2]
        a = self.write("a.json", make_run([Case("BM_N", values_ms=base), Case("BM_Q")], seed=1))
        b = self.write("b.json", make_run([Case("BM_N", values_ms=[v * 1.25 for v in base]),
                                           Case("BM_Q")], seed=2))
        sd = statistics.stdev(base) / statistics.fmean(base) * 100
        rc, out, _ = self.compare(a, b)
        self.assertEqual(rc, 0, out)
        self.assertIn(f"compare: warning: BM_N too noisy to judge: CV of real_time over "
                      f"repetitions base {sd:.1f}%, new {sd:.1f}% > --max-cv 5%; change +25.0% "
                      "not judged", out)
        self.assertIn("compare: PASS: 0 of 2 case(s)", out)
        self.assertIn("1 too noisy to judge", out)
        rc, out, _ = self.compare(a, b, "--max-cv", f"{sd + 1:.1f}")
        self.assertEqual(rc, 1, out)
        self.assertIn("REGRESSION BM_N:", out)
        rc, out, _ = self.compare(a, b, "--max-regression", "20")  # --max-cv follows it
        self.assertEqual(rc, 1, out)
        self.assert_bad_input([a, b, "--max-cv", "-3"], "--max-cv must be a number")

    def test_noise_does_not_hide_a_change_far_beyond_it(self):
        # The same 10% CV, but 2x slower: more than 3 CVs, so it is judged and fails.
        base = [0.85, 0.9, 0.95, 1.0, 1.0, 1.05, 1.1, 1.15, 1.2]
        a = self.write("a.json", make_run([Case("BM_N", values_ms=base), Case("BM_Q")], seed=1))
        b = self.write("b.json", make_run([Case("BM_N", values_ms=[v * 2 for v in base]),
                                           Case("BM_Q")], seed=2))
        rc, out, _ = self.compare(a, b)
        self.assertEqual(rc, 1, out)
        self.assertIn("REGRESSION BM_N:", out)
        self.assertIn(", 0 too noisy to judge", out)

    def test_base_time_zero_is_not_a_percentage(self):
        a = self.write("a.json", make_run([Case("BM_Z", values_ms=[0.0] * 9), Case("BM_Q")],
                                          seed=1))
        b = self.write("b.json", make_run([Case("BM_Z", real_ms=2.0), Case("BM_Q")], seed=2))
        rc, out, _ = self.compare(a, b, "--no-color")
        self.assertEqual(rc, 0, out)
        self.assertNotIn("200", out)
        self.assertNotIn("+2.0000", out)  # compare.py's table would print that
        self.assertRegex(out, r"compare: warning: BM_Z: real_time base 0 -> [\d.]+ ms; no "
                              r"percentage change \(base 0\), not judged")
        self.assertIn("compare: note: left out of the table, base time 0", out)
        self.assertIn("1 with base 0", out)
        self.assertNotIn("\nBM_Z", out)

    def test_names_with_regex_characters(self):
        names = ["BM_Loader/my(recipe)+[v2]*/workers:1/real_time", "BM_Sample/a.b|c$/real_time"]
        a = self.write("a.json", make_run([Case(n) for n in names], seed=1,
                                          context={"recipe": "my(recipe)+[v2]*"}))
        b = self.write("b.json", make_run([Case(names[0]), Case(names[1], real_ms=2.0)],
                                          seed=2, context={"recipe": "my(recipe)+[v2]*"}))
        rc, out, err = self.compare(a, b)
        self.assertEqual(rc, 1, out + err)
        self.assertIn(f"REGRESSION {names[1]}: real_time", out)
        rc, out, _ = self.compare(a, b, "--filter", re.escape(names[0]))
        self.assertEqual(rc, 0, out)

    def test_aggregates_only_runs_use_the_median(self):
        def aggregates_only(doc):
            doc["benchmarks"] = [r for r in doc["benchmarks"] if r["run_type"] == "aggregate"]
            return doc
        a = self.write("a.json", aggregates_only(make_run(three_cases(), seed=1)))
        b = self.write("b.json", aggregates_only(make_run(three_cases(slow_factor_b=1.3),
                                                          seed=2)))
        rc, out, _ = self.compare(a, b)
        self.assertEqual(rc, 1, out)
        self.assertIn("REGRESSION BM_Decode/turbo_full/real_time: real_time", out)
        self.assertIn("p=n/a, single run", out)

    # --- bad input -----------------------------------------------------------------

    def assert_bad_input(self, args, needle):
        rc, out, err = gate(args)
        self.assertEqual(rc, 2, out + err)
        self.assertIn(needle, err)
        self.assertNotIn("Traceback", err)

    def test_bad_input_exits_2(self):
        good = self.write("good.json", make_run(three_cases()))
        missing = os.path.join(self.dir, "missing.json")
        self.assert_bad_input([missing, good], "missing.json: no such file")
        self.assert_bad_input([good, missing], "missing.json: no such file")
        self.assert_bad_input([self.dir, good], "not a regular file")
        bad = self.write("bad.json", '{"benchmarks": [ {"name": "BM_X", ')
        self.assert_bad_input([good, bad], "bad.json: malformed JSON")
        empty = self.write("empty.json", "")
        self.assert_bad_input([empty, good], "empty.json: malformed JSON")
        notgb = self.write("notgb.json", '{"results": []}')
        self.assert_bad_input([good, notgb], "not a Google Benchmark JSON")
        alist = self.write("list.json", "[1, 2]")
        self.assert_bad_input([alist, good], "not a Google Benchmark JSON")
        noname = self.write("noname.json", '{"benchmarks": [{"real_time": 1}]}')
        self.assert_bad_input([good, noname], "has no \"name\"")
        badtime = self.write("badtime.json", json.dumps({"benchmarks": [
            {"name": "BM_X", "real_time": "fast", "cpu_time": 1, "time_unit": "ns"}]}))
        self.assert_bad_input([good, badtime], "\"real_time\" must be a finite number")
        badunit = self.write("badunit.json", json.dumps({"benchmarks": [
            {"name": "BM_X", "real_time": 1, "cpu_time": 1, "time_unit": "days"}]}))
        self.assert_bad_input([good, badunit], "\"time_unit\" must be one of")
        binary = self.write("binary.json", "")
        with open(binary, "wb") as f:
            f.write(b"\xff\xfe\x00garbage")
        self.assert_bad_input([binary, good], "binary.json")

    def test_bad_options_exit_2(self):
        good = self.write("good.json", make_run(three_cases()))
        for value in ("-1", "abc", "nan", "inf", ""):
            self.assert_bad_input([good, good, "--max-regression", value],
                                  "--max-regression must be a number")
        self.assert_bad_input([good, good, "--alpha", "0"], "--alpha must be a number")
        self.assert_bad_input([good, good, "--alpha", "1.5"], "--alpha must be a number")
        self.assert_bad_input([good, good, "--filter", "BM_(("], "not a valid regular expression")
        self.assert_bad_input([good], "required")
        self.assert_bad_input([good, good, "--bogus"], "unrecognized arguments")


CompareGateTestRecord0 = record0(CompareGateTest)


class CompareShTest(unittest.TestCase):
    """compare.sh itself, as CI and users call it: its three exit statuses."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def compare_sh(self, *args):
        p = subprocess.run([os.path.join(SCRIPTS, "compare.sh"), *args], capture_output=True,
                           text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def test_pass_regression_and_bad_input(self):
        a = os.path.join(self.dir, "a.json")
        b = os.path.join(self.dir, "b.json")
        slow = os.path.join(self.dir, "slow.json")
        for path, doc in ((a, make_run(three_cases(), reps=9, seed=1)),
                          (b, make_run(three_cases(), reps=9, seed=2)),
                          (slow, make_run(three_cases(slow_factor_b=1.2), reps=9, seed=2))):
            with open(path, "w") as f:
                json.dump(doc, f)
        rc, out, err = self.compare_sh(a, b)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("compare: PASS: 0 of 3 case(s)", out)
        self.assertIn("Time Old", out)  # compare.py's table
        rc, out, err = self.compare_sh(a, slow)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("REGRESSION BM_Decode/turbo_full/real_time: real_time", out)
        rc, out, err = self.compare_sh(a, os.path.join(self.dir, "missing.json"))
        self.assertEqual(rc, 2, out + err)
        self.assertIn("missing.json: no such file", err)
        self.assertNotIn("Traceback", err)


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        SCRIPTS = sys.argv.pop(1)
    sys.exit(run_tests())
