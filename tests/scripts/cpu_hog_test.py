#!/usr/bin/env python3
"""A CPU hog started mid-case (issue 34's Targets/Tests, issue 37 item 6): on a real run,
one BM_EndToEnd case on a heavy-tailed mix (small images plus two large originals, as
tail_mix_test.py makes it), with the loader's workers and two busy processes pinned to the
same cores (at most 2), the hog released after the case's loader-alone window before the
loop and before the one after it:
  - the JSON record's two loader-alone windows (data_ms, their mean, and data_drift_pct,
    after against before) show the hog's slowdown, measured, not assumed;
  - pipebench-report raises the loader-drift warning (kind loader_drift) on that case, naming
    the drift that the samples' own work does not explain (data_drift_pct corrected by
    data_work_drift_pct, as report/trust.cpp computes it), in its JSON and its text;
  - the run's context is flagged busy (busy_machine, bench/run/machine.h): other processes'
    CPU over the run covers the CPU the hog's processes really used, and the report's
    busy-machine warning names that figure;
  - the control: the same run without the hog raises no loader-drift warning (issue 34 item
    3: a heavy-tailed dataset on a quiet machine is not drift). No other test asserts that
    on a real run (tail_mix_test.py runs a mix but asserts no trust warning).

When the hog starts: nothing pipebench prints marks the case's phases (the progress line is
per case, the trace is written at the end), so the test watches the case's thread. An
end-to-end case (end_to_end_bench.cpp, EndToEndCase) runs on pipebench's main thread: the
loader alone (the thread waits for batches, in futex), then the step on a resident batch
(measure_parts: the emulated step sleeps compute_ms, 11 times, in clock_nanosleep), then
the loop (the emulated step sleeps whenever a batch comes within compute_ms of the last),
then the loader alone again. Nothing before that sleeps on that thread (checked against
--trace with a 100 ms step: its first nanosleep began within 10 ms of the window's end, as
the workers, their prefetch queue full, went idle for the step's 1.1 s of timing), so the
first time /proc/<pid>/syscall (or wchan) shows it in nanosleep, the window before the
loop is over and the one after has not begun: the loop of --steps batches is still to run.
The hog's two processes are started beforehand, blocked on a pipe, and released
RELEASE_DELAY_S later (past the step's own timing, so that compute_ms is not the hog's).
The timing is checked after the run: the release came later than the window before could
have ended (STEPS x its data_ms) and earlier than the window after began (the run's last
STEPS x its data_ms); a hog in the window before would also leave little slowdown after.
Where other processes' load (their CPU during the run less the hog's own, measured) is
over kBusyCores, it can change between the windows by as much as the hog (one hog run here
measured 1.09x: the others' builds ended as the hog began, and the samples' CPU fell 28 %
with them); such a run that missed MIN_SLOWDOWN is run once more (HOG_ATTEMPTS), and the
last one is judged.

The control on a shared machine: another process's load that falls in one window and not
the other is drift, and the warning is right to name it (on this project's shared 2-core
host, busy with other builds, control runs drifted by -30 to +38 % with no hog, net of the
samples' own work). So the control is judged only on a quiet run: one where other
processes used at most kBusyCores (0.25) on average, as pipebench measured them during the
run (other_processes_cpu_cores; not busy_machine, whose other half, a load average above
the cores at the start, trails by a minute and flags a quiet run that starts right after
other tests). A quiet run that
drifted is retried (at most CONTROL_ATTEMPTS runs): a systematic false alarm (the windows'
order, the mix's heterogeneity taken for drift) fails every attempt, a burst of load one.
After a busy run the control is not judged (stderr says so), and what holds anyway is
asserted: a run flagged busy carries the busy-machine warning.

Exits 77 (skipped) where the case's thread cannot be watched (/proc/<pid>/syscall and wchan
unreadable). Figures go to stderr. Temp files are removed; the hog is killed in a finally."""
import argparse
import ctypes
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from ctest_unittest import run_tests

ARGS = None
CASE_PREFIX = "BM_EndToEnd/imagenet_train/emulated/workers:"
BATCH = 32
STEPS = 80
# Well below the loader's time per batch, so that the loop is data-bound and drift matters:
# at batch 16 and 4 ms an Intel Xeon host's loader took 3.3 ms per batch (an AMD EPYC one's
# about 10), the control came out compute-bound and a clean-clone CI run failed. At batch 32
# and 2 ms: 6.6 ms against 2 there.
COMPUTE_MS = 2
CONTROL_ATTEMPTS = 3
HOG_ATTEMPTS = 2
BUSY_CORES = 0.25  # bench/run/machine.h kBusyCores
# The hog's release, after the case's thread first slept: past the step's timing on a
# resident batch (11 x COMPUTE_MS), so that compute_ms is the step's, into the loop.
RELEASE_DELAY_S = 0.15
RUN_TIMEOUT_S = 120
HOG_PROCESSES = 2
# The loader-alone window after the loop against before it, under the hog: 2 busy
# processes beside 2 workers on the same 2 cores halve the workers' share, 2x on an idle
# machine; where other work already shares the cores the hog takes a smaller part of them
# (1.6 to 3.6x measured on this project's shared 2-core host, busy with other builds).
# Asserted at least this, ten times the warning's 5 %.
MIN_SLOWDOWN = 1.5
# ... and the part of it that the samples' own CPU does not explain (the warning's figure),
# four times the warning's 5 %.
MIN_UNEXPLAINED_PCT = 20
# Sleep syscalls by architecture (clock_nanosleep, nanosleep).
SLEEP_SYSCALLS = {"x86_64": {230, 35}, "aarch64": {115, 101}, "arm64": {115, 101}}
LIBC = ctypes.CDLL(None, use_errno=True)


def run(*cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=240, **kw)


def sleeping(pid):
    """True / False: the main thread of pid is / is not in a nanosleep; None: unreadable."""
    known = None
    try:
        with open("/proc/%d/syscall" % pid) as f:
            nr = f.read().split()
        if nr and nr[0].isdigit() and platform.machine() in SLEEP_SYSCALLS:
            if int(nr[0]) in SLEEP_SYSCALLS[platform.machine()]:
                return True
            known = False
        elif nr:
            known = False  # "running", "-1 ...": not in a syscall
    except OSError:
        pass
    try:
        with open("/proc/%d/wchan" % pid) as f:
            wchan = f.read()
        if "nanosleep" in wchan:
            return True
        if wchan and wchan != "0":
            known = False
    except OSError:
        pass
    return known


def child_setup(cpus):
    """For a child (pipebench, a hog process): pinned to `cpus`, and killed if the test dies
    (PR_SET_PDEATHSIG), so that no hog outlives a test that ctest timed out."""
    def setup():
        os.sched_setaffinity(0, cpus)
        LIBC.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    return setup


class Hog:
    """HOG_PROCESSES busy shell loops pinned to `cpus`, each blocked on its stdin until
    release()."""

    def __init__(self, cpus):
        self.procs = []
        self.released_at = None
        try:
            for _ in range(HOG_PROCESSES):
                self.procs.append(subprocess.Popen(
                    ["/bin/sh", "-c", "read go; while :; do :; done"], stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=child_setup(cpus)))
        except BaseException:
            self.stop()
            raise

    def release(self):
        self.released_at = time.monotonic()
        for p in self.procs:
            p.stdin.write(b"go\n")
            p.stdin.flush()

    def stop(self):
        """Kills every hog process; returns their CPU seconds (user + system). Never polled
        before: the wait here reaps them, with their usage."""
        cpu = 0.0
        for p in self.procs:
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _, _, usage = os.wait4(p.pid, 0)
            cpu += usage.ru_utime + usage.ru_stime
            p.returncode = -signal.SIGKILL
            p.stdin.close()
        self.procs = []
        return cpu


class Run:
    """One pipebench run of the case, its record and its report."""

    def __init__(self, tmp, name, data, cpus, hog=None):
        self.out = os.path.join(tmp, name + ".json")
        cmd = [ARGS.pipebench, "--data=" + data, "--batch=%d" % BATCH, "--workers=%d" % len(cpus),
               "--steps=%d" % STEPS, "--compute-ms=%g" % COMPUTE_MS, "--tail-fixes=off",
               "--presize=off", "--benchmark_filter=^%s%d/iter" % (CASE_PREFIX, len(cpus)),
               "--benchmark_out=" + self.out, "--benchmark_out_format=json"]
        self.started = time.monotonic()
        self.slept_after_s = None  # when the case's thread was first seen asleep
        self.released_after_s = None
        self.hog_cpu_s = None
        with tempfile.TemporaryFile(dir=tmp) as log:
            proc = subprocess.Popen([str(c) for c in cmd], stdout=log, stderr=subprocess.STDOUT,
                                    preexec_fn=child_setup(cpus))
            try:
                watched = False
                while proc.poll() is None:
                    if time.monotonic() - self.started > RUN_TIMEOUT_S:
                        raise AssertionError("pipebench ran past %d s" % RUN_TIMEOUT_S)
                    if hog is not None and hog.released_at is None:
                        if self.slept_after_s is None:
                            s = sleeping(proc.pid)
                            watched = watched or s is not None
                            if s:
                                self.slept_after_s = time.monotonic() - self.started
                        elif time.monotonic() - self.started >= self.slept_after_s + RELEASE_DELAY_S:
                            hog.release()
                            self.released_after_s = hog.released_at - self.started
                        time.sleep(0.001)
                    else:
                        time.sleep(0.02)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                if hog is not None:
                    self.hog_cpu_s = hog.stop()
            self.wall_s = time.monotonic() - self.started
            log.seek(0)
            self.log = log.read().decode(errors="replace")
        assert hog is None or watched, "the case's thread could not be watched: " + self.log[-2000:]
        assert proc.returncode == 0, self.log[-3000:]
        if hog is not None:
            assert hog.released_at is not None, "the case's thread never slept: " + self.log[-2000:]
        with open(self.out) as f:
            doc = json.load(f)
        self.context = doc["context"]
        self.row = next(b for b in doc["benchmarks"] if b["name"].startswith(CASE_PREFIX))
        self.case = self.row["name"].split("/iterations:")[0]
        r = run(ARGS.report, self.out, "--json")
        assert r.returncode == 0, r.stderr
        self.report = json.loads(r.stdout)
        r = run(ARGS.report, self.out)
        assert r.returncode == 0, r.stderr
        self.text = r.stdout

    # The JSON's figures: data_ms is the two windows' mean (the same number of batches each),
    # data_drift_pct after against before.
    @property
    def drift_pct(self):
        return self.row["data_drift_pct"]

    @property
    def before_ms(self):
        return 2 * self.row["data_ms"] / (2 + self.drift_pct / 100)

    @property
    def after_ms(self):
        return self.before_ms * (1 + self.drift_pct / 100)

    @property
    def unexplained_pct(self):
        """The drift that the samples' own CPU does not explain (report/trust.cpp)."""
        work = self.row.get("data_work_drift_pct")
        if work is None or work <= -100:
            return self.drift_pct
        return 100 * ((1 + self.drift_pct / 100) / (1 + work / 100) - 1)

    @property
    def slowdown(self):
        return self.after_ms / self.before_ms

    @property
    def background_cores(self):
        """Other processes' CPU during the run, the hog's own left out, cores."""
        window = float(self.context["load_window_s"])
        others = float(self.context["other_processes_cpu_cores"]) * window
        return max(0.0, others - (self.hog_cpu_s or 0.0)) / window

    @property
    def busy(self):
        return self.context.get("busy_machine") in (True, "true")

    @property
    def quiet(self):
        """Other processes used at most kBusyCores during the run (bench/run/machine.h)."""
        return float(self.context["other_processes_cpu_cores"]) <= BUSY_CORES

    def warnings(self, kind):
        return [w for w in self.report["trust_warnings"] if w["kind"] == kind]

    def summary(self):
        return ("before %.2f ms, after %.2f ms per batch (x%.2f; data_drift_pct %+.1f, "
                "data_work_drift_pct %+.1f, unexplained %+.1f %%), compute %.2f ms, other processes "
                "%s cores, busy %s, wall %.1f s" % (
                    self.before_ms, self.after_ms, self.after_ms / self.before_ms, self.drift_pct,
                    self.row.get("data_work_drift_pct", float("nan")), self.unexplained_pct,
                    self.row["compute_ms"], self.context.get("other_processes_cpu_cores"),
                    self.context.get("busy_machine"), self.wall_s))


class CpuHog(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="pipebench-cpuhog-")
        try:
            cls.cpus = set(sorted(os.sched_getaffinity(0))[:2])
            cls.data = os.path.join(cls.tmp, "mix")
            big = os.path.join(cls.tmp, "big")
            r = run(ARGS.pipebench_data, "synthetic", cls.data, "--count", "62", "--classes", "2",
                    "--width", "128", "--height", "96")
            assert r.returncode == 0, r.stderr
            r = run(ARGS.pipebench_data, "synthetic", big, "--count", "2", "--classes", "2",
                    "--width", "1600", "--height", "1200", "--seed", "7")
            assert r.returncode == 0, r.stderr
            for folder in sorted(os.listdir(big)):
                for name in sorted(os.listdir(os.path.join(big, folder))):
                    shutil.copy(os.path.join(big, folder, name),
                                os.path.join(cls.data, folder, "big_" + name))
            shutil.rmtree(big)
            # The control first, while no hog has run.
            cls.controls = []
            for k in range(CONTROL_ATTEMPTS):
                c = Run(cls.tmp, "control%d" % k, cls.data, cls.cpus)
                cls.controls.append(c)
                print("cpu_hog: control %d: %s" % (k, c.summary()), file=sys.stderr)
                if not c.quiet or not c.warnings("loader_drift"):
                    break  # judged and passed, or not to be judged
            for k in range(HOG_ATTEMPTS):
                hog = Hog(cls.cpus)
                try:
                    cls.hogged = Run(cls.tmp, "hog%d" % k, cls.data, cls.cpus, hog)
                finally:
                    hog.stop()
                h = cls.hogged
                print("cpu_hog: hog %d released %.2f s into the run; hog CPU %.2f s, other load "
                      "%.2f cores beside it; %s" % (k, h.released_after_s, h.hog_cpu_s,
                                                   h.background_cores, h.summary()), file=sys.stderr)
                if h.slowdown >= MIN_SLOWDOWN or h.background_cores <= BUSY_CORES:
                    break  # the run to judge: slowed, or on a machine with no one else to blame
        except BaseException:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_the_hog_slowed_the_loader_after_the_loop(self):
        h = self.hogged
        self.assertGreaterEqual(h.slowdown, MIN_SLOWDOWN, h.summary())
        # Not the samples' own work: the heterogeneity correction leaves the hog's slowdown
        # standing (issue 34: the hog "still raises" the warning on a heavy-tailed mix).
        self.assertGreater(h.unexplained_pct, MIN_UNEXPLAINED_PCT, h.summary())

    def test_the_drift_warning_names_the_drift(self):
        h = self.hogged
        drift = h.warnings("loader_drift")
        self.assertEqual([w["case"] for w in drift], [h.case], h.report["trust_warnings"])
        figure = "was %.1f %% slower after for the same work per sample" % h.unexplained_pct
        self.assertIn(figure, drift[0]["text"])
        line = next((l for l in h.text.splitlines() if "Warning: Loader drift (%s)" % h.case in l), "")
        self.assertIn(figure, line, h.text)

    def test_the_busy_machine_warning_sees_the_hog(self):
        h = self.hogged
        self.assertTrue(h.busy, h.context)
        others = float(h.context["other_processes_cpu_cores"])
        window = float(h.context["load_window_s"])
        # Other processes' CPU over the run covers the hog's (it ran a little past the run's
        # window: pipebench writing its outputs, the test killing it).
        self.assertGreaterEqual(others * window, 0.8 * h.hog_cpu_s, h.context)
        busy = h.warnings("busy_machine")
        self.assertEqual(len(busy), 1, h.report["trust_warnings"])
        figure = "other processes used %.2f cores on average (of %.1f)" % (
            others, float(h.context["cores_available"]))
        self.assertIn(figure, busy[0]["text"])
        self.assertIn("Warning: Busy machine: The machine was busy during the run: " + figure, h.text)

    def test_the_control_raises_no_drift_warning_on_a_quiet_machine(self):
        # A run flagged busy says so: a drift warning there comes with the busy-machine one.
        for c in self.controls:
            if c.busy:
                self.assertEqual(len(c.warnings("busy_machine")), 1, c.report["trust_warnings"])
        if not self.controls[-1].quiet:  # the attempts stop at the first busy one
            print("cpu_hog: control not judged: other processes used %.2f cores during the run "
                  "(over %.2f)" % (float(self.controls[-1].context["other_processes_cpu_cores"]),
                                   BUSY_CORES), file=sys.stderr)
            return
        judged = self.controls
        passed = [c for c in judged if not c.warnings("loader_drift")]
        self.assertTrue(passed, "every control run on a quiet machine warned of drift: " +
                        "; ".join(c.summary() for c in judged))
        c = passed[0]
        self.assertLessEqual(abs(c.unexplained_pct), 5.0, c.summary())
        self.assertNotIn("Loader drift", c.text)
        # The check applied: data-bound, a drift over 5 % would have been named.
        self.assertGreater(c.row["data_ms"], c.row["compute_ms"], c.summary())

    def test_the_hog_was_released_between_the_windows(self):
        # Released when the case's thread first slept: after the window before the loop
        # (which alone took STEPS x before_ms from the run's start) and before the window
        # after it (the run's last STEPS x after_ms).
        h = self.hogged
        self.assertGreaterEqual(h.released_after_s, STEPS * h.before_ms / 1e3, h.summary())
        self.assertLessEqual(h.released_after_s + STEPS * h.after_ms / 1e3, h.wall_s, h.summary())


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--pipebench", required=True)
    p.add_argument("--report", required=True)
    p.add_argument("--pipebench-data", required=True)
    ARGS, rest = p.parse_known_args()
    # A terminated test unwinds (hog killed, temp files removed); a killed one takes its
    # children with it (child_setup).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("cpu_hog: terminated"))
    # Can a sleeping child be seen sleeping here (/proc/<pid>/syscall or wchan)?
    child = subprocess.Popen(["sleep", "5"])
    try:
        seen = None
        for _ in range(200):
            seen = sleeping(child.pid)
            if seen:
                break
            time.sleep(0.005)
    finally:
        child.kill()
        child.wait()
    if not seen:
        print("cpu_hog: skipped: a sleeping process's syscall cannot be read here", file=sys.stderr)
        sys.exit(77)
    sys.exit(run_tests(rest))


if __name__ == "__main__":
    main()
