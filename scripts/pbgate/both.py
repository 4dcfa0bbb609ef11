"""pbgate.both - the A/B gate on time and instruction counts together (issue 36 item 3):
`scripts/compare.sh --ab BASE_BIN NEW_BIN`, the default where Valgrind exists
(`--metric=both`; `--metric=time` or `--metric=instructions` runs one of them alone).

Why: a time ratio measures the code and everything around it (where the binary's hot loops
land in memory, the clock frequency, a neighbour's burst); an instruction count measures the
code alone, exactly, but misses what costs time without instructions (cache misses, a
slower instruction mix). Mytkowicz et al. (ASPLOS 2009, "Producing wrong data without doing
anything obviously wrong") and Curtsinger and Berger (ASPLOS 2013, STABILIZER) show layout
alone moving a benchmark by several percent: a case whose time regressed while its
instructions are unchanged is most likely that. So each case gets both verdicts, and the
decision (--fail-on):

  auto (default)  an instruction regression fails; a time regression fails unless the
                  case's instructions are unchanged (within the instruction threshold),
                  when it is "time only: code layout, frequency or the machine
                  (instructions unchanged)", a warning; a time regression of a case not
                  counted under Valgrind fails (nothing says it is layout);
  time            a time regression fails, whatever the instructions;
  instructions    only an instruction regression fails;
  both            either fails.

A time or instruction verdict (regression or improvement) whose other metric points the
other way, or stays unchanged, gets a line saying so. The report names the metric that
decided each failure. The instruction gate runs first (about a minute, exact counts), then
the time gate with what is left of --time-budget; under --fail-on=auto the time gate spends
that budget first on the cases whose time can decide (not counted, or whose count changed),
and confirms a suspect whose count is unchanged only while the budget pays.

Options: the time gate's (pbgate/ab.py) plus --instr-threshold PCT (default 0.5, the
instruction gate's --threshold), --fail-on, --images, --jobs, --max-iterations, --timeout
(the instruction gate's: pbgate/instr.py) and --instr-data DIR (the instruction gate's
--data: by default it counts its own synthetic set, whatever --data gives the time gate). --out writes the time gate's JSON with,
per case, "instructions" (ratio and verdict) and "decision" / "decided_by", and at the top
"metric": "both", "fail_on" and "instructions" (the instruction gate's summary).
Exit status as the time gate's: 0 pass, 1 a failure under --fail-on, 2 bad input, 3
inconclusive (--inconclusive).
"""

import json
import os
import shutil
import sys
import traceback

from . import instr
from .blocks import data_tool, log
from .record import BadInput

FAIL_ON = ("auto", "time", "instructions", "both")
INSTR_OPTIONS = {"--images", "--jobs", "--max-iterations", "--timeout", "--instr-threshold",
                 "--fail-on", "--instr-data"}


def valgrind_found():
    return shutil.which("valgrind") is not None


def split_options(argv):
    """(time gate's argv, instruction gate's own options {name: value}, fail_on): the
    options only the instruction gate (or this one) knows are taken out."""
    own, rest = (argv[:argv.index("--")], argv[argv.index("--"):]) if "--" in argv \
        else (list(argv), [])
    keep, instr, i = [], {}, 0
    while i < len(own):
        a = own[i]
        name, eq, value = a.partition("=")
        if name in INSTR_OPTIONS:
            if not eq:
                if i + 1 >= len(own):
                    raise BadInput(f"{name} needs a value")
                value, i = own[i + 1], i + 1
            instr[name] = value
        else:
            keep.append(a)
        i += 1
    fail_on = instr.pop("--fail-on", "auto")
    if fail_on not in FAIL_ON:
        raise BadInput(f"--fail-on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    return keep + rest, instr, fail_on


def instr_argv(targs, instr):
    """The instruction gate's arguments from the time gate's parsed ones. --data is the time
    gate's alone: the instruction gate counts its own small synthetic set (one iteration per
    case, so larger images only cost Valgrind's time: 368 s instead of 71 on 120 photos of up
    to 2560 x 1600) unless --instr-data names one."""
    argv = [targs.base, targs.new, "--filter", targs.filter,
            "--threshold", instr.pop("--instr-threshold", "0.5")]
    data = instr.pop("--instr-data", None)
    if not data and targs.data and not (data_tool(targs.base) or data_tool(targs.new)):
        data = targs.data  # no pipebench-data beside the builds to make the synthetic set
        log(f"instructions: no datasets/pipebench-data beside the builds: counted on --data "
            f"{targs.data} (Valgrind decodes its images: minutes on large ones)")
    elif not data and targs.data:
        log(f"instructions: counted on the gate's synthetic set, time on --data {targs.data}: a "
            "change that costs instructions only on that data's images (progressive, large, a "
            "presized copy) shows in time alone, where an unchanged count makes it a warning; "
            "--instr-data DIR counts it there")
    if data:
        argv += ["--data", data]
    if targs.force:
        argv.append("--force")
    for name, value in instr.items():
        argv += [name, value]
    return argv + (["--", *targs.extra] if targs.extra else [])


def decide(t, i, fail_on):
    """(decision, decided_by, note) for one case: t its time result, i its instruction
    result or None (not counted). decision: "fail", "warn" or "pass"."""
    tv = t["verdict"] if t else None
    iv = i["verdict"] if i else None
    if fail_on in ("auto", "instructions", "both") and iv == "regression":
        return "fail", "instructions", None
    if tv != "regression":
        return "pass", None, None
    if fail_on in ("time", "both"):
        return "fail", "time", None
    if fail_on == "instructions":
        return "warn", None, "time regressed; --fail-on=instructions judges instructions only"
    if iv == "ok":
        return ("warn", None, "time only: code layout, frequency or the machine "
                              "(instructions unchanged)")
    # Not counted (nothing says it is layout) or fewer instructions (a note says so): time
    # decides.
    return "fail", "time", None


def disagreement(name, t, i):
    """A line when a time or instruction verdict points another way than the other."""
    if not t or not i or t.get("ratio") is None or i.get("ratio") is None:
        return None
    tv, iv = t["verdict"], i["verdict"]
    if tv not in ("regression", "improvement") and iv not in ("regression", "improvement"):
        return None
    tdir = {"regression": 1, "improvement": -1}.get(tv, 0)
    idir = {"regression": 1, "improvement": -1}.get(iv, 0)
    if tdir == idir:
        return None
    return (f"ab: note: {name}: time says {tv} ({(t['ratio'] - 1) * 100:+.1f} %), "
            f"instructions say {iv} ({(i['ratio'] - 1) * 100:+.3f} %): the two metrics "
            "disagree in direction")


def merge(tres, ires, fail_on):
    """Per case: the time result with "instructions", "decision", "decided_by", "note"."""
    out = {}
    for name, t in tres.items():
        i = ires.get(name)
        decision, by, note = decide(t, i, fail_on)
        r = dict(t)
        r["instructions"] = (None if i is None else
                             {"ratio": i["ratio"], "verdict": i["verdict"],
                              "base": i.get("base_instructions"),
                              "new": i.get("new_instructions")})
        r.update(decision=decision, decided_by=by, decision_note=note)
        out[name] = r
    for name, i in ires.items():  # counted but not timed (a filter difference): its own
        if name not in out:
            decision, by, note = decide(None, i, fail_on)
            out[name] = {"name": name, "verdict": None, "ratio": None,
                         "instructions": {"ratio": i["ratio"], "verdict": i["verdict"]},
                         "decision": decision, "decided_by": by, "decision_note": note}
    return out


def print_decisions(merged, fail_on):
    """The lines that say what decided, what is only a warning, and where the metrics
    disagree; returns the failing cases."""
    failing = []
    for name, r in merged.items():
        line = disagreement(name, r, r.get("instructions"))
        if line:
            print(line)
        if r["decision"] == "fail":
            failing.append(name)
            print(f"FAILED {name}: decided by {r['decided_by']} (--fail-on={fail_on})")
        elif r["decision"] == "warn":
            print(f"ab: warning: {name}: {r['decision_note']}")
    return failing


def run_instructions(argv, out_path):
    """The instruction gate (pbgate.instr's main) in this process, with its own temporary
    folder, printing on this process's stdout and stderr, its JSON read back: (exit status,
    doc or None). What would end a process of its own ends it with the status that process
    would have had: argparse's refusal (SystemExit, 2), a failure of the gate itself (its
    traceback, 1)."""
    if "--" in argv:
        k = argv.index("--")
        argv = argv[:k] + ["--out", out_path] + argv[k:]
    else:
        argv = argv + ["--out", out_path]
    try:
        rc = instr.main(argv)
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except Exception:
        traceback.print_exc()
        rc = 1
    finally:  # its output before the time gate's, as when it ran as a child process
        sys.stdout.flush()
        sys.stderr.flush()
    doc = None
    if os.path.exists(out_path):
        with open(out_path) as f:
            doc = json.load(f)
    return rc, doc
