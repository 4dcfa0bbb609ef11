#!/usr/bin/python3
"""pipebench under mpirun on one machine (issue 13): `mpirun -np 2 --oversubscribe` (plus
--allow-run-as-root as root, which CI is), each run bounded by a timeout.
  - the sharded loader delivers every sample exactly once per epoch across the ranks, the
    shards disjoint (tests/dist_shard_check.cpp);
  - one Chrome trace with a process per rank;
  - rank 0's JSON holds both ranks' counters, and its global figures are their sums / means
    / extrema (bench/run/ranks.h); the context records the world size and the hosts; the report
    prints the per-rank table and the straggler prediction;
  - a rank slowed on purpose (PIPEBENCH_TEST_SLOW_RANK, a test-only slow loader) is named
    the slowest rank, and AU drops on every rank, not only on the slow one;
  - a rank that meets a bad file under --on-error=stop ends the whole job non-zero, the file
    named, no hang.
Skips (exit 77) with a message when mpirun is missing or pipebench was built without MPI.

usage: mpi_test.py --pipebench BIN --pipebench-data BIN --report BIN --shard-check BIN
                   --mpi-built ON|OFF [--mpirun PATH]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from ctest_unittest import run_tests

ARGS = None
TIMEOUT = 90  # seconds per mpirun: a hang fails the test instead of CI
CASE = "BM_EndToEnd/imagenet_train/emulated/workers:1/iterations"
COMMON = ["--batch=8", "--size=64", "--workers=1", "--baseline=emulated", "--quiet",
          f"--benchmark_filter={CASE}"]


def mpirun(np, *cmd, env=None):
    launcher = [ARGS.mpirun, "-np", str(np), "--oversubscribe"]
    if os.geteuid() == 0:
        launcher.append("--allow-run-as-root")
    full = ["timeout", str(TIMEOUT)] + launcher + list(cmd)
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(full, capture_output=True, text=True, env=e, timeout=TIMEOUT + 30)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def end_to_end(doc):
    rows = [r for r in doc["benchmarks"] if r["name"].startswith(CASE)]
    assert len(rows) == 1, [r["name"] for r in doc["benchmarks"]]
    return rows[0]


class Ranks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.data = os.path.join(cls.tmp.name, "data")
        r = subprocess.run([ARGS.pipebench_data, "synthetic", cls.data, "--count", "40",
                            "--classes", "2", "--width", "160", "--height", "120"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr

    def run_pipebench(self, name, *flags, env=None):
        out = os.path.join(self.tmp.name, name + ".json")
        r = mpirun(2, ARGS.pipebench, f"--data={self.data}", *COMMON, *flags,
                   f"--benchmark_out={out}", env=env)
        return r, out

    def test_every_sample_once_per_epoch_disjoint_shards(self):
        r = mpirun(2, ARGS.shard_check, self.data, "2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("every sample exactly once per epoch, shards disjoint", r.stdout)
        self.assertIn("epoch 1: 40 samples over 2 ranks (rank 0: 20, rank 1: 20)", r.stdout)

    def test_aggregated_json_and_report(self):
        trace = os.path.join(self.tmp.name, "agg.trace.json")
        r, out = self.run_pipebench("agg", "--steps=12", "--compute-ms=25", "--sync=barrier",
                                    f"--trace={trace}")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # One Chrome trace, one process per rank, the per-rank file merged and removed.
        events = load(trace)["traceEvents"]
        self.assertEqual({e["pid"] for e in events}, {0, 1})
        names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
        self.assertTrue(names[1].startswith("rank 1 ("), names)
        self.assertTrue(any(e["pid"] == 1 and e["name"] == "train_step" for e in events))
        self.assertFalse(os.path.exists(trace + ".rank1"))
        doc = load(out)
        self.assertEqual(doc["context"]["world_size"], 2)
        self.assertEqual(len(doc["context"]["hosts"].split(",")), 2)
        # The busy-machine guard counts both ranks as the job, not rank 1 as another process;
        # the job's and the others' CPU cannot exceed the machine's: all of its cores
        # (hardware_threads: other processes run on the cores mpirun's binding may have kept
        # from rank 0) over the window, which opens at the earliest rank's start so that no
        # rank's CPU falls outside it. The job's CPU is exact (clock_gettime); /proc/stat
        # counts every CPU in 10 ms ticks, so its busy time read at each end of the window
        # can be off by up to one tick per CPU: 2 x hardware_threads x 10 ms over the window.
        ctx = doc["context"]
        self.assertEqual(ctx["job_processes_on_host"], 2)
        job, other = float(ctx["job_cpu_cores"]), float(ctx["other_processes_cpu_cores"])
        self.assertGreater(job, 0)
        threads, window_s = float(ctx["hardware_threads"]), float(ctx["load_window_s"])
        self.assertGreater(window_s, 0)
        self.assertLessEqual(job + other, threads + 2 * threads * 0.010 / window_s, ctx)
        row = end_to_end(doc)
        self.assertEqual(row["world_size"], 2)
        per = {f: [row[f"rank{k}_{f}"] for k in (0, 1)]
               for f in ("data_ms", "step_ms", "au_pct", "images_per_second", "sync_wait_ms",
                         "consumer_wait_ms", "decode_ms", "data_drift_pct",
                         "loop_cpu_drift_pct")}
        self.assertAlmostEqual(row["images_per_second_total"], sum(per["images_per_second"]), places=6)
        self.assertAlmostEqual(row["au_pct"], sum(per["au_pct"]) / 2, places=6)
        self.assertAlmostEqual(row["au_pct_min"], min(per["au_pct"]), places=6)
        self.assertAlmostEqual(row["step_ms"], sum(per["step_ms"]) / 2, places=6)
        self.assertAlmostEqual(row["data_ms"], max(per["data_ms"]), places=6)
        self.assertAlmostEqual(row["data_ms_mean"], sum(per["data_ms"]) / 2, places=6)
        self.assertAlmostEqual(row["load_imbalance"], max(per["data_ms"]) / (sum(per["data_ms"]) / 2), places=6)
        self.assertEqual(row["au_pass"], 1 if row["au_pct"] >= 90 else 0)
        self.assertEqual(row["slowest_rank"], per["data_ms"].index(max(per["data_ms"])))
        self.assertAlmostEqual(row["data_drift_pct"], max(per["data_drift_pct"], key=abs), places=6)
        self.assertAlmostEqual(row["loop_cpu_drift_pct"], max(per["loop_cpu_drift_pct"], key=abs), places=6)
        # Each rank ran its own loop: both produced images.
        self.assertTrue(all(v > 0 for v in per["images_per_second"]))
        self.assertIn("straggler_pred_ms", row)
        text = subprocess.run([ARGS.report, out], capture_output=True, text=True)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("Ranks (mpirun: world size 2", text.stdout)
        self.assertIn("Load imbalance (max / mean data time)", text.stdout)
        self.assertIn("Straggler prediction", text.stdout)
        table = text.stdout.split("Ranks (mpirun")[1]
        rows = [l.split() for l in table.splitlines() if l.split()[:1] in (["0"], ["1"])]
        self.assertEqual([r[0] for r in rows], ["0", "1"], table)

    def test_slowed_rank_is_the_straggler_and_lowers_au_everywhere(self):
        common = ["--steps=16", "--compute-ms=25", "--sync=barrier"]
        r, base_out = self.run_pipebench("base", *common)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r, slow_out = self.run_pipebench("slow", *common, env={"PIPEBENCH_TEST_SLOW_RANK": "1:80"})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        base, slow = end_to_end(load(base_out)), end_to_end(load(slow_out))
        self.assertEqual(slow["slowest_rank"], 1)
        self.assertGreater(slow["rank1_data_ms"], 2 * slow["rank0_data_ms"])
        # A batch every 80 ms against a 25 ms step: about 31 % AU on both ranks (the fast
        # rank waits in the barrier), from near 100 % without the delay.
        for k in (0, 1):
            self.assertLess(slow[f"rank{k}_au_pct"], 60, slow)
            self.assertGreater(base[f"rank{k}_au_pct"] - slow[f"rank{k}_au_pct"], 25, (base, slow))
        # The fast rank spends the difference waiting for the slow one in the collective.
        self.assertGreater(slow["rank0_sync_wait_ms"], slow["rank1_sync_wait_ms"] + 20)
        text = subprocess.run([ARGS.report, slow_out], capture_output=True, text=True).stdout
        self.assertIn("Slowest rank: 1", text)

    def test_emulated_allreduce_waits_the_ring_time_without_host_cpu(self):
        # The default --sync: a ring allreduce of 97.5 MiB over 2 ranks on a 2 GB/s link,
        # 2 (N-1)/N x bytes / bandwidth + 2 (N-1) x 5 us = 102236160 / 2e9 s + 10 us
        # = 51.128 ms per step, waited sleeping: the collective's wall at least that, its CPU
        # on the loop thread a small part of it (the barrier polls every 50 us).
        r, out = self.run_pipebench("emulated", "--steps=8", "--compute-ms=5", "--link-gbs=2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        doc = load(out)
        self.assertEqual(doc["context"]["sync"], "emulated")
        self.assertEqual(doc["context"]["link_gb_per_s"], 2)
        row = end_to_end(doc)
        model = 97.5 * 1024 * 1024 / 2e9 * 1e3 + 2 * 5e-3
        self.assertAlmostEqual(row["sync_model_ms"], model, delta=0.01 * model)
        for k in (0, 1):
            self.assertGreaterEqual(row[f"rank{k}_sync_wait_ms"], model * 0.99, row)
            self.assertLess(row[f"rank{k}_sync_cpu_ms"], 0.25 * row[f"rank{k}_sync_wait_ms"], row)
        text = subprocess.run([ARGS.report, out], capture_output=True, text=True).stdout
        self.assertIn("sync emulated ring allreduce of 97.5 MiB at 2 GB/s", text)

    def test_host_allreduce_reports_the_cpu_it_took(self):
        r, out = self.run_pipebench("allreduce", "--steps=6", "--compute-ms=5", "--sync=allreduce",
                                    "--grad-mib=16")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        row = end_to_end(load(out))
        for k in (0, 1):  # summing 16 MiB of float32 on the host is CPU work
            self.assertGreater(row[f"rank{k}_sync_cpu_ms"], 0, row)
            self.assertLessEqual(row[f"rank{k}_sync_cpu_ms"], row[f"rank{k}_sync_wait_ms"] * 1.05 + 0.5, row)
        text = subprocess.run([ARGS.report, out], capture_output=True, text=True).stdout
        self.assertIn("The host's MPI_Allreduce took", text)

    def test_failing_rank_ends_the_job_naming_the_file(self):
        bad = os.path.join(self.tmp.name, "bad")
        shutil.copytree(self.data, bad)
        victim = os.path.join(bad, "class_001", sorted(os.listdir(os.path.join(bad, "class_001")))[0])
        with open(victim, "wb") as f:
            f.write(b"not an image")
        out = os.path.join(self.tmp.name, "bad.json")
        r = mpirun(2, ARGS.pipebench, f"--data={bad}", *COMMON, "--steps=12", "--compute-ms=5",
                   "--on-error=stop", f"--benchmark_out={out}")
        self.assertNotIn(r.returncode, (0, 124), r.stdout + r.stderr)  # non-zero, no hang
        name = os.path.basename(victim)
        self.assertIn(name, r.stdout + r.stderr)
        if os.path.exists(out):
            row = end_to_end(load(out))
            self.assertTrue(row.get("error_occurred"), row)
            self.assertIn(name, row["error_message"])


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--pipebench", required=True)
    p.add_argument("--pipebench-data", required=True)
    p.add_argument("--report", required=True)
    p.add_argument("--shard-check", required=True)
    p.add_argument("--mpi-built", default="OFF")
    p.add_argument("--mpirun", default="")
    ARGS, rest = p.parse_known_args()
    if ARGS.mpi_built.upper() not in ("ON", "1", "TRUE"):
        print("mpi_test: skipped: pipebench was built without MPI (scripts/setup.sh installs "
              "libopenmpi-dev; CMake PIPEBENCH_MPI)")
        return 77
    ARGS.mpirun = ARGS.mpirun if ARGS.mpirun and "NOTFOUND" not in ARGS.mpirun else shutil.which("mpirun") or ""
    if not ARGS.mpirun:
        print("mpi_test: skipped: no mpirun on PATH (scripts/setup.sh installs openmpi-bin)")
        return 77
    return run_tests(rest)


if __name__ == "__main__":
    sys.exit(main())
