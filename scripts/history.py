#!/usr/bin/python3
"""history.py - the trend of pipebench cases over a series of runs (one per commit).

  /usr/bin/python3 scripts/history.py RUN.json|DIR ... [--out DIR] [--cases REGEX]
      [--order date|given|name] [--time real|cpu|auto] [--threshold PCT] [--max-cv PCT]
      [--alpha P] [--no-png]

Reads pipebench's Google Benchmark JSON runs (files, or folders whose *.json files are
taken in name order), orders them (--order date, the default: the context's `date`, ties
by file name; given: as listed; name: by file name; a run without a readable date falls
back to name order, with a warning) and labels each by its context's `git_commit` (first
10 characters) or else its file name. It writes into --out (default out/history):

  history.html    ONE self-contained page (no server, no network: the data and the
                  script that draws inline SVG are in the file): per case, images/s (or
                  the time per iteration, ms, for cases without items_per_second), AU %
                  and stall % where the case has them, over the runs, with the noise band
                  (min..max of the repetitions) and the change points flagged; and, for
                  runs made with `compare.sh --ab` (the JSON of ab_gate.py or
                  instr_gate.py), the paired delta of each case, NEW against the BASE it
                  ran beside, in % with its 95 % interval (an instruction count's is exact);
  <case>.png      one picture per case (matplotlib): the same series and flags.

A `compare.sh --ab --out` file is also a run of NEW (its "benchmarks"), drawn in the
unpaired series like any run, except an instruction-count one (metric "instructions"):
its rows were measured under Valgrind, tens of times slower than the machine, so only its
paired deltas are drawn. A paired REGRESSION prints one PAIRED line on stdout.

Change points: between each run and the previous run that has the case, the gate's own
decision (pbgate/compare.py judge: median change beyond --threshold percent and, with >= 2
repetitions on both sides, the two-sided Mann-Whitney U test of compare.py's
gbench.report.calc_utest at p < --alpha; a case whose CV over repetitions exceeds
--max-cv is too noisy and never flagged: such changes are drawn as grey rings and
counted in a warning). Slower beyond the threshold is a "regression", faster an
"improvement"; both print one CHANGE line on stdout. Runs whose context differs
from the previous run's (dataset, batch, crop, pipeline, build) are marked: a change
point there may be the configuration, not the code.

--cases is the user's regular expression (re.search on the case name); strings from the
JSON are never put into a regular expression. Exit status: 0 written, 2 bad input (a
missing or malformed run, no run, no case matching --cases, a bad option), one
`history: error:` line on stderr.
"""

import argparse
import datetime
import json
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from pbgate.compare import gate_thresholds, gated_field, import_gbench, judge  # noqa: E402
from pbgate.record import (BadInput, busy_flag, case_filter, case_key, case_name,  # noqa: E402
                           context, context_mismatches, iterations_by_case, is_number,
                           load_run, time_ns)

EXIT_OK = 0
EXIT_BAD_INPUT = 2
TEMPLATE = os.path.join(HERE, "history_template.html")


def paired_points(path, data):
    """The paired comparison in a file written by `compare.sh --ab --out` (ab_gate.py, or
    instr_gate.py for metric "instructions"): ({case: point}, {what the comparison was}),
    or ({}, None) for an ordinary run. A point: the ratio NEW/BASE and its interval as
    deltas in percent, the metric, the verdict and whether the count was exact. A case
    without a ratio (not judged) is left out; a ratio outside its interval is bad input."""
    if data.get("paired") is not True or not isinstance(data.get("cases"), list):
        return {}, None
    metric = data.get("metric") if data.get("metric") in ("time", "instructions") else "time"
    points = {}
    for c in data["cases"]:
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise BadInput(f"{path}: a paired case without a name")
        r, lo, hi = c.get("ratio"), c.get("ci_low"), c.get("ci_high")
        if r is None:
            continue
        if not all(is_number(v) and v > 0 for v in (r, lo, hi)) or not lo <= r <= hi:
            raise BadInput(f"{path}: {c['name']}: the paired ratio and its interval must be "
                           f"numbers > 0 with ci_low <= ratio <= ci_high, got {r!r}, "
                           f"{lo!r}, {hi!r}")
        points[c["name"]] = {
            "delta_pct": (r - 1) * 100, "lo_pct": (lo - 1) * 100, "hi_pct": (hi - 1) * 100,
            "ratio": r, "metric": metric, "verdict": str(c.get("verdict", "ok")),
            "exact": metric == "instructions" or c.get("deterministic") is True}
    threshold = data.get("threshold_pct")
    info = {"metric": metric, "threshold_pct": threshold if is_number(threshold) else None,
            "blocks": data.get("blocks") if is_number(data.get("blocks")) else None,
            "confidence": data.get("confidence") if is_number(data.get("confidence")) else None,
            "base": str(data.get("base", "")), "result": str(data.get("result", "")),
            "simd_path": (data.get("simd_path") or {}).get("new")
            if isinstance(data.get("simd_path"), dict) else None}
    return points, info


class Run:
    """One loaded run: its file, label, date, context, {case: rows}, {case: error},
    {case: key (record.case_key), errored cases included}, and for a `compare.sh
    --ab` file its paired points and what the comparison was (paired_points)."""

    def __init__(self, path, data):
        self.path = path
        self.ctx = context(data)
        self.cases, self.errored = iterations_by_case(data)
        self.paired, self.ab = paired_points(path, data)
        if self.ab and self.ab["metric"] == "instructions":
            self.cases = {}  # rows measured under Valgrind: not this machine's speed
        self.keys = {}
        for row in data["benchmarks"]:
            self.keys.setdefault(case_name(row), case_key(row))
        commit = str(self.ctx.get("git_commit", "")).strip()
        self.commit = commit or None
        self.label = commit[:10] if commit else os.path.splitext(os.path.basename(path))[0]
        self.date = parse_date(self.ctx.get("date"))


def parse_date(text):
    """Google Benchmark's context date (ISO 8601, e.g. 2024-01-01T00:00:00+00:00) as an
    aware datetime (naive ones taken as UTC), or None."""
    if not isinstance(text, str):
        return None
    try:
        d = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return d if d.tzinfo else d.replace(tzinfo=datetime.timezone.utc)


def expand_inputs(inputs):
    """Files as given; a folder contributes its *.json files in name order."""
    paths = []
    for p in inputs:
        if os.path.isdir(p):
            try:
                found = sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".json"))
            except OSError as e:
                raise BadInput(f"{p}: cannot list the folder ({e})") from e
            if not found:
                raise BadInput(f"{p}: folder holds no *.json run")
            paths.extend(found)
        else:
            paths.append(p)
    return paths


def order_runs(runs, order):
    if order == "given":
        return runs
    by_name = sorted(runs, key=lambda r: os.path.basename(r.path))
    if order == "name":
        return by_name
    undated = [r.path for r in runs if r.date is None]
    if undated:
        print(f"history: warning: no readable context date in {', '.join(undated[:3])}"
              f"{' ...' if len(undated) > 3 else ''}; runs ordered by file name")
        return by_name
    return sorted(by_name, key=lambda r: r.date)  # stable: same date keeps name order


def _band(values):
    return {"median": statistics.median(values), "lo": min(values), "hi": max(values),
            "n": len(values)}


def counter_band(rows, key):
    values = [r[key] for r in rows if is_number(r.get(key))]
    return _band(values) if values else None


def primary_band(rows, field, metric):
    if metric == "images/s":
        return counter_band(rows, "items_per_second")
    return _band([time_ns(r, field) / 1e6 for r in rows])


def change_points(name, runs, field, opts, report):
    """The gate's decision between each run holding the case and the previous one:
    ([change points], [transitions beyond the threshold but too noisy to judge])."""
    out, noisy, prev = [], [], None
    for i, run in enumerate(runs):
        rows = run.cases.get(name)
        if not rows:
            continue
        if prev is not None:
            r = judge(runs[prev].cases[name], rows, opts.threshold, opts.alpha, report, field,
                      opts.max_cv)
            faster = (r["verdict"] == "ok" and r["change"] < -opts.threshold / 100.0
                      and (r["p"] is None or r["p"] < opts.alpha))
            if r["verdict"] == "regression" or faster:
                differ, _ = context_mismatches(runs[prev].ctx, run.ctx)
                out.append({"i": i, "from": prev, "change_pct": r["change"] * 100.0,
                            "p": r["p"], "n": [r["n_base"], r["n_new"]],
                            "kind": "regression" if not faster else "improvement",
                            "context": [k for k, _, _ in differ]})
            elif r["verdict"] == "noisy" and abs(r["change"]) > opts.threshold / 100.0:
                noisy.append({"i": i, "from": prev, "change_pct": r["change"] * 100.0,
                              "cv_pct": r["cv"] * 100.0})
        prev = i
    return out, noisy


def case_series(name, runs, opts, report):
    """Everything the page and the picture show for one case."""
    # The case's key in the latest run that has it.
    field = gated_field(next((run.keys[name] for run in reversed(runs) if name in run.keys),
                             None), opts.time)
    holders = [run.cases[name] for run in runs if name in run.cases]
    metric = ("images/s" if any(is_number(r.get("items_per_second")) for rows in holders
                                for r in rows) else "ms")
    series = {"primary": [], "au": [], "stall": []}
    for run in runs:
        rows = run.cases.get(name)
        series["primary"].append(primary_band(rows, field, metric) if rows else None)
        series["au"].append(counter_band(rows, "au_pct") if rows else None)
        series["stall"].append(counter_band(rows, "stall_pct") if rows else None)
    for key in ("au", "stall"):
        if all(v is None for v in series[key]):
            series[key] = None
    paired = [run.paired.get(name) for run in runs]
    series["paired"] = paired if any(p is not None for p in paired) else None
    errors = [{"i": i, "message": run.errored[name][:300]} for i, run in enumerate(runs)
              if name in run.errored]
    changes, noisy = change_points(name, runs, field, opts, report)
    return {"name": name, "metric": metric, "field": field,
            "metric_label": "images/s" if metric == "images/s" else f"{field} per iteration, ms",
            **series, "errors": errors, "changes": changes, "noisy": noisy}


def build_history(runs, opts, report):
    names = []
    for run in runs:
        for name in list(run.cases) + list(run.errored) + list(run.paired):
            if name not in names and opts.regex.search(name):
                names.append(name)
    if not names:
        raise BadInput(f"no case matches --cases {opts.cases!r} in the {len(runs)} run(s)")
    run_info = []
    for i, run in enumerate(runs):
        differ = context_mismatches(runs[i - 1].ctx, run.ctx)[0] if i else []
        run_info.append({"label": run.label, "file": os.path.basename(run.path),
                         "date": run.ctx.get("date") if isinstance(run.ctx.get("date"), str)
                         else None, "commit": run.commit, "busy": busy_flag(run.ctx),
                         "ab": run.ab,
                         "context_changes": [f"{k}: {a} -> {b}" for k, a, b in differ]})
    return {"title": opts.title, "options": {"threshold_pct": opts.threshold,
                                             "alpha": opts.alpha, "max_cv_pct": opts.max_cv,
                                             "time": opts.time, "order": opts.order},
            "runs": run_info, "cases": [case_series(n, runs, opts, report) for n in names]}


def page_html(history):
    """The template with the data embedded; '<' escaped so no string ends the script."""
    with open(TEMPLATE, "r", encoding="utf-8") as f:
        template = f.read()
    data = json.dumps(history, allow_nan=False, ensure_ascii=False).replace("<", "\\u003c")
    return template.replace("/*HISTORY_DATA*/null", data, 1)


def png_name(name, used):
    """A file name for case `name`: unsafe characters as '_', unique within the folder."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "case"
    stem, k = base[:150], 2
    while stem in used:
        stem, k = f"{base[:150]}-{k}", k + 1
    used.add(stem)
    return stem + ".png"


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="history.py", description=(
        "Trend of pipebench cases over a series of runs: one self-contained HTML page and "
        "a PNG per case, change points flagged with the compare gate's test."))
    ap.add_argument("inputs", nargs="+", metavar="RUN.json|DIR")
    ap.add_argument("--out", default=os.path.join("out", "history"),
                    help="output folder (default out/history)")
    ap.add_argument("--cases", default=".", metavar="REGEX",
                    help="only cases whose name matches (Python re.search; default: all)")
    ap.add_argument("--order", choices=("date", "given", "name"), default="date",
                    help="run order: context date (default), as given, or file name")
    ap.add_argument("--time", choices=("real", "cpu", "auto"), default="real",
                    help="time tested for change points and shown without images/s "
                         "(as compare.sh --time)")
    ap.add_argument("--threshold", default="5", metavar="PCT",
                    help="smallest change flagged, percent (compare.sh --max-regression; 5)")
    ap.add_argument("--max-cv", default=None, metavar="PCT",
                    help="CV above which a case is too noisy to flag (default: --threshold)")
    ap.add_argument("--alpha", default="0.05", metavar="P",
                    help="U-test significance level (default 0.05)")
    ap.add_argument("--title", default="pipebench history", help="page title")
    ap.add_argument("--no-png", action="store_true", help="write only the HTML page")
    opts = ap.parse_args(argv)
    opts.threshold, opts.max_cv, opts.alpha = gate_thresholds(
        opts.threshold, opts.max_cv, opts.alpha, "--threshold")
    opts.regex = case_filter(opts.cases, "--cases")
    return opts


def print_changes(history):
    runs = history["runs"]
    for case in history["cases"]:
        for c in case["changes"]:
            p = "p=n/a, single run" if c["p"] is None else f"p={c['p']:.4g}"
            ctx = f"; context changed: {', '.join(c['context'])}" if c["context"] else ""
            print(f"CHANGE {runs[c['i']]['label']} {case['name']}: {case['field']} "
                  f"{c['change_pct']:+.1f}% vs {runs[c['from']]['label']} ({p}, "
                  f"{c['kind']}){ctx}")


def print_paired(history):
    runs = history["runs"]
    for case in history["cases"]:
        for i, p in enumerate(case["paired"] or []):
            if p is None or p["verdict"] != "regression":
                continue
            how = ("exact instruction count" if p["exact"] and p["metric"] == "instructions"
                   else f"95 % interval {1 + p['lo_pct'] / 100:.4f}..{1 + p['hi_pct'] / 100:.4f}")
            print(f"PAIRED {runs[i]['label']} {case['name']}: {p['metric']} NEW/BASE "
                  f"{p['ratio']:.4f} ({p['delta_pct']:+.2f}%, {how}), REGRESSION against the "
                  f"BASE it ran beside ({runs[i]['ab']['base']})")


def write_outputs(history, opts):
    """history.html and the PNGs into opts.out; BadInput naming the path on failure."""
    page = os.path.join(opts.out, "history.html")
    pngs = []
    try:
        os.makedirs(opts.out, exist_ok=True)
        with open(page, "w", encoding="utf-8") as f:
            f.write(page_html(history))
        if not opts.no_png:
            from history_plots import draw_case
            used = set()
            for case in history["cases"]:
                pngs.append(os.path.join(opts.out, png_name(case["name"], used)))
                draw_case(case, history["runs"], pngs[-1])
    except OSError as e:
        raise BadInput(f"cannot write into {opts.out}: {e}") from e
    return page, pngs


def unique_labels(runs):
    seen = {}
    for run in runs:
        k = seen[run.label] = seen.get(run.label, 0) + 1
        if k > 1:
            run.label = f"{run.label} ({k})"


def main(argv):
    try:
        opts = parse_args(argv)
        report, _ = import_gbench()
        runs = order_runs([Run(p, load_run(p)) for p in expand_inputs(opts.inputs)],
                          opts.order)
        unique_labels(runs)
        history = build_history(runs, opts, report)
        page, pngs = write_outputs(history, opts)
    except BadInput as e:
        print(f"history: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print_changes(history)
    print_paired(history)
    n_paired = sum(1 for r in history["runs"] if r["ab"])
    n_changes = sum(len(c["changes"]) for c in history["cases"])
    n_noisy = sum(len(c["noisy"]) for c in history["cases"])
    if n_noisy:
        print(f"history: warning: {n_noisy} change(s) beyond {opts.threshold:g}% not judged: "
              f"the case's CV over repetitions exceeds --max-cv {opts.max_cv:g}% (a busy or "
              "noisy machine); they are drawn as grey rings")
    paired = f", {n_paired} paired (--ab) run(s)" if n_paired else ""
    print(f"history: {len(runs)} run(s), {len(history['cases'])} case(s), {n_changes} change "
          f"point(s){paired}; wrote {page}" + (f" and {len(pngs)} PNG(s)" if pngs else ""))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
