#!/usr/bin/python3
"""export.py - a pipebench run in the formats of the benchmark trackers CI users run.

  /usr/bin/python3 scripts/export.py RUN.json --format github-action-benchmark|bencher
      [--out DIR] [--cases REGEX]

github-action-benchmark's own Google Benchmark reader (tool: googlecpp) keeps only each
row's real_time and drops the user counters; this export gives it the numbers that say
whether the accelerator is fed. Per case of RUN.json (errored cases left out and listed):

  metric       counter            unit      better   github-action-benchmark  Bencher measure
  images/s     items_per_second   images/s  bigger   "<case> - images/s"      throughput
  AU           au_pct             %         bigger   "<case> - AU"            accelerator-utilisation
  step time    step_ms            ms        smaller  "<case> - step time"     step-time
  instructions instructions       instructions  smaller  "<case> - instructions"  instructions

(AU and step time exist on the BM_EndToEnd cases; images/s on every case that counts
items; instructions per iteration on the rows of an instruction-count gate's JSON,
`compare.sh --ab ... --metric=instructions --out FILE` (scripts/pbgate/instr.py: Valgrind's
Callgrind, exact counts, so no range), which leaves out the rates measured under Valgrind.) Each value is the MEDIAN over the case's repetitions (the compare gate's
statistic; a run without repetitions gives its one value).

--format github-action-benchmark writes DIR/customBiggerIsBetter.json (images/s, AU) and
DIR/customSmallerIsBetter.json (step time, instructions; an empty list without either): JSON lists of {name, unit, value, range?,
extra}, the format of the action's `customBiggerIsBetter` / `customSmallerIsBetter` tools
(its README, "custom benchmarks"; one file per tool, one action step per file). range is
"± <sample stddev over repetitions>" (with >= 2 repetitions); extra names the repetition
count, min and max, and the run's recipe, batch and git commit where the context has them.

Instructions go into customSmallerIsBetter.json beside step time.

--format bencher writes DIR/bencher.json, Bencher Metric Format (bencher.dev/docs/
reference/bencher-metric-format): {case: {measure: {value, lower_value, upper_value}}},
lower/upper the min and max over repetitions (with >= 2). `throughput` is Bencher's
built-in measure (operations/s: one operation = one image); Bencher creates the other two
measures on first upload (set their units, % and ms, in its console); `instructions` is
the measure Bencher's Iai adapters use for Callgrind counts.

Default DIR: out/export. Exit status: 0 written, 2 bad input (missing or malformed run, no
case with any of the four counters, bad option), one `export: error:` line on stderr.
"""

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pbgate.record import (BadInput, case_filter, context, is_number,  # noqa: E402
                           iterations_by_case, load_run)

EXIT_OK = 0
EXIT_BAD_INPUT = 2

# (counter, name suffix, unit, bigger is better, Bencher measure)
METRICS = (("items_per_second", "images/s", "images/s", True, "throughput"),
           ("au_pct", "AU", "%", True, "accelerator-utilisation"),
           ("step_ms", "step time", "ms", False, "step-time"),
           ("instructions", "instructions", "instructions", False, "instructions"))


def summarise(values):
    """Median, min, max and sample stddev (None below 2 values) of one counter."""
    return {"value": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values), "stddev": statistics.stdev(values) if len(values) > 1 else None}


def case_metrics(cases, regex):
    """[(case, counter, summary)] in file order for every counter a case has."""
    out = []
    for name, rows in cases.items():
        if not regex.search(name):
            continue
        for counter, *_ in METRICS:
            values = [r[counter] for r in rows if is_number(r.get(counter))]
            if values:
                out.append((name, counter, summarise(values)))
    return out


def run_note(ctx):
    parts = [f"{k} {ctx[k]}" for k in ("recipe", "batch_size", "git_commit") if ctx.get(k)]
    return "; ".join(parts)


def github_action_benchmark(metrics, ctx):
    """({customBiggerIsBetter list}, {customSmallerIsBetter list})."""
    spec = {m[0]: m for m in METRICS}
    bigger, smaller = [], []
    note = run_note(ctx)
    for name, counter, s in metrics:
        _, suffix, unit, is_bigger, _ = spec[counter]
        extra = (f"median of {s['n']} repetition{'s' if s['n'] != 1 else ''}; min {s['min']:.6g},"
                 f" max {s['max']:.6g}" + (f"; {note}" if note else ""))
        entry = {"name": f"{name} - {suffix}", "unit": unit, "value": s["value"]}
        if s["stddev"] is not None:
            entry["range"] = f"± {s['stddev']:.4g}"
        entry["extra"] = extra
        (bigger if is_bigger else smaller).append(entry)
    return bigger, smaller


def bencher(metrics):
    spec = {m[0]: m for m in METRICS}
    doc = {}
    for name, counter, s in metrics:
        metric = {"value": s["value"]}
        if s["n"] > 1:
            metric.update(lower_value=s["min"], upper_value=s["max"])
        doc.setdefault(name, {})[spec[counter][4]] = metric
    return doc


def write_json(path, doc):
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2, allow_nan=False, ensure_ascii=False)
            f.write("\n")
    except OSError as e:
        raise BadInput(f"{path}: cannot write ({e})") from e
    return path


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="export.py", description=__doc__.splitlines()[0])
    ap.add_argument("run", metavar="RUN.json")
    ap.add_argument("--format", required=True, choices=("github-action-benchmark", "bencher"))
    ap.add_argument("--out", default=os.path.join("out", "export"),
                    help="output folder (default out/export)")
    ap.add_argument("--cases", default=".", metavar="REGEX",
                    help="only cases whose name matches (Python re.search; default: all)")
    args = ap.parse_args(argv)
    args.regex = case_filter(args.cases, "--cases")
    return args


def main(argv):
    try:
        args = parse_args(argv)
        data = load_run(args.run)
        cases, errored = iterations_by_case(data)
        metrics = case_metrics(cases, args.regex)
        if not metrics:
            raise BadInput(f"{args.run}: no case matching --cases {args.cases!r} has "
                           "items_per_second, au_pct, step_ms or instructions")
        try:
            os.makedirs(args.out, exist_ok=True)
        except OSError as e:
            raise BadInput(f"{args.out}: cannot create the folder ({e})") from e
        if args.format == "bencher":
            written = [write_json(os.path.join(args.out, "bencher.json"), bencher(metrics))]
        else:
            bigger, smaller = github_action_benchmark(metrics, context(data))
            written = [write_json(os.path.join(args.out, f"custom{kind}IsBetter.json"), doc)
                       for kind, doc in (("Bigger", bigger), ("Smaller", smaller))]
            if not smaller:
                print("export: note: no case has step_ms (only BM_EndToEnd cases do) or "
                      "instructions: customSmallerIsBetter.json is an empty list",
                      file=sys.stderr)
    except BadInput as e:
        print(f"export: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    skipped = [n for n in errored if args.regex.search(n)]
    if skipped:
        print(f"export: left out {len(skipped)} errored case(s): {', '.join(skipped[:10])}"
              f"{' ...' if len(skipped) > 10 else ''}", file=sys.stderr)
    without = [n for n in cases if args.regex.search(n) and n not in {m[0] for m in metrics}]
    if without:
        print(f"export: {len(without)} case(s) without images/s, AU, step time or "
              "instructions left out",
              file=sys.stderr)
    print(f"export: {len(metrics)} value(s) of {len({m[0] for m in metrics})} case(s) -> "
          f"{', '.join(written)}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
