#!/usr/bin/python3
"""bench_json.py - reading pipebench's Google Benchmark JSON runs, shared by the scripts.

compare_gate.py (compare.sh), plot.py, history.py and export.py all read the same file:
Google Benchmark 1.7.1's JSON reporter output (`--benchmark_out=F
--benchmark_out_format=json`), with pipebench's context keys (bench/README.md). This
module holds what they share:

  load_run(path)              the document, validated; BadInput names the file and why
  case_name(row)              run_name (Google Benchmark >= 1.5) or name
  iterations_by_case(doc)     {case: [iteration rows]} in file order, errored cases apart
  time_ns(row, field)         real_time / cpu_time of a row in ns, whatever its time_unit
  context_mismatches(a, b)    the context keys that make two runs incomparable
  busy_flag(ctx)              pipebench's busy_machine context key: True, False or None

Times: `real_time` and `cpu_time` are per iteration in the row's `time_unit` (ns, us, ms
or s). Counters (items_per_second = images/s, au_pct, step_ms ...) are plain numbers.
"""

import json
import math
import os
import re

TIME_UNIT_TO_NS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}

# Context keys whose difference makes two runs measure different things (issue 14 item 8,
# issue 15 defect 4): the dataset's content, the batch, the crop, the pipeline that ran
# and the build type. pipeline_spec is compared when both runs have it, else recipe.
CONTEXT_KEYS = ("dataset_fingerprint", "batch_size", "crop_size", "pipeline_spec",
                "pipebench_build")


class BadInput(Exception):
    """Input a script refuses; the message names the file and the reason."""


def case_filter(pattern, option):
    """`pattern` compiled as a Python regular expression of case names; BadInput naming
    `option` (e.g. "--filter") when it does not compile."""
    try:
        return re.compile(pattern)
    except re.error as e:
        raise BadInput(f"{option} {pattern!r} is not a valid regular expression ({e})") from e


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


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
    except RecursionError as e:  # absurdly nested arrays: refuse, never a traceback
        raise BadInput(f"{path}: malformed JSON (nested too deeply)") from e
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise BadInput(f"{path}: not a Google Benchmark JSON (no \"benchmarks\" list; "
                       "write it with --benchmark_out=FILE --benchmark_out_format=json)")
    if "context" in data and not isinstance(data["context"], dict):
        raise BadInput(f"{path}: \"context\" is not an object; not a Google Benchmark JSON")
    for i, row in enumerate(data["benchmarks"]):
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            raise BadInput(f"{path}: benchmarks[{i}] has no \"name\"; not a Google Benchmark JSON")
        if "run_name" in row and not isinstance(row["run_name"], str):
            raise BadInput(f"{path}: benchmarks[{i}]: \"run_name\" must be a string")
        if row.get("error_occurred"):
            continue
        for key in ("real_time", "cpu_time"):
            v = row.get(key)
            if not is_number(v) or v < 0:
                raise BadInput(f"{path}: {row['name']}: \"{key}\" must be a finite number >= 0, "
                               f"got {v!r}")
        unit = row.get("time_unit")
        if unit not in TIME_UNIT_TO_NS:
            raise BadInput(f"{path}: {row['name']}: \"time_unit\" must be one of "
                           f"{sorted(TIME_UNIT_TO_NS)}, got {unit!r}")
    return data


def context(data):
    ctx = data.get("context")
    return ctx if isinstance(ctx, dict) else {}


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
    """{case: [iteration rows]} and {errored case: its first error message}, in file order.

    A case with only aggregate rows (--benchmark_report_aggregates_only) gets its
    `_median` aggregate as a single row, so it is still compared, without a U test.
    """
    cases, errored, medians = {}, {}, {}
    for row in data["benchmarks"]:
        name = case_name(row)
        if row.get("error_occurred"):
            errored.setdefault(name, str(row.get("error_message", "error_occurred")))
            continue
        if is_aggregate(row):
            if row.get("aggregate_name") == "median":
                medians.setdefault(name, row)
            continue
        cases.setdefault(name, []).append(row)
    for name, row in medians.items():
        if name not in cases and name not in errored:
            cases[name] = [row]
    return cases, errored


def time_ns(row, field):
    return row[field] * TIME_UNIT_TO_NS[row["time_unit"]]


def _clip(value, width=60):
    text = str(value).replace("\n", "\\n")
    return text if len(text) <= width else text[:width - 3] + "..."


def context_mismatches(ctx_a, ctx_b):
    """What makes two runs incomparable: ([(key, a, b) that differ], [keys in one only]).

    A key absent from both runs is not checked (older runs lack some); pipeline_spec is
    compared when both runs have it, else recipe (a run before pipeline specs existed).
    Values are compared as strings, exactly.
    """
    keys = list(CONTEXT_KEYS)
    differ, one_sided = [], []
    if not ("pipeline_spec" in ctx_a and "pipeline_spec" in ctx_b):
        keys[keys.index("pipeline_spec")] = "recipe"
        if "pipeline_spec" in ctx_a or "pipeline_spec" in ctx_b:
            one_sided.append("pipeline_spec (recipe compared instead)")
    for key in keys:
        in_a, in_b = key in ctx_a, key in ctx_b
        if in_a and in_b:
            if str(ctx_a[key]) != str(ctx_b[key]):
                differ.append((key, _clip(ctx_a[key]), _clip(ctx_b[key])))
        elif in_a or in_b:
            one_sided.append(key)
    return differ, one_sided


def busy_flag(ctx):
    """pipebench's `busy_machine` context key: True ("true"), False ("false"), None (absent
    or anything else: unknown)."""
    v = str(ctx.get("busy_machine", "")).strip().lower()
    return True if v == "true" else False if v == "false" else None
