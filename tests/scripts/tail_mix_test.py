#!/usr/bin/env python3
"""A heavy-tailed mix end to end (issue 34): small synthetic images plus a few large
originals (pipebench-data synthetic, twice), one BM_EndToEnd case at 1 worker with a step
far shorter than a batch's loading, then pipebench-report --json on the run:
  - the real data-bound run gets the data-bound verdict;
  - the JSON record and the report give one prediction (the case's bound_ms is the sweep
    point's bound_ms and the tails row's predicted step; its prediction_error_pct is the
    report's);
  - the record keeps the cost distribution and names the large originals as the costliest;
  - the tail fixes run end to end (--tail-fixes=on: prefetch:4 and delivery:out_of_order at
    the same worker): each row carries its measured step and today's case's prediction of
    it (fix_pred_step_ms: today's pred_step_deep_prefetch_ms / pred_step_out_of_order_ms)
    with its error, and the report prints them side by side in its Tails section;
  - the large-only copy (--presize-large) runs end to end too, priced before it runs from
    each image's cost in its paired case (fix_pred_step_ms, fix_cost_ratio, fix_cost_matched);
  - decode:auto end to end, priced file by file with today's costliest files probed.
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
                "--compute-ms=0.2", "--tail-fixes=on", "--presize-large=auto",
                "--benchmark_filter=BM_EndToEnd/imagenet_train/(prefetch:4/|delivery:out_of_order/|"
                "presized_large:[0-9]+/)?emulated/workers:1/iter|BM_Sample/imagenet_train(/presized_large:[0-9]+)?$",
                "--benchmark_out=" + cls.out, "--benchmark_out_format=json")
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        with open(cls.out) as f:
            rows = json.load(f)["benchmarks"]
        cls.row = next(b for b in rows if b["name"].startswith("BM_EndToEnd/imagenet_train/emulated/"))
        cls.fixes = {label: next((b for b in rows if b["name"].startswith(
            "BM_EndToEnd/imagenet_train/%s/emulated/" % label)), None)
            for label in ("prefetch:4", "delivery:out_of_order")}
        cls.large = next((b for b in rows if b["name"].startswith("BM_EndToEnd/imagenet_train/presized_large:")),
                         None)
        r = run(ARGS.report, cls.out, "--json")
        assert r.returncode == 0, r.stderr
        cls.report = json.loads(r.stdout)
        r = run(ARGS.report, cls.out)
        assert r.returncode == 0, r.stderr
        cls.text = r.stdout

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

    def test_each_fix_records_its_step_and_todays_prediction_of_it(self):
        priced = {"prefetch:4": "pred_step_deep_prefetch_ms", "delivery:out_of_order": "pred_step_out_of_order_ms"}
        for label, row in self.fixes.items():
            with self.subTest(label=label):
                self.assertIsNotNone(row, "no %s case" % label)
                self.assertEqual(row["key"]["variant"] + ":" + row["key"]["variant_param"], label)
                self.assertEqual(row["key"]["workers"], 1)
                self.assertGreater(row["step_ms"], 0)
                # Made from today's costs before the fix ran: today's price, exactly.
                self.assertEqual(row["fix_pred_step_ms"], self.row[priced[label]])
                self.assertAlmostEqual(row["fix_prediction_error_pct"],
                                       100 * (row["fix_pred_step_ms"] - row["step_ms"]) / row["step_ms"], places=6)
                self.assertNotIn("pred_step_deep_prefetch_ms", row, "a fix's case prices no further fix")
        self.assertEqual(self.fixes["prefetch:4"]["prefetch_depth_batches"], 4)
        self.assertEqual(self.fixes["delivery:out_of_order"]["prefetch_depth_batches"], 2)
        self.assertAlmostEqual(self.fixes["prefetch:4"]["fix_host_mib"],
                               2 * self.fixes["prefetch:4"]["batch_bytes"] / 2**20, places=6)

    def test_the_report_prints_each_fix_beside_its_prediction(self):
        fixes = self.report["tails"]["fixes"]
        self.assertEqual([f["label"] for f in fixes], ["prefetch:4", "delivery:out_of_order"])
        for f in fixes:
            row = self.fixes[f["label"]]
            self.assertEqual(f["step_ms"], row["step_ms"])
            self.assertEqual(f["predicted_step_ms"], row["fix_pred_step_ms"])
            self.assertEqual(f["prediction_error_pct"], row["fix_prediction_error_pct"])
            self.assertEqual(f["today_step_ms"], self.row["step_ms"])
        self.assertIn("not their pixels", fixes[1]["note"])
        self.assertIn("Tail fixes run end to end at 1 worker:", self.text)
        for label in ("prefetch:4", "delivery:out_of_order"):
            line = next((l for l in self.text.splitlines() if l.strip().startswith(label + " ")), "")
            self.assertIn("measured", line, self.text)
            self.assertIn("predicted", line)
            self.assertIn("error", line)
        # Today's sweep is still one point: the fixes are not sweep rows.
        self.assertEqual(len(self.report["sweep"]), 1)

    def test_the_large_only_copy_is_priced_image_by_image_before_it_runs(self):
        # The two originals are the large images (above 4 x the median pixels, 91 % of the
        # pixels): the copy presizes them, and its end-to-end case carries the step model's
        # price made from today's case and the copy's paired case (model/copy_fix_price.h).
        row = self.large
        self.assertIsNotNone(row, "no presized_large end-to-end case")
        self.assertGreater(row["step_ms"], 0)
        self.assertGreater(row["fix_pred_step_ms"], 0)
        self.assertGreaterEqual(row["fix_cost_matched"], 8)  # model::kMinMatchedImages
        self.assertGreater(row["fix_cost_ratio"], 0)
        self.assertAlmostEqual(row["fix_prediction_error_pct"],
                               100 * (row["fix_pred_step_ms"] - row["step_ms"]) / row["step_ms"], places=6)
        # The copy's price sees the originals presized: below today's own prediction, whose
        # step the originals hold (data-bound at a 0.2 ms step).
        self.assertLess(row["fix_pred_step_ms"], self.row["bound_ms"])
        (effect,) = [e for e in self.report["tails"]["pixel_fixes"] if e["label"].startswith("presized_large:")]
        self.assertEqual(effect["predicted_step_ms"], row["fix_pred_step_ms"])
        self.assertEqual(effect["prediction_error_pct"], row["fix_prediction_error_pct"])
        self.assertIn("the step model priced it at", self.text)
        # The report's check of the fix uses that same price, not the table's mean one.
        (check,) = [f for f in self.report["fix_checks"] if f["candidate"].startswith("presized_large:")]
        self.assertTrue(check["priced_per_image"])
        self.assertAlmostEqual(check["predicted_step_ms"], row["fix_pred_step_ms"], places=9)
        self.assertRegex(self.text, r"Check \(the presized_large:\d+ fix ran for real, end to end at 1 "
                                    r"workers; priced before it ran from each image's cost")

    def test_decode_auto_is_priced_file_by_file_with_the_costliest_probed(self):
        # A round of 9 images spread over the 50 (bench/run/image_round.h), which holds
        # class_000's original (the first file) and not class_001's: decode:auto's
        # end-to-end case times today's costliest files beside it before its loader starts
        # (bench/cases/fix_probe.h) and prices each timed file at its own ratio
        # (model/ratio_fix_price.h): the originals, nearly all of the cost, are measured.
        out = os.path.join(self.tmp, "decode_auto.json")
        r = run(ARGS.pipebench, "--data=" + self.data, "--batch=8", "--workers=1", "--steps=24",
                "--compute-ms=0.2", "--round=9", "--tail-fixes=off", "--presize=off", "--presize-large=off",
                "--benchmark_filter=BM_EndToEnd/imagenet_train/(decode:auto/)?emulated/workers:1/iter|"
                "BM_Sample/imagenet_train(/decode:auto)?$",
                "--benchmark_out=" + out, "--benchmark_out_format=json")
        self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])
        with open(out) as f:
            rows = json.load(f)["benchmarks"]
        row = next(b for b in rows if b["name"].startswith("BM_EndToEnd/imagenet_train/decode:auto/"))
        self.assertGreater(row["fix_pred_step_ms"], 0)
        self.assertAlmostEqual(row["fix_prediction_error_pct"],
                               100 * (row["fix_pred_step_ms"] - row["step_ms"]) / row["step_ms"], places=6)
        self.assertGreaterEqual(row["fix_probed_files"], 1)
        self.assertEqual(row["fix_cost_matched"], 9 + row["fix_probed_files"])  # the round's and the probe's
        self.assertGreater(row["fix_cost_measured_pct"], 50)
        self.assertGreater(row["fix_cost_ratio"], 0)
        r = run(ARGS.report, out, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        report = json.loads(r.stdout)
        (effect,) = [e for e in report["tails"]["pixel_fixes"] if e["label"] == "decode:auto"]
        self.assertEqual(effect["predicted_step_ms"], row["fix_pred_step_ms"])
        self.assertEqual(effect["measured_cost_pct"], row["fix_cost_measured_pct"])
        (check,) = [f for f in report["fix_checks"] if f["candidate"] == "decode:auto"]
        self.assertTrue(check["priced_per_image"])
        self.assertAlmostEqual(check["predicted_step_ms"], row["fix_pred_step_ms"], places=9)
        r = run(ARGS.report, out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"decode:auto at 1 worker, run end to end: .*the step model priced it at [0-9.]+ ms "
                                   r"before it ran, from each file's cost at the fix's ratio on it, measured on the "
                                   r"files holding \d+ % of the cost")

    def test_auto_runs_the_fixes_on_the_mix_and_not_on_uniform_images(self):
        # --tail-fixes=auto (the default) decides before the run, from the files' sizes.
        uniform = os.path.join(self.tmp, "uniform")
        shutil.copytree(self.data, uniform, ignore=shutil.ignore_patterns("big_*"))
        listed = {}
        for name, data in (("mix", self.data), ("uniform", uniform)):
            r = run(ARGS.pipebench, "--data=" + data, "--batch=8", "--workers=1", "--steps=4",
                    "--benchmark_list_tests")
            self.assertEqual(r.returncode, 0, r.stderr)
            listed[name] = [l for l in r.stdout.splitlines() if l.startswith("BM_EndToEnd/")]
        fixes = [l for l in listed["mix"] if "/prefetch:4/" in l or "/delivery:out_of_order/" in l]
        self.assertEqual(len(fixes), 2, listed["mix"])
        self.assertFalse([l for l in listed["uniform"] if "/prefetch:" in l or "/delivery:" in l], listed["uniform"])

    def test_files_the_loader_did_not_time_are_priced_from_their_headers(self):
        # 400 small images and the two large originals, 2 steps of 8: the loader-alone
        # windows time a few batches, far under 90 % of the files, so the step model replays
        # the dataset's costs (bench/cases/dataset_costs.h): the timed files' own and the
        # others' from the cost fit on their pixels, made in this run.
        # Two sizes among the small ones, so that the timed files alone span a line.
        data = os.path.join(self.tmp, "wide")
        medium = os.path.join(self.tmp, "medium")
        r = run(ARGS.pipebench_data, "synthetic", data, "--count", "200", "--classes", "2",
                "--width", "96", "--height", "80", "--seed", "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run(ARGS.pipebench_data, "synthetic", medium, "--count", "200", "--classes", "2",
                "--width", "240", "--height", "180", "--seed", "4")
        self.assertEqual(r.returncode, 0, r.stderr)
        for source, prefix in ((medium, "m_"), (self.data, "big_")):
            for folder in sorted(os.listdir(source)):
                for name in sorted(os.listdir(os.path.join(source, folder))):
                    if prefix == "m_" or name.startswith("big_"):
                        target = name if name.startswith(prefix) else prefix + name
                        shutil.copy(os.path.join(source, folder, name), os.path.join(data, folder, target))
        out = os.path.join(self.tmp, "wide.json")
        r = run(ARGS.pipebench, "--data=" + data, "--batch=8", "--workers=1", "--steps=2", "--compute-ms=0.2",
                "--benchmark_filter=BM_EndToEnd/imagenet_train/emulated/workers:1/iter",
                "--benchmark_out=" + out, "--benchmark_out_format=json")
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        with open(out) as f:
            (row,) = [b for b in json.load(f)["benchmarks"] if b["name"].startswith("BM_EndToEnd/")]
        self.assertGreaterEqual(row["samples_timed"], 16)
        self.assertGreaterEqual(row["cost_fit_files"], 8)
        self.assertGreater(row["cost_fit_ms_per_mp"], 0)  # a larger image costs more
        self.assertLessEqual(row["cost_fit_r2"], 1)
        self.assertGreater(row["costs_fitted_pct"], 10)  # most files were never timed
        self.assertLess(row["costs_fitted_pct"], 100)
        self.assertGreater(row["bound_ms"], 0)
        # On the first run's mix every file was timed: the visits were the distribution.
        self.assertEqual(self.row["costs_fitted_pct"], 0)


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
