#!/usr/bin/python3
"""gen_bench_json.py - writes Google Benchmark 1.7.1-shaped JSON runs for the script tests.

The rows mirror what libbenchmark 1.7.1's JSON reporter writes (checked against a real
run): iteration rows with run_name, run_type "iteration", repetitions, repetition_index,
real_time/cpu_time/time_unit and the user counters; with repetitions > 1 the aggregate
rows <name>_mean, _median, _stddev, _cv (run_type "aggregate", aggregate_name,
aggregate_unit); errored cases carry error_occurred/error_message and zero times.

Used as a module (make_run, Case) by the tests, or from the command line:
  gen_bench_json.py OUT.json [--reps N] [--seed S] [--scale F] [--noise CV]
"""

import argparse
import json
import random
import statistics


class Case:
    """One benchmark case.

    name: full case name (e.g. "BM_Transform/resize/real_time").
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
                 error=None, time_unit="ms", cpu_ratio=0.9, counter_noise_cv=0.0):
        self.name = name
        self.real_ms = real_ms
        self.noise_cv = noise_cv
        self.counters = dict(counters or {})
        self.values_ms = list(values_ms) if values_ms is not None else None
        self.error = error
        self.time_unit = time_unit
        self.cpu_ratio = cpu_ratio
        self.counter_noise_cv = counter_noise_cv


_MS_TO_UNIT = {"ns": 1e6, "us": 1e3, "ms": 1.0, "s": 1e-3}


def _context(extra):
    ctx = {
        "date": "2024-01-01T00:00:00+00:00", "host_name": "fixture", "executable": "pipebench",
        "num_cpus": 2, "mhz_per_cpu": 2445, "cpu_scaling_enabled": False,
        "caches": [], "load_avg": [0.1, 0.1, 0.1], "library_build_type": "release",
    }
    ctx.update(extra or {})
    return ctx


def make_run(cases, reps=9, seed=0, scale=1.0, context=None, aggregates=True):
    """Returns a Google Benchmark JSON document (a dict) for `cases`.

    reps: repetitions per case; 1 writes a single iteration row without aggregates, as a
      run without --benchmark_repetitions does.
    scale: multiplies every real/cpu time (a uniform slowdown when > 1).
    """
    rng = random.Random(seed)
    rows = []
    for family, case in enumerate(cases):
        n = len(case.values_ms) if case.values_ms is not None else reps
        common = {"family_index": family, "per_family_instance_index": 0,
                  "run_name": case.name}
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
    return {"context": _context(context), "benchmarks": rows}


def pipeline_cases(recipe="imagenet_train", baseline="emulated", batch=64, compute_ms=25.0,
                   workers=(1, 2, 4), per_sample_ms=None, end_to_end=True, sample=True,
                   counter_noise_cv=0.0):
    """A pipebench-shaped run: BM_Sample, BM_Loader and BM_EndToEnd sweeps, BM_TrainStep.

    The loader's images/s scale with workers (per_sample cost / workers); the end-to-end
    step is max(data, compute); bound_ms is that same max, so the prediction is exact.
    """
    stage = dict(per_sample_ms or {"read_ms": 0.2, "decode_ms": 3.0, "transform_ms": 1.5,
                                   "collate_ms": 0.1, "h2d_ms": 0.05})
    sample_ms = sum(stage.values())
    cases = []
    if sample:
        cases.append(Case(f"BM_Sample/{recipe}/real_time", real_ms=sample_ms, counters={
            "read_ms": stage["read_ms"] * 1.1, "decode_ms": stage["decode_ms"] * 0.9,
            "transform_ms": stage["transform_ms"] * 0.95,
            "items_per_second": 1000.0 / sample_ms}, counter_noise_cv=counter_noise_cv))
    for w in workers:
        data_ms = batch * sample_ms / w
        cases.append(Case(f"BM_Loader/{recipe}/workers:{w}/real_time", real_ms=data_ms,
                          counters={"workers": w, "data_ms": data_ms,
                                    "items_per_second": batch * 1000.0 / data_ms,
                                    "consumer_wait_ms": data_ms * 0.1, **stage},
                          counter_noise_cv=counter_noise_cv))
    cases.append(Case(f"BM_TrainStep/{baseline}/real_time", real_ms=compute_ms,
                      counters={"compute_ms": compute_ms, "compute_gflop": 1.0,
                                "items_per_second": batch * 1000.0 / compute_ms}))
    if end_to_end:
        for w in workers:
            data_ms = batch * sample_ms / w
            bound = max(data_ms, compute_ms)
            step = bound * 1.05
            cases.append(Case(
                f"BM_EndToEnd/{recipe}/{baseline}/workers:{w}/real_time", real_ms=step,
                counters={"workers": w, "batch_size": batch, "data_ms": data_ms,
                          "compute_ms": compute_ms, "step_ms": step, "bound_ms": bound,
                          "au_pct": 100.0 * compute_ms / step,
                          "stall_pct": 100.0 * (1 - compute_ms / step),
                          "prediction_error_pct": 100.0 * (step - bound) / bound,
                          "items_per_second": batch * 1000.0 / step},
                counter_noise_cv=counter_noise_cv))
    context = {"dataset": "synthetic-fixture", "dataset_images": 16, "recipe": recipe,
               "baseline": baseline, "batch_size": str(batch), "compute_ms": str(compute_ms),
               "workers": ",".join(map(str, workers)), "crop_size": "224"}
    return cases, context


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--noise", type=float, default=0.01)
    ap.add_argument("--no-end-to-end", action="store_true")
    a = ap.parse_args()
    cases, ctx = pipeline_cases(end_to_end=not a.no_end_to_end)
    for c in cases:
        c.noise_cv = a.noise
    with open(a.out, "w") as f:
        json.dump(make_run(cases, reps=a.reps, seed=a.seed, scale=a.scale, context=ctx), f,
                  indent=2)


if __name__ == "__main__":
    main()
