#!/usr/bin/python3
"""real_run_test.py - compare.sh and plot.py on JSON from two runs of the real pipebench.

Why it exists: the fixture tests pin the scripts to the JSON shape we believe Google
Benchmark writes; this one feeds them what pipebench actually writes. It makes a tiny
synthetic dataset, runs a few fast cases once with 9 repetitions, then checks the exit
statuses of compare.sh (0 for the run against itself, 1 for a copy slowed 1.5x, 2 for bad
input) and that plot.py draws a PNG. No bound on a clock: nothing here compares two runs.

  real_run_test.py --pipebench PATH --pipebench-data PATH [--scripts DIR]

Exit 77 (ctest SKIP_RETURN_CODE) when a binary is still the skeleton's placeholder: it
exits 0 but writes no dataset, or lists no benchmark case at all.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
# A few fast transforms that run on 160 x 120 images with --size=96 (the crop size); the
# fixed-256 cases (random_crop/size:256, random_mask, ...) need larger images.
FILTER = "BM_Transform/(random_resized_crop|center_crop|horizontal_flip|normalize)($|/)"
SIZE = "--size=96"


def run(cmd, timeout=120):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    print(f"$ {' '.join(cmd)}  -> rc {p.returncode} in {time.monotonic() - t0:.1f} s")
    return p


def fail(msg):
    print(f"real_run_test: FAIL: {msg}")
    sys.exit(1)


def expect(p, rc, what):
    if p.returncode != rc:
        fail(f"{what}: expected exit {rc}, got {p.returncode}\n--- stdout\n{p.stdout}\n"
             f"--- stderr\n{p.stderr}")
    print(f"ok: {what} (exit {rc})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pipebench", required=True)
    ap.add_argument("--pipebench-data", required=True)
    ap.add_argument("--scripts", default=os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..", "..", "scripts"))
    args = ap.parse_args()
    compare = os.path.join(args.scripts, "compare.sh")
    plot = os.path.join(args.scripts, "plot.py")
    for exe in (args.pipebench, args.pipebench_data):
        if not os.access(exe, os.X_OK):
            fail(f"{exe}: not an executable (build the pipebench and pipebench-data targets)")

    tmp = tempfile.mkdtemp(prefix="pipebench-real-run-")
    try:
        data = os.path.join(tmp, "data")
        p = run([args.pipebench_data, "synthetic", data, "--count", "16", "--width", "160",
                 "--height", "120"])
        expect(p, 0, "pipebench-data synthetic")
        images = [f for _, _, files in os.walk(data) for f in files]
        if not images:
            print(f"real_run_test: SKIP: pipebench-data wrote nothing to {data} "
                  "(placeholder binary?)")
            return SKIP

        p = run([args.pipebench, f"--data={data}", SIZE, f"--benchmark_filter={FILTER}",
                 "--benchmark_list_tests=true"])
        expect(p, 0, "pipebench --benchmark_list_tests")
        listed = [ln for ln in p.stdout.splitlines() if ln.strip()]
        if not listed:
            p_all = run([args.pipebench, f"--data={data}", "--benchmark_list_tests=true"])
            if not p_all.stdout.strip():
                print("real_run_test: SKIP: pipebench lists no benchmark case at all "
                      "(placeholder binary?)")
                return SKIP
            fail(f"pipebench lists no case matching {FILTER}")
        print(f"{len(listed)} case(s): {', '.join(listed)}")

        def bench(out):
            p = run([args.pipebench, f"--data={data}", SIZE, f"--benchmark_filter={FILTER}",
                     "--benchmark_repetitions=9", "--benchmark_min_time=0.01",
                     f"--benchmark_out={out}", "--benchmark_out_format=json"], timeout=300)
            expect(p, 0, f"pipebench run -> {os.path.basename(out)}")
            if not os.path.isfile(out):
                fail(f"pipebench exited 0 but wrote no {out}")

        # One real run, compared with itself and with itself slowed 1.5x. A second run
        # would measure the machine twice, not the scripts: CI saw a 5 us case's CPU time
        # move by 50-61 % between two runs minutes apart, so two runs cannot be held to any
        # fixed limit (the paired A/B gate is what compares two runs; this tests the
        # scripts on what pipebench really writes).
        a = os.path.join(tmp, "a.json")
        bench(a)
        p = run([compare, a, a, "--max-regression", "5", "--time", "auto", "--no-color"])
        expect(p, 0, "compare a a --max-regression 5")
        if "Time Old" not in p.stdout or "compare: PASS" not in p.stdout:
            fail(f"compare output lacks the table or the summary:\n{p.stdout}")

        # a slowed down 1.5x (every repetition and aggregate time): a regression at 5%.
        with open(a) as f:
            doc = json.load(f)
        for row in doc["benchmarks"]:
            if row.get("aggregate_unit") != "percentage":  # cv is a ratio, not a time
                row["real_time"] *= 1.5
                row["cpu_time"] *= 1.5
        slow = os.path.join(tmp, "slow.json")
        with open(slow, "w") as f:
            json.dump(doc, f)
        p = run([compare, a, slow, "--no-color", "--max-cv", "1000"])
        expect(p, 1, "compare a a*1.5 (default 5%)")
        if "REGRESSION BM_Transform" not in p.stdout:
            fail(f"no REGRESSION line naming a BM_Transform case:\n{p.stdout}")

        # Bad input.
        expect(run([compare, a, os.path.join(tmp, "missing.json")]), 2, "compare missing file")
        bad = os.path.join(tmp, "malformed.json")
        with open(a) as f, open(bad, "w") as g:
            g.write(f.read()[: 200])
        expect(run([compare, a, bad]), 2, "compare malformed file")
        expect(run([compare, a, a, "--filter", "^BM_NoSuchCase$"]), 2, "compare disjoint filter")

        # The picture of a real run (only BM_Transform here: the figure says what is missing).
        png = os.path.join(tmp, "a.png")
        expect(run(["/usr/bin/python3", plot, a, png]), 0, "plot.py a.json")
        if not os.path.isfile(png) or os.path.getsize(png) < 1000:
            fail(f"plot.py wrote no PNG (or an empty one) at {png}")
        with open(png, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                fail(f"{png} is not a PNG")
        print("real_run_test: PASS")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
