#!/usr/bin/python3
"""gen_bench_json.py - writes Google Benchmark 1.7.1-shaped JSON runs for the script tests.

The rows mirror what libbenchmark 1.7.1's JSON reporter writes (checked against a real
run): iteration rows with run_name, run_type "iteration", repetitions, repetition_index,
real_time/cpu_time/time_unit and the user counters; with repetitions > 1 the aggregate
rows <name>_mean, _median, _stddev, _cv (run_type "aggregate", aggregate_name,
aggregate_unit); errored cases carry error_occurred/error_message and zero times.

Record version 1 (the default, DEFAULT_RECORD; /tmp/record_spec.md, bench/README.md): every
row carries the case's "key" object and the context pipebench_record = 1, its pipebench
numbers as JSON numbers and its flags as JSON booleans. Record version 0 (record=0) is a
file written before the record: no key, every pipebench context value a string, so the
scripts read it through the legacy adapter (scripts/pbgate/record.py). A Case built from a
key (case_key(...)) writes that key; a Case given only a name writes the key that
adapter derives from the name (the test names outside pipebench's grammar, "BM_X", get
family "").

Used as a module (make_run, Case, case_key, pipeline_cases, record0) by the tests, or from
the command line:
  gen_bench_json.py OUT.json [--reps N] [--seed S] [--scale F] [--noise CV] [--record 0|1]
"""

import argparse
import json
import os
import random
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# The record version make_run and pipeline_cases write when not told (record0() switches a
# test class to 0).
DEFAULT_RECORD = 1

# The record's context keys that are numbers and booleans (record version 1); before it
# pipebench wrote them as strings.
RECORD_NUMBER_KEYS = (
    "batch_size", "crop_size", "seed", "compute_ms", "prefetch_depth_batches",
    "system_sample_hz", "hardware_threads", "dataset_images", "dataset_bytes",
    "read_throttle_mib_s", "host_memory_bytes", "host_available_memory_bytes",
    "cold_files_checked", "cold_resident_pct", "world_size", "grad_mib", "link_gb_per_s",
    "link_latency_us", "budget_s", "budget_probe_sample_ms",
    "load_average_start", "load_average_end", "other_processes_cpu_cores", "job_cpu_cores",
    "job_processes_on_host", "cores_available", "load_window_s", "errored_cases",
    "skipped_files_total", "workers_auto_budget_cores", "workers_auto_chosen", "au_target_pct")
RECORD_BOOL_KEYS = ("drop_last", "busy_machine", "workers_auto_reached_au_target", "workers_auto_reached_au90")

KEY_FIELDS = {"family": "", "pipeline": "", "variant": "", "variant_param": "",
              "baseline": "", "layout": "", "cache": "", "shards": 0, "workers": 0,
              "callbacks": "", "op": "", "detail": "", "timed_by": "cpu_time"}


def key_name(k):
    """The registered case name of key `k`: model/case_key.cpp's CaseKey::name(), written
    again here from the key's fields (names from keys; the adapter goes the other way)."""
    fam = "BM_" + k["family"]
    label = f"{k['variant']}:{k['variant_param']}" if k["variant"] else ""
    storage = f"shards-{k['shards']}" if k["shards"] > 0 else k["layout"]

    def with_detail(name, detail):
        return f"{name}/{detail}" if detail else name

    f = k["family"]
    if f == "Read":
        return f"{fam}/{storage}/{k['cache']}"
    if f in ("Decode", "Transform", "Collate", "H2D"):
        return with_detail(f"{fam}/{k['op']}", k["detail"])
    if f == "Sample":
        return with_detail(f"{fam}/{k['pipeline']}", label)
    if f in ("StageTimers", "Loader", "SystemSampler"):
        name = f"{fam}/{k['pipeline']}"
        if k["layout"] or k["shards"] > 0:
            name += f"/{storage}/{k['cache']}"
        return f"{name}/workers:{k['workers']}"
    if f == "TrainStep":
        return f"{fam}/{k['baseline']}"
    if f == "EndToEnd":
        name = with_detail(f"{fam}/{k['pipeline']}", label)
        name += f"/{k['baseline']}/workers:{k['workers']}"
        return name + (f"/callbacks:{k['callbacks']}" if k["callbacks"] else "")
    if f == "Region":
        return f"RegionTimer/{k['op']}"
    raise ValueError(f"unknown family {f!r}")


def case_key(family, **fields):
    """The record's "key" object of a case: every field (defaults filled in) and its name."""
    unknown = set(fields) - set(KEY_FIELDS)
    if unknown:
        raise TypeError(f"not key fields: {sorted(unknown)}")
    k = dict(KEY_FIELDS, family=family, **fields)
    return {"name": key_name(k), **k}


def settings_suffix(key):
    """What Google Benchmark appends for the case's timing: /real_time, /manual_time."""
    return "" if key["timed_by"] == "cpu_time" else "/" + key["timed_by"]


def derived_key(name):
    """The key the run reader's legacy adapter (scripts/pbgate/record.py) reads from `name`
    (a Case given no key)."""
    scripts = os.path.join(HERE, "..", "..", "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    from pbgate import record
    return record.legacy_case_key({"name": name})


class Case:
    """One benchmark case.

    name: full case name as Google Benchmark writes it (e.g. "BM_Transform/resize/real_time");
      None with a key: the key's name and its timing suffix (settings_suffix).
    key: the case's key (case_key(...)), written on its rows in record version 1; None:
      derived from the name (derived_key).
    real_ms: true mean real time per iteration in ms (before scale and noise).
    noise_cv: relative standard deviation of the gaussian noise on each repetition.
    counters: {name: value} user counters, identical on every repetition unless
      counter_noise_cv > 0.
    values_ms: explicit per-repetition real times in ms (overrides real_ms/noise).
    error: error message; the case is reported as errored (error_occurred).
    time_unit: "ns", "us", "ms" or "s"; times are written in this unit.
    cpu_ratio: cpu_time = real_time * cpu_ratio.
    """

    def __init__(self, name, real_ms=1.0, noise_cv=0.01, counters=None, values_ms=None,
                 error=None, time_unit="ms", cpu_ratio=0.9, counter_noise_cv=0.0, key=None):
        if name is None:
            name = key["name"] + settings_suffix(key)
        self.name = name
        self.key = dict(key) if key is not None else None
        self.real_ms = real_ms
        self.noise_cv = noise_cv
        self.counters = dict(counters or {})
        self.values_ms = list(values_ms) if values_ms is not None else None
        self.error = error
        self.time_unit = time_unit
        self.cpu_ratio = cpu_ratio
        self.counter_noise_cv = counter_noise_cv


_MS_TO_UNIT = {"ns": 1e6, "us": 1e3, "ms": 1.0, "s": 1e-3}


def _typed(value):
    """A pipebench context number as record version 1 writes it: a string that is a whole
    number becomes an int, another number a float; anything else is left as it is."""
    if not isinstance(value, str):
        return value
    try:
        number = float(value)
    except ValueError:
        return value
    return int(number) if number.is_integer() and "." not in value else number


def _as_string(value):
    """A context value as pipebench wrote it before the record: a string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _context(extra, record):
    ctx = {
        "date": "2024-01-01T00:00:00+00:00", "host_name": "fixture", "executable": "pipebench",
        "num_cpus": 2, "mhz_per_cpu": 2445, "cpu_scaling_enabled": False,
        "caches": [], "load_avg": [0.1, 0.1, 0.1], "library_build_type": "release",
    }
    ctx.update(extra or {})
    for k in RECORD_NUMBER_KEYS + RECORD_BOOL_KEYS:
        if k not in ctx:
            continue
        if record == 0:
            ctx[k] = _as_string(ctx[k])
        elif k in RECORD_BOOL_KEYS:
            ctx[k] = {"true": True, "false": False}.get(ctx[k], ctx[k])
        else:
            ctx[k] = _typed(ctx[k])
    if record >= 1:
        ctx["pipebench_record"] = record
    else:
        ctx.pop("pipebench_record", None)
    return ctx


def make_run(cases, reps=9, seed=0, scale=1.0, context=None, aggregates=True, record=None):
    """Returns a Google Benchmark JSON document (a dict) for `cases`.

    reps: repetitions per case; 1 writes a single iteration row without aggregates, as a
      run without --benchmark_repetitions does.
    scale: multiplies every real/cpu time (a uniform slowdown when > 1).
    record: the record version written (None: DEFAULT_RECORD): 1 with a "key" on every row
      and a typed context, 0 as a file written before the record.
    """
    record = DEFAULT_RECORD if record is None else record
    rng = random.Random(seed)
    rows = []
    for family, case in enumerate(cases):
        n = len(case.values_ms) if case.values_ms is not None else reps
        common = {"family_index": family, "per_family_instance_index": 0,
                  "run_name": case.name}
        if record >= 1:
            common["key"] = dict(case.key if case.key is not None else derived_key(case.name))
        if n > 1:
            common["repetitions"] = n
        iters = []
        for i in range(n):
            row = {"name": case.name, **common, "run_type": "iteration"}
            if n > 1:
                row["repetition_index"] = i
            row["threads"] = 1
            if case.error:
                row.update({"error_occurred": True, "error_message": case.error,
                            "iterations": 1, "real_time": 0.0, "cpu_time": 0.0,
                            "time_unit": case.time_unit})
                rows.append(row)
                continue
            if case.values_ms is not None:
                ms = case.values_ms[i]
            else:
                ms = case.real_ms * max(0.05, rng.gauss(1.0, case.noise_cv))
            ms *= scale
            row.update({"iterations": 100,
                        "real_time": ms * _MS_TO_UNIT[case.time_unit],
                        "cpu_time": ms * case.cpu_ratio * _MS_TO_UNIT[case.time_unit],
                        "time_unit": case.time_unit})
            for k, v in case.counters.items():
                if case.counter_noise_cv > 0 and k not in ("workers", "batch_size"):
                    v = v * rng.gauss(1.0, case.counter_noise_cv)
                row[k] = v
            iters.append(row)
            rows.append(row)
        if n > 1 and aggregates and iters:
            keys = ["real_time", "cpu_time"] + list(case.counters)
            for agg in ("mean", "median", "stddev", "cv"):
                arow = {"name": f"{case.name}_{agg}", **common, "run_type": "aggregate",
                        "threads": 1, "aggregate_name": agg,
                        "aggregate_unit": "percentage" if agg == "cv" else "time",
                        "iterations": n, "time_unit": case.time_unit}
                for k in keys:
                    vals = [r[k] for r in iters]
                    mean = statistics.fmean(vals)
                    sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
                    arow[k] = {"mean": mean, "median": statistics.median(vals),
                               "stddev": sd, "cv": sd / mean if mean else 0.0}[agg]
                rows.append(arow)
    return {"context": _context(context, record), "benchmarks": rows}


def pipeline_cases(recipe="imagenet_train", baseline="emulated", batch=64, compute_ms=25.0,
                   workers=(1, 2, 4), per_sample_ms=None, end_to_end=True, sample=True,
                   counter_noise_cv=0.0):
    """A pipebench-shaped run: BM_Sample, BM_Loader and BM_EndToEnd sweeps, BM_TrainStep,
    each case built from its key (case_key; timed by real time), and the run's context
    (numbers as numbers; make_run writes them as strings in record version 0).

    The loader's images/s scale with workers (per_sample cost / workers); the end-to-end
    step is max(data, compute); bound_ms is that same max, so the prediction is exact.
    """
    stage = dict(per_sample_ms or {"read_ms": 0.2, "decode_ms": 3.0, "transform_ms": 1.5,
                                   "collate_ms": 0.1, "h2d_ms": 0.05})
    sample_ms = sum(stage.values())
    cases = []
    if sample:
        cases.append(Case(None, key=case_key("Sample", pipeline=recipe, timed_by="real_time"),
                          real_ms=sample_ms, counters={
            "read_ms": stage["read_ms"] * 1.1, "decode_ms": stage["decode_ms"] * 0.9,
            "transform_ms": stage["transform_ms"] * 0.95,
            "items_per_second": 1000.0 / sample_ms}, counter_noise_cv=counter_noise_cv))
    for w in workers:
        data_ms = batch * sample_ms / w
        cases.append(Case(None, key=case_key("Loader", pipeline=recipe, workers=w,
                                             timed_by="real_time"), real_ms=data_ms,
                          counters={"workers": w, "data_ms": data_ms,
                                    "items_per_second": batch * 1000.0 / data_ms,
                                    "consumer_wait_ms": data_ms * 0.1, **stage},
                          counter_noise_cv=counter_noise_cv))
    cases.append(Case(None, key=case_key("TrainStep", baseline=baseline, timed_by="real_time"),
                      real_ms=compute_ms,
                      counters={"compute_ms": compute_ms, "compute_gflop": 1.0,
                                "items_per_second": batch * 1000.0 / compute_ms}))
    if end_to_end:
        for w in workers:
            data_ms = batch * sample_ms / w
            bound = max(data_ms, compute_ms)
            step = bound * 1.05
            cases.append(Case(
                None, key=case_key("EndToEnd", pipeline=recipe, baseline=baseline, workers=w,
                                   timed_by="real_time"), real_ms=step,
                counters={"workers": w, "batch_size": batch, "data_ms": data_ms,
                          "compute_ms": compute_ms, "step_ms": step, "bound_ms": bound,
                          "au_pct": 100.0 * compute_ms / step,
                          "stall_pct": 100.0 * (1 - compute_ms / step),
                          "prediction_error_pct": 100.0 * (step - bound) / bound,
                          "items_per_second": batch * 1000.0 / step},
                counter_noise_cv=counter_noise_cv))
    context = {"dataset": "synthetic-fixture", "dataset_images": 16, "recipe": recipe,
               "baseline": baseline, "batch_size": batch, "compute_ms": compute_ms,
               "workers": ",".join(map(str, workers)), "crop_size": 224}
    return cases, context


def record0(test_class):
    """`test_class` again, its fixtures written in record version 0 (files from before the
    record, read through the scripts' legacy adapter): a subclass named <name>Record0 that
    sets DEFAULT_RECORD to 0 for its tests (setUpClass to tearDownClass)."""
    module = sys.modules[__name__]

    class Record0(test_class):
        @classmethod
        def setUpClass(cls):
            cls._saved_record = module.DEFAULT_RECORD
            module.DEFAULT_RECORD = 0
            try:
                super().setUpClass()
            except BaseException:
                module.DEFAULT_RECORD = cls._saved_record
                raise

        @classmethod
        def tearDownClass(cls):
            try:
                super().tearDownClass()
            finally:
                module.DEFAULT_RECORD = cls._saved_record

    Record0.__name__ = Record0.__qualname__ = test_class.__name__ + "Record0"
    Record0.__module__ = test_class.__module__
    Record0.__doc__ = f"{test_class.__name__} on files written before the record (version 0)."
    return Record0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--noise", type=float, default=0.01)
    ap.add_argument("--no-end-to-end", action="store_true")
    ap.add_argument("--record", type=int, choices=(0, 1), default=DEFAULT_RECORD,
                    help="record version: 1 (key on every row, typed context) or 0 (before "
                         "the record)")
    a = ap.parse_args()
    cases, ctx = pipeline_cases(end_to_end=not a.no_end_to_end)
    for c in cases:
        c.noise_cv = a.noise
    with open(a.out, "w") as f:
        json.dump(make_run(cases, reps=a.reps, seed=a.seed, scale=a.scale, context=ctx,
                           record=a.record), f, indent=2)


if __name__ == "__main__":
    main()
