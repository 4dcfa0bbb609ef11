#!/usr/bin/python3
"""history_test.py - scripts/history.py on a generated series of runs, and its page in a
real browser.

Why it exists: the history page is what a CI user looks at to find the commit that made
a case slower, so (1) the change points must be the compare gate's decision (checked
against scipy's Mann-Whitney U test computed here from the files), (2) the numbers drawn
must be the runs' own (medians and min..max recomputed here), and (3) the page must
actually draw in a browser: Debian's chromium renders it headless (--dump-dom and
--screenshot), and the test asserts there is no script error and every case is drawn
with one point per run. Runs made with `compare.sh --ab` (hand-made files in
ab_gate.py's and instr_gate.py's JSON shape) add the paired deltas with their intervals:
(4) the page's points must be the files' ratios and intervals, an instruction-count run's
Valgrind rows must stay out of the unpaired series, and the page must draw them too. The
browser tests skip, saying so, where chromium is absent (`scripts/setup.sh --history`
installs it). The history tests run twice: on runs with the record (record version 1) and,
as HistoryTestRecord0, on runs written before it. They call history.py in a forked child of
this process (forked_script.py: the same main, exit status and output, without importing
scipy and matplotlib again for each call); PairedBrowserTest runs it as a command.

  /usr/bin/python3 history_test.py SCRIPTS_DIR
"""

import html.parser
import json
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import unittest

from ctest_unittest import run_tests
from forked_script import Script

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_bench_json import Case, make_run, pipeline_cases, record0  # noqa: E402

SCRIPTS = os.environ.get("PIPEBENCH_SCRIPTS") or os.path.join(HERE, "..", "..", "scripts")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SLOW_RUN = 3          # runs 3.. have the loader 1.3x slower: one change point each
SLOWDOWN = 1.3
N_RUNS = 6


_HISTORY = {}


def warm_up(_module):
    """What history.py imports inside main and its PNG drawing: gbench (scipy.stats) and
    matplotlib, imported here once, and one text drawn (the font cache loaded)."""
    import io
    sys.modules["pbgate.compare"].import_gbench()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(1, 1))
    fig.text(0.5, 0.5, "x")
    fig.savefig(io.BytesIO(), format="png")
    plt.close(fig)


def history(args, timeout=300):
    """(exit status, stdout, stderr) of history.py run with `args`, in a forked child."""
    if SCRIPTS not in _HISTORY:
        _HISTORY[SCRIPTS] = Script(os.path.join(SCRIPTS, "history.py"), warm_up=warm_up)
    return _HISTORY[SCRIPTS](args, timeout=timeout)


def series_cases(k):
    """Run k of the series: the loader cases slowed down from SLOW_RUN on, times and rate
    counters consistent (items_per_second = items / time)."""
    cases, ctx = pipeline_cases(counter_noise_cv=0.005)
    for c in cases:
        c.noise_cv = 0.005
        if k >= SLOW_RUN and c.name.startswith("BM_Loader/"):
            c.real_ms *= SLOWDOWN
            c.counters["items_per_second"] /= SLOWDOWN
    return cases, ctx


def write_series(folder, n=N_RUNS, dated=True):
    """Run files named so that name order is NOT date order (z.json is the first run)."""
    paths = []
    for k in range(n):
        cases, ctx = series_cases(k)
        ctx["git_commit"] = f"{k:x}" * 40
        if dated:
            ctx["date"] = f"2024-03-{10 + k:02d}T12:00:00+00:00"
        name = chr(ord("z") - k) + ".json"
        path = os.path.join(folder, name)
        doc = make_run(cases, reps=9, seed=100 + k, context=ctx)
        if not dated:
            del doc["context"]["date"]
        save(path, doc)
        paths.append(path)
    return paths


AB_TIME = 4         # write_ab_runs: run 4 is a paired time comparison (ab_gate.py's JSON)
AB_INSTR = 5        # run 5 a paired instruction-count comparison (instr_gate.py's JSON)
LOADER_PAIRED = (1.30, 1.25, 1.36)   # ratio, ci_low, ci_high of each BM_Loader case in run 4
STEP_PAIRED = (1.01, 0.99, 1.03)
NORMALIZE_PAIRED = 1.006             # BM_Transform/normalize in run 5: exact, above 0.5 %


def write_ab_runs(folder):
    """write_series' first 4 runs, then two hand-made `compare.sh --ab --out` files:
    run 4 (time, 5 ABBA rounds, threshold 3 %: the loader cases +30 % with their intervals,
    a REGRESSION; BM_TrainStep +1 %, no change) whose rows are NEW's blocks, and run 5
    (instructions, threshold 0.5 %: BM_Transform/normalize +0.6 %, exact, a REGRESSION)
    whose rows were measured under Valgrind (500 ms an image)."""
    paths = write_series(folder, n=AB_TIME)
    cases, ctx = series_cases(AB_TIME)
    ctx.update(git_commit="a" * 40, date="2024-03-14T12:00:00+00:00")
    doc = make_run(cases, reps=10, aggregates=False, seed=7, context=ctx)
    paired = []
    for c in cases:
        r, lo, hi = (LOADER_PAIRED if c.name.startswith("BM_Loader/") else STEP_PAIRED
                     if c.name.startswith("BM_TrainStep") else (None, None, None))
        if r is None:
            continue
        paired.append({"name": c.name, "field": "real_time", "paired": True, "ratio": r,
                       "ci_low": lo, "ci_high": hi, "blocks": 5, "change": r - 1,
                       "verdict": "regression" if lo > 1 and r > 1.03 else "ok"})
    doc.update(paired=True, tool="scripts/ab_gate.py", metric="time", threshold_pct=3.0,
               blocks=5, confidence=0.95, base="base/bench/pipebench", result="FAIL",
               cases=paired)
    paths.append(os.path.join(folder, "ab-time.json"))
    save(paths[-1], doc)
    ctx = dict(ctx, git_commit="b" * 40, date="2024-03-15T12:00:00+00:00")
    doc = make_run([Case("BM_Transform/normalize", real_ms=500.0)], reps=1, context=ctx)
    doc.update(paired=True, tool="scripts/instr_gate.py", metric="instructions",
               threshold_pct=0.5, blocks=1, confidence=None, base="base/bench/pipebench",
               result="FAIL", simd_path={"base": "avx2", "new": "avx2",
                                         "base_native": "avx512", "new_native": "avx512"},
               cases=[{"name": "BM_Transform/normalize", "field": "instructions",
                       "paired": True, "deterministic": True, "ratio": NORMALIZE_PAIRED,
                       "ci_low": NORMALIZE_PAIRED, "ci_high": NORMALIZE_PAIRED,
                       "blocks": 1, "verdict": "regression"}])
    paths.append(os.path.join(folder, "ab-instr.json"))
    save(paths[-1], doc)
    return paths


def load(path):
    with open(path) as f:
        return json.load(f)


def save(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def rows(doc, case, field):
    return [r[field] for r in doc["benchmarks"]
            if r["run_name"] == case and r["run_type"] == "iteration"]


def embedded_data(page):
    with open(page, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'<script id="history-data" type="application/json">(.*?)</script>', text,
                  re.S)
    return json.loads(m.group(1))


class DomSummary(html.parser.HTMLParser):
    """From chromium's --dump-dom: <html> attributes, the case sections and, per section,
    its h2 text, the data-points of its first chart and its change markers."""

    def __init__(self):
        super().__init__()
        self.root, self.sections, self._h2 = {}, [], False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.root = a
        elif tag == "section" and "case" in a.get("class", "").split():
            self.sections.append({"name": a.get("data-case-name"), "h2": "", "points": [],
                                  "changes": [], "paired": [], "paired_marks": []})
        elif not self.sections:
            return
        elif tag == "h2":
            self._h2 = True
        elif tag == "svg" and "data-paired-points" in a:
            self.sections[-1]["paired"].append(int(a["data-paired-points"]))
        elif tag == "svg":
            self.sections[-1]["points"].append(int(a.get("data-points", "-1")))
        elif "paired-point" in a.get("class", "").split():
            self.sections[-1]["paired_marks"].append(a["class"].split()[1:])
        elif tag == "path" and "change" in a.get("class", ""):
            self.sections[-1]["changes"].append(a["class"].split()[1])

    def handle_endtag(self, tag):
        if tag == "h2":
            self._h2 = False

    def handle_data(self, data):
        if self._h2 and self.sections:
            self.sections[-1]["h2"] += data


class HistoryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.runs = os.path.join(self.dir, "runs")
        os.mkdir(self.runs)
        self.out = os.path.join(self.dir, "out")

    def tearDown(self):
        self.tmp.cleanup()

    def history(self, *args):
        return history(args)

    # --- the change points are the gate's ------------------------------------------

    def test_slowdown_is_flagged_once_per_slowed_case_with_scipys_p(self):
        paths = write_series(self.runs)
        rc, out, err = self.history(self.runs, "--out", self.out, "--no-png")
        self.assertEqual(rc, 0, out + err)
        changes = [ln for ln in out.splitlines() if ln.startswith("CHANGE")]
        loader = [c for c in pipeline_cases()[0] if c.name.startswith("BM_Loader/")]
        self.assertEqual(len(changes), len(loader), out)
        from scipy.stats import mannwhitneyu
        docs = [load(p) for p in paths]
        label = f"{SLOW_RUN:x}" * 10
        prev = f"{SLOW_RUN - 1:x}" * 10
        for case in loader:
            a = rows(docs[SLOW_RUN - 1], case.name, "real_time")
            b = rows(docs[SLOW_RUN], case.name, "real_time")
            p = mannwhitneyu(a, b, alternative="two-sided").pvalue
            change = statistics.median(b) / statistics.median(a) * 100 - 100
            line = [c for c in changes if f" {case.name}: " in c]
            self.assertEqual(len(line), 1, out)
            self.assertEqual(line[0], f"CHANGE {label} {case.name}: real_time {change:+.1f}% "
                                      f"vs {prev} (p={p:.4g}, regression)")
        self.assertIn(f"history: {N_RUNS} run(s), 8 case(s), 3 change point(s)", out)

    def test_improvement_is_flagged_too(self):
        write_series(self.runs)
        # Reversed dates: the slow runs come first, so the change is an improvement.
        rc, out, _ = self.history(*sorted(os.path.join(self.runs, f)
                                          for f in os.listdir(self.runs)),
                                  "--order", "given", "--out", self.out, "--no-png")
        self.assertEqual(rc, 0, out)
        kinds = re.findall(r"\((?:p=[^,]+), (\w+)\)", out)
        self.assertEqual(kinds, ["improvement"] * 3, out)

    def test_noisy_case_and_small_changes_are_not_flagged(self):
        # CV ~11%; +25% is within 3 CVs, so too noisy to judge (the gate's rule).
        base = [0.85, 0.9, 0.95, 1.0, 1.0, 1.05, 1.1, 1.15, 1.2]
        for k, (vals, steady) in enumerate(((base, 1.0), ([v * 1.25 for v in base], 1.03))):
            doc = make_run([Case("BM_Noisy", values_ms=vals),
                            Case("BM_Steady", values_ms=[steady + i * 1e-4 for i in range(9)])],
                           context={"date": f"2024-01-0{k + 1}T00:00:00+00:00"})
            save(os.path.join(self.runs, f"r{k}.json"), doc)
        rc, out, _ = self.history(self.runs, "--out", self.out, "--no-png")
        self.assertEqual(rc, 0, out)
        self.assertNotIn("CHANGE", out)  # noisy: CV > 5%; steady: +3% < 5%
        self.assertIn("history: warning: 1 change(s) beyond 5% not judged", out)
        data = embedded_data(os.path.join(self.out, "history.html"))
        noisy = {c["name"]: c["noisy"] for c in data["cases"]}
        self.assertEqual(noisy["BM_Steady"], [])
        self.assertEqual(len(noisy["BM_Noisy"]), 1)
        cv = statistics.stdev(base) / statistics.fmean(base) * 100
        self.assertAlmostEqual(noisy["BM_Noisy"][0]["cv_pct"], cv, places=6)
        self.assertAlmostEqual(noisy["BM_Noisy"][0]["change_pct"], 25.0, places=6)
        rc, out, _ = self.history(self.runs, "--out", self.out, "--no-png", "--max-cv", "20",
                                  "--threshold", "2")
        self.assertEqual(len(re.findall(r"^CHANGE", out, re.M)), 2, out)

    def test_context_change_is_marked(self):
        write_series(self.runs)
        path = os.path.join(self.runs, chr(ord("z") - SLOW_RUN) + ".json")
        doc = load(path)
        # A number in a run with the record, a string before it.
        doc["context"]["batch_size"] = 32 if doc["context"].get("pipebench_record") else "32"
        save(path, doc)
        rc, out, _ = self.history(self.runs, "--out", self.out, "--no-png")
        self.assertEqual(rc, 0, out)
        self.assertIn("; context changed: batch_size", out)
        data = embedded_data(os.path.join(self.out, "history.html"))
        self.assertEqual(data["runs"][SLOW_RUN]["context_changes"], ["batch_size: 64 -> 32"])
        self.assertEqual(data["runs"][SLOW_RUN + 1]["context_changes"], ["batch_size: 32 -> 64"])

    # --- the numbers on the page are the runs' ---------------------------------------

    def test_page_data_follows_the_runs_in_date_order(self):
        paths = write_series(self.runs)
        rc, out, err = self.history(self.runs, "--out", self.out, "--no-png")
        self.assertEqual(rc, 0, out + err)
        data = embedded_data(os.path.join(self.out, "history.html"))
        # Files are named z, y, x ... in date order: the page follows the dates.
        self.assertEqual([r["file"] for r in data["runs"]],
                         [os.path.basename(p) for p in paths])
        self.assertEqual([r["label"] for r in data["runs"]],
                         [f"{k:x}" * 10 for k in range(N_RUNS)])
        docs = [load(p) for p in paths]
        by_name = {c["name"]: c for c in data["cases"]}
        self.assertEqual(set(by_name), {c.name for c in pipeline_cases()[0]})
        for name, case in by_name.items():
            self.assertEqual(case["metric"], "images/s")
            for k, doc in enumerate(docs):
                ips = rows(doc, name, "items_per_second")
                point = case["primary"][k]
                self.assertAlmostEqual(point["median"], statistics.median(ips), places=9)
                self.assertEqual((point["lo"], point["hi"], point["n"]),
                                 (min(ips), max(ips), 9))
            is_e2e = name.startswith("BM_EndToEnd/")
            self.assertEqual(case["au"] is not None, is_e2e, name)
            self.assertEqual(case["stall"] is not None, is_e2e, name)
            if is_e2e:
                au = rows(docs[0], name, "au_pct")
                self.assertAlmostEqual(case["au"][0]["median"], statistics.median(au), places=9)

    def test_time_metric_order_fallbacks_and_filter(self):
        write_series(self.runs, n=3, dated=False)
        rc, out, _ = self.history(self.runs, "--out", self.out, "--no-png",
                                  "--cases", "^BM_TrainStep")
        self.assertEqual(rc, 0, out)
        self.assertIn("no readable context date", out)
        data = embedded_data(os.path.join(self.out, "history.html"))
        self.assertEqual([r["file"] for r in data["runs"]], ["x.json", "y.json", "z.json"])
        self.assertEqual([c["name"] for c in data["cases"]], ["BM_TrainStep/emulated/real_time"])
        # A case without items_per_second is drawn as its time per iteration in ms.
        doc = make_run([Case("BM_Collate/nhwc", real_ms=0.5, time_unit="us")], reps=3)
        one = os.path.join(self.dir, "one.json")
        save(one, doc)
        rc, out, _ = self.history(one, "--out", self.out, "--no-png", "--time", "cpu")
        self.assertEqual(rc, 0, out)
        case = embedded_data(os.path.join(self.out, "history.html"))["cases"][0]
        self.assertEqual((case["metric"], case["field"]), ("ms", "cpu_time"))
        cpu = [r["cpu_time"] / 1e3 for r in doc["benchmarks"] if r["run_type"] == "iteration"]
        self.assertAlmostEqual(case["primary"][0]["median"], statistics.median(cpu), places=12)
        self.assertEqual(case["changes"], [])

    def test_a_png_per_case(self):
        write_series(self.runs, n=4)
        rc, out, _ = self.history(self.runs, "--out", self.out, "--cases", "Loader|EndToEnd")
        self.assertEqual(rc, 0, out)
        pngs = sorted(f for f in os.listdir(self.out) if f.endswith(".png"))
        self.assertEqual(len(pngs), 6, pngs)
        self.assertIn("BM_Loader_imagenet_train_workers_2_real_time.png", pngs)
        for f in pngs:
            with open(os.path.join(self.out, f), "rb") as fh:
                head = fh.read(24)
            self.assertEqual(head[:8], b"\x89PNG\r\n\x1a\n", f)
            w, h = struct.unpack(">II", head[16:24])
            self.assertGreater(w, 500)
            self.assertGreater(h, 300)

    # --- paired deltas of compare.sh --ab runs ------------------------------------------

    def test_paired_runs_draw_their_deltas_beside_the_series(self):
        write_ab_runs(self.runs)
        rc, out, err = self.history(self.runs, "--out", self.out, "--no-png")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("history: 6 run(s), 9 case(s), 3 change point(s), 2 paired (--ab) "
                      "run(s); wrote", out)
        data = embedded_data(os.path.join(self.out, "history.html"))
        self.assertEqual([r["label"] for r in data["runs"]][AB_TIME:], ["a" * 10, "b" * 10])
        ab = [r["ab"] for r in data["runs"]]
        self.assertEqual(ab[:AB_TIME], [None] * AB_TIME)
        self.assertEqual((ab[AB_TIME]["metric"], ab[AB_TIME]["threshold_pct"],
                          ab[AB_TIME]["blocks"], ab[AB_TIME]["base"]),
                         ("time", 3.0, 5, "base/bench/pipebench"))
        self.assertEqual((ab[AB_INSTR]["metric"], ab[AB_INSTR]["threshold_pct"],
                          ab[AB_INSTR]["simd_path"]), ("instructions", 0.5, "avx2"))
        by_name = {c["name"]: c for c in data["cases"]}
        r, lo, hi = LOADER_PAIRED
        loaders = [n for n in by_name if n.startswith("BM_Loader/")]
        self.assertEqual(len(loaders), 3)
        for name in loaders:
            paired = by_name[name]["paired"]
            self.assertEqual(paired[:AB_TIME] + paired[AB_INSTR:], [None] * (AB_TIME + 1))
            p = paired[AB_TIME]
            self.assertAlmostEqual(p["delta_pct"], (r - 1) * 100, places=9)
            self.assertAlmostEqual(p["lo_pct"], (lo - 1) * 100, places=9)
            self.assertAlmostEqual(p["hi_pct"], (hi - 1) * 100, places=9)
            self.assertEqual((p["metric"], p["verdict"], p["exact"]),
                             ("time", "regression", False))
            # The --ab file is also a run of NEW: its rows are drawn in the series.
            self.assertIsNotNone(by_name[name]["primary"][AB_TIME])
        step = next(c for n, c in by_name.items() if n.startswith("BM_TrainStep"))
        self.assertEqual(step["paired"][AB_TIME]["verdict"], "ok")
        # Cases without a paired ratio have no paired chart.
        self.assertIsNone(next(c for n, c in by_name.items()
                               if n.startswith("BM_Sample"))["paired"])
        # The instruction-count run: an exact point, and its Valgrind rows (500 ms) left
        # out of the unpaired series.
        norm = by_name["BM_Transform/normalize"]
        p = norm["paired"][AB_INSTR]
        self.assertAlmostEqual(p["delta_pct"], (NORMALIZE_PAIRED - 1) * 100, places=9)
        self.assertEqual((p["lo_pct"], p["hi_pct"]), (p["delta_pct"], p["delta_pct"]))
        self.assertEqual((p["metric"], p["exact"]), ("instructions", True))
        self.assertEqual(norm["primary"], [None] * 6)
        paired_lines = [ln for ln in out.splitlines() if ln.startswith("PAIRED ")]
        self.assertEqual(len(paired_lines), 4, out)
        self.assertIn(f"PAIRED {'b' * 10} BM_Transform/normalize: instructions NEW/BASE "
                      "1.0060 (+0.60%, exact instruction count), REGRESSION against the BASE "
                      "it ran beside (base/bench/pipebench)", paired_lines)
        self.assertIn(f"PAIRED {'a' * 10} {loaders[0]}: time NEW/BASE 1.3000 (+30.00%, 95 % "
                      "interval 1.2500..1.3600), REGRESSION", out)

    def test_paired_panel_in_the_png(self):
        write_ab_runs(self.runs)
        rc, out, _ = self.history(self.runs, "--out", self.out, "--cases",
                                  "normalize|^BM_TrainStep")
        self.assertEqual(rc, 0, out)
        sizes = {}
        for f in sorted(os.listdir(self.out)):
            if f.endswith(".png"):
                with open(os.path.join(self.out, f), "rb") as fh:
                    sizes[f] = struct.unpack(">II", fh.read(24)[16:24])
        self.assertEqual(len(sizes), 2, sizes)
        # One panel more than a case without paired runs (4.2 in high, 100 dpi).
        for w, h in sizes.values():
            self.assertGreaterEqual(h, 600)

    def test_a_paired_file_with_a_bad_interval_is_bad_input(self):
        write_ab_runs(self.runs)
        path = os.path.join(self.runs, "ab-time.json")
        doc = load(path)
        doc["cases"][0]["ci_low"] = 1.5  # above its ratio 1.3
        save(path, doc)
        self.assert_bad([self.runs], "ci_low <= ratio <= ci_high")

    # --- bad input ---------------------------------------------------------------------

    def assert_bad(self, args, needle):
        rc, out, err = self.history(*args, "--out", self.out)
        self.assertEqual(rc, 2, out + err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("history: error: ", err)
        self.assertIn(needle, err)
        self.assertNotIn("Traceback", err)

    def test_bad_input_exits_2(self):
        write_series(self.runs, n=2)
        self.assert_bad([os.path.join(self.dir, "missing.json")], "missing.json: no such file")
        bad = os.path.join(self.dir, "bad.json")
        with open(bad, "w") as f:
            f.write('{"benchmarks": [')
        self.assert_bad([self.runs, bad], "bad.json: malformed JSON")
        empty = os.path.join(self.dir, "empty")
        os.mkdir(empty)
        self.assert_bad([empty], "folder holds no *.json run")
        self.assert_bad([self.runs, "--cases", "BM_(("], "not a valid regular expression")
        self.assert_bad([self.runs, "--cases", "^BM_None$"], "no case matches --cases")
        self.assert_bad([self.runs, "--threshold", "-1"], "--threshold must be a number")
        blocker = os.path.join(self.dir, "file")
        open(blocker, "w").close()
        rc, _, err = self.history(self.runs, "--out", os.path.join(blocker, "sub"))
        self.assertEqual(rc, 2, err)
        self.assertIn("cannot write into", err)


HistoryTestRecord0 = record0(HistoryTest)


@unittest.skipIf(CHROMIUM is None, "chromium is absent: the page is not rendered "
                 "(./scripts/setup.sh --history installs it)")
class BrowserTest(unittest.TestCase):
    """The page in Debian's chromium, headless: no script error, every case drawn."""

    HOSTILE = "BM_Evil/</script><script>document.title='pwned'</script>&amp;/real_time"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        runs = os.path.join(d, "runs")
        os.mkdir(runs)
        paths = write_series(runs)
        # One more case, named to break out of the page's script if it were not escaped,
        # missing from run 0 and errored in run 1 (a gap and an error marker).
        for k, path in enumerate(paths[1:], start=1):
            doc = load(path)
            extra = make_run([Case(cls.HOSTILE, real_ms=2.0,
                                   error="bad file x.jpg" if k == 1 else None)], reps=9,
                             seed=k)["benchmarks"]
            doc["benchmarks"].extend(extra)
            save(path, doc)
        cls.out = os.path.join(d, "out")
        rc, out, err = history([runs, "--out", cls.out, "--no-png"])
        assert rc == 0, out + err
        cls.page = os.path.join(cls.out, "history.html")
        cls.data = embedded_data(cls.page)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def chromium(self, page, *args):
        profile = tempfile.mkdtemp(dir=self.tmp.name)
        p = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox",
                            "--no-first-run", f"--user-data-dir={profile}",
                            "--enable-logging=stderr", "--v=0", *args,
                            "file://" + os.path.abspath(page)],
                           capture_output=True, text=True, timeout=120)
        return p

    def dom(self, page):
        p = self.chromium(page, "--dump-dom")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        console = [ln for ln in p.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
        summary = DomSummary()
        summary.feed(p.stdout)
        return summary, console

    def test_page_draws_every_case_without_script_errors(self):
        dom, console = self.dom(self.page)
        self.assertEqual(console, [], "script errors in the console")
        self.assertEqual(dom.root.get("data-render"), "ok", dom.root)
        self.assertEqual(int(dom.root.get("data-cases")), len(self.data["cases"]))
        names = [c["name"] for c in self.data["cases"]]
        self.assertEqual(len(names), 9)
        self.assertEqual([s["name"] for s in dom.sections], names)
        for sec in dom.sections:
            self.assertEqual(sec["h2"], sec["name"])  # text, never markup
            held = N_RUNS - (2 if sec["name"] == self.HOSTILE else 0)
            self.assertEqual(sec["points"][0], held, sec["name"])
            expected = ["regression"] if sec["name"].startswith("BM_Loader/") else []
            self.assertEqual(sec["changes"], expected, sec["name"])
            self.assertEqual(len(sec["points"]), 2 if sec["name"].startswith("BM_EndToEnd/")
                             else 1, sec["name"])

    def test_screenshot(self):
        shot = os.path.join(self.tmp.name, "page.png")
        p = self.chromium(self.page, f"--screenshot={shot}", "--window-size=1200,3000",
                          "--hide-scrollbars")
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        with open(shot, "rb") as f:
            head = f.read(24)
        self.assertEqual(head[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(struct.unpack(">II", head[16:24]), (1200, 3000))
        self.assertGreater(os.path.getsize(shot), 50_000)  # drawn, not a blank page

    def test_a_script_error_is_detected(self):
        # The check above is not vacuous: a page whose data lacks the runs fails to draw,
        # and the DOM and the console say so.
        with open(self.page, encoding="utf-8") as f:
            text = f.read()
        broken = os.path.join(self.tmp.name, "broken.html")
        with open(broken, "w", encoding="utf-8") as f:
            f.write(re.sub(r'(<script id="history-data" type="application/json">).*?(</script>)',
                           r'\1{"title": "t", "cases": []}\2', text, flags=re.S))
        dom, console = self.dom(broken)
        self.assertTrue(dom.root.get("data-render", "").startswith("error: "), dom.root)
        self.assertEqual(dom.sections, [])


@unittest.skipIf(CHROMIUM is None, "chromium is absent: the page is not rendered "
                 "(./scripts/setup.sh --history installs it)")
class PairedBrowserTest(unittest.TestCase):
    """A page with compare.sh --ab runs in Debian's chromium: the paired charts draw."""

    def test_paired_charts_draw(self):
        with tempfile.TemporaryDirectory() as d:
            runs = os.path.join(d, "runs")
            os.mkdir(runs)
            write_ab_runs(runs)
            out = os.path.join(d, "out")
            p = subprocess.run(["/usr/bin/python3", os.path.join(SCRIPTS, "history.py"), runs,
                                "--out", out, "--no-png"], capture_output=True, text=True,
                               timeout=300)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            profile = os.path.join(d, "profile")
            p = subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox",
                                "--no-first-run", f"--user-data-dir={profile}",
                                "--enable-logging=stderr", "--v=0", "--dump-dom",
                                "file://" + os.path.join(out, "history.html")],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr[-3000:])
            console = [ln for ln in p.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
            self.assertEqual(console, [], "script errors in the console")
            dom = DomSummary()
            dom.feed(p.stdout)
        self.assertEqual(dom.root.get("data-render"), "ok", dom.root)
        sections = {s["name"]: s for s in dom.sections}
        self.assertEqual(len(sections), 9)
        for name, sec in sections.items():
            if name.startswith("BM_Loader/"):
                self.assertEqual(sec["paired"], [1], name)  # one paired chart, one point
                self.assertEqual(sec["paired_marks"], [["time", "regression"]], name)
                self.assertEqual(sec["points"][0], AB_INSTR, name)  # the series: runs 0-4
            elif name == "BM_Transform/normalize":
                self.assertEqual(sec["paired"], [1])
                self.assertEqual(sec["paired_marks"], [["instructions", "regression"]])
                self.assertEqual(sec["points"], [])  # its Valgrind rows are not drawn
            elif name.startswith("BM_TrainStep"):
                self.assertEqual(sec["paired_marks"], [["time", "ok"]])
            else:
                self.assertEqual(sec["paired"], [], name)


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        SCRIPTS = sys.argv.pop(1)
    sys.exit(run_tests())
