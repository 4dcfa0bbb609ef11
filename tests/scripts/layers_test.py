"""The house's floors (issue 37): every #include "<folder>/..." of pipebench's C++ and CUDA
sources points to the same folder or one on a floor below, and no file includes itself
back through others (no include cycle). The floors, lowest first:

  model/                     the run record, the case keys, the counter schema, the step model
  device/                    CUDA runtime helpers, streams and events, NVML (nothing of ours)
  transforms/                decode, operators, the registry, device batch operators
  datasets/                  folders, shards, storage, presize, pack
  measure/                   stage timers, thread CPU, the system sampler, region timers, trace
  pipeline/ (and dist/)      sampler, collate, the loader, the training steps, callbacks
  report/                    the verdict: on model/ only (no oneTBB, OpenCV or CUDA)
  bench/run/                 what a run shares: flags, context, budget, output
  bench/cases/               the case families, registered by bench/run/main.cpp
  examples/, tests/          anything

Run: python3 tests/scripts/layers_test.py (ctest: layers).
"""
import os
import re
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".h", ".cpp", ".cu", ".cuh")

# What each folder may include besides itself.
ALLOWED = {
    "model": set(),
    "device": set(),
    "transforms": {"model", "device"},
    "datasets": {"model", "device", "transforms"},
    "measure": {"model", "device", "transforms", "datasets"},
    "pipeline": {"model", "device", "transforms", "datasets", "measure"},
    "report": {"model"},
    "bench/run": {"model", "device", "transforms", "datasets", "measure", "pipeline"},
    "bench/cases": {"model", "device", "transforms", "datasets", "measure", "pipeline", "bench/run"},
}


def floor_of(path):
    """The floor of a repository-relative path ("pipeline/dist/x.h" is pipeline's)."""
    parts = path.split("/")
    if parts[0] == "bench" and len(parts) > 2:
        return "bench/" + parts[1]
    return parts[0]


def sources():
    for floor in ALLOWED:
        for d, _, names in os.walk(os.path.join(ROOT, floor)):
            for name in names:
                if name.endswith(SOURCES):
                    yield os.path.relpath(os.path.join(d, name), ROOT)


def includes(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return [inc for inc in INCLUDE.findall(f.read()) if os.path.exists(os.path.join(ROOT, inc))]


class LayersTest(unittest.TestCase):
    def test_every_include_points_down_or_sideways(self):
        wrong = []
        for path in sources():
            here = floor_of(path)
            for inc in includes(path):
                there = floor_of(inc)
                if there != here and there not in ALLOWED[here]:
                    wrong.append(f"{path} includes {inc} ({here} may include {sorted(ALLOWED[here])})")
        self.assertEqual(wrong, [])

    def test_no_include_cycle(self):
        graph = {p: includes(p) for p in sources()}
        state, cycles = {}, []

        def visit(node, stack):
            state[node] = "open"
            for nxt in graph.get(node, []):
                if state.get(nxt) == "open":
                    cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
                elif nxt not in state:
                    visit(nxt, stack + [nxt])
            state[node] = "done"

        for node in sorted(graph):
            if node not in state:
                visit(node, [node])
        self.assertEqual(cycles, [])

    def test_the_check_sees_a_wrong_include(self):
        # The rule itself: a report file that included the loader would be caught.
        self.assertNotIn(floor_of("pipeline/loader.h"), ALLOWED["report"])
        self.assertEqual(floor_of("pipeline/dist/dist.h"), "pipeline")
        self.assertEqual(floor_of("bench/cases/sample_bench.cpp"), "bench/cases")
        self.assertNotIn("bench/cases", ALLOWED["bench/run"])

    def test_no_source_directly_in_bench(self):
        # bench/ holds its two rooms only: a file beside them would have no floor.
        loose = [f for f in os.listdir(os.path.join(ROOT, "bench")) if f.endswith(SOURCES)]
        self.assertEqual(loose, [], "bench/*.cpp|h belongs in bench/run/ or bench/cases/")

    def test_every_source_folder_is_on_a_floor(self):
        # A new top-level folder with C++ in it must be given a floor here.
        known = set(ALLOWED) | {"bench", "tests", "examples", "python", "build", "data", "docs", "scripts", "cmake"}
        for name in sorted(os.listdir(ROOT)):
            d = os.path.join(ROOT, name)
            if name.startswith(".") or not os.path.isdir(d) or name in known:
                continue
            has_cpp = any(f.endswith(SOURCES) for _, _, fs in os.walk(d) for f in fs)
            self.assertFalse(has_cpp, f"{name}/ holds C++ but has no floor in ALLOWED")


if __name__ == "__main__":
    unittest.main()
