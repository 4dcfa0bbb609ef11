#!/usr/bin/env python3
"""The figures of a gpu-suite.sh run as Markdown on stdout (gpu-suite.sh appends them to its
summary.md after every step), from the files of its output folder:

  stage.json, cnn-step.json, ops.json
                     BM_H2D: GB/s of each memory x mode x batch (bytes copied / manual time),
                     pinned as % of BM_H2D/pinned/async/peak:256MiB of the same run, pinned /
                     pageable; BM_TrainStep: compute_ms, compute_gflop, TFLOP/s = GFLOP / ms;
                     the device batch operators (BM_Transform/<op>/device/<dtype>/batch:<n>):
                     us per batch and per image; BM_Decode/nvjpeg against turbo_full: images/s
  e2e-*.json         per recipe x baseline (pipebench-report --json): the verdict, the
                     smallest compute-bound worker count and its AU, each worker count's AU;
                     BM_TrainStep of its baseline
  console.log        every step's output, each after a line ">>> gpu-suite: step NAME: ...":
                     what pipebench said in each run (its "pipebench:" lines), each test
                     binary's gtest result (step tests), under compute-sanitizer its ERROR
                     SUMMARY or that it timed out or was skipped (step sanitizer), the lines of
                     cnn_torch_check.py (step torch)

    gpu_suite_summary.py --out DIR [--report BIN]

Standard library only. A missing or unreadable file is named in the output, not an error;
exit 0 unless the arguments are wrong (2).
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

PEAK_RE = re.compile(r"^async/peak")
BATCH_RE = re.compile(r"^(sync|async)/batch:(\d+)(/uint8)?$")


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f), None
    except (OSError, ValueError) as e:
        return None, f"{os.path.basename(path)}: {e}"


def rows(run):
    """The iteration rows of a run (aggregates and errored rows left out)."""
    for r in (run or {}).get("benchmarks", []):
        if r.get("run_type", "iteration") != "iteration" or r.get("error_occurred"):
            continue
        yield r


def key(r):
    k = r.get("key") or {}
    return k if isinstance(k, dict) else {}


def errored(run):
    return [(r.get("name", "?"), r.get("error_message", "")) for r in (run or {}).get("benchmarks", [])
            if r.get("error_occurred")]


def seconds(r):
    """The row's time per iteration in seconds (real_time: manual time for manual cases)."""
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}.get(r.get("time_unit", "ns"), 1e-9)
    return float(r.get("real_time", 0)) * unit


def gbps(r):
    s = seconds(r)
    if s > 0 and r.get("batch_bytes"):
        return float(r["batch_bytes"]) / s / 1e9
    return float(r.get("GB_per_second", 0)) or None  # the case's own counter, 1e9 bytes/s


def fmt(x, digits=1):
    return "-" if x is None else f"{x:.{digits}f}"


def h2d_section(run, lines):
    peak = None
    table = {}  # batch -> {(memory, mode): GB/s}
    uint8 = False
    for r in rows(run):
        k = key(r)
        if k.get("family") != "H2D":
            continue
        detail = k.get("detail", "")
        if PEAK_RE.match(detail):
            peak = gbps(r)
            continue
        m = BATCH_RE.match(detail)
        if not m:
            continue
        uint8 = uint8 or bool(m.group(3))
        table.setdefault(int(m.group(2)), {})[(k.get("op", ""), m.group(1))] = gbps(r)
    lines.append("## Host to device (BM_H2D)")
    lines.append("")
    if not table:
        lines.append("No BM_H2D rows (stage.json).")
        lines.append("")
        return
    lines.append(f"Peak pinned copy (BM_H2D/pinned/async/peak:256MiB, same run): **{fmt(peak)} GB/s**"
                 if peak else "Peak pinned copy: not measured (no BM_H2D/pinned/async/peak row).")
    lines.append("")
    lines.append("| batch" + (" (uint8)" if uint8 else "") + " | pageable sync | pageable async | pinned sync "
                 "| pinned async | pinned async % of peak | pinned / pageable (sync) | pinned / pageable (async) |")
    lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst = None
    for batch in sorted(table):
        t = table[batch]
        ps, pa = t.get(("pageable", "sync")), t.get(("pageable", "async"))
        ns, na = t.get(("pinned", "sync")), t.get(("pinned", "async"))
        pct = 100 * na / peak if peak and na else None
        if pct is not None:
            worst = pct if worst is None else min(worst, pct)
        lines.append(f"| {batch} | {fmt(ps)} | {fmt(pa)} | {fmt(ns)} | {fmt(na)} | {fmt(pct)} | "
                     f"{fmt(ns / ps if ns and ps else None, 2)} | {fmt(na / pa if na and pa else None, 2)} |")
    lines.append("")
    lines.append("(GB/s = 1e9 bytes/s, bytes copied over the copy's time: CUDA events for async, a host "
                 "clock to after cudaDeviceSynchronize for sync)")
    if worst is not None:
        lines.append("")
        lines.append(f"Pinned async at least 90 % of the peak at every batch: **{'yes' if worst >= 90 else 'no'}** "
                     f"(lowest {worst:.1f} %).")
    lines.append("")


def train_steps(runs):
    """BM_TrainStep rows of every run: baseline -> (compute_ms, gflop, ms per iteration)."""
    steps = {}
    for run in runs:
        for r in rows(run):
            k = key(r)
            if k.get("family") != "TrainStep":
                continue
            b = k.get("baseline") or r.get("name", "").split("/")[1]
            if b not in steps:
                steps[b] = (r.get("compute_ms"), r.get("compute_gflop"), seconds(r) * 1e3)
    return steps


def steps_section(steps, lines):
    lines.append("## Training steps (BM_TrainStep, a resident batch)")
    lines.append("")
    if not steps:
        lines.append("No BM_TrainStep rows.")
        lines.append("")
        return
    lines.append("| baseline | compute_ms (10 steps) | ms per step (each iteration) | GFLOP per step | TFLOP/s |")
    lines.append("|---|---:|---:|---:|---:|")
    for b, (cms, gflop, ms) in sorted(steps.items()):
        tflops = gflop / cms if gflop and cms else None  # GFLOP per ms = TFLOP/s
        lines.append(f"| {b} | {fmt(cms, 2)} | {fmt(ms, 2)} | {fmt(gflop, 1)} | {fmt(tflops, 1)} |")
    lines.append("")


def own_sweep(run):
    """The sweep from the JSON alone, where the report finds none."""
    out = []
    for r in rows(run):
        k = key(r)
        if k.get("family") == "EndToEnd" and not k.get("variant") and not k.get("callbacks"):
            out.append({"workers": int(r.get("workers", k.get("workers", 0))), "au_pct": r.get("au_pct"),
                        "data_ms": r.get("data_ms"), "compute_ms": r.get("compute_ms"),
                        "regime": "data-bound" if r.get("data_ms", 0) > r.get("compute_ms", 0) else "compute-bound"})
    return sorted(out, key=lambda s: s["workers"])


def verdict_section(out_dir, report, lines):
    lines.append("## Verdicts (BM_EndToEnd sweeps, pipebench-report)")
    lines.append("")
    files = sorted(glob.glob(os.path.join(out_dir, "e2e-*.json")))
    if not files:
        lines.append("No end-to-end runs.")
        lines.append("")
        return []
    lines.append("| recipe | baseline | verdict | smallest compute-bound workers | its AU % | AU % per workers |")
    lines.append("|---|---|---|---:|---:|---|")
    runs, notes = [], []
    for path in files:
        run, err = load(path)
        name = os.path.basename(path)
        if run is None:
            lines.append(f"| {name} | | unreadable: {err} | | | |")
            continue
        runs.append(run)
        ctx = run.get("context", {})
        recipe = ctx.get("recipe", "?")
        baseline = next((key(r).get("baseline") for r in rows(run) if key(r).get("baseline")), "?")
        rep = None
        if report:
            p = subprocess.run([report, "--json", path], capture_output=True, text=True)
            if p.returncode == 0:
                try:
                    rep = json.loads(p.stdout)
                except ValueError:
                    notes.append(f"{name}: pipebench-report --json printed no JSON")
            else:
                notes.append(f"{name}: pipebench-report --json exited {p.returncode}: "
                             f"{(p.stderr.strip().splitlines() or [''])[-1]}")
        sweep = (rep or {}).get("sweep") or []
        mine = own_sweep(run)
        if rep is not None and not sweep and mine:
            notes.append(f"{name}: pipebench-report found no sweep although the run holds {len(mine)} "
                         "BM_EndToEnd rows (the figures here are from the JSON: compute-bound where "
                         "data_ms <= compute_ms)")
        used = sweep or mine
        first = (rep or {}).get("first_compute_bound_workers") if sweep else next(
            (s["workers"] for s in mine if s["regime"] == "compute-bound"), None)
        if not used:
            verdict = "no sweep"
        elif first is None:
            verdict = "data-bound at every worker count"
        else:
            verdict = f"compute-bound from {first} workers"
        au_first = next((s.get("au_pct") for s in used if s.get("workers") == first), None)
        per = ", ".join(f"{s.get('workers')}: {fmt(s.get('au_pct'))}" for s in used)
        lines.append(f"| {recipe} | {baseline} | {verdict} | {first if first is not None else '-'} | "
                     f"{fmt(au_first)} | {per} |")
        for case, msg in errored(run):
            notes.append(f"{name}: {case} errored: {msg}")
    lines.append("")
    lines.append("(AU = compute / step, %; compute-bound: the loader delivers a batch no slower than the "
                 "step, data_ms <= compute_ms)")
    for n in notes:
        lines.append("")
        lines.append(f"- {n}")
    lines.append("")
    return runs


def device_ops_section(run, lines):
    found = []
    for r in rows(run):
        k = key(r)
        if k.get("family") == "Transform" and k.get("detail", "").startswith("device/"):
            m = re.search(r"batch:(\d+)", k.get("detail", ""))
            n = int(m.group(1)) if m else 0
            found.append((k.get("op", ""), k.get("detail", ""), seconds(r) * 1e6, n))
    lines.append("## Device batch operators (CUDA events)")
    lines.append("")
    if not found:
        lines.append("No device operator rows (ops.json: not built, or no device).")
        lines.append("")
        return
    lines.append("| operator | detail | us per batch | us per image |")
    lines.append("|---|---|---:|---:|")
    for op, detail, us, n in sorted(found):
        lines.append(f"| {op} | {detail} | {fmt(us, 1)} | {fmt(us / n if n else None, 3)} |")
    lines.append("")


def decode_section(run, lines):
    found = {}
    for r in rows(run):
        k = key(r)
        if k.get("family") == "Decode" and k.get("op") in ("turbo_full", "nvjpeg"):
            found[k["op"]] = (r.get("items_per_second"), r.get("us_per_image"), r.get("images_per_round"))
    lines.append("## GPU JPEG decode (BM_Decode/nvjpeg against BM_Decode/turbo_full)")
    lines.append("")
    if "nvjpeg" not in found:
        lines.append("No BM_Decode/nvjpeg row (ops.json: no nvJPEG library, or no device: "
                     "pipebench's lines in console.log say which).")
        lines.append("")
        return
    lines.append("| decoder | images/s | host CPU us per image | images per round |")
    lines.append("|---|---:|---:|---:|")
    for op, label in (("nvjpeg", "nvJPEG (GPU, one stream)"), ("turbo_full", "TurboJPEG (one core)")):
        if op in found:
            ips, us, n = found[op]
            lines.append(f"| {label} | {fmt(ips, 0)} | {fmt(us, 0)} | {fmt(n, 0)} |")
    if found.get("turbo_full", (None,))[0] and found["nvjpeg"][0]:
        lines.append("")
        lines.append(f"nvJPEG decodes {found['nvjpeg'][0] / found['turbo_full'][0]:.1f}x the images per second of "
                     "one TurboJPEG core, on the same files.")
    lines.append("")


STEP_RE = re.compile(r"^>>> gpu-suite: step (.+?): .*$", re.M)
STAGE_FILES = ("stage.json", "cnn-step.json", "ops.json")


def step_chunks(text):
    """console.log -> [(step, its output)] in the order they ran."""
    parts = STEP_RE.split(text)
    return [(parts[i], parts[i + 1]) for i in range(1, len(parts) - 1, 2)]


def said_section(chunks, lines):
    """What pipebench said in each run (its "pipebench: " lines) but the CUDA note."""
    said = []
    for step, body in chunks:
        if step in ("tests", "torch", "sanitizer", "libraries", "data"):
            continue
        got = sorted({l for l in body.splitlines() if l.startswith("pipebench: ")
                      and not l.startswith("pipebench: CUDA cases not run")})
        if got:
            said.append((step, got[:12]))
    if not said:
        return
    lines.append("## What pipebench said")
    for step, got in said:
        lines.append("")
        lines.append(f"{step}:")
        lines.append("")
        lines.extend(f"- {l}" for l in got)
    lines.append("")


def log_sections(log_path, lines):
    try:
        text = open(log_path, encoding="utf-8", errors="replace").read()
    except OSError:
        lines.append("## Tests")
        lines.append("")
        lines.append("No console.log.")
        lines.append("")
        return
    chunks = step_chunks(text)
    said_section(chunks, lines)
    plain = "".join(body for step, body in chunks if step == "tests")
    sanitized = "".join(body for step, body in chunks if step == "sanitizer")
    torch_part = "".join(body for step, body in chunks if step == "torch")

    lines.append("## Tests (run-gpu-tests.sh)")
    lines.append("")
    ran = re.findall(r"^== (.+?)\n(.*?)(?=^== |^<<< |\Z)", plain, re.S | re.M)
    if not ran:
        lines.append("Not run." if not plain.strip() else "No test binary's result in console.log (step tests).")
    else:
        lines.append("| binary | passed | skipped | failed |")
        lines.append("|---|---:|---:|---:|")
    for name, body in ran:
        passed = re.search(r"\[  PASSED  \] (\d+) test", body)
        skipped = re.search(r"\[  SKIPPED \] (\d+) test", body)
        failed = re.findall(r"^\[  FAILED  \] (\S+)(?: \(| *$)", body, re.M)
        timed = "timed out" in body
        lines.append(f"| {name} | {passed.group(1) if passed else '-'} | {skipped.group(1) if skipped else 0} | "
                     f"{'timed out' if timed else (', '.join(sorted(set(failed))) or 0)} |")
    lines.append("")

    lines.append("## compute-sanitizer memcheck")
    lines.append("")
    skip = re.search(r"^run-gpu-tests: compute-sanitizer: (skipped: .*)$", sanitized, re.M)
    if not sanitized.strip():
        lines.append("Not run.")
    elif skip:
        lines.append(f"Not run: compute-sanitizer {skip.group(1)}")
    else:
        clean = True
        binaries = re.findall(r"^== (\S+_test) under compute-sanitizer memcheck\n(.*?)(?=^== |^<<< |\Z)",
                              sanitized, re.S | re.M)
        for name, body in binaries:
            summary = re.search(r"ERROR SUMMARY: (\d+) error", body)
            if "timed out" in body:
                state, clean = "timed out (no verdict)", False
            elif summary:
                state = f"{summary.group(1)} errors"
                clean = clean and summary.group(1) == "0"
            else:
                state, clean = "no ERROR SUMMARY (did not finish)", False
            lines.append(f"- {name}: {state}")
        lines.append("")
        lines.append(f"Clean: **{'yes' if clean and binaries else 'no'}** (console.log holds the sanitizer's output).")
    lines.append("")

    lines.append("## cuda:cnn against PyTorch (cnn_torch_check.py)")
    lines.append("")
    checks = [l for l in torch_part.splitlines() if l.startswith("cnn_torch_check")]
    lines.extend(f"- {l}" for l in checks) if checks else lines.append("Not run.")
    lines.append("")


def load_stage(out_dir, lines):
    """stage.json, cnn-step.json and ops.json as one run (their rows together)."""
    merged = {"context": {}, "benchmarks": []}
    for name in STAGE_FILES:
        path = os.path.join(out_dir, name)
        if not os.path.exists(path):
            continue
        run, err = load(path)
        if run is None:
            lines.append(err)
            lines.append("")
            continue
        merged["benchmarks"].extend(run.get("benchmarks", []))
    return merged


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="the suite's output folder")
    p.add_argument("--report", default="", help="pipebench-report (for the verdicts)")
    a = p.parse_args()
    if not os.path.isdir(a.out):
        print(f"gpu_suite_summary: no folder {a.out}", file=sys.stderr)
        return 2
    lines = ["", "# Figures", ""]
    stage = load_stage(a.out, lines)
    h2d_section(stage, lines)
    e2e_runs = verdict_section(a.out, a.report, lines)
    steps_section(train_steps([stage] + e2e_runs), lines)
    device_ops_section(stage, lines)
    decode_section(stage, lines)
    for case, msg in errored(stage):
        lines.append(f"- {case} errored: {msg}")
    log_sections(os.path.join(a.out, "console.log"), lines)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
