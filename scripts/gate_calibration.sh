#!/usr/bin/env bash
# Calibrates the paired A/B gate (scripts/compare.sh --ab; docs/ab-gate.md) on this machine:
# how often it cries wolf, how often it catches a known slowdown, and what one comparison
# costs.
#
#   scripts/gate_calibration.sh [--metric time|instructions] [--n N] [--inject PCT[,PCT...]]
#       [--bin PIPEBENCH] [--op OPERATOR|turbo_decode] [--target CASE[,CASE...]]
#       [--threshold PCT] [--blocks N] [--confirm K]
#       [--time-budget S] [--precision PCT] [--confirm-min-time S]
#       [--confirm-max M] [--filter REGEX]
#       [--data DIR] [--out FILE.json] [--keep DIR] [--thresholds PCT[,PCT...]]
#       [-- pipebench flags...]
#   scripts/gate_calibration.sh --from DIR [--thresholds PCT[,PCT...]] [--out FILE.json]
#
#   --from     reads the comparisons a run kept with --keep DIR and prints its figures again
#              (with --thresholds, at other thresholds too) without running anything.
#
#   --metric   time (default): the paired ABBA time gate (compare.sh --ab); instructions:
#              the instruction-count gate (compare.sh --ab --metric=instructions, Valgrind's
#              Callgrind; scripts/pbgate/instr.py), whose counts are exact: every A/A ratio is
#              reported (the largest |ratio - 1| is the gate's noise floor), and the false
#              alarms are counted at the threshold and at 3 %. --blocks, --confirm,
#              --confirm-max, --min-time and --time are the time gate's only.
#
#   A/A   N comparisons of the build with itself (BASE = NEW = --bin): every REGRESSION is a
#         false alarm. Reported: the share of comparisons with at least one (what a CI job
#         would see), and the cases involved.
#   A/B   for each PCT of --inject (default 3,10; instructions: 1,10): N comparisons of
#         the build against itself slowed by PCT percent in one operator (--op, default normalize) through
#         the TEST-ONLY hook PIPEBENCH_TEST_SLOWDOWN=<op>:<pct> (instructions:
#         <op>:<pct>:work, pct % more of the operator's rows processed)
#         (transforms/ops/test_slowdown.h). NEW is a small wrapper script in a temporary
#         folder that sets the variable and execs --bin, so the gate still compares two
#         "builds"; for time BASE is the same wrapper with the hook at 0 % (same path and
#         variable lengths), so that the two differ only in the injected wait. Detected = the
#         gate reports REGRESSION for the target case (--target NAME[,NAME...]; default
#         BM_Transform/<op>; for --op turbo_decode, the full decode (not an operator: the
#         hook in TurboDecoder::decode), BM_Decode/turbo_full and BM_Sample/imagenet_train,
#         each counted; its work form decodes each image's first rows again, about pct % more
#         decode instructions). Also
#         reported: the median measured ratio of that case, and the comparisons in which
#         another case was flagged. For time the hook spins for PCT % of the operator's
#         time; for instructions it runs the operator again on PCT % of its rows (a
#         busy-wait costs Valgrind few instructions); the measured ratio is the injected
#         amount (docs/ab-gate.md).
#   time  seconds per comparison (mean, min, max) over all of them.
#   --thresholds  (time) also judges every comparison at these thresholds, from its saved
#         round ratios (a verdict is a function of them alone: pbgate/paired.py judge_case), as
#         `compare.sh --ab --threshold PCT` with its default --max-noise (= PCT) would have:
#         the false-alarm and detection rates at each. With the confirmation (--confirm,
#         on by default) a case is judged on its confirmation rounds when it is a suspect
#         at PCT: exact at thresholds at or above the run's (is_suspect only gets stricter
#         as the threshold rises, so their suspects are among the run's), approximate
#         where a suspect at PCT has no rounds of its own (below the run's threshold, or a
#         suspect left out by --confirm-max or lost in its confirmation; the line says so). To catch a slowdown of X % the gate's
#         threshold must sit below X (at X the estimate lands below it about half the time).
#
# Defaults: --n 10, --inject 3,10, --bin build/release/bench/pipebench, --op normalize,
# and the gate's own defaults for --threshold (3), --blocks (4), --confirm (6) and --filter (the
# single-threaded stage cases). One synthetic dataset (the gate's: 16 JPEGs of 500x375,
# 8 for instructions, made with the pipebench-data beside --bin) serves every comparison
# unless --data.
# --out writes the figures as JSON; --keep DIR keeps every comparison's ab.json and output.
#
# Exit status: 0 done (the figures are measurements, not a pass/fail); 2 bad arguments,
# a --bin without the test hook, a comparison that ended in bad input (exit 2).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
python=/usr/bin/python3
n=10
inject=""
metric=time
bin="$repo/build/release/bench/pipebench"
op=normalize
targets=""
gate=()
data=""
out=""
keep=""
extra=()
timeonly=()
thresholds=""
from=""

err() {
  echo "gate_calibration: error: $*" >&2
  exit 2
}
need() { [ $# -ge 2 ] || err "$1 needs a value"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --n) need "$@"; n="$2"; shift 2 ;;
    --inject) need "$@"; inject="$2"; shift 2 ;;
    --bin) need "$@"; bin="$2"; shift 2 ;;
    --op) need "$@"; op="$2"; shift 2 ;;
    --target) need "$@"; targets="$2"; shift 2 ;;
    --metric) need "$@"; metric="$2"; shift 2 ;;
    --metric=*) metric="${1#--metric=}"; shift ;;
    --threshold|--filter) need "$@"; gate+=("$1" "$2"); shift 2 ;;
    --blocks|--min-time|--time|--confirm|--confirm-max|--time-budget|--precision|--confirm-min-time) need "$@"; gate+=("$1" "$2"); timeonly+=("$1"); shift 2 ;;
    --data) need "$@"; data="$2"; shift 2 ;;
    --out) need "$@"; out="$2"; shift 2 ;;
    --keep) need "$@"; keep="$2"; shift 2 ;;
    --thresholds) need "$@"; thresholds="$2"; shift 2 ;;
    --from) need "$@"; from="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) err "unknown argument $1 (see --help)" ;;
  esac
done

[[ "$n" =~ ^[1-9][0-9]*$ ]] || err "--n must be a positive integer, got '$n'"
case "$metric" in
  time) inject="${inject:-3,10}"; images=16; gate+=("--metric=time") ;;
  instructions)
    inject="${inject:-1,10}"; images=8
    [ ${#timeonly[@]} -eq 0 ] || err "${timeonly[0]} is the time gate's; --metric=instructions runs each case once under Valgrind"
    command -v valgrind >/dev/null || err "valgrind not found: --metric=instructions needs it (scripts/setup.sh installs it)"
    gate+=("--metric=instructions") ;;
  *) err "--metric must be time or instructions, got '$metric'" ;;
esac
[ -z "$thresholds" ] || [[ "$thresholds" =~ ^[0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*$ ]] ||
  err "--thresholds takes percentages like 1.5,2,3, got '$thresholds'"
[ -z "$thresholds" ] || [ "$metric" = time ] || [ -n "$from" ] ||
  err "--thresholds is the time gate's (instruction counts have no interval; every A/A ratio is printed)"
IFS=, read -r -a pcts <<<"$inject"
for p in "${pcts[@]}"; do
  [[ "$p" =~ ^[0-9]+(\.[0-9]+)?$ ]] || err "--inject takes percentages like 3,10, got '$inject'"
done
[[ "$op" =~ ^[a-z0-9_]+$ ]] || err "--op must be an operator name, got '$op'"
# The cases the injection must be caught in: --target, else the operator's own case; the
# full decode (turbo_decode, test_slowdown.h) has two: its decode case and the sample case
# of the default recipe, whose decode is full.
if [ -z "$targets" ]; then
  case "$op" in
    turbo_decode) targets="BM_Decode/turbo_full,BM_Sample/imagenet_train" ;;
    *) targets="BM_Transform/$op" ;;
  esac
fi
[ -x "$python" ] || err "$python not found; run scripts/setup.sh"
if [ -n "$from" ]; then
  [ -f "$from/index.txt" ] || err "--from $from: no index.txt (a folder written by --keep)"
  tmp="$from"
else
if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
  err "--bin $bin: not an executable file (build first: scripts/build.sh)"
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/pipebench-calibration.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

if [ -z "$data" ]; then
  tool="$(dirname "$(dirname "$bin")")/datasets/pipebench-data"
  [ -x "$tool" ] || err "no $tool to make the dataset; pass --data DIR"
  "$tool" synthetic "$tmp/data" --count "$images" --classes 2 >/dev/null
  data="$tmp/data"
fi
[ -d "$data" ] || err "--data $data: not a directory"

# The hook must be in this build: it says so on stderr when the variable is set.
probe="$(PIPEBENCH_TEST_SLOWDOWN="$op:1" "$bin" --data="$data" --benchmark_list_tests=true \
  --benchmark_filter="BM_Transform/$op\$" 2>&1 >/dev/null || true)"
if [[ "$probe" != *TEST-ONLY* ]] || [[ "$probe" == *"error: PIPEBENCH_TEST_SLOWDOWN"* ]]; then
  [ -z "$probe" ] || echo "$probe" >&2
  err "$bin has no PIPEBENCH_TEST_SLOWDOWN hook for '$op' (transforms/ops/test_slowdown.cpp; rebuild), or '$op' is refused by it"
fi

compare() {  # compare LABEL BASE_BIN NEW_BIN
  local label="$1" base="$2" new="$3" t0 t1 rc
  t0=$(date +%s.%N)
  set +e
  "$here/compare.sh" --ab "$base" "$new" --data "$data" ${gate[@]+"${gate[@]}"} \
    --out "$tmp/$label.json" ${extra[@]+-- "${extra[@]}"} >"$tmp/$label.txt" 2>"$tmp/$label.err"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  echo "$label $rc $t0 $t1" >>"$tmp/index.txt"
  if [ "$rc" = 2 ]; then
    cat "$tmp/$label.err" >&2
    err "comparison $label ended in bad input (above)"
  fi
  "$python" - "$tmp/$label.json" "$label" "$rc" "$t0" "$t1" "$targets" <<'EOF'
import json, sys
path, label, rc, t0, t1, targets = sys.argv[1:]
d = json.load(open(path))
target = targets.split(",")[0]
r = next((c for c in d["cases"] if c["name"] == target), None)
if r and r["ratio"] and d.get("metric") == "instructions":
    extra = f", {target} ratio {r['ratio']:.6f} (exact count)"
elif r and r["ratio"]:
    extra = f", {target} ratio {r['ratio']:.4f} [{r['ci_low']:.4f}, {r['ci_high']:.4f}]"
else:
    extra = ""
print(f"gate_calibration: {label}: exit {rc}, {float(t1) - float(t0):.0f} s, "
      f"regressions: {', '.join(d['regressions']) or 'none'}{extra}", flush=True)
EOF
}

# What --from needs to read the folder again as this run: the operator and the metric.
printf '{"op": "%s", "metric": "%s", "targets": "%s"}\n' "$op" "$metric" "$targets" \
  >"$tmp/calibration-meta.json"
echo "gate_calibration: $bin, metric $metric, $n A/A comparison(s), $n A/B comparison(s) per injected slowdown (${inject} % on $op); data $data"
# Instructions: the hook's work mode (pct % more rows processed, test_slowdown.h): a
# busy-wait adds time, which Valgrind counts as few instructions.
mode=""
[ "$metric" = instructions ] && mode=":work"
# For time, BASE is a wrapper too, with the hook at 0 % (the operator wrapped, its clock
# read, no wait), at a path and with a variable of the same lengths as NEW's: the two
# programs then differ only in the injected wait, not in their environment's size or
# argv[0], which move the stack and can move a case's time by a few percent (the
# calibrations before this one saw BM_Transform/resize/...bicubic read +2.4 % slower in the
# wrapped NEW on average, and the A/A, both plain --bin, not). Instructions keep plain --bin
# as BASE: the work mode at 0 % would still run the operator on one more pixel.
wrap() {  # wrap PATH VALUE: a script that sets the hook to VALUE and execs --bin
  mkdir -p "$(dirname "$1")"
  printf '#!/bin/sh\n# TEST-ONLY: %s\nPIPEBENCH_TEST_SLOWDOWN=%s exec %q "$@"\n' \
    "$2" "$2" "$bin" >"$1"
  chmod +x "$1"
}
bases=()
for i in "${!pcts[@]}"; do
  p="${pcts[$i]}"
  wrap "$tmp/inject$i/b/pipebench" "$op:$p$mode"
  bases[$i]="$bin"
  if [ "$metric" = time ]; then
    wrap "$tmp/inject$i/a/pipebench" "$op:${p//[0-9.]/0}"
    bases[$i]="$tmp/inject$i/a/pipebench"
  fi
done
# Interleaved (A/A, then each A/B, N times), so that a machine that drifts over the
# calibration's minutes spreads alike over both rates, and a calibration stopped early
# (its folder read with --from) holds as many of each.
for r in $(seq 1 "$n"); do
  compare "aa-$r" "$bin" "$bin"
  for i in "${!pcts[@]}"; do
    compare "ab${pcts[$i]}-$r" "${bases[$i]}" "$tmp/inject$i/b/pipebench"
  done
done

if [ -n "$keep" ]; then
  mkdir -p "$keep"
  cp "$tmp"/*.json "$tmp"/*.txt "$tmp"/*.err "$keep"/
fi
fi  # not --from

"$python" - "$tmp" "$op" "$out" "$bin" "$here" "$thresholds" <<'EOF'
import json, os, statistics, sys
tmp, op, out, binary, here, thresholds = sys.argv[1:]
sys.path.insert(0, here)
from pbgate.paired import is_suspect, judge_case  # noqa: E402
from pbgate.plan import power_at  # noqa: E402
meta_path = os.path.join(tmp, "calibration-meta.json")
meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
op = meta.get("op", op)  # the run's own operator (--from reads a kept folder)
targets = (meta.get("targets") or f"BM_Transform/{op}").split(",")
target = targets[0]
runs = {}
for line in open(os.path.join(tmp, "index.txt")):
    label, rc, t0, t1 = line.split()
    d = json.load(open(os.path.join(tmp, label + ".json")))
    runs[label] = {"rc": int(rc), "seconds": float(t1) - float(t0), "doc": d}
# The injected slowdowns, from the comparisons' labels (ab<PCT>-<i>), in run order.
pcts = []
for label in runs:
    if label.startswith("ab"):
        p = label[2:].rsplit("-", 1)[0]
        if p not in pcts:
            pcts.append(p)
aa = [r for k, r in runs.items() if k.startswith("aa-")]
first = next(iter(runs.values()))["doc"]
binary = first.get("base") or binary  # --from: the build the kept comparisons ran
metric = first.get("metric", "time")
res = {"bin": binary, "metric": metric, "threshold_pct": first["threshold_pct"],
       "confirm_blocks": first.get("confirm_blocks", 0),
       "blocks": first["blocks"], "filter": first["filter"], "cases": len(first["cases"]),
       "n": len(aa)}
if metric == "instructions":
    res["simd_path"] = first.get("simd_path")
    res["valgrind"] = first.get("valgrind")
alarms = [r for r in aa if r["doc"]["regressions"]]
flagged = sorted({c for r in alarms for c in r["doc"]["regressions"]})
improved = [r for r in aa if r["doc"]["improvements"]]
noisy = sum(len(r["doc"].get("inconclusive", r["doc"].get("noisy", []))) for r in aa)
res["aa"] = {"false_alarm_comparisons": len(alarms), "false_alarm_rate": len(alarms) / len(aa),
             "inconclusive_case_verdicts": noisy,
             "cases_flagged": flagged, "comparisons_claiming_improvement": len(improved),
             "false_case_verdicts": sum(len(r["doc"]["regressions"]) for r in aa),
             "case_verdicts": sum(len(r["doc"]["cases"]) for r in aa)}
# Every A/A case ratio: how far from 1 the gate reads a build against itself.
# The screen's ratio of every case (a suspect's confirmation replaced a high one).
aa_dev = [abs((c.get("screen") or c)["ratio"] - 1) * 100 for r in aa for c in r["doc"]["cases"]
          if (c.get("screen") or c).get("ratio") is not None]
res["aa"]["max_abs_change_pct"] = max(aa_dev) if aa_dev else None
# Order bias: per case, the sign of its screen ratio over the A/A comparisons; a two-sided
# sign test (binomial, p = 1/2) per case. A gate whose rounds favour one side (BASE
# always first and last) shows NEW "faster" in most comparisons.
signs = {}
for r in aa:
    for c in r["doc"]["cases"]:
        sc = c.get("screen") or c
        if sc.get("ratio") is not None and sc["ratio"] != 1.0:
            signs.setdefault(c["name"], []).append(sc["ratio"] > 1.0)
if signs and metric == "time":
    from scipy.stats import binomtest
    tests = {n: binomtest(sum(v), len(v), 0.5).pvalue for n, v in signs.items()}
    biased = sorted(n for n, pv in tests.items() if pv <= 0.05)
    res["aa"]["sign_test"] = {"min_p": min(tests.values()), "cases_p_le_0.05": biased,
                              "slower": {n: sum(v) for n, v in signs.items()},
                              "n": {n: len(v) for n, v in signs.items()}}
print()
print(f"gate calibration: {binary}")
how = ("instruction counts under Valgrind's Callgrind (exact: no interval), SIMD path "
       f"{(res.get('simd_path') or {}).get('new', '?')} under Valgrind"
       if metric == "instructions" else f"{res['blocks']} ABBA rounds")
print(f"  filter {res['filter']!r} ({res['cases']} cases), threshold {res['threshold_pct']:g} %, "
      f"{how}, {len(aa)} comparisons each")
print(f"  A/A: false alarms in {len(alarms)} of {len(aa)} comparisons "
      f"({100 * len(alarms) / len(aa):.0f} %); {res['aa']['false_case_verdicts']} of "
      f"{res['aa']['case_verdicts']} case verdicts"
      + (f" ({', '.join(flagged)})" if flagged else "")
      + f"; comparisons claiming an improvement: {len(improved)}; inconclusive "
      f"verdicts: {noisy}")
if aa_dev:
    print(f"  A/A: largest |ratio - 1| over the {len(aa_dev)} case verdicts: {max(aa_dev):.4f} %")
st = res["aa"].get("sign_test")
if st:
    print(f"  A/A order bias (sign test per case over the comparisons): smallest p "
          f"{st['min_p']:.3g}; cases at p <= 0.05: {', '.join(st['cases_p_le_0.05']) or 'none'}")
if metric == "instructions":
    # Exact counts: the verdict at another threshold follows from the ratios alone.
    at3 = [r for r in aa if any(c["ratio"] is not None and c["ratio"] > 1.03
                                for c in r["doc"]["cases"])]
    res["aa"]["false_alarm_comparisons_at_3pct"] = len(at3)
    print(f"  A/A at a 3 % threshold: false alarms in {len(at3)} of {len(aa)} comparisons")
res["ab"] = {}
for p in pcts:
    ab = [r for k, r in runs.items() if k.startswith(f"ab{p}-")]
    hit = [r for r in ab if target in r["doc"]["regressions"]]
    ratios = [c["ratio"] for r in ab for c in r["doc"]["cases"]
              if c["name"] == target and c["ratio"] is not None]
    others = [r for r in ab if set(r["doc"]["regressions"]) - set(targets)]
    # Each comparison's verdict on the target case, its interval's half-width and the power
    # that width gives against a change of half the injected size (the hook's measured
    # ratio sits below the injected amount: docs/ab-gate.md).
    # Every target case (a family: the decode case and the sample case of one injection):
    # in how many comparisons each was flagged.
    per_case = {t: sum(1 for r in ab if t in r["doc"]["regressions"]) for t in targets}
    per = []
    for r in ab:
        c = next((c for c in r["doc"]["cases"] if c["name"] == target), None)
        if c is None or c.get("ratio") is None:
            per.append({"verdict": "missing", "half_width_pct": None, "power": None})
            continue
        half = c.get("half_width_pct") or (c["ci_high"] - c["ci_low"]) / 2 * 100
        power = (None if metric == "instructions" else
                 power_at(float(p) / 2, r["doc"]["threshold_pct"], half, c["blocks"] - 1))
        per.append({"verdict": c["verdict"], "half_width_pct": half, "power": power,
                    "rounds": c["blocks"], "stage": c.get("stage")})
    res["ab"][p] = {"detected": len(hit), "detection_rate": len(hit) / len(ab),
                    "median_ratio": statistics.median(ratios) if ratios else None,
                    "comparisons_with_other_cases_flagged": len(others),
                    "comparisons": per, "detected_per_case": per_case}
    med = (f"{statistics.median(ratios):.{6 if metric == 'instructions' else 4}f}"
           if ratios else "n/a")
    print(f"  A/B +{p} % on {op}: detected in {len(hit)} of {len(ab)} comparisons "
          f"({100 * len(hit) / len(ab):.0f} %); median measured ratio of {target} {med}; "
          f"another case flagged in {len(others)}")
    if len(targets) > 1:
        print(f"  A/B +{p} % on {op}, per target case: "
              + "; ".join(f"{t} in {k} of {len(ab)}" for t, k in per_case.items()))
# The same comparisons judged at other thresholds, from their round ratios (time only).
res["at_thresholds"] = {}
if thresholds and metric != "time":
    print("  (--thresholds: instruction counts have no interval; every A/A ratio is above)")
    thresholds = ""
approximate = set()  # thresholds at which a suspect had no rounds of its own
for th in [float(x) for x in thresholds.split(",") if x]:
    def judged(name, field, rr):
        # judge_case takes rounds (A1, B1, B2, A2); (1, r, r, 1) has the ratio r.
        return judge_case(name, field, [(1.0, r, r, 1.0) for r in rr], th)

    def regressions(doc):
        got = []
        confirming = doc.get("confirm_blocks", 0)
        for c in doc["cases"]:
            screen = c.get("screen") or c
            rr = screen.get("round_ratios")
            if screen.get("ratio") is None or not rr or len(rr) < 2:
                continue
            j = judged(c["name"], c["field"], rr)
            if confirming and is_suspect(j, th):
                if c.get("screen"):  # measured again: the verdict is its own rounds'
                    j = judged(c["name"], c["field"], c["round_ratios"])
                else:  # a suspect at th only: no rounds of its own, the screen's verdict
                    approximate.add(th)
            elif confirming:
                continue  # not a suspect at th: never a regression
            if j["verdict"] == "regression":
                got.append(c["name"])
        return got
    aa_hits = [r for r in aa if regressions(r["doc"])]
    row = {"false_alarm_comparisons": len(aa_hits), "n_aa": len(aa),
           "cases_flagged": sorted({c for r in aa_hits for c in regressions(r["doc"])}),
           "detected": {}}
    line = (f"  at a {th:g} % threshold (re-judged from the round ratios): A/A false alarms "
            f"in {len(aa_hits)} of {len(aa)}"
            + (f" ({', '.join(row['cases_flagged'])})" if row["cases_flagged"] else ""))
    for p in pcts:
        ab = [r for k, r in runs.items() if k.startswith(f"ab{p}-")]
        hit = [r for r in ab if target in regressions(r["doc"])]
        row["detected"][p] = {"detected": len(hit), "n": len(ab)}
        line += f"; +{p} % detected in {len(hit)} of {len(ab)}"
    row["approximate"] = th in approximate
    if th in approximate:
        line += (" (approximate: a case that would be a suspect at this threshold but was"
                 " not at the run's had no rounds of its own; judged on its screen)")
    res["at_thresholds"][f"{th:g}"] = row
    print(line)
secs = [r["seconds"] for r in runs.values()]
res["seconds_per_comparison"] = {"mean": statistics.fmean(secs), "min": min(secs),
                                 "max": max(secs)}
print(f"  time per comparison: mean {statistics.fmean(secs):.0f} s (min {min(secs):.0f}, "
      f"max {max(secs):.0f}) over {len(secs)} comparisons")
if out:
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
EOF
