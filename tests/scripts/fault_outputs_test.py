#!/usr/bin/python3
"""The fault matrix's rows about where pipebench writes and what it may not read
(tests/README.md, "Fault matrix"): outputs on /dev/full, on a full filesystem (a 64 KiB
tmpfs mounted here) and in folders a non-root user cannot write; a dataset file without
read permission, as a non-root user (setpriv to nobody); pipebench-data photos building
onto a tiny tmpfs from local packages (fake .debs made with dpkg-deb, so no network).
Never a crash (exit 134), hang, or silently lost result. Exit codes (bench/README.md):
0 every case ran; 1 Google Benchmark refused a flag (an --benchmark_out it cannot open);
2 bad flags, nothing run; 3 a case errored, results written; 4 results not written.

A test whose expectation pipebench does not meet yet is marked expectedFailure with the
bug it shows; fixing the bug turns it into an unexpected success (a failure): then remove
the mark.

usage: fault_outputs_test.py --pipebench BIN --pipebench-data BIN
Skips (77) when not run as root (mounting and setpriv need it).
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
FAST = ["--batch=8", "--steps=3", "--workers=1", "--benchmark_min_time=0.01", "--size=96",
        "--quiet"]
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


def run(*cmd, user=None, cwd=None):
    prefix = NOBODY if user == "nobody" else []
    return subprocess.run(prefix + list(cmd), capture_output=True, timeout=300, cwd=cwd)


def load_json(path):
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"))


class Mount:
    """A tmpfs of `size` at `path`, filled to the last byte when `fill`."""

    def __init__(self, path, size, fill=False):
        self.path, self.size, self.fill = path, size, fill

    def __enter__(self):
        os.makedirs(self.path, exist_ok=True)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.size}", "tmpfs", self.path],
                           capture_output=True)
        if r.returncode != 0:
            raise unittest.SkipTest("cannot mount a tmpfs here: " + r.stderr.decode(errors="replace"))
        os.chmod(self.path, 0o777)
        return self

    def fill_up(self):
        with open(os.path.join(self.path, "filler"), "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError:  # ENOSPC: full
                pass

    def __exit__(self, *exc):
        subprocess.run(["umount", self.path], check=False)


class Outputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        os.chmod(cls.tmp.name, 0o755)
        cls.data = os.path.join(cls.tmp.name, "set")
        r = run(ARGS.pipebench_data, "synthetic", cls.data, "--count", "24", "--classes", "2",
                "--width", "160", "--height", "120")
        assert r.returncode == 0, r.stderr
        for d, _, files in os.walk(cls.tmp.name):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o644)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, *parts):
        return os.path.join(self.tmp.name, *parts)

    def pipebench(self, *args, user=None):
        return run(ARGS.pipebench, "--data=" + self.data, *FAST, *args, user=user,
                   cwd=self.tmp.name)

    # ---- --trace ------------------------------------------------------------------------

    # A trace smaller than the stream's buffer (BM_Read writes few events) fails only at
    # close, which TraceRecorder::write never checks (measure/trace.cpp): exit 0 and
    # "trace written to /dev/full". A larger one (BM_Loader) is caught today.
    def test_small_trace_to_dev_full_exits_4_and_keeps_the_results(self):
        out = self.path("dev_full_results.json")
        r = self.pipebench("--benchmark_filter=BM_Read/files/warm", "--benchmark_out=" + out,
                           "--trace=/dev/full")
        self.assertEqual(len(load_json(out)["benchmarks"]), 1)  # written before the trace
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn(b"/dev/full", r.stderr)

    def test_large_trace_to_dev_full_exits_4_and_keeps_the_results(self):
        out = self.path("dev_full_loader.json")
        r = self.pipebench("--benchmark_filter=BM_Loader", "--benchmark_out=" + out,
                           "--trace=/dev/full")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn(b"/dev/full", r.stderr)
        self.assertEqual(len(load_json(out)["benchmarks"]), 1)

    def test_trace_on_a_full_disk_exits_4_and_keeps_the_results(self):
        out = self.path("full_trace_results.json")
        with Mount(self.path("mnt_trace"), "64k") as m:
            m.fill_up()
            trace = os.path.join(m.path, "t.json")
            r = self.pipebench("--benchmark_filter=BM_Loader", "--benchmark_out=" + out,
                               "--trace=" + trace)
            self.assertEqual(r.returncode, 4, r.stderr)
            self.assertIn(trace.encode(), r.stderr)
        self.assertEqual(len(load_json(out)["benchmarks"]), 1)

    def test_trace_on_a_full_disk_leaves_no_partial_file(self):
        with Mount(self.path("mnt_trace2"), "64k") as m:
            m.fill_up()
            trace = os.path.join(m.path, "t.json")
            self.pipebench("--benchmark_filter=BM_Loader", "--trace=" + trace)
            self.assertFalse(os.path.exists(trace), "a partial trace file was left")

    def test_trace_into_an_unwritable_folder_fails_before_the_run(self):
        ro = self.path("ro_trace")
        os.makedirs(ro, mode=0o555)
        r = self.pipebench("--benchmark_filter=BM_Loader", "--trace=" + os.path.join(ro, "t.json"),
                           user="nobody")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(b"--trace", r.stderr)
        self.assertIn(b"Permission denied", r.stderr)
        self.assertNotIn(b"BM_Loader", r.stdout)

    # ---- --benchmark_out ---------------------------------------------------------------

    def test_results_into_a_missing_folder_exit_2_before_the_run(self):
        out = self.path("no", "such", "dir", "r.json")
        r = self.pipebench("--benchmark_filter=BM_Read/files/warm", "--benchmark_out=" + out)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(out.encode(), r.stderr)
        self.assertNotIn(b"BM_Read", r.stdout)

    def test_results_into_an_unwritable_folder_exit_2_before_the_run(self):
        ro = self.path("ro_out")
        os.makedirs(ro, mode=0o555)
        out = os.path.join(ro, "r.json")
        r = self.pipebench("--benchmark_filter=BM_Read/files/warm", "--benchmark_out=" + out,
                           user="nobody")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(out.encode(), r.stderr)

    def test_results_on_a_full_disk_exit_4_naming_the_path(self):
        with Mount(self.path("mnt_out"), "64k") as m:
            m.fill_up()
            out = os.path.join(m.path, "r.json")
            r = self.pipebench("--benchmark_filter=BM_Read/files/warm", "--benchmark_out=" + out)
            self.assertEqual(r.returncode, 4, r.stderr)
            self.assertIn(out.encode(), r.stderr)
            self.assertIn(b"No space left", r.stderr)
            self.assertEqual(sorted(os.listdir(m.path)), ["filler"],
                             "a temporary or empty results file was left")

    def test_results_on_a_full_disk_keep_the_previous_file(self):
        with Mount(self.path("mnt_prev"), "64k") as m:
            out = os.path.join(m.path, "r.json")
            with open(out, "w") as f:
                f.write('{"previous": true}')
            m.fill_up()
            self.pipebench("--benchmark_filter=BM_Read/files/warm", "--benchmark_out=" + out)
            with open(out) as f:
                self.assertEqual(f.read(), '{"previous": true}')

    # ---- a dataset file without read permission, as a non-root user --------------------

    def unreadable_set(self, name):
        root = self.path(name)
        shutil.copytree(self.data, root)
        for d, _, files in os.walk(root):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o644)
        cls1 = os.path.join(root, "class_001")
        bad = os.path.join(cls1, sorted(os.listdir(cls1))[0])
        os.chmod(bad, 0)
        return root, bad

    def test_unreadable_file_skip_and_stop_in_the_loader_families(self):
        root, bad = self.unreadable_set("unreadable_loader")
        # The dataset's bad file, not the presized copy (its cache folder is not writable
        # for nobody, and that case then errors on its own): the main sweep of BM_EndToEnd.
        filt = ("--benchmark_filter=BM_(Read/files/warm|Sample/imagenet_train$|Loader|"
                "EndToEnd/imagenet_train/emulated)")
        args = ["--data=" + root, filt]
        skip = run(ARGS.pipebench, *FAST, *args, "--on-error=skip", user="nobody",
                   cwd=self.tmp.name)
        self.assertEqual(skip.returncode, 0, skip.stderr)
        self.assertIn(b"skipped", skip.stderr)
        self.assertIn(bad.encode() + b": cannot open: Permission denied", skip.stderr)
        stop = run(ARGS.pipebench, *FAST, *args, "--on-error=stop", user="nobody",
                   cwd=self.tmp.name)
        self.assertEqual(stop.returncode, 3, stop.stderr)
        self.assertIn(b"Permission denied", stop.stdout + stop.stderr)

    def test_unreadable_file_in_decode_and_cold_read(self):
        root, _ = self.unreadable_set("unreadable_decode")
        for case in ("BM_Decode/turbo_full", "BM_Read/files/cold"):
            r = run(ARGS.pipebench, *FAST, "--data=" + root, "--benchmark_filter=" + case,
                    "--on-error=skip", user="nobody", cwd=self.tmp.name)
            self.assertEqual(r.returncode, 0, case + ": " + r.stderr.decode(errors="replace"))

    # ---- pipebench-data photos onto a tiny filesystem ------------------------------------

    def fake_debs(self, scratch):
        """One .deb per package of kPhotoPackages (datasets/photos.h) holding a 1600 x 1200
        JPEG of about 430 KB in usr/share/wallpapers, so nothing is downloaded."""
        src = self.path("photo_src")
        r = run(ARGS.pipebench_data, "synthetic", src, "--count", "3", "--classes", "1",
                "--width", "1600", "--height", "1200")
        self.assertEqual(r.returncode, 0, r.stderr)
        jpegs = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(src) for f in fs)
        os.makedirs(scratch, exist_ok=True)
        for pkg, jpeg in zip(["mate-backgrounds", "ukui-wallpapers", "plasma-workspace-wallpapers"],
                             jpegs):
            tree = self.path("deb_" + pkg)
            os.makedirs(os.path.join(tree, "DEBIAN"))
            os.makedirs(os.path.join(tree, "usr", "share", "wallpapers", pkg))
            shutil.copy(jpeg, os.path.join(tree, "usr", "share", "wallpapers", pkg, "a.jpg"))
            with open(os.path.join(tree, "DEBIAN", "control"), "w") as f:
                f.write(f"Package: {pkg}\nVersion: 1.0\nArchitecture: all\n"
                        "Maintainer: test <t@example.org>\nDescription: test\n")
            r = run("dpkg-deb", "--build", tree, os.path.join(scratch, f"{pkg}_1.0_all.deb"))
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_photos_onto_a_full_disk_fail_naming_it_and_leave_no_temporaries(self):
        if not (shutil.which("dpkg-deb") and shutil.which("dpkg") and shutil.which("apt-get")):
            self.skipTest("needs dpkg-deb, dpkg and apt-get (Debian)")
        scratch = self.path("photo_scratch")
        self.fake_debs(scratch)
        with Mount(self.path("mnt_photos"), "256k") as m:
            r = run(ARGS.pipebench_data, "photos", m.path, "--scratch", scratch, "--threads", "1")
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn(m.path.encode(), r.stderr)
            self.assertIn(b"No space left", r.stderr)
            self.assertEqual([n for n in os.listdir(m.path) if n.endswith(".tmp")], [],
                             "temporary folders left behind")
        # The same packages onto a disk with room: both sets built (the failure left the
        # scratch folder usable).
        out = self.path("photos_ok")
        r = run(ARGS.pipebench_data, "photos", out, "--scratch", scratch, "--threads", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.isdir(os.path.join(out, "photos-in")))


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--pipebench", required=True)
    p.add_argument("--pipebench-data", required=True)
    ARGS, rest = p.parse_known_args()
    ARGS.pipebench = os.path.abspath(ARGS.pipebench)  # nobody runs them from the scratch folder
    ARGS.pipebench_data = os.path.abspath(ARGS.pipebench_data)
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("skipped: needs root (tmpfs mounts) and setpriv (to run as nobody)")
        return 77
    return run_tests(rest)


if __name__ == "__main__":
    sys.exit(main())
