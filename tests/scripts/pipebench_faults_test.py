#!/usr/bin/python3
"""pipebench on the datasets and outputs users really have: bad files, tiny sets, odd names,
full disks. Why it exists: one truncated JPEG used to abort the whole process inside a timed
loop (exit 134, every result lost), a repetitions run wrote NaN into its JSON, and a write
error went unnoticed. Each test states the documented outcome (bench/README.md):
  exit 0 every case ran; 2 bad flags (nothing run); 3 a case errored, results written;
  4 results could not be written.

usage: pipebench_faults_test.py --pipebench BIN --pipebench-data BIN
"""
import argparse
import base64
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

from ctest_unittest import run_tests

ARGS = None
# A 2 x 1 RGB PNG (made with PIL), so the test needs no image library.
PNG_2X1 = ("iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAD0lEQVR4nGP4z8DA0PAfAAgAAn+c"
           "RUBOAAAAAElFTkSuQmCC")
FAST = ["--batch=8", "--steps=3", "--workers=1,2", "--benchmark_min_time=0.01", "--size=96"]
# Every family that reads dataset files, the loader and the end-to-end loop among them.
FILTER = "--benchmark_filter=BM_(Read/files/warm|Decode/turbo_full|Sample/imagenet_train$|Loader|EndToEnd)"


def run(*cmd, cwd=None):
    return subprocess.run(cmd, capture_output=True, timeout=300, cwd=cwd)


def strict_json(path):
    """Python's json with NaN/Infinity refused, and the bytes required to be UTF-8, as
    JSON.parse and github-action-benchmark require."""
    def refuse(name):
        raise ValueError(f"{path}: non-standard JSON constant {name}")
    with open(path, "rb") as f:
        raw = f.read()
    return json.loads(raw.decode("utf-8"), parse_constant=refuse)


def rows(doc):
    return [r for r in doc["benchmarks"] if r.get("run_type", "iteration") == "iteration"]


class Faults(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.good = os.path.join(cls.tmp.name, "good")
        r = run(ARGS.pipebench_data, "synthetic", cls.good, "--count", "24", "--classes", "2",
                "--width", "160", "--height", "120")
        assert r.returncode == 0, r.stderr
        # The same images plus a truncated JPEG, a macOS "._" file and a non-UTF-8 name.
        cls.bad = os.path.join(cls.tmp.name, "bad")
        shutil.copytree(cls.good, cls.bad)
        first = sorted(os.listdir(os.path.join(cls.good, "class_000")))[0]
        with open(os.path.join(cls.good, "class_000", first), "rb") as f:
            jpeg = f.read()
        with open(os.path.join(cls.bad, "class_001", "truncated.jpg"), "wb") as f:
            f.write(jpeg[: len(jpeg) // 3])
        with open(os.path.join(cls.bad, "class_001", "._resource.jpg"), "wb") as f:
            f.write(b"\x00\x05\x16\x07 AppleDouble")
        with open(os.path.join(cls.bad.encode(), b"class_000", b"caf\xe9.jpg"), "wb") as f:
            f.write(b"not a jpeg at all")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def out(self, name):
        return os.path.join(self.tmp.name, name)

    def test_bad_files_stop_errors_the_cases_but_the_run_goes_on(self):
        out = self.out("stop.json")
        r = run(ARGS.pipebench, "--data=" + self.bad, *FAST, FILTER, "--benchmark_out=" + out)
        self.assertEqual(r.returncode, 3, r.stderr)
        doc = strict_json(out)
        errored = [x for x in rows(doc) if x.get("error_occurred")]
        names = {x["run_name"].split("/")[0] for x in errored}
        # Reading a bad file's bytes succeeds (BM_Read); every case that decodes fails.
        self.assertEqual(names, {"BM_Decode", "BM_Sample", "BM_Loader", "BM_EndToEnd"})
        for x in errored:
            self.assertIn(self.bad, x["error_message"])
            self.assertIn(".jpg", x["error_message"])
        self.assertEqual(doc["context"]["errored_cases"], len(errored))
        self.assertIn(b"exit code 3", r.stderr)

    def test_opencv_plugin_that_cannot_load_errors_its_case_only(self):
        # The plugin is found by its file (no load) when the cases are listed, so
        # BM_Decode/opencv is listed; a file that is not the plugin fails when that case
        # loads it: the case errors naming why (exit 3), and the others are not touched.
        fake = self.out("not-a-plugin.so")
        with open(fake, "wb") as f:
            f.write(b"not an ELF file")
        env = dict(os.environ, PIPEBENCH_OPENCV_CODECS=fake)
        out = self.out("plugin.json")
        r = subprocess.run([ARGS.pipebench, "--data=" + self.good, *FAST,
                            "--benchmark_filter=BM_Decode/(opencv|turbo_full)$",
                            "--benchmark_out=" + out], capture_output=True, timeout=300, env=env)
        self.assertEqual(r.returncode, 3, r.stderr)
        by_name = {x["run_name"]: x for x in rows(strict_json(out))}
        self.assertEqual(set(by_name), {"BM_Decode/opencv", "BM_Decode/turbo_full"})
        self.assertTrue(by_name["BM_Decode/opencv"].get("error_occurred"))
        self.assertIn("OpenCV imgcodecs could not be loaded", by_name["BM_Decode/opencv"]["error_message"])
        self.assertIn(fake, by_name["BM_Decode/opencv"]["error_message"])
        self.assertFalse(by_name["BM_Decode/turbo_full"].get("error_occurred"))
        # A plugin path that names no file: the case is not listed, and pipebench says why.
        env["PIPEBENCH_OPENCV_CODECS"] = self.out("no-such-plugin.so")
        r = subprocess.run([ARGS.pipebench, "--data=" + self.good,
                            "--benchmark_filter=BM_Decode/", "--benchmark_list_tests=true"],
                           capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("BM_Decode/opencv", r.stdout)
        self.assertIn("BM_Decode/opencv not run", r.stderr)

    def test_bad_files_skip_runs_every_case_and_lists_them(self):
        out = self.out("skip.json")
        r = run(ARGS.pipebench, "--data=" + self.bad, *FAST, FILTER, "--on-error=skip",
                "--benchmark_out=" + out)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = strict_json(out)
        self.assertFalse([x for x in rows(doc) if x.get("error_occurred")])
        ctx = doc["context"]
        self.assertEqual(ctx["on_error"], "skip")
        self.assertEqual(ctx["skipped_files_total"], 3)
        listed = " ".join(ctx["skipped_files"])
        for name in ["truncated.jpg", "._resource.jpg", "caf\ufffd.jpg"]:
            self.assertIn(name, listed)
        for x in rows(doc):
            if x["run_name"].startswith("BM_Loader/"):
                self.assertGreater(x["items_per_second"], 0)

    def test_repetitions_write_json_that_strict_parsers_accept(self):
        out = self.out("reps.json")
        r = run(ARGS.pipebench, "--data=" + self.good, *FAST,
                "--benchmark_filter=BM_(Read/files/warm|Loader|TrainStep|EndToEnd)",
                "--benchmark_repetitions=3", "--benchmark_out=" + out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, "rb") as f:
            raw = f.read()
        self.assertNotIn(b"NaN", raw)
        self.assertNotIn(b"Infinity", raw)
        doc = strict_json(out)
        self.assertTrue([x for x in doc["benchmarks"] if x.get("aggregate_name") == "cv"])
        node = shutil.which("node")
        if node:  # github-action-benchmark reads the file with Node's JSON.parse
            p = run(node, "-e", "JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'))", out)
            self.assertEqual(p.returncode, 0, p.stderr)

    def test_no_counter_for_what_was_not_measured(self):
        out = self.out("counters.json")
        r = run(ARGS.pipebench, "--data=" + self.good, *FAST,
                "--benchmark_filter=BM_(Loader|TrainStep/emulated)", "--benchmark_out=" + out)
        self.assertEqual(r.returncode, 0, r.stderr)
        for x in rows(strict_json(out)):
            self.assertNotIn("h2d_ms", x)        # the loader made no H2D copy
            self.assertNotIn("compute_gflop", x)  # an emulated step has no FLOPs

    def test_dataset_smaller_than_a_batch_runs_the_loader_cases(self):
        tiny = self.out("tiny")
        r = run(ARGS.pipebench_data, "synthetic", tiny, "--count", "10", "--classes", "2",
                "--width", "160", "--height", "120")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = self.out("tiny.json")
        r = run(ARGS.pipebench, "--data=" + tiny, "--batch=64", "--steps=3", "--workers=1",
                "--size=96", "--benchmark_filter=BM_(Loader|EndToEnd)", "--benchmark_out=" + out)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = strict_json(out)
        self.assertIs(doc["context"]["drop_last"], False)
        for x in rows(doc):
            self.assertFalse(x.get("error_occurred"), x)
            # 10 images per batch, not 64: items/s counts samples the workers produced in
            # the timed window (bench/run/loader_util.h LoaderWindow). That is one short batch
            # of 10 per consumed batch, fewer when the loop drew on batches prefetched
            # before it started, more by at most the prefetch depth (2 batches) that the
            # workers refill while the 3 steps run: at most 10 * (3 + 2) / 3 per iteration.
            # A 64-image batch would give 64 or more.
            per_iteration = x["items_per_second"] * x["real_time"] / 1e3
            self.assertGreater(per_iteration, 1)
            self.assertLessEqual(per_iteration, 10 * (3 + 2) / 3 + 0.01)

    def test_progress_line_on_a_terminal_only(self):
        # On a pseudo-terminal (script -q), stderr carries "[done/total] ..." lines;
        # in a pipe, or with --quiet, none.
        if shutil.which("script") is None:
            self.skipTest("no `script` (util-linux) for a pseudo-terminal")
        args = [ARGS.pipebench, "--data=" + self.good, *FAST,
                "--benchmark_filter=BM_(Read/files/warm|Decode/turbo_full|Loader)"]
        log = self.out("tty.log")
        r = run("script", "-qec", " ".join(shlex.quote(a) for a in args), log)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(log, "rb") as f:
            tty = f.read().decode("utf-8", "replace")
        self.assertRegex(tty, r"\[1/4\] \d+ s, about .* left; next: BM_Decode/turbo_full")
        self.assertIn("[3/4]", tty)
        piped = run(*args)
        self.assertNotIn(b"[1/4]", piped.stderr)
        quiet = self.out("quiet.log")
        run("script", "-qec", " ".join(shlex.quote(a) for a in args + ["--quiet"]), quiet)
        with open(quiet, "rb") as f:
            self.assertNotIn(b"[1/4]", f.read())

    def test_unwritable_results_exit_4_naming_the_path(self):
        r = run(ARGS.pipebench, "--data=" + self.good, *FAST, "--benchmark_filter=BM_Read/files/warm",
                "--benchmark_out=/dev/full")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn(b"/dev/full", r.stderr)

    def test_unwritable_trace_fails_before_the_run(self):
        bad = os.path.join(self.tmp.name, "no", "such", "dir", "t.json")
        r = run(ARGS.pipebench, "--data=" + self.good, *FAST, "--benchmark_filter=BM_Read/files/warm",
                "--trace=" + bad)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(b"--trace", r.stderr)
        self.assertNotIn(b"BM_Read", r.stdout)

    def inspect(self, *args):
        return run(ARGS.pipebench_data, "inspect", *args)

    def test_inspect_counts_what_pipebench_loads(self):
        # One scanner (datasets/folder_scan.h): inspect's file count is pipebench's
        # dataset_images, bad files included; here with a PNG, a PNG named .jpg, a nested
        # folder and an empty class added.
        tree = self.out("mixed")
        shutil.copytree(self.bad, tree)
        png = base64.b64decode(PNG_2X1)
        for name in ["class_000/p.png", "class_001/png_named.jpg", "class_001/sub/deep/x.PNG"]:
            os.makedirs(os.path.dirname(os.path.join(tree, name)), exist_ok=True)
            with open(os.path.join(tree, name), "wb") as f:
                f.write(png)
        os.makedirs(os.path.join(tree, "empty_class"))
        out = self.out("mixed.json")
        r = run(ARGS.pipebench, "--data=" + tree, *FAST, "--benchmark_filter=BM_Read/files/warm",
                "--benchmark_out=" + out)
        self.assertEqual(r.returncode, 0, r.stderr)
        images = int(strict_json(out)["context"]["dataset_images"])
        self.assertEqual(images, 24 + 3 + 3)  # synthetic + 3 bad + 3 PNGs
        r = self.inspect(tree)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = r.stdout.decode("utf-8", "replace")
        self.assertIn("files:            %d image files in 2 classes" % images, text)
        self.assertIn("images:           %d images in 2 classes (read and decoded), 3 unreadable"
                      % (images - 3), text)
        self.assertIn("png 3 files", text)
        self.assertIn("png_named.jpg: png content, named as jpeg", text)
        self.assertIn("empty_class: class directory with no image file", text)
        for needle in ["megapixels:       p5 ", "file size:        p5 ", "slowest decodes:",
                       "subsampling:      4:2:0 24 images (100.0 %)",
                       "progressive 0 images (0.0 %) of 24 JPEGs"]:
            self.assertIn(needle, text)
        self.assertEqual(text.count(" ms  "), 5)  # the five slowest files

    def test_inspect_check_lists_bad_files_and_exits_1(self):
        r = self.inspect(self.bad, "--check")
        self.assertEqual(r.returncode, 1, r.stderr)
        lines = r.stdout.decode("utf-8", "replace").splitlines()
        self.assertEqual(lines[0], "checked 27 image files: 24 good, 3 bad in " + self.bad)
        bad = [line for line in lines if line.startswith("bad: ")]
        self.assertEqual(len(bad), 3, lines)
        self.assertIn("._resource.jpg: not an image", " ".join(bad))
        self.assertIn("AppleDouble", " ".join(bad))
        self.assertIn("truncated.jpg: truncated image", " ".join(bad))
        self.assertIn("caf\ufffd.jpg: not an image", " ".join(bad))
        r = self.inspect(self.good, "--check")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode(), "checked 24 image files: 24 good, 0 bad in %s\n"
                         % self.good)

    def test_relative_benchmark_out_is_the_callers(self):
        cwd = self.out("caller")
        os.makedirs(cwd, exist_ok=True)
        r = run(ARGS.pipebench, "--data=" + self.good, *FAST, "--benchmark_filter=BM_Read/files/warm",
                "--benchmark_out=rel.json", cwd=cwd)
        self.assertEqual(r.returncode, 0, r.stderr)
        strict_json(os.path.join(cwd, "rel.json"))
        self.assertEqual([f for f in os.listdir(cwd) if f != "rel.json"], [])  # no temp left


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--pipebench", required=True)
    p.add_argument("--pipebench-data", required=True)
    ARGS, rest = p.parse_known_args()
    ARGS.pipebench = os.path.abspath(ARGS.pipebench)
    ARGS.pipebench_data = os.path.abspath(ARGS.pipebench_data)
    sys.exit(run_tests(rest))
