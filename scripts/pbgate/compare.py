"""pbgate.compare - the regression gate behind scripts/compare.sh (its entry point:
scripts/compare_gate.py).

Prints Google Benchmark's own comparison table (compare.py's gbench package, the same
numbers and Mann-Whitney U test `compare.py benchmarks BASE NEW` prints), then decides:

  - the runs must measure the same thing: a run whose context differs from the base's in
    dataset_fingerprint, batch_size, crop_size, pipeline_spec (recipe for runs without
    one) or pipebench_build is refused (exit 2, naming what differs) unless --force;
  - a case the base had that NEW lost (absent from NEW), or that errored in NEW
    (error_occurred) but not in the base, FAILS the gate;
  - a case is a REGRESSION when its time grew by more than --max-regression percent
    (median of the repetitions, BASE -> NEW) AND, when both files hold >= 2 repetitions
    of it, the two-sided Mann-Whitney U test over the repetitions (gbench.report.calc_utest,
    compare.py's own) says p < --alpha. With a single run on either side no test is
    possible: the threshold alone decides and a warning says so;
  - a case whose coefficient of variation over repetitions (sample stddev / mean of the
    gated time, on either side) exceeds --max-cv percent (default: the --max-regression
    value) is "too noisy to judge" when the change is within 3 CVs: a warning, never a
    regression (issue 15 item 7); a larger change is judged as usual;
  - a base time of 0 gives no percentage: the case is reported as "base 0", not judged,
    and left out of compare.py's table (which would print +200%, its midpoint formula);
  - either run flagged busy by pipebench (context busy_machine = "true") gets a warning;
    an absent flag means unknown and is not mentioned.

Only real_time is gated by default (for manual-time cases such as BM_H2D it holds the
manual time); --time cpu gates on cpu_time instead, and --time auto on the time Google
Benchmark itself timed each case by, the case key's timed_by (record.case_key; for a
file written before the record, the .../real_time or .../manual_time its name ends in):
real_time for "real_time" and "manual_time" cases (UseRealTime, UseManualTime), cpu_time
for the others (their real_time also counts waiting for a busy CPU, so auto suits shared
machines). Rates
(items_per_second) are shown in the table but never gate.
Aggregate rows (_mean, _median, _stddev, _cv) are not compared (a case that has only
aggregates, --benchmark_report_aggregates_only, is judged on its _median as one run).
--filter is the user's regular expression, used as given; no string from the JSON files
is ever put into a regular expression.

Exit status: 0 no regression, 1 at least one regression, lost or newly errored case,
2 bad input (missing or malformed file, not a Google Benchmark JSON, bad option, runs
whose context differs, no case in common).

Run with /usr/bin/python3 (Debian's scipy/numpy live there). The gbench package is read
from /usr/share/benchmark (libbenchmark-tools) or $PIPEBENCH_GBENCH_DIR.
"""

import argparse
import math
import os
import statistics
import sys

from .record import (TIME_UNIT_TO_NS, BadInput, align_names, busy_flag, case_filter, case_key,
                     context, context_mismatches, is_aggregate, iterations_by_case, load_run,
                     select, time_ns, timed_field)

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_BAD_INPUT = 2

_GBENCH_DIR = os.environ.get("PIPEBENCH_GBENCH_DIR", "/usr/share/benchmark")


def import_gbench():
    """compare.py's own package (report, util); BadInput when it is not installed."""
    if _GBENCH_DIR not in sys.path:
        sys.path.insert(0, _GBENCH_DIR)
    try:
        from gbench import report, util  # noqa: F401  (compare.py's own package)
    except ImportError as e:
        raise BadInput(
            f"cannot import gbench from {_GBENCH_DIR} ({e}); install libbenchmark-tools "
            "and python3-scipy (scripts/setup.sh) and run with /usr/bin/python3") from e
    return report, util


def gated_field(key, mode):
    """The time field the gate compares under --time `mode` for a case whose key is `key`
    (record.case_key, or its timed_by string): mode's field, or for "auto" the time
    Google Benchmark timed the case by (record.timed_field)."""
    if mode != "auto":
        return mode + "_time"
    return timed_field(key)


def format_time(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.4g} {unit}"
    return f"{ns:.4g} ns"


def min_achievable_p(n, m):
    """The smallest two-sided U-test p-value n vs m repetitions can give (full separation)."""
    from scipy.stats import mannwhitneyu
    return mannwhitneyu(list(range(n)), list(range(n, n + m)), alternative="two-sided").pvalue


def cv(values):
    """Coefficient of variation, sample stddev / mean (Google Benchmark's _cv aggregate);
    None with fewer than 2 values or a zero mean."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean > 0 else None


# A case too noisy to judge (CV above --max-cv) is still judged when its change exceeds
# this many CVs: noise of that size does not move a median that far.
NOISE_SPAN = 3.0


def judge(base_rows, new_rows, max_regression, alpha, report, field="real_time",
          max_cv=None):
    """Decides one case on `field`.

    Returns a dict: base_ns/new_ns (medians), change (fraction; None when the base is 0),
    p (None without a test), cv (largest side; None with single runs) and verdict:
    "regression", "ok", "noisy" (CV above max_cv percent) or "base0".
    """
    base = [time_ns(r, field) for r in base_rows]
    new = [time_ns(r, field) for r in new_rows]
    base_med, new_med = statistics.median(base), statistics.median(new)
    change = report.calculate_change(base_med, new_med) if base_med > 0 else (
        0.0 if new_med == 0 else None)
    p = None
    if len(base) >= report.UTEST_MIN_REPETITIONS and len(new) >= report.UTEST_MIN_REPETITIONS:
        # compare.py's own test: calc_utest(cpu timings, real timings) -> both p-values.
        cpu = [[time_ns(r, "cpu_time") for r in base_rows],
               [time_ns(r, "cpu_time") for r in new_rows]]
        real = [[time_ns(r, "real_time") for r in base_rows],
                [time_ns(r, "real_time") for r in new_rows]]
        _, cpu_p, real_p = report.calc_utest(cpu, real)
        p = cpu_p if field == "cpu_time" else real_p
    cvs = [c for c in (cv(base), cv(new)) if c is not None]
    case_cv = max(cvs) if cvs else None
    slower = change is not None and change > max_regression / 100.0
    if change is None:
        verdict = "base0"
    elif (max_cv is not None and case_cv is not None and case_cv * 100.0 > max_cv
          and abs(change) <= NOISE_SPAN * case_cv):
        # Too noisy to tell this change from the spread of the repetitions; a change
        # beyond NOISE_SPAN x CV (a 3.5x slowdown with 20 % CV) is still judged.
        verdict = "noisy"
    elif p is None:
        verdict = "regression" if slower else "ok"
    else:
        verdict = "regression" if (slower and p < alpha) else "ok"
    return {"field": field, "base_ns": base_med, "new_ns": new_med, "change": change, "p": p,
            "n_base": len(base), "n_new": len(new), "verdict": verdict,
            "slower_than_threshold": slower, "cv": case_cv,
            "cv_base": cv(base), "cv_new": cv(new)}


def number_option(text, option, lo, hi, lo_open=False):
    """A float in [lo, hi) ((lo, hi) with lo_open); BadInput naming the option otherwise."""
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    ok = math.isfinite(v) and (v > lo if lo_open else v >= lo) and v < hi
    if not ok:
        raise BadInput(f"{option} must be a number in {'(' if lo_open else '['}{lo}, {hi}), "
                       f"got {text!r}")
    return v


def gate_thresholds(threshold, max_cv, alpha, threshold_option):
    """The gate's numbers from their option texts: (threshold %, max CV % (the threshold
    when None), alpha); BadInput naming the option that is out of range."""
    threshold = number_option(threshold, threshold_option, 0.0, 1e6)
    max_cv = threshold if max_cv is None else number_option(max_cv, "--max-cv", 0.0, 1e6)
    return threshold, max_cv, number_option(alpha, "--alpha", 0.0, 1.0, lo_open=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="compare.sh",
        description="Compare two Google Benchmark JSON runs and fail on significant "
                    "time regressions, lost or newly errored cases. Exit 0: none; "
                    "1: regression; 2: bad input or runs that are not comparable.")
    parser.add_argument("base", metavar="BASE.json", help="baseline run")
    parser.add_argument("new", metavar="NEW.json", help="contender run")
    parser.add_argument("--max-regression", metavar="PCT", default="5",
                        help="largest allowed time growth in percent, >= 0 (default 5)")
    parser.add_argument("--max-cv", metavar="PCT", default=None,
                        help="a case whose CV over repetitions exceeds PCT percent on either "
                             "side is too noisy to judge (default: the --max-regression value)")
    parser.add_argument("--time", choices=("real", "cpu", "auto"), default="real",
                        help="time gated: real_time (default), cpu_time, or auto: real_time "
                             "for cases timed by real or manual time (UseRealTime, "
                             "UseManualTime), else cpu_time")
    parser.add_argument("--filter", metavar="REGEX", default=".",
                        help="only cases whose name matches (Python re.search; default: all)")
    parser.add_argument("--alpha", metavar="P", default="0.05",
                        help="U-test significance level in (0, 1) (compare.py's default 0.05)")
    parser.add_argument("--force", action="store_true",
                        help="compare runs whose dataset, batch, crop, pipeline or build "
                             "differ (a warning instead of exit 2)")
    parser.add_argument("--all-rows", action="store_true",
                        help="table: show every repetition, not only the aggregates")
    parser.add_argument("--no-color", action="store_true", help="table without ANSI colors")
    args = parser.parse_args(argv)

    args.max_regression, args.max_cv, args.alpha = gate_thresholds(
        args.max_regression, args.max_cv, args.alpha, "--max-regression")
    args.regex = case_filter(args.filter, "--filter")
    return args


def check_contexts(args, base_all, new_all):
    """Refuses runs that measure different things (BadInput) unless --force; prints the
    warnings about one-sided keys and busy machines."""
    differ, one_sided = context_mismatches(context(base_all), context(new_all))
    if differ:
        what = "; ".join(f"{k} differs ({args.base}: {a!r}, {args.new}: {b!r})"
                         for k, a, b in differ)
        if not args.force:
            raise BadInput(f"the runs are not comparable: {what}. Compare runs of the same "
                           "dataset, batch, crop, pipeline and build, or pass --force")
        print(f"compare: warning: comparing runs that differ (--force): {what}")
    if one_sided:
        print(f"compare: note: not checked, recorded in one run only: {', '.join(one_sided)}")
    flags = {args.base: busy_flag(context(base_all)), args.new: busy_flag(context(new_all))}
    busy = [f for f, b in flags.items() if b]
    if busy:
        others = {f: ("not busy" if b is False else "unknown") for f, b in flags.items()
                  if not b}
        other = "".join(f"; {f}: {s}" for f, s in others.items())
        print(f"compare: warning: measured on a busy machine (context busy_machine=true): "
              f"{', '.join(busy)}{other}. Its times may be inflated: rerun on an idle "
              "machine before trusting a regression or an improvement")


def zero_base_rows(base, new):
    """Table rows (by name) whose base time is 0 while the new one is not: compare.py's
    calculate_change gives those +200% (its midpoint formula), so they are left out."""
    new_rows = {r["name"]: r for r in new["benchmarks"] if not r.get("error_occurred")}
    out = []
    for r in base["benchmarks"]:
        other = new_rows.get(r["name"])
        if r.get("error_occurred") or other is None or r["name"] in out:
            continue
        if any(r[k] == 0 and other[k] != 0 for k in ("real_time", "cpu_time")):
            out.append(r["name"])
    return out


def print_table(args, report, util, base, new):
    """compare.py's own table, errored and zero-base rows left out."""
    dropped = set(zero_base_rows(base, new))

    def table_input(data, units=None):
        rows = [dict(r) for r in data["benchmarks"]
                if not r.get("error_occurred") and r["name"] not in dropped]
        for r in rows:  # compare.py drops a case whose unit differs; convert it instead
            unit = (units or {}).get(r["name"], r["time_unit"])
            if unit != r["time_unit"] and unit in TIME_UNIT_TO_NS:
                f = (1.0 if r.get("aggregate_unit") == "percentage"
                     else TIME_UNIT_TO_NS[r["time_unit"]] / TIME_UNIT_TO_NS[unit])
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
    if dropped:
        print(f"compare: note: left out of the table, base time 0 (no percentage change): "
              f"{', '.join(sorted(dropped))}")


def _clip(text, width=160):
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 3] + "..."


def print_membership(args, base_cases, base_err, new_cases, new_err):
    """Lost and newly errored cases (gate failures), skipped and one-sided ones (notes).
    Returns the failure names: (lost, newly_errored)."""
    lost = [n for n in base_cases if n not in new_cases and n not in new_err]
    newly_errored = [n for n in base_cases if n in new_err]
    for name in lost:
        print(f"LOST {name}: in {args.base}, not in {args.new}")
    for name in newly_errored:
        print(f"ERRORED {name}: in {args.new}: {_clip(new_err[name])} (not in {args.base})")
    for name in sorted(set(base_err) | set(new_err)):
        if name in newly_errored:
            continue
        where = " and ".join(f for f, s in ((args.base, base_err), (args.new, new_err))
                             if name in s)
        print(f"compare: skipped {name}: reported an error in {where}")
    for name in base_err:
        if name not in new_cases and name not in new_err:
            print(f"compare: note: {name} only in {args.base} (errored there)")
    for name in new_cases:
        if name not in base_cases and name not in base_err:
            print(f"compare: note: {name} only in {args.new}")
    return lost, newly_errored


def print_warnings(args, results):
    untested = [n for n, r in results.items() if r["p"] is None and r["verdict"] != "base0"]
    if untested:
        print(f"compare: warning: {len(untested)} case(s) have a single run on one side; no "
              f"significance test was possible, the {args.max_regression:g}% threshold alone "
              "decides (run with --benchmark_repetitions=9 or more)")
    weak = sorted({(r["n_base"], r["n_new"]) for r in results.values() if r["p"] is not None
                   and min_achievable_p(r["n_base"], r["n_new"]) >= args.alpha})
    for n, m in weak:
        print(f"compare: warning: with {n} vs {m} repetitions the U test can never reach "
              f"p < {args.alpha:g}; those cases cannot fail (use 9 or more repetitions)")
    for name, r in results.items():
        if r["verdict"] == "noisy":
            sides = ", ".join(f"{side} {c * 100:.1f}%" for side, c in
                              (("base", r["cv_base"]), ("new", r["cv_new"])) if c is not None)
            print(f"compare: warning: {name} too noisy to judge: CV of {r['field']} over "
                  f"repetitions {sides} > --max-cv {args.max_cv:g}%; change "
                  f"{r['change'] * 100:+.1f}% not judged")
        elif r["verdict"] == "base0":
            print(f"compare: warning: {name}: {r['field']} base 0 -> "
                  f"{format_time(r['new_ns'])}; no percentage change (base 0), not judged")


def main(argv):
    try:
        args = parse_args(argv)
        report, util = import_gbench()
        base_all = load_run(args.base)
        new_all = align_names(base_all, load_run(args.new))
        check_contexts(args, base_all, new_all)
    except BadInput as e:
        print(f"compare: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT

    base, new = select(base_all, args.regex), select(new_all, args.regex)
    base_cases, base_err = iterations_by_case(base)
    new_cases, new_err = iterations_by_case(new)
    in_both = (set(base_cases) | set(base_err)) & (set(new_cases) | set(new_err))
    common = [n for n in base_cases if n in new_cases]
    if not in_both or (not common and not any(n in new_err for n in base_cases)):
        print(f"compare: error: no case in common between {args.base} ({len(base_cases)} "
              f"cases) and {args.new} ({len(new_cases)} cases) matching --filter "
              f"{args.filter!r} (errored cases excluded)", file=sys.stderr)
        return EXIT_BAD_INPUT

    print_table(args, report, util, base, new)
    lost, newly_errored = print_membership(args, base_cases, base_err, new_cases, new_err)
    results = {name: judge(base_cases[name], new_cases[name], args.max_regression,
                           args.alpha, report,
                           gated_field(case_key(base_cases[name][0]), args.time), args.max_cv)
               for name in common}
    print_warnings(args, results)

    regressions = [n for n, r in results.items() if r["verdict"] == "regression"]
    for name in regressions:
        r = results[name]
        p_text = ("p=n/a, single run" if r["p"] is None
                  else f"p={r['p']:.4g} < {args.alpha:g}")
        print(f"REGRESSION {name}: {r['field']} {format_time(r['base_ns'])} -> "
              f"{format_time(r['new_ns'])} ({r['change'] * 100:+.1f}%, limit "
              f"+{args.max_regression:g}%, {p_text})")
    not_significant = [n for n, r in results.items()
                       if r["slower_than_threshold"] and r["verdict"] == "ok"]
    for name in not_significant:
        r = results[name]
        print(f"compare: note: {name} is {r['change'] * 100:+.1f}% slower but not "
              f"significant (p={r['p']:.4g} >= {args.alpha:g})")
    faster = sum(1 for r in results.values() if r["verdict"] == "ok"
                 and r["change"] < -args.max_regression / 100.0
                 and (r["p"] is None or r["p"] < args.alpha))
    noisy = sum(1 for r in results.values() if r["verdict"] == "noisy")
    base0 = sum(1 for r in results.values() if r["verdict"] == "base0")
    failed = bool(regressions or lost or newly_errored)
    time_words = {"real": "real_time", "cpu": "cpu_time",
                  "auto": "real_time or cpu_time (--time auto)"}[args.time]
    tail = f", {base0} with base 0" if base0 else ""
    if lost or newly_errored:
        tail += (f"; {len(lost)} case(s) lost and {len(newly_errored)} newly errored "
                 f"in {args.new}")
    print(f"compare: {'FAIL' if failed else 'PASS'}: {len(regressions)} of {len(results)} "
          f"case(s) regressed by more than {args.max_regression:g}% in {time_words} "
          f"(alpha {args.alpha:g}); {faster} faster by more than that, "
          f"{len(not_significant)} slower but not significant, {noisy} too noisy to judge"
          f"{tail}")
    return EXIT_REGRESSION if failed else EXIT_OK

