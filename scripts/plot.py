#!/usr/bin/python3
"""plot.py - one picture of a pipebench run: the worker sweep and the per-sample cost.

  /usr/bin/python3 scripts/plot.py RUN.json OUT.png [--report REPORT.json]

RUN.json is pipebench's Google Benchmark JSON (--benchmark_out=RUN.json
--benchmark_out_format=json; bench/README.md lists the cases and counters).

The cases are chosen by the fields of each row's case key (pbgate.record.case_key: the
record's "key", or for a file written before the record the legacy adapter), never by
reading a case name.

Left panel, the worker sweep (x: loader workers, the key's workers, log2 scale):
  - measured end to end, images/s: items_per_second of the EndToEnd cases of today's
    pipeline (key variant "" and callbacks ""), one curve per (pipeline, baseline)
  - loader alone, images/s: items_per_second of the Loader cases outside the storage
    study (key layout ""), one curve per pipeline
  - predicted bound, images/s: batch_size * 1000 / bound_ms of the EndToEnd cases
  - training step capacity, images/s (horizontal line): batch_size * 1000 / compute_ms
    (compute_ms from the EndToEnd cases, else the TrainStep case of the run's baseline
    (any TrainStep case when none has it), else the run context)
  - AU % (accelerator utilisation, au_pct of BM_EndToEnd) on the right-hand axis.
Right panel, what one sample costs, ms, stacked by stage: the per-sample counters read_ms,
decode_ms, transform_ms, collate_ms, batch_ops_ms, h2d_ms of BM_Loader at its smallest worker count, and
beside it BM_Sample's read_ms, decode_ms, transform_ms (one thread, no loader) if present:
the Sample case of the run's pipeline (context recipe) with key variant "", not a what-if
candidate.

With --report (the output of `pipebench-report --json RUN.json`, whose what-if table the
report library computes), a third panel: each row of the what-if table (at the table's
worker count) as a bar of its predicted data ms per batch (data_ms_per_batch), against the
training step, compute_ms_per_batch (vertical line), each bar annotated with the cores
(workers) its CPU cost needs for AU >= 90 % (workers_for_au_target). Data-bound, a bar
past the line keeps the accelerator waiting; compute-bound, every bar is within it and the
data ms and the cores needed are what tells the candidates apart (images/s would all read
the step's capacity). A paired row (measured A B B A against today in one case) has an
error bar: its saving_ci95_ms_per_sample scaled per batch as the report scales the cost
(x batch / workers x the loader overhead: the row's data_ms_per_batch / cpu_ms_per_sample);
a row within_noise (its interval holds 0) is hatched grey and annotated "noise"; the A/A
control (kind "control") is hatched too and must read noise (annotated in red when not).
The table's note / control_note lines are written in the panel.

With the run's "system_series" section (bench/run/system_series.h: the system sampler's series
per case at its rate_hz, pipebench's --system-sample-hz; keyed by the registered case
name, the key's "name"), a bottom panel: CPU cores busy
over time during each BM_EndToEnd sweep case, pipebench's own (solid), all processes'
(dotted) and of those the cores in the kernel (dash-dot, where the series has
cpu_system_cores), x = seconds since the case's
first sample, against the cores available (dashed); GPU utilisation % on the right-hand axis
where the series has it (NVML). A run without the section has no such panel.

Values are repetition means: the "mean" aggregate row when the run has repetitions, else
the mean of the iteration rows. Errored cases (error_occurred) are left out and listed.
What the run lacks is written in the figure; a run with none of these families gets a
bar chart of every case's time instead. Malformed input: one line on stderr, exit 2.
"""

import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pbgate.record import (BadInput, case_key, case_name, context, context_number,  # noqa: E402
                           is_aggregate, load_run)

EXIT_OK = 0
EXIT_BAD_INPUT = 2

STAGES = ("read_ms", "decode_ms", "transform_ms", "collate_ms", "batch_ops_ms", "h2d_ms")
STAGE_COLORS = {"read_ms": "#8c8c8c", "decode_ms": "#d62728", "transform_ms": "#ff7f0e",
                "collate_ms": "#2ca02c", "batch_ops_ms": "#9467bd", "h2d_ms": "#1f77b4"}

_NOT_VALUES = {"name", "run_name", "run_type", "aggregate_name", "aggregate_unit",
               "time_unit", "label", "family_index", "per_family_instance_index",
               "repetitions", "repetition_index", "threads", "iterations", "error_occurred",
               "error_message", "key"}


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def case_means(data):
    """{case: {field: mean value}} over repetitions, the sorted errored case names, and
    {case: its key (pbgate.record.case_key)}."""
    iters, means, errored = {}, {}, set()
    for row in data["benchmarks"]:
        name = case_name(row)
        if row.get("error_occurred"):
            errored.add(name)
        elif is_aggregate(row):
            if row.get("aggregate_name") == "mean":
                means[name] = row
        else:
            iters.setdefault(name, []).append(row)
    out = {}
    for name in list(iters) + [n for n in means if n not in iters]:
        rows = [means[name]] if name in means else iters[name]
        fields = {}
        for key in rows[0]:
            if key in _NOT_VALUES:
                continue
            vals = [r.get(key) for r in rows]
            if all(_number(v) for v in vals):
                fields[key] = statistics.fmean(vals)
        fields["time_unit"] = rows[0].get("time_unit", "ns")
        out[name] = fields
    keys = {name: case_key(means[name] if name in means else iters[name][0]) for name in out}
    return out, sorted(errored - set(out)), keys


def _ctx_positive(ctx, key):
    """A context number (pbgate.record.context_number) when it is > 0, else None."""
    v = context_number(ctx, key)
    return v if v is not None and v > 0 else None


def is_sweep_case(key):
    """An end-to-end point of the worker sweep: today's pipeline (no what-if variant), the
    plain loop (no training-extras callbacks)."""
    return key["family"] == "EndToEnd" and key["variant"] == "" and key["callbacks"] == ""


def extract(data):
    """Everything the figure shows, as plain numbers (tested on its own).

    Returns a dict:
      sweeps: {(recipe, baseline): [{workers, measured_ips, bound_ips, au_pct}]} by workers
      loader: {recipe: [{workers, ips}]} by workers
      compute_ips: images/s the training step can consume, or None
      loader_stages: (label, {stage: ms per sample}) or None
      sample_stages: (label, {stage: ms per sample}) or None
      errored: [case names]; context: the run context; cases: {case: fields};
      keys: {case: its key (pbgate.record.case_key)}
      system_series: {case: {workers, t_s, cpu_busy_cores, pipebench_cores[,
        cpu_system_cores, gpu_util_pct]}} of the BM_EndToEnd sweep cases, from the run's
        "system_series" section ({} without it)
      system_rate_hz: the section's rate_hz, samples/s, or None
    """
    ctx = context(data)
    cases, errored, keys = case_means(data)
    sweeps, loader, samples = {}, {}, {}
    compute_ms, batch_sizes, train_compute_ms = [], [], {}
    for name, f in cases.items():
        key = keys[name]
        family = key["family"]
        if is_sweep_case(key):
            batch = f.get("batch_size") or _ctx_positive(ctx, "batch_size")
            bound = f.get("bound_ms")
            sweeps.setdefault((key["pipeline"], key["baseline"]), []).append({
                "workers": key["workers"], "measured_ips": f.get("items_per_second"),
                "bound_ips": batch * 1000.0 / bound if batch and bound else None,
                "au_pct": f.get("au_pct")})
            if f.get("compute_ms"):
                compute_ms.append(f["compute_ms"])
            if batch:
                batch_sizes.append(batch)
        elif family == "Loader" and key["layout"] == "" and key["shards"] == 0:
            loader.setdefault(key["pipeline"], []).append(
                {"workers": key["workers"], "ips": f.get("items_per_second"), "fields": f})
        elif family == "Sample" and key["variant"] == "":
            # The pipeline's own sample, not a what-if candidate (presized:256, ...).
            samples[key["pipeline"]] = f
        elif family == "TrainStep" and f.get("compute_ms"):
            train_compute_ms.setdefault(key["baseline"], []).append(f["compute_ms"])
    for rows in list(sweeps.values()) + list(loader.values()):
        rows.sort(key=lambda r: r["workers"])

    batch = statistics.fmean(batch_sizes) if batch_sizes else _ctx_positive(ctx, "batch_size")
    # The training step of the run's baseline; any TrainStep case when none is of it.
    baseline = ctx.get("baseline")
    train = (train_compute_ms.get(baseline) if isinstance(baseline, str) else None) or \
        [ms for values in train_compute_ms.values() for ms in values]
    step_ms = (statistics.fmean(compute_ms) if compute_ms else
               statistics.fmean(train) if train else
               _ctx_positive(ctx, "compute_ms"))
    compute_ips = batch * 1000.0 / step_ms if batch and step_ms else None

    loader_stages = None
    recipe = ctx.get("recipe") if ctx.get("recipe") in loader else next(iter(loader), None)
    if recipe is not None:
        first = loader[recipe][0]
        stages = {s: first["fields"][s] for s in STAGES if s in first["fields"]}
        if stages:
            loader_stages = (f"BM_Loader\nworkers:{first['workers']}", stages)
    sample_stages = None
    srecipe = ctx.get("recipe") if ctx.get("recipe") in samples else next(iter(samples), None)
    if srecipe is not None:
        stages = {s: samples[srecipe][s] for s in STAGES if s in samples[srecipe]}
        if stages:
            sample_stages = ("BM_Sample\n1 thread, no loader", stages)
    return {"sweeps": sweeps, "loader": loader, "compute_ips": compute_ips,
            "compute_ms": step_ms, "batch_size": batch, "loader_stages": loader_stages,
            "sample_stages": sample_stages, "errored": errored, "context": ctx,
            "cases": cases, "keys": keys, "system_series": system_series(data, cases, keys),
            "system_rate_hz": system_rate_hz(data)}


def system_rate_hz(data):
    """The system sampler's rate (samples/s) the "system_series" section states, or None."""
    section = data.get("system_series")
    rate = section.get("rate_hz") if isinstance(section, dict) else None
    return rate if _number(rate) and rate > 0 else None


def system_series(data, cases, keys):
    """The end-to-end sweep cases' series from the "system_series" section, each with the
    case's workers; a series whose lists are not numbers of one length is left out
    (BadInput would cost the whole figure). The section names a case as registered: the
    key's "name" (its rows' names add Google Benchmark's settings)."""
    section = data.get("system_series")
    if not isinstance(section, dict) or not isinstance(section.get("cases"), dict):
        return {}
    registered = {}
    for case in cases:
        registered.setdefault(keys[case]["name"], keys[case])
    out = {}
    for name, series in section["cases"].items():
        key = registered.get(name)
        if key is None or not is_sweep_case(key) or not isinstance(series, dict):
            continue
        names = [k for k in ("t_s", "cpu_busy_cores", "cpu_system_cores", "pipebench_cores",
                             "gpu_util_pct") if k in series]
        cols = [series[k] for k in names]
        if "t_s" not in names or "pipebench_cores" not in names or \
                not all(isinstance(c, list) and all(_number(v) for v in c) for c in cols) or \
                len({len(c) for c in cols}) != 1 or not cols[0]:
            continue
        out[name] = {"workers": key["workers"], **dict(zip(names, cols))}
    return out


def _note(ax, text):
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=10,
            color="#555555", wrap=True,
            bbox={"boxstyle": "round", "facecolor": "#f4f4f4", "edgecolor": "#cccccc"})


def _plot_sweep(ax, ex):
    sweeps, loader = ex["sweeps"], ex["loader"]
    missing = []
    workers = sorted({r["workers"] for rows in list(sweeps.values()) + list(loader.values())
                      for r in rows})
    if not workers:
        ax.set_axis_off()
        _note(ax, "No BM_Loader or BM_EndToEnd cases in this run:\nno worker sweep to show.")
        return
    many = len(sweeps) > 1
    colors = iter(["#1f77b4", "#9467bd", "#17becf", "#e377c2"])
    for (recipe, baseline), rows in sweeps.items():
        c = next(colors, "#1f77b4")
        tag = f" ({recipe}, {baseline})" if many else ""
        pts = [(r["workers"], r["measured_ips"]) for r in rows if r["measured_ips"]]
        if pts:
            ax.plot(*zip(*pts), "o-", color=c, lw=2.2, ms=6, label=f"measured end to end{tag}")
        pts = [(r["workers"], r["bound_ips"]) for r in rows if r["bound_ips"]]
        if pts:
            ax.plot(*zip(*pts), "s--", color=c, lw=1.5, ms=5, alpha=0.8,
                    label=f"predicted bound{tag}")
    for recipe, rows in loader.items():
        pts = [(r["workers"], r["ips"]) for r in rows if r["ips"]]
        if pts:
            tag = f" ({recipe})" if len(loader) > 1 else ""
            ax.plot(*zip(*pts), "^-", color="#2ca02c", lw=1.8, ms=6, label=f"loader alone{tag}")
    if ex["compute_ips"]:
        ax.axhline(ex["compute_ips"], color="#d62728", ls=":", lw=2,
                   label=f"training step capacity: {ex['compute_ips']:.0f} images/s "
                         f"({ex['compute_ms']:.3g} ms per batch of {ex['batch_size']:g})")
    if not sweeps:
        missing.append("no BM_EndToEnd cases: measured end to end, bound and AU % not shown")
    if not loader:
        missing.append("no BM_Loader cases: loader-alone curve not shown")
    ax.set_xscale("log", base=2)
    ax.set_xticks(workers)
    ax.set_xticklabels([str(w) for w in workers])
    ax.set_xlabel("loader workers (threads)")
    ys = [v for line in ax.get_lines() for v in line.get_ydata() if _number(v) and v > 0]
    if ys and max(ys) / min(ys) > 10:
        # 31 against 2530 images/s is unreadable on a linear axis: log when > 10x apart.
        ax.set_yscale("log")
        ax.set_ylim(min(ys) / 1.5, max(ys) * 1.5)
        ax.set_ylabel("throughput (images/s, log scale)")
    else:
        ax.set_ylim(0, 1.2 * max(ys) if ys else 1)
        ax.set_ylabel("throughput (images/s)")
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title("Worker sweep: throughput against workers")
    handles, labels = ax.get_legend_handles_labels()
    au = [(r["workers"], r["au_pct"]) for rows in sweeps.values() for r in rows
          if r["au_pct"] is not None]
    if au:
        ax2 = ax.twinx()
        ax2.plot(*zip(*sorted(au)), "D-.", color="#8c564b", lw=1.6, ms=5,
                 label="AU % (right axis)")
        ax2.set_ylabel("accelerator utilisation AU (%)")
        ax2.set_ylim(0, 105)
        h2, l2 = ax2.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    if handles:
        ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3,
                  fontsize=9, frameon=False)
    if missing:
        ax.text(0.02, 0.97, "\n".join(missing), transform=ax.transAxes, va="top", fontsize=8.5,
                color="#a00000", bbox={"facecolor": "white", "edgecolor": "#e0b0b0"})


def _plot_stages(ax, ex):
    bars = [b for b in (ex["loader_stages"], ex["sample_stages"]) if b]
    if not bars:
        ax.set_axis_off()
        _note(ax, "No per-sample stage counters in this run\n(BM_Loader or BM_Sample "
                  "read_ms/decode_ms/...):\nno stage breakdown to show.")
        return
    x = list(range(len(bars)))
    tops = [0.0] * len(bars)
    totals = [sum(b[1].values()) for b in bars]
    for stage in STAGES:
        vals = [b[1].get(stage, 0.0) for b in bars]
        if not any(b[1].get(stage) is not None for b in bars):
            continue
        ax.bar(x, vals, bottom=tops, width=0.55, color=STAGE_COLORS[stage],
               label=stage[:-3], edgecolor="white")
        for i, v in enumerate(vals):
            if v > 0.06 * max(totals):
                ax.text(i, tops[i] + v / 2, f"{v:.3g}", ha="center", va="center", fontsize=8.5,
                        color="white", fontweight="bold")
        tops = [t + v for t, v in zip(tops, vals)]
    for i, t in enumerate(tops):
        ax.text(i, t, f"{t:.3g} ms", ha="center", va="bottom", fontsize=9.5, fontweight="bold")
    ax.set_xticks(x)
    ax.set_xticklabels([b[0] for b in bars], fontsize=9)
    ax.set_xlim(-0.7, len(bars) - 0.3 + (0.9 if len(bars) == 1 else 0.6))
    ax.set_ylim(0, max(tops) * 1.15 if max(tops) > 0 else 1)
    ax.set_ylabel("time per sample (ms)")
    ax.set_title("Cost of one sample by stage")
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], labels[::-1], loc="upper right", fontsize=8.5, title="stage",
              title_fontsize=8.5)
    ax.grid(True, axis="y", alpha=0.3)
    if not ex["sample_stages"]:
        ax.text(0.02, 0.98, "no BM_Sample case in this run", transform=ax.transAxes, va="top",
                fontsize=8.5, color="#a00000")


def _plot_all_cases(ax, ex):
    """Fallback: every case's mean real time, when the run has no pipeline families."""
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    items = [(n, f["real_time"] * scale.get(f["time_unit"], float("nan")))
             for n, f in ex["cases"].items() if "real_time" in f]
    items = items[:40]
    y = list(range(len(items)))
    ax.barh(y, [v for _, v in items], color="#1f77b4")
    ax.set_yticks(y)
    ax.set_yticklabels([n for n, _ in items], fontsize=8)
    ax.invert_yaxis()
    vals = [v for _, v in items if v > 0]
    log = bool(vals) and max(vals) / min(vals) > 50
    if log:
        ax.set_xscale("log")
    ax.set_xlabel("real time per iteration (ms" + (", log scale)" if log else ")"))
    ax.set_title("Cases in this run (no BM_Loader, BM_EndToEnd or BM_Sample cases: "
                 "no sweep or stage breakdown)", fontsize=10)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    for i, (_, v) in enumerate(items):
        ax.text(v, i, f" {v:.3g} ms", va="center", fontsize=8)


def _finite(v):
    return float(v) if _number(v) else None


# The what-if panel's style by row kind (the report's "kind": report/format_whatif.cpp).
WHATIF_COLORS = {"today": "#7f7f7f", "workers": "#2ca02c", "fix": "#1f77b4",
                 "operator_cost": "#ff7f0e", "peer_loader": "#9467bd", "storage": "#8c564b",
                 "control": "#d9d9d9"}
NOISE_COLOR = "#d9d9d9"
PIXELS_COLOR = "#a00000"  # the outline of a fix that changes the pixels the model sees


def _whatif_label(row):
    """The row's name on the panel, as the report's text table names it."""
    kind = row.get("kind")
    label = str(row.get("candidate", "?"))
    if kind == "control":
        return "A/A control"
    kept = row.get("kept_resolution")
    if isinstance(kept, dict) and _finite(kept.get("shorter_side_px")):
        label = f"presize to {kept['shorter_side_px']:g} px"
    if kind == "workers" and _finite(row.get("workers")):
        label += f" ({row['workers']:g})"
    if kind == "operator_cost":
        label += " (price)"
    return label


def _pixels(row):
    """What a what-if row does to the pixels the model sees (issue 35; the report's row
    "fidelity": null when not measured): "changed" (PSNR median / p5 in dB over the samples
    not identical), "identical", "unmeasured" (a fix or device row without a figure), or
    None (a row that is no fix: today, workers, an operator's price, a peer, storage)."""
    kind = row.get("kind")
    if kind not in ("fix", "device", "control"):
        return None
    fid = row.get("fidelity")
    if not isinstance(fid, dict):
        return "unmeasured" if kind != "control" else None
    if fid.get("identical") is True:
        return "identical"
    psnr = fid.get("psnr_db")
    if isinstance(psnr, dict) and _finite(psnr.get("median")) is not None \
            and _finite(psnr.get("p5")) is not None:
        return "changed"
    return "unmeasured"


def whatif_panel(report):
    """What the what-if panel draws, as plain numbers (tested on its own).

    Returns None when the report has no what-if table, else a dict:
      rows: in the table's order, each {label, kind, candidate, data_ms (data ms per batch,
        the report's data_ms_per_batch), err_ms (the paired saving's 95 % interval per
        batch, or None), cores (workers_for_au_target: the cores (workers) the candidate's
        CPU cost needs for AU >= the target; None for a measured row), noise (a paired row
        whose interval holds 0: within_noise), control (the A/A control), pixels (_pixels:
        "changed", "identical", "unmeasured" or None), annotation}
      step_ms: the training step, compute ms per batch (the table's compute_ms_per_batch)
      compute_bound: today's data ms per batch within the step (None when unknown)
      workers, au_target_pct, cores_available, batch_size: the table's
      notes: the table's note / control_note lines

    The interval is per sample (saving_ci95_ms_per_sample); per batch it is scaled as the
    report scales the CPU cost into data_ms_per_batch (report/whatif.cpp price()): x batch
    / min(workers, cores) x the loader overhead k, i.e. the row's own data_ms_per_batch /
    cpu_ms_per_sample.
    """
    table = report.get("what_if") if isinstance(report, dict) else None
    if not isinstance(table, dict):
        return None
    batch = _finite(table.get("batch_size"))
    cores = _finite(table.get("cores_available"))
    overhead = _finite(table.get("loader_overhead")) or 1.0
    target = _finite(table.get("au_target_pct")) or 90.0
    step = _finite(table.get("compute_ms_per_batch"))
    rows = []
    raw_rows = table.get("rows") if isinstance(table.get("rows"), list) else []
    for row in raw_rows:
        if not isinstance(row, dict):
            continue
        data = _finite(row.get("data_ms_per_batch"))
        if data is None:
            continue
        kind = str(row.get("kind", ""))
        cpu = _finite(row.get("cpu_ms_per_sample"))
        workers = _finite(row.get("workers"))
        if cpu:
            per_batch = data / cpu
        elif batch and workers:
            parallel = min(workers, cores) if cores else workers
            per_batch = overhead * batch / parallel
        else:
            per_batch = None
        ci = _finite(row.get("saving_ci95_ms_per_sample"))
        err = ci * per_batch if ci is not None and per_batch is not None else None
        paired = bool(_finite(row.get("paired_blocks"))) or "within_noise" in row
        noise = paired and row.get("within_noise") is not False
        cores_needed = _finite(row.get("workers_for_au_target"))
        text = f"{data:.3g} ms"
        if err is not None:
            text += f" \u00b1{err:.2g}"
        if cores_needed is not None:
            text += f" | AU {target:g} %: {cores_needed:g} core{'s' if cores_needed != 1 else ''}"
        elif kind in ("peer_loader", "storage"):
            text += " | measured"
        if kind == "workers" and row.get("exceeds_cores_available"):
            text += " (> cores)"
        pixels = _pixels(row)
        if pixels == "changed":
            psnr = row["fidelity"]["psnr_db"]
            text += f" | pixels: PSNR {psnr['median']:.3g} / {psnr['p5']:.3g} dB"
            if row.get("below_min_psnr"):
                text += " < --min-psnr"
        elif pixels == "identical" and kind != "control":
            text += " | same pixels"
        elif pixels == "unmeasured":
            text += " | pixels: not measured"
        if kind == "control":
            text += " | noise (as it must)" if noise else " | NOT noise: too noisy"
        elif noise:
            text += " | noise"
        elif (_finite(row.get("saving_ms_per_sample")) or 0) < 0:
            text += " | slower"  # measured slower than today (the report's negative saving)
        rows.append({"label": _whatif_label(row), "kind": kind,
                     "candidate": str(row.get("candidate", "?")), "data_ms": data,
                     "err_ms": err, "cores": cores_needed, "noise": noise,
                     "control": kind == "control", "pixels": pixels, "annotation": text})
    today = next((r for r in rows if r["kind"] == "today"), None)
    compute_bound = today["data_ms"] <= step if today and step else None
    notes = [str(table[k]) for k in ("note", "control_note", "cold_sweep_note")
             if isinstance(table.get(k), str) and table[k]]
    return {"rows": rows, "step_ms": step, "compute_bound": compute_bound,
            "workers": table.get("evaluated_at_workers"), "au_target_pct": target,
            "cores_available": cores, "batch_size": batch, "notes": notes}


def _plot_whatif(ax, report):
    """The what-if panel: per candidate, its data ms per batch (bar) against the training
    step's compute ms per batch (vertical line), each bar annotated with the cores it needs
    for AU >= the target; readable both data-bound (bars past the line slow the loop) and
    compute-bound (every bar within the line: the cores needed are what differs). Returns
    whatif_panel()'s dict (None without a table)."""
    panel = whatif_panel(report)
    if panel is None:
        ax.set_axis_off()
        _note(ax, "the report has no what-if table")
        return None
    rows = panel["rows"]
    workers = panel["workers"]
    ax.set_title("What if: data ms per batch of each candidate"
                 + (f" at {workers} workers" if workers else ""), fontsize=11)
    if not rows:
        ax.set_axis_off()
        _note(ax, "the what-if table has no rows"
              + ("".join("\n" + n for n in panel["notes"]) if panel["notes"] else ""))
        return panel
    y = list(range(len(rows)))
    values = [r["data_ms"] for r in rows]
    colors = [NOISE_COLOR if r["noise"] or r["control"] else WHATIF_COLORS.get(r["kind"], "#1f77b4")
              for r in rows]
    bars = ax.barh(y, values, color=colors, edgecolor="#555555", linewidth=0.6, height=0.65)
    for bar, r in zip(bars, rows):
        if r["noise"] or r["control"]:
            bar.set_hatch("//")
        if r["pixels"] == "changed":  # a fix that changes what the model sees: outlined
            bar.set_edgecolor(PIXELS_COLOR)
            bar.set_linewidth(2.0)
    errs = [(i, r["data_ms"], r["err_ms"]) for i, r in enumerate(rows) if r["err_ms"] is not None]
    if errs:
        ax.errorbar([e[1] for e in errs], [e[0] for e in errs], xerr=[e[2] for e in errs],
                    fmt="none", ecolor="black", elinewidth=1.2, capsize=3,
                    label="paired saving's 95 % interval, per batch")
    step = panel["step_ms"]
    ends = [r["data_ms"] + (r["err_ms"] or 0) for r in rows]
    right = max(ends + ([step] if step else []))
    # The annotations need the right ~40 % of the axis.
    ax.set_xlim(0, right / 0.6 if right > 0 else 1)
    for i, r in enumerate(rows):
        ax.text(ends[i] + 0.01 * right, i, r["annotation"], va="center", fontsize=7.5,
                color="#a00000" if r["control"] and not r["noise"] else "#222222", zorder=5,
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.75, "pad": 1})
    if step:
        ax.axvline(step, color="#d62728", linestyle="--", lw=1.8,
                   label=f"training step: {step:.3g} ms compute per batch")
    ax.set_yticks(y)
    ax.set_yticklabels([r["label"] for r in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.4, -0.6 - (1.6 if step else 0))  # room above for the regime
    ax.set_xlabel("predicted data ms per batch (CPU ms per sample x batch / workers)")
    ax.grid(True, axis="x", alpha=0.3)
    if panel["compute_bound"] is True:
        regime = ("compute-bound: today's data time hides behind the step;\n"
                  f"compare the cores each candidate needs for AU {panel['au_target_pct']:g} %")
    elif panel["compute_bound"] is False:
        regime = ("data-bound: a bar past the step line keeps the accelerator waiting;\n"
                  "the cores for AU {:g} % say how many workers a fix saves".format(
                      panel["au_target_pct"]))
    else:
        regime = None
    if regime:
        ax.text(0.01, 0.99, regime, transform=ax.transAxes, va="top", fontsize=8,
                color="#333333")
    handles, labels = ax.get_legend_handles_labels()
    if any(r["noise"] or r["control"] for r in rows):
        from matplotlib.patches import Patch
        handles.append(Patch(facecolor=NOISE_COLOR, edgecolor="#555555", hatch="//"))
        labels.append("noise: the paired interval holds 0 (A/A control: must)")
    if any(r["pixels"] == "changed" for r in rows):
        from matplotlib.patches import Patch
        handles.append(Patch(facecolor="white", edgecolor=PIXELS_COLOR, linewidth=2.0))
        labels.append("changes the pixels the model sees (PSNR median / p5 against today)")
    if handles:
        ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=1,
                  fontsize=8, frameon=False)
    if panel["notes"]:
        ax.text(0.99, 0.02, "\n".join(panel["notes"]), transform=ax.transAxes, ha="right",
                va="bottom", fontsize=7.5, color="#a00000", wrap=True,
                bbox={"facecolor": "white", "edgecolor": "#e0b0b0"})
    return panel


def _plot_system(ax, ex):
    import matplotlib.pyplot as plt
    series = ex["system_series"]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    gpu_ax = None
    for i, (name, s) in enumerate(sorted(series.items(), key=lambda kv: kv[1]["workers"])):
        color = colors[i % len(colors)]
        label = f"workers:{s['workers']}"
        ax.plot(s["t_s"], s["pipebench_cores"], color=color, lw=1.6, label=f"{label}: pipebench")
        if "cpu_busy_cores" in s:
            ax.plot(s["t_s"], s["cpu_busy_cores"], color=color, lw=1, ls=":",
                    label=f"{label}: all processes")
        if "cpu_system_cores" in s:
            ax.plot(s["t_s"], s["cpu_system_cores"], color=color, lw=1, ls="-.", alpha=0.8,
                    label=f"{label}: all processes, kernel")
        if "gpu_util_pct" in s:
            gpu_ax = gpu_ax or ax.twinx()
            gpu_ax.plot(s["t_s"], s["gpu_util_pct"], color=color, lw=1, ls="--", alpha=0.7,
                        label=f"{label}: GPU util %")
    cores = _ctx_positive(ex["context"], "cores_available")
    if cores:
        ax.axhline(cores, color="#555555", ls="--", lw=1, label=f"cores available ({cores:g})")
    ax.set_xlabel("seconds since the case's first sample")
    ax.set_ylabel("CPU cores busy")
    ax.set_ylim(bottom=0)
    rate = ex.get("system_rate_hz")
    ax.set_title("CPU cores busy over time (BM_EndToEnd, system sampler"
                 + (f" {rate:g} Hz)" if rate else ")")
                 + (" and GPU utilisation" if gpu_ax else ""))
    if gpu_ax:
        gpu_ax.set_ylabel("GPU utilisation %")
        gpu_ax.set_ylim(0, 105)
    ax.legend(fontsize=7, ncol=4, loc="best", framealpha=0.8)
    ax.grid(alpha=0.3)


def _suptitle(ex, path):
    ctx = ex["context"]
    dataset = str(ctx.get("dataset", "?"))
    if len(dataset) > 40:  # a long absolute path: its last two components say enough
        dataset = "..." + os.sep + os.path.join(*dataset.rstrip(os.sep).split(os.sep)[-2:])
    parts = [f"dataset {dataset}"]
    if ctx.get("dataset_images"):
        parts[0] += f" ({ctx['dataset_images']} images)"
    parts.append(f"recipe {ctx.get('recipe', '?')}")
    parts.append(f"baseline {ctx.get('baseline', '?')}")
    if ex["batch_size"]:
        parts.append(f"batch {ex['batch_size']:g}")
    if ctx.get("crop_size"):
        parts.append(f"crop {ctx['crop_size']}")
    line2 = [os.path.basename(path)]
    for key, label in (("host_name", "host"), ("num_cpus", "cpus"), ("gpu", "gpu"),
                       ("date", "date")):
        if ctx.get(key) not in (None, ""):
            value = str(ctx[key])
            line2.append(f"{label} {value if len(value) <= 50 else value[:47] + '...'}")
    build = str(ctx.get("pipebench_build", "")).strip().lower()
    if build.startswith("debug"):  # bench writes "DEBUG: timings of this build mean nothing"
        line2.append("DEBUG BUILD: timings mean little")
    return "pipebench: " + " | ".join(parts), "   ".join(line2)


def render(ex, run_path, out_path, report=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    has_pipeline = ex["sweeps"] or ex["loader"] or ex["loader_stages"] or ex["sample_stages"]
    system = bool(has_pipeline and ex["system_series"])
    if has_pipeline:
        ratios = [1.7, 1, 1.5] if report is not None else [1.7, 1]
        width = 22 if report is not None else 14
        fig = plt.figure(figsize=(width, 6.2 + (3.6 if system else 0)))
        grid = fig.add_gridspec(2 if system else 1, len(ratios), width_ratios=ratios,
                                height_ratios=[6.2, 3.6] if system else [1])
        top = [fig.add_subplot(grid[0, i]) for i in range(len(ratios))]
        _plot_sweep(top[0], ex)
        _plot_stages(top[1], ex)
        if report is not None:
            _plot_whatif(top[2], report)
        if system:
            _plot_system(fig.add_subplot(grid[1, :]), ex)
    else:
        n = min(40, len(ex["cases"]))
        fig, ax = plt.subplots(figsize=(12, max(3.5, 1.5 + 0.3 * n)))
        _plot_all_cases(ax, ex)
    title, sub = _suptitle(ex, run_path)
    fig.suptitle(title, fontsize=13, fontweight="bold", y=0.995)
    foot = sub
    if ex["errored"]:
        shown = ", ".join(ex["errored"][:4]) + (" ..." if len(ex["errored"]) > 4 else "")
        foot += f"\nleft out, reported an error: {shown}"
    fig.text(0.5, 0.005, foot, ha="center", va="bottom", fontsize=8, color="#555555")
    fig.tight_layout(rect=(0, 0.05 if ex["errored"] else 0.03, 1, 0.96))
    fig.savefig(out_path, format="png", dpi=110)
    plt.close(fig)


def main(argv):
    if argv in (["-h"], ["--help"]):
        print(__doc__)
        return EXIT_OK
    report_path = None
    if len(argv) == 4 and argv[2] == "--report":
        report_path = argv[3]
        argv = argv[:2]
    if len(argv) != 2:
        print("plot: error: usage: plot.py RUN.json OUT.png [--report REPORT.json]", file=sys.stderr)
        return EXIT_BAD_INPUT
    run_path, out_path = argv
    report = None
    try:
        if report_path is not None:
            import json
            try:
                with open(report_path) as f:
                    report = json.load(f)
            except (OSError, ValueError) as e:
                raise BadInput(f"{report_path}: not a pipebench-report --json file ({e})")
        data = load_run(run_path)
        ex = extract(data)
        if not ex["cases"]:
            raise BadInput(f"{run_path}: no case without an error to plot")
        out_dir = os.path.dirname(os.path.abspath(out_path))
        if not os.path.isdir(out_dir):
            raise BadInput(f"{out_path}: folder {out_dir} does not exist")
        render(ex, run_path, out_path, report)
    except BadInput as e:
        print(f"plot: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as e:
        print(f"plot: error: {out_path}: cannot write ({e.strerror or e})", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not (ex["sweeps"] or ex["loader"]):
        print(f"plot: note: {run_path} has no BM_Loader or BM_EndToEnd cases; the figure "
              "says what is missing", file=sys.stderr)
    print(f"plot: wrote {out_path}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
