#!/usr/bin/python3
"""scripts/torch_peer.py ("your framework's loader") on a tiny synthetic dataset: its JSON
parses and holds what pipebench-report --peer reads (versions, batch size, images/s per
num_workers of the sweep asked for), the images counted by torchvision's own ImageFolder,
the operators without a torchvision 0.14 class named in left_out (a batch operator and a
case-study step) and those it cannot follow exactly in approximated; --run takes the
spec, dataset and batch from a pipebench run's context; bad input exits 2 with one line.
Then pipebench-report --peer sets its row into the what-if table.

Skips (exit 77) where /usr/bin/python3 has no torch or torchvision.

usage: torch_peer_test.py --scripts DIR --pipebench-data BIN --report BIN
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

from ctest_unittest import run_tests

try:
    import torch  # noqa: F401
    import torchvision  # noqa: F401
except ImportError:  # pragma: no cover - depends on the machine
    print("torch or torchvision not importable: skipped")
    sys.exit(77)

ARGS = None
# A BM_Loader case at 1 worker, in the shape Google Benchmark writes (the report needs one).
LOADER = {"name": "BM_Loader/tiny/workers:1/iterations:2/real_time",
          "run_name": "BM_Loader/tiny/workers:1/iterations:2/real_time", "run_type": "iteration",
          "workers": 1, "data_ms": 10.0, "items_per_second": 400.0, "read_ms": 0.01,
          "decode_ms": 1.0, "transform_ms": 1.0, "sample_cpu_ms": 2.0}
SPEC = ("[decode, {random_resized_crop: {size: 32}}, horizontal_flip, "
        "{rand_augment: {magnitude_std: 0.5}}, normalize, {random_mask: {}}, {mixup_cutmix: {}}]")


def peer(*args):
    return subprocess.run([sys.executable, os.path.join(ARGS.scripts, "torch_peer.py"), *args],
                          capture_output=True, text=True, timeout=240)


class TorchPeer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.data = os.path.join(cls.tmp.name, "data")
        r = subprocess.run([ARGS.pipebench_data, "synthetic", cls.data, "--count", "12",
                            "--classes", "3", "--width", "96", "--height", "72"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_sweep_and_what_it_left_out(self):
        out = os.path.join(self.tmp.name, "peer.json")
        r = peer("--spec", SPEC, "--data", self.data, "--batch", "4", "--workers", "0,1",
                 "--batches", "2", "--warmup", "1", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual([p["num_workers"] for p in doc["results"]], [0, 1])
        for p in doc["results"]:
            self.assertGreater(p["images_per_second"], 0)
            self.assertEqual(p["batches_timed"], 2)
        self.assertEqual(doc["batch_size"], 4)
        self.assertEqual(doc["images"], 12)
        self.assertEqual(doc["versions"]["torchvision"], torchvision.__version__)
        self.assertEqual(doc["versions"]["torch"], torch.__version__)
        left = {e["operator"] for e in doc["left_out"]}
        self.assertEqual(left, {"random_mask", "mixup_cutmix"})
        self.assertEqual([e["operator"] for e in doc["approximated"]], ["rand_augment"])
        # The transform is torchvision's own, in the spec's order, ToTensor before normalize.
        t = doc["transform"]
        order = [t.index(n) for n in ["RandomResizedCrop(size=(32, 32)", "RandomHorizontalFlip",
                                      "RandAugment", "ToTensor", "Normalize"]]
        self.assertEqual(order, sorted(order), t)
        self.assertIn(doc["best"], doc["results"])

    def test_the_spec_from_a_run_and_the_report_row(self):
        run = os.path.join(self.tmp.name, "run.json")
        ctx = {"pipeline_spec": "{name: tiny, decode: {mode: full}, transforms: [{center_crop: "
                                "{size: 48}}, {normalize: {mean: imagenet, std: imagenet}}]}",
               "dataset": self.data, "batch_size": "4", "recipe": "tiny", "baseline": "emulated",
               "cores_available": "2.0", "hardware_threads": "2", "compute_ms": "25"}
        rows = [{"name": "BM_Sample/tiny", "run_name": "BM_Sample/tiny", "run_type": "iteration",
                 "us_per_image": 1000.0, "items_per_second": 1000.0}, LOADER]
        with open(run, "w") as f:
            json.dump({"context": ctx, "benchmarks": rows}, f)
        out = os.path.join(self.tmp.name, "peer_run.json")
        r = peer("--run", run, "--workers", "0", "--batches", "1", "--warmup", "0", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["pipeline"], "tiny")
        self.assertEqual(doc["batch_size"], 4)
        self.assertEqual(doc["left_out"], [])
        self.assertIn("CenterCrop(size=(48, 48))", doc["transform"])
        rep = subprocess.run([ARGS.report, run, "--peer", out, "--json"], capture_output=True,
                             text=True, timeout=60)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        table = json.loads(rep.stdout)["what_if"]
        rows = [x for x in table["rows"] if x["kind"] == "peer_loader"]
        self.assertEqual(len(rows), 1, table)
        ips = doc["results"][0]["images_per_second"]
        # data ms per batch of 4 = 4000 / images/s; the step is at least the compute time.
        self.assertAlmostEqual(rows[0]["data_ms_per_batch"], 4000.0 / ips, places=6)
        self.assertAlmostEqual(table["peer_loader"]["images_per_second"], ips, places=6)
        text = subprocess.run([ARGS.report, run, "--peer", out], capture_output=True, text=True,
                              timeout=60).stdout
        self.assertIn("your framework's loader", text)

    def test_bad_input_is_one_line_and_exit_2(self):
        r = peer("--spec", "[center_crop]", "--data", os.path.join(self.tmp.name, "nowhere"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("nowhere", r.stderr)
        bad = os.path.join(self.tmp.name, "bad_peer.json")
        with open(bad, "w") as f:
            f.write("{\"versions\": {}}")
        run = os.path.join(self.tmp.name, "bad_input_run.json")
        with open(run, "w") as f:
            json.dump({"context": {"recipe": "tiny", "batch_size": "4"}, "benchmarks": [
                {"name": "BM_Sample/tiny", "run_name": "BM_Sample/tiny", "run_type": "iteration",
                 "us_per_image": 1000.0}, LOADER]}, f)
        rep = subprocess.run([ARGS.report, run, "--peer", bad], capture_output=True, text=True,
                             timeout=60)
        self.assertEqual(rep.returncode, 2, rep.stderr)
        self.assertIn("bad_peer.json", rep.stderr)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--scripts", required=True)
    p.add_argument("--pipebench-data", required=True)
    p.add_argument("--report", required=True)
    ARGS, rest = p.parse_known_args()
    ARGS.pipebench_data = os.path.abspath(ARGS.pipebench_data)
    ARGS.report = os.path.abspath(ARGS.report)
    sys.exit(run_tests(rest))
