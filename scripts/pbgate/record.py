"""pbgate.record - reading pipebench's Google Benchmark JSON runs (the run record), shared
by the scripts.

The gates (pbgate.compare behind compare.sh, pbgate.ab and pbgate.instr behind
compare.sh --ab), plot.py, history.py and export.py all read the same file:
Google Benchmark 1.7.1's JSON reporter output (`--benchmark_out=F
--benchmark_out_format=json`), with pipebench's context keys (bench/README.md) and, from
record version 1 on, the run record: context `pipebench_record` (1) and a typed "key"
object on every row. This module holds what they share:

  load_run(path)              the document, validated; BadInput names the file and why
  record_version(data)        context pipebench_record as an int; 0 for a file without it
  align_names(base, new)      new's rows under base's names where the same key is named differently
  case_name(row)              run_name (Google Benchmark >= 1.5) or name: the id of a case
                              within a run (what the user's --filter / --cases search)
  case_key(row)               what the case measures, as the record's typed fields (family,
                              pipeline, variant, baseline, workers, timed_by, ...): the row's
                              "key", or for an older file the one legacy adapter
  timed_by(key), timed_field(key)   the time Google Benchmark timed a case by, and the
                              row field that holds it (real_time or cpu_time)
  iterations_by_case(doc)     {case: [iteration rows]} in file order, errored cases apart
  time_ns(row, field)         real_time / cpu_time of a row in ns, whatever its time_unit
  context_number(ctx, key)    a context value as a finite number, or None
  context_bool(ctx, key)      a context value as True / False, or None
  context_mismatches(a, b)    the context keys that make two runs incomparable
  busy_flag(ctx)              pipebench's busy_machine context key: True, False or None

The scripts read the key's fields and never look inside a case name: legacy_case_key is
the one place that does, for files written before the record (record version 0).

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
# Of those, the ones that are numbers (JSON numbers from record version 1 on, strings
# before): compared as numbers, so 64 and "64" are the same batch.
_NUMBER_CONTEXT_KEYS = ("batch_size", "crop_size")

# The record's "key" object (record version 1): every field with its default. A row's
# key may leave a field out; case_key fills it in.
KEY_DEFAULTS = {"name": "", "family": "", "pipeline": "", "variant": "", "variant_param": "",
                "baseline": "", "layout": "", "cache": "", "shards": 0, "workers": 0,
                "callbacks": "", "op": "", "detail": "", "timed_by": "cpu_time"}
_KEY_INTS = ("shards", "workers")


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
        if "key" in row:
            problem = _key_problem(row["key"])
            if problem:
                raise BadInput(f"{path}: benchmarks[{i}] ({row['name']}): {problem}")
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


def _key_problem(key):
    """Why a row's "key" is not the record's key object, or None."""
    if not isinstance(key, dict):
        return f"\"key\" must be an object, got {type(key).__name__}"
    for field in KEY_DEFAULTS:
        if field not in key:
            continue
        v = key[field]
        if field in _KEY_INTS:
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                return f"key.{field} must be an integer >= 0, got {v!r}"
        elif not isinstance(v, str):
            return f"key.{field} must be a string, got {v!r}"
    return None


def context(data):
    ctx = data.get("context")
    return ctx if isinstance(ctx, dict) else {}


def is_aggregate(row):
    return row.get("run_type") == "aggregate"


def record_version(data):
    """The run record's version: context `pipebench_record` as an int (1 for files written
    with the typed record), 0 for a file without it (written before the record)."""
    v = context(data).get("pipebench_record")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return 0
    return int(v) if v >= 0 and v == int(v) else 0


def align_names(base, new):
    """Renames `new`'s rows to `base`'s Google Benchmark names where both runs hold the same
    case (the same record key name) under different names: pipebench plans a loader or
    end-to-end case's iterations from a time budget (bench/run/case_budget.h), and Google
    Benchmark writes them into the name ("/iterations:4/real_time"), so two runs of the
    same case may name it differently. Rows without a key keep their names. Returns new."""
    def key_name(row):
        key = row.get("key")
        return key.get("name") if isinstance(key, dict) and isinstance(key.get("name"), str) else ""

    base_names = {}
    for row in base["benchmarks"]:
        k = key_name(row)
        if k:
            base_names.setdefault(k, row.get("run_name") or row["name"])
    for row in new["benchmarks"]:
        k = key_name(row)
        target = base_names.get(k)
        current = row.get("run_name") or row["name"]
        if not k or target is None or target == current:
            continue
        if row.get("run_type") == "aggregate" and isinstance(row.get("aggregate_name"), str):
            row["name"] = f"{target}_{row['aggregate_name']}"
        else:
            row["name"] = target
        if "run_name" in row:
            row["run_name"] = target
    return new


def case_name(row):
    """The case a row belongs to: run_name (GB >= 1.5) or the name itself. An id within a
    run, searched by the user's --filter / --cases; never parsed (read case_key instead)."""
    return row.get("run_name") or row["name"]


def case_key(row):
    """What the row's case measures: a dict with every field of the record's key
    (KEY_DEFAULTS; "name" is the registered case name, without Google Benchmark's settings
    suffixes). The row's own "key" (record version 1), its missing fields filled in with
    the defaults; a row without one (a file written before the record) goes through
    legacy_case_key."""
    key = row.get("key")
    if not isinstance(key, dict):
        return legacy_case_key(row)
    out = dict(KEY_DEFAULTS)
    out.update(key)
    if not out["name"]:
        out["name"] = legacy_case_key(row)["name"]
    return out


_GB_NUMBER_SETTINGS = ("iterations", "repeats", "threads", "min_time", "min_warmup_time")
_GB_TIME_SETTINGS = ("real_time", "manual_time", "process_time")


def legacy_case_key(row):
    """The key of a row from a file written BEFORE the record (record version 0: no "key"
    object on the rows, no context pipebench_record), derived from its case name. This is
    the one place in scripts/ that looks inside a case name.

    The name is the row's run_name (else its name, less an aggregate's _<aggregate_name>).
    Google Benchmark's settings suffixes (/iterations:N, /repeats:N, /threads:N,
    /min_time:X, /min_warmup_time:X, /real_time, /manual_time, /process_time) are stripped
    from its end: what is left is key["name"], and /real_time or /manual_time gives
    key["timed_by"] (else "cpu_time"). The rest follows the old grammar:

      BM_Read/<files|shards>/<warm|cold>, BM_Read/shards-N/<cache>
      BM_Decode/<op>[/<detail>], BM_Transform/<op>[/<args, which may contain '/'>]
      BM_Sample/<pipeline>[/<kind>:<param>]
      BM_Collate/<op>/<detail...>, BM_H2D/<memory>/<detail...>
      BM_StageTimers|BM_Loader|BM_SystemSampler/<p>[/<files|shards|shards-N>/<cache>]/workers:W
      BM_TrainStep/<baseline>
      BM_EndToEnd/<p>[/<kind>:<param>]/<baseline>/workers:W[/callbacks:<set>]
      RegionTimer/<key>

    (a baseline may hold ':', cuda:cnn; the variant is the segment between the pipeline and
    the baseline). A name outside the grammar gets family "" (no family a script selects),
    with its name and timed_by still filled in.
    """
    name = row.get("run_name") or row.get("name") or ""
    agg = row.get("aggregate_name")
    if not row.get("run_name") and row.get("run_type") == "aggregate" and \
            isinstance(agg, str) and agg and name.endswith("_" + agg):
        name = name[:-len(agg) - 1]
    segs = name.split("/")
    timed = "cpu_time"
    while len(segs) > 1:  # Google Benchmark's settings, from the end
        last = segs[-1]
        setting, colon, value = last.partition(":")
        if not colon and last in _GB_TIME_SETTINGS:
            if last != "process_time" and timed == "cpu_time":
                timed = last
            segs.pop()
            continue
        if colon and setting in _GB_NUMBER_SETTINGS:
            try:
                float(value[:-1] if value.endswith("s") else value)
            except ValueError:
                break
            segs.pop()
            continue
        break
    key = dict(KEY_DEFAULTS, name="/".join(segs), timed_by=timed)
    unknown = dict(key)

    def count(seg, prefix):
        """W of "<prefix>:W" (a non-negative integer), else None."""
        head, colon, value = seg.partition(":")
        digits = colon and head == prefix and value.isascii() and value.isdigit()
        return int(value) if digits else None

    def storage(seg, cache):
        """layout/shards from files | shards | shards-N; False when it is none of them."""
        if seg in ("files", "shards"):
            key.update(layout=seg, cache=cache)
            return True
        head, dash, n = seg.partition("-")
        if head == "shards" and dash and n.isascii() and n.isdigit() and int(n) > 0:
            key.update(layout="shards", shards=int(n), cache=cache)
            return True
        return False

    first, rest = segs[0], segs[1:]
    family = ("Region" if first == "RegionTimer" else  # a region is never BM_Region
              first[3:] if first.startswith("BM_") and first != "BM_Region" else "")
    if not rest or not all(rest):
        return unknown
    if family == "Region":
        key["op"] = "/".join(rest)
    elif family == "Read":
        if len(rest) != 2 or not storage(rest[0], rest[1]):
            return unknown
    elif family in ("Decode", "Transform", "Collate", "H2D"):
        key.update(op=rest[0], detail="/".join(rest[1:]))
    elif family == "Sample":
        key["pipeline"] = rest[0]
        if len(rest) > 1:
            kind, colon, param = "/".join(rest[1:]).partition(":")
            if not (kind and colon):
                return unknown
            key.update(variant=kind, variant_param=param)
    elif family in ("StageTimers", "Loader", "SystemSampler"):
        workers = count(rest[-1], "workers")
        if workers is None or len(rest) not in (2, 4):
            return unknown
        key.update(pipeline=rest[0], workers=workers)
        if len(rest) == 4 and not storage(rest[1], rest[2]):
            return unknown
    elif family == "TrainStep":
        key["baseline"] = "/".join(rest)
    elif family == "EndToEnd":
        if rest[-1].startswith("callbacks:"):
            key["callbacks"] = rest.pop()[len("callbacks:"):]
            if not key["callbacks"]:
                return unknown
        workers = count(rest[-1], "workers") if rest else None
        if workers is None or len(rest) not in (3, 4):
            return unknown
        key.update(pipeline=rest[0], baseline=rest[-2], workers=workers)
        if len(rest) == 4:
            kind, colon, param = rest[1].partition(":")
            if not (kind and colon):
                return unknown
            key.update(variant=kind, variant_param=param)
    else:
        return unknown
    key["family"] = family
    return key


def timed_by(key):
    """The time Google Benchmark timed a case by, "real_time", "manual_time" or
    "cpu_time": key["timed_by"] of a case key (case_key), or the string itself."""
    value = key.get("timed_by") if isinstance(key, dict) else key
    return value if value in ("real_time", "manual_time") else "cpu_time"


def timed_field(key):
    """The row field holding that time: real_time for UseRealTime / UseManualTime cases
    (a manual time is written as real_time), else cpu_time."""
    return "real_time" if timed_by(key) in ("real_time", "manual_time") else "cpu_time"


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
    Values are compared as strings, exactly, except batch_size and crop_size, compared as
    numbers when both are (64 and "64", a run with the record against one before it).
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
            a, b = context_number(ctx_a, key), context_number(ctx_b, key)
            if key in _NUMBER_CONTEXT_KEYS and a is not None and b is not None:
                same = a == b
            else:
                same = str(ctx_a[key]) == str(ctx_b[key])
            if not same:
                differ.append((key, _clip(ctx_a[key]), _clip(ctx_b[key])))
        elif in_a or in_b:
            one_sided.append(key)
    return differ, one_sided


def context_number(ctx, key):
    """Context value `key` as a finite float: a JSON number (record version 1), or for an
    older file a string that is, as a whole, a finite decimal number ("25", "0.5", "1e3";
    not "25abc", " 25", "1_000", "nan"). None otherwise (absent, a bool, anything else)."""
    v = ctx.get(key) if isinstance(ctx, dict) else None
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v) if math.isfinite(v) else None
    if not isinstance(v, str) or not v or v != v.strip() or "_" in v:
        return None
    try:
        number = float(v)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def context_bool(ctx, key):
    """Context value `key` as a bool: a JSON boolean (record version 1), or for an older
    file the string "true" or "false" exactly. None otherwise (absent or anything else)."""
    v = ctx.get(key) if isinstance(ctx, dict) else None
    if isinstance(v, bool):
        return v
    return True if v == "true" else False if v == "false" else None


def busy_flag(ctx):
    """pipebench's `busy_machine` context key: True, False, or None (absent or anything
    else: unknown)."""
    return context_bool(ctx, "busy_machine")
