#!/usr/bin/env python3
"""A heavy-tailed mix end to end (issue 34): small synthetic images plus a few large
originals (pipebench-data synthetic, twice), one BM_EndToEnd case at 1 worker with a step
far shorter than a batch's loading, then pipebench-report --json on the run:
  - the real data-bound run gets the data-bound verdict;
  - the JSON record and the report give one prediction (the case's bound_ms is the sweep
    point's bound_ms and the tails row's predicted step; its prediction_error_pct is the
    report's);
  - the record keeps the cost distribution and names the large originals as the costliest.
Timing figures are not asserted (a loaded machine moves them), only what holds on any."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ARGS = None


def run(*cmd):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=240)


class TailMix(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="pipebench-tailmix-")
        cls.data = os.path.join(cls.tmp, "mix")
        big = os.path.join(cls.tmp, "big")
        r = run(ARGS.pipebench_data, "synthetic", cls.data, "--count", "48", "--classes", "2",
                "--width", "96", "--height", "80")
        assert r.returncode == 0, r.stderr
        r = run(ARGS.pipebench_data, "synthetic", big, "--count", "2", "--classes", "2",
                "--width", "1600", "--height", "1200", "--seed", "7")
        assert r.returncode == 0, r.stderr
        for folder in sorted(os.listdir(big)):
            for name in sorted(os.listdir(os.path.join(big, folder))):
                shutil.copy(os.path.join(big, folder, name), os.path.join(cls.data, folder, "big_" + name))
        cls.out = os.path.join(cls.tmp, "run.json")
        r = run(ARGS.pipebench, "--data=" + cls.data, "--batch=8", "--workers=1", "--steps=24",
                "--compute-ms=0.2", "--benchmark_filter=BM_EndToEnd/imagenet_train/emulated/workers:1/iter",
                "--benchmark_out=" + cls.out, "--benchmark_out_format=json")
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        with open(cls.out) as f:
            cls.row = next(b for b in json.load(f)["benchmarks"] if b["name"].startswith("BM_EndToEnd/"))
        r = run(ARGS.report, cls.out, "--json")
        assert r.returncode == 0, r.stderr
        cls.report = json.loads(r.stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_a_data_bound_run_gets_the_data_bound_verdict(self):
        sweep = self.report["sweep"]
        self.assertEqual([p["regime"] for p in sweep], ["data-bound"])
        self.assertIsNone(self.report["first_compute_bound_workers"])

    def test_the_json_and_the_report_give_one_prediction(self):
        point = self.report["sweep"][0]
        self.assertEqual(point["bound_ms"], self.row["bound_ms"])
        self.assertAlmostEqual(point["prediction_error_pct"], self.row["prediction_error_pct"], places=9)
        tails = self.report["tails"]["points"]
        self.assertEqual(len(tails), 1)
        self.assertEqual(tails[0]["predicted_step_ms"], self.row["bound_ms"])
        self.assertEqual(tails[0]["predicted_step_p99_ms"], self.row["pred_step_p99_ms"])

    def test_the_record_keeps_the_distribution_and_names_the_large_files(self):
        self.assertGreaterEqual(self.row["samples_timed"], 16)
        self.assertLessEqual(self.row["sample_p50_ms"], self.row["sample_p99_ms"])
        self.assertLessEqual(self.row["sample_p99_ms"], self.row["sample_max_ms"])
        costliest = self.report["tails"]["points"][0]["costliest"]
        self.assertGreaterEqual(len(costliest), 2)
        # Both originals were timed (24 batches of 8 over 50 images: every file at least
        # once in each window); 1600 x 1200 against 96 x 80 decodes ~250x the pixels.
        self.assertTrue(all(c["file"].split("/")[-1].startswith("big_") for c in costliest[:2]), costliest)
        self.assertFalse(costliest[0]["file"].startswith("/"), "named under --data")


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--pipebench", required=True)
    p.add_argument("--report", required=True)
    p.add_argument("--pipebench-data", required=True)
    ARGS, rest = p.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest)


if __name__ == "__main__":
    main()
