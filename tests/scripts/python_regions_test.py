#!/usr/bin/python3
"""python/pipebench_regions.py, region timers for a Python training loop: unknown keys are
refused naming them; the JSON's rows hold exactly what a fake clock recorded (count, total,
mean, percentiles as numpy.percentile's default), each with its run-record key, and the file
is strict JSON; regions nest, overlap and close on an exception as the C++ RegionTimer's do;
the default clock is CUDA events only where torch sees a GPU. Then two stand-in training
loops, run as a user runs them (/usr/bin/python3, the module from the repo's python/
folder), get pipebench-report's verdicts: data-bound (IO 3 ms of a 5 ms step) and not
data-bound (IO 0.2 ms of a 40.2 ms step). Everything is written into temporary folders.

usage: python_regions_test.py --report BIN --repo DIR
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the checkout's python/ folder
from ctest_unittest import run_tests  # noqa: E402

ARGS = None
regions = None  # the module, imported from ARGS.repo/python in __main__

# A stand-in training loop: sleeps for the phases, 20 steps, the default clock.
LOOP = r"""
import sys, time
from pipebench_regions import RegionTimer
out, io_ms, fwd_ms, bwd_ms, steps = sys.argv[1], *map(float, sys.argv[2:5]), int(sys.argv[5])
timer = RegionTimer()
with timer.region("Epoch"):
    for _ in range(steps):
        with timer.region("Batch"):
            with timer.region("IO"):
                time.sleep(io_ms / 1000)
            with timer.region("Forward"):
                time.sleep(fwd_ms / 1000)
            with timer.region("Backward"):
                time.sleep(bwd_ms / 1000)
timer.set_context("batch_size", 32)
timer.write_json(out)
"""


class FakeClock:
    """Integer nanoseconds the test sets: now += advance(ms)."""

    def __init__(self):
        self.now = 1_000_000_000

    def __call__(self):
        return self.now

    def advance(self, ms):
        self.now += int(round(ms * 1e6))


def strict_load(path):
    def no_constant(name):
        raise ValueError(f"{path}: {name} is not JSON")

    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    return text, json.loads(text, parse_constant=no_constant)


def report(path, *extra):
    return subprocess.run([ARGS.report, path, *extra], capture_output=True, text=True, timeout=60)


def expected_clock():
    try:
        import torch
    except ImportError:
        return "time.perf_counter_ns"
    return "torch.cuda.Event" if torch.cuda.is_available() else "time.perf_counter_ns"


class Keys(unittest.TestCase):
    def test_unknown_key_is_a_value_error_naming_it_and_the_keys(self):
        t = regions.RegionTimer(clock=FakeClock())
        for call in (lambda: t.region("Forwad"), lambda: t.start("Forwad"),
                     lambda: t.end("Forwad")):
            with self.assertRaises(ValueError) as e:
                call()
            msg = str(e.exception)
            self.assertIn("'Forwad'", msg)
            for k in ("Epoch", "Batch", "Forward", "Backward", "IO", "Comm", "ToDevice", "Other"):
                self.assertIn(k, msg)
        with self.assertRaises(ValueError):
            t.start(3)
        self.assertEqual(t.to_json()["benchmarks"], [])  # nothing was opened

    def test_the_keys_are_the_cpp_ones(self):
        self.assertEqual(regions.KEYS, ("Epoch", "Batch", "Forward", "Backward", "IO", "Comm",
                                        "ToDevice", "Other"))

    def test_end_without_an_open_region_and_a_closed_handle(self):
        t = regions.RegionTimer(clock=FakeClock())
        with self.assertRaisesRegex(RuntimeError, "'IO'"):
            t.end("IO")
        h = t.start("IO")
        t.end(h)
        with self.assertRaisesRegex(RuntimeError, "not an open region"):
            t.end(h)

    def test_bad_context_and_clock(self):
        t = regions.RegionTimer(clock=FakeClock())
        for key in ("library", "region_timer", "pipebench_record"):
            with self.assertRaisesRegex(ValueError, key):
                t.set_context(key, "x")
        with self.assertRaises(ValueError):
            t.set_context("batch_size", float("nan"))
        with self.assertRaises(ValueError):
            t.set_context("batch_size", [64])
        with self.assertRaises(TypeError):
            regions.RegionTimer(clock=42)


class Numbers(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def recorded(self):
        """IO 3, 1, 2 ms; Forward 4 ms twice; Batch around each step; an open Comm."""
        clock = FakeClock()
        t = regions.RegionTimer(clock=clock)
        for io_ms in (3, 1, 2):
            with t.region("Batch"):
                with t.region("IO"):
                    clock.advance(io_ms)
                if io_ms != 1:
                    with t.region("Forward"):
                        clock.advance(4)
                clock.advance(0.5)
        t.start("Comm")  # still open: not counted
        clock.advance(100)
        t.set_context("batch_size", 64)
        return t

    def test_rows_hold_what_was_recorded(self):
        t = self.recorded()
        path = os.path.join(self.tmp.name, "regions.json")
        t.write_json(path)
        text, doc = strict_load(path)
        self.assertTrue(text.endswith("}\n"))
        self.assertEqual(doc["context"], {"batch_size": 64, "library": "pipebench_regions.py",
                                          "region_timer": "FakeClock", "pipebench_record": 1})
        self.assertIs(type(doc["context"]["pipebench_record"]), int)
        rows = {r["name"]: r for r in doc["benchmarks"]}
        # First-start order; Comm never closed, so no row.
        self.assertEqual([r["name"] for r in doc["benchmarks"]],
                         ["RegionTimer/Batch", "RegionTimer/IO", "RegionTimer/Forward"])
        fields = {"name", "key", "run_name", "run_type", "repetitions", "repetition_index",
                  "threads", "iterations", "real_time", "cpu_time", "time_unit", "count",
                  "total_ms", "mean_ms", "p50_ms", "p99_ms"}
        for key, (count, total, values) in {"Batch": (3, 15.5, [7.5, 1.5, 6.5]),
                                            "IO": (3, 6.0, [3.0, 1.0, 2.0]),
                                            "Forward": (2, 8.0, [4.0, 4.0])}.items():
            r = rows["RegionTimer/" + key]
            self.assertEqual(set(r), fields)
            self.assertEqual(r["key"], {"name": "RegionTimer/" + key, "family": "Region",
                                        "pipeline": "", "variant": "", "variant_param": "",
                                        "baseline": "", "layout": "", "cache": "", "shards": 0,
                                        "workers": 0, "callbacks": "", "op": key, "detail": "",
                                        "timed_by": "manual_time"})
            self.assertEqual((r["run_name"], r["run_type"], r["repetitions"],
                              r["repetition_index"], r["threads"], r["time_unit"]),
                             ("RegionTimer/" + key, "iteration", 1, 0, 1, "ms"))
            self.assertEqual(r["count"], count)
            self.assertEqual(r["iterations"], count)
            self.assertIs(type(r["count"]), int)
            self.assertEqual(r["total_ms"], total)
            self.assertEqual(r["mean_ms"], total / count)
            self.assertEqual(r["real_time"], r["mean_ms"])
            self.assertEqual(r["cpu_time"], r["mean_ms"])
            v = sorted(values)
            self.assertAlmostEqual(r["p50_ms"], v[len(v) // 2] if len(v) % 2 else
                                   (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2, places=12)
            # Hyndman-Fan 7: h = (n - 1) 0.99.
            h = (len(v) - 1) * 0.99
            lo = math.floor(h)
            self.assertAlmostEqual(r["p99_ms"], v[lo] + (h - lo) * (v[min(lo + 1, len(v) - 1)]
                                                                     - v[lo]), places=12)

    def test_percentile_is_numpys_default(self):
        try:
            import numpy as np
        except ImportError:
            self.skipTest("no numpy")
        rng = np.random.default_rng(7)
        for n in (1, 2, 3, 10, 101, 1000):
            v = sorted(rng.exponential(3.0, n).tolist())
            for q in (0.0, 0.5, 0.9, 0.99, 1.0):
                self.assertAlmostEqual(regions.percentile(v, q), float(np.percentile(v, 100 * q)),
                                       places=9)
        self.assertEqual(regions.percentile([], 0.5), 0.0)

    def test_nesting_overlap_and_exceptions(self):
        clock = FakeClock()
        t = regions.RegionTimer(clock=clock)
        outer = t.start("Batch")
        clock.advance(1)
        t.start("Batch")
        clock.advance(2)
        t.end("Batch")      # the inner one: 2 ms
        clock.advance(1)
        t.end("Batch")      # the outer one: 4 ms
        self.assertRaises(RuntimeError, t.end, outer)
        a = t.start("IO")
        clock.advance(1)
        b = t.start("IO")   # two IO regions overlapping without nesting
        clock.advance(1)
        t.end(a)            # 2 ms
        clock.advance(5)
        t.end(b)            # 6 ms
        with self.assertRaises(KeyError):
            with t.region("Other"):
                clock.advance(7)
                raise KeyError("the body raised")
        with t.region("Comm"):
            clock.advance(1)
            t.end("Comm")   # closed inside: the scope leaves it as it is
            clock.advance(1)
        s = {x.key: (x.count, x.total_ms) for x in t.stats()}
        self.assertEqual(s, {"Batch": (2, 6.0), "IO": (2, 8.0), "Other": (1, 7.0),
                             "Comm": (1, 1.0)})
        t.clear()
        self.assertEqual(t.stats(), [])

    def test_a_clock_that_goes_backwards_is_an_error(self):
        clock = FakeClock()
        t = regions.RegionTimer(clock=clock)
        with t.region("IO"):
            clock.advance(-1)
        with self.assertRaisesRegex(ValueError, "'IO'"):
            t.write_json(os.path.join(self.tmp.name, "never.json"))
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "never.json")))

    def test_unwritable_path_names_the_file(self):
        t = self.recorded()
        bad = os.path.join(self.tmp.name, "no-such-folder", "regions.json")
        with self.assertRaises(OSError) as e:
            t.write_json(bad)
        self.assertIn("no-such-folder", str(e.exception))

    def test_the_report_reads_the_exact_numbers(self):
        path = os.path.join(self.tmp.name, "fake.json")
        self.recorded().write_json(path)
        r = report(path, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = json.loads(r.stdout)["region_timers"]
        self.assertEqual(out["steps"], 3)
        self.assertEqual(out["step_ms"], 15.5 / 3)
        self.assertEqual(out["data_ms"], 6.0 / 3)
        self.assertEqual(out["compute_ms"], 8.0 / 3)
        self.assertEqual({k["key"]: (k["count"], k["total_ms"]) for k in out["keys"]},
                         {"Batch": (3, 15.5), "IO": (3, 6.0), "Forward": (2, 8.0)})


class Clock(unittest.TestCase):
    def test_the_default_clock(self):
        t = regions.RegionTimer()
        self.assertEqual(t.clock_name, expected_clock())
        with t.region("IO"):
            pass
        (s,) = t.stats()
        self.assertEqual(s.count, 1)
        self.assertGreaterEqual(s.total_ms, 0)

    def test_cuda_events_through_a_stand_in_torch(self):
        """The CUDA-event path without a GPU: a stand-in torch whose events are stamped by a
        fake GPU timeline; the timer must synchronise before it reads elapsed times."""
        log = []

        class Event:
            gpu_now = 0.0

            def __init__(self, enable_timing=False):
                assert enable_timing
                self.t = None

            def record(self, stream=None):
                Event.gpu_now += 2.5
                self.t = Event.gpu_now
                log.append("record")

            def elapsed_time(self, end):
                if "synchronize" not in log:
                    raise RuntimeError("elapsed_time before the events completed")
                return end.t - self.t

        cuda = type("cuda", (), {"is_available": staticmethod(lambda: True), "Event": Event,
                                 "synchronize": staticmethod(lambda: log.append("synchronize"))})
        fake = type(sys)("torch")
        fake.cuda = cuda
        saved = sys.modules.get("torch")
        sys.modules["torch"] = fake
        try:
            t = regions.RegionTimer()
        finally:
            if saved is None:
                del sys.modules["torch"]
            else:
                sys.modules["torch"] = saved
        self.assertEqual(t.clock_name, "torch.cuda.Event")
        with t.region("Forward"):
            pass
        with t.region("Forward"):
            pass
        self.assertEqual(log, ["record"] * 4)
        doc = t.to_json()
        self.assertEqual(doc["context"]["region_timer"], "torch.cuda.Event")
        (row,) = doc["benchmarks"]
        self.assertEqual((row["count"], row["total_ms"]), (2, 5.0))

    def test_perf_counter_is_named_as_time_perf_counter_ns(self):
        import time
        self.assertEqual(regions.RegionTimer(clock=time.perf_counter_ns).clock_name,
                         "time.perf_counter_ns")
        self.assertEqual(regions.PerfCounterClock.name, "time.perf_counter_ns")


class Loops(unittest.TestCase):
    """Stand-in loops as a user runs them, then pipebench-report's verdict."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def loop(self, name, io_ms, fwd_ms, bwd_ms, steps=20):
        out = os.path.join(self.tmp.name, name + ".json")
        env = dict(os.environ, PYTHONPATH=os.path.join(ARGS.repo, "python"),
                   PYTHONDONTWRITEBYTECODE="1")
        r = subprocess.run(["/usr/bin/python3", "-c", LOOP, out, str(io_ms), str(fwd_ms),
                            str(bwd_ms), str(steps)], capture_output=True, text=True,
                           timeout=120, cwd=self.tmp.name, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        _, doc = strict_load(out)
        self.assertEqual(doc["context"]["region_timer"], expected_clock())
        counts = {row["key"]["op"]: row["count"] for row in doc["benchmarks"]}
        self.assertEqual(counts, {"Epoch": 1, "Batch": steps, "IO": steps, "Forward": steps,
                                  "Backward": steps})
        return out

    def verdict(self, path):
        r = report(path)
        self.assertEqual(r.returncode, 0, r.stderr)
        print(r.stdout)
        j = report(path, "--json")
        self.assertEqual(j.returncode, 0, j.stderr)
        return r.stdout, json.loads(j.stdout)

    def test_data_bound_loop(self):
        text, doc = self.verdict(self.loop("data_bound", 3, 1, 1))
        self.assertIn("Verdict: data-bound", text)
        self.assertIn("batch 32", text)
        self.assertTrue(doc["data_bound"])
        self.assertEqual(doc["region_timers"]["steps"], 20)
        self.assertGreater(doc["region_timers"]["stall_pct"], 40)

    def test_compute_bound_loop(self):
        # A 0.2 ms sleep overshoots by a millisecond or more on a loaded 2-core runner; with
        # 40 ms of compute a step's IO must average 4 ms before the stall reaches 10 %.
        text, doc = self.verdict(self.loop("compute_bound", 0.2, 20, 20))
        self.assertIn("Verdict: not data-bound", text)
        self.assertNotIn("Verdict: data-bound", text)
        self.assertFalse(doc["data_bound"])
        self.assertLess(doc["region_timers"]["stall_pct"], 10)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--report", required=True, help="the pipebench-report binary")
    p.add_argument("--repo", required=True, help="the repository root (holds python/)")
    ARGS, rest = p.parse_known_args()
    ARGS.report = os.path.abspath(ARGS.report)
    ARGS.repo = os.path.abspath(ARGS.repo)
    sys.path.insert(0, os.path.join(ARGS.repo, "python"))
    import pipebench_regions as regions  # noqa: E402
    sys.exit(run_tests(rest))
