#!/usr/bin/python3
"""Every shell command of README.md and docs/*.md, run as written from a clone.

Why it exists: the README's own-data command (`run.sh --data=DIR`) once failed at once
because run.sh passed --data twice, and nothing ran it. This test reads the commands out of
the ```sh blocks of README.md and of every docs/*.md page (so a new line there is tested
without editing this file; a line ending in a backslash continues on the next), and runs
each, in its page's order, from a directory outside the repository with relative paths, on
a small synthetic ImageFolder tree standing in for the user's data
(`$HOME/imagenette2-320/train` and data/photos-in), with paths under /tmp/ moved into the
test's scratch folder, and with flags that make the run short added only where the line
does not set them itself. How a line starts says what it runs: `./scripts/...` (or
`scripts/...`) the repository's script; `build/release/...` (or `./build/release/...`)
and a bare `pipebench`, `pipebench-report` or `pipebench-data` the build under test.
Checked: exit status, the verdict where a loader case ran, the JSON and the picture where
they were promised, and the compare gate's documented exit codes. The region-timer pages'
`regions.json` and `before.json` (files a user's own loop writes) are made by
examples/region_timer_example.

Not run: `./scripts/test.sh` (it is what runs this test), and the lines of SKIP below, each
with the reason, printed when skipped. A line that none of these rules covers fails the
test: teach run_line to run it, or add it to SKIP with a reason. A SKIP entry that matches
no line fails too (it is stale).

It also checks that docs/operators.md's operator table is what the registry prints.

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
# Lines this test cannot run, as (regular expression searched in the line, why). Each must
# match at least one line of the pages.
SKIP = [
    (r"^mpirun ", "needs Open MPI's mpirun and two ranks: tests/scripts/mpi_test.py "
                  "(ctest mpi_ranks) and .ci/run's smoke step run pipebench under mpirun"),
    (r"pipebench-report out/mpi\.json", "reads the JSON of the mpirun line before it"),
    (r"^(cmake|ninja) ", "builds a CUDA bundle from scratch (minutes, a CUDA toolkit): "
                         "the bundle test runs scripts/bundle.sh on the build under test"),
    (r"^\./scripts/bundle\.sh ", "needs that CUDA build (build/bundle): the bundle test "
                                 "runs bundle.sh on the build under test"),
    (r"^tar ", "packs or unpacks the bundle of the lines before it"),
    (r"^(bin/pipebench|tests/run-gpu-tests\.sh)", "runs inside the bundle on a GPU node"),
    (r"^python3 scripts/cnn_torch_check\.py", "needs PyTorch and a GPU (a GPU node's python3); "
                                              "it exits 77 without them, and gpu-suite.sh runs it"),
    (r"^\./gpu-suite\.sh", "runs inside the bundle (on a GPU node); gpu_suite_test runs it "
                            "from a bundle of the build under test, dry run and GPU-less"),
    (r"^\./scripts/build_ref\.sh ", "builds a git ref from scratch (minutes): ab_gate_test runs "
                                    "build_ref.sh and the workflow's commands on the build under test"),
    (r"^\./scripts/compare\.sh --ab base/", "compares the builds of the build_ref.sh lines: "
                                           "ab_gate_test runs --ab on the build under test"),
]
PAGES_MIN = {"README.md": 6}  # at least this many commands; a docs page may have none


def strip_comment(line):
    """The line without a shell comment: a # at its start or after a blank, outside quotes."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].strip()
    return line.strip()


def doc_pages(repo):
    docs = os.path.join(repo, "docs")
    pages = sorted(f for f in os.listdir(docs) if f.endswith(".md")) if os.path.isdir(docs) else []
    return ["README.md"] + [os.path.join("docs", f) for f in pages]


def doc_commands(repo):
    """(page, line) for every command of every ```sh block, in page order."""
    cmds = []
    for page in doc_pages(repo):
        with open(os.path.join(repo, page)) as f:
            text = f.read()
        for block in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M):
            pending = ""
            for raw in block.splitlines():
                raw = raw.strip()
                if raw.endswith("\\"):
                    pending += raw[:-1].rstrip() + " "
                    continue
                line = strip_comment(pending + raw)
                pending = ""
                if line:
                    cmds.append((page, line))
    return cmds


def skip_reason(line):
    for pattern, reason in SKIP:
        if re.search(pattern, line):
            return reason
    return None


class ReadmeCommands(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.cwd = os.path.join(cls.tmp.name, "caller")
        cls.slash_tmp = os.path.join(cls.tmp.name, "slash-tmp")  # the pages' /tmp/
        os.makedirs(cls.cwd)
        os.makedirs(cls.slash_tmp)
        cls.data = os.path.join(cls.cwd, "mydata")
        r = subprocess.run([ARGS.pipebench_data, "synthetic", cls.data, "--count", "12",
                            "--classes", "2", "--width", "160", "--height", "120"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        # What the region-timer pages' commands read: a user's loop's files.
        example = os.path.join(ARGS.build, "examples", "region_timer_example")
        for name in ("regions.json", "before.json"):
            r = subprocess.run([example, os.path.join(cls.cwd, name), "5"],
                               capture_output=True, text=True)
            assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def argv_of(self, line):
        """The line's argv with the stand-ins put in, argv[0] resolved; None: not known."""
        line = line.replace("$HOME/imagenette2-320/train", "mydata")
        line = re.sub(r"(?<![\w/.-])data/photos-in(?![\w-])", "mydata", line)
        line = re.sub(r"(?<![\w/.-])/tmp/", self.slash_tmp + "/", line)
        argv = shlex.split(line)
        prog = argv[0]
        if prog.startswith("./scripts/") or prog.startswith("scripts/"):
            argv[0] = os.path.join(ARGS.repo, "scripts", prog.split("scripts/", 1)[1])
        elif prog.startswith("build/release/") or prog.startswith("./build/release/"):
            argv[0] = os.path.join(ARGS.build, prog.split("build/release/", 1)[1])
        elif prog in ("pipebench", "pipebench-report"):
            argv[0] = os.path.join(ARGS.build, "bench", prog)
        elif prog == "pipebench-data":
            argv[0] = ARGS.pipebench_data
        else:
            return None
        return argv

    def run_line(self, line):
        argv = self.argv_of(line)
        self.assertIsNotNone(argv, f"{line}: a command this test does not know how to run: "
                                   "teach run_line, or add it to SKIP with the reason")
        if os.path.basename(argv[0]) in ("run.sh", "pipebench"):
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
        with open(os.path.join(ARGS.repo, "docs", "operators.md")) as f:
            self.assertIn(r.stdout, f.read(), "docs/operators.md's operator table is out of "
                          "date: paste `pipebench --list-ops=markdown` into it")

    def test_every_skip_entry_is_used(self):
        lines = [line for _, line in doc_commands(ARGS.repo)]
        for pattern, reason in SKIP:
            with self.subTest(pattern=pattern):
                self.assertTrue(any(re.search(pattern, line) for line in lines),
                                f"SKIP entry {pattern!r} ({reason}) matches no command of "
                                "README.md or docs/*.md: remove it")

    def test_every_documented_command(self):
        cmds = doc_commands(ARGS.repo)
        for page, least in PAGES_MIN.items():
            self.assertGreaterEqual(sum(p == page for p, _ in cmds), least, cmds)
        self.assertTrue(any(p.startswith("docs") for p, _ in cmds), cmds)
        for page, line in cmds:
            if line.startswith("./scripts/test.sh"):
                continue
            reason = skip_reason(line)
            if reason is not None:
                print(f"skipped (listed in SKIP): {page}: {line}: {reason}", flush=True)
                continue
            with self.subTest(page=page, line=line):
                self.check_line(line)

    def check_line(self, line):
        r = self.run_line(line)
        log = f"$ {line}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}"
        prog = os.path.basename(shlex.split(line)[0])
        if prog == "compare.sh":
            # 0 no regression, 1 a regression (the machine is noisy), 3 inconclusive (the
            # paired gate could not reach the precision in its time budget); 2 is bad input.
            self.assertIn(r.returncode, (0, 1, 3), log)
            return
        self.assertEqual(r.returncode, 0, log)
        if prog == "pipebench-report":
            if "--json" in shlex.split(line):
                self.assertIsInstance(json.loads(r.stdout), dict, log)  # the verdict as JSON
            else:
                self.assertIn("pipebench verdict", r.stdout, log)
            return
        if prog == "pipebench":
            self.assertIn("BM_", r.stdout, log)  # the table
            return
        if prog != "run.sh":
            return  # pipebench-data: its exit status
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
