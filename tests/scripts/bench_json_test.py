#!/usr/bin/python3
"""bench_json_test.py - the run record readers (scripts/pbgate/record.py): the case key,
the legacy adapter for files written before the record, and the typed context; and the
imports of the package they live in, scripts/pbgate.

Why it exists: the scripts select cases by the fields of the record's "key" and never
read a case name; a file written before the record (record version 0) is read through ONE
adapter (record.legacy_case_key) that derives the same key from the name. So (1) the
adapter must give, for every name form of the old grammar (/tmp/record_spec.md, model/
case_key.h), the key the bench writes for that case: the expected keys are built here
from their fields and their names written from the keys (gen_bench_json.key_name, the
grammar forwards), Google Benchmark's settings suffixes appended; (2) a row with a key is
read as it is, even when its name says otherwise; (3) the context parsers take the new
JSON numbers and booleans and the old strings, strictly; (4) a run of the cuda:cnn
baseline (a baseline with ':') finds its sweep in plot.py and its cases in the gate;
(5) the gates' package, scripts/pbgate, imports nothing outside itself but the standard
library, scipy, numpy and Google Benchmark's gbench (not the scripts' entry points, not a
module that lives only beside it in scripts/), and its modules import each other without
a cycle: read from their source (ast), every import statement, those inside functions
too, so that it holds before anything runs.

  /usr/bin/python3 bench_json_test.py SCRIPTS_DIR
"""

import ast
import json
import os
import subprocess
import sys
import tempfile
import unittest

from ctest_unittest import run_tests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_bench_json import Case, case_key, make_run, pipeline_cases  # noqa: E402

SCRIPTS = os.environ.get("PIPEBENCH_SCRIPTS") or os.path.join(HERE, "..", "..", "scripts")


def import_scripts():
    """(pbgate.record, pbgate.compare, plot)."""
    if SCRIPTS not in sys.path:
        sys.path.insert(0, SCRIPTS)
    from pbgate import compare, record
    import plot
    return record, compare, plot


P = "imagenet_train"
# Every form of the old grammar, as (the key's fields, Google Benchmark's suffixes on the
# name it wrote). The expected name is the key's, without the suffixes.
FORMS = [
    (dict(family="Read", layout="files", cache="warm"), ""),
    (dict(family="Read", layout="shards", cache="cold"), "/iterations:1"),
    (dict(family="Read", layout="shards", shards=64, cache="warm"), "/repeats:3"),
    (dict(family="Decode", op="turbo_full"), ""),
    (dict(family="Decode", op="roi", detail="target:224"), "/min_time:0.500"),
    (dict(family="Transform", op="random_resized_crop"), ""),
    (dict(family="Transform", op="resize", detail="size:256/interpolation:bilinear"),
     "/min_warmup_time:0.100"),
    (dict(family="Sample", pipeline=P, timed_by="real_time"), "/real_time"),
    (dict(family="Sample", pipeline=P, variant="decode", variant_param="auto",
          timed_by="real_time"), "/real_time"),
    (dict(family="Sample", pipeline=P, variant="presized", variant_param="256"), ""),
    (dict(family="Sample", pipeline=P, variant="collate", variant_param="uint8"), ""),
    (dict(family="Sample", pipeline=P, variant="without", variant_param="horizontal_flip"), ""),
    (dict(family="Sample", pipeline=P, variant="without", variant_param="random_erasing#2"),
     "/threads:1"),
    (dict(family="Collate", op="nhwc", detail="pageable/batch:64"), ""),
    (dict(family="H2D", op="pinned", detail="async/batch:64", timed_by="manual_time"),
     "/manual_time"),
    (dict(family="StageTimers", pipeline=P, workers=2, timed_by="real_time"),
     "/iterations:30/real_time"),
    (dict(family="Loader", pipeline=P, workers=4, timed_by="real_time"), "/real_time"),
    (dict(family="Loader", pipeline=P, layout="files", cache="warm", workers=2), ""),
    (dict(family="Loader", pipeline=P, layout="shards", cache="cold", workers=8), ""),
    (dict(family="Loader", pipeline=P, layout="shards", shards=128, cache="cold", workers=8,
          timed_by="real_time"), "/real_time"),
    (dict(family="SystemSampler", pipeline=P, workers=1, timed_by="real_time"),
     "/process_time/real_time"),
    (dict(family="TrainStep", baseline="emulated"), "/process_time"),
    (dict(family="TrainStep", baseline="cuda", timed_by="manual_time"), "/manual_time"),
    (dict(family="TrainStep", baseline="cuda:mlp", timed_by="manual_time"),
     "/iterations:10/repeats:2/manual_time/threads:1"),
    (dict(family="TrainStep", baseline="cuda:cnn"), ""),
    (dict(family="EndToEnd", pipeline="x", baseline="cuda:cnn", workers=4,
          timed_by="real_time"), "/iterations:30/real_time"),
    (dict(family="EndToEnd", pipeline=P, baseline="emulated", workers=1, timed_by="real_time"),
     "/real_time"),
    (dict(family="EndToEnd", pipeline="x", variant="decode", variant_param="auto",
          baseline="emulated", workers=2, callbacks="checkpoint-sync", timed_by="real_time"),
     "/iterations:30/real_time"),
    (dict(family="EndToEnd", pipeline=P, baseline="cuda:mlp", workers=2,
          callbacks="log-async+checkpoint-async", timed_by="real_time"), "/real_time"),
    (dict(family="EndToEnd", pipeline=P, variant="presized", variant_param="256",
          baseline="cuda:cnn", workers=16, timed_by="real_time"), "/min_time:2s/real_time"),
    (dict(family="EndToEnd", pipeline=P, variant="without", variant_param="random_erasing#2",
          baseline="cuda", workers=3), ""),
    (dict(family="Region", op="data_wait"), ""),
    (dict(family="Region", op="step/forward"), ""),
]


class AdapterTest(unittest.TestCase):
    """record.legacy_case_key / case_key on rows of a file written before the record."""

    @classmethod
    def setUpClass(cls):
        cls.bj = import_scripts()[0]

    def test_every_form_of_the_old_grammar(self):
        for fields, suffix in FORMS:
            expected = case_key(**fields)
            written = expected["name"] + suffix
            with self.subTest(name=written):
                row = {"name": written, "run_name": written, "run_type": "iteration"}
                self.assertEqual(self.bj.case_key(row), expected)
                self.assertEqual(self.bj.legacy_case_key(row), expected)

    def test_the_brief_examples_field_by_field(self):
        key = self.bj.case_key({"name": "BM_EndToEnd/x/cuda:cnn/workers:4/iterations:30/real_time"})
        self.assertEqual((key["name"], key["family"], key["pipeline"], key["baseline"],
                          key["variant"], key["workers"], key["callbacks"], key["timed_by"]),
                         ("BM_EndToEnd/x/cuda:cnn/workers:4", "EndToEnd", "x", "cuda:cnn", "",
                          4, "", "real_time"))
        key = self.bj.case_key({"name": "BM_EndToEnd/x/decode:auto/emulated/workers:2/"
                                        "callbacks:checkpoint-sync/iterations:30/real_time"})
        self.assertEqual((key["pipeline"], key["variant"], key["variant_param"], key["baseline"],
                          key["workers"], key["callbacks"]),
                         ("x", "decode", "auto", "emulated", 2, "checkpoint-sync"))
        key = self.bj.case_key({"name": "BM_Loader/p/shards-64/cold/workers:8/real_time"})
        self.assertEqual((key["layout"], key["shards"], key["cache"], key["workers"]),
                         ("shards", 64, "cold", 8))

    def test_run_name_and_aggregate_rows(self):
        name = "BM_Loader/p/workers:2/real_time"
        agg = {"name": name + "_mean", "run_name": name, "run_type": "aggregate",
               "aggregate_name": "mean"}
        self.assertEqual(self.bj.case_key(agg)["name"], "BM_Loader/p/workers:2")
        # Google Benchmark before 1.5 wrote no run_name: the aggregate's suffix goes too.
        old = {"name": name + "_median", "run_type": "aggregate", "aggregate_name": "median"}
        self.assertEqual(self.bj.case_key(old), self.bj.case_key({"name": name}))
        self.assertEqual(self.bj.case_key(old)["workers"], 2)

    def test_names_outside_the_grammar(self):
        for written, name, timed in (("BM_X", "BM_X", "cpu_time"),
                                     ("BM_Wall/real_time", "BM_Wall", "real_time"),
                                     ("BM_Cpu/iterations:5", "BM_Cpu", "cpu_time"),
                                     ("BM_Loader/p/workers:abc/real_time",
                                      "BM_Loader/p/workers:abc", "real_time"),
                                     ("BM_Loader/p/workers:٣", "BM_Loader/p/workers:٣",
                                      "cpu_time"),
                                     ("BM_Loader/p/files/workers:2", "BM_Loader/p/files/workers:2",
                                      "cpu_time"),
                                     ("BM_EndToEnd/p/workers:2", "BM_EndToEnd/p/workers:2",
                                      "cpu_time"),
                                     ("BM_EndToEnd/p/a/b/c/workers:2",
                                      "BM_EndToEnd/p/a/b/c/workers:2", "cpu_time"),
                                     ("BM_Read/tape/warm", "BM_Read/tape/warm", "cpu_time"),
                                     ("BM_Sample/p/nokind", "BM_Sample/p/nokind", "cpu_time"),
                                     ("BM_Unknown/a/b", "BM_Unknown/a/b", "cpu_time"),
                                     ("BM_Region/x", "BM_Region/x", "cpu_time"),
                                     ("real_time", "real_time", "cpu_time"),
                                     ("", "", "cpu_time")):
            with self.subTest(name=written):
                key = self.bj.case_key({"name": written})
                self.assertEqual(key, {**self.bj.KEY_DEFAULTS, "name": name, "timed_by": timed})

    def test_a_row_with_a_key_is_read_as_it_is(self):
        key = case_key("EndToEnd", pipeline="x", baseline="cuda:cnn", workers=4,
                       timed_by="real_time")
        # The name says something else: the key wins, the name is not read.
        row = {"name": "BM_Whatever/real_time", "run_name": "BM_Whatever/real_time", "key": key}
        self.assertEqual(self.bj.case_key(row), key)
        cpu = dict(key, timed_by="cpu_time")
        self.assertEqual(self.bj.case_key({"name": "BM_EndToEnd/x/cuda:cnn/workers:4/real_time",
                                           "key": cpu})["timed_by"], "cpu_time")
        # Fields the key leaves out get their defaults.
        partial = {"name": "BM_Sample/p", "family": "Sample", "pipeline": "p"}
        self.assertEqual(self.bj.case_key({"name": "BM_Sample/p/real_time", "key": partial}),
                         {**self.bj.KEY_DEFAULTS, **partial})

    def test_timed_by_and_the_gated_field(self):
        cg = import_scripts()[1]
        for timed, field in (("real_time", "real_time"), ("manual_time", "real_time"),
                             ("cpu_time", "cpu_time"), ("", "cpu_time"), (None, "cpu_time")):
            key = dict(self.bj.KEY_DEFAULTS, timed_by=timed)
            self.assertEqual(self.bj.timed_field(key), field, timed)
            self.assertEqual(cg.gated_field(key, "auto"), field, timed)
            self.assertEqual(cg.gated_field(key, "real"), "real_time")
            self.assertEqual(cg.gated_field(key, "cpu"), "cpu_time")
        self.assertEqual(self.bj.timed_by("manual_time"), "manual_time")
        self.assertEqual(cg.gated_field("real_time", "auto"), "real_time")

    def test_load_run_refuses_a_malformed_key(self):
        good = make_run([Case("BM_X")], reps=1)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.json")
            for key, needle in (("BM_X", "\"key\" must be an object"),
                                ({"family": "Loader", "workers": "4"},
                                 "key.workers must be an integer >= 0"),
                                ({"family": "Loader", "workers": -1},
                                 "key.workers must be an integer >= 0"),
                                ({"family": "Loader", "shards": True},
                                 "key.shards must be an integer >= 0"),
                                ({"family": 3}, "key.family must be a string")):
                doc = json.loads(json.dumps(good))
                doc["benchmarks"][0]["key"] = key
                with open(path, "w") as f:
                    json.dump(doc, f)
                with self.assertRaises(self.bj.BadInput) as cm:
                    self.bj.load_run(path)
                self.assertIn(needle, str(cm.exception))
                self.assertIn("run.json: benchmarks[0] (BM_X)", str(cm.exception))


class ContextTest(unittest.TestCase):
    """context_number / context_bool / record_version: the record's JSON numbers and
    booleans, and an older file's strings parsed strictly."""

    @classmethod
    def setUpClass(cls):
        cls.bj = import_scripts()[0]

    def test_numbers(self):
        n = self.bj.context_number
        for value, expected in ((64, 64.0), (25.5, 25.5), (0, 0.0), (-3, -3.0),
                                ("64", 64.0), ("25.5", 25.5), ("0.5", 0.5), ("1e3", 1000.0),
                                ("-2", -2.0)):
            self.assertEqual(n({"k": value}, "k"), expected, value)
            self.assertIsInstance(n({"k": value}, "k"), float)
        for value in ("25abc", "abc", "", " 25", "25 ", "1_000", "nan", "inf", "-inf",
                      "0x10", True, False, None, [64], {"v": 1}, float("nan"), float("inf")):
            self.assertIsNone(n({"k": value}, "k"), repr(value))
        self.assertIsNone(n({}, "k"))
        self.assertIsNone(n(None, "k"))

    def test_bools(self):
        b = self.bj.context_bool
        for value, expected in ((True, True), (False, False), ("true", True), ("false", False)):
            self.assertIs(b({"k": value}, "k"), expected)
        for value in ("True", "FALSE", " true", "yes", "1", "0", 1, 0, None, ""):
            self.assertIsNone(b({"k": value}, "k"), repr(value))
        self.assertIsNone(b({}, "k"))
        busy = self.bj.busy_flag
        self.assertIs(busy({"busy_machine": True}), True)
        self.assertIs(busy({"busy_machine": "false"}), False)
        self.assertIsNone(busy({"busy_machine": "maybe"}))
        self.assertIsNone(busy({}))

    def test_record_version(self):
        v = self.bj.record_version
        self.assertEqual(v({"benchmarks": []}), 0)
        self.assertEqual(v({"context": {}, "benchmarks": []}), 0)
        self.assertEqual(v({"context": {"pipebench_record": 1}}), 1)
        self.assertEqual(v({"context": {"pipebench_record": 1.0}}), 1)
        for bad in ("1", True, -1, 1.5, None, [1]):
            self.assertEqual(v({"context": {"pipebench_record": bad}}), 0, repr(bad))
        self.assertEqual(v(make_run([Case("BM_X")], reps=1)), 1)
        self.assertEqual(v(make_run([Case("BM_X")], reps=1, record=0)), 0)

    def test_numbers_compare_across_record_versions(self):
        mismatches = self.bj.context_mismatches
        self.assertEqual(mismatches({"batch_size": 64, "crop_size": 224},
                                    {"batch_size": "64", "crop_size": "224"}), ([], []))
        differ, _ = mismatches({"batch_size": 64}, {"batch_size": "32"})
        self.assertEqual(differ, [("batch_size", "64", "32")])
        # A fingerprint is text, even when it looks like a number.
        differ, _ = mismatches({"dataset_fingerprint": "0123"}, {"dataset_fingerprint": "123"})
        self.assertEqual([k for k, _, _ in differ], ["dataset_fingerprint"])


class AlignNamesTest(unittest.TestCase):
    """A budgeted case's iterations differ between runs (bench/run/case_budget.h), and Google
    Benchmark writes them into the name: the same key under two names is one case."""

    def test_the_new_run_takes_the_base_names_of_its_keys(self):
        record = import_scripts()[0]
        key = {"name": "BM_EndToEnd/x/emulated/workers:1", "family": "EndToEnd"}
        base = {"benchmarks": [
            {"name": "BM_EndToEnd/x/emulated/workers:1/iterations:4/real_time",
             "run_name": "BM_EndToEnd/x/emulated/workers:1/iterations:4/real_time", "key": key},
            {"name": "BM_Old", "run_name": "BM_Old"}]}
        new = {"benchmarks": [
            {"name": "BM_EndToEnd/x/emulated/workers:1/iterations:6/real_time",
             "run_name": "BM_EndToEnd/x/emulated/workers:1/iterations:6/real_time", "key": key},
            {"name": "BM_EndToEnd/x/emulated/workers:1/iterations:6/real_time_mean",
             "run_name": "BM_EndToEnd/x/emulated/workers:1/iterations:6/real_time",
             "run_type": "aggregate", "aggregate_name": "mean", "key": key},
            {"name": "BM_New", "run_name": "BM_New", "key": {"name": "BM_New"}},
            {"name": "BM_Old", "run_name": "BM_Old"}]}
        record.align_names(base, new)
        names = [r["name"] for r in new["benchmarks"]]
        self.assertEqual(names, ["BM_EndToEnd/x/emulated/workers:1/iterations:4/real_time",
                                 "BM_EndToEnd/x/emulated/workers:1/iterations:4/real_time_mean",
                                 "BM_New", "BM_Old"])
        self.assertEqual(new["benchmarks"][1]["run_name"],
                         "BM_EndToEnd/x/emulated/workers:1/iterations:4/real_time")


class CudaCnnRunTest(unittest.TestCase):
    """A run of the cuda:cnn baseline: plot.py finds its sweep and the gate its cases, in a
    file with the record and in one written before it."""

    @classmethod
    def setUpClass(cls):
        cls.bj, cls.cg, cls.plot = import_scripts()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, name, doc):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def runs(self):
        """(record version, cases, context) of the same cuda:cnn run, with the record and
        before it (names carrying /iterations:30/real_time, as pipebench wrote them)."""
        cases, ctx = pipeline_cases(baseline="cuda:cnn", recipe="x", workers=(1, 2, 4))
        old = [Case(c.key["name"] + "/iterations:30/real_time", real_ms=c.real_ms,
                    counters=c.counters) for c in cases]
        return [(1, cases, ctx), (0, cases, ctx), (0, old, ctx)]

    def test_plot_finds_the_sweep(self):
        for record, cases, ctx in self.runs():
            with self.subTest(record=record, name=cases[-1].name):
                ex = self.plot.extract(make_run(cases, reps=3, context=ctx, record=record))
                self.assertEqual(list(ex["sweeps"]), [("x", "cuda:cnn")])
                rows = ex["sweeps"][("x", "cuda:cnn")]
                self.assertEqual([r["workers"] for r in rows], [1, 2, 4])
                self.assertTrue(all(r["measured_ips"] and r["bound_ips"] and r["au_pct"]
                                    for r in rows))
                self.assertEqual([r["workers"] for r in ex["loader"]["x"]], [1, 2, 4])
                self.assertAlmostEqual(ex["compute_ips"], 64 * 1000.0 / 25.0)
                self.assertIsNotNone(ex["sample_stages"])
        record, cases, ctx = self.runs()[2]
        run = self.write("run.json", make_run(cases, reps=1, context=ctx, record=record))
        out = os.path.join(self.tmp.name, "run.png")
        p = subprocess.run(["/usr/bin/python3", os.path.join(SCRIPTS, "plot.py"), run, out],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("no BM_Loader or BM_EndToEnd", p.stderr)

    def compare(self, base, new, *extra):
        p = subprocess.run([os.path.join(SCRIPTS, "compare.sh"), base, new, *extra],
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout + p.stderr

    def test_the_gate_finds_the_sweep_cases(self):
        for record, cases, ctx in self.runs():
            with self.subTest(record=record, name=cases[-1].name):
                base = make_run(cases, reps=9, seed=1, context=ctx, record=record)
                new = make_run(cases, reps=9, seed=2, context=ctx, record=record)
                for row in new["benchmarks"]:  # the end-to-end loop 1.5x slower in wall time
                    if row["run_name"].startswith("BM_EndToEnd/"):
                        row["real_time"] *= 1.5
                a, b = self.write("a.json", base), self.write("b.json", new)
                rc, out = self.compare(a, b, "--time", "auto")
                self.assertEqual(rc, 1, out)
                regressed = sorted(line.split(": ")[0] for line in out.splitlines()
                                   if line.startswith("REGRESSION "))
                self.assertEqual(regressed, sorted(f"REGRESSION {c.name}" for c in cases
                                                   if c.name.startswith("BM_EndToEnd/")), out)
                self.assertIn(f"REGRESSION {cases[-1].name}: real_time", out)

    def test_the_gate_reads_timed_by_from_the_key(self):
        # Names without Google Benchmark's /real_time, keys saying real_time: --time auto
        # gates on real_time (a name split would have said cpu_time and passed).
        cases, ctx = pipeline_cases(baseline="cuda:cnn", recipe="x", workers=(1, 2))
        plain = [Case(c.key["name"], key=c.key, real_ms=c.real_ms, counters=c.counters)
                 for c in cases]
        base = make_run(plain, reps=9, seed=1, context=ctx)
        new = make_run(plain, reps=9, seed=2, context=ctx)
        for row in new["benchmarks"]:
            row["real_time"] *= 1.5  # wall time only; cpu_time unchanged
        rc, out = self.compare(self.write("a.json", base), self.write("b.json", new),
                               "--time", "auto")
        self.assertEqual(rc, 1, out)
        self.assertIn("REGRESSION BM_EndToEnd/x/cuda:cnn/workers:2: real_time", out)
        # And the other way: a key timed by CPU time, its name ending in /real_time.
        cpu = [Case(c.name, key=dict(c.key, timed_by="cpu_time"), real_ms=c.real_ms,
                    counters=c.counters) for c in cases]
        base = make_run(cpu, reps=9, seed=1, context=ctx)
        new = make_run(cpu, reps=9, seed=2, context=ctx)
        for row in new["benchmarks"]:
            row["real_time"] *= 1.5
        rc, out = self.compare(self.write("a.json", base), self.write("b.json", new),
                               "--time", "auto")
        self.assertEqual(rc, 0, out)
        self.assertIn("compare: PASS", out)


# --- the package's imports -------------------------------------------------------------------

# Outside the package, the only imports its modules may have besides the standard library.
ALLOWED_OUTSIDE = ("scipy", "numpy", "gbench")


def package_imports(folder, package):
    """{module: [(what it imports, line)]} for every .py file of the package in `folder`,
    from its source: every import statement, those inside functions included. An import of
    one of the package's own modules reads "." + its name (`from . import x` and
    `import pbgate.x`: ".x" when x.py is there, else "." for the package's __init__;
    `from .y import z`: ".y"); an import from above the package keeps its dots ("..")."""
    here = {f[:-3] for f in os.listdir(folder) if f.endswith(".py")}

    def own(names):
        return ["." + n if n in here else "." for n in names]

    out = {}
    for name in sorted(here):
        path = os.path.join(folder, name + ".py")
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        found = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    parts = a.name.split(".")
                    what = own(parts[1:2])[0] if parts[0] == package and len(parts) > 1 \
                        else "." if a.name == package else a.name
                    found.append((what, node.lineno))
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level > 1:
                    found.append(("." * node.level + module, node.lineno))
                    continue
                if node.level == 0 and module.split(".")[0] != package:
                    found.append((module, node.lineno))
                    continue
                inner = module.split(".")[1:] if node.level == 0 else \
                    (module.split(".") if module else [])
                whats = own(inner[:1]) if inner else own(a.name for a in node.names)
                found += [(w, node.lineno) for w in whats]
        out[name] = found
    return out


def import_problems(folder, package):
    """(the imports of a module outside the package that are neither the standard library
    nor ALLOWED_OUTSIDE: ["x.py:LINE imports NAME"], the import cycles among its modules:
    [[a, b, ..., a]])."""
    outside, graph = [], {}
    for name, found in package_imports(folder, package).items():
        graph[name] = []
        for what, line in found:
            if what.startswith(".."):
                outside.append(f"{name}.py:{line} imports {what}")
            elif what.startswith("."):
                target = what[1:] or "__init__"
                if target not in graph[name]:
                    graph[name].append(target)
            elif not (what.split(".")[0] in sys.stdlib_module_names
                      or what.split(".")[0] in ALLOWED_OUTSIDE):
                outside.append(f"{name}.py:{line} imports {what}")
    cycles, state = [], {}  # state: 1 on the path being walked, 2 done

    def walk(node, path):
        state[node] = 1
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                walk(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node, [node])
    return outside, cycles


class PackageImportsTest(unittest.TestCase):
    """scripts/pbgate: nothing imported from outside it but the standard library, scipy,
    numpy and gbench; no import cycle among its modules."""

    def test_the_package_imports_only_itself_and_the_allowed(self):
        folder = os.path.join(SCRIPTS, "pbgate")
        imports = package_imports(folder, "pbgate")
        # The modules the gates and the scripts import from it (so that an empty or moved
        # folder does not pass).
        for name in ("__init__", "record", "compare", "ab", "instr", "blocks", "paired",
                     "plan", "both"):
            self.assertIn(name, imports)
        self.assertIn(".record", [w for w, _ in imports["blocks"]])
        outside, cycles = import_problems(folder, "pbgate")
        self.assertEqual(outside, [], "pbgate imports from outside the package")
        self.assertEqual(cycles, [], "import cycle in pbgate")

    def test_the_check_sees_an_outside_import_and_a_cycle(self):
        # A package of four modules: a -> b -> c -> a is a cycle; c imports the old reader
        # beside the package (bench_json) and, in a function, plot.py; d imports only the
        # standard library, scipy, numpy, gbench and the package itself by its name.
        sources = {
            "__init__": '"""fake."""\n',
            "a": "import json\nfrom . import b\n",
            "b": "from .c import x\n",
            "c": "import os\nimport bench_json\nx = 1\n\n\ndef f():\n    import plot\n"
                 "    from .a import json\n",
            "d": "import numpy\nfrom scipy.stats import t\nfrom gbench import report\n"
                 "import fake.a\nfrom fake import b\nfrom .. import up\n",
        }
        with tempfile.TemporaryDirectory() as tmp:
            for name, text in sources.items():
                with open(os.path.join(tmp, name + ".py"), "w") as f:
                    f.write(text)
            imports = package_imports(tmp, "fake")
            self.assertEqual(imports["d"], [("numpy", 1), ("scipy.stats", 2), ("gbench", 3),
                                            (".a", 4), (".b", 5), ("..", 6)])
            outside, cycles = import_problems(tmp, "fake")
        self.assertEqual(outside, ["c.py:2 imports bench_json", "c.py:7 imports plot",
                                   "d.py:6 imports .."])
        self.assertEqual(cycles, [["a", "b", "c", "a"]])


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        SCRIPTS = sys.argv.pop(1)
    sys.exit(run_tests(sys.argv[1:]))
