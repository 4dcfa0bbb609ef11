"""scripts/gpu-suite.sh from a real bundle (scripts/bundle.sh into a temporary folder, from
this build) on a machine without a GPU, and scripts/gpu_suite_summary.py on hand-made and
real runs:

- without nvidia-smi: exit 0, summary.md says every step was skipped and why, at most 8
  files, nothing else written (its temporary folder removed);
- with a stand-in nvidia-smi that lists a GPU: the suite makes its synthetic dataset, asks
  pipebench, which says "CUDA cases not run", and skips the rest with that reason;
- --dry-run: every command, none run, nothing written; each pipebench run names --baseline,
  both recipes with both baselines, the sanitizer pass, the reports, the H2D peak, and the
  steps' time bounds sum to at most the 540 s limit;
- bad arguments and a missing bundle: exit 2;
- scripts/cnn_torch_check.py from the bundle: --init-only (its own hash of the initial
  weights against cnn_dump's, bit for bit, no device) passes and catches a weight one unit in
  the last place off and a wrong layer; without PyTorch or a device it exits 77 with one line;
- the figures: H2D pinned against the peak and against pageable, TFLOP/s, the device
  operators, the verdict from pipebench-report of a real (emulated) run that is
  compute-bound at one worker, the tests and the sanitizer from a hand-made tests.log.

Everything is written under temporary folders. Skips (77) without patchelf, ldd or readelf,
for a build other than Release (as tests/scripts/bundle_test.py), and on a machine whose
nvidia-smi lists a GPU (the suite would run for minutes there)."""
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

ARGS = None
RECIPES = ("imagenet_train", "deit_train")
BASELINES = ("cuda", "cuda:cnn")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def files_under(path):
    return sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs)


class GpuSuite(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="pipebench-gpu-suite-test-")
        cls.bundle = os.path.join(cls.tmp, "bundle")
        made = subprocess.run([os.path.join(ARGS.repo, "scripts", "bundle.sh"), cls.bundle, "--build", ARGS.build],
                              capture_output=True, text=True)
        cls.made = made
        cls.suite = os.path.join(cls.bundle, "gpu-suite.sh")
        # A PATH without nvidia-smi (this machine has none; the class is skipped where one is).
        cls.empty_bin = os.path.join(cls.tmp, "nobin")
        os.makedirs(cls.empty_bin)
        cls.path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                                   if p and not os.path.exists(os.path.join(p, "nvidia-smi")))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_suite(self, *args, path=None, tmpdir=None, timeout=300):
        env = dict(os.environ, PATH=path or self.path, LD_LIBRARY_PATH="")
        if tmpdir:
            env["TMPDIR"] = tmpdir
        return subprocess.run([self.suite, *args], capture_output=True, text=True, env=env,
                              cwd=self.tmp, timeout=timeout)

    def fresh(self, name):
        d = os.path.join(self.tmp, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d

    def test_bundle_ships_the_suite(self):
        self.assertEqual(self.made.returncode, 0, self.made.stdout + self.made.stderr)
        self.assertTrue(os.access(self.suite, os.X_OK))
        self.assertTrue(os.path.isfile(os.path.join(self.bundle, "scripts", "gpu_suite_summary.py")))
        self.assertTrue(os.path.isfile(os.path.join(self.bundle, "scripts", "cnn_torch_check.py")))
        r = subprocess.run([os.path.join(self.bundle, "tests", "run-gpu-tests.sh"), "--help"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        for opt in ("--sanitizer-only", "--tests-only", "--timeout"):
            self.assertIn(opt, r.stdout)

    def test_without_nvidia_smi_skips_everything_and_says_why(self):
        out = os.path.join(self.fresh("nogpu"), "out")
        t = self.fresh("nogpu-tmp")
        r = self.run_suite("--out", out, tmpdir=t)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        files = files_under(out)
        self.assertEqual(files, ["summary.md"])
        self.assertEqual(os.listdir(t), [], "its temporary folder is removed")
        s = read(os.path.join(out, "summary.md"))
        self.assertIn("Nothing ran on a GPU", s)
        self.assertIn("nvidia-smi not found", s)
        for step in ("data", "tests", "sanitizer", "torch", "stage"):
            self.assertRegex(s, rf"\| {step} \| skipped \| 0 \| no GPU")
        for recipe in RECIPES:
            for b in BASELINES:
                self.assertIn(f"| e2e {recipe} --baseline={b} | skipped |", s)

    def test_pipebench_without_a_device_skips_with_its_reason(self):
        fake = self.fresh("fakebin")
        smi = os.path.join(fake, "nvidia-smi")
        write(smi, "#!/bin/sh\necho 'GPU 0: NVIDIA Stand-in (UUID: GPU-0)'\n")
        os.chmod(smi, 0o755)
        out = os.path.join(self.fresh("fake"), "out")
        t = self.fresh("fake-tmp")
        r = self.run_suite("--out", out, "--count", "6", path=fake + os.pathsep + self.path, tmpdir=t)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertLessEqual(len(files_under(out)), 8)
        self.assertEqual(os.listdir(t), [])
        s = read(os.path.join(out, "summary.md"))
        self.assertIn("GPU 0: NVIDIA Stand-in", s)
        self.assertRegex(s, r"\| data \| made \| \d+ \| 6 synthetic JPEGs")
        self.assertRegex(s, r"\| gpu \| skipped \| \d+ \| pipebench: ")
        self.assertIn("Nothing ran on a GPU: no usable GPU", s)
        for step in ("tests", "sanitizer", "stage"):
            self.assertRegex(s, rf"\| {step} \| skipped \| 0 \| no usable GPU: ")

    def test_dry_run_lists_every_command_and_runs_none(self):
        out = os.path.join(self.tmp, "dry-out")
        r = self.run_suite("--dry-run", "--out", out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertFalse(os.path.exists(out), "a dry run writes nothing")
        cmds = [l[2:] for l in r.stdout.splitlines() if l.startswith("+ ")]
        runs = [c for c in cmds if "/bin/pipebench " in c and "--benchmark_out=" in c]
        self.assertEqual(len(runs), 1 + len(RECIPES) * len(BASELINES), "\n".join(cmds))
        for c in runs:
            self.assertRegex(c, r" --baseline=\S+ ", c)
        for recipe in RECIPES:
            for b in BASELINES:
                e2e = [c for c in runs if f"--recipe={recipe} " in c and f"--baseline={b} " in c
                       and "--workers=1,2,4,8,16 " in c]
                self.assertEqual(len(e2e), 1, f"{recipe} {b}")
                self.assertIn(f"^BM_EndToEnd/{recipe}/{b}/workers:", e2e[0])
                self.assertIn("^BM_TrainStep/", e2e[0])
                self.assertTrue(any("pipebench-report" in c and f"e2e-{recipe}-{b.replace(':', '_')}.json" in c
                                    for c in cmds))
        stage = [c for c in runs if "stage.json" in c][0]
        self.assertIn("^BM_H2D/", stage)
        self.assertIn("^BM_Decode/(turbo_full|nvjpeg)", stage)
        self.assertIn("--baseline=cuda ", stage)
        self.assertTrue(any("run-gpu-tests.sh --tests-only" in c for c in cmds))
        self.assertTrue(any("run-gpu-tests.sh --sanitizer-only" in c for c in cmds))
        self.assertTrue(any("cnn_torch_check.py --bundle" in c for c in cmds))
        self.assertTrue(any("pipebench-data synthetic" in c and "--width 500 --height 375" in c
                            and "--quality 90" in c for c in cmds))
        bounds = [int(m.group(1)) for c in cmds for m in [re.match(r"timeout (\d+) ", c)] if m]
        self.assertLessEqual(sum(bounds) + 5 * len(RECIPES) * len(BASELINES), 540, bounds)
        # The JSONs, reports.md, tests.log and summary.md: at most 8 files.
        outputs = set(re.findall(r"--benchmark_out=(\S+)", r.stdout)) | set(re.findall(r">> (\S+)", r.stdout))
        self.assertLessEqual(len(outputs) + 1, 8, outputs)

    def torch_check(self, *args):
        script = os.path.join(self.bundle, "scripts", "cnn_torch_check.py")
        if not os.access(os.path.join(self.bundle, "tests", "cnn_dump"), os.X_OK):
            self.skipTest("cnn_dump not built in " + ARGS.build)
        return subprocess.run([sys.executable, script, "--bundle", self.bundle, *args], capture_output=True,
                              text=True, timeout=120, env=dict(os.environ, LD_LIBRARY_PATH=""))

    def test_torch_check_initial_weights_and_its_skip(self):
        r = self.torch_check("--init-only")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("cnn_torch_check: model: 7 layers as the seed's, initial weights the documented hash", r.stdout)
        self.assertIn("cnn_torch_check: PASS (initial weights only)", r.stdout)
        r = self.torch_check("--init-only", "--size", "224", "--n", "1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("9 layers", r.stdout)
        # Here: no PyTorch, or no device for it, or none for cnn_dump: one line, 77.
        r = self.torch_check()
        self.assertEqual(r.returncode, 77, r.stdout + r.stderr)
        lines = r.stdout.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stdout)
        self.assertTrue(lines[0].startswith("cnn_torch_check: skipped: "), lines[0])

    def test_torch_check_catches_a_wrong_model(self):
        import importlib.util
        spec = importlib.util.spec_from_file_location("cnn_torch_check",
                                                      os.path.join(self.bundle, "scripts", "cnn_torch_check.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        dump = os.path.join(self.bundle, "tests", "cnn_dump")
        if not os.access(dump, os.X_OK):
            self.skipTest("cnn_dump not built in " + ARGS.build)
        folder = self.fresh("dump")
        r = subprocess.run([dump, folder, "--init-only"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        manifest = json.loads(read(os.path.join(folder, "manifest.json")))
        self.assertEqual(mod.check_model(folder, manifest), [])
        path = os.path.join(folder, "w0_3.f32")
        with open(path, "r+b") as f:  # one weight off by one unit in the last place
            f.seek(4 * 5)
            v = f.read(4)
            f.seek(4 * 5)
            f.write((int.from_bytes(v, "little") ^ 1).to_bytes(4, "little"))
        self.assertEqual(mod.check_model(folder, manifest),
                         ["layer 3: 1 of 8100 initial weights differ from the hash"])
        manifest["layers"][0]["relu"] = False
        self.assertIn("layers differ from the seed's model", mod.check_model(folder, manifest)[0])

    def stand_in_bundle(self):
        root = self.fresh("standin")
        b = os.path.join(root, "bundle")
        for d in ("bin", "tests", "scripts"):
            os.makedirs(os.path.join(b, d))
        files = {"bin/pipebench": STAND_IN_PIPEBENCH, "bin/pipebench-report": STAND_IN_REPORT,
                 "bin/pipebench-data": STAND_IN_DATA, "tests/run-gpu-tests.sh": STAND_IN_TESTS,
                 "scripts/cnn_torch_check.py": STAND_IN_TORCH}
        for rel, text in files.items():
            write(os.path.join(b, rel), text)
            os.chmod(os.path.join(b, rel), 0o755)
        shutil.copy(os.path.join(ARGS.repo, "scripts", "gpu_suite_summary.py"), os.path.join(b, "scripts"))
        cuda = os.path.join(root, "cuda")
        os.makedirs(os.path.join(cuda, "bin"))
        write(os.path.join(cuda, "bin", "compute-sanitizer"), "#!/bin/sh\n")
        os.chmod(os.path.join(cuda, "bin", "compute-sanitizer"), 0o755)
        fake = os.path.join(root, "fakebin")
        os.makedirs(fake)
        write(os.path.join(fake, "nvidia-smi"), "#!/bin/sh\necho 'GPU 0: NVIDIA Stand-in (UUID: GPU-0)'\n")
        os.chmod(os.path.join(fake, "nvidia-smi"), 0o755)
        return root, b, cuda, fake

    def run_stand_in(self, fail=""):
        root, b, cuda, fake = self.stand_in_bundle()
        log = os.path.join(root, "calls.log")
        out = os.path.join(root, "out")
        env = dict(os.environ, PATH=fake + os.pathsep + self.path, CUDA_HOME=cuda, STAND_IN_LOG=log,
                   STAND_IN_FAIL=fail, TMPDIR=self.fresh("standin-tmp"))
        r = subprocess.run([self.suite, "--bundle", b, "--out", out, "--count", "4"], capture_output=True,
                           text=True, env=env, cwd=root, timeout=300)
        calls = read(log).splitlines() if os.path.exists(log) else []
        return r, out, calls, env["TMPDIR"]

    def test_the_gpu_path_with_stand_ins(self):
        r, out, calls, tmp = self.run_stand_in()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(files_under(out), sorted(
            ["summary.md", "tests.log", "reports.md", "stage.json"] +
            [f"e2e-{rc}-{b.replace(':', '_')}.json" for rc in RECIPES for b in BASELINES]))
        self.assertEqual(os.listdir(tmp), [], "its temporary folder (the dataset) is removed")
        runs = [c for c in calls if c.startswith("pipebench ") and "--benchmark_out=" in c]
        self.assertEqual(len(runs), 5, calls)
        for c in runs:
            self.assertRegex(c, r" --baseline=cuda(:cnn)? ")
            self.assertIn("--presize=off", c)
        self.assertTrue(any(c.startswith("run-gpu-tests.sh --tests-only") for c in calls))
        self.assertTrue(any(c.startswith("run-gpu-tests.sh --sanitizer-only") for c in calls))
        self.assertIn("cnn_torch_check", calls)
        self.assertEqual(sum(1 for c in calls if c.startswith("pipebench-report ") and "--json" not in c), 4)
        for step in ("stage", "tests", "sanitizer", "torch"):
            self.assertRegex(r.stdout, rf"gpu-suite: {step}: passed \(\d+ s; elapsed \d+ s of 540\)")
        s = read(os.path.join(out, "summary.md"))
        self.assertNotIn("Nothing ran on a GPU", s)
        for rc in RECIPES:
            for b in BASELINES:
                self.assertIn(f"| e2e {rc} --baseline={b} | passed |", s)
                # The stand-in report finds no sweep: the figures come from the JSON, said so.
                self.assertIn(f"| {rc} | {b} | compute-bound from 8 workers | 8 | 100.0 |", s)
        self.assertIn("pipebench-report found no sweep although the run holds 5 BM_EndToEnd rows", s)
        self.assertIn("**50.0 GB/s**", s)
        self.assertIn("| 64 | 20.0 | 20.0 | 46.0 | 46.0 | 92.0 | 2.30 | 2.30 |", s)
        self.assertIn("| cuda:cnn | 5.00 | 5.00 | 100.0 | 20.0 |", s)
        self.assertIn("- cuda_test: 0 errors", s)
        self.assertIn("Clean: **yes**", s)
        self.assertIn("- cnn_torch_check: PASS: stand-in", s)
        self.assertIn("## deit_train, --baseline=cuda:cnn", read(os.path.join(out, "reports.md")))

    def test_a_failed_run_fails_the_suite_and_the_rest_still_runs(self):
        r, out, calls, _ = self.run_stand_in(fail="imagenet_train/cuda:cnn")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        s = read(os.path.join(out, "summary.md"))
        self.assertIn("| e2e imagenet_train --baseline=cuda:cnn | failed (exit 3) |", s)
        self.assertIn("| e2e deit_train --baseline=cuda:cnn | passed |", s)
        self.assertIn("## What pipebench said", s)
        self.assertIn("e2e-imagenet_train-cuda_cnn:\n\n- pipebench: 1 case(s) reported an error", s)
        self.assertLessEqual(len(files_under(out)), 8)

    def test_bad_arguments(self):
        for args in (["--count", "many"], ["--workers", "1;2"], ["--frobnicate"], ["--data", "/nonexistent/x"]):
            r = self.run_suite(*args, "--out", os.path.join(self.tmp, "bad"))
            self.assertEqual(r.returncode, 2, f"{args}: {r.stdout}{r.stderr}")
        r = subprocess.run([os.path.join(ARGS.repo, "scripts", "gpu-suite.sh"), "--dry-run"], capture_output=True,
                           text=True, cwd=self.tmp)
        self.assertEqual(r.returncode, 2)
        self.assertIn("no bundle", r.stderr)


# Stand-ins for a bundle on a GPU node: the suite's whole path runs against them (what each
# is called with is logged), with the real gpu_suite_summary.py.
STAND_IN_PIPEBENCH = r"""#!/usr/bin/env python3
import json, os, re, sys
args = sys.argv[1:]
with open(os.environ["STAND_IN_LOG"], "a") as log:
    log.write("pipebench " + " ".join(args) + "\n")
opt = dict(a[2:].split("=", 1) for a in args if a.startswith("--") and "=" in a)
if "benchmark_list_tests" in opt:
    print("BM_H2D/pageable/sync/batch:32")
    sys.exit(0)
baseline, recipe = opt["baseline"], opt.get("recipe", "imagenet_train")
fail = os.environ.get("STAND_IN_FAIL", "")
if fail and fail == recipe + "/" + baseline:
    print("pipebench: 1 case(s) reported an error", file=sys.stderr)
    sys.exit(3)
def row(name, family, t, unit="us", **kw):
    key = {"family": family, "name": name, "baseline": kw.pop("baseline", ""), "op": kw.pop("op", ""),
           "detail": kw.pop("detail", ""), "workers": kw.get("workers", 0), "variant": "", "callbacks": ""}
    return dict({"name": name, "run_type": "iteration", "real_time": t, "time_unit": unit, "key": key}, **kw)
rows = [row("BM_TrainStep/" + baseline, "TrainStep", 5.0, "ms", baseline=baseline, compute_ms=5.0,
            compute_gflop=100.0)]
if "H2D" in opt["benchmark_filter"]:
    rows.append(row("BM_H2D/pinned/async/peak:256MiB", "H2D", 268435456 / 50e9 * 1e6, op="pinned",
                    detail="async/peak:256MiB", batch_bytes=268435456))
    for mem, rate in (("pinned", 46e9), ("pageable", 20e9)):
        for mode in ("sync", "async"):
            rows.append(row(f"BM_H2D/{mem}/{mode}/batch:64", "H2D", 38535168 / rate * 1e6, op=mem,
                            detail=f"{mode}/batch:64", batch_bytes=38535168))
else:
    for w in map(int, opt["workers"].split(",")):
        data = 40.0 / w
        rows.append(row(f"BM_EndToEnd/{recipe}/{baseline}/workers:{w}", "EndToEnd", max(data, 5.0), "ms",
                        baseline=baseline, workers=w, data_ms=data, compute_ms=5.0,
                        au_pct=100 * 5.0 / max(data, 5.0)))
with open(opt["benchmark_out"], "w") as f:
    json.dump({"context": {"recipe": recipe}, "benchmarks": rows}, f)
"""
STAND_IN_REPORT = r"""#!/bin/sh
echo "pipebench-report $*" >> "$STAND_IN_LOG"
[ "$1" = --json ] && { echo '{"sweep": []}'; exit 0; }
echo "pipebench verdict of $1"
"""
STAND_IN_DATA = r"""#!/bin/sh
echo "pipebench-data $*" >> "$STAND_IN_LOG"
mkdir -p "$2/class_000" && touch "$2/class_000/img_000000.jpg"
"""
STAND_IN_TESTS = r"""#!/bin/sh
echo "run-gpu-tests.sh $*" >> "$STAND_IN_LOG"
case "$*" in
  *--sanitizer-only*) printf '== cuda_test under compute-sanitizer memcheck\n========= ERROR SUMMARY: 0 errors\n' ;;
  *) printf '== cuda_test\n[  PASSED  ] 9 tests.\n' ;;
esac
"""
STAND_IN_TORCH = r"""#!/usr/bin/env python3
import os
with open(os.environ["STAND_IN_LOG"], "a") as log:
    log.write("cnn_torch_check\n")
print("cnn_torch_check: PASS: stand-in")
"""


def row(name, family, real_time, unit="us", **fields):
    k = {"family": family, "name": name, "op": fields.pop("op", ""), "detail": fields.pop("detail", ""),
         "baseline": fields.pop("baseline", ""), "workers": fields.get("workers", 0)}
    return dict({"name": name, "run_type": "iteration", "real_time": real_time, "time_unit": unit, "key": k}, **fields)


class Figures(unittest.TestCase):
    """gpu_suite_summary.py on hand-made files with hand-worked figures."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="pipebench-gpu-summary-test-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def summary(self, out, report=""):
        r = subprocess.run([sys.executable, os.path.join(ARGS.repo, "scripts", "gpu_suite_summary.py"), "--out", out,
                            "--report", report], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_h2d_steps_and_device_ops(self):
        out = os.path.join(self.tmp, "stage")
        os.makedirs(out)
        mb = 1e6
        rows = [
            # 256 MiB in 5368.70912 us: 50 GB/s, the peak.
            row("BM_H2D/pinned/async/peak:256MiB", "H2D", 268435456 / 50e9 * 1e6, op="pinned",
                detail="async/peak:256MiB", batch_bytes=268435456),
            # 40 MB batches: pinned async 45 GB/s (90 %), pinned sync 40, pageable 20 and 10.
            row("BM_H2D/pinned/async/batch:64", "H2D", 40 * mb / 45e9 * 1e6, op="pinned", detail="async/batch:64",
                batch_bytes=40 * mb),
            row("BM_H2D/pinned/sync/batch:64", "H2D", 40 * mb / 40e9 * 1e6, op="pinned", detail="sync/batch:64",
                batch_bytes=40 * mb),
            row("BM_H2D/pageable/async/batch:64", "H2D", 40 * mb / 20e9 * 1e6, op="pageable",
                detail="async/batch:64", batch_bytes=40 * mb),
            row("BM_H2D/pageable/sync/batch:64", "H2D", 40 * mb / 10e9 * 1e6, op="pageable",
                detail="sync/batch:64", batch_bytes=40 * mb),
            # 218.47 GFLOP in 5 ms: 43.7 TFLOP/s.
            row("BM_TrainStep/cuda", "TrainStep", 1.5, unit="ms", baseline="cuda", compute_ms=1.5,
                compute_gflop=24.0),
            row("BM_Transform/mixup/device/float32_nchw/batch:64", "Transform", 128.0, op="mixup",
                detail="device/float32_nchw/batch:64"),
            row("BM_Decode/turbo_full", "Decode", 1e6, op="turbo_full", items_per_second=250.0,
                us_per_image=3990.0, images_per_round=256),
            row("BM_Decode/nvjpeg/real_time", "Decode", 1e5, op="nvjpeg", items_per_second=2000.0,
                us_per_image=310.0, images_per_round=256),
        ]
        cnn = [row("BM_TrainStep/cuda:cnn", "TrainStep", 5.0, unit="ms", baseline="cuda:cnn", compute_ms=5.0,
                   compute_gflop=218.47)]
        write(os.path.join(out, "stage.json"), json.dumps({"context": {}, "benchmarks": rows}))
        write(os.path.join(out, "e2e-imagenet_train-cuda_cnn.json"),
              json.dumps({"context": {"recipe": "imagenet_train"}, "benchmarks": cnn}))
        s = self.summary(out)
        self.assertIn("**50.0 GB/s**", s)
        self.assertIn("| 64 | 10.0 | 20.0 | 40.0 | 45.0 | 90.0 | 4.00 | 2.25 |", s)
        self.assertIn("at every batch: **yes** (lowest 90.0 %)", s)
        self.assertIn("| cuda | 1.50 | 1.50 | 24.0 | 16.0 |", s)
        self.assertIn("| cuda:cnn | 5.00 | 5.00 | 218.5 | 43.7 |", s)
        self.assertIn("| mixup | device/float32_nchw/batch:64 | 128.0 | 2.000 |", s)
        self.assertIn("| imagenet_train | cuda:cnn | no sweep |", s)
        self.assertIn("| nvJPEG (GPU, one stream) | 2000 | 310 | 256 |", s)
        self.assertIn("| TurboJPEG (one core) | 250 | 3990 | 256 |", s)
        self.assertIn("nvJPEG decodes 8.0x the images per second of one TurboJPEG core", s)

    def test_tests_and_sanitizer_from_the_log(self):
        out = os.path.join(self.tmp, "log")
        os.makedirs(out)
        log = "\n".join([
            "+ run-gpu-tests.sh --tests-only", "== cuDNN 9 run-time libraries", "[  PASSED  ] 3 tests.",
            "== cuda_test", "[==========] 9 tests ran.", "[  PASSED  ] 7 tests.", "[  SKIPPED ] 2 tests, listed below:",
            "== loader_test", "[  PASSED  ] 4 tests.", "[  FAILED  ] Cuda.LoaderDeviceCopyHoldsTheHostBytes (12 ms)",
            "[  FAILED  ] Cuda.LoaderDeviceCopyHoldsTheHostBytes", "== compute-sanitizer --tool memcheck",
            "== cuda_test under compute-sanitizer memcheck", "========= ERROR SUMMARY: 0 errors",
            "== train_step_cnn_test under compute-sanitizer memcheck",
            "run-gpu-tests: train_step_cnn_test under compute-sanitizer timed out after 20 s",
            "== cnn_torch_check.py", "cnn_torch_check: skipped: no torch", ""])
        write(os.path.join(out, "tests.log"), log)
        s = self.summary(out)
        self.assertIn("| cuda_test | 7 | 2 | 0 |", s)
        self.assertIn("| loader_test | 4 | 0 | Cuda.LoaderDeviceCopyHoldsTheHostBytes |", s)
        self.assertIn("- cuda_test: 0 errors", s)
        self.assertIn("- train_step_cnn_test: timed out", s)
        self.assertIn("Clean: **no**", s)
        self.assertIn("- cnn_torch_check: skipped: no torch", s)

    def test_verdict_of_a_real_run(self):
        """An emulated run compute-bound at one worker (a 200 ms step, 4 images a batch)."""
        out = os.path.join(self.tmp, "real")
        data = os.path.join(self.tmp, "data")
        os.makedirs(out)
        r = subprocess.run([ARGS.pipebench_data, "synthetic", data, "--count", "8", "--classes", "2"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        json_path = os.path.join(out, "e2e-imagenet_train-emulated.json")
        r = subprocess.run([ARGS.pipebench, "--data=" + data, "--baseline=emulated", "--compute-ms=200", "--batch=4",
                            "--steps=3", "--workers=1", "--presize=off", "--quiet",
                            "--benchmark_filter=^BM_TrainStep/|^BM_EndToEnd/imagenet_train/emulated/workers:[0-9]+/iter",
                            "--benchmark_out=" + json_path], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        s = self.summary(out, ARGS.report)
        m = re.search(r"\| imagenet_train \| emulated \| compute-bound from 1 workers \| 1 \| ([\d.]+) \| 1: ([\d.]+) \|", s)
        self.assertIsNotNone(m, s)
        self.assertGreater(float(m.group(1)), 80)
        self.assertEqual(m.group(1), m.group(2))


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--repo", required=True)
    p.add_argument("--build", required=True)
    p.add_argument("--pipebench", required=True)
    p.add_argument("--pipebench-data", required=True)
    p.add_argument("--report", required=True)
    ARGS, rest = p.parse_known_args()
    missing = [t for t in ("patchelf", "ldd", "readelf") if shutil.which(t) is None]
    if missing:
        print(f"gpu_suite_test: skipped: {', '.join(missing)} not installed (apt-get install patchelf: "
              "scripts/setup.sh)")
        sys.exit(77)
    smi = shutil.which("nvidia-smi")
    if smi and subprocess.run([smi, "-L"], capture_output=True, text=True).stdout.startswith("GPU "):
        print("gpu_suite_test: skipped: this machine has a GPU (nvidia-smi -L): the suite would run for minutes; "
              "run the bundle's gpu-suite.sh itself")
        sys.exit(77)
    settings = {}
    cache = os.path.join(ARGS.build, "CMakeCache.txt")
    if os.path.exists(cache):
        for line in read(cache).splitlines():
            if ":" in line and "=" in line and not line.startswith(("#", "//")):
                k, v = line.split("=", 1)
                settings[k.split(":", 1)[0]] = v.strip()
    if settings.get("PIPEBENCH_SANITIZE") or settings.get("CMAKE_BUILD_TYPE", "Release") != "Release":
        print(f"gpu_suite_test: skipped: {ARGS.build} is a {settings.get('CMAKE_BUILD_TYPE')} build; "
              "the bundle is made from a Release build")
        sys.exit(77)
    sys.exit(run_tests(rest))
