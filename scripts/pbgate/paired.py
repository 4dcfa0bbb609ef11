"""pbgate.paired - the paired time gate's statistic and verdicts (pbgate.ab;
docs/ab-gate.md, "What it does" steps 4-8).

One round of four blocks gives r = (B1 + B2) / (A1 + A2) (each build's first and second
block, whatever the order); over the rounds, the mean of ln r with its Student t interval
(the paired t procedure, NIST/SEMATECH e-Handbook 7.3.1 and 7.4.4, on log ratios), with
balanced A B B A / B A A B rounds the position-adjusted form (a crossover design's
analysis). Times in any one unit (ratios are unit-free); percentages as percent.
"""

import math
import statistics

from .compare import cv
from .record import BadInput

CONFIDENCE = 0.95


def t_quantile(p, df):
    """Student t quantile (scipy)."""
    try:
        from scipy.stats import t
    except ImportError as e:
        raise BadInput(f"scipy is needed for the t interval ({e}); install python3-scipy "
                       "(scripts/setup.sh) and run with /usr/bin/python3") from e
    return float(t.ppf(p, df))


def quad_ratio(a1, b1, b2, a2):
    """One ABBA round's ratio NEW/BASE: (B1 + B2) / (A1 + A2)."""
    return (b1 + b2) / (a1 + a2)


def balanced(orders, n):
    """Whether the rounds hold as many A B B A as B A A B, at least 3 of each."""
    return (orders is not None and len(orders) == n and n >= 6
            and orders.count("ABBA") == orders.count("BAAB"))


def paired_stats(ratios, confidence=CONFIDENCE, orders=None):
    """The gate statistic over the rounds' ratios: mean of ln r with its two-sided Student t
    interval (N - 1 degrees of freedom), as ratios. Needs >= 2 positive ratios.

    With balanced orders (as many A B B A as B A A B, 6 rounds or more) the rounds follow
    ln r_i = d + s_i p + e_i, s_i = -1 / +1 for A B B A / B A A B and p the position effect
    (how much slower a round's outer blocks run): the mean is still d's estimate (the s_i
    sum to 0), and the spread is the residuals' (N - 2 degrees of freedom), so a position
    effect no longer widens the interval (a crossover design's analysis).

    Returns {n, mean_log, sd_log, t, ratio, ci_low, ci_high}."""
    n = len(ratios)
    if n < 2:
        raise ValueError("a t interval needs at least 2 rounds")
    if any(not (r > 0 and math.isfinite(r)) for r in ratios):
        raise ValueError(f"ratios must be finite and > 0, got {ratios}")
    logs = [math.log(r) for r in ratios]
    mean = statistics.fmean(logs)
    if balanced(orders, n):
        signs = [1 if o == "BAAB" else -1 for o in orders]
        p = statistics.fmean(s * x for s, x in zip(signs, logs))
        resid = [x - mean - s * p for s, x in zip(signs, logs)]
        sd = math.sqrt(sum(e * e for e in resid) / (n - 2))
        t = t_quantile(0.5 + confidence / 2, n - 2)
    else:
        sd = statistics.stdev(logs)
        t = t_quantile(0.5 + confidence / 2, n - 1)
    half = t * sd / math.sqrt(n)
    return {"n": n, "mean_log": mean, "sd_log": sd, "t": t, "ratio": math.exp(mean),
            "ci_low": math.exp(mean - half), "ci_high": math.exp(mean + half)}


def default_precision(threshold_pct):
    """The interval half-width, percent, a verdict needs by default: half the threshold.
    At that width a change of 1.5 x the threshold is caught with about 99 % power (the
    estimate's standard error is the half-width over t(0.975, df), 2.4 to 2.8 here).
    A threshold of 0 (significance alone) asks for no width: inf."""
    return threshold_pct / 2.0 if threshold_pct > 0 else math.inf


def inconclusive_text(threshold_pct, change, half):
    return (f"not enough precision to judge a {threshold_pct:g} % change ({change:+.1f} %, "
            f"interval ±{half:.1f} %)")


def verdict(ratio, ci_low, ci_high, threshold_pct, max_noise_pct=None):
    """("regression" | "improvement" | "inconclusive" | "ok", the verdict's text) for a
    ratio NEW/BASE and its interval at a threshold in percent. A case whose interval's
    half-width exceeds max_noise_pct (the precision; default half the threshold) is
    "inconclusive" unless the whole interval lies beyond the threshold: it cannot tell a
    change of the threshold's size from none, so it never reads "no change"; math.inf
    turns the precision requirement off."""
    th = threshold_pct / 100.0
    noise = (default_precision(threshold_pct) if max_noise_pct is None
             else max_noise_pct) / 100.0
    change = (ratio - 1.0) * 100.0
    half = (ci_high - ci_low) / 2.0 * 100.0
    imprecise = half / 100.0 > noise
    if ci_low > 1.0 + th or (ratio > 1.0 + th and ci_low > 1.0 and not imprecise):
        return "regression", "REGRESSION"
    if ci_high < 1.0 - th or (ratio < 1.0 - th and ci_high < 1.0 and not imprecise):
        return "improvement", "improvement"
    if imprecise:
        return "inconclusive", inconclusive_text(threshold_pct, change, half)
    text = f"no change (within noise ±{half:.1f} %)"
    if ci_low > 1.0 or ci_high < 1.0:
        text = (f"no change ({change:+.1f} %, significant but within the "
                f"{threshold_pct:g} % threshold)")
    elif abs(ratio - 1.0) > th:
        text = f"no change (within noise ±{half:.1f} %; {change:+.1f} % not significant)"
    return "ok", text


def position_effect(ratios, orders, confidence=CONFIDENCE):
    """How much slower a round's outer blocks (its first and last) ran than its inner ones,
    percent, with its interval: the mean of s_i ln r_i, s = -1 for A B B A (outer = BASE)
    and +1 for B A A B (outer = NEW). With as many rounds of each order, the build effect
    cancels in it and the position effect cancels in the mean of ln r_i (the gate's
    ratio). None without both orders or with fewer than 4 rounds."""
    if not orders or len(ratios) < 4 or len(set(orders)) < 2:
        return None
    vals = [(1 if o == "BAAB" else -1) * math.log(r) for r, o in zip(ratios, orders)]
    mean, sd = statistics.fmean(vals), statistics.stdev(vals)
    half = t_quantile(0.5 + confidence / 2, len(vals) - 1) * sd / math.sqrt(len(vals))
    return {"pct": math.expm1(mean) * 100, "ci_low_pct": math.expm1(mean - half) * 100,
            "ci_high_pct": math.expm1(mean + half) * 100}


def judge_case(name, field, rounds, threshold_pct, confidence=CONFIDENCE, max_noise_pct=None,
               orders=None):
    """One case over its rounds [(A1, B1, B2, A2) in ns: each build's first and second block
    of the round, whatever the order], `orders` the rounds' orders ("ABBA" or "BAAB"):
    compare.judge's fields plus the paired ones."""
    ratios = [quad_ratio(*q) for q in rounds]
    base = [v for q in rounds for v in (q[0], q[3])]
    new = [v for q in rounds for v in (q[1], q[2])]
    if any(v <= 0 for v in base + new):
        v, text = "base0", "not judged (a block time of 0)"
        st = {"ratio": None, "ci_low": None, "ci_high": None, "mean_log": None,
              "sd_log": None, "t": None}
    else:
        st = paired_stats(ratios, confidence, orders)
        v, text = verdict(st["ratio"], st["ci_low"], st["ci_high"], threshold_pct,
                          max_noise_pct)
    ratio = st["ratio"]
    return {"name": name, "field": field, "base_ns": statistics.median(base),
            "new_ns": statistics.median(new),
            "change": None if ratio is None else ratio - 1.0, "p": None,
            "n_base": len(base), "n_new": len(new), "verdict": v,
            "slower_than_threshold": ratio is not None and ratio > 1.0 + threshold_pct / 100,
            "cv": None, "cv_base": cv(base), "cv_new": cv(new),
            "paired": True, "ratio": ratio, "ci_low": st["ci_low"], "ci_high": st["ci_high"],
            "blocks": len(rounds), "confidence": confidence, "mean_log_ratio": st["mean_log"],
            "sd_log_ratio": st["sd_log"], "t_quantile": st["t"],
            "round_ratios": ratios, "verdict_text": text,
            "round_orders": list(orders) if orders else None,
            "half_width_pct": (None if ratio is None
                               else (st["ci_high"] - st["ci_low"]) / 2 * 100),
            "position_effect": (None if ratio is None
                                else position_effect(ratios, orders, confidence))}


def is_suspect(r, threshold_pct):
    """Whether the screen's rounds point to a slowdown worth measuring again: the median
    round ratio above 1 + 3/4 of the threshold (a slowdown most rounds show, which one
    disturbed round can hide from the mean: a round at 0.87 among four at 1.03 to 1.045
    pulled a +3 % case's mean to 1.003), or the mean ratio above 1 + half the threshold
    with its interval above 1. Every case the screen alone would call a REGRESSION (or too
    noisy, slower) is a suspect: its mean is above 1 + the threshold, its interval above 1."""
    if r.get("ratio") is None:
        return False
    th = threshold_pct / 100.0
    median = statistics.median(r["round_ratios"])
    return median > 1.0 + 0.75 * th or (r["ratio"] > 1.0 + th / 2 and r["ci_low"] > 1.0)
