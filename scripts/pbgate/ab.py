"""pbgate.ab - the paired A/B regression gate behind `scripts/compare.sh --ab` (issue 27;
its entry point: scripts/ab_gate.py).

  scripts/compare.sh --ab BASE_BIN NEW_BIN [--threshold PCT] [--blocks N] [--confirm K]
      [--confirm-max M] [--filter REGEX] [--out FILE.json] [--data DIR] [--min-time S]
      [--time auto|real|cpu] [--precision PCT] [--time-budget S] [--max-rounds N]
      [--inconclusive report|pass|fail] [--force] [--keep DIR] [--block-timeout S]
      [-- pipebench flags...]
  scripts/compare.sh --ab BASE_BIN NEW_BIN --metric=instructions [...]
      instruction counts under Valgrind instead of time: pbgate/instr.py, which
      main() hands the arguments to (its own options; --metric=time is this gate alone).
  scripts/compare.sh --ab BASE_BIN NEW_BIN [--metric=both] [--fail-on auto|time|
      instructions|both] [--instr-threshold PCT] [...]
      the default where valgrind exists: the instruction gate, then this one, one decision
      per case (pbgate/both.py).

compare.sh BASE.json NEW.json compares two runs made at different times; on a shared CI
runner the machine's speed drifts between them (other jobs, frequency, caches), and that
drift lands in the comparison as if the code had changed. This gate runs the two builds
itself, interleaved on the same machine, so that both see the same conditions:

  1. the dataset: --data DIR, else a small synthetic one (16 JPEGs of 500x375 in 2 classes)
     made in a temporary folder by the `datasets/pipebench-data` beside BASE_BIN (the build
     tree's layout: BASE/bench/pipebench -> BASE/datasets/pipebench-data; NEW's when BASE
     has none);
  2. the cases: each binary lists the cases its --filter selects (`--benchmark_list_tests`;
     default filter `BM_(Decode|Transform|Sample|Collate)/`, the single-threaded stage
     cases). The two lists must be equal (exit 2 naming the cases only in one);
  3. the blocks (the screen): N rounds (--blocks, default 4, fewer down to 2 when the first
     round shows 4 would take over half of what is left of --time-budget; an odd N is rounded up) of
     four processes, in the order A B B A and B A A B by turns (A = BASE, B = NEW), so that
     neither build always holds a round's first and last block, each one process running every selected case once, short
     (--benchmark_min_time=0.05 s, --min-time; --budget=0.1, so that a paired BM_Sample
     case runs its round of images once, as FIXED_WORK_FLAGS says), with the same data,
     filter, seed and extra pipebench flags (after `--`), each writing its Google
     Benchmark JSON. The first A and B
     blocks' contexts must agree on pipebench_version and pipebench_record (the run
     record's version) and on what makes runs incomparable for compare.sh (dataset, batch,
     crop, pipeline, build type: record.context_mismatches); otherwise exit 2 naming
     what differs (--force: a warning instead);
  4. per case and round i: the block time t (the row's real_time or cpu_time, as the case
     key's timed_by says: record.timed_field; --time real|cpu forces one), and the
     paired ratio r_i = (B1 + B2) / (A1 + A2). A drift that is linear in time over the
     round adds the same to both sums (A1 + A2 = 2 A(mid) = B1 + B2 under no change), so
     ABBA cancels it; a step change of the machine cancels in every round it does not fall
     into;
  5. the statistic: the mean of ln r_i over the N rounds with its Student t interval,
     mean +- t(0.975, N - 1) * s / sqrt(N) (s the sample standard deviation of the ln r_i),
     reported as the ratio NEW/BASE = exp(mean) and its 95 % interval exp(lo)..exp(hi).
     Logs make the ratio symmetric (x2 and x0.5 are equally far from 1) and the mean of
     logs is the geometric mean of the round ratios;
  6. the verdict: REGRESSION when ratio > 1 + PCT/100 AND the interval's lower bound > 1
     (slower beyond the threshold, and not noise); "improvement" when ratio < 1 - PCT/100
     AND the upper bound < 1; otherwise "no change (within noise +-x %)", x the interval's
     half-width. A case that errored in a NEW block but in no BASE block FAILS (ERRORED);
     one that errored in a BASE block is skipped, listed;
  7. power before a verdict (issue 36): a case whose interval's half-width exceeds the
     precision (--precision, default half the threshold) cannot tell a change of the
     threshold's size from none: it is "inconclusive" (never "no change"), unless its
     whole interval lies beyond the threshold (lower bound > 1 + PCT/100: a REGRESSION;
     upper < 1 - PCT/100: an improvement). --precision inf gives rule 6 alone;
  8. the second stage (measure_again): the screen's suspects, the cases whose rounds point
     to a slowdown (is_suspect: the median round ratio above 1 + 3/4 of the threshold, or
     the mean above 1 + half of it with the interval above 1; every case rules 6-7 would
     call a REGRESSION is one), at most --confirm-max (default 10), the highest median
     first, are measured again in at least K rounds of their own (--confirm, default 6),
     whatever the budget (with both metrics under --fail-on=auto, only the suspects whose
     time can decide: the others while the budget pays); the cases short of the precision
     are measured again in the rounds their spread needs (plan.rounds_for_precision), those
     whose time can decide first, then the cheapest first, while
     --time-budget (default 300 s for the whole comparison) pays for them, and a stage
     stops before a pair of rounds that its rounds so far say would end past it; a case still
     short after its rounds gets more, planned from them (at most 3 passes and
     --max-rounds). Each is judged by rules 4-7 on its own rounds alone (fresh data, not
     selected for being high). Why: the screen tests some 60 cases at 95 % each on rounds
     a neighbour's burst can disturb; the heavy cases (a decode or a sample of a round of
     images: one to three iterations per block) get intervals of +-10 to +-30 % from 4
     rounds, which said "no change" to a real slowdown before this stage existed.
     --confirm 0: no confirmation of suspects. A suspect not measured again (beyond
     --confirm-max, or skipped or lost there) keeps its screen verdict, and the output
     names it; a case the budget could not pay for stays inconclusive, named.

Method and source: a paired comparison (each round is a pair of measurements taken under
the same machine state) with a one-sample t interval on the log ratios: the standard paired
t procedure (e.g. NIST/SEMATECH e-Handbook of Statistical Methods, 7.3.1 and 7.4.4, "paired
t"), applied to log time ratios. The interleaving of the two builds follows Tango.rs's
paired benchmarking (Denis Bazhenov, "Paired benchmarking. How to measure performance",
2023; github.com/bazhenov/tango): running base and candidate alternately under the same
conditions removes most of the machine's variance from their difference. ABBA (rather than
AB AB) is the classical counterbalanced order that also cancels linear drift within a
round; alternating it with B A A B (a crossover design's balance across periods) cancels a
penalty on a round's first or last block, which A B B A alone puts on BASE every time
(position_effect estimates it). The rounds a precision needs follow the t interval's
sample-size formula (pbgate/plan.py).

Output: one line per block on stderr while it runs, then a table (case, base and new time:
medians over the 2N blocks of each side, ratio NEW/BASE, 95 % interval, verdict; for a case
measured again, its confirmation's), a "measured again" line per suspect (screen and
confirmation side by side), a REGRESSION / ERRORED line per failing case and a summary
line. --out FILE.json writes the
result: per case the fields compare.judge returns (field, base_ns, new_ns, change =
ratio - 1, p (None: no U test), n_base, n_new, verdict (regression, improvement, noisy,
ok), slower_than_threshold, cv, cv_base, cv_new) plus "paired": true, "ratio", "ci_low",
"ci_high", "blocks" (rounds), the round ratios and the verdict's text, "stage" (screen or
confirmation) and, for a case measured again, "screen" (the screen's ratio, interval,
rounds and verdict); at the top "suspects", "confirm_blocks" and "screen_seconds"; and, so that
scripts/export.py and scripts/history.py read the file as a run of the change, "context"
(NEW's first block's, plus ab_* keys) and "benchmarks" (NEW's rows from its 2N blocks, one
repetition per block). pbgate/compare.py itself writes no JSON: these are the names of its
judge() results, which history.py also uses.

Exit status: 0 no regression, every case judged with the precision; 1 at least one
regression or a case that errored only in NEW (or a NEW block that crashed); 3 no
regression but a case inconclusive (--inconclusive=pass: 0, fail: 1); 2 bad input: a binary missing or not executable, the
case sets differ, the builds are different pipebench versions or measure different things,
no case selected, a BASE block that failed, a bad option. One `ab: error:` line on stderr.

The gate removes PIPEBENCH_TEST_SLOWDOWN (a test-only hook: transforms/ops/test_slowdown.h)
from the environment it passes to the builds; scripts/gate_calibration.sh sets it through
a wrapper script to inject a known slowdown.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from . import both as gate_both
from . import instr as gate_instr
from . import plan as gate_plan
from .blocks import (EXIT_BAD_INPUT, EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION, BlockFailed,
                     add_builds, case_filter, check_binary, check_case_sets, check_contexts,
                     check_gate_args, child_env, fixed_work_flags, int_option, list_cases, log,
                     make_dataset, run_gate, seconds_option, split_pipebench_flags, stderr_tail)
from .compare import format_time
from .paired import CONFIDENCE, default_precision, is_suspect, judge_case
from .record import (BadInput, busy_flag, case_key, context, iterations_by_case, load_run,
                     time_ns, timed_field)

DEFAULT_FILTER = "BM_(Decode|Transform|Sample|Collate)/"
DEFAULT_BLOCKS = 4
DEFAULT_CONFIRM = 6
DEFAULT_CONFIRM_MAX = 10
DEFAULT_MIN_TIME = "0.05"
DEFAULT_TIME_BUDGET = 300
DEFAULT_MAX_ROUNDS = 40
DEFAULT_CONFIRM_MIN_TIME = "0.2"
# The first pass of the second stage runs at most this many rounds for precision (the
# screen's spread, at a shorter block, over-states what longer blocks need); later passes
# plan from the pass's own spread.
FIRST_PASS_ROUNDS = 12
# Round q runs ORDERS[q % 2]: A B B A, then B A A B, so that neither build holds the first
# and last block of every round (a penalty on a process that starts or ends a round would
# otherwise always land on BASE and read as NEW being faster).
ORDERS = ("ABBA", "BAAB")


# --- one block ---------------------------------------------------------------------------

def block_times(doc, mode="auto"):
    """{case: ns} (the block's time of each case: median of its iteration rows, normally
    one; a paired BM_Sample row's time divided by its paired_rounds, the rounds of images
    its iteration held), {case: error message}, {case: field}."""
    cases, errored = iterations_by_case(doc)
    times, fields = {}, {}
    for name, rows in cases.items():
        field = timed_field(case_key(rows[0])) if mode == "auto" else mode + "_time"
        fields[name] = field
        times[name] = statistics.median(time_ns(r, field) / per_rounds(r) for r in rows)
    return times, errored, fields


def per_rounds(row):
    """The rounds of images a paired case's iteration held (its paired_rounds; 1 else)."""
    rounds = row.get("paired_rounds")
    return rounds if isinstance(rounds, (int, float)) and rounds >= 1 else 1


def analyse(rounds_docs, threshold_pct, mode="auto", confidence=CONFIDENCE,
            max_noise_pct=None, orders=None):
    """The gate over the blocks' documents [(A1, B1, B2, A2)] (loaded Google Benchmark
    JSON; each build's first and second block of a round), `orders` the rounds' orders.
    Returns (results {case: judge_case}, errored_new {case: message},
    skipped {case: why}, lost [cases in every BASE block and missing from a NEW block])."""
    tables = [[block_times(d, mode) for d in quad] for quad in rounds_docs]
    names = []
    for quad in tables:
        for times, errored, _ in quad:
            for n in list(times) + list(errored):
                if n not in names:
                    names.append(n)
    results, errored_new, skipped, lost = {}, {}, {}, []
    for name in names:
        base_err = [t[1][name] for quad in tables for t in (quad[0], quad[3]) if name in t[1]]
        new_err = [t[1][name] for quad in tables for t in (quad[1], quad[2]) if name in t[1]]
        if base_err:
            skipped[name] = f"reported an error in a BASE block: {base_err[0]}"
            continue
        if new_err:
            errored_new[name] = new_err[0]
            continue
        rounds, field = [], None
        for quad in tables:
            vals = [t[0].get(name) for t in quad]
            if None in vals:
                break
            rounds.append(tuple(vals))
            field = field or quad[0][2][name]
        if len(rounds) < len(tables):
            if all(name in quad[i][0] for quad in tables for i in (0, 3)):
                lost.append(name)
            else:
                skipped[name] = "missing from a BASE block"
            continue
        results[name] = judge_case(name, field, rounds, threshold_pct, confidence,
                                   max_noise_pct, orders[:len(rounds)] if orders else None)
    return results, errored_new, skipped, lost


def suspects_of(results, threshold_pct, limit, settled=frozenset()):
    """(the suspects to measure again, at most `limit`, those whose time can decide (not in
    `settled`) first, then the highest median round ratio first; the suspects left out by
    the limit)."""
    found = [n for n, r in results.items() if is_suspect(r, threshold_pct)]
    found.sort(key=lambda n: (n in settled, -statistics.median(results[n]["round_ratios"])))
    return found[:limit], found[limit:]


def screen_fields(r):
    """What the confirmation keeps of a case's screen result."""
    return {k: r[k] for k in ("ratio", "ci_low", "ci_high", "blocks", "round_ratios",
                              "verdict", "verdict_text")}


def merge_confirmation(results, confirmed, suspects=None):
    """The screen's results with each re-measured case's verdict replaced by the one of its
    own rounds (fresh data, so that the screen's selection of the highest ratios does not
    bias the verdict); the screen's figures stay under "screen". Its stage: "confirmation"
    for a suspect (all of them when `suspects` is None), "precision" for a case measured
    again because its interval was too wide."""
    out = {}
    for name, r in results.items():
        if name in confirmed:
            c = dict(confirmed[name])
            c["screen"] = screen_fields(r)
            c["stage"] = ("confirmation" if suspects is None or name in suspects
                          else "precision")
            c["verdict_text"] += f" [measured again: {c['blocks']} rounds]"
            out[name] = c
        else:
            r = dict(r)
            r["stage"] = "screen"
            out[name] = r
    return out


# --- running the builds ------------------------------------------------------------------

def run_block(binary, side, data, filt, min_time, extra, out_json, log_path, timeout):
    cmd = [binary, f"--data={data}", f"--benchmark_filter={filt}",
           f"--benchmark_min_time={min_time}", f"--benchmark_out={out_json}",
           "--benchmark_out_format=json", *extra]
    with open(log_path, "w") as logf:
        try:
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=logf, env=child_env(),
                               timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    try:
        return load_run(out_json)
    except BadInput as e:
        raise BlockFailed(side, f"the {'BASE' if side == 'A' else 'NEW'} block {binary} "
                                f"exited with status {rc} and wrote no usable JSON ({e}); "
                                f"its stderr ends: {stderr_tail(log_path)}")


# --- output ------------------------------------------------------------------------------

def print_table(results, confidence):
    head = ("case", "base", "new", "ratio", f"{confidence * 100:g} % interval", "verdict")
    rows = []
    for r in results.values():
        if r["ratio"] is None:
            rows.append((r["name"], format_time(r["base_ns"]), format_time(r["new_ns"]),
                         "-", "-", r["verdict_text"]))
            continue
        rows.append((r["name"], format_time(r["base_ns"]), format_time(r["new_ns"]),
                     f"{r['ratio']:.4f}", f"{r['ci_low']:.4f}..{r['ci_high']:.4f}",
                     r["verdict_text"]))
    widths = [max(len(x[i]) for x in [head] + rows) for i in range(5)]
    for x in [head] + rows:
        print("  ".join(v.ljust(widths[i]) if i == 0 else v.rjust(widths[i])
                        for i, v in enumerate(x[:5])) + "  " + x[5])


def summary_doc(args, results, errored_new, skipped, lost, docs, elapsed, failed):
    new_docs = [d for quad in docs for d in (quad[1], quad[2])]
    ctx = dict(context(new_docs[0])) if new_docs else {}
    ctx.update({"ab_gate": "paired ABBA", "ab_metric": "time",
                "ab_base": os.path.abspath(args.base),
                "ab_new": os.path.abspath(args.new), "ab_blocks": args.blocks})
    rows = []
    for i, d in enumerate(new_docs):
        for row in d["benchmarks"]:
            if row.get("run_type") == "aggregate":
                continue
            r = dict(row)
            r.update(repetitions=len(new_docs), repetition_index=i, ab_block=i)
            rows.append(r)
    regressions = [n for n, r in results.items() if r["verdict"] == "regression"]
    inconclusive = [n for n, r in results.items() if r["verdict"] == "inconclusive"]
    return {
        "paired": True, "tool": "scripts/ab_gate.py", "metric": "time",
        "method": "ABBA rounds, r = (B1+B2)/(A1+A2); mean of ln r with a Student t "
                  f"{CONFIDENCE * 100:g} % interval over the rounds (paired t on log ratios); "
                  "suspects measured again in rounds of their own, judged on those alone",
        "base": args.base, "new": args.new, "threshold_pct": args.threshold,
        "max_regression": args.threshold, "confidence": CONFIDENCE, "blocks": args.blocks,
        "confirm_blocks": args.confirm, "confirm_max": args.confirm_max,
        "suspects": list(getattr(args, "suspects", [])),
        "unconfirmed_suspects": list(getattr(args, "unconfirmed", [])),
        "screen_seconds": round(getattr(args, "screen_seconds", elapsed), 3),
        "order": "/".join(ORDERS), "min_time_s": float(args.min_time), "filter": args.filter,
        "time": args.time, "data": args.data, "pipebench_flags": args.extra,
        "seconds": round(elapsed, 3),
        "result": outcome(args, failed, inconclusive)[0],
        "exit_status": outcome(args, failed, inconclusive)[1],
        "precision_pct": args.max_noise, "time_budget_s": args.time_budget,
        "max_rounds": args.max_rounds, "inconclusive_policy": args.inconclusive,
        "left_out_by_budget": list(getattr(args, "left_out", [])),
        "suspects_left_to_budget": list(getattr(args, "unconfirmed_budget", [])),
        "cases": list(results.values()),
        "regressions": regressions,
        "improvements": [n for n, r in results.items() if r["verdict"] == "improvement"],
        "inconclusive": inconclusive,
        "max_noise_pct": args.max_noise,
        "errored": errored_new, "lost": lost, "skipped": skipped,
        "busy_blocks": sum(1 for quad in list(docs) + list(getattr(args, "confirm_docs", []))
                           for d in quad if busy_flag(context(d))),
        "context": ctx, "benchmarks": rows,
    }


# --- main --------------------------------------------------------------------------------

def parse_args(argv):
    argv, extra = split_pipebench_flags(argv)
    parser = argparse.ArgumentParser(
        prog="compare.sh --ab",
        description="Run two pipebench builds in alternating A B B A / B A A B blocks on the "
                    "same machine and gate on the paired ratio NEW/BASE of each case, each "
                    "measured until its interval can see the threshold. Exit 0: no "
                    "regression; 1: regression; 2: bad input; 3: inconclusive.",
        epilog="Arguments after -- go to pipebench in every block of both builds. Method, "
               "output and calibration: docs/ab-gate.md.")
    add_builds(parser)
    parser.add_argument("--threshold", metavar="PCT", default="3",
                        help="smallest slowdown that fails, percent (default 3)")
    parser.add_argument("--blocks", metavar="N", default=None,
                        help=f"screening rounds, >= 2, 4 processes each (default "
                             f"{DEFAULT_BLOCKS}, fewer, down to 2, when they would take more "
                             "than half of what is left of --time-budget; given: that many)")
    parser.add_argument("--confirm", metavar="K", default=str(DEFAULT_CONFIRM),
                        help="ABBA rounds measuring the suspects again, the cases whose "
                             "screen points to a slowdown; their verdict comes from these "
                             f"rounds alone (default {DEFAULT_CONFIRM}; 0: no confirmation, "
                             "the screen's verdicts stand)")
    parser.add_argument("--confirm-max", metavar="M", default=str(DEFAULT_CONFIRM_MAX),
                        help="at most M suspects measured again, the highest median round "
                             "ratios first; the others keep the screen's verdict (default "
                             f"{DEFAULT_CONFIRM_MAX})")
    parser.add_argument("--filter", metavar="REGEX", default=DEFAULT_FILTER,
                        help="--benchmark_filter of every block (default "
                             f"{DEFAULT_FILTER!r}: the single-threaded stage cases)")
    parser.add_argument("--out", metavar="FILE.json", help="write the result as JSON")
    parser.add_argument("--data", metavar="DIR",
                        help="dataset (default: a small synthetic one in a temporary folder)")
    parser.add_argument("--min-time", metavar="S", default=DEFAULT_MIN_TIME,
                        help="--benchmark_min_time of every block, seconds (default 0.05)")
    parser.add_argument("--time", choices=("auto", "real", "cpu"), default="auto",
                        help="time compared: auto (default: the case's timed_by), real, cpu")
    parser.add_argument("--precision", "--max-noise", metavar="PCT", default=None,
                        dest="max_noise",
                        help="the 95 %% interval half-width, percent, a verdict needs: a case "
                             "wider than +-PCT is measured again in the rounds its spread "
                             "needs, within --time-budget, and if still wider it is "
                             "inconclusive unless the whole interval lies beyond the "
                             "threshold (default: half the --threshold; inf: off)")
    parser.add_argument("--time-budget", metavar="S", default=str(DEFAULT_TIME_BUDGET),
                        help="seconds the whole comparison may spend buying precision: the "
                             "cases short of it are measured again, cheapest first, while "
                             f"it lasts (default {DEFAULT_TIME_BUDGET}; the screen's rounds, "
                             "two at least, all of --blocks when given, and the confirmation "
                             "of the suspects whose time can decide run whatever it says)")
    parser.add_argument("--confirm-min-time", metavar="S", default=DEFAULT_CONFIRM_MIN_TIME,
                        help="--benchmark_min_time of the blocks that measure cases again "
                             f"(default {DEFAULT_CONFIRM_MIN_TIME}: longer blocks average "
                             "over more of the machine's bursts; at least --min-time)")
    parser.add_argument("--max-rounds", metavar="N", default=str(DEFAULT_MAX_ROUNDS),
                        help="most rounds a case is measured again in (default "
                             f"{DEFAULT_MAX_ROUNDS})")
    parser.add_argument("--inconclusive", choices=("report", "pass", "fail"),
                        default="report",
                        help="exit status when no case regressed but one lacks the precision "
                             "to judge: report (default) exits 3, pass 0, fail 1")
    parser.add_argument("--force", action="store_true",
                        help="compare builds whose version or context differs (a warning)")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep the blocks' JSON and stderr logs in DIR")
    parser.add_argument("--block-timeout", metavar="S", default="900",
                        help="seconds one block may take (default 900)")
    parser.add_argument("--metric", choices=("time", "instructions"), default="time",
                        help="time (default: this gate) or instructions (instruction counts "
                             "under Valgrind: scripts/instr_gate.py, its own options)")
    args = parser.parse_args(argv)
    check_gate_args(args, extra, "--data, --filter or --min-time")
    if args.max_noise is None:
        args.max_noise = default_precision(args.threshold)
    else:
        try:
            args.max_noise = float(args.max_noise)
            assert args.max_noise >= 0 and not math.isnan(args.max_noise)
        except (ValueError, AssertionError):
            raise BadInput(f"--max-noise must be a number >= 0 or inf, got "
                           f"{args.max_noise!r}") from None
    if args.max_noise == 0:
        raise BadInput("--precision must be above 0 (inf: off)")
    try:
        args.time_budget = float(args.time_budget)
        assert 0 <= args.time_budget < 1e7
    except (ValueError, AssertionError):
        raise BadInput(f"--time-budget must be a number of seconds >= 0, got "
                       f"{args.time_budget!r}") from None
    args.max_rounds = int_option(args.max_rounds, lambda v: 2 <= v <= 1000,
                                 "--max-rounds must be an integer in [2, 1000]")
    args.blocks_given = args.blocks is not None
    if not args.blocks_given:
        args.blocks = str(DEFAULT_BLOCKS)
    args.blocks = int_option(args.blocks, lambda v: 2 <= v <= 1000,
                             "--blocks must be an integer in [2, 1000] (a t interval needs 2 "
                             "rounds)")
    if args.blocks % 2:  # as many rounds of each order
        log(f"--blocks {args.blocks}: {args.blocks + 1} rounds, so that A B B A and B A A B "
            "come in equal numbers")
        args.blocks += 1
    args.confirm = int_option(args.confirm, lambda v: v == 0 or 2 <= v <= 1000,
                              "--confirm must be 0 (off) or an integer in [2, 1000]")
    args.confirm_max = int_option(args.confirm_max, lambda v: 1 <= v <= 10000,
                                  "--confirm-max must be an integer >= 1")
    try:
        assert 0 < float(args.min_time) < 1e4
    except (ValueError, AssertionError):
        raise BadInput(f"--min-time must be a number of seconds > 0, got "
                       f"{args.min_time!r}") from None
    try:
        assert 0 < float(args.confirm_min_time) < 1e4
    except (ValueError, AssertionError):
        raise BadInput(f"--confirm-min-time must be a number of seconds > 0, got "
                       f"{args.confirm_min_time!r}") from None
    if float(args.confirm_min_time) < float(args.min_time):
        args.confirm_min_time = args.min_time
    args.block_timeout = seconds_option(args.block_timeout, "--block-timeout")
    return args


def run(args, work):
    t_start = time.monotonic()
    check_binary(args.base, "BASE_BIN")
    check_binary(args.new, "NEW_BIN")
    if args.data is None:
        args.data = make_dataset(args.base, args.new, os.path.join(work, "data"), 16)
    flags = {b: args.extra + fixed_work_flags(b) for b in (args.base, args.new)}
    t_list = time.monotonic()
    base_cases = list_cases(args.base, args.data, args.filter, flags[args.base])
    start = time.monotonic() - t_list  # what one process costs before its first case
    new_cases = list_cases(args.new, args.data, args.filter, flags[args.new])
    check_case_sets(base_cases, new_cases, args.filter)
    log(f"{len(base_cases)} case(s), {args.blocks} ABBA / BAAB round(s) = {4 * args.blocks} "
        f"blocks of --benchmark_min_time={args.min_time}; each case's interval must reach "
        f"±{args.max_noise:g} % within --time-budget {args.time_budget:g} s")
    costs = gate_plan.BlockCosts(float(args.confirm_min_time), start=start)
    docs, orders = screen(args, work, flags, costs, t_start)
    results, errored_new, skipped, lost = analyse(docs, args.threshold, args.time,
                                                  max_noise_pct=args.max_noise, orders=orders)
    args.screen_seconds = time.monotonic() - t_start
    settled = getattr(args, "time_settled", frozenset())
    args.suspects, args.unconfirmed, capped_settled = [], [], []
    if args.confirm:
        args.suspects, capped = suspects_of(results, args.threshold, args.confirm_max, settled)
        # Beyond the cap but decided by their counts: the budget's note names them, not
        # the cap's.
        capped_settled = [n for n in capped if n in settled]
        args.unconfirmed = [n for n in capped if n not in settled]
    again, c_err, c_lost = measure_again(args, work, flags, results, costs, t_start)
    results = merge_confirmation(results, again, args.suspects)
    args.unconfirmed_budget = capped_settled
    for name in args.unconfirmed_budget:
        results[name]["stage"] = "screen (not measured again: its count decides it)"
    for name in args.suspects:
        if name in again or name in c_err:
            continue
        if name in settled and name in args.left_out:
            results[name]["stage"] = "screen (not measured again: the budget did not pay)"
            args.unconfirmed_budget.append(name)
        else:  # skipped or lost there
            results[name]["stage"] = "screen (its confirmation failed)"
            args.unconfirmed.append(name)
    errored_new.update(c_err)  # errored in a NEW block measured again: fails, as ever
    lost += [n for n in c_lost if n not in lost]
    return docs, results, errored_new, skipped, lost, time.monotonic() - t_start


def screen(args, work, flags, costs, t_start):
    """The screen: --blocks rounds of every case; unless --blocks was given, fewer (down to
    two) when its first round shows they would take more than half of what is left of
    --time-budget (gate_plan.screen_rounds), said on stderr."""
    t0 = time.monotonic()
    docs, orders = run_rounds(args, work, flags, args.filter, 1, "r", costs,
                              check_first=True, of=args.blocks)
    per_round = time.monotonic() - t0
    rounds = args.blocks
    if not args.blocks_given:
        left = t_start + args.time_budget - time.monotonic()
        rounds = gate_plan.screen_rounds(args.blocks, 1, per_round, left)
        if rounds < args.blocks:
            log(f"screen: {rounds} rounds, not {args.blocks}: a round took {per_round:.0f} s "
                f"and --time-budget has {max(0.0, left):.0f} s left (the screen takes at most "
                "half of it)")
            args.blocks = rounds
    if per_round * (rounds - 1) > t_start + args.time_budget - time.monotonic():
        log(f"warning: the screen alone runs over --time-budget {args.time_budget:.0f} s: a "
            f"round of every case took {per_round:.0f} s and it needs {rounds}; a narrower "
            "--filter (the paired BM_Sample what-if cases cost most on large images) "
            "shortens it")
    more, more_orders = run_rounds(args, work, flags, args.filter, rounds - 1, "r", costs,
                                   first=1)
    return docs + more, orders + more_orders


def precision_needs(results, args):
    """{case: rounds it needs in all} for the cases whose interval is wider than the
    precision (--max-noise) and whose verdict the width decides (inconclusive), planned
    from their rounds' spread; --max-rounds when even that many would not do."""
    need = {}
    for name, r in results.items():
        if r.get("verdict") != "inconclusive" or r.get("sd_log_ratio") is None:
            continue
        n = gate_plan.rounds_for_precision(r["sd_log_ratio"], args.max_noise, args.max_rounds)
        need[name] = n if n is not None else args.max_rounds
    return need


def measure_again(args, work, flags, results, costs, t_start):
    """The second stage: the suspects (at least --confirm rounds, whatever the budget) and
    the cases short of precision (the rounds their spread needs, cheapest first, while
    --time-budget lasts) measured in rounds of their own, judged on those alone; a case
    still short after its rounds gets more, planned from them, at most 3 passes.
    With both metrics (args.time_settled: the cases whose time verdict cannot decide the
    comparison, their instructions unchanged under --fail-on=auto), such a suspect is
    measured again only while the budget pays, like a case short of precision, and the
    cases whose time can decide come first.
    Returns ({case: judge_case on its own rounds}, errored in NEW, lost)."""
    settled = getattr(args, "time_settled", set())
    must = [n for n in args.suspects if n not in settled]
    wanted = precision_needs(results, args) if args.max_noise != math.inf else {}
    for name in args.suspects:
        if name not in must:  # its confirmation's rounds, if the budget pays for them
            wanted[name] = max(wanted.get(name, 0), args.confirm)
    passes, measured = [], {}
    args.confirm_docs, args.left_out = [], []
    again, c_err, c_lost = {}, {}, []
    while (must or wanted) and len(passes) < 3:
        done = max((len(measured[n]) for n in wanted if n in measured), default=0)
        left = t_start + args.time_budget - time.monotonic()
        most = args.max_rounds - done
        if not passes:
            most = min(most, max(FIRST_PASS_ROUNDS, args.confirm))
        most -= most % 2  # as many rounds of each order
        cases, k, left_out = gate_plan.plan_stage(
            must, {n: max(2, v - len(measured.get(n, []))) for n, v in wanted.items()},
            costs, left, args.confirm, most, first=[n for n in wanted if n not in settled])
        if not passes:
            args.left_out = left_out
        if not cases or k < 2:
            break
        filt = case_filter(cases)
        listed = list_cases(args.base, args.data, filt, flags[args.base])
        if sorted(listed) != sorted(cases):  # the filter must select exactly them
            raise BadInput(f"the filter {filt!r} selects {listed}, not the cases {cases}")
        why = [f"{len(must)} suspect(s)"] if must else []
        late = [c for c in cases if c in args.suspects and c not in must]
        if late:
            why += [f"{len(late)} suspect(s) whose time cannot decide"]
        why += [f"{len([c for c in cases if c not in must and c not in late])} short of "
                f"±{args.max_noise:g} %"]
        log(f"measured again in {k} round(s) of their own ({', '.join(why)}): "
            f"{', '.join(cases)}")
        # The plan rests on a cost model (a block of few cases was measured up to 30 % dearer
        # than planned: Google Benchmark's probing iterations at the longer min_time), so the
        # stage also stops at the budget's end, after a whole pair of rounds, once the
        # suspects it must confirm have their --confirm rounds.
        docs, orders = run_rounds(args, work, flags, filt, k, f"c{len(passes) + 1}-", costs,
                                  min_time=args.confirm_min_time,
                                  deadline=t_start + args.time_budget,
                                  least=args.confirm if must else gate_plan.MIN_ROUNDS)
        args.confirm_docs += docs
        passes.append(cases)
        for name in cases:
            measured.setdefault(name, []).extend(zip(docs, orders))
        again, c_err, c_lost = judge_measured(args, measured)
        must = []
        wanted = {n: v for n, v in precision_needs(again, args).items()
                  if v > len(measured[n])}
    return again, c_err, c_lost


def judge_measured(args, measured):
    """Each case measured again, judged on its own rounds (all its passes)."""
    again, c_err, c_lost = {}, {}, []
    for name, pairs in measured.items():
        docs = [d for d, _ in pairs]
        orders = [o for _, o in pairs]
        res, err, _, lost = analyse(docs, args.threshold, args.time,
                                    max_noise_pct=args.max_noise, orders=orders)
        if name in res:
            again[name] = res[name]
        if name in err:
            c_err[name] = err[name]
        if name in lost:
            c_lost.append(name)
    return again, c_err, c_lost


def run_rounds(args, work, flags, filt, rounds, prefix, costs=None, check_first=False,
               min_time=None, first=0, of=None, deadline=None, least=0):
    """`rounds` rounds of blocks of the cases `filt` selects, in the orders A B B A and
    B A A B by turns: ([(A1, B1, B2, A2)], [order]), each build's first and second block of
    the round whatever the order; `first` rounds of this stage already ran (the numbering
    and the order go on from them), `of` the stage's rounds in all (for the log). With a
    `deadline` (time.monotonic()), once `least` rounds ran, no new pair of rounds starts
    that the rounds so far say would end after it (said on stderr). Each block's wall time
    goes into `costs`."""
    docs, orders = [], []
    n = 4 * first
    of = of or first + rounds
    t_begin = time.monotonic()
    stage = "round" if prefix == "r" else "round measured again"
    for q in range(first, first + rounds):
        order = ORDERS[q % 2]
        got = {"A": [], "B": []}
        for pos, side in enumerate(order):
            n += 1
            binary = args.base if side == "A" else args.new
            stem = os.path.join(work, f"{prefix}{q + 1}-{pos + 1}-{side}")
            t0 = time.monotonic()
            doc = run_block(binary, side, args.data, filt, min_time or args.min_time,
                            flags[binary], stem + ".json", stem + ".log", args.block_timeout)
            wall = time.monotonic() - t0
            if costs is not None:
                costs.add(doc, wall)
            log(f"{stage} {q + 1}/{of} ({order}) block {side}{len(got[side]) + 1} "
                f"({'BASE' if side == 'A' else 'NEW'}) {wall:.1f} s [{n}/{4 * of}]")
            got[side].append(doc)
            if check_first and q == 0 and got["A"] and got["B"] and pos == 1:
                check_contexts(got["A"][0], got["B"][0], args.force)
        docs.append((got["A"][0], got["B"][0], got["B"][1], got["A"][1]))
        orders.append(order)
        ran = q + 1 - first
        now = time.monotonic()
        if (deadline is not None and ran < rounds and ran % 2 == 0 and ran >= least
                and now + 2 * (now - t_begin) / ran > deadline):
            log(f"{stage}: stopped after {ran} of {rounds} rounds: --time-budget is spent")
            break
    return docs, orders


def outcome(args, failed, inconclusive):
    """(PASS | FAIL | INCONCLUSIVE, exit status): a regression fails; otherwise a case
    without the precision to see the threshold makes the comparison inconclusive, whose
    exit status --inconclusive chooses (report: 3, pass: 0, fail: 1)."""
    if failed:
        return "FAIL", EXIT_REGRESSION
    if inconclusive:
        return "INCONCLUSIVE", {"report": EXIT_INCONCLUSIVE, "pass": EXIT_OK,
                                "fail": EXIT_REGRESSION}[args.inconclusive]
    return "PASS", EXIT_OK


def report_measured_again(args, results):
    """One line per case measured again: its screen beside its own rounds."""
    for name, r in results.items():
        if "screen" not in r:
            continue
        sc = r["screen"]
        now = (f"{r['ratio']:.4f} [{r['ci_low']:.4f}..{r['ci_high']:.4f}]"
               if r["ratio"] is not None else "-")
        why = "suspect" if r.get("stage") == "confirmation" else "too wide"
        print(f"ab: measured again ({why}): {name}: screen {sc['ratio']:.4f} "
              f"[{sc['ci_low']:.4f}..{sc['ci_high']:.4f}] over {sc['blocks']} rounds -> "
              f"{now} over {r['blocks']} rounds of its own: "
              f"{r['verdict_text'].split(' [measured again')[0]}")
    unconfirmed = getattr(args, "unconfirmed", [])
    if unconfirmed:
        print(f"ab: note: {len(unconfirmed)} suspect(s) not measured again (beyond "
              f"--confirm-max {args.confirm_max}, or skipped or lost in the confirmation) "
              f"keep the screen's verdict: {', '.join(unconfirmed)}")
    by_budget = getattr(args, "unconfirmed_budget", [])
    if by_budget:
        print(f"ab: note: {len(by_budget)} suspect(s) whose time cannot decide (their "
              f"instruction count decides them) not measured again (--time-budget "
              f"{args.time_budget:g} s or --confirm-max {args.confirm_max} left no room): "
              f"they keep the screen's verdict: {', '.join(by_budget)}")
    left_out = [n for n in getattr(args, "left_out", []) if n not in by_budget]
    if left_out:
        print(f"ab: note: {len(left_out)} case(s) short of ±{args.max_noise:g} % not measured "
              f"again: --time-budget {args.time_budget:g} s could not pay for their rounds: "
              f"{', '.join(left_out)}")


def report_position(results):
    """The position effect over every case with both orders: how much slower a round's
    first and last blocks ran (cancelled in the ratios by the alternating orders)."""
    effects = [r["position_effect"]["pct"] for r in results.values()
               if r.get("position_effect")]
    if effects:
        print(f"ab: position effect (outer blocks against inner, cancelled by the A B B A / "
              f"B A A B alternation): median {statistics.median(effects):+.2f} % over "
              f"{len(effects)} case(s)")


def report(args, docs, results, errored_new, skipped, lost, elapsed):
    print(f"Paired A/B: BASE {args.base} vs NEW {args.new}: {args.blocks} rounds (A B B A / "
          f"B A A B), {len(results)} case(s), ratio NEW/BASE with its "
          f"{CONFIDENCE * 100:g} % t interval")
    print_table(results, CONFIDENCE)
    print()
    report_measured_again(args, results)
    for name, r in results.items():
        if r["verdict"] == "regression":
            how = {"confirmation": "confirmed in rounds of its own",
                   "precision": "in rounds of its own"}.get(r.get("stage"), "screen rounds")
            print(f"REGRESSION {name}: {r['field']} {format_time(r['base_ns'])} -> "
                  f"{format_time(r['new_ns'])} (ratio {r['ratio']:.4f}, "
                  f"{CONFIDENCE * 100:g} % interval {r['ci_low']:.4f}..{r['ci_high']:.4f}, "
                  f"limit +{args.threshold:g}%, {r['blocks']} rounds, {how})")
    for name, msg in errored_new.items():
        print(f"ERRORED {name}: in a NEW block: {' '.join(str(msg).split())[:200]} "
              "(not in BASE)")
    for name in lost:
        print(f"LOST {name}: in every BASE block, missing from a NEW block")
    for name, why in skipped.items():
        print(f"ab: skipped {name}: {' '.join(why.split())[:200]}")
    all_docs = list(docs) + list(getattr(args, "confirm_docs", []))
    busy = sum(1 for quad in all_docs for d in quad if busy_flag(context(d)))
    if busy:
        print(f"ab: note: {busy} of {4 * len(all_docs)} blocks were flagged busy (context "
              "busy_machine); the pairing cancels what the two builds share, the intervals "
              "show what is left")
    report_position(results)
    regressions = [n for n, r in results.items() if r["verdict"] == "regression"]
    improved = sum(1 for r in results.values() if r["verdict"] == "improvement")
    same = sum(1 for r in results.values() if r["verdict"] == "ok")
    inconclusive = [n for n, r in results.items() if r["verdict"] == "inconclusive"]
    for name in inconclusive:
        r = results[name]
        print(f"ab: inconclusive: {name}: ratio {r['ratio']:.4f}, {CONFIDENCE * 100:g} % "
              f"interval {r['ci_low']:.4f}..{r['ci_high']:.4f} (±{r['half_width_pct']:.1f} %) "
              f"is wider than ±{args.max_noise:g} %: not enough precision to judge a "
              f"{args.threshold:g} % change; raise --time-budget or gate it on a quieter "
              f"machine")
    failed = bool(regressions or errored_new or lost)
    result, status = outcome(args, failed, inconclusive)
    halves = [r["half_width_pct"] for r in results.values() if r["ratio"] is not None]
    noise = f"; median interval half-width ±{statistics.median(halves):.1f} %" if halves else ""
    tail = f", {len(skipped)} skipped" if skipped else ""
    if errored_new or lost:
        tail += f"; {len(errored_new)} errored and {len(lost)} lost in NEW"
    policy = (f" (--inconclusive={args.inconclusive}: exit {status})"
              if result == "INCONCLUSIVE" else "")
    print(f"ab: {result}{policy}: {len(regressions)} of {len(results)} case(s) regressed by "
          f"more than {args.threshold:g}% (paired, {args.blocks} rounds A B B A / B A A B"
          f"{confirm_text(args)}, {CONFIDENCE * 100:g} % t interval on log ratios); "
          f"{improved} improved, {same} no change, {len(inconclusive)} inconclusive "
          f"(interval wider than ±{args.max_noise:g} %){tail}{noise}; {elapsed:.0f} s")
    if args.out:
        doc = summary_doc(args, results, errored_new, skipped, lost, docs, elapsed, failed)
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return status


def confirm_text(args):
    n = len(getattr(args, "suspects", []))
    text = (", no confirmation" if not args.confirm else
            f", {n} suspect(s) confirmed or cleared in rounds of their own" if n else
            ", no suspect to confirm")
    return text


def split_metric(argv):
    """(metric, the arguments without --metric) from the gate's own arguments (those
    before `--`): "both" (pbgate/both.py: time and instruction counts; the default where
    Valgrind exists), "time" (this gate alone; the default without Valgrind) or
    "instructions" (pbgate/instr.py)."""
    argv = list(argv)
    own, rest = (argv[:argv.index("--")], argv[argv.index("--"):]) if "--" in argv \
        else (argv, [])
    metric, keep, i = None, [], 0
    while i < len(own):
        a = own[i]
        if a == "--metric":
            if i + 1 >= len(own):
                raise BadInput("--metric needs a value: time or instructions")
            metric, i = own[i + 1], i + 2
            continue
        if a.startswith("--metric="):
            metric = a.split("=", 1)[1]
        else:
            keep.append(a)
        i += 1
    if metric is None:
        metric = "both" if gate_both.valgrind_found() else "time"
        if metric == "time":
            log("valgrind not found: the time gate alone (--metric=time); scripts/setup.sh "
                "installs valgrind for the instruction counts beside it")
    if metric not in ("time", "instructions", "both"):
        raise BadInput(f"--metric must be both, time or instructions, got {metric!r}")
    if metric == "both" and not gate_both.valgrind_found():
        raise BadInput("--metric=both needs valgrind (scripts/setup.sh installs it)")
    return metric, keep + rest


def keep_blocks(keep, work):
    for f in os.listdir(work):
        if os.path.isfile(os.path.join(work, f)):  # the blocks' JSON and logs
            shutil.copy2(os.path.join(work, f), keep)


def main(argv):
    try:
        metric, argv = split_metric(argv)
        if metric == "instructions":
            return gate_instr.main(argv)
        fail_on, instr = None, None
        if metric == "both":
            argv, instr, fail_on = gate_both.split_options(argv)
        args = parse_args(argv)
    except BadInput as e:
        print(f"ab: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if metric == "time":
        return run_gate(args, run, report, "pipebench-ab-", keep_blocks)
    return main_both(args, instr, fail_on)


def main_both(args, instr, fail_on):
    """Both metrics (pbgate/both.py): the instruction gate first, then the time gate with
    what is left of --time-budget, then one decision per case under --fail-on."""
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix="pipebench-both-")
    try:
        print("== instruction counts (Valgrind's Callgrind: exact, on the code alone)",
              flush=True)
        irc, idoc = gate_both.run_instructions(gate_both.instr_argv(args, dict(instr)),
                                               os.path.join(work, "instructions.json"))
        if irc == EXIT_BAD_INPUT or idoc is None:
            print(f"ab: error: the instruction gate ended in exit {irc} (above)",
                  file=sys.stderr)
            return EXIT_BAD_INPUT if irc == EXIT_BAD_INPUT else EXIT_REGRESSION
    finally:
        shutil.rmtree(work, ignore_errors=True)
    args.time_budget = max(0.0, args.time_budget - (time.monotonic() - t0))
    if fail_on == "auto":  # time cannot decide these: an unchanged count makes a time
        # regression a warning, a regressed count fails whatever the time says
        args.time_settled = {c["name"] for c in idoc.get("cases", [])
                             if c.get("verdict") in ("ok", "regression")}
    print(f"\n== time (paired A B B A / B A A B; {args.time_budget:.0f} s of the budget left)",
          flush=True)

    def report_both(a, docs, results, errored_new, skipped, lost, elapsed):
        out, a.out = a.out, None
        report(a, docs, results, errored_new, skipped, lost, elapsed)
        a.out = out
        return report_decision(a, docs, results, errored_new, skipped, lost, elapsed, idoc,
                               fail_on)
    return run_gate(args, run, report_both, "pipebench-ab-", keep_blocks)


def report_decision(args, docs, results, errored_new, skipped, lost, elapsed, idoc, fail_on):
    """The decision of both metrics: one line per failure (the metric that decided it),
    per warning and per disagreement, the summary line, the JSON."""
    ires = {c["name"]: c for c in idoc.get("cases", [])}
    merged = gate_both.merge(results, ires, fail_on)
    print(f"\n== both metrics (--fail-on={fail_on})")
    failing = gate_both.print_decisions(merged, fail_on)
    i_broken = bool(idoc.get("errored") or idoc.get("lost"))
    failed = bool(failing or errored_new or lost or i_broken)
    inconclusive = [n for n, r in merged.items() if r.get("verdict") == "inconclusive"
                    and (r["instructions"] is None or r["instructions"]["verdict"] != "ok"
                         or fail_on in ("time", "both"))]
    settled = [n for n, r in merged.items() if r.get("verdict") == "inconclusive"
               and n not in inconclusive]
    if settled:
        print(f"ab: {len(settled)} case(s) inconclusive in time with their instructions "
              f"unchanged: judged by the instruction count: {', '.join(settled)}")
    result, status = outcome(args, failed, inconclusive)
    warned = sum(1 for r in merged.values() if r["decision"] == "warn")
    print(f"ab: {result}: {len(failing)} of {len(merged)} case(s) failed (time and "
          f"instructions, --fail-on={fail_on}: {', '.join(failing) or 'none'}), {warned} "
          f"warning(s), {len(inconclusive)} inconclusive; {elapsed:.0f} s of time gate")
    if args.out:
        doc = summary_doc(args, merged, errored_new, skipped, lost, docs, elapsed, failed)
        doc.update(metric="both", fail_on=fail_on, failed_cases=failing,
                   inconclusive=inconclusive, result=result, exit_status=status,
                   instructions={k: idoc.get(k) for k in (
                       "threshold_pct", "result", "regressions", "improvements", "errored",
                       "lost", "skipped", "simd_path", "valgrind", "seconds")})
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return status

