"""pbgate.plan - the paired A/B gate's measurement plan: how many ABBA rounds each case
needs for its 95 % interval to be narrow enough to see the threshold, and which cases the
time budget can afford (issue 36, "power before a verdict"). Used by pbgate.ab and
gate_calibration.sh.

The gate's statistic is the mean of the round log ratios ln r_i with a Student t interval
(paired.paired_stats). Its half-width after n rounds is t(0.975, n - 1) * s / sqrt(n),
s the standard deviation of ln r over rounds. From the screen's s the number of rounds that
brings the half-width to the target h follows (the classical sample-size formula for a t
interval; NIST/SEMATECH e-Handbook 7.2.2.2, "sample sizes required"): the smallest even
n with t(0.975, n - 1) * s / sqrt(n) <= asinh(h) (the reported half-width is
(e^(m+x) - e^(m-x)) / 2, about sinh(x) at a ratio near 1). Even, so that the two orders
(A B B A, B A A B) come in equal numbers. s from 4 rounds is itself uncertain, so the
gate measures the planned rounds, looks at the half-width they give and plans again from
them while the budget lasts (a stopping rule on the spread alone, never on the ratio).

Costs: a block is one process; its wall time is an overhead plus the selected cases' own
time (iterations x real_time of their rows). The overhead has a part per process (start,
dataset scan, case registration: what a `--benchmark_list_tests` run costs) and a part per
case (its set-up, Google Benchmark's probing iterations), so it is fitted as a + b x cases
over the blocks that ran (least squares once blocks of two sizes ran; before that a is the
process start the gate timed and b the rest shared among the screen's cases). A single
constant would charge a block of one case the set-up of all 64 the screen ran, and the
budget would pay for nothing. Units: seconds for times, percent for precision targets.
"""

import math
import statistics

from .paired import t_quantile

MIN_ROUNDS = 2


def half_width_pct(sd_log, n, confidence=0.95):
    """The 95 % interval's half-width in percent that n rounds give at this spread."""
    if n < 2:
        return math.inf
    return math.sinh(t_quantile(0.5 + confidence / 2, n - 1) * sd_log / math.sqrt(n)) * 100


def power_at(effect_pct, threshold_pct, half_pct, df, confidence=0.95):
    """The chance that a comparison whose interval half-width is half_pct (df degrees of
    freedom) calls a true change of effect_pct a regression at threshold_pct: the estimate
    of ln r must land above ln(1 + threshold), its standard error being the half-width's
    asinh over t(0.975, df) (normal approximation; the interval's lower bound is then above
    1 whenever half_pct <= threshold_pct)."""
    from scipy.stats import norm
    if df < 1 or half_pct is None or half_pct <= 0:
        return None
    se = math.asinh(half_pct / 100) / t_quantile(0.5 + confidence / 2, df)
    return float(norm.cdf((math.log1p(effect_pct / 100) - math.log1p(threshold_pct / 100)) / se))


def rounds_for_precision(sd_log, target_pct, most, confidence=0.95):
    """The smallest even number of rounds (>= 2) whose interval half-width at this spread is
    at most target_pct; None when even `most` rounds are not enough (or target_pct <= 0)."""
    if target_pct <= 0:
        return None
    if sd_log <= 0:
        return MIN_ROUNDS
    n = MIN_ROUNDS
    while n <= most:
        if half_width_pct(sd_log, n, confidence) <= target_pct:
            return n
        n += 2
    return None


def case_seconds(doc):
    """{case: (seconds it ran in this block, seconds of one iteration)}: iterations x
    real_time of its rows (one row per case in a gate block; several when it repeats).
    Errored rows count 0."""
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    out = {}
    for row in doc.get("benchmarks", []):
        if row.get("run_type") == "aggregate" or row.get("error_occurred"):
            continue
        t = row.get("real_time", 0) * scale.get(row.get("time_unit", "ns"), 1e-9)
        ran, _ = out.get(row["name"], (0.0, 0.0))
        out[row["name"]] = (ran + t * row.get("iterations", 1), t)
    return out


class BlockCosts:
    """What a block of some cases costs, from blocks that ran: add(doc, wall_seconds) for
    each, then seconds(cases). `start`: seconds one process costs before its first case
    (None: unknown; then, until blocks of clearly different sizes ran, a block's overhead is
    the median of those seen, whatever its size)."""

    def __init__(self, min_time=None, start=None):
        self.per_case = {}
        self.iteration = {}
        self.overheads = []  # (cases in the block, seconds not inside a case's iterations)
        self.min_time = min_time  # the blocks to be planned: --benchmark_min_time
        self.start = start

    def add(self, doc, wall):
        cases = case_seconds(doc)
        for name, (ran, one) in cases.items():
            self.per_case.setdefault(name, []).append(ran)
            self.iteration.setdefault(name, []).append(one)
        self.overheads.append(
            (len(cases), max(0.0, wall - sum(ran for ran, _ in cases.values()))))

    def case(self, name):
        """Seconds the case runs in one block: as measured, or, with a longer min_time
        planned, that min_time (Google Benchmark runs a case until it has run min_time, in
        whole iterations)."""
        got = self.per_case.get(name)
        ran = statistics.median(got) if got else 0.0
        if self.min_time is None or not got:
            return ran
        one = statistics.median(self.iteration[name])
        return max(ran, one * math.ceil(self.min_time / one) if one > 0 else self.min_time)

    def overhead_model(self):
        """(a, b): a block of n cases spends a + b x n seconds outside their iterations."""
        if not self.overheads:
            return (self.start or 0.0), 0.0
        sizes = {n for n, _ in self.overheads}
        # Least squares over blocks of clearly different sizes (a screen of N cases and a
        # stage of a few); N and N - 1 (a case that errored in one block) would make the
        # slope the two processes' start-up difference.
        if len(sizes) >= 2 and max(sizes) >= 2 * max(1, min(sizes)):
            xs = [n for n, _ in self.overheads]
            ys = [o for _, o in self.overheads]
            mx, my = statistics.fmean(xs), statistics.fmean(ys)
            sxx = sum((x - mx) ** 2 for x in xs)
            b = max(0.0, sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx)
            a = max(0.0, my - b * mx)
            return a, b
        n = max(sizes)
        seen = statistics.median(o for _, o in self.overheads)
        if self.start is None or n <= 0:
            return seen, 0.0
        a = min(self.start, seen)
        return a, (seen - a) / n

    def seconds(self, cases):
        """One block of these cases: its overhead (overhead_model) plus each case's time."""
        a, b = self.overhead_model()
        return a + b * len(cases) + sum(self.case(n) for n in cases)


def even_up(n):
    return n + (n % 2)


def afford(costs, cases, seconds_left):
    """The most rounds (even) of blocks of these cases that seconds_left pays for."""
    per_round = 4 * costs.seconds(cases)
    if per_round <= 0:
        return 10 ** 6
    n = int(seconds_left // per_round)
    return n - (n % 2)


def screen_rounds(asked, ran, round_seconds, seconds_left, share=0.5):
    """How many screening rounds to run in all, `ran` of them done, each costing
    round_seconds: `asked`, or fewer when they would take more than `share` of the
    seconds_left (the rest is for the cases measured again); never under MIN_ROUNDS (a t
    interval needs two), even (as many rounds of each order)."""
    if round_seconds <= 0:
        return asked
    more = int(seconds_left * share // round_seconds)
    total = min(asked, ran + max(0, more))
    total -= total % 2
    return max(MIN_ROUNDS, total)


def plan_stage(must, wanted, costs, seconds_left, least, most, first=()):
    """Which cases a measuring stage runs and for how many rounds.

    must:   [case] measured whatever the budget (the suspects: their confirmation), for at
            least `least` rounds;
    wanted: {case: rounds it needs} (the cases without the precision yet), taken cheapest
            first while 4 x rounds x block seconds fits in seconds_left, the cases in
            `first` (those whose time verdict can decide the comparison) before the rest;
    Returns (cases, rounds, left_out): left_out the wanted cases the budget could not take.
    rounds is even, in [least, most] when there are cases, 0 when none."""
    chosen = list(must)
    rounds = even_up(least) if must else 0
    left_out = []
    first = set(first)
    order = sorted(wanted, key=lambda n: (n not in first, wanted[n] * costs.case(n), n))
    for name in order:
        if name in chosen:  # a suspect short of precision: more rounds if they fit
            rounds = max(rounds, min(even_up(wanted[name]), afford(costs, chosen, seconds_left),
                                     most))
            continue
        r = min(max(rounds, even_up(wanted[name]), MIN_ROUNDS), most)
        if 4 * r * costs.seconds(chosen + [name]) <= seconds_left:
            chosen.append(name)
            rounds = r
        else:
            left_out.append(name)
    if chosen and not must:
        rounds = max(rounds, MIN_ROUNDS)
    return chosen, min(rounds, most) if chosen else 0, left_out
