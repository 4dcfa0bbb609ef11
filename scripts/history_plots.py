#!/usr/bin/python3
"""history_plots.py - the PNG of one case's history (history.py's picture; matplotlib).

draw_case(case, runs, path) draws, over the runs (x: run label, in history.py's order):
  top:    the case's median images/s (or time per iteration, ms) with the noise band
          (min..max of its repetitions), change points flagged (red downward triangle: a
          regression, green upward: an improvement, as history.py decided them), changes
          too noisy to judge ringed in grey, runs where the case errored marked with a grey x;
  middle: AU % and stall % (au_pct, stall_pct medians and bands), only when the case has
          them (BM_EndToEnd cases);
  bottom: the paired deltas of runs made with compare.sh --ab (NEW/BASE - 1, %), each with
          its 95 % interval as an error bar (time) or as an exact point (instruction
          counts, squares), red when that comparison said REGRESSION, the zero line and
          each run's threshold; only when some run has them.
`case` and `runs` are the dicts of history.build_history (see history.py).
"""


def _xy(points):
    xs = [i for i, p in enumerate(points) if p is not None]
    return (xs, [points[i]["median"] for i in xs], [points[i]["lo"] for i in xs],
            [points[i]["hi"] for i in xs])


def _band_line(ax, points, color, label):
    xs, med, lo, hi = _xy(points)
    ax.fill_between(xs, lo, hi, color=color, alpha=0.2, linewidth=0,
                    label=f"{label}: min..max of repetitions")
    ax.plot(xs, med, "o-", color=color, markersize=4, label=f"{label}: median")
    return xs, med


def _flag_changes(ax, case):
    primary = case["primary"]
    for kind, marker, color in (("regression", "v", "#d62728"), ("improvement", "^", "#2ca02c")):
        pts = [c for c in case["changes"] if c["kind"] == kind and primary[c["i"]] is not None]
        if pts:
            ax.scatter([c["i"] for c in pts], [primary[c["i"]]["median"] for c in pts],
                       marker=marker, s=140, color=color, zorder=5,
                       label=f"{kind} ({len(pts)})")
            for c in pts:
                ax.annotate(f"time {c['change_pct']:+.1f}%", (c["i"], primary[c["i"]]["median"]),
                            textcoords="offset points", xytext=(6, 8), color=color, fontsize=8)


def _ring_noisy(ax, case):
    primary = case["primary"]
    pts = [c for c in case["noisy"] if primary[c["i"]] is not None]
    if pts:
        ax.scatter([c["i"] for c in pts], [primary[c["i"]]["median"] for c in pts], s=160,
                   facecolors="none", edgecolors="#7f7f7f", linewidths=1.5, zorder=4,
                   label=f"too noisy to judge ({len(pts)})")


def _paired(ax, case, runs):
    """The paired deltas (see the module's docstring)."""
    ax.axhline(0, color="#555555", linewidth=1)
    for metric, marker, color in (("time", "o", "#6a3d9a"), ("instructions", "s", "#e67e00")):
        pts = [(i, p) for i, p in enumerate(case["paired"]) if p and p["metric"] == metric]
        if not pts:
            continue
        xs = [i for i, _ in pts]
        ys = [p["delta_pct"] for _, p in pts]
        colors = ["#c62828" if p["verdict"] == "regression" else color for _, p in pts]
        for (i, p), c in zip(pts, colors):
            if not p["exact"]:
                ax.errorbar([i], [p["delta_pct"]], yerr=[[p["delta_pct"] - p["lo_pct"]],
                                                         [p["hi_pct"] - p["delta_pct"]]],
                            fmt="none", ecolor=c, capsize=4, linewidth=1.5)
        label = ("paired time delta, 95 % interval" if metric == "time"
                 else "paired instruction delta (exact)")
        ax.scatter(xs, ys, marker=marker, c=colors, s=36, zorder=5, label=label)
    ths = [(i, r["ab"]["threshold_pct"]) for i, r in enumerate(runs)
           if r.get("ab") and r["ab"].get("threshold_pct") is not None
           and case["paired"][i] is not None]
    if ths:
        ax.scatter([i for i, _ in ths], [t for _, t in ths], marker="_", s=300,
                   color="#c62828", label="threshold")
    ax.set_ylabel("NEW/BASE, %")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")


def draw_case(case, runs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    has_au = case["au"] is not None or case["stall"] is not None
    has_paired = case.get("paired") is not None
    ratios = [2] + ([1] if has_au else []) + ([1] if has_paired else [])
    height = 4.2 + 2.3 * (len(ratios) - 1)
    fig, axes = plt.subplots(len(ratios), 1, sharex=True, squeeze=False,
                             figsize=(max(7.0, 0.5 * len(runs) + 4), height),
                             gridspec_kw={"height_ratios": ratios} if len(ratios) > 1 else None)
    top = axes[0][0]
    if all(p is None for p in case["primary"]) and has_paired:
        top.text(0.5, 0.5, "no unpaired measurement: only paired runs (an instruction "
                 "count's rows,\nmeasured under Valgrind, are not drawn as times)",
                 ha="center", va="center", transform=top.transAxes, fontsize=9,
                 color="#555555")
    _band_line(top, case["primary"], "#1f77b4", case["metric"])
    _flag_changes(top, case)
    _ring_noisy(top, case)
    errored = [e["i"] for e in case["errors"]]
    if errored:
        y = top.get_ylim()[0]
        top.scatter(errored, [y] * len(errored), marker="x", color="#7f7f7f",
                    label=f"errored ({len(errored)})", clip_on=False)
    top.set_ylabel(case["metric_label"])
    top.set_title(case["name"], fontsize=10)
    top.grid(alpha=0.3)
    top.legend(fontsize=7, loc="best")
    if has_au:
        bottom = axes[1][0]
        for key, color, label in (("au", "#2ca02c", "AU %"), ("stall", "#d62728", "stall %")):
            if case[key] is not None:
                _band_line(bottom, case[key], color, label)
        bottom.set_ylim(0, 100)
        bottom.set_ylabel("%")
        bottom.grid(alpha=0.3)
        bottom.legend(fontsize=7, loc="best")
    if has_paired:
        _paired(axes[-1][0], case, runs)
    last = axes[-1][0]
    last.set_xticks(range(len(runs)))
    last.set_xticklabels([r["label"] for r in runs], rotation=45, ha="right", fontsize=8)
    last.set_xlim(-0.5, len(runs) - 0.5)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
