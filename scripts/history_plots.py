#!/usr/bin/python3
"""history_plots.py - the PNG of one case's history (history.py's picture; matplotlib).

draw_case(case, runs, path) draws, over the runs (x: run label, in history.py's order):
  top:    the case's median images/s (or time per iteration, ms) with the noise band
          (min..max of its repetitions), change points flagged (red downward triangle: a
          regression, green upward: an improvement, as history.py decided them), changes
          too noisy to judge ringed in grey, runs where the case errored marked with a grey x;
  bottom: AU % and stall % (au_pct, stall_pct medians and bands), only when the case has
          them (BM_EndToEnd cases).
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


def draw_case(case, runs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    has_au = case["au"] is not None or case["stall"] is not None
    fig, axes = plt.subplots(2 if has_au else 1, 1, sharex=True, squeeze=False,
                             figsize=(max(7.0, 0.5 * len(runs) + 4), 6.5 if has_au else 4.2),
                             gridspec_kw={"height_ratios": [2, 1]} if has_au else None)
    top = axes[0][0]
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
    last = axes[-1][0]
    last.set_xticks(range(len(runs)))
    last.set_xticklabels([r["label"] for r in runs], rotation=45, ha="right", fontsize=8)
    last.set_xlim(-0.5, len(runs) - 0.5)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
