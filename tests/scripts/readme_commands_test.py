#!/usr/bin/python3
"""Every `./scripts/...` command of README.md, run as written from a clone.

Why it exists: the README's own-data command (`run.sh --data=DIR`) once failed at once
because run.sh passed --data twice, and nothing ran it. This test reads the commands out of
README.md (so a new line there is tested without editing this file), runs each from a
directory outside the repository with relative paths, on a small synthetic ImageFolder
tree standing in for the user's data (`$HOME/imagenette2-320/train` and the default
data/photos-in), and with flags that make the run short added only where the line does not
set them itself. Checked: exit status, the verdict where a loader case ran, the JSON and
the picture where they were promised, and the compare gate's documented exit codes.

`./scripts/test.sh` is not run here (it is what runs this test).

It also checks that README's operator table is what the registry prints.

usage: readme_commands_test.py --repo DIR --pipebench-data BIN --pipebench BIN
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

from ctest_unittest import run_tests

ARGS = None
# Flags that keep a command short; each is added only when the command does not set it.
FAST = {"--benchmark_filter": "BM_(Read/files/warm|Decode/turbo_full|Loader)",
        "--batch": "4", "--steps": "2", "--workers": "1", "--size": "96",
        "--benchmark_min_time": "0.01"}


def readme_commands(repo):
    with open(os.path.join(repo, "README.md")) as f:
        text = f.read()
    cmds = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if line.startswith("./scripts/") and not line.startswith("./scripts/test.sh"):
                cmds.append(line)
    return cmds


class ReadmeCommands(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.cwd = os.path.join(cls.tmp.name, "caller")
        os.makedirs(cls.cwd)
        cls.data = os.path.join(cls.cwd, "mydata")
        r = subprocess.run([ARGS.pipebench_data, "synthetic", cls.data, "--count", "12",
                            "--classes", "2", "--width", "160", "--height", "120"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_line(self, line):
        argv = shlex.split(line.replace("$HOME/imagenette2-320/train", "mydata"))
        argv[0] = os.path.join(ARGS.repo, argv[0][2:])
        if argv[0].endswith("run.sh"):
            given = {a.split("=", 1)[0] for a in argv[1:]}
            if "--data" not in given:
                argv.append("--data=mydata")  # relative: the caller's directory
            argv += [f"{k}={v}" for k, v in FAST.items() if k not in given]
        # The build under test, and the results in the scratch folder: nothing is built or
        # written in the checkout (run.sh's PIPEBENCH_BUILD_DIR and PIPEBENCH_OUT_DIR).
        env = dict(os.environ, PIPEBENCH_BUILD_DIR=ARGS.build,
                   PIPEBENCH_OUT_DIR=os.path.join(self.tmp.name, "out"))
        return subprocess.run(argv, cwd=self.cwd, env=env, capture_output=True, text=True,
                              timeout=600)

    def test_operator_table_is_the_registrys(self):
        r = subprocess.run([ARGS.pipebench, "--list-ops=markdown"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(ARGS.repo, "README.md")) as f:
            self.assertIn(r.stdout, f.read(), "README's operator table is out of date: paste "
                          "`pipebench --list-ops=markdown` into it")

    def test_every_readme_command(self):
        cmds = readme_commands(ARGS.repo)
        self.assertGreaterEqual(len(cmds), 7, cmds)
        for line in cmds:
            with self.subTest(line=line):
                r = self.run_line(line)
                log = f"$ {line}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}"
                if "compare.sh" in line:
                    # 0 no regression, 1 a regression (the machine is noisy); 2 is bad input.
                    self.assertIn(r.returncode, (0, 1), log)
                    continue
                self.assertEqual(r.returncode, 0, log)
                flt = re.search(r"--benchmark_filter=(\S+)", line)
                verdict = not flt or re.search(flt.group(1), "BM_Loader/x BM_EndToEnd/x")
                if verdict:
                    self.assertIn("pipebench verdict", r.stdout, log)
                else:
                    self.assertIn("no verdict", r.stdout, log)  # it says why
                out = re.search(r"run: results in (\S+)", r.stdout)
                self.assertIsNotNone(out, log)
                path = os.path.join(self.cwd, out.group(1))
                with open(path) as f:
                    doc = json.load(f)
                self.assertTrue(doc["context"]["dataset"].endswith("mydata"), log)
                if "--benchmark_out=" in line:
                    name = re.search(r"--benchmark_out=(\S+)", line).group(1)
                    self.assertTrue(os.path.exists(os.path.join(self.cwd, name)), log)
                elif verdict:  # the picture comes with the verdict
                    self.assertTrue(os.path.exists(path[:-5] + ".png"), log)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--repo", required=True)
    p.add_argument("--pipebench-data", required=True)
    p.add_argument("--pipebench", required=True)
    ARGS, rest = p.parse_known_args()
    ARGS.repo = os.path.abspath(ARGS.repo)
    ARGS.pipebench = os.path.abspath(ARGS.pipebench)
    ARGS.pipebench_data = os.path.abspath(ARGS.pipebench_data)
    ARGS.build = os.path.dirname(os.path.dirname(ARGS.pipebench))  # build/release
    sys.exit(run_tests(rest))
