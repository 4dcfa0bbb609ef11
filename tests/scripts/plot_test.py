#!/usr/bin/python3
"""plot_test.py - scripts/plot.py on generated pipebench-shaped runs.

Why it exists: the figure is read by people, so the numbers behind it must be the ones
the JSON contract defines (bench/README.md). extract() is checked against values computed
here from the generated rows; the command line is checked for a real PNG, for runs that
lack the end-to-end cases, and for the exit status 2 with one stderr line on bad input.
Every test runs twice: on runs with the record (a "key" on every row, record version 1) and,
as the classes named ...Record0, on runs written before it (the legacy adapter).

  /usr/bin/python3 plot_test.py SCRIPTS_DIR
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import unittest

from ctest_unittest import run_tests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_bench_json import Case, case_key, make_run, pipeline_cases, record0  # noqa: E402

SCRIPTS = os.path.join(HERE, "..", "..", "scripts")


def rows_of(doc, name, run_type="iteration"):
    return [r for r in doc["benchmarks"] if r["run_name"] == name and r["run_type"] == run_type]


class ExtractTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, SCRIPTS)
        import plot
        cls.plot = plot

    def test_sweep_numbers_follow_the_contract(self):
        cases, ctx = pipeline_cases(workers=(1, 2, 4, 8), counter_noise_cv=0.05)
        doc = make_run(cases, reps=5, seed=3, context=ctx)
        ex = self.plot.extract(doc)
        (key, rows), = ex["sweeps"].items()
        self.assertEqual(key, ("imagenet_train", "emulated"))
        self.assertEqual([r["workers"] for r in rows], [1, 2, 4, 8])
        for r in rows:
            name = f"BM_EndToEnd/imagenet_train/emulated/workers:{r['workers']}/real_time"
            mean, = [x for x in rows_of(doc, name, "aggregate")
                     if x["aggregate_name"] == "mean"]
            self.assertAlmostEqual(r["measured_ips"], mean["items_per_second"])
            self.assertAlmostEqual(r["bound_ips"], 64 * 1000.0 / mean["bound_ms"])
            self.assertAlmostEqual(r["au_pct"], mean["au_pct"])
        e2e_compute = [x["compute_ms"] for x in doc["benchmarks"]
                       if x["name"].startswith("BM_EndToEnd") and x["name"].endswith("_mean")]
        self.assertAlmostEqual(ex["compute_ips"], 64 * 1000.0 / statistics.fmean(e2e_compute))
        self.assertEqual([r["workers"] for r in ex["loader"]["imagenet_train"]], [1, 2, 4, 8])

    def test_the_sample_panel_is_the_pipelines_own_sample_not_a_candidate(self):
        # A what-if candidate written after the pipeline's own case (presized:256 costs half)
        # must not take its place in the per-stage panel.
        cases, ctx = pipeline_cases(workers=(1, 2))
        own = next(c for c in cases if c.name.startswith("BM_Sample/imagenet_train/"))
        cases.append(Case("BM_Sample/imagenet_train/presized:256", real_ms=0.1,
                          counters={"read_ms": 0.01, "decode_ms": 0.05, "transform_ms": 0.02}))
        ex = self.plot.extract(make_run(cases, reps=1, seed=3, context=ctx))
        _, stages = ex["sample_stages"]
        self.assertAlmostEqual(stages["decode_ms"], own.counters["decode_ms"])

    def test_throughput_axis_is_log_when_values_are_far_apart(self):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        cases, ctx = pipeline_cases(workers=(1, 2, 4, 8))
        ex = self.plot.extract(make_run(cases, reps=1, context=ctx))
        for rows in ex["sweeps"].values():  # everything within 10x: linear from 0
            for r in rows:
                r["measured_ips"], r["bound_ips"] = 900.0, 1000.0
        for rows in ex["loader"].values():
            for r in rows:
                r["ips"] = 1200.0
        ex["compute_ips"] = 1100.0
        fig, ax = plt.subplots()
        self.plot._plot_sweep(ax, ex)
        self.assertEqual(ax.get_yscale(), "linear")
        for rows in ex["loader"].values():  # 31 against 2530 images/s: log
            rows[0]["ips"] = 31.0
            rows[-1]["ips"] = 2530.0
        fig, ax = plt.subplots()
        self.plot._plot_sweep(ax, ex)
        self.assertEqual(ax.get_yscale(), "log")
        self.assertIn("log scale", ax.get_ylabel())

    def test_iteration_means_without_aggregates(self):
        cases, ctx = pipeline_cases(workers=(2, 1), counter_noise_cv=0.05)
        doc = make_run(cases, reps=4, seed=5, context=ctx, aggregates=False)
        ex = self.plot.extract(doc)
        loader1 = rows_of(doc, "BM_Loader/imagenet_train/workers:1/real_time")
        self.assertEqual(len(loader1), 4)
        self.assertAlmostEqual(ex["loader"]["imagenet_train"][0]["ips"],
                               statistics.fmean(r["items_per_second"] for r in loader1))
        label, stages = ex["loader_stages"]
        self.assertIn("workers:1", label)  # the smallest worker count, whatever the order
        self.assertEqual(list(stages), ["read_ms", "decode_ms", "transform_ms", "collate_ms",
                                        "h2d_ms"])
        self.assertAlmostEqual(stages["decode_ms"],
                               statistics.fmean(r["decode_ms"] for r in loader1))
        sample = rows_of(doc, "BM_Sample/imagenet_train/real_time")
        label, stages = ex["sample_stages"]
        self.assertEqual(set(stages), {"read_ms", "decode_ms", "transform_ms"})
        self.assertAlmostEqual(stages["transform_ms"],
                               statistics.fmean(r["transform_ms"] for r in sample))

    def test_aggregate_mean_is_preferred(self):
        cases, ctx = pipeline_cases(workers=(1,))
        doc = make_run(cases, reps=3, context=ctx)
        for r in doc["benchmarks"]:
            if r["name"] == "BM_Loader/imagenet_train/workers:1/real_time_mean":
                r["items_per_second"] = 12345.0
        ex = self.plot.extract(doc)
        self.assertEqual(ex["loader"]["imagenet_train"][0]["ips"], 12345.0)

    def test_errored_and_missing_cases(self):
        cases, ctx = pipeline_cases(workers=(1, 2), end_to_end=False, sample=False)
        cases.append(Case("BM_EndToEnd/imagenet_train/cuda/workers:1/real_time",
                          error="no CUDA device"))
        # No compute counters anywhere but the context: the capacity line still exists.
        cases = [c for c in cases if not c.name.startswith("BM_TrainStep")]
        ctx["compute_ms"] = "32"
        ex = self.plot.extract(make_run(cases, reps=1, context=ctx))
        self.assertEqual(ex["sweeps"], {})
        self.assertEqual(ex["errored"], ["BM_EndToEnd/imagenet_train/cuda/workers:1/real_time"])
        self.assertAlmostEqual(ex["compute_ips"], 64 * 1000.0 / 32)
        self.assertIsNone(ex["sample_stages"])

    def test_the_sweep_leaves_out_candidates_callbacks_and_the_storage_study(self):
        # Cases of the same pipeline that are not sweep points: a what-if candidate's loop,
        # the training-extras pair, the storage study's loader, a candidate's sample, and
        # a TrainStep of another baseline (its compute_ms is not this run's step).
        cases, ctx = pipeline_cases(workers=(1, 2), counter_noise_cv=0.0)
        e2e = dict(pipeline="imagenet_train", baseline="emulated", timed_by="real_time")
        for key in (case_key("EndToEnd", variant="decode", variant_param="auto", workers=2, **e2e),
                    case_key("EndToEnd", workers=2, callbacks="checkpoint-sync", **e2e),
                    case_key("EndToEnd", workers=8, callbacks="log-async+checkpoint-async",
                             **e2e)):
            cases.append(Case(None, key=key, real_ms=1.0, counters={
                "workers": key["workers"], "items_per_second": 1.0, "compute_ms": 999.0,
                "bound_ms": 1.0, "batch_size": 64}))
        cases.append(Case(None, key=case_key("Loader", pipeline="imagenet_train", layout="shards",
                                             shards=64, cache="cold", workers=16,
                                             timed_by="real_time"),
                          counters={"items_per_second": 1.0, "decode_ms": 99.0}))
        cases.append(Case(None, key=case_key("Loader", pipeline="imagenet_train", layout="files",
                                             cache="warm", workers=1, timed_by="real_time"),
                          counters={"items_per_second": 1.0, "decode_ms": 99.0}))
        cases.append(Case(None, key=case_key("Sample", pipeline="imagenet_train",
                                             variant="without", variant_param="horizontal_flip",
                                             timed_by="real_time"),
                          counters={"decode_ms": 99.0}))
        cases.insert(0, Case(None, key=case_key("TrainStep", baseline="cuda:mlp"),
                             counters={"compute_ms": 999.0}))
        ex = self.plot.extract(make_run(cases, reps=1, context=ctx))
        (key, rows), = ex["sweeps"].items()
        self.assertEqual(key, ("imagenet_train", "emulated"))
        self.assertEqual([r["workers"] for r in rows], [1, 2])
        self.assertTrue(all(r["measured_ips"] > 1.0 for r in rows))
        self.assertEqual([r["workers"] for r in ex["loader"]["imagenet_train"]], [1, 2])
        self.assertLess(ex["loader_stages"][1]["decode_ms"], 99.0)
        self.assertLess(ex["sample_stages"][1]["decode_ms"], 99.0)
        self.assertAlmostEqual(ex["compute_ms"], 25.0)
        # Without the end-to-end cases the step comes from the run's baseline's TrainStep.
        ctx.pop("compute_ms")
        plain = [c for c in cases if c.key is None or c.key["family"] != "EndToEnd"]
        ex = self.plot.extract(make_run(plain, reps=1, context=ctx))
        self.assertAlmostEqual(ex["compute_ms"], 25.0)

    def test_a_debug_build_is_flagged(self):
        cases, ctx = pipeline_cases(workers=(1,))
        for build, flagged in (("DEBUG: timings of this build mean nothing", True),
                               ("debug", True), ("release (optimised, NDEBUG)", False)):
            ex = self.plot.extract(make_run(cases, reps=1,
                                            context={**ctx, "pipebench_build": build}))
            _, sub = self.plot._suptitle(ex, "run.json")
            self.assertEqual("DEBUG BUILD" in sub, flagged, build)


class SystemSeriesTest(unittest.TestCase):
    """The CPU / GPU over time panel's data: the run's "system_series" section, matched to
    the end-to-end sweep cases through Google Benchmark's name suffixes."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, SCRIPTS)
        import plot
        cls.plot = plot

    def doc(self):
        cases, ctx = pipeline_cases(workers=(1, 2))
        doc = make_run(cases, reps=1, context=ctx)
        e2e = "BM_EndToEnd/imagenet_train/emulated/workers:"
        doc["system_series"] = {"rate_hz": 20, "cases": {
            e2e + "1": {"t_s": [0.05, 0.1], "cpu_busy_cores": [1.5, 1.7],
                        "cpu_system_cores": [0.25, 0.5], "cpu_user_cores": [1.25, 1.2],
                        "core_util_pct": [[75.0, 75.0], [85.0, 85.0]],
                        "pipebench_cores": [1.0, 1.2], "gpu_util_pct": [40.0, 60.0]},
            e2e + "2": {"t_s": [0.05, 0.1], "cpu_busy_cores": [2.0], "pipebench_cores": [1.9, 2.0]},
            "BM_Loader/imagenet_train/workers:1": {"t_s": [0.05], "cpu_busy_cores": [1.0],
                                                   "pipebench_cores": [1.0]}}}
        return doc

    def test_series_of_the_sweep_cases_only(self):
        series = self.plot.extract(self.doc())["system_series"]
        # workers:2's lists differ in length (left out); the loader case is not end to end.
        self.assertEqual(list(series), ["BM_EndToEnd/imagenet_train/emulated/workers:1"])
        s = series["BM_EndToEnd/imagenet_train/emulated/workers:1"]
        self.assertEqual(s["pipebench_cores"], [1.0, 1.2])
        self.assertEqual(s["gpu_util_pct"], [40.0, 60.0])
        self.assertEqual(s["cpu_system_cores"], [0.25, 0.5])
        self.assertEqual(s["workers"], 1)  # the key's, for the panel's order and labels

    def test_the_sections_rate(self):
        doc = self.doc()
        self.assertEqual(self.plot.extract(doc)["system_rate_hz"], 20)
        doc["system_series"]["rate_hz"] = 50.0  # --system-sample-hz=50
        self.assertEqual(self.plot.extract(doc)["system_rate_hz"], 50.0)
        doc["system_series"]["rate_hz"] = "fast"
        self.assertIsNone(self.plot.extract(doc)["system_rate_hz"])
        del doc["system_series"]
        self.assertIsNone(self.plot.extract(doc)["system_rate_hz"])

    def test_no_section_no_series(self):
        cases, ctx = pipeline_cases(workers=(1, 2))
        self.assertEqual(self.plot.extract(make_run(cases, reps=1, context=ctx))["system_series"], {})

    def test_the_panel_adds_a_row(self):
        import matplotlib.image
        with tempfile.TemporaryDirectory() as d:
            with_path, without_path = os.path.join(d, "with.png"), os.path.join(d, "without.png")
            doc = self.doc()
            self.plot.render(self.plot.extract(doc), "run.json", with_path)
            del doc["system_series"]
            self.plot.render(self.plot.extract(doc), "run.json", without_path)
            h_with = matplotlib.image.imread(with_path).shape[0]
            h_without = matplotlib.image.imread(without_path).shape[0]
        self.assertGreater(h_with, h_without * 1.4)  # 6.2 + 3.6 inches against 6.2


class PlotCliTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, doc):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(doc if isinstance(doc, str) else json.dumps(doc))
        return path

    def plot(self, *args):
        p = subprocess.run(["/usr/bin/python3", os.path.join(SCRIPTS, "plot.py"), *args],
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def assert_png(self, path):
        with open(path, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        import matplotlib.image
        img = matplotlib.image.imread(path)
        self.assertGreaterEqual(img.shape[1], 1000)  # wide enough to read two panels
        self.assertGreater(img[..., :3].std(), 0.05)  # not a blank canvas

    def test_full_run(self):
        cases, ctx = pipeline_cases(workers=(1, 2, 4, 8))
        run = self.write("run.json", make_run(cases, reps=3, context=ctx))
        out = os.path.join(self.dir, "run.png")
        rc, stdout, err = self.plot(run, out)
        self.assertEqual(rc, 0, err)
        self.assertIn("wrote", stdout)
        self.assert_png(out)

    def test_run_without_end_to_end(self):
        cases, ctx = pipeline_cases(end_to_end=False)
        run = self.write("run.json", make_run(cases, reps=1, context=ctx))
        out = os.path.join(self.dir, "run.png")
        rc, _, err = self.plot(run, out)
        self.assertEqual(rc, 0, err)
        self.assert_png(out)

    def test_run_without_pipeline_cases(self):
        run = self.write("run.json", make_run([Case("BM_Transform/resize/real_time"),
                                               Case("BM_Decode/opencv", real_ms=4.0)]))
        out = os.path.join(self.dir, "run.png")
        rc, _, err = self.plot(run, out)
        self.assertEqual(rc, 0, err)
        self.assertIn("no BM_Loader or BM_EndToEnd", err)
        self.assert_png(out)

    def test_whatif_panel_from_the_report(self):
        import plot  # the rows and the capacity line come from the report's numbers
        report = {"what_if": {"batch_size": 64, "compute_ms_per_batch": 25.0,
                              "evaluated_at_workers": 2,
                              "rows": [{"candidate": "today", "kind": "today", "images_per_second": 1500.0},
                                       {"candidate": "workers", "kind": "workers", "workers": 4,
                                        "images_per_second": 2560.0},
                                       {"candidate": "decode:auto", "kind": "decode",
                                        "images_per_second": 1900.0}]}}
        rows, capacity = plot.whatif_rows(report)
        self.assertEqual([r[0] for r in rows], ["today", "workers (4)", "decode:auto"])
        self.assertEqual([r[1] for r in rows], [1500.0, 2560.0, 1900.0])
        self.assertAlmostEqual(capacity, 64 * 1000.0 / 25.0)
        self.assertEqual(plot.whatif_rows({}), ([], None))
        cases, ctx = pipeline_cases(workers=(1, 2))
        run = self.write("run.json", make_run(cases, reps=1, context=ctx))
        rep = self.write("report.json", report)
        out = os.path.join(self.dir, "run.png")
        rc, _, err = self.plot(run, out, "--report", rep)
        self.assertEqual(rc, 0, err)
        self.assert_png(out)
        import matplotlib.image
        self.assertGreaterEqual(matplotlib.image.imread(out).shape[1], 2000)  # three panels
        self.assert_bad([run, out, "--report", self.write("r.json", "{")], "not a pipebench-report")

    def assert_bad(self, args, needle):
        rc, _, err = self.plot(*args)
        self.assertEqual(rc, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(needle, err)

    def test_bad_input(self):
        out = os.path.join(self.dir, "x.png")
        self.assert_bad([os.path.join(self.dir, "nope.json"), out], "nope.json: no such file")
        self.assert_bad([self.write("bad.json", "{\"benchmarks\": ["), out], "malformed JSON")
        self.assert_bad([self.write("other.json", "{\"a\": 1}"), out],
                        "not a Google Benchmark JSON")
        only_errors = make_run([Case("BM_H2D/pinned/sync/batch:64", error="no CUDA device")])
        self.assert_bad([self.write("err.json", only_errors), out], "no case without an error")
        good = self.write("good.json", make_run([Case("BM_X")]))
        self.assert_bad([good, os.path.join(self.dir, "no", "such", "dir.png")],
                        "does not exist")
        self.assert_bad([good], "usage")
        self.assertFalse(os.path.exists(out))


ExtractTestRecord0 = record0(ExtractTest)
SystemSeriesTestRecord0 = record0(SystemSeriesTest)
PlotCliTestRecord0 = record0(PlotCliTest)


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        SCRIPTS = sys.argv.pop(1)
    sys.exit(run_tests())
