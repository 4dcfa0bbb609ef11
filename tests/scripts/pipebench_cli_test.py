#!/usr/bin/python3
"""pipebench and pipebench-report at their command-line boundary.

Bad input must give one clear line naming the cause and exit code 2, never a crash; the
report must compute its verdict from the counters, not echo them. The report is fed
runs built with gen_bench_json so that each figure it prints is known in advance.

usage: pipebench_cli_test.py --pipebench BIN --report BIN --pipebench-data BIN
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from ctest_unittest import run_tests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_bench_json import Case, make_run  # noqa: E402
import check_run_json  # noqa: E402

ARGS = None


def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


class PipebenchFlags(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.data = os.path.join(cls.tmp.name, "data")
        r = run(ARGS.pipebench_data, "synthetic", cls.data, "--count", "4", "--classes", "2",
                "--width", "64", "--height", "48")
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_json(self, name, *flags):
        """pipebench on the class's dataset, short cases, JSON to <tmp>/<name>.json: the
        finished run (exit 0 asserted) and its JSON."""
        out = os.path.join(self.tmp.name, name + ".json")
        r = run(ARGS.pipebench, "--data=" + self.data, *flags, "--benchmark_min_time=0.01",
                "--benchmark_out=" + out, "--benchmark_out_format=json")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            return r, json.load(f), out

    def expect_exit2(self, *flags, mentions):
        r = run(ARGS.pipebench, *flags, "--benchmark_filter=BM_Read/files/warm",
                "--benchmark_min_time=0.01")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(mentions, lines[0])

    def test_cuda_baselines_are_names_the_parser_takes(self):
        # cuda:cnn and cuda:mlp pass the flag check; without a device (or cuDNN) the run is
        # refused with one line saying why, as --baseline=cuda is (exit 2). With a device
        # and cuDNN a one-step BM_TrainStep runs.
        for name in ("cuda:cnn", "cuda:mlp"):
            r = run(ARGS.pipebench, "--data=" + self.data, "--baseline=" + name, "--batch=2",
                    "--size=32", "--benchmark_filter=BM_TrainStep", "--benchmark_min_time=0.01",
                    "--quiet")
            self.assertIn(r.returncode, (0, 2), r.stdout + r.stderr)
            if r.returncode == 2:
                lines = [l for l in r.stderr.splitlines() if l.strip()]
                self.assertEqual(len(lines), 1, r.stderr)
                canonical = "cuda" if name == "cuda:mlp" else name
                self.assertIn("--baseline=" + canonical + " needs", lines[0])
                self.assertNotIn("not in", lines[0])  # not the parser's membership error

    def test_unknown_flag(self):
        self.expect_exit2("--data=" + self.data, "--bogus=1", mentions="--bogus")

    def test_missing_dataset(self):
        missing = os.path.join(self.tmp.name, "nope")
        self.expect_exit2("--data=" + missing, mentions=missing)

    def test_empty_dataset(self):
        empty = os.path.join(self.tmp.name, "empty")
        os.makedirs(os.path.join(empty, "class_a"), exist_ok=True)
        self.expect_exit2("--data=" + empty, mentions=empty)

    def test_dataset_without_a_readable_jpeg(self):
        bad = os.path.join(self.tmp.name, "bad")
        os.makedirs(os.path.join(bad, "c"), exist_ok=True)
        with open(os.path.join(bad, "c", "x.jpg"), "wb") as f:
            f.write(b"\xff\xd8\xff\xe0 this is not really a JPEG")
        self.expect_exit2("--data=" + bad, mentions="no readable image")

    def test_bad_values(self):
        self.expect_exit2("--data=" + self.data, "--batch=0", mentions="--batch")
        self.expect_exit2("--data=" + self.data, "--compute-ms=-3", mentions="--compute-ms")
        self.expect_exit2("--data=" + self.data, "--baseline=tpu", mentions="--baseline")
        self.expect_exit2("--data=" + self.data, "--workers=1,x", mentions="--workers")
        self.expect_exit2("--data=" + self.data, "--workers=0", mentions="--workers")
        self.expect_exit2("--data=" + self.data, "--workers=auto", "--cpu-budget=0",
                          mentions="--cpu-budget")
        self.expect_exit2("--data=" + self.data, "--workers=1,2", "--cpu-budget=2",
                          mentions="--cpu-budget")
        self.expect_exit2("--data=" + self.data, "--system-sample-hz=5000", mentions="--system-sample-hz")
        self.expect_exit2("--data=" + self.data, "--system-sample-hz=-1", mentions="--system-sample-hz")

    def test_workers_auto_stays_within_the_budget_and_records_its_search(self):
        # The search on the real loader: with a budget of 1 core it may try only 1 worker,
        # and the loader and end-to-end cases run at that count alone.
        r, run_json, _ = self.run_json(
            "auto", "--workers=auto", "--cpu-budget=1", "--batch=2", "--steps=2", "--size=32",
            "--presize=off", "--benchmark_filter=BM_(Loader|EndToEnd)/")
        self.assertIn("--workers=auto", r.stderr)
        ctx = run_json["context"]
        self.assertEqual(ctx["workers_auto_budget_cores"], 1)
        self.assertEqual(ctx["workers_auto_chosen"], 1)
        # The AU target the search aimed at, recorded once (model/constants.h), and whether
        # it reached it, under a key that names no figure.
        self.assertEqual(ctx["au_target_pct"], 90)
        self.assertIsInstance(ctx["workers_auto_reached_au_target"], bool)
        self.assertNotIn("workers_auto_reached_au90", ctx)
        self.assertTrue(ctx["workers_auto_search"].startswith("tried 1 ("), ctx["workers_auto_search"])
        names = [b["name"] for b in run_json["benchmarks"]]
        self.assertTrue(names)
        self.assertTrue(all("/workers:1/" in n for n in names), names)

    def test_one_reading_of_the_cores_sets_every_count(self):
        # Pinned to one CPU (taskset -c 0), whatever the machine's hardware threads: the
        # default sweep goes up to twice the cores available (1, 2), --quick's end-to-end
        # sweep is 1 worker alone, --workers=auto's default budget is 1 core, and the run
        # records cores_available 1 (bench reads model::cores_available() once, in main).
        taskset = shutil.which("taskset")
        if taskset is None:
            self.skipTest("no taskset")
        pinned = (taskset, "-c", "0", ARGS.pipebench, "--data=" + self.data)

        def swept(*flags, family):
            r = run(*pinned, "--benchmark_list_tests", *flags)
            self.assertEqual(r.returncode, 0, r.stderr)
            return sorted({int(w) for w in re.findall(
                family + r"/imagenet_train/(?:emulated/)?workers:(\d+)/iterations", r.stdout)})

        self.assertEqual(swept(family="BM_Loader"), [1, 2])
        self.assertEqual(swept("--quick", family="BM_EndToEnd"), [1])
        out = os.path.join(self.tmp.name, "pinned.json")
        r = run(*pinned, "--workers=auto", "--batch=2", "--steps=2", "--size=32", "--presize=off",
                "--benchmark_filter=BM_Read/files/warm", "--benchmark_min_time=0.01",
                "--benchmark_out=" + out, "--benchmark_out_format=json")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            ctx = json.load(f)["context"]
        self.assertEqual(ctx["workers_auto_budget_cores"], 1)
        self.assertEqual(ctx["cores_available"], 1)

    def test_profiler_outputs_of_a_short_run(self):
        # Issue 10: the loop's region timers, the sampler's series and its own cost, the
        # GPU-metrics note; and the report reads the sampler's cost back.
        # A 20 ms step, so each case spans several of /proc/stat's 10 ms ticks (a 6 ms case
        # under ASan had none: no per-core share to report).
        _, doc, out = self.run_json(
            "prof", "--workers=1", "--batch=2", "--steps=8", "--compute-ms=20", "--size=32",
            "--presize=off", "--callback=log:every=1,sync", "--system-sample-hz=50",
            "--benchmark_filter=BM_(EndToEnd/[^/]+/emulated/workers:1|SystemSampler)/")
        rows = {b["run_name"]: b for b in doc["benchmarks"]}
        e2e = next(b for n, b in rows.items() if n.startswith("BM_EndToEnd/") and "callbacks" not in n)
        for key in ("Batch", "IO", "Forward"):
            self.assertIn(f"region:{key}_ms", e2e)
            self.assertIn(f"region:{key}_p99_ms", e2e)
        self.assertNotIn("region:Other_ms", e2e)  # no callbacks in the sweep case
        # The loop's tail (step_p99_ms, model/counters.h): no shorter than the mean step's
        # fastest possible share, and a figure the report's sweep carries.
        self.assertIn("step_p99_ms", e2e)
        self.assertGreater(e2e["step_p99_ms"], 0)
        # Each Batch region encloses that step's IO and Forward regions.
        self.assertGreaterEqual(e2e["region:Batch_ms"], e2e["region:IO_ms"] + e2e["region:Forward_ms"])
        with_cb = next(b for n, b in rows.items() if "/callbacks:" in n)
        self.assertIn("region:Other_ms", with_cb)
        sampler = next(b for n, b in rows.items() if n.startswith("BM_SystemSampler/"))
        for key in ("on_ms", "off_ms", "overhead_pct", "sampler_cores", "sampler_cost_pct"):
            self.assertIn(key, sampler)
        self.assertGreater(sampler["sampler_cores"], 0)
        # The system counters (units in the names), user / system and the busiest core,
        # the two kinds of context switch, and the process's CPU by thread role.
        for key in ("cpu_util_pct_mean", "cpu_user_pct_mean", "cpu_system_pct_mean",
                    "cpu_core_util_pct_max", "voluntary_switches_per_s",
                    "involuntary_switches_per_s", "context_switches_per_s"):
            self.assertIn(key, e2e)
        self.assertLessEqual(e2e["cpu_user_pct_mean"] + e2e["cpu_system_pct_mean"],
                             e2e["cpu_util_pct_mean"] + 1e-6)
        # The busiest core cannot be idler than the mean core, nor busier than 100 %.
        self.assertGreaterEqual(e2e["cpu_core_util_pct_max"], e2e["cpu_util_pct_mean"] - 1e-6)
        self.assertLessEqual(e2e["cpu_core_util_pct_max"], 100 + 1e-6)
        self.assertAlmostEqual(e2e["context_switches_per_s"],
                               e2e["voluntary_switches_per_s"] + e2e["involuntary_switches_per_s"], 6)
        # The workers' CPU (process less consumer and sampler, measure/thread_cpu.h) is
        # positive; the consumer is one thread, so its CPU per batch cannot exceed the
        # window's wall time per batch (2 images a batch here; the CPU window closes one
        # clock read after the wall window: 0.01 ms covers it).
        self.assertGreater(e2e["workers_cpu_ms"], 0)
        wall_per_batch_ms = e2e["wall_us_per_image"] * 2 / 1000
        self.assertLessEqual(e2e["consumer_cpu_ms"], wall_per_batch_ms + 0.01)
        # The flag's rate reaches the sampler, the context and the series.
        self.assertEqual(doc["context"]["system_sample_hz"], 50)
        self.assertEqual(doc["system_series"]["rate_hz"], 50)
        series = doc["system_series"]["cases"]
        name = e2e["run_name"].split("/iterations:")[0]
        self.assertIn(name, series)
        n = len(series[name]["t_s"])
        for key in ("pipebench_cores", "cpu_user_cores", "cpu_system_cores", "core_util_pct"):
            self.assertEqual(len(series[name][key]), n, key)
        self.assertTrue(all(isinstance(c, list) and c for c in series[name]["core_util_pct"]))
        self.assertTrue(doc["context"]["gpu_metrics"])  # "NVML: ..." or why not
        rep = run(ARGS.report, out)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        self.assertIn("System sampler's cost (BM_SystemSampler/", rep.stdout)
        rep_json = json.loads(run(ARGS.report, "--json", out).stdout)
        self.assertEqual(rep_json["sweep"][0]["step_p99_ms"], e2e["step_p99_ms"])
        # Every counter these rows carry (system, regions, callbacks, loader, loop) is a
        # counter schema entry: bench writes none by a name of its own.
        with open(check_run_json.COUNTERS_MD) as f:
            self.assertEqual(check_run_json.schema_problems(doc["benchmarks"], f.read()), [])

    def test_system_sampler_off(self):
        # --system-sample-hz=0: no sampler, so no system counters, no series and no
        # BM_SystemSampler; the CPU by role still comes (clocks, not the sampler), and the
        # report reads the run.
        _, doc, out = self.run_json(
            "nosampler", "--workers=1", "--batch=2", "--steps=4", "--size=32", "--presize=off",
            "--system-sample-hz=0",
            "--benchmark_filter=BM_(Loader/[^/]+/workers:1|EndToEnd/[^/]+/emulated/workers:1|SystemSampler)/")
        self.assertEqual(doc["context"]["system_sample_hz"], 0)
        self.assertNotIn("system_series", doc)
        names = [b["name"] for b in doc["benchmarks"]]
        self.assertTrue(any(n.startswith("BM_Loader/") for n in names), names)
        self.assertFalse(any(n.startswith("BM_SystemSampler/") for n in names), names)
        for b in doc["benchmarks"]:
            self.assertNotIn("cpu_util_pct_mean", b)
            self.assertNotIn("voluntary_switches_per_s", b)
            for key in ("process_cpu_ms", "consumer_cpu_ms", "workers_cpu_ms"):
                self.assertIn(key, b)
        rep = run(ARGS.report, out)
        self.assertEqual(rep.returncode, 0, rep.stderr)

    def test_readme_flag_table_is_the_generated_one(self):
        # One flag table drives parsing, --help and docs/flags.md: that copy must be current.
        r = run(ARGS.pipebench, "--help=markdown")
        self.assertEqual(r.returncode, 0, r.stderr)
        flags_md = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "flags.md")
        with open(flags_md) as f:
            text = f.read()
        begin = text.index("-->\n", text.index("<!-- flags:begin")) + 4
        end = text.index("<!-- flags:end -->")
        self.assertEqual(text[begin:end], r.stdout,
                         "docs/flags.md's flag table is stale: paste `pipebench --help=markdown`")
        rows = [l for l in r.stdout.splitlines() if l.startswith("| `--")]
        helptext = run(ARGS.pipebench, "--help").stdout
        for row in rows:  # every flag of the table is in --help, and parses or is an action
            flag = row.split("`")[1].split("=")[0]
            self.assertIn("  " + flag, helptext)

    def test_counters_doc_is_the_generated_one(self):
        # One counter schema (model/counters.h) drives bench's writers, the report's readers,
        # the console and docs/counters.md's tables: that copy must be current.
        r = run(ARGS.pipebench, "--list-counters")
        self.assertEqual(r.returncode, 0, r.stderr)
        counters_md = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "counters.md")
        with open(counters_md) as f:
            text = f.read()
        begin = text.index("-->\n", text.index("<!-- counters:begin")) + 4
        end = text.index("<!-- counters:end -->")
        self.assertEqual(text[begin:end], r.stdout,
                         "docs/counters.md's counter tables are stale: paste `pipebench --list-counters`")

    def test_no_counter_name_is_spelled_in_bench_or_report(self):
        # bench writes counters only through the schema (bench/run/counter_put.h: put(state,
        # CounterId::kX, v)) and the report reads them only through it (run.value(name,
        # CounterId::kX)): no counter name as a literal at either end.
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        writes = re.compile(r'counters\[|counters\.find\("')
        reads = re.compile(r'\b(value|get|aggregate|field)\([^;)]*"[a-z][a-z0-9_:]*"\)')
        found = []
        for folder, pattern in (("bench", writes), ("report", reads)):
            for d, _, names in sorted(os.walk(os.path.join(root, folder))):  # bench/run, bench/cases
                for name in sorted(names):
                    if not name.endswith((".cpp", ".h")) or name == "counter_put.h":
                        continue
                    path = os.path.join(d, name)
                    with open(path) as f:
                        for n, line in enumerate(f, 1):
                            if pattern.search(line):
                                found.append(f"{os.path.relpath(path, root)}:{n}: {line.strip()}")
        self.assertEqual(found, [], "a counter named outside the schema (model/counters.h)")

    def test_a_dataset_smaller_than_a_batch_is_reported_as_delivered(self):
        # 4 images, batch 16, drop_last false (the default when smaller than a batch): every
        # batch holds 4. The report's images/s is BM_EndToEnd's items_per_second (issue 26:
        # it was computed from the configured 16, and physical-floor warnings followed).
        _, doc, out = self.run_json("short", "--batch=16", "--steps=4", "--workers=1", "--size=32",
                                    "--compute-ms=2", "--presize=off",
                                    "--benchmark_filter=BM_(EndToEnd/[^/]+/emulated/workers:1/|Loader)")
        e2e = next(b for b in doc["benchmarks"] if b["key"]["family"] == "EndToEnd")
        self.assertAlmostEqual(e2e["images_per_batch"], 4.0, places=6)
        rep = run(ARGS.report, "--json", out)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        v = json.loads(rep.stdout)
        self.assertAlmostEqual(v["images_per_batch_delivered"], 4.0, places=6)
        ips = v["sweep"][0]["images_per_second"]
        # The two rest on the same images over slightly different spans of an 8 ms loop (the
        # window's and Google Benchmark's timer: 1.7 % apart once on a busy host); the
        # configured batch would read 4 times too high.
        self.assertLess(abs(ips / e2e["items_per_second"] - 1), 0.05, (ips, e2e["items_per_second"]))
        text = run(ARGS.report, out).stdout
        self.assertIn("Short batches: the loader delivered 4.0 images per batch", text)
        # The physical floor is per delivered batch (x 4), never the configured 16 (on 4 tiny
        # images a floor warning can still come from the prefetched backlog: not asserted).
        self.assertNotIn(" x 16 / ", text)

    def test_a_filter_that_matches_nothing_exits_2_saying_so(self):
        out = os.path.join(self.tmp.name, "none.json")
        r = run(ARGS.pipebench, "--data=" + self.data, "--benchmark_filter=NoSuchCase",
                "--benchmark_out=" + out)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("no case matches --benchmark_filter=NoSuchCase", r.stderr)
        self.assertNotIn("internal error", r.stderr)

    def test_a_good_run_names_the_dataset_in_the_context(self):
        ctx = self.run_json("ok", "--benchmark_filter=BM_Read/files/warm")[1]["context"]
        self.assertEqual(ctx["dataset_images"], 4)
        self.assertEqual(len(ctx["dataset_fingerprint"]), 16)


class Pipelines(unittest.TestCase):
    """--pipeline (a file or inline YAML), --list-ops, --list-recipes at the CLI."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.data = os.path.join(cls.tmp.name, "data")
        r = run(ARGS.pipebench_data, "synthetic", cls.data, "--count", "8", "--classes", "2",
                "--width", "160", "--height", "120")
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_a_spec_file_runs_as_its_own_cases_and_is_recorded(self):
        spec = os.path.join(self.tmp.name, "mine.yaml")
        with open(spec, "w") as f:
            f.write("decode: {mode: auto}\ntransforms:\n  - random_resized_crop: {size: 64}\n"
                    "  - horizontal_flip\n  - normalize\n")
        out = os.path.join(self.tmp.name, "mine.json")
        r = run(ARGS.pipebench, "--data=" + self.data, "--pipeline=" + spec, "--batch=4",
                "--steps=2", "--workers=1", "--benchmark_min_time=0.01",
                "--benchmark_filter=BM_(Sample|Loader)/mine", "--benchmark_out=" + out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            doc = json.load(f)
        names = {b["run_name"].split("/workers")[0] for b in doc["benchmarks"]}
        # The what-if candidates of the run's pipeline come with it, and the A/A control.
        self.assertIn("BM_Sample/mine/without:horizontal_flip", names)
        self.assertIn("BM_Sample/mine/control:aa", names)
        self.assertTrue(any("/presized:" in n for n in names), names)
        names = {n for n in names
                 if not any(c in n for c in ("/without:", "/decode:", "/presized:", "/collate:", "/control:"))}
        self.assertEqual(names, {"BM_Sample/mine", "BM_Loader/mine"})
        # A paired case's rate is the candidate's own (1e6 / its us_per_image), not the A B B A
        # pair's (issue 37: a candidate at 2,441 images/s read as 510.8).
        for row in doc["benchmarks"]:
            if row["key"]["family"] == "Sample" and row["key"]["variant"]:
                self.assertAlmostEqual(row["items_per_second"] * row["us_per_image"] / 1e6, 1.0, places=6,
                                       msg=row["name"])
        ctx = doc["context"]
        self.assertEqual(ctx["recipe"], "mine")
        self.assertIn("decode(roi", ctx["pipeline_plan"])
        # The recorded spec rebuilds the same pipeline inline.
        r2 = run(ARGS.pipebench, "--data=" + self.data, "--pipeline=" + ctx["pipeline_spec"],
                 "--benchmark_filter=BM_Sample/mine", "--benchmark_min_time=0.01")
        self.assertEqual(r2.returncode, 0, r2.stderr)

    def test_the_presize_fix_runs_end_to_end_and_the_report_checks_it(self):
        spec = os.path.join(self.tmp.name, "pre.yaml")
        with open(spec, "w") as f:
            f.write("transforms:\n  - random_resized_crop: {size: 56}\n  - normalize\n")
        out = os.path.join(self.tmp.name, "pre.json")
        r = run(ARGS.pipebench, "--data=" + self.data, "--pipeline=" + spec, "--batch=4",
                # 6 steps: each loader-alone window visits every one of the 8 images three
                # times; the copy's price needs 8 of them timed (model::kMinMatchedImages),
                # and at 3 steps a busy machine's window once missed one (no price).
                "--steps=6", "--workers=1", "--presize=64", "--benchmark_min_time=0.01",
                "--benchmark_filter=BM_Sample/pre(/presized:64)?$|"
                "BM_EndToEnd/pre/(presized:64/)?emulated/workers:1/iterations",
                "--benchmark_out=" + out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            doc = json.load(f)
        e2e = [b for b in doc["benchmarks"]
               if b["run_name"].startswith("BM_EndToEnd/pre/presized:64/emulated/workers:1")]
        self.assertEqual(len(e2e), 1, [b["run_name"] for b in doc["benchmarks"]])
        self.assertNotIn("error_occurred", e2e[0])
        self.assertGreater(e2e[0]["step_ms"], 0)
        # Record version 2: the kept side is a typed field of the key, not only its text.
        self.assertEqual(doc["context"]["pipebench_record"], 2)
        self.assertEqual(e2e[0]["key"]["presize_px"], 64)
        rep = run(ARGS.report, out)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        # Checked against the copy's own price made image by image before it ran (the same
        # number the tails section prints).
        self.assertIn("Check (the presized:64 fix ran for real, end to end at 1 workers; priced before it "
                      "ran from each image's cost, as in the tails above)", rep.stdout)

    def test_a_bad_spec_is_one_line_with_file_line_and_column(self):
        spec = os.path.join(self.tmp.name, "bad.yaml")
        with open(spec, "w") as f:
            f.write("transforms:\n  - center_crop: {size: 64}\n  - normalise\n")
        r = run(ARGS.pipebench, "--data=" + self.data, "--pipeline=" + spec)
        self.assertEqual(r.returncode, 2, r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(spec + ":3:5: unknown operator 'normalise'", lines[0])
        self.assertIn("normalize", lines[0])
        r = run(ARGS.pipebench, "--data=" + self.data, "--pipeline=[center_crop, {normalize: {std: 0}}]")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--pipeline:1:33: normalize: std", r.stderr)

    def test_lists(self):
        r = run(ARGS.pipebench, "--list-ops")
        self.assertEqual(r.returncode, 0, r.stderr)
        for op in ["random_resized_crop", "center_crop", "normalize", "random_mask", "decode"]:
            self.assertIn(op, r.stdout)
        r = run(ARGS.pipebench, "--list-recipes")
        self.assertEqual(r.returncode, 0, r.stderr)
        for name in ["imagenet_train", "imagenet_val", "imagenet_train_roi", "casestudy"]:
            self.assertIn(f"== {name} (transforms/recipes/{name}.yaml)", r.stdout)


# The resolved spec a real `pipebench --recipe=imagenet_train` run records as its context's
# pipeline_spec: the report takes the faster variants it compares from here.
IMAGENET_TRAIN_SPEC = (
    "{name: imagenet_train, decode: {mode: full}, transforms: [{random_resized_crop: "
    "{interpolation: bilinear, ratio: [0.75, 1.3333333333333333], scale: [0.080000000000000002, "
    "1], size: 224}}, {horizontal_flip: {p: 0.5}}, {normalize: {mean: [0.48500001430511475, "
    "0.45600000023841858, 0.40599998831748962], std: [0.22900000214576721, 0.22400000691413879, "
    "0.22499999403953552]}}], collate: {dtype: float32, layout: NCHW}, variants: [{recipe: "
    "imagenet_train_roi, fixes: decode}]}")


def verdict_run(path, points, compute_ms=25.0, batch=64, spec=IMAGENET_TRAIN_SPEC):
    """points: [(workers, data_ms, step_ms)] -> a run with BM_EndToEnd, BM_Loader, BM_Sample.

    spec: the context's pipeline_spec; None writes a run without one (an older file)."""
    cases = []
    for w, data_ms, step_ms in points:
        bound = max(data_ms, compute_ms)
        counters = {"workers": w, "batch_size": batch, "data_ms": data_ms,
                    "compute_ms": compute_ms, "step_ms": step_ms, "bound_ms": bound,
                    "au_pct": min(100.0, 100 * compute_ms / step_ms),
                    "stall_pct": 100 - min(100.0, 100 * compute_ms / step_ms),
                    "prediction_error_pct": 100 * (bound - step_ms) / step_ms,
                    "items_per_second": batch * 1000 / step_ms}
        cases.append(Case(f"BM_EndToEnd/imagenet_train/emulated/workers:{w}/iterations:30/real_time",
                          real_ms=step_ms, counters=counters))
        cases.append(Case(f"BM_Loader/imagenet_train/workers:{w}/iterations:30/real_time",
                          real_ms=data_ms,
                          counters={"workers": w, "data_ms": data_ms,
                                    "items_per_second": batch * 1000 / data_ms,
                                    "read_ms": 0.02, "decode_ms": 0.6, "transform_ms": 0.25,
                                    "collate_ms": 0.0, "h2d_ms": 0.0}))
    cases.append(Case("BM_Sample/imagenet_train", real_ms=1.0,
                      counters={"items_per_second": 1000.0}))
    cases.append(Case("BM_Sample/imagenet_train_roi", real_ms=0.8,
                      counters={"items_per_second": 1250.0}))
    run_doc = make_run(cases, reps=1)  # a run record (gen_bench_json: keys, typed context)
    run_doc["context"].update({"recipe": "imagenet_train", "baseline": "emulated",
                               "batch_size": batch, "hardware_threads": 2,
                               "dataset": "/data/photos-in"})
    if spec is not None:
        run_doc["context"]["pipeline_spec"] = spec
        # bench writes the spec's declared variants as data beside it
        run_doc["pipeline_variants"] = [{"recipe": "imagenet_train_roi", "fixes": "decode"}]
    with open(path, "w") as f:
        json.dump(run_doc, f)


class Report(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "run.json")
        self.addCleanup(self.tmp.cleanup)

    def report(self, *extra):
        return run(ARGS.report, self.path, *extra)

    def test_data_bound_sweep_predicts_workers_and_names_decode(self):
        # 1 ms/sample, batch 64: w=1 64 ms, w=2 32 ms (linear), step 25 ms -> ceil(64/25) = 3.
        verdict_run(self.path, [(1, 64.0, 64.5), (2, 32.0, 32.4)])
        r = self.report("--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        v = json.loads(r.stdout)
        self.assertEqual([p["regime"] for p in v["sweep"]], ["data-bound", "data-bound"])
        self.assertIsNone(v["first_compute_bound_workers"])
        self.assertEqual(v["predicted_workers"], 3)
        self.assertEqual(v["fix_first"], "decode")
        self.assertAlmostEqual(v["best_alternative"]["saving_ms_per_sample"], 0.2, places=6)
        self.assertAlmostEqual(v["sweep"][0]["au_pct"], 100 * 25 / 64.5, places=6)
        text = self.report()
        self.assertIn("Predicted to reach AU 90 % at 3 workers", text.stdout)
        # 3 workers against the context's hardware_threads 2 (no cores_available: the fallback)
        self.assertIn("more workers than the 2.0 cores available", text.stdout)

    def test_compute_bound_point_is_found(self):
        verdict_run(self.path, [(1, 64.0, 64.5), (2, 32.0, 32.4), (4, 16.0, 25.2)])
        v = json.loads(self.report("--json").stdout)
        self.assertEqual(v["first_compute_bound_workers"], 4)
        self.assertIsNone(v["predicted_workers"])
        # Compute-bound at 4 workers: a cheaper stage would not shorten the step.
        self.assertIsNone(v["fix_first"])
        self.assertNotIn("Fix first", self.report().stdout)

    def test_a_run_without_a_spec_reports_without_variants(self):
        verdict_run(self.path, [(1, 64.0, 64.5), (2, 32.0, 32.4)], spec=None)
        r = self.report("--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        v = json.loads(r.stdout)
        self.assertEqual(v["predicted_workers"], 3)
        self.assertEqual(v["fix_first"], "decode")
        self.assertNotIn("best_alternative", v)
        self.assertNotIn("Faster variant", self.report().stdout)

    def test_bad_input_exits_2_with_the_file_name(self):
        for content in ["", "{not json", json.dumps({"benchmarks": 3}),
                        json.dumps({"context": {}, "benchmarks": []})]:
            with open(self.path, "w") as f:
                f.write(content)
            r = self.report()
            self.assertEqual(r.returncode, 2, (content, r.stdout, r.stderr))
            self.assertIn(self.path, r.stderr)
        r = run(ARGS.report, os.path.join(self.tmp.name, "missing.json"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.json", r.stderr)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--pipebench", required=True)
    p.add_argument("--report", required=True)
    p.add_argument("--pipebench-data", required=True)
    ARGS, rest = p.parse_known_args()
    sys.exit(run_tests(rest))
