"""pbgate.instr - the instruction-count gate behind
`scripts/compare.sh --ab BASE_BIN NEW_BIN --metric=instructions` (issue 27 item 2; its
entry point: scripts/instr_gate.py).

  scripts/compare.sh --ab BASE_BIN NEW_BIN --metric=instructions [--threshold PCT]
      [--filter REGEX] [--out FILE.json] [--data DIR] [--images N] [--jobs 1|2]
      [--max-iterations N] [--force] [--keep DIR] [--timeout S] [-- pipebench flags...]

Time on a shared CI runner moves with the machine; the number of instructions a case
executes does not. This gate runs every selected case of both builds ONCE under Valgrind's
Callgrind (the Debian package valgrind) on a fixed small workload and compares the
instructions each case executed per benchmark iteration:

  1. the dataset: --data DIR, else a small synthetic one (--images, default 8 JPEGs of
     500x375 in 2 classes) made in a temporary folder by the `datasets/pipebench-data`
     beside BASE_BIN (else NEW_BIN);
  2. the cases: each binary lists the cases its --filter selects (default
     `BM_(Read/files/warm|Decode|Transform|Sample|Collate)/`: the single-threaded stage
     cases, reading from memory included); the two lists must be equal (exit 2 naming the
     cases only in one). A case that fixes its own iteration count above --max-iterations
     (default 100; Google Benchmark names it .../iterations:N) is left out and listed: the
     sizing operators' BM_Transform cases fix up to 2000 (1 GiB of input copies), about a
     minute and a half each under Callgrind. Both builds also run the first case once
     natively (a second): their
     contexts must agree on the pipebench version, the record version and what makes runs
     incomparable (pbgate/blocks.py check_contexts; --force: a warning), and that run
     gives the SIMD path each build takes natively on this host;
  3. the fixed work: each build runs once, on its own copy of the dataset (hard links),
     pinned to one CPU, with OPENCV_FOR_THREADS_NUM=1, as
       valgrind --tool=callgrind --trace-children=yes --separate-threads=yes
         --zero-before='benchmark::State::StartKeepRunning*'
         --dump-before='benchmark::State::FinishKeepRunning*'
         --dump-before='pipebench::bench::PerImageCosts::begin_case*'
         BIN --data=DIR --benchmark_filter=REGEX --benchmark_min_time=0 ...
     (the two builds at the same time, on two CPUs, unless --jobs 1).
     Google Benchmark 1.7.1 has no flag that fixes the iteration count
     (--benchmark_min_time=<N>x came in 1.8.0), but a minimum time of 0 ends its
     iteration search after the first try: every case runs exactly one try of one
     iteration (a case that fixes its own Iterations(n) runs those n), in both builds.
     Callgrind zeroes its counters when the timed loop starts (StartKeepRunning) and dumps
     them when it ends (FinishKeepRunning): each such dump is the case's timed loop alone
     (its set-up, the reporting and Valgrind's start-up left out; the loop's untimed
     parts, PauseTiming / ResumeTiming, are in it). A dump at each case's start
     (pipebench's begin_case, called once per run of a case) ties the loop dumps to the
     run's JSON rows in order, so a case that ended before its loop (an error) has none;
     pipebench's --budget is set to its least (0.1 s) in every build that has it: a paired
     BM_Sample case repeats its round for a fifth of the budget, so its one iteration
     would hold as many rounds as the time allowed (under Valgrind one build ran the round
     once, the other twice); with 0.1 s, one round. A case whose rows still say the builds
     did different work (paired_blocks) is skipped, named;
  4. per case: I = the loop's instructions (Callgrind's Ir: user-space instructions) on
     the main thread / the row's iterations, for BASE and NEW; the ratio NEW/BASE. The
     main thread only: the stage cases run on it, and work of other threads (the presized
     copy's encoder pool, a thread pool's idle spinning) lands in whichever loop the
     scheduler interleaves it with. Three things made counts of the same binary differ
     from run to run until they were fixed here: that other-thread work (BM_Sample/
     .../presized:256 read 115 M or 243 M instructions), two runs making one cache beside a
     shared dataset at once (each build has its own copy), and oneTBB splitting OpenCV's
     parallel_for_ loops by what the scheduler did (BM_Decode/opencv +0.29 % on a loaded
     machine; one CPU and OPENCV_FOR_THREADS_NUM=1 keep them on the main thread, whole).
     Pinned, the same binary gives the same counts to within a few dozen instructions;
  5. the verdict: REGRESSION when ratio > 1 + PCT/100, "improvement" when ratio <
     1 - PCT/100, else "no change". The counts are deterministic (the same binary on the
     same data executes the same instructions: ratio 1.000000 in calibration), so there is
     no interval and no noise guard: the JSON's ci_low and ci_high equal the ratio and the
     table says "exact". Two different binaries, or one started differently, can still
     differ by a few instructions in cases their code does not touch (the environment's
     size moves the stack and heap, and with them the path memcpy or malloc takes: a
     wrapper script setting one variable moved every BM_Transform case by 16
     instructions): hence a threshold (default 0.5 %), not 0. A case that errored in NEW
     and not in BASE FAILS (ERRORED); one that errored in BASE is skipped, listed.

Valgrind does not execute AVX-512, and the CPUID it shows the program hides it: under
Valgrind pipebench's resize / normalize kernels take their scalar code and the
photometric / affine kernels and libjpeg-turbo their AVX2 code, whatever the host has.
The counts are of those paths. The run's context says which (simd_path, written by
pipebench: transforms/simd_path.h); the gate prints and records it for both builds under
Valgrind and natively, and refuses (exit 2, --force: a warning) two builds whose paths
under Valgrind differ.

Output: the table (case, base and new instructions per iteration, ratio, "exact",
verdict), a REGRESSION / ERRORED line per failing case and a summary line, as the time
gate (pbgate/ab.py) prints them. --out FILE.json writes the time gate's JSON shape: per case
name, field ("instructions"), base_ns / new_ns (null: no time), base_instructions /
new_instructions (per iteration), change (ratio - 1), p (null), n_base, n_new (1),
verdict (regression, improvement, ok, base0), slower_than_threshold, paired (true),
ratio, ci_low = ci_high = ratio, blocks (1), deterministic (true), verdict_text; at the
top metric "instructions", simd_path {base, new, base_native, new_native}, valgrind (its
version), the same summary keys as the time gate's, "context" (NEW's context under Valgrind
plus ab_* keys, ab_metric "instructions") and "benchmarks" (NEW's rows under Valgrind,
each with its "instructions" per iteration; the rate counters items_per_second and
bytes_per_second are left out, being Valgrind's speed, not the machine's).

Exit status: 0 no regression; 1 a regression, a case that errored only in NEW, or a NEW
run that crashed; 2 bad input: valgrind missing, a binary missing or not executable, the
case sets, versions or SIMD paths differ, no case selected, a BASE run that failed, a bad
option. One `ab: error:` line on stderr.

The gate removes PIPEBENCH_TEST_SLOWDOWN (the test-only hook) from the environment it
passes on, as the time gate does; scripts/gate_calibration.sh --metric=instructions sets it
through a wrapper script. That hook is a busy-wait of a share of the operator's TIME: under
Valgrind it adds far fewer instructions than its percentage (docs/ab-gate.md, calibration).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

from . import blocks
from .blocks import (EXIT_BAD_INPUT, EXIT_OK, EXIT_REGRESSION, BlockFailed, check_binary,
                     check_case_sets, check_contexts, child_env, list_cases, log, seconds_option)
from .record import BadInput, context, load_run

DEFAULT_FILTER = "BM_(Read/files/warm|Decode|Transform|Sample|Collate)/"
DEFAULT_THRESHOLD = "0.5"
DEFAULT_IMAGES = 8
# Callgrind's triggers: zero at the timed loop's start, dump at its end, dump at each run's
# start (the anchor that ties loop dumps to the JSON's rows).
ZERO_AT = "benchmark::State::StartKeepRunning*"
LOOP_END = "benchmark::State::FinishKeepRunning*"
RUN_START = "pipebench::bench::PerImageCosts::begin_case*"
# A row counter that says how much work a case did; a case whose builds differ in it is not
# compared (skipped, named).
WORK_COUNTERS = ("paired_blocks",)
RATE_COUNTERS = ("items_per_second", "bytes_per_second")
DEFAULT_MAX_ITERATIONS = "100"
# Google Benchmark names a case that fixes its own iteration count ".../iterations:N".
FIXED_ITERATIONS = re.compile(r"/iterations:(\d+)(?=/|$)")
# The characters escaped in a --benchmark_filter (Google Benchmark 1.7.1: std::regex,
# POSIX extended grammar): the special ones, less "]" and "}", which are literal outside
# a bracket or interval and which libstdc++ refuses escaped (the whole filter then
# matches nothing).
ERE_SPECIAL = frozenset(".[()*+?{|^$\\")


def fixed_iterations(name):
    """The iteration count a case fixes itself (its name's /iterations:N), or None."""
    m = FIXED_ITERATIONS.search(name)
    return int(m.group(1)) if m else None


def exact_filter(names):
    """A --benchmark_filter selecting exactly `names`: ^(a|b|...)$, each escaped."""
    return "^(" + "|".join("".join("\\" + c if c in ERE_SPECIAL else c for c in n)
                           for n in names) + ")$"


# --- Callgrind's dumps ---------------------------------------------------------------------

def read_dump_header(path):
    """(trigger, Ir total) from one Callgrind output file's header: the `desc: Trigger:`
    line and `summary:` (the dump's total; `totals:` at the end says the same)."""
    trigger, total = None, None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("desc: Trigger:"):
                trigger = line.split(":", 2)[2].strip()
            elif line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
                break
            elif line.startswith(("fn=", "ob=", "fl=")):
                break  # past the header
    return trigger, total


def trigger_kind(trigger):
    """'run' (a case's run starts), 'loop' (its timed loop ended) or None."""
    if trigger is None:
        return None
    if "--dump-before=" in trigger and "begin_case" in trigger:
        return "run"
    if "--dump-before=" in trigger and "FinishKeepRunning" in trigger:
        return "loop"
    return None


def dump_sequence(folder):
    """The main thread's dumps of the process that ran the cases, in order: [(kind, Ir)].
    With --separate-threads=yes the files are cg.<pid>.<part>-<thread> (cg.<pid>-<thread>:
    the final dump at exit, not needed); thread 01 is the main thread, which runs every
    case of one thread (Google Benchmark runs those on the calling thread), and a trigger
    zeroes and dumps the thread that hit it. With --trace-children a wrapper script's shell
    and any child leave other pids: the process whose dumps hold loop or run triggers is
    the one. BadInput when none or several do."""
    by_pid = {}
    for name in os.listdir(folder):
        m = re.fullmatch(r"cg\.(\d+)\.(\d+)-0*1", name)
        if m:
            by_pid.setdefault(m.group(1), []).append((int(m.group(2)), name))
    seqs = {}
    for pid, parts in by_pid.items():
        seq = []
        for _, name in sorted(parts):
            trigger, total = read_dump_header(os.path.join(folder, name))
            kind = trigger_kind(trigger)
            if kind is not None:
                seq.append((kind, total if total is not None else 0))
        if seq:
            seqs[pid] = seq
    if not seqs:
        raise BadInput("Callgrind wrote no dump at a case's start or timed loop (the triggers "
                       f"{RUN_START!r} and {LOOP_END!r} never fired): no case ran, or this "
                       "pipebench does not link Google Benchmark's shared library")
    if len(seqs) > 1:
        raise BadInput(f"Callgrind dumps from {len(seqs)} processes ({', '.join(sorted(seqs))}) "
                       "hold case triggers; expected one pipebench process")
    return next(iter(seqs.values()))


def align_runs(seq, rows):
    """The loop instructions of each run, in the order of `rows` (the run's non-aggregate
    JSON rows): [Ir or None (no timed loop: the run ended before it)].

    With run anchors: each 'run' dump opens a run, the last 'loop' dump before the next
    'run' dump is its loop (Google Benchmark reports its last try). Without any (a
    pipebench whose begin_case is gone): the loop dumps in order, when there is one per
    row. BadInput when the counts cannot be tied to the rows."""
    runs = []
    anchored = any(kind == "run" for kind, _ in seq)
    if anchored:
        for kind, total in seq:
            if kind == "run":
                runs.append(None)
            elif runs:
                runs[-1] = total
        if len(runs) != len(rows):
            raise BadInput(f"Callgrind saw {len(runs)} case run(s) start but the run's JSON has "
                           f"{len(rows)} row(s): the dumps cannot be tied to the cases")
        return runs
    loops = [total for kind, total in seq if kind == "loop"]
    if len(loops) != len(rows) or any(r.get("error_occurred") for r in rows):
        raise BadInput(f"{len(loops)} timed-loop dump(s) for {len(rows)} row(s) and no dump "
                       f"at a case's start ({RUN_START!r} is not in this pipebench): the "
                       "dumps cannot be tied to the cases")
    return loops


def case_counts(doc, seq):
    """({case: instructions per iteration}, {case: error message}) of one Valgrind run:
    its JSON document and its dump sequence. A case with several runs (repetitions) gets
    the median of its runs (they agree: the counts are deterministic)."""
    rows = [r for r in doc.get("benchmarks", []) if r.get("run_type") != "aggregate"]
    loops = align_runs(seq, rows)
    per_case, errored = {}, {}
    for row, total in zip(rows, loops):
        name = row.get("name") or row.get("run_name")
        if row.get("error_occurred"):
            errored[name] = str(row.get("error_message", "error"))
            continue
        iters = row.get("iterations") or 0
        if total is None or iters <= 0:
            errored[name] = "no timed loop was recorded for this case"
            continue
        per_case.setdefault(name, []).append(total / iters)
    counts = {}
    for name, values in per_case.items():
        values.sort()
        counts[name] = values[len(values) // 2]
    return counts, errored


def work_differences(base_doc, new_doc):
    """{case: why} for the cases whose rows say the two builds did different amounts of
    work (WORK_COUNTERS: a paired case's blocks), so that their counts are not compared."""
    def work(doc):
        out = {}
        for r in doc.get("benchmarks", []):
            if r.get("run_type") == "aggregate" or r.get("error_occurred"):
                continue
            for k in WORK_COUNTERS:
                if k in r:
                    out.setdefault(r.get("name"), {})[k] = r[k]
        return out
    a, b = work(base_doc), work(new_doc)
    why = {}
    for name in set(a) & set(b):
        diff = [f"{k} {a[name][k]:g} in BASE, {b[name][k]:g} in NEW" for k in a[name]
                if k in b[name] and a[name][k] != b[name][k]]
        if diff:
            why[name] = "the builds did different amounts of work (" + "; ".join(diff) + ")"
    return why


# --- the verdict ---------------------------------------------------------------------------

def verdict(ratio, threshold_pct):
    """("regression" | "improvement" | "ok", text) for an exact ratio NEW/BASE."""
    th = threshold_pct / 100.0
    change = (ratio - 1.0) * 100.0
    if ratio > 1.0 + th:
        return "regression", "REGRESSION"
    if ratio < 1.0 - th:
        return "improvement", "improvement"
    return "ok", f"no change ({change:+.3f} %)"


def judge_case(name, base, new, threshold_pct):
    """One case: paired.judge_case's fields for exact counts (instructions per
    iteration): the interval is the ratio itself."""
    if base <= 0 or new < 0:
        v, text, ratio = "base0", "not judged (no instruction counted in BASE)", None
    else:
        ratio = new / base
        v, text = verdict(ratio, threshold_pct)
    return {"name": name, "field": "instructions", "unit": "instructions per iteration",
            "base_ns": None, "new_ns": None, "base_instructions": base,
            "new_instructions": new,
            "change": None if ratio is None else ratio - 1.0, "p": None,
            "n_base": 1, "n_new": 1, "verdict": v,
            "slower_than_threshold": ratio is not None and ratio > 1.0 + threshold_pct / 100,
            "cv": None, "cv_base": None, "cv_new": None,
            "paired": True, "deterministic": True, "ratio": ratio, "ci_low": ratio,
            "ci_high": ratio, "blocks": 1, "confidence": None, "verdict_text": text}


def analyse(base, new, threshold_pct, different_work=None):
    """base, new: (counts, errored) of each build; different_work: {case: why} (not
    compared). Returns (results {case: judge_case}, errored_new {case: message}, skipped
    {case: why}, lost [cases BASE counted and NEW has neither counted nor errored])."""
    (bc, be), (nc, ne) = base, new
    results, errored_new, skipped, lost = {}, {}, {}, []
    for name in list(bc) + [n for n in be if n not in bc]:
        if name in be:
            skipped[name] = f"errored in BASE: {be[name]}"
        elif name in (different_work or {}) and name in nc:
            skipped[name] = different_work[name]
        elif name in ne:
            errored_new[name] = ne[name]
        elif name not in nc:
            lost.append(name)
        else:
            results[name] = judge_case(name, bc[name], nc[name], threshold_pct)
    return results, errored_new, skipped, lost


# --- running the builds --------------------------------------------------------------------

def valgrind_version():
    exe = shutil.which("valgrind")
    if exe is None:
        raise BadInput("valgrind not found on PATH: --metric=instructions runs the cases "
                       "under Valgrind's Callgrind; install the Debian package valgrind "
                       "(scripts/setup.sh)")
    p = subprocess.run([exe, "--version"], capture_output=True, text=True)
    if p.returncode != 0:
        raise BadInput(f"{exe} --version failed (exit {p.returncode}): {p.stderr.strip()[-300:]}")
    return exe, p.stdout.strip()


def native_probe(binary, side, data, case, extra, out_json, log_path):
    """One native run of one case (one iteration): its context, for the version check and
    the SIMD path the build takes natively."""
    cmd = [binary, f"--data={data}", f"--benchmark_filter=^{re.escape(case)}$",
           "--benchmark_min_time=0", f"--benchmark_out={out_json}",
           "--benchmark_out_format=json", *extra]
    with open(log_path, "w") as logf:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=logf, env=child_env(),
                           timeout=600)
    try:
        return load_run(out_json)
    except BadInput as e:
        with open(log_path, errors="replace") as f:
            tail = f.read()[-800:].strip()
        raise BlockFailed(side, f"the {'BASE' if side == 'A' else 'NEW'} build {binary} "
                                f"exited with status {p.returncode} on its first case and "
                                f"wrote no usable JSON ({e}); its stderr ends: {tail}")


def valgrind_command(valgrind, binary, data, filt, extra, folder):
    return [valgrind, "--tool=callgrind", "--trace-children=yes", "--separate-threads=yes",
            f"--callgrind-out-file={os.path.join(folder, 'cg.%p')}",
            f"--zero-before={ZERO_AT}", f"--dump-before={LOOP_END}",
            f"--dump-before={RUN_START}",
            binary, f"--data={data}", f"--benchmark_filter={filt}", "--benchmark_min_time=0",
            f"--benchmark_out={os.path.join(folder, 'run.json')}",
            "--benchmark_out_format=json", "--quiet", *extra]


def valgrind_env():
    """The builds' environment under Valgrind: without the test hook (child_env), and with
    OpenCV's parallel_for_ on the calling thread (OPENCV_FOR_THREADS_NUM=1), so that an
    operator's OpenCV work is the main thread's, counted, and never split between threads
    by the scheduler."""
    env = child_env()
    env["OPENCV_FOR_THREADS_NUM"] = "1"
    return env


def one_cpu(index):
    """The CPU the index-th Valgrind run is pinned to: one of this process's CPUs. Valgrind
    runs one thread at a time anyway; pinned, the program sees one CPU, so oneTBB (OpenCV's
    parallel_for_ backend in Debian) starts no worker thread and splits no loop by what the
    scheduler did. Unpinned, BM_Decode/opencv's colour conversion executed 0.3 % more
    instructions in both builds of a comparison made on a loaded machine."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[index % len(cpus)]


def start_run(cmd, log_path, cpu):
    logf = open(log_path, "w")
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=logf, env=valgrind_env(),
                            preexec_fn=lambda: os.sched_setaffinity(0, {cpu})), logf


def finish_run(proc, logf, side, binary, folder, log_path, deadline):
    try:
        rc = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        rc = "timeout (--timeout)"
    logf.close()
    label = "BASE" if side == "A" else "NEW"
    try:
        doc = load_run(os.path.join(folder, "run.json"))
        return doc, dump_sequence(folder)
    except BadInput as e:
        raise BlockFailed(side, f"the {label} run under Valgrind ({binary}) exited with "
                                f"status {rc} and left no usable result ({e}); its stderr "
                                f"ends: {blocks.stderr_tail(log_path)}")


# --- output --------------------------------------------------------------------------------

def format_count(n):
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:.4f} {unit}"
    return f"{n:.1f}"


def print_table(results):
    head = ("case", "base instr", "new instr", "ratio", "interval", "verdict")
    rows = []
    for r in results.values():
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.6f}"
        rows.append((r["name"], format_count(r["base_instructions"]),
                     format_count(r["new_instructions"]), ratio,
                     "-" if r["ratio"] is None else "exact", r["verdict_text"]))
    widths = [max(len(x[i]) for x in [head] + rows) for i in range(5)]
    for x in [head] + rows:
        print("  ".join(v.ljust(widths[i]) if i == 0 else v.rjust(widths[i])
                        for i, v in enumerate(x[:5])) + "  " + x[5])


def simd_line(simd):
    b, n = simd["base"], simd["new"]
    under = f"{b}" if b == n else f"BASE {b}, NEW {n}"
    nb, nn = simd["base_native"], simd["new_native"]
    native = f"{nb}" if nb == nn else f"BASE {nb}, NEW {nn}"
    text = f"SIMD path: {under} under Valgrind (natively on this host: {native})"
    if "avx512" in (nb, nn) and b != "avx512":
        text += ("; Valgrind does not execute AVX-512, so these counts are of the AVX2 and "
                 "scalar code, not of the AVX-512 code this host runs natively")
    return text


def summary_doc(args, results, errored_new, skipped, lost, docs, simd, vg, elapsed, failed):
    new_doc = docs[1]
    ctx = dict(context(new_doc))
    ctx.update({"ab_gate": "instruction counts (Callgrind)", "ab_metric": "instructions",
                "ab_base": os.path.abspath(args.base), "ab_new": os.path.abspath(args.new),
                "ab_blocks": 1, "valgrind": vg})
    counts = docs[2]
    rows = []
    for row in new_doc.get("benchmarks", []):
        if row.get("run_type") == "aggregate":
            continue
        r = {k: v for k, v in row.items() if k not in RATE_COUNTERS}
        name = r.get("name") or r.get("run_name")
        if name in counts:
            r["instructions"] = counts[name]
        rows.append(r)
    regressions = [n for n, r in results.items() if r["verdict"] == "regression"]
    return {
        "paired": True, "tool": "scripts/instr_gate.py", "metric": "instructions",
        "method": "instructions per iteration of each case's timed loop under Valgrind's "
                  "Callgrind (one iteration, --benchmark_min_time=0), NEW/BASE; deterministic "
                  "counts, no interval",
        "base": args.base, "new": args.new, "threshold_pct": args.threshold,
        "max_regression": args.threshold, "confidence": None, "blocks": 1, "order": "AB",
        "min_time_s": 0.0, "filter": args.filter, "time": None, "data": args.data,
        "images": args.images, "pipebench_flags": args.extra, "seconds": round(elapsed, 3),
        "simd_path": simd, "valgrind": vg,
        "result": "FAIL" if failed else "PASS",
        "exit_status": EXIT_REGRESSION if failed else EXIT_OK,
        "cases": list(results.values()),
        "regressions": regressions,
        "improvements": [n for n, r in results.items() if r["verdict"] == "improvement"],
        "noisy": [], "inconclusive": [], "max_noise_pct": None, "max_iterations": args.max_iterations,
        "excluded": args.excluded,
        "errored": errored_new, "lost": lost, "skipped": skipped, "busy_blocks": 0,
        "context": ctx, "benchmarks": rows,
    }


def report(args, results, errored_new, skipped, lost, docs, simd, vg, elapsed):
    print(f"Instruction counts: BASE {args.base} vs NEW {args.new}: {len(results)} case(s), "
          "instructions per iteration under Valgrind's Callgrind, ratio NEW/BASE (exact "
          "counts: no interval)")
    print(f"ab: {simd_line(simd)}")
    print_table(results)
    print()
    for name, r in results.items():
        if r["verdict"] == "regression":
            print(f"REGRESSION {name}: instructions {format_count(r['base_instructions'])} -> "
                  f"{format_count(r['new_instructions'])} per iteration (ratio "
                  f"{r['ratio']:.6f}, exact count, limit +{args.threshold:g}%)")
    for name, msg in errored_new.items():
        print(f"ERRORED {name}: in NEW: {' '.join(str(msg).split())[:200]} (not in BASE)")
    for name in lost:
        print(f"LOST {name}: counted in BASE, missing from NEW")
    for name, why in skipped.items():
        print(f"ab: skipped {name}: {' '.join(why.split())[:200]}")
    if args.excluded:
        print(f"ab: not counted: {len(args.excluded)} case(s) fixing more than "
              f"--max-iterations {args.max_iterations} iterations of their own: "
              f"{', '.join(args.excluded)}")
    regressions = [n for n, r in results.items() if r["verdict"] == "regression"]
    improved = sum(1 for r in results.values() if r["verdict"] == "improvement")
    same = sum(1 for r in results.values() if r["verdict"] == "ok")
    unjudged = sum(1 for r in results.values() if r["verdict"] == "base0")
    failed = bool(regressions or errored_new or lost)
    moved = [abs(r["ratio"] - 1) * 100 for r in results.values() if r["ratio"] is not None]
    tail = f", {len(skipped)} skipped" if skipped else ""
    if unjudged:
        tail += f", {unjudged} not judged (0 instructions in BASE)"
    if args.excluded:
        tail += f", {len(args.excluded)} not counted (--max-iterations)"
    if errored_new or lost:
        tail += f"; {len(errored_new)} errored and {len(lost)} lost in NEW"
    biggest = f"; largest change {max(moved):.3f} %" if moved else ""
    print(f"ab: {'FAIL' if failed else 'PASS'}: {len(regressions)} of {len(results)} case(s) "
          f"grew by more than {args.threshold:g}% in instructions per iteration (Callgrind, "
          f"exact counts); {improved} fewer, {same} no change{tail}"
          f"{biggest}; {elapsed:.0f} s")
    if args.out:
        doc = summary_doc(args, results, errored_new, skipped, lost, docs, simd, vg, elapsed,
                          failed)
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return EXIT_REGRESSION if failed else EXIT_OK


# --- main ----------------------------------------------------------------------------------

def parse_args(argv):
    argv, extra = blocks.split_pipebench_flags(argv)
    parser = argparse.ArgumentParser(
        prog="compare.sh --ab ... --metric=instructions",
        description="Run every selected case of two pipebench builds once under Valgrind's "
                    "Callgrind and gate on the instructions per iteration of each case, "
                    "NEW/BASE. Exit 0: no regression; 1: regression; 2: bad input.",
        epilog="Arguments after -- go to pipebench in both runs. Method and calibration: "
               "docs/ab-gate.md.")
    blocks.add_builds(parser)
    parser.add_argument("--metric", choices=("instructions",), default="instructions",
                        help="instructions (this gate; compare.sh --ab without it: time)")
    parser.add_argument("--threshold", metavar="PCT", default=DEFAULT_THRESHOLD,
                        help="smallest growth in instructions that fails, percent (default "
                             f"{DEFAULT_THRESHOLD}: the counts are exact)")
    parser.add_argument("--filter", metavar="REGEX", default=DEFAULT_FILTER,
                        help=f"--benchmark_filter (default {DEFAULT_FILTER!r}: the "
                             "single-threaded stage cases)")
    parser.add_argument("--out", metavar="FILE.json", help="write the result as JSON")
    parser.add_argument("--data", metavar="DIR",
                        help="dataset (default: a small synthetic one in a temporary folder)")
    parser.add_argument("--images", metavar="N", default=str(DEFAULT_IMAGES),
                        help=f"images of the synthetic dataset (default {DEFAULT_IMAGES})")
    parser.add_argument("--jobs", metavar="N", default="2",
                        help="1: the two Valgrind runs one after the other; 2 (default): at "
                             "the same time (the counts do not depend on it)")
    parser.add_argument("--force", action="store_true",
                        help="compare builds whose version, context or SIMD path differs "
                             "(a warning)")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep both runs' JSON, stderr and Callgrind dumps in DIR")
    parser.add_argument("--max-iterations", metavar="N", default=DEFAULT_MAX_ITERATIONS,
                        help="leave out cases that fix more than N iterations of their own "
                             f"(default {DEFAULT_MAX_ITERATIONS}: the sizing operators' "
                             "BM_Transform cases fix up to 2000, minutes under Valgrind)")
    parser.add_argument("--timeout", metavar="S", default="1200",
                        help="seconds the Valgrind runs may take (default 1200)")
    args = parser.parse_args(argv)
    blocks.check_gate_args(args, extra, "--data or --filter")
    try:
        args.images = int(args.images)
        assert 1 <= args.images <= 10000
    except (ValueError, AssertionError):
        raise BadInput(f"--images must be an integer in [1, 10000], got {args.images!r}") from None
    try:
        args.max_iterations = int(args.max_iterations)
        assert args.max_iterations >= 1
    except (ValueError, AssertionError):
        raise BadInput(f"--max-iterations must be an integer >= 1, got "
                       f"{args.max_iterations!r}") from None
    if args.jobs not in ("1", "2"):
        raise BadInput(f"--jobs must be 1 or 2, got {args.jobs!r}")
    args.jobs = int(args.jobs)
    args.timeout = seconds_option(args.timeout, "--timeout")
    return args


def side_copy(data, folder):
    """A copy of the dataset for one build: hard links where the file system allows (no
    space, same inode), else copies; modification times kept, so the dataset's fingerprint
    (relative names, sizes, mtimes) is the original's. Each build then makes its own
    caches beside its copy (the presized copy: <data>/../.pipebench-cache): two processes
    making one cache at the same time raced, and one of them measured a presized round of
    twice the images."""
    dest = os.path.join(folder, "data")

    def link_or_copy(src, dst):
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)
    try:
        shutil.copytree(data, dest, copy_function=link_or_copy, symlinks=True,
                        ignore=shutil.ignore_patterns(".pipebench-cache"))
    except (OSError, shutil.Error) as e:
        raise BadInput(f"cannot copy the dataset {data} for one build into {dest}: {e}") from e
    return dest


def run(args, work):
    t_start = time.monotonic()
    check_binary(args.base, "BASE_BIN")
    check_binary(args.new, "NEW_BIN")
    valgrind, vg = valgrind_version()
    if args.data is None:
        args.data = blocks.make_dataset(args.base, args.new, os.path.join(work, "data"),
                                        args.images)
    # blocks.FIXED_WORK_FLAGS: --budget at its least, one round of images per paired case
    # (under Valgrind at the default, one build ran the round once, the other twice: a
    # ratio of 2).
    flags = {b: args.extra + blocks.fixed_work_flags(b) for b in (args.base, args.new)}
    base_cases = list_cases(args.base, args.data, args.filter, flags[args.base])
    new_cases = list_cases(args.new, args.data, args.filter, flags[args.new])
    check_case_sets(base_cases, new_cases, args.filter)
    # A case that fixes its own iteration count runs all of them under Valgrind too: the
    # sizing operators' BM_Transform cases fix up to 2000 (1 GiB of input copies), about
    # a minute and a half each under Callgrind. Those above --max-iterations are left out.
    args.excluded = {n: fixed_iterations(n) for n in base_cases
                     if (fixed_iterations(n) or 0) > args.max_iterations}
    cases = [n for n in base_cases if n not in args.excluded]
    if not cases:
        raise BadInput(f"every case --filter {args.filter!r} selects fixes more than "
                       f"--max-iterations {args.max_iterations} iterations of its own; "
                       "raise --max-iterations to count them (minutes under Valgrind)")
    filt = args.filter
    if args.excluded:
        filt = exact_filter(cases)
        if list_cases(args.base, args.data, filt, flags[args.base]) != cases:
            raise BadInput("cannot write the cases left after --max-iterations as a "
                           "--benchmark_filter; narrow --filter to leave those cases out")
        log(f"left out: {len(args.excluded)} case(s) that fix more than --max-iterations "
            f"{args.max_iterations} iterations of their own (minutes under Valgrind; "
            f"--max-iterations {max(args.excluded.values())} counts them): "
            f"{', '.join(args.excluded)}")
    probes = [native_probe(b, s, args.data, cases[0], flags[b],
                           os.path.join(work, f"native-{s}.json"),
                           os.path.join(work, f"native-{s}.log"))
              for b, s in ((args.base, "A"), (args.new, "B"))]
    check_contexts(probes[0], probes[1], args.force)
    log(f"{len(cases)} case(s), one iteration each (a case that fixes its count: that "
        f"count), under {vg} (Callgrind), "
        f"{'both builds at once' if args.jobs == 2 else 'one build after the other'}")
    folders, datas = [], []
    for s in ("A", "B"):
        folders.append(os.path.join(work, f"callgrind-{s}"))
        os.makedirs(folders[-1])
        datas.append(side_copy(args.data, os.path.join(work, f"side-{s}")))
    cmds = [valgrind_command(valgrind, b, d, filt, flags[b], f)
            for b, d, f in ((args.base, datas[0], folders[0]), (args.new, datas[1], folders[1]))]
    logs = [os.path.join(work, f"valgrind-{s}.log") for s in ("A", "B")]
    deadline = time.monotonic() + args.timeout
    out = [None, None]
    t0 = time.monotonic()
    if args.jobs == 2:
        started = [start_run(cmds[i], logs[i], one_cpu(i)) for i in (0, 1)]
        for i, side, b in ((0, "A", args.base), (1, "B", args.new)):
            try:
                out[i] = finish_run(*started[i], side, b, folders[i], logs[i], deadline)
            except BlockFailed:
                for proc, logf in started:
                    if proc.poll() is None:
                        proc.kill()
                        proc.wait()
                    logf.close()
                raise
    else:
        for i, side, b in ((0, "A", args.base), (1, "B", args.new)):
            out[i] = finish_run(*start_run(cmds[i], logs[i], one_cpu(0)), side, b, folders[i],
                                logs[i], deadline)
    log(f"both builds ran under Valgrind in {time.monotonic() - t0:.1f} s")
    (base_doc, base_seq), (new_doc, new_seq) = out
    base = case_counts(base_doc, base_seq)
    new = case_counts(new_doc, new_seq)
    simd = {"base": context(base_doc).get("simd_path", "unknown"),
            "new": context(new_doc).get("simd_path", "unknown"),
            "base_native": context(probes[0]).get("simd_path", "unknown"),
            "new_native": context(probes[1]).get("simd_path", "unknown")}
    if simd["base"] != simd["new"]:
        what = (f"the two builds take different SIMD paths under Valgrind (BASE "
                f"{simd['base']!r}, NEW {simd['new']!r}): their instruction counts are of "
                "different code")
        if not args.force:
            raise BadInput(what + "; pass --force to compare them anyway")
        log(f"warning: {what} (--force)")
    results, errored_new, skipped, lost = analyse(base, new, args.threshold,
                                                  work_differences(base_doc, new_doc))
    return (results, errored_new, skipped, lost, (base_doc, new_doc, new[0]), simd, vg,
            time.monotonic() - t_start)


def keep_runs(keep, work):
    """Each side's Callgrind output and run JSON (not the dataset copies)."""
    for root, _, files in os.walk(work):
        top = os.path.relpath(root, work).split(os.sep)[0]
        if top == "data" or top.startswith("side-"):
            continue
        dest = os.path.join(keep, os.path.relpath(root, work))
        os.makedirs(dest, exist_ok=True)
        for f in files:
            shutil.copy2(os.path.join(root, f), dest)


def main(argv):
    try:
        args = parse_args(argv)
    except BadInput as e:
        print(f"ab: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return blocks.run_gate(args, run, report, "pipebench-instr-", keep_runs)

