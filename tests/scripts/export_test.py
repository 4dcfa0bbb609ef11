#!/usr/bin/python3
"""export_test.py - scripts/export.py's files read back against the run they came from.

Why it exists: CI users chart and alert on these files (github-action-benchmark's
customBiggerIsBetter / customSmallerIsBetter tools, Bencher's JSON adapter), so every
entry must carry the right name, unit and value. The expected values are recomputed here
from the generated run's iteration rows (median, min, max, sample stddev), the entry
shapes are checked against the consumers' own schemas (the action's zod BenchmarkResult:
name, unit, value, optional range and extra; Bencher's BMF JSON schema: value required,
lower_value and upper_value optional numbers), and the files are parsed strictly (no NaN).

  /usr/bin/python3 export_test.py SCRIPTS_DIR
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import unittest

from ctest_unittest import run_tests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_bench_json import Case, make_run, pipeline_cases, record0  # noqa: E402

SCRIPTS = os.environ.get("PIPEBENCH_SCRIPTS") or os.path.join(HERE, "..", "..", "scripts")
NODE = shutil.which("node") or shutil.which("nodejs")
# What github-action-benchmark does with the file (Node's JSON.parse, then its zod schema:
# name and unit strings, value a number, range and extra optional strings), as a check.
NODE_CHECK = r"""
const list = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
if (!Array.isArray(list)) throw new Error("not an array");
for (const e of list) {
  if (typeof e.name !== "string" || typeof e.unit !== "string") throw new Error("name/unit");
  if (typeof e.value !== "number" || !isFinite(e.value)) throw new Error("value");
  for (const k of ["range", "extra"]) {
    if (k in e && typeof e[k] !== "string") throw new Error(k);
  }
}
console.log(list.length);
"""

# counter -> (name suffix, unit, bigger is better, Bencher measure): the documented table.
EXPECTED = {"items_per_second": ("images/s", "images/s", True, "throughput"),
            "au_pct": ("AU", "%", True, "accelerator-utilisation"),
            "step_ms": ("step time", "ms", False, "step-time"),
            "instructions": ("instructions", "instructions", False, "instructions")}


def strict_load(path):
    def refuse(name):
        raise ValueError(f"{path}: non-standard JSON constant {name}")
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_constant=refuse)


def values(doc, case, counter):
    return [r[counter] for r in doc["benchmarks"]
            if r["run_name"] == case and r["run_type"] == "iteration" and counter in r]


class ExportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        cases, ctx = pipeline_cases(counter_noise_cv=0.03)
        cases.append(Case("BM_Collate/nhwc/pageable/batch:64", real_ms=0.5))  # no counters
        cases.append(Case("BM_H2D/pinned/async/batch:64", error="no CUDA device"))
        ctx["git_commit"] = "0123456789abcdef"
        self.doc = make_run(cases, reps=9, seed=7, context=ctx)
        self.run_path = os.path.join(self.dir, "run.json")
        with open(self.run_path, "w") as f:
            json.dump(self.doc, f)
        self.out = os.path.join(self.dir, "out")

    def tearDown(self):
        self.tmp.cleanup()

    def export(self, *args, run=None):
        p = subprocess.run(["/usr/bin/python3", os.path.join(SCRIPTS, "export.py"),
                            run or self.run_path, "--out", self.out, *args],
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def expected_entries(self, doc):
        """{(case, counter): values} for every counter a case of `doc` has."""
        out = {}
        for row in doc["benchmarks"]:
            if row["run_type"] != "iteration" or row.get("error_occurred"):
                continue
            for counter in EXPECTED:
                if counter in row:
                    out[(row["run_name"], counter)] = values(doc, row["run_name"], counter)
        return out

    def test_github_action_benchmark(self):
        rc, out, err = self.export("--format", "github-action-benchmark")
        self.assertEqual(rc, 0, out + err)
        bigger = strict_load(os.path.join(self.out, "customBiggerIsBetter.json"))
        smaller = strict_load(os.path.join(self.out, "customSmallerIsBetter.json"))
        for entry in bigger + smaller:  # the action's zod schema, with our types
            self.assertLessEqual(set(entry), {"name", "unit", "value", "range", "extra"})
            self.assertIsInstance(entry["name"], str)
            self.assertIsInstance(entry["unit"], str)
            self.assertIsInstance(entry["value"], float)
            self.assertIsInstance(entry.get("range", ""), str)
            self.assertIsInstance(entry["extra"], str)
        got = {e["name"]: e for e in bigger + smaller}
        self.assertEqual(len(got), len(bigger) + len(smaller), "duplicate names")
        expected = self.expected_entries(self.doc)
        self.assertEqual(len(got), len(expected))
        for (case, counter), vals in expected.items():
            suffix, unit, is_bigger, _ = EXPECTED[counter]
            e = got[f"{case} - {suffix}"]
            self.assertIn(e, bigger if is_bigger else smaller)
            self.assertEqual(e["unit"], unit)
            self.assertAlmostEqual(e["value"], statistics.median(vals), places=9)
            self.assertEqual(e["range"], f"± {statistics.stdev(vals):.4g}")
            self.assertIn(f"median of 9 repetitions; min {min(vals):.6g}, max {max(vals):.6g}",
                          e["extra"])
            self.assertIn("recipe imagenet_train; batch_size 64; git_commit 0123456789abcdef",
                          e["extra"])
        # AU and step time exist only on the end-to-end cases; every case with items.
        e2e = [c for c, k in expected if k == "au_pct"]
        self.assertEqual(len(e2e), 3)
        self.assertTrue(all(c.startswith("BM_EndToEnd/") for c in e2e))
        self.assertEqual({c for c, k in expected if k == "step_ms"}, set(e2e))
        self.assertNotIn("BM_H2D", json.dumps(bigger + smaller))
        if NODE:  # the action's own parser, where Node is installed
            for name, doc in (("customBiggerIsBetter", bigger), ("customSmallerIsBetter", smaller)):
                p = subprocess.run([NODE, "-e", NODE_CHECK,
                                    os.path.join(self.out, name + ".json")],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual((p.returncode, p.stdout.strip()), (0, str(len(doc))), p.stderr)
        self.assertIn("left out 1 errored case(s): BM_H2D/pinned/async/batch:64", err)
        self.assertIn("1 case(s) without images/s, AU, step time or instructions left out", err)

    def test_bencher(self):
        rc, out, err = self.export("--format", "bencher")
        self.assertEqual(rc, 0, out + err)
        doc = strict_load(os.path.join(self.out, "bencher.json"))
        expected = self.expected_entries(self.doc)
        self.assertEqual(set(doc), {c for c, _ in expected})
        n = 0
        for case, measures in doc.items():
            for measure, metric in measures.items():
                # Bencher's BMF schema: value required, lower/upper optional, all numbers.
                self.assertLessEqual(set(metric), {"value", "lower_value", "upper_value"})
                counter = [k for k, v in EXPECTED.items() if v[3] == measure][0]
                vals = expected[(case, counter)]
                self.assertAlmostEqual(metric["value"], statistics.median(vals), places=9)
                self.assertEqual((metric["lower_value"], metric["upper_value"]),
                                 (min(vals), max(vals)))
                n += 1
        self.assertEqual(n, len(expected))

    def test_single_run_has_no_spread_and_filter(self):
        cases, ctx = pipeline_cases()
        single = os.path.join(self.dir, "single.json")
        doc = make_run(cases, reps=1, context=ctx)
        with open(single, "w") as f:
            json.dump(doc, f)
        rc, out, err = self.export("--format", "bencher", "--cases", "^BM_EndToEnd/",
                                   run=single)
        self.assertEqual(rc, 0, out + err)
        got = strict_load(os.path.join(self.out, "bencher.json"))
        self.assertEqual(len(got), 3)
        for case, measures in got.items():
            self.assertEqual(set(measures),
                             {"throughput", "accelerator-utilisation", "step-time"})
            self.assertEqual(measures["step-time"], {"value": values(doc, case, "step_ms")[0]})
        rc, out, err = self.export("--format", "github-action-benchmark", "--cases",
                                   "BM_Loader", run=single)
        self.assertEqual(rc, 0, out + err)
        bigger = strict_load(os.path.join(self.out, "customBiggerIsBetter.json"))
        self.assertEqual(len(bigger), 3)
        self.assertTrue(all("range" not in e for e in bigger))
        self.assertTrue(all(e["extra"].startswith("median of 1 repetition;") for e in bigger))
        self.assertEqual(strict_load(os.path.join(self.out, "customSmallerIsBetter.json")), [])
        self.assertIn("customSmallerIsBetter.json is an empty list", err)

    def test_instruction_gate_json(self):
        # The file `compare.sh --ab ... --metric=instructions --out` writes: NEW's rows with
        # exact instructions per iteration and no rates (instr_gate.py drops them).
        cases, ctx = pipeline_cases()
        doc = make_run(cases, reps=1, context=ctx)
        rows = [r for r in doc["benchmarks"] if r["run_type"] == "iteration"]
        for i, r in enumerate(rows):
            r.pop("items_per_second", None)
            r["instructions"] = 1_000_000 + 1000 * i
        gate = os.path.join(self.dir, "instr.json")
        with open(gate, "w") as f:
            json.dump(dict(doc, metric="instructions", paired=True), f)
        rc, out, err = self.export("--format", "bencher", run=gate)
        self.assertEqual(rc, 0, out + err)
        got = strict_load(os.path.join(self.out, "bencher.json"))
        for r in rows:
            self.assertEqual(got[r["run_name"]]["instructions"], {"value": r["instructions"]})
        rc, out, err = self.export("--format", "github-action-benchmark", run=gate)
        self.assertEqual(rc, 0, out + err)
        smaller = strict_load(os.path.join(self.out, "customSmallerIsBetter.json"))
        by_name = {e["name"]: e for e in smaller}
        for r in rows:
            e = by_name[r["run_name"] + " - instructions"]
            self.assertEqual((e["unit"], e["value"]), ("instructions", r["instructions"]))
            self.assertNotIn("range", e)

    def assert_bad(self, args, needle, run=None):
        rc, out, err = self.export(*args, run=run)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("export: error: ", err)
        self.assertIn(needle, err)
        self.assertNotIn("Traceback", err)

    def test_bad_input_exits_2(self):
        fmt = ("--format", "bencher")
        self.assert_bad(fmt, "missing.json: no such file",
                        run=os.path.join(self.dir, "missing.json"))
        bad = os.path.join(self.dir, "bad.json")
        with open(bad, "w") as f:
            f.write("{")
        self.assert_bad(fmt, "bad.json: malformed JSON", run=bad)
        self.assert_bad((*fmt, "--cases", "BM_Collate"), "has items_per_second, au_pct, step_ms or instructions")
        self.assert_bad((*fmt, "--cases", "(("), "not a valid regular expression")
        rc, _, err = self.export("--format", "csv")
        self.assertEqual(rc, 2, err)
        self.assertIn("invalid choice", err)


ExportTestRecord0 = record0(ExportTest)  # the same on a run written before the record


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        SCRIPTS = sys.argv.pop(1)
    sys.exit(run_tests())
