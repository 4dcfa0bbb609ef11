#!/usr/bin/python3
"""Checks a pipebench run against the JSON contract of bench/README.md.

usage: check_run_json.py RUN.json [TRACE.json]
Exits 1 naming every broken promise: a missing context field, a stage family without a
case, a case without its counters, a counter the counter schema does not hold
(model/counters.h, as docs/counters.md's generated tables list it), an H2D case neither
measured nor skipped with a reason, or a trace without the loader's spans.
"""
import json
import math
import os
import re
import sys

RECORD_VERSION = 2  # model/constants.h kRecordVersion
# Google Benchmark's own numeric row fields that are not counters.
ROW_FIELDS = {"family_index", "per_family_instance_index", "repetitions", "repetition_index",
              "threads"}
COUNTERS_MD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                           "counters.md")

CONTEXT = ["pipebench_version", "opencv_version", "libjpeg_turbo_version", "tbb_version",
           "cuda_runtime", "gpu", "dataset", "dataset_images", "dataset_fingerprint", "recipe",
           "batch_size", "crop_size", "seed", "baseline", "compute_ms", "workers"]
FAMILIES = ["BM_Read/", "BM_Decode/", "BM_Transform/", "BM_Sample/", "BM_Collate/", "BM_H2D/",
            "BM_Loader/", "BM_TrainStep/", "BM_EndToEnd/"]
COUNTERS = {
    "BM_Decode/": ["items_per_second", "bytes_per_second", "source_megapixels_per_second",
                   "us_per_image", "images_per_round"],
    "BM_Sample/": ["items_per_second", "decode_ms", "transform_ms", "read_ms", "us_per_image"],
    "BM_Loader/": ["items_per_second", "workers", "data_ms", "read_ms", "decode_ms",
                   "transform_ms", "sample_cpu_ms", "process_cpu_ms", "cpu_cores_used"],
    "BM_TrainStep/": ["compute_ms"],
    # The paired cases (bench/cases/sample_bench.cpp): the what-if candidates, presized:N, the
    # declared variants, the case study's pair and the A/A control, keyed by their record
    # key (a Sample with a variant), not by the prefix.
    "paired": ["items_per_second", "us_per_image", "paired_today_us", "paired_saving_ms",
               "paired_blocks"],
    "BM_EndToEnd/": ["items_per_second", "workers", "data_ms", "compute_ms", "step_ms",
                     "bound_ms", "au_pct", "stall_pct", "prediction_error_pct", "data_drift_pct",
                     "loop_cpu_drift_pct"],
}


def schema_patterns(counters_md_text):
    """The counter schema's names as regular expressions, from docs/counters.md's generated
    tables (a pattern's "{}" is any non-empty part)."""
    begin = counters_md_text.index("<!-- counters:begin")
    end = counters_md_text.index("<!-- counters:end -->")
    names = re.findall(r"^\| `([^`]+)` \|", counters_md_text[begin:end], re.M)
    return [re.compile("^" + ".+".join(re.escape(p) for p in n.split("{}")) + "$") for n in names]


def schema_problems(rows, counters_md_text):
    """Every numeric field of every row is a schema counter (or Google Benchmark's own)."""
    patterns = schema_patterns(counters_md_text)
    problems = set()
    for r in rows:
        for field, v in r.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or field in ROW_FIELDS:
                continue
            if not any(p.match(field) for p in patterns):
                problems.add(f"{r['name']}: counter {field} is not in the counter schema "
                             "(model/counters.h)")
    return sorted(problems)


def is_paired(row):
    """A paired what-if candidate or the A/A control (the run record's key)."""
    key = row.get("key", {})
    return key.get("family") == "Sample" and key.get("variant", "") != ""


def check_per_image(run, ctx, rows):
    """bench/run/per_image.h: every round case that ran has a cost for each image of its round,
    and the round cases visited the same images (so their ratios compare like with like)."""
    problems = []
    per = run.get("per_image")
    images = int(ctx.get("dataset_images", "0"))
    if images > 5000:
        return [] if per is None else ["per_image written for a dataset over 5000 images"]
    if per is None:
        return ["no per_image section"]
    if per.get("images") != images or len(per.get("files", [])) != images:
        problems.append(f"per_image: {per.get('images')} images, {len(per.get('files', []))} files, "
                        f"context says {images}")
    cases = per.get("cases", {})
    indices = {}
    for r in rows:
        case = r.get("run_name", r["name"]).split("/real_time")[0]
        if not case.startswith(("BM_Read/", "BM_Decode/", "BM_Sample/")) or r.get("error_occurred"):
            continue
        if is_paired(r):
            continue  # A B B A over blocks: no per-image costs
        if "/presized:" in case:
            continue  # measured on the presized copy, whose indices are its own
        entry = cases.get(case)
        if entry is None:
            problems.append(f"per_image has no case {case}")
            continue
        n = len(entry["index"])
        want = r.get("images_per_round")
        skipped = str(ctx.get("skipped_files_total", 0)) != "0"  # bad files leave the round
        if not (n == len(entry["us"]) == len(entry["visits"]) and
                (0 < n <= want if skipped else n == want)):
            problems.append(f"per_image {case}: {n} indices for a round of {r.get('images_per_round')}")
        if any(u <= 0 for u in entry["us"]) or any(v <= 0 for v in entry["visits"]):
            problems.append(f"per_image {case}: a cost or visit count <= 0")
        indices[case] = entry["index"]
    if len({tuple(v) for v in indices.values()}) > 1:
        problems.append("per_image: the round cases visited different images")
    return problems


def main(argv):
    problems = []
    with open(argv[1]) as f:
        run = json.load(f)
    ctx = run.get("context", {})
    problems += [f"context has no {k}" for k in CONTEXT if k not in ctx]
    if ctx.get("pipebench_record") != RECORD_VERSION:
        problems.append(f"context pipebench_record is {ctx.get('pipebench_record')!r}, not {RECORD_VERSION}")
    rows = [r for r in run.get("benchmarks", []) if r.get("run_type", "iteration") == "iteration"]
    has_gpu = not ctx.get("gpu", "none").startswith("none")
    for fam in FAMILIES:
        if fam == "BM_H2D/" and not has_gpu:
            continue  # registered only where a CUDA device exists
        if not any(r["name"].startswith(fam) for r in rows):
            problems.append(f"no {fam} case")
    for r in rows:
        name = r["name"]
        if r.get("error_occurred"):
            msg = r.get("error_message", "")
            # Only the CUDA cases may be skipped, and only with a reason.
            cuda_case = name.startswith("BM_H2D/") or "/pinned/" in name
            if not (cuda_case and "CUDA" in msg):
                problems.append(f"{name} failed: {msg}")
            continue
        for fam, counters in COUNTERS.items():
            if (fam == "paired") == is_paired(r) and (fam == "paired" or name.startswith(fam)):
                problems += [f"{name} has no counter {c}" for c in counters if c not in r]
        # The run record (model/record.h): every row's key, named as the row's case.
        key = r.get("key")
        if not isinstance(key, dict) or not r.get("run_name", name).startswith(key.get("name", "\0")):
            problems.append(f"{name} has no record key naming it")
        if not re.match(r"BM_[A-Za-z0-9]+/", name):
            problems.append(f"{name} does not follow BM_<Stage>/<variant>")
    for r in rows:
        # bound_ms is the step model's prediction (model/step_model.h): the per-sample costs
        # replayed through the loader, the callbacks on the loop's thread. It equals
        # max(loop data, compute) for uniform costs and no callbacks and is never below it
        # (each step holds a compute, and the loader's rate is scaled to the measured
        # data_ms times the workers' CPU per sample in the loop over alone,
        # 1 + loop_cpu_drift_pct / 100: model/bound.h predict_from_costs), but for the
        # simulation's own noise: 2 %.
        if r["name"].startswith("BM_EndToEnd/") and not r.get("error_occurred"):
            factor = 1 + r.get("loop_cpu_drift_pct", 0) / 100 if "samples_timed" in r else 1
            floor = max(r["data_ms"] * factor, r["compute_ms"])
            if not (math.isfinite(r["bound_ms"]) and r["bound_ms"] >= 0.98 * floor):
                problems.append(f"{r['name']}: bound_ms {r['bound_ms']} is below max(data x "
                                f"loop factor {factor:.3f}, compute) {floor}")
    problems += check_per_image(run, ctx, rows)
    with open(COUNTERS_MD) as f:
        problems += schema_problems(run.get("benchmarks", []), f.read())
    if len(argv) > 2:
        with open(argv[2]) as f:
            trace = json.load(f)
        names = {e.get("name") for e in trace.get("traceEvents", []) if e.get("ph") == "X"}
        for want in ["read", "decode", "transform", "wait", "submit_step", "train_step"]:
            if want not in names:
                problems.append(f"trace has no '{want}' span")
        # Each loader / end-to-end case is marked by a span named after it.
        for r in rows:
            case = r.get("run_name", r["name"]).split("/iterations:")[0].split("/real_time")[0]
            if case.startswith(("BM_Loader/", "BM_EndToEnd/")) and case not in names:
                problems.append(f"trace has no span marking case {case}")
    for p in problems:
        print(f"check_run_json: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"check_run_json: {argv[1]}: {len(rows)} cases follow the contract")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
