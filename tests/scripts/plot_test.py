#!/usr/bin/python3
"""plot_test.py - scripts/plot.py on generated pipebench-shaped runs.

Why it exists: the figure is read by people, so the numbers behind it must be the ones
the JSON contract defines (bench/README.md). extract() is checked against values computed
here from the generated rows; the command line is checked for a real PNG, for runs that
lack the end-to-end cases, and for the exit status 2 with one stderr line on bad input.
Every test runs twice: on runs with the record (a "key" on every row, record version 1) and,
as the classes named ...Record0, on runs written before it (the legacy adapter). The command
line tests call plot.py in a forked child of this process (forked_script.py: the same main,
exit status and output, without importing matplotlib again for each call), test_full_run
as a command.

  /usr/bin/python3 plot_test.py SCRIPTS_DIR
"""

import json
import os
import statistics
import sys
import tempfile
import unittest

from ctest_unittest import run_tests
from forked_script import Script

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_bench_json import Case, case_key, make_run, pipeline_cases, record0  # noqa: E402

SCRIPTS = os.path.join(HERE, "..", "..", "scripts")


_PLOT = {}


def warm_up(_module):
    """matplotlib, which plot.py imports inside render: imported here once, and one text
    drawn (the font cache loaded)."""
    import io
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(1, 1))
    fig.text(0.5, 0.5, "x")
    fig.savefig(io.BytesIO(), format="png")
    plt.close(fig)


def plot_script():
    if SCRIPTS not in _PLOT:
        _PLOT[SCRIPTS] = Script(os.path.join(SCRIPTS, "plot.py"), warm_up=warm_up)
    return _PLOT[SCRIPTS]


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


def whatif_report(compute_ms, batch=64, workers=2, cores=2.0, overhead=1.4, with_control=True):
    """A pipebench-report --json what-if table shaped as report/format_whatif.cpp writes it
    (checked against a real run's): data_ms_per_batch = overhead * cpu * batch /
    min(workers, cores), step = max(data, compute), the cores for AU 90 % as the report's
    workers_for_target(); paired rows with saving_ci95_ms_per_sample and within_noise."""
    import math

    def row(candidate, kind, cpu, w=workers, **extra):
        data = overhead * cpu * batch / min(w, cores)
        step = max(data, compute_ms)
        r = {"candidate": candidate, "kind": kind, "case": "BM_Sample/imagenet_train",
             "cpu_ms_per_sample": cpu, "workers": w, "data_ms_per_batch": data,
             "step_ms_per_batch": step, "au_pct": 100.0 * compute_ms / step,
             "images_per_second": batch * 1000.0 / step,
             "saving_ms_per_sample": 0.58 - cpu, "saving_pct": 100 * (0.58 - cpu) / 0.58,
             "workers_for_au_target": max(1, math.ceil(
                 0.9 * overhead * cpu * batch / compute_ms - 1e-9))}
        r.update(extra)
        return r

    rows = [row("today", "today", 0.58),
            row("workers", "workers", 0.58, w=3, cores_needed=3, exceeds_cores_available=True,
                measured_in_sweep=False, model_workers=2),
            row("decode:auto", "fix", 0.42, paired_blocks=4, saving_ci95_ms_per_sample=0.04,
                within_noise=False),
            row("presized:256", "fix", 0.27,
                kept_resolution={"shorter_side_px": 256, "jpeg_quality": 90}),
            row("without:horizontal_flip", "operator_cost", 0.579, paired_blocks=4,
                saving_ci95_ms_per_sample=0.005, within_noise=True)]
    rows[-1]["saving_ms_per_sample"] = 0.001  # paired: the measured difference, within +-0.005
    if with_control:
        rows.append(row("control:aa", "control", 0.581, paired_blocks=4,
                        saving_ci95_ms_per_sample=0.006, within_noise=True))
    return {"recipe": "imagenet_train", "what_if": {
        "au_target_pct": 90.0, "batch_size": batch, "compute_ms_per_batch": compute_ms,
        "cores_available": cores, "evaluated_at_workers": workers, "loader_overhead": overhead,
        "loader_overhead_workers": 1, "cpu_cost_source": "BM_Sample/imagenet_train us_per_image",
        "rows": rows}}


class WhatIfPanelTest(unittest.TestCase):
    """The what-if panel: per candidate its data ms per batch against the step's compute ms,
    the cores for AU 90 %, the paired interval per batch, noise and the A/A control; read
    from the matplotlib objects drawn and from the dict _plot_whatif returns."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, SCRIPTS)
        import matplotlib
        matplotlib.use("Agg")
        import plot
        cls.plot = plot

    def draw(self, report):
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(8, 5))
        self.addCleanup(plt.close, fig)
        return ax, self.plot._plot_whatif(ax, report)

    def bars(self, ax):
        from matplotlib.patches import Rectangle
        return [p for p in ax.patches if isinstance(p, Rectangle)]

    def annotation(self, ax, i):
        """The text drawn at bar i's height."""
        texts = [t for t in ax.texts if t.get_position()[1] == i]
        self.assertEqual(len(texts), 1, [t.get_text() for t in ax.texts])
        return texts[0].get_text()

    def check_table(self, report):
        ax, panel = self.draw(report)
        table = report["what_if"]
        labels = [t.get_text() for t in ax.get_yticklabels()]
        self.assertEqual(labels, ["today", "workers (3)", "decode:auto", "presize to 256 px",
                                  "without:horizontal_flip (price)", "A/A control"])
        bars = self.bars(ax)
        self.assertEqual(len(bars), len(table["rows"]))
        for bar, row, r in zip(bars, table["rows"], panel["rows"]):
            self.assertAlmostEqual(bar.get_width(), row["data_ms_per_batch"])
            self.assertEqual(r["cores"], row["workers_for_au_target"])
        # The step: a vertical line at the compute ms per batch.
        step, = [ln for ln in ax.get_lines() if "training step" in str(ln.get_label())]
        self.assertEqual(list(step.get_xdata()), [table["compute_ms_per_batch"]] * 2)
        self.assertEqual(panel["step_ms"], table["compute_ms_per_batch"])
        # Each bar says the cores it needs for AU 90 %.
        for i, row in enumerate(table["rows"]):
            n = row["workers_for_au_target"]
            self.assertIn(f"AU 90 %: {n} core{'s' if n != 1 else ''}", self.annotation(ax, i))
        # The paired rows' error bars: the per-sample interval x batch / workers x k, as
        # the report turns the per-sample cost into data_ms_per_batch.
        err = [(r["label"], r["err_ms"]) for r in panel["rows"] if r["err_ms"] is not None]
        self.assertEqual([e[0] for e in err], ["decode:auto", "without:horizontal_flip (price)",
                                               "A/A control"])
        for (label, ms), ci in zip(err, (0.04, 0.005, 0.006)):
            self.assertAlmostEqual(ms, ci * 64 / 2 * 1.4, msg=label)
        container, = [c for c in ax.containers
                      if type(c).__name__ == "ErrorbarContainer"]
        segments = container.lines[2][0].get_segments()
        self.assertEqual(len(segments), 3)
        for seg, row, (_, ms) in zip(segments, [table["rows"][i] for i in (2, 4, 5)], err):
            (x0, _), (x1, _) = seg
            self.assertAlmostEqual(x0, row["data_ms_per_batch"] - ms)
            self.assertAlmostEqual(x1, row["data_ms_per_batch"] + ms)
        return ax, panel

    def test_data_bound(self):
        report = whatif_report(25.0)
        ax, panel = self.check_table(report)
        self.assertIs(panel["compute_bound"], False)
        rows = report["what_if"]["rows"]
        self.assertGreater(rows[0]["data_ms_per_batch"], 25.0)  # today is past the line
        self.assertEqual(rows[0]["workers_for_au_target"], 2)
        self.assertEqual(rows[3]["workers_for_au_target"], 1)  # presized: one core is enough
        self.assertIn("(> cores)", self.annotation(ax, 1))  # 3 workers on 2 cores
        self.assertTrue(any(t.get_text().startswith("data-bound") for t in ax.texts))
        self.assertGreater(ax.get_xlim()[1], max(r["data_ms_per_batch"] for r in rows))

    def test_compute_bound(self):
        # Every candidate runs at the step's capacity (images/s all equal): the panel still
        # tells them apart by data ms per batch, all left of the step line.
        report = whatif_report(200.0)
        rows = report["what_if"]["rows"]
        self.assertEqual(len({round(r["images_per_second"], 6) for r in rows}), 1)
        ax, panel = self.check_table(report)
        self.assertIs(panel["compute_bound"], True)
        widths = [b.get_width() for b in self.bars(ax)]
        self.assertTrue(all(w < 200.0 for w in widths))
        self.assertGreater(max(widths) / min(widths), 2)
        self.assertGreaterEqual(ax.get_xlim()[1], 200.0)  # the line is in view
        self.assertTrue(any(t.get_text().startswith("compute-bound") for t in ax.texts))

    def test_noise_and_control_rows(self):
        report = whatif_report(25.0)
        ax, panel = self.draw(report)
        bars = self.bars(ax)
        noise = [r["noise"] for r in panel["rows"]]
        self.assertEqual(noise, [False, False, False, False, True, True])
        self.assertEqual([r["control"] for r in panel["rows"]], [False] * 5 + [True])
        for i, bar in enumerate(bars):
            self.assertEqual(bar.get_hatch() == "//", noise[i], panel["rows"][i]["label"])
        self.assertEqual(bars[4].get_facecolor(), bars[5].get_facecolor())  # grey
        self.assertNotEqual(bars[2].get_facecolor(), bars[4].get_facecolor())
        self.assertIn("| noise", self.annotation(ax, 4))
        self.assertNotIn("noise", self.annotation(ax, 2))
        self.assertNotIn("slower", self.annotation(ax, 2))
        rows = report["what_if"]["rows"]
        rows[2]["saving_ms_per_sample"] = -0.02  # paired, outside noise: measured slower
        ax, panel = self.draw(report)
        self.assertIn("| slower", self.annotation(ax, 2))
        self.assertNotIn("slower", self.annotation(ax, 4))  # noise is never "slower"
        self.assertIn("noise (as it must)", self.annotation(ax, 5))
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        self.assertTrue(any(t.startswith("noise") for t in legend), legend)
        # A control that is not noise: the machine is too noisy, said in red with the note.
        rows[-1]["within_noise"] = False
        report["what_if"]["control_note"] = "the A/A control is not noise"
        ax, panel = self.draw(report)
        self.assertTrue(panel["rows"][-1]["control"] and not panel["rows"][-1]["noise"])
        self.assertEqual(self.bars(ax)[-1].get_hatch(), "//")  # the control is no candidate
        text = [t for t in ax.texts if t.get_position()[1] == 5][0]
        self.assertIn("NOT noise", text.get_text())
        self.assertEqual(text.get_color(), "#a00000")
        self.assertIn("the A/A control is not noise", [t.get_text() for t in ax.texts])
        # Paired with no interval (one block): noise, no error bar.
        rows[2].update(paired_blocks=1, saving_ci95_ms_per_sample=None, within_noise=True)
        panel = self.plot.whatif_panel(report)
        self.assertTrue(panel["rows"][2]["noise"])
        self.assertIsNone(panel["rows"][2]["err_ms"])
        # An unpaired row (presized) is never noise; without a control none is drawn.
        panel = self.plot.whatif_panel(whatif_report(25.0, with_control=False))
        self.assertFalse(panel["rows"][3]["noise"])
        self.assertFalse(any(r["control"] for r in panel["rows"]))

    def test_fixes_that_change_pixels_are_marked(self):
        # decode:auto with a fidelity figure (issue 35): outlined, its PSNR median / p5 said;
        # a bit-identical fix says so; a fix without a figure says it was not measured; an
        # operator's price and today are no fixes (nothing said).
        report = whatif_report(25.0)
        rows = report["what_if"]["rows"]
        rows[2]["fidelity"] = {"samples": 64, "identical_pct": 0.0, "identical": False,
                               "psnr_db": {"median": 41.23, "p5": 36.04}}
        rows[2]["below_min_psnr"] = False
        rows[5]["fidelity"] = {"samples": 64, "identical_pct": 100.0, "identical": True}
        ax, panel = self.draw(report)
        self.assertEqual([r["pixels"] for r in panel["rows"]],
                         [None, None, "changed", "unmeasured", None, "identical"])
        self.assertIn("| pixels: PSNR 41.2 / 36 dB", self.annotation(ax, 2))
        self.assertNotIn("min-psnr", self.annotation(ax, 2))
        self.assertIn("| pixels: not measured", self.annotation(ax, 3))
        self.assertNotIn("pixels", self.annotation(ax, 4))
        self.assertNotIn("same pixels", self.annotation(ax, 5))  # the control: must be
        bars = self.bars(ax)
        self.assertEqual(bars[2].get_linewidth(), 2.0)
        self.assertNotEqual(bars[3].get_linewidth(), 2.0)
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        self.assertTrue(any(t.startswith("changes the pixels") for t in legend), legend)
        rows[2]["below_min_psnr"] = True
        rows[3]["fidelity"] = {"samples": 64, "identical_pct": 100.0, "identical": True}
        ax, panel = self.draw(report)
        self.assertIn("< --min-psnr", self.annotation(ax, 2))
        self.assertIn("| same pixels", self.annotation(ax, 3))

    def test_measured_rows_have_no_cores(self):
        report = whatif_report(25.0, with_control=False)
        report["what_if"]["rows"].append({
            "candidate": "shards-64", "kind": "storage", "case": "BM_Loader/x", "workers": 2,
            "cpu_ms_per_sample": None, "data_ms_per_batch": 30.0, "step_ms_per_batch": 30.0,
            "au_pct": 83.0, "images_per_second": 2133.0, "saving_ms_per_sample": None,
            "saving_pct": None, "workers_for_au_target": None, "data_saving_ms_per_batch": 3.0})
        ax, panel = self.draw(report)
        self.assertIsNone(panel["rows"][-1]["cores"])
        self.assertIn("measured", self.annotation(ax, len(panel["rows"]) - 1))
        self.assertAlmostEqual(self.bars(ax)[-1].get_width(), 30.0)

    def test_a_report_without_a_what_if_table(self):
        for report in ({}, {"recipe": "imagenet_train"}, {"what_if": None}, [1, 2]):
            self.assertIsNone(self.plot.whatif_panel(report))
            ax, panel = self.draw(report)
            self.assertIsNone(panel)
            self.assertEqual(self.bars(ax), [])
            self.assertEqual([t.get_text() for t in ax.texts], ["the report has no what-if table"])
        # A table without rows (no per-sample cost): its note is written instead.
        note = "no per-sample CPU cost: the run has neither BM_Sample nor a loader case"
        ax, panel = self.draw({"what_if": {"batch_size": 64, "compute_ms_per_batch": 25.0,
                                           "rows": [], "note": note}})
        self.assertEqual(panel["rows"], [])
        self.assertEqual(self.bars(ax), [])
        self.assertTrue(any(note in t.get_text() for t in ax.texts))
        # No step time: bars without the line, no regime.
        report = whatif_report(25.0)
        del report["what_if"]["compute_ms_per_batch"]
        ax, panel = self.draw(report)
        self.assertIsNone(panel["step_ms"])
        self.assertIsNone(panel["compute_bound"])
        self.assertEqual(len(self.bars(ax)), 6)
        self.assertFalse(any("training step" in str(ln.get_label()) for ln in ax.get_lines()))


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

    def plot(self, *args, real=False):
        return plot_script()(args, real=real)

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
        rc, stdout, err = self.plot(run, out, real=True)  # as a command
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
        cases, ctx = pipeline_cases(workers=(1, 2))
        run = self.write("run.json", make_run(cases, reps=1, context=ctx))
        out = os.path.join(self.dir, "run.png")
        for name, report in (("bound.json", whatif_report(25.0)),
                             ("compute.json", whatif_report(200.0)),
                             ("none.json", {"recipe": "imagenet_train"})):
            rc, _, err = self.plot(run, out, "--report", self.write(name, report))
            self.assertEqual(rc, 0, err)
            self.assert_png(out)
            import matplotlib.image
            self.assertGreaterEqual(matplotlib.image.imread(out).shape[1], 2000)  # 3 panels
            os.remove(out)
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
