"""Region timers for a Python training loop, in pure Python: pipebench's RegionTimer
(measure/region_timer.h) for a loop pipebench does not run, such as a PyTorch script.

A loop times its phases under fixed keys; write_json() writes the same Google-Benchmark-
shaped JSON as the C++ RegionTimer, as a pipebench run record, and
`pipebench-report regions.json` turns it into a verdict: how much of each step waits for
data, how much computes, and whether the loop is data-bound.

Keys (the C++ RegionTimer's, in its order; see KEYS):
  Epoch     one pass over the data set
  Batch     one whole training step; the report's step time and step count
  Forward   the forward pass and the loss
  Backward  the backward pass and the optimizer step
  IO        waiting for the next batch (next() on the DataLoader's iterator)
  Comm      communication between ranks (an allreduce outside backward)
  ToDevice  the host-to-device copy of the batch
  Other     the rest of the step that you time (logging, metrics, checkpoints)
The report reads IO as data time and Forward + Backward as compute time, per Batch.

Units: every time written is in milliseconds (count is a number of regions). Per key:
count, total_ms, mean_ms (= total_ms / count), p50_ms and p99_ms; percentiles by linear
interpolation between closest ranks (Hyndman and Fan 1996, definition 7; numpy.percentile's
default), as the C++ RegionTimer computes them.

Clock: RegionTimer() picks it once: CUDA events (torch.cuda.Event(enable_timing=True), one
per start and end, recorded on the current stream and synchronised only when results are
read, so timing adds no host-device synchronisation to the loop) when torch imports and
torch.cuda.is_available(); otherwise time.perf_counter_ns() (monotonic). With CUDA events a
region is what the GPU's stream saw between the two marks, so Forward and Backward are the
accelerator's time though kernels launch asynchronously, and IO is the time the stream had
nothing to do while the loop waited. The JSON's context names the clock (region_timer:
"torch.cuda.Event" or "time.perf_counter_ns"). RegionTimer(clock=...) takes another one: a
callable returning integer nanoseconds (time.perf_counter_ns, or a test's fake clock), or an
object with mark(), resolve(), ms_between(a, b) and name (PerfCounterClock, CudaEventClock).

Semantics (as the C++ one): start(key) opens a region and returns a Handle; end(key) closes
the most recently opened region of that key still open, so regions of one key nest and
regions of different keys may overlap; end(handle) closes that region exactly. A region's
time is end minus start of its own marks (no "self time"). Regions still open are not
counted. `with timer.region(key):` opens at entry and closes at exit, also when the body
raises. Not thread-safe: one RegionTimer per thread.

Errors: ValueError for a key that is not one of KEYS (the message names it and lists the
valid ones), for a context entry that would replace one write_json sets or is not a string,
number or boolean, and from stats() for a region of negative or non-finite time (a clock
that went backwards); RuntimeError for end() of a key with no open region or of a handle
already closed; TypeError for a clock that is neither callable nor a clock object; OSError
(naming the file) when write_json cannot write.

Usage, a torch DataLoader loop (`sys.path.insert(0, "<repo>/python")` or PYTHONPATH):

    from pipebench_regions import RegionTimer

    timer = RegionTimer()                          # CUDA events on a GPU, else perf_counter_ns
    for epoch in range(epochs):
        with timer.region("Epoch"):
            batches = iter(loader)
            for _ in range(len(loader)):
                with timer.region("Batch"):
                    with timer.region("IO"):
                        images, labels = next(batches)
                    with timer.region("ToDevice"):
                        images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
                    with timer.region("Forward"):
                        loss = criterion(model(images), labels)
                    with timer.region("Backward"):
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
    timer.set_context("batch_size", loader.batch_size)
    timer.write_json("regions.json")               # then: pipebench-report regions.json
"""
import json
import math
import numbers
import os
import time

__all__ = ["KEYS", "RegionTimer", "RegionStats", "Handle", "PerfCounterClock", "CudaEventClock",
           "default_clock", "percentile"]

#: The keys, in the C++ Region enum's order.
KEYS = ("Epoch", "Batch", "Forward", "Backward", "IO", "Comm", "ToDevice", "Other")
#: model/constants.h kRecordVersion: the run record version written.
RECORD_VERSION = 1
LIBRARY = "pipebench_regions.py"
_RESERVED_CONTEXT = ("library", "region_timer", "pipebench_record")


def _check_key(key):
    if not isinstance(key, str) or key not in KEYS:
        raise ValueError(f"unknown region key {key!r}: the keys are {', '.join(KEYS)}")
    return key


class PerfCounterClock:
    """time.perf_counter_ns(): marks are integer nanoseconds of a monotonic clock."""

    name = "time.perf_counter_ns"

    def mark(self):
        return time.perf_counter_ns()

    def resolve(self):
        pass

    def ms_between(self, a, b):
        return (b - a) / 1e6


class CudaEventClock:
    """torch.cuda.Event(enable_timing=True) recorded at every mark on `stream` (None: the
    current stream of the current device); resolve() synchronises the device, ms_between is
    Event.elapsed_time. The events live as long as the regions that hold them (clear() drops
    them). One device per timer."""

    name = "torch.cuda.Event"

    def __init__(self, stream=None):
        import torch  # noqa: PLC0415 - only where this clock is used

        if not torch.cuda.is_available():
            raise RuntimeError("CudaEventClock: torch.cuda.is_available() is False")
        self._torch = torch
        self._stream = stream

    def mark(self):
        ev = self._torch.cuda.Event(enable_timing=True)
        if self._stream is None:
            ev.record()
        else:
            ev.record(self._stream)
        return ev

    def resolve(self):
        self._torch.cuda.synchronize()

    def ms_between(self, a, b):
        return float(a.elapsed_time(b))


class _CallableClock:
    """A callable returning integer nanoseconds (time.perf_counter_ns, a test's fake)."""

    def __init__(self, fn):
        self._fn = fn
        module = getattr(fn, "__module__", None)
        qualname = getattr(fn, "__qualname__", None)
        if qualname:
            self.name = f"{module}.{qualname}" if module else qualname
        else:
            self.name = type(fn).__name__

    def mark(self):
        return self._fn()

    def resolve(self):
        pass

    def ms_between(self, a, b):
        return (b - a) / 1e6


def default_clock():
    """CudaEventClock when torch imports and torch.cuda.is_available(), else
    PerfCounterClock."""
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return PerfCounterClock()
    if torch.cuda.is_available():
        return CudaEventClock()
    return PerfCounterClock()


def _as_clock(clock):
    if clock is None:
        return default_clock()
    if all(hasattr(clock, a) for a in ("mark", "resolve", "ms_between", "name")):
        return clock
    if callable(clock):
        return _CallableClock(clock)
    raise TypeError(f"RegionTimer: clock must be None, a callable returning nanoseconds or a "
                    f"clock object (mark, resolve, ms_between, name), got {type(clock).__name__}")


def percentile(sorted_values, q):
    """Hyndman-Fan definition 7 percentile (q in [0, 1], clamped) of an ascending sequence;
    0 when empty. The C++ region_percentile, step for step."""
    n = len(sorted_values)
    if n == 0:
        return 0.0
    h = (float(n) - 1) * min(max(q, 0.0), 1.0)
    lo = int(math.floor(h))
    hi = min(lo + 1, n - 1)
    return sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo])


class RegionStats:
    """One key's results, milliseconds (count: regions)."""

    __slots__ = ("key", "count", "total_ms", "mean_ms", "p50_ms", "p99_ms")

    def __init__(self, key, count, total_ms, mean_ms, p50_ms, p99_ms):
        self.key, self.count, self.total_ms = key, count, total_ms
        self.mean_ms, self.p50_ms, self.p99_ms = mean_ms, p50_ms, p99_ms

    def __repr__(self):
        return (f"RegionStats(key={self.key!r}, count={self.count}, total_ms={self.total_ms}, "
                f"mean_ms={self.mean_ms}, p50_ms={self.p50_ms}, p99_ms={self.p99_ms})")


class Handle:
    """An open region's id, from RegionTimer.start()."""

    __slots__ = ("id", "key")

    def __init__(self, id_, key):
        self.id, self.key = id_, key

    def __repr__(self):
        return f"Handle({self.id}, {self.key!r})"


class _Scope:
    """`with timer.region(key):` the region from __enter__ to __exit__."""

    __slots__ = ("_timer", "_key", "_handle")

    def __init__(self, timer, key):
        self._timer, self._key, self._handle = timer, key, None

    def __enter__(self):
        self._handle = self._timer.start(self._key)
        return self._handle

    def __exit__(self, *exc):
        h, self._handle = self._handle, None
        if h is not None and h.id in self._timer._open_key:  # closed through end(key): as is
            self._timer.end(h)
        return False


class RegionTimer:
    """Times a loop's regions under KEYS; see the module's docstring."""

    def __init__(self, clock=None):
        self._clock = _as_clock(clock)
        self._keys = []       # first-start order
        self._open = {}       # key -> [(id, start mark)], in start order
        self._open_key = {}   # handle id -> key
        self._closed = []     # (key, start mark, end mark)
        self._context = {}
        self._next_id = 0

    @property
    def clock_name(self):
        """The clock's name, as the JSON's context region_timer."""
        return self._clock.name

    def start(self, key):
        """Opens a region of `key` and returns its Handle."""
        _check_key(key)
        if key not in self._open:
            self._keys.append(key)
            self._open[key] = []
        hid = self._next_id
        self._next_id += 1
        self._open_key[hid] = key
        self._open[key].append((hid, self._clock.mark()))  # the mark last
        return Handle(hid, key)

    def end(self, key_or_handle):
        """Closes the innermost open region of a key, or exactly the region of a Handle."""
        mark = self._clock.mark()  # first: the lookup is not inside the region
        if isinstance(key_or_handle, Handle):
            hid = key_or_handle.id
            key = self._open_key.get(hid)
            if key is None:
                raise RuntimeError(f"RegionTimer.end(handle {hid}): not an open region "
                                   "(closed already, or from another timer)")
            stack = self._open[key]
            at = next(i for i, (i_id, _) in enumerate(stack) if i_id == hid)
        else:
            key = _check_key(key_or_handle)
            stack = self._open.get(key)
            if not stack:
                raise RuntimeError(f"RegionTimer.end({key!r}): no open region of that key")
            at = len(stack) - 1
        hid, start = stack.pop(at)
        del self._open_key[hid]
        self._closed.append((key, start, mark))

    stop = end

    def region(self, key):
        """A context manager timing its body as a region of `key` (ValueError at once for
        an unknown key)."""
        return _Scope(self, _check_key(key))

    def stats(self):
        """Per key in first-start order (keys without a closed region left out), a list of
        RegionStats. Resolves the clock (CUDA: synchronises the device)."""
        self._clock.resolve()
        ms = {k: [] for k in self._keys}
        for key, a, b in self._closed:
            ms[key].append(self._clock.ms_between(a, b))
        out = []
        for key in self._keys:
            v = sorted(ms[key])
            if not v:
                continue
            if not all(math.isfinite(x) and x >= 0 for x in v):
                bad = next(x for x in v if not (math.isfinite(x) and x >= 0))
                raise ValueError(f"RegionTimer: a region of {key!r} lasted {bad} ms "
                                 "(the clock went backwards or is not finite)")
            total = 0.0
            for x in v:  # in ascending order, as the C++ sum
                total += x
            count = len(v)
            out.append(RegionStats(key, count, total, total / count, percentile(v, 0.50),
                                   percentile(v, 0.99)))
        return out

    def set_context(self, key, value):
        """An entry of the JSON's context (a string, number or boolean); the report reads
        batch_size (an integer, images per batch) for images/s."""
        if not isinstance(key, str) or key in _RESERVED_CONTEXT:
            raise ValueError(f"RegionTimer.set_context: {key!r} is not a context key you may "
                             f"set (write_json sets {', '.join(_RESERVED_CONTEXT)})")
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            value = int(value)  # numpy integers too
        elif isinstance(value, numbers.Real) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, (str, int, float, bool)) or (
                isinstance(value, float) and not math.isfinite(value)):
            raise ValueError(f"RegionTimer.set_context({key!r}): the value must be a string, "
                             f"a finite number or a boolean, got {value!r}")
        self._context[key] = value

    def to_json(self):
        """The document write_json writes, as a dict."""
        ctx = dict(self._context)
        ctx["library"] = LIBRARY
        ctx["region_timer"] = self._clock.name
        ctx["pipebench_record"] = RECORD_VERSION
        rows = []
        for s in self.stats():
            name = "RegionTimer/" + s.key
            key = {"name": name, "family": "Region", "pipeline": "", "variant": "",
                   "variant_param": "", "baseline": "", "layout": "", "cache": "", "shards": 0,
                   "workers": 0, "callbacks": "", "op": s.key, "detail": "",
                   "timed_by": "manual_time"}
            rows.append({"name": name, "key": key, "run_name": name, "run_type": "iteration",
                         "repetitions": 1, "repetition_index": 0, "threads": 1,
                         "iterations": s.count, "real_time": s.mean_ms, "cpu_time": s.mean_ms,
                         "time_unit": "ms", "count": s.count, "total_ms": s.total_ms,
                         "mean_ms": s.mean_ms, "p50_ms": s.p50_ms, "p99_ms": s.p99_ms})
        return {"context": ctx, "benchmarks": rows}

    def write_json(self, path):
        """Writes to_json() to `path` (strict JSON, keys sorted, 2-space indent, as the C++
        RegionTimer). Then: pipebench-report PATH."""
        text = json.dumps(self.to_json(), indent=2, sort_keys=True, allow_nan=False) + "\n"
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(text)

    def clear(self):
        """Forgets every closed region (open ones stay open)."""
        self._closed.clear()
