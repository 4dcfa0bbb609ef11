"""scripts/gpu-suite.sh from a real bundle (scripts/bundle.sh into a temporary folder, from
this build) on a machine without a GPU, and scripts/gpu_suite_summary.py on hand-made and
real runs:

- without nvidia-smi: exit 0, summary.md says every step was skipped and why, nothing but
  summary.md and console.log written (its temporary folder removed);
- with a stand-in nvidia-smi that lists GPUs: the suite finds the libraries (ldd clean, the
  cuDNN versions said), makes its synthetic dataset, asks pipebench, which says "CUDA cases
  not run": a listed GPU that pipebench cannot use fails the suite (exit 1) with that reason;
- --dry-run: every command, none run, nothing written; each pipebench run names --baseline,
  both recipes with both baselines, the sanitizer pass last, the reports, the H2D peak; the
  figures that matter most first, and their steps' time bounds sum to at most the 420 s
  limit;
- bad arguments and a missing bundle: exit 2;
- the whole GPU path against stand-in binaries (what each is called with logged): every
  file, the figures; a failed run fails the suite and the rest still runs; killed mid-step
  (SIGTERM, and SIGKILL) the suite leaves summary.md and the step's output so far in
  console.log, and (SIGTERM) no process of the step behind;
- run-gpu-tests.sh: compute-sanitizer's "Device not supported" is one line and exit 77; an
  outer timeout ends a test binary under the script's own --timeout (timeout --foreground:
  no orphan holding the pipe);
- scripts/cnn_torch_check.py from the bundle: --init-only (its own hash of the initial
  weights against cnn_dump's, bit for bit, no device) passes and catches a weight one unit in
  the last place off and a wrong layer; without PyTorch or a device it exits 77 with one line;
- the figures: H2D pinned against the peak and against pageable, TFLOP/s, the device
  operators, the verdict from pipebench-report of a real (emulated) run that is
  compute-bound at one worker, the tests and the sanitizer from a hand-made console.log.

Everything is written under temporary folders. Skips (77) without patchelf, ldd or readelf,
for a build other than Release (as tests/scripts/bundle_test.py), and on a machine whose
nvidia-smi lists a GPU (the suite would run for minutes there)."""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
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

    def test_bundle_names_a_missing_test_binary(self):
        """A build without two of the test binaries the suite runs: no bundle, both named."""
        build = self.fresh("partial-build")
        shutil.copy(os.path.join(ARGS.build, "CMakeCache.txt"), build)
        suite_tests = ("cuda_test", "train_step_test", "train_step_cnn_test", "loader_test", "region_timer_test",
                       "nvml_test", "device_ops_test", "nvjpeg_test", "cnn_dump")
        for rel in ["bench/pipebench", "bench/pipebench-report", "datasets/pipebench-data"] + [
                f"tests/{t}" for t in suite_tests if t not in ("nvjpeg_test", "cnn_dump")]:
            os.makedirs(os.path.join(build, os.path.dirname(rel)), exist_ok=True)
            os.symlink(os.path.join(ARGS.build, rel), os.path.join(build, rel))
        out = os.path.join(self.tmp, "partial-bundle")
        r = subprocess.run([os.path.join(ARGS.repo, "scripts", "bundle.sh"), out, "--build", build],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("lacks tests/nvjpeg_test tests/cnn_dump, which the GPU suite runs", r.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertFalse(os.path.exists(out + ".tar.gz"))

    def test_without_nvidia_smi_skips_everything_and_says_why(self):
        out = os.path.join(self.fresh("nogpu"), "out")
        t = self.fresh("nogpu-tmp")
        r = self.run_suite("--out", out, tmpdir=t)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(files_under(out), ["console.log", "summary.md"])
        self.assertEqual(os.listdir(t), [], "its temporary folder is removed")
        s = read(os.path.join(out, "summary.md"))
        self.assertIn("Nothing ran on a GPU", s)
        self.assertIn("nvidia-smi not found", s)
        for step in ("libraries", "data", "device", "stage", "cnn step", "ops", "tests", "sanitizer", "torch"):
            self.assertRegex(s, rf"\| {step} \| skipped \| 0 \| no GPU")
        for recipe in RECIPES:
            for b in BASELINES:
                self.assertIn(f"| e2e {recipe} --baseline={b} | skipped |", s)

    def test_a_listed_gpu_that_pipebench_cannot_use_fails(self):
        fake = self.fresh("fakebin")
        smi = os.path.join(fake, "nvidia-smi")
        # Eight GPUs: the listing is read whole before it is searched (no SIGPIPE under pipefail).
        write(smi, "#!/bin/sh\nfor i in 0 1 2 3 4 5 6 7; do echo \"GPU $i: NVIDIA Stand-in (UUID: GPU-$i)\"; done\n")
        os.chmod(smi, 0o755)
        out = os.path.join(self.fresh("fake"), "out")
        t = self.fresh("fake-tmp")
        r = self.run_suite("--out", out, "--count", "6", path=fake + os.pathsep + self.path, tmpdir=t)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertLessEqual(len(files_under(out)), 10)
        self.assertEqual(os.listdir(t), [])
        s = read(os.path.join(out, "summary.md"))
        self.assertIn("GPU 0: NVIDIA Stand-in (UUID: GPU-0) (and 7 more)", s)
        self.assertRegex(s, r"\| gpu \| listed \| 0 \| GPU 0: NVIDIA Stand-in")
        self.assertRegex(s, r"\| libraries \| passed \| \d+ \| ldd: every library of every bundled binary found; "
                            r"cuDNN built with \d+\.\d+\.\d+, loaded \d+\.\d+\.\d+")
        self.assertRegex(s, r"\| data \| made \| \d+ \| 6 synthetic JPEGs")
        self.assertRegex(s, r"\| device \| failed \| \d+ \| nvidia-smi lists a GPU but pipebench cannot use it: ")
        self.assertNotIn("Nothing ran on a GPU", s)
        for step in ("stage", "cnn step", "tests", "sanitizer"):
            self.assertRegex(s, rf"\| {step} \| not run \| 0 \| pipebench cannot use the GPU")
        self.assertIn(">>> gpu-suite: step device: ", read(os.path.join(out, "console.log")))

    def test_dry_run_lists_every_command_and_runs_none(self):
        out = os.path.join(self.tmp, "dry-out")
        r = self.run_suite("--dry-run", "--out", out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertFalse(os.path.exists(out), "a dry run writes nothing")
        cmds = [l[2:] for l in r.stdout.splitlines() if l.startswith("+ ")]
        runs = [c for c in cmds if "/bin/pipebench " in c and "--benchmark_out=" in c]
        self.assertEqual(len(runs), 3 + len(RECIPES) * len(BASELINES), "\n".join(cmds))
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
        self.assertIn("--baseline=cuda ", stage)
        cnn = [c for c in runs if "cnn-step.json" in c][0]
        self.assertIn("--baseline=cuda:cnn ", cnn)
        ops = [c for c in runs if "ops.json" in c][0]
        self.assertIn("^BM_Decode/(turbo_full|nvjpeg)", ops)
        self.assertIn("/device/", ops)
        self.assertTrue(any("pipebench-data synthetic" in c and "--width 500 --height 375" in c
                            and "--quality 90" in c for c in cmds))
        self.assertTrue(any(c.endswith("tests/cnn_dump --versions") for c in cmds))

        # The order: what matters most first, the sanitizer last.
        def at(pred, what):
            i = next((i for i, c in enumerate(cmds) if pred(c)), None)
            self.assertIsNotNone(i, what)
            return i
        order = [at(lambda c: c.startswith("nvidia-smi -L"), "gpu"),
                 at(lambda c: "cnn_dump --versions" in c, "libraries"),
                 at(lambda c: "--benchmark_list_tests=true" in c, "device"),
                 at(lambda c: "stage.json" in c, "stage"), at(lambda c: "cnn-step.json" in c, "cnn step"),
                 at(lambda c: "e2e-imagenet_train-cuda_cnn.json" in c, "e2e imagenet_train cuda:cnn"),
                 at(lambda c: "e2e-deit_train-cuda_cnn.json" in c, "e2e deit_train cuda:cnn"),
                 at(lambda c: "ops.json" in c, "ops"),
                 at(lambda c: "run-gpu-tests.sh --tests-only --timeout 15" in c, "tests"),
                 at(lambda c: "cnn_torch_check.py --bundle" in c, "torch"),
                 at(lambda c: "e2e-imagenet_train-cuda.json" in c, "e2e imagenet_train cuda"),
                 at(lambda c: "e2e-deit_train-cuda.json" in c, "e2e deit_train cuda"),
                 at(lambda c: "run-gpu-tests.sh --sanitizer-only" in c, "sanitizer")]
        self.assertEqual(order, sorted(order), "\n".join(cmds))
        self.assertEqual(order[-1], max(i for i, c in enumerate(cmds) if c.startswith("timeout ")))
        # The steps up to the PyTorch check fit in the 420 s limit at their bounds (+5 s per
        # report); every step is cut to what is left.
        first = cmds[:order[9] + 1]
        bounds = [int(m.group(1)) for c in first for m in [re.match(r"timeout (\d+) ", c)] if m]
        self.assertLessEqual(sum(bounds) + 5 * len(RECIPES), 420, bounds)
        self.assertIn("time limit 420 s", r.stdout)
        # The JSONs, reports.md, console.log and summary.md: at most 10 files.
        outputs = set(re.findall(r"--benchmark_out=(\S+)", r.stdout)) | set(re.findall(r">> (\S+)", r.stdout))
        self.assertLessEqual(len(outputs) + 2, 10, outputs)

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
                 "tests/cnn_dump": STAND_IN_DUMP, "scripts/cnn_torch_check.py": STAND_IN_TORCH}
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

    def stand_in_env(self, cuda, fake, log, fail="", sleep="", sanitizer=""):
        return dict(os.environ, PATH=fake + os.pathsep + self.path, CUDA_HOME=cuda, STAND_IN_LOG=log,
                    STAND_IN_FAIL=fail, STAND_IN_SLEEP=sleep, STAND_IN_SANITIZER=sanitizer,
                    TMPDIR=self.fresh("standin-tmp"))

    def run_stand_in(self, fail="", sanitizer=""):
        root, b, cuda, fake = self.stand_in_bundle()
        log = os.path.join(root, "calls.log")
        out = os.path.join(root, "out")
        env = self.stand_in_env(cuda, fake, log, fail=fail, sanitizer=sanitizer)
        r = subprocess.run([self.suite, "--bundle", b, "--out", out, "--count", "4"], capture_output=True,
                           text=True, env=env, cwd=root, timeout=300)
        calls = read(log).splitlines() if os.path.exists(log) else []
        return r, out, calls, env["TMPDIR"]

    def test_the_gpu_path_with_stand_ins(self):
        r, out, calls, tmp = self.run_stand_in()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(files_under(out), sorted(
            ["summary.md", "console.log", "reports.md", "stage.json", "cnn-step.json", "ops.json"] +
            [f"e2e-{rc}-{b.replace(':', '_')}.json" for rc in RECIPES for b in BASELINES]))
        self.assertEqual(os.listdir(tmp), [], "its temporary folder (the dataset) is removed")
        runs = [c for c in calls if c.startswith("pipebench ") and "--benchmark_out=" in c]
        self.assertEqual(len(runs), 7, calls)
        for c in runs:
            self.assertRegex(c, r" --baseline=cuda(:cnn)? ")
            self.assertIn("--presize=off", c)
        # In the order of the figures that matter most, the sanitizer last.
        order = [next(i for i, c in enumerate(calls) if pred(c)) for pred in (
            lambda c: c == "cnn_dump --versions", lambda c: "benchmark_list_tests" in c,
            lambda c: "stage.json" in c, lambda c: "cnn-step.json" in c,
            lambda c: "e2e-imagenet_train-cuda_cnn.json" in c, lambda c: "e2e-deit_train-cuda_cnn.json" in c,
            lambda c: "ops.json" in c, lambda c: c.startswith("run-gpu-tests.sh --tests-only"),
            lambda c: c == "cnn_torch_check", lambda c: "e2e-deit_train-cuda.json" in c,
            lambda c: c.startswith("run-gpu-tests.sh --sanitizer-only"))]
        self.assertEqual(order, sorted(order), calls)
        self.assertEqual(sum(1 for c in calls if c.startswith("pipebench-report ") and "--json" not in c), 4)
        for step in ("stage", "cnn step", "ops", "tests", "sanitizer", "torch"):
            self.assertRegex(r.stdout, rf"gpu-suite: {step}: passed \(\d+ s; elapsed \d+ s of 420\)")
        s = read(os.path.join(out, "summary.md"))
        self.assertNotIn("Nothing ran on a GPU", s)
        self.assertNotIn("Not reached", s)
        self.assertNotIn("| running |", s)
        self.assertIn("cuDNN built with 9.19.0, loaded 9.19.0 (/stand-in/libcudnn.so.9)", s)
        self.assertIn("- cuBLAS loaded (libcublas.so.13)", s)
        self.assertRegex(s, r"- bundle: \S+ \(0\.0 MiB in 7 files; ")
        for rc in RECIPES:
            for b in BASELINES:
                self.assertIn(f"| e2e {rc} --baseline={b} | passed |", s)
                # The stand-in report finds no sweep: the figures come from the JSON, said so.
                self.assertIn(f"| {rc} | {b} | compute-bound from 8 workers | 8 | 100.0 |", s)
        self.assertIn("pipebench-report found no sweep although the run holds 5 BM_EndToEnd rows", s)
        self.assertIn("**50.0 GB/s**", s)
        self.assertIn("| 64 | 20.0 | 20.0 | 46.0 | 46.0 | 92.0 | 2.30 | 2.30 |", s)
        self.assertIn("| cuda:cnn | 5.00 | 5.00 | 100.0 | 20.0 |", s)
        self.assertIn("| mixup | device/uint8_nhwc/batch:64 | 200.0 | 3.125 |", s)
        self.assertIn("| cuda_test | 9 | 0 | 0 |", s)
        self.assertIn("- cuda_test: 0 errors", s)
        self.assertIn("Clean: **yes**", s)
        self.assertIn("- cnn_torch_check: PASS: stand-in", s)
        self.assertIn("## deit_train, --baseline=cuda:cnn", read(os.path.join(out, "reports.md")))
        log = read(os.path.join(out, "console.log"))
        for step in ("libraries", "device", "stage", "cnn step", "ops", "tests", "torch", "sanitizer"):
            self.assertIn(f">>> gpu-suite: step {step}: ", log)
        self.assertIn("stand-in pipebench: wrote", log)

    def test_a_failed_run_fails_the_suite_and_the_rest_still_runs(self):
        r, out, calls, _ = self.run_stand_in(fail="imagenet_train/cuda:cnn")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        s = read(os.path.join(out, "summary.md"))
        self.assertIn("| e2e imagenet_train --baseline=cuda:cnn | failed (exit 3) | ", s)
        self.assertIn("pipebench: 1 case(s) reported an error |", s)  # its last line, in the note
        self.assertIn("| e2e deit_train --baseline=cuda:cnn | passed |", s)
        self.assertIn("| sanitizer | passed |", s)
        self.assertIn("## What pipebench said", s)
        self.assertIn("e2e imagenet_train --baseline=cuda:cnn:\n\n- pipebench: 1 case(s) reported an error", s)
        self.assertIn("  | pipebench: 1 case(s) reported an error", r.stdout)
        self.assertLessEqual(len(files_under(out)), 10)

    def test_an_older_cudnn_is_a_warning(self):
        root, b, cuda, fake = self.stand_in_bundle()
        env = dict(self.stand_in_env(cuda, fake, os.path.join(root, "calls.log")), STAND_IN_OLD_CUDNN="1")
        out = os.path.join(root, "out")
        r = subprocess.run([self.suite, "--bundle", b, "--out", out, "--count", "4"], capture_output=True,
                           text=True, env=env, cwd=root, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("gpu-suite: libraries: warning: the loaded cuDNN 9.10.2 is older than 9.19.0", r.stdout)
        s = read(os.path.join(out, "summary.md"))
        self.assertIn("- **warning:** the loaded cuDNN 9.10.2 is older than 9.19.0, the one built with", s)
        self.assertIn("| libraries | passed |", s)

    def test_device_not_supported_by_the_sanitizer_is_a_skip(self):
        r, out, _, _ = self.run_stand_in(sanitizer="unsupported")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        s = read(os.path.join(out, "summary.md"))
        self.assertRegex(s, r"\| sanitizer \| skipped \| \d+ \| compute-sanitizer: skipped: Error: Device not supported")
        self.assertIn("Not run: compute-sanitizer skipped: Error: Device not supported", s)

    def killed_mid_step(self, sig):
        """The stand-in e2e imagenet_train --baseline=cuda:cnn prints a row, then sleeps."""
        root, b, cuda, fake = self.stand_in_bundle()
        log = os.path.join(root, "calls.log")
        out = os.path.join(root, "out")
        env = self.stand_in_env(cuda, fake, log, sleep="imagenet_train/cuda:cnn")
        p = subprocess.Popen([self.suite, "--bundle", b, "--out", out, "--count", "4"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env=env, cwd=root, start_new_session=True)
        console = os.path.join(out, "console.log")
        deadline = time.time() + 120
        while time.time() < deadline and "stand-in pipebench: sleeping" not in (
                read(console) if os.path.exists(console) else ""):
            time.sleep(0.2)
        self.assertIn("stand-in pipebench: sleeping", read(console), "the step did not start")
        t0 = time.time()
        os.kill(p.pid, sig)
        text, _ = p.communicate(timeout=60)
        return p.returncode, time.time() - t0, out, text, env, p.pid

    def test_killed_mid_step_keeps_what_ran(self):
        rc, took, out, text, env, pid = self.killed_mid_step(signal.SIGTERM)
        self.assertEqual(rc, 1, text)
        self.assertLess(took, 20, "the step is stopped, not waited for")
        s = read(os.path.join(out, "summary.md"))
        self.assertRegex(s, r"\| e2e imagenet_train --baseline=cuda:cnn \| cut off \(SIGTERM\) \| \d+ \| the suite was "
                            r"stopped from outside")
        self.assertIn("| stage | passed |", s)
        self.assertIn("**50.0 GB/s**", s)  # the figures of the steps that ran
        self.assertIn("Not reached (yet): e2e deit_train --baseline=cuda:cnn, ops, tests, torch", s)
        log = read(os.path.join(out, "console.log"))
        self.assertIn("BM_TrainStep/cuda:cnn 5.0 ms (printed before the cut)", log)
        self.assertIn("<<< gpu-suite: step e2e imagenet_train --baseline=cuda:cnn: cut off by SIGTERM", log)
        self.assertTrue(os.path.exists(os.path.join(out, "stage.json")))
        self.assertEqual(os.listdir(env["TMPDIR"]), [], "its temporary folder is removed")
        # The suite ran in a session of its own: nothing of it is left running there (a zombie
        # waiting for its reaper is gone already).
        for _ in range(30):
            ps = subprocess.run(["ps", "-o", "pid=,stat=,args=", "-s", str(pid)], capture_output=True, text=True).stdout
            left = [l for l in ps.splitlines() if l.split()[1:2] and not l.split()[1].startswith("Z")]
            if not left:
                break
            time.sleep(0.1)
        self.assertEqual(left, [], "the step's processes are gone")

    def test_killed_hard_mid_step_leaves_the_summary_of_what_ran(self):
        rc, _, out, text, _, pid = self.killed_mid_step(signal.SIGKILL)
        self.assertEqual(rc, -signal.SIGKILL)
        s = read(os.path.join(out, "summary.md"))
        self.assertRegex(s, r"\| e2e imagenet_train --baseline=cuda:cnn \| running \| \d+ \| started at \d+ s; if the suite "
                            r"has stopped, it was cut off here")
        self.assertIn("| cnn step | passed |", s)
        self.assertIn("| cuda:cnn | 5.00 | 5.00 | 100.0 | 20.0 |", s)
        self.assertIn("BM_TrainStep/cuda:cnn 5.0 ms (printed before the cut)", read(os.path.join(out, "console.log")))
        # The step outlives a suite killed with SIGKILL (its `timeout` would end it): end it here.
        subprocess.run(["pkill", "-KILL", "-s", str(pid)])

    def test_run_gpu_tests_sanitizer_skip_and_outer_timeout(self):
        """The bundle's own run-gpu-tests.sh, on stand-in test binaries."""
        root = self.fresh("rgt")
        tests = os.path.join(root, "tests")
        os.makedirs(tests)
        shutil.copy(os.path.join(self.bundle, "tests", "run-gpu-tests.sh"), tests)
        for name in ("cuda_test", "device_ops_test", "region_timer_test"):
            write(os.path.join(tests, name), "#!/bin/sh\necho \"[  PASSED  ] 1 test.\"\n")
            os.chmod(os.path.join(tests, name), 0o755)
        cuda = os.path.join(root, "cuda")
        os.makedirs(os.path.join(cuda, "bin"))
        san = os.path.join(cuda, "bin", "compute-sanitizer")
        write(san, "#!/bin/sh\necho '========= COMPUTE-SANITIZER'\necho '========= Error: Device not supported'\n"
                   "echo '========= Target application returned an error'\nexit 1\n")
        os.chmod(san, 0o755)
        env = dict(os.environ, CUDA_HOME=cuda, PATH=self.path)
        r = subprocess.run([os.path.join(tests, "run-gpu-tests.sh"), "--sanitizer-only", "--tests-only", "--timeout", "15"],
                           capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(r.returncode, 77, r.stdout + r.stderr)
        said = [l for l in r.stdout.splitlines() if not l.startswith("== ")]
        self.assertEqual(said, ["run-gpu-tests: compute-sanitizer: skipped: Error: Device not supported"])
        # A test binary that outlives the suite's own timeout: the outer `timeout` (in the
        # suite) ends it too, not only the script (the pipe closes at once, no orphan).
        write(os.path.join(tests, "cuda_test"), "#!/bin/sh\necho started; exec sleep 60\n")
        t0 = time.time()
        r = subprocess.run(["timeout", "3", os.path.join(tests, "run-gpu-tests.sh"), "--tests-only", "--timeout", "30"],
                           capture_output=True, text=True, env=env, timeout=50)
        self.assertEqual(r.returncode, 124, r.stdout + r.stderr)
        self.assertLess(time.time() - t0, 15, "the test binary kept the pipe open")
        self.assertIn("started", r.stdout)

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
import json, os, re, sys, time
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
if os.environ.get("STAND_IN_SLEEP") == recipe + "/" + baseline and "workers" in opt:
    print("BM_TrainStep/" + baseline + " 5.0 ms (printed before the cut)", flush=True)
    print("stand-in pipebench: sleeping", flush=True)
    # A child that would outlive the suite if the step's process group were not stopped.
    os.execvp("sh", ["sh", "-c", "sleep 300; echo never"])
def row(name, family, t, unit="us", **kw):
    key = {"family": family, "name": name, "baseline": kw.pop("baseline", ""), "op": kw.pop("op", ""),
           "detail": kw.pop("detail", ""), "workers": kw.get("workers", 0), "variant": "", "callbacks": ""}
    return dict({"name": name, "run_type": "iteration", "real_time": t, "time_unit": unit, "key": key}, **kw)
rows = []
f = opt["benchmark_filter"]
if "TrainStep" in f:
    rows.append(row("BM_TrainStep/" + baseline, "TrainStep", 5.0, "ms", baseline=baseline, compute_ms=5.0,
                    compute_gflop=100.0))
if "H2D" in f:
    rows.append(row("BM_H2D/pinned/async/peak:256MiB", "H2D", 268435456 / 50e9 * 1e6, op="pinned",
                    detail="async/peak:256MiB", batch_bytes=268435456))
    for mem, rate in (("pinned", 46e9), ("pageable", 20e9)):
        for mode in ("sync", "async"):
            rows.append(row(f"BM_H2D/{mem}/{mode}/batch:64", "H2D", 38535168 / rate * 1e6, op=mem,
                            detail=f"{mode}/batch:64", batch_bytes=38535168))
if "device" in f:
    rows.append(row("BM_Transform/mixup/device/uint8_nhwc/batch:64", "Transform", 200.0, op="mixup",
                    detail="device/uint8_nhwc/batch:64"))
if "workers" in opt:
    for w in map(int, opt["workers"].split(",")):
        data = 40.0 / w
        rows.append(row(f"BM_EndToEnd/{recipe}/{baseline}/workers:{w}", "EndToEnd", max(data, 5.0), "ms",
                        baseline=baseline, workers=w, data_ms=data, compute_ms=5.0,
                        au_pct=100 * 5.0 / max(data, 5.0)))
with open(opt["benchmark_out"], "w") as f:
    json.dump({"context": {"recipe": recipe}, "benchmarks": rows}, f)
print("stand-in pipebench: wrote " + os.path.basename(opt["benchmark_out"]))
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
  *--sanitizer-only*)
    if [ "$STAND_IN_SANITIZER" = unsupported ]; then
      echo "== compute-sanitizer --tool memcheck"
      echo "run-gpu-tests: compute-sanitizer: skipped: Error: Device not supported"
      exit 77
    fi
    printf '== compute-sanitizer --tool memcheck\n== cuda_test under compute-sanitizer memcheck\n========= ERROR SUMMARY: 0 errors\n' ;;
  *) printf '== cuda_test\n[  PASSED  ] 9 tests.\n' ;;
esac
"""
STAND_IN_DUMP = r"""#!/bin/sh
echo "cnn_dump $*" >> "$STAND_IN_LOG"
echo "cnn_dump: cuBLAS loaded (libcublas.so.13)"
if [ -n "$STAND_IN_OLD_CUDNN" ]; then
  echo "cnn_dump: cuDNN built with 9.19.0, loaded 9.10.2 (/stand-in/libcudnn.so.9)"
  echo "cnn_dump: warning: the loaded cuDNN 9.10.2 is older than 9.19.0, the one built with"
  exit 0
fi
echo "cnn_dump: cuDNN built with 9.19.0, loaded 9.19.0 (/stand-in/libcudnn.so.9)"
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
            ">>> gpu-suite: step e2e imagenet_train --baseline=cuda:cnn: timeout 60 pipebench ...",
            "pipebench: warning: a stand-in warning", "pipebench: CUDA cases not run (...): none",
            "<<< gpu-suite: step e2e imagenet_train --baseline=cuda:cnn: exit 0 after 3 s",
            ">>> gpu-suite: step tests: timeout 60 run-gpu-tests.sh --tests-only", "== cuDNN 9 run-time libraries",
            "[  PASSED  ] 3 tests.",
            "== cuda_test", "[==========] 9 tests ran.", "[  PASSED  ] 7 tests.", "[  SKIPPED ] 2 tests, listed below:",
            "== loader_test", "[  PASSED  ] 4 tests.", "[  FAILED  ] Cuda.LoaderDeviceCopyHoldsTheHostBytes (12 ms)",
            "[  FAILED  ] Cuda.LoaderDeviceCopyHoldsTheHostBytes", "<<< gpu-suite: step tests: exit 1 after 9 s",
            ">>> gpu-suite: step torch: timeout 40 python3 cnn_torch_check.py", "cnn_torch_check: skipped: no torch",
            "<<< gpu-suite: step torch: exit 77 after 1 s",
            ">>> gpu-suite: step sanitizer: timeout 90 run-gpu-tests.sh --sanitizer-only",
            "== compute-sanitizer --tool memcheck",
            "== cuda_test under compute-sanitizer memcheck", "========= ERROR SUMMARY: 0 errors",
            "== region_timer_test under compute-sanitizer memcheck",
            "run-gpu-tests: region_timer_test under compute-sanitizer timed out after 20 s", ""])
        write(os.path.join(out, "console.log"), log)
        s = self.summary(out)
        self.assertIn("| cuda_test | 7 | 2 | 0 |", s)
        self.assertIn("| loader_test | 4 | 0 | Cuda.LoaderDeviceCopyHoldsTheHostBytes |", s)
        self.assertIn("- cuda_test: 0 errors", s)
        self.assertIn("- region_timer_test: timed out", s)
        self.assertIn("Clean: **no**", s)
        self.assertIn("- cnn_torch_check: skipped: no torch", s)
        self.assertIn("e2e imagenet_train --baseline=cuda:cnn:\n\n- pipebench: warning: a stand-in warning\n", s)
        self.assertNotIn("CUDA cases not run", s)
        # A step cut off before its end: what it wrote so far still counts.
        write(os.path.join(out, "console.log"), log.split(">>> gpu-suite: step torch")[0].replace(
            "<<< gpu-suite: step tests: exit 1 after 9 s\n", ""))
        s = self.summary(out)
        self.assertIn("| loader_test | 4 | 0 | Cuda.LoaderDeviceCopyHoldsTheHostBytes |", s)
        self.assertIn("## compute-sanitizer memcheck\n\nNot run.", s)

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
