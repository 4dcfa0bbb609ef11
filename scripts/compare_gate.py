#!/usr/bin/python3
"""compare_gate.py - the regression gate behind scripts/compare.sh.

Prints Google Benchmark's own comparison table (compare.py's gbench package, the same
numbers and Mann-Whitney U test `compare.py benchmarks BASE NEW` prints), then decides:

  a case is a REGRESSION when its real_time grew by more than --max-regression percent
  (median of the repetitions, BASE -> NEW) AND, when both files hold >= 2 repetitions of
  it, the two-sided Mann-Whitney U test over the repetitions' real_time says the
  difference is significant (p < --alpha). With a single run on either side no test is
  possible: the threshold alone decides and a warning says so.

Only real_time is gated by default (for manual-time cases such as BM_H2D it holds the
manual time); --time cpu gates on cpu_time instead, and --time auto on the time Google
Benchmark itself timed each case by: real_time for cases named .../real_time or
.../manual_time (UseRealTime, UseManualTime), cpu_time for the others (their real_time
also counts waiting for a busy CPU, so auto suits shared machines). Rates
(items_per_second) are shown in the table but never gate.
Aggregate rows (_mean, _median, _stddev, _cv) are not compared, nor are cases that
reported an error (error_occurred) in either file.

Exit status: 0 no regression, 1 at least one regression, 2 bad input (missing or
malformed file, not a Google Benchmark JSON, bad option, no case in common).

Run with /usr/bin/python3 (Debian's scipy/numpy live there). The gbench package is read
from /usr/share/benchmark (libbenchmark-tools) or $PIPEBENCH_GBENCH_DIR.
"""

import argparse
import json
import math
import os
import re
import statistics
import sys

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_BAD_INPUT = 2

_GBENCH_DIR = os.environ.get("PIPEBENCH_GBENCH_DIR", "/usr/share/benchmark")
_TIME_UNIT_TO_NS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}


class BadInput(Exception):
    """Input the gate refuses to judge; the message names the file and the reason."""


def _import_gbench():
    if _GBENCH_DIR not in sys.path:
        sys.path.insert(0, _GBENCH_DIR)
    try:
        from gbench import report, util  # noqa: F401  (compare.py's own package)
    except ImportError as e:
        raise BadInput(
            f"cannot import gbench from {_GBENCH_DIR} ({e}); install libbenchmark-tools "
            "and python3-scipy (scripts/setup.sh) and run with /usr/bin/python3") from e
    return report, util


def load_run(path):
    """Loads a Google Benchmark JSON file; raises BadInput naming the file and why."""
    if not os.path.exists(path):
        raise BadInput(f"{path}: no such file")
    if not os.path.isfile(path):
        raise BadInput(f"{path}: not a regular file")
    try:
        with open(path, "r", encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: cannot read ({e})") from e
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}: malformed JSON ({e})") from e
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise BadInput(f"{path}: not a Google Benchmark JSON (no \"benchmarks\" list; "
                       "write it with --benchmark_out=FILE --benchmark_out_format=json)")
    for i, row in enumerate(data["benchmarks"]):
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            raise BadInput(f"{path}: benchmarks[{i}] has no \"name\"; not a Google Benchmark JSON")
        if row.get("error_occurred"):
            continue
        for key in ("real_time", "cpu_time"):
            v = row.get(key)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
                raise BadInput(f"{path}: {row['name']}: \"{key}\" must be a finite number >= 0, "
                               f"got {v!r}")
        unit = row.get("time_unit")
        if unit not in _TIME_UNIT_TO_NS:
            raise BadInput(f"{path}: {row['name']}: \"time_unit\" must be one of "
                           f"{sorted(_TIME_UNIT_TO_NS)}, got {unit!r}")
    return data


def is_aggregate(row):
    return row.get("run_type") == "aggregate"


def case_name(row):
    """The case a row belongs to: run_name (GB >= 1.5) or the name itself."""
    return row.get("run_name") or row["name"]


def select(data, regex):
    """Rows whose case name matches the filter (re.search, as --benchmark_filter)."""
    out = dict(data)
    out["benchmarks"] = [r for r in data["benchmarks"] if regex.search(case_name(r))]
    return out


def iterations_by_case(data):
    """{case: [iteration rows]} and the set of cases that errored, in file order."""
    cases, errored = {}, set()
    for row in data["benchmarks"]:
        if is_aggregate(row):
            continue
        name = case_name(row)
        if row.get("error_occurred"):
            errored.add(name)
            continue
        cases.setdefault(name, []).append(row)
    return cases, errored


def time_ns(row, field):
    return row[field] * _TIME_UNIT_TO_NS[row["time_unit"]]


def gated_field(name, mode):
    """The time field the gate compares for case `name` under --time `mode`."""
    if mode != "auto":
        return mode + "_time"
    parts = name.split("/")
    return "real_time" if ("real_time" in parts or "manual_time" in parts) else "cpu_time"


def format_time(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.4g} {unit}"
    return f"{ns:.4g} ns"


def min_achievable_p(n, m):
    """The smallest two-sided U-test p-value n vs m repetitions can give (full separation)."""
    from scipy.stats import mannwhitneyu
    return mannwhitneyu(list(range(n)), list(range(n, n + m)), alternative="two-sided").pvalue


def judge(base_rows, new_rows, max_regression, alpha, report, field="real_time"):
    """Decides one case on `field`. Returns a dict: change (fraction), p (or None), verdict."""
    base = [time_ns(r, field) for r in base_rows]
    new = [time_ns(r, field) for r in new_rows]
    base_med, new_med = statistics.median(base), statistics.median(new)
    change = report.calculate_change(base_med, new_med)
    p = None
    if len(base) >= report.UTEST_MIN_REPETITIONS and len(new) >= report.UTEST_MIN_REPETITIONS:
        # compare.py's own test: calc_utest(cpu timings, real timings) -> both p-values.
        cpu = [[time_ns(r, "cpu_time") for r in base_rows],
               [time_ns(r, "cpu_time") for r in new_rows]]
        real = [[time_ns(r, "real_time") for r in base_rows],
                [time_ns(r, "real_time") for r in new_rows]]
        _, cpu_p, real_p = report.calc_utest(cpu, real)
        p = cpu_p if field == "cpu_time" else real_p
    slower = change > max_regression / 100.0
    if p is None:
        verdict = "regression" if slower else "ok"
    else:
        verdict = "regression" if (slower and p < alpha) else "ok"
    return {"field": field, "base_ns": base_med, "new_ns": new_med, "change": change, "p": p,
            "n_base": len(base), "n_new": len(new), "verdict": verdict,
            "slower_than_threshold": slower}


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="compare.sh",
        description="Compare two Google Benchmark JSON runs and fail on significant "
                    "time regressions. Exit 0: none; 1: regression; 2: bad input.")
    parser.add_argument("base", metavar="BASE.json", help="baseline run")
    parser.add_argument("new", metavar="NEW.json", help="contender run")
    parser.add_argument("--max-regression", metavar="PCT", default="5",
                        help="largest allowed time growth in percent, >= 0 (default 5)")
    parser.add_argument("--time", choices=("real", "cpu", "auto"), default="real",
                        help="time gated: real_time (default), cpu_time, or auto: real_time "
                             "for .../real_time and .../manual_time cases, else cpu_time")
    parser.add_argument("--filter", metavar="REGEX", default=".",
                        help="only cases whose name matches (Python re.search; default: all)")
    parser.add_argument("--alpha", metavar="P", default="0.05",
                        help="U-test significance level in (0, 1) (compare.py's default 0.05)")
    parser.add_argument("--all-rows", action="store_true",
                        help="table: show every repetition, not only the aggregates")
    parser.add_argument("--no-color", action="store_true", help="table without ANSI colors")
    args = parser.parse_args(argv)

    def number(text, option, lo, hi, lo_open=False):
        try:
            v = float(text)
        except ValueError:
            v = float("nan")
        ok = math.isfinite(v) and (v > lo if lo_open else v >= lo) and v < hi
        if not ok:
            raise BadInput(f"{option} must be a number in {'(' if lo_open else '['}{lo}, {hi}), "
                           f"got {text!r}")
        return v

    args.max_regression = number(args.max_regression, "--max-regression", 0.0, 1e6)
    args.alpha = number(args.alpha, "--alpha", 0.0, 1.0, lo_open=True)
    try:
        args.regex = re.compile(args.filter)
    except re.error as e:
        raise BadInput(f"--filter {args.filter!r} is not a valid regular expression ({e})") from e
    return args


def main(argv):
    try:
        args = parse_args(argv)
        report, util = _import_gbench()
        base_all, new_all = load_run(args.base), load_run(args.new)
    except BadInput as e:
        print(f"compare: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT

    base, new = select(base_all, args.regex), select(new_all, args.regex)
    base_cases, base_err = iterations_by_case(base)
    new_cases, new_err = iterations_by_case(new)
    common = [n for n in base_cases if n in new_cases]
    if not common:
        print(f"compare: error: no case in common between {args.base} ({len(base_cases)} "
              f"cases) and {args.new} ({len(new_cases)} cases) matching --filter "
              f"{args.filter!r} (errored cases excluded)", file=sys.stderr)
        return EXIT_BAD_INPUT

    # 1. compare.py's own table (errored rows left out: their times are 0).
    def table_input(data, units=None):
        rows = [dict(r) for r in data["benchmarks"] if not r.get("error_occurred")]
        for r in rows:  # compare.py drops a case whose unit differs; convert it instead
            unit = (units or {}).get(r["name"], r["time_unit"])
            if unit != r["time_unit"] and unit in _TIME_UNIT_TO_NS:
                f = (1.0 if r.get("aggregate_unit") == "percentage"
                     else _TIME_UNIT_TO_NS[r["time_unit"]] / _TIME_UNIT_TO_NS[unit])
                r.update(real_time=r["real_time"] * f, cpu_time=r["cpu_time"] * f,
                         time_unit=unit)
        return util.sort_benchmark_results({"benchmarks": rows})

    base_units = {r["name"]: r["time_unit"] for r in base["benchmarks"]}
    diff = report.get_difference_report(table_input(base), table_input(new, base_units),
                                        utest=True)
    has_aggregates = any(is_aggregate(r) for r in base["benchmarks"])
    use_color = sys.stdout.isatty() and not args.no_color
    print(f"Comparing {args.base} to {args.new}")
    for line in report.print_difference_report(
            diff, include_aggregates_only=has_aggregates and not args.all_rows,
            utest=True, utest_alpha=args.alpha, use_color=use_color):
        print(line)
    print()

    # 2. The gate.
    for name in sorted(base_err | new_err):
        where = " and ".join(f for f, s in ((args.base, base_err), (args.new, new_err)) if name in s)
        print(f"compare: skipped {name}: reported an error in {where}")
    for name in base_cases:
        if name not in new_cases and name not in new_err:
            print(f"compare: note: {name} only in {args.base}")
    for name in new_cases:
        if name not in base_cases and name not in base_err:
            print(f"compare: note: {name} only in {args.new}")

    results = {name: judge(base_cases[name], new_cases[name], args.max_regression,
                           args.alpha, report, gated_field(name, args.time))
               for name in common}
    untested = [n for n, r in results.items() if r["p"] is None]
    if untested:
        print(f"compare: warning: {len(untested)} case(s) have a single run on one side; no "
              f"significance test was possible, the {args.max_regression:g}% threshold alone "
              "decides (run with --benchmark_repetitions=9 or more)")
    weak = sorted({(r["n_base"], r["n_new"]) for r in results.values() if r["p"] is not None
                   and min_achievable_p(r["n_base"], r["n_new"]) >= args.alpha})
    for n, m in weak:
        print(f"compare: warning: with {n} vs {m} repetitions the U test can never reach "
              f"p < {args.alpha:g}; those cases cannot fail (use 9 or more repetitions)")

    regressions = [n for n, r in results.items() if r["verdict"] == "regression"]
    for name in regressions:
        r = results[name]
        p_text = ("p=n/a, single run" if r["p"] is None
                  else f"p={r['p']:.4g} < {args.alpha:g}")
        print(f"REGRESSION {name}: {r['field']} {format_time(r['base_ns'])} -> "
              f"{format_time(r['new_ns'])} ({r['change'] * 100:+.1f}%, limit "
              f"+{args.max_regression:g}%, {p_text})")
    noisy = [n for n, r in results.items()
             if r["slower_than_threshold"] and r["verdict"] == "ok"]
    for name in noisy:
        r = results[name]
        print(f"compare: note: {name} is {r['change'] * 100:+.1f}% slower but not "
              f"significant (p={r['p']:.4g} >= {args.alpha:g})")
    faster = sum(1 for r in results.values() if r["change"] < -args.max_regression / 100.0
                 and (r["p"] is None or r["p"] < args.alpha))
    verdict = "FAIL" if regressions else "PASS"
    time_words = {"real": "real_time", "cpu": "cpu_time",
                  "auto": "real_time or cpu_time (--time auto)"}[args.time]
    print(f"compare: {verdict}: {len(regressions)} of {len(results)} case(s) regressed by more "
          f"than {args.max_regression:g}% in {time_words} (alpha {args.alpha:g}); "
          f"{faster} faster by more than that, {len(noisy)} slower but not significant")
    return EXIT_REGRESSION if regressions else EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
