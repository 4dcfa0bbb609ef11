"""pbgate.blocks - what the gates share to run two builds (pbgate.ab, the time gate;
pbgate.instr, the instruction gate): checking the binaries, the synthetic dataset, listing
and filtering their cases, the contexts that must agree, the environment without the test
hook, and the driver that runs a gate in a temporary folder and maps its failures to exit
statuses (0 pass, 1 regression, 2 bad input, 3 inconclusive).
"""

import os
import shutil
import subprocess
import sys
import tempfile

from .record import BadInput, context, context_mismatches

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_BAD_INPUT = 2
EXIT_INCONCLUSIVE = 3
VERSION_KEYS = ("pipebench_version", "pipebench_record")
# Flags the gates set themselves on every block.
OWN_FLAGS = ("--data", "--benchmark_filter", "--benchmark_min_time", "--benchmark_out",
             "--benchmark_out_format", "--benchmark_list_tests", "--benchmark_format",
             "--budget")
# pipebench's --budget: a paired BM_Sample case repeats its round of images for a fifth of
# it, so the work in its one iteration depends on time (at the default 8 s a block's
# paired case held about ten rounds, one more or less from block to block, and seven such
# cases took 11 of a block's 16 s). The smallest budget pipebench takes: one round, always,
# on any dataset whose round takes 20 ms or more; a case that still ran several rounds is
# timed per round (its paired_rounds counter).
FIXED_WORK_FLAGS = ("--budget=0.1",)
HOOK_VAR = "PIPEBENCH_TEST_SLOWDOWN"


def log(msg):
    print(f"ab: {msg}", file=sys.stderr, flush=True)


def fixed_work_flags(binary):
    """FIXED_WORK_FLAGS this build knows (its --help lists them): a pipebench from before
    --budget repeats no round and needs none."""
    p = subprocess.run([binary, "--help"], capture_output=True, text=True, env=child_env())
    return [f for f in FIXED_WORK_FLAGS if f.split("=", 1)[0] + "=" in p.stdout]


def case_filter(names):
    """A --benchmark_filter (ECMAScript regex, Google Benchmark's) selecting exactly these
    case names."""
    # ECMAScript's syntax characters but "]" and "}", which are literals outside a class
    # and which libstdc++'s std::regex refuses escaped ("\]" matches nothing).
    syntax = set("^$\\.*+?()[{|")
    esc = ("".join("\\" + ch if ch in syntax else ch for ch in n) for n in names)
    return "^(" + "|".join(esc) + ")$"


def child_env():
    env = dict(os.environ)
    env.pop(HOOK_VAR, None)
    return env


def check_binary(path, label):
    if not os.path.exists(path):
        raise BadInput(f"{label} {path}: no such file")
    if not os.path.isfile(path):
        raise BadInput(f"{label} {path}: not a regular file")
    if not os.access(path, os.X_OK):
        raise BadInput(f"{label} {path}: not executable")


def data_tool(binary):
    """The pipebench-data of a build tree: BIN's ../datasets/pipebench-data."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(binary)))
    tool = os.path.join(root, "datasets", "pipebench-data")
    return tool if os.path.isfile(tool) and os.access(tool, os.X_OK) else None


def make_dataset(base, new, folder, images):
    """A synthetic dataset of `images` JPEGs of 500x375 in 2 classes in `folder`, made by
    the pipebench-data beside BASE (else NEW); BadInput when neither has one."""
    tool = data_tool(base) or data_tool(new)
    if tool is None:
        raise BadInput(f"no datasets/pipebench-data beside {base} or {new} to make the "
                       "synthetic dataset; pass --data DIR")
    p = subprocess.run([tool, "synthetic", folder, "--count", str(images), "--classes", "2"],
                       capture_output=True, text=True, env=child_env())
    if p.returncode != 0:
        raise BadInput(f"{tool} synthetic failed (exit {p.returncode}): "
                       f"{(p.stderr or p.stdout).strip()[-500:]}")
    log(f"dataset: {p.stdout.strip()}")
    return folder


def list_cases(binary, data, filt, extra):
    cmd = [binary, f"--data={data}", f"--benchmark_filter={filt}",
           "--benchmark_list_tests=true", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, env=child_env())
    names = [ln.strip() for ln in p.stdout.splitlines() if ln.strip()]
    if p.returncode != 0 and not names:
        raise BadInput(f"{binary} --benchmark_list_tests failed (exit {p.returncode}): "
                       f"{(p.stderr or p.stdout).strip()[-500:]}")
    return names


def check_case_sets(base_cases, new_cases, filt):
    only_base = [n for n in base_cases if n not in set(new_cases)]
    only_new = [n for n in new_cases if n not in set(base_cases)]
    if only_base or only_new:
        parts = []
        if only_base:
            parts.append(f"only in BASE: {', '.join(only_base)}")
        if only_new:
            parts.append(f"only in NEW: {', '.join(only_new)}")
        raise BadInput(f"the two builds select different cases with --filter {filt!r}: "
                       f"{'; '.join(parts)}. Narrow --filter to the cases both have")
    if not base_cases:
        raise BadInput(f"no case matches --filter {filt!r}")


class BlockFailed(Exception):
    def __init__(self, side, msg):
        super().__init__(msg)
        self.side = side


def check_contexts(base_doc, new_doc, force):
    """Versions and measured-thing keys of the first A and B blocks; BadInput unless
    --force (then a warning)."""
    a, b = context(base_doc), context(new_doc)
    differ = [(k, a.get(k), b.get(k)) for k in VERSION_KEYS if a.get(k) != b.get(k)]
    what = [f"{k} differs (BASE {va!r}, NEW {vb!r})" for k, va, vb in differ]
    mism, _ = context_mismatches(a, b)
    what += [f"{k} differs (BASE {va!r}, NEW {vb!r})" for k, va, vb in mism]
    if what:
        if not force:
            kind = ("the builds are different pipebench versions" if differ
                    else "the builds measure different things")
            raise BadInput(f"{kind}: {'; '.join(what)}. Compare two builds of the same "
                           "pipebench version on the same data and flags, or pass --force")
        log(f"warning: comparing builds that differ (--force): {'; '.join(what)}")


def int_option(value, ok, message):
    """int(value) when ok(it), else BadInput(message, and what was given)."""
    try:
        v = int(value)
    except ValueError:
        v = None
    if v is None or not ok(v):
        raise BadInput(f"{message}, got {value!r}")
    return v


def seconds_option(value, flag):
    """float(value) when it is a number of seconds > 0, else BadInput naming `flag`."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = None
    if v is None or not v > 0:
        raise BadInput(f"{flag} must be a number of seconds > 0")
    return v


def run_gate(args, run_fn, report_fn, prefix, keep_fn):
    """Both gates' driver: run_fn(args, work) in a temporary folder, report_fn(args, *out);
    bad input and a failed BASE block exit 2, a failed NEW block 1; with --keep,
    keep_fn(args.keep, work) copies what is worth keeping before the folder goes."""
    work = tempfile.mkdtemp(prefix=prefix)
    try:
        try:
            out = run_fn(args, work)
        except BadInput as e:
            print(f"ab: error: {e}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except BlockFailed as e:
            print(f"ab: error: {e}", file=sys.stderr)
            return EXIT_BAD_INPUT if e.side == "A" else EXIT_REGRESSION
        return report_fn(args, *out)
    finally:
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            keep_fn(args.keep, work)
        shutil.rmtree(work, ignore_errors=True)


# --- the gates' command lines ---------------------------------------------------------------

def split_pipebench_flags(argv):
    """(the gate's own arguments, the pipebench flags after `--`)."""
    argv = list(argv)
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def add_builds(parser):
    """The two positional arguments every gate takes."""
    parser.add_argument("base", metavar="BASE_BIN", help="the baseline build's pipebench")
    parser.add_argument("new", metavar="NEW_BIN", help="the change's pipebench")


def number_option(value, ok, message):
    """float(value) when finite and ok(it), else BadInput(message, and what was given)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = None
    if v is None or v != v or not ok(v):
        raise BadInput(f"{message}, got {value!r}")
    return v


def check_gate_args(args, extra, use):
    """What both gates check alike: --threshold a number >= 0 (made a float), no pipebench
    flag the gate sets itself after `--` (`use` says what to use instead), --data a
    folder. Sets args.extra."""
    args.extra = extra
    args.threshold = number_option(args.threshold, lambda v: 0 <= v < 1e6,
                                   "--threshold must be a number >= 0")
    for flag in extra:
        if flag.split("=", 1)[0] in OWN_FLAGS:
            raise BadInput(f"{flag.split('=', 1)[0]} is set by the gate; use {use} instead")
    if args.data is not None and not os.path.isdir(args.data):
        raise BadInput(f"--data {args.data}: not a directory")


def stderr_tail(log_path, chars=800):
    """The end of a run's stderr log, for the message of a run that failed."""
    with open(log_path, errors="replace") as f:
        return f.read()[-chars:].strip()
