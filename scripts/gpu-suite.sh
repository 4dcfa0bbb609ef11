#!/usr/bin/env bash
# gpu-suite.sh: every GPU figure of pipebench in one call on a GPU node, within 9 minutes on a
# 16-core H100 node (each step bounded by `timeout`, elapsed time printed per step). Shipped
# at the root of the bundle (scripts/bundle.sh; docs/gpu.md); run it from there:
#
#   ./gpu-suite.sh [--out DIR] [--data DIR] [OPTIONS]
#
# Steps, in order:
#   gpu       nvidia-smi -L must list a GPU, and pipebench must not say "CUDA cases not run"
#   data      a synthetic ImageNet-like dataset (pipebench-data synthetic: --count JPEGs of
#             500 x 375, quality 90, 10 classes, made by one process per core) in a temporary
#             folder, removed at the end; or --data=DIR, used as it is
#   tests     every CUDA test (tests/run-gpu-tests.sh --tests-only: cuDNN's libraries, the
#             CUDA, pinned, NVML, region-timer and device batch-operator tests)
#   sanitizer the same tests under compute-sanitizer --tool memcheck (run-gpu-tests.sh
#             --sanitizer-only), each binary bounded by --sanitizer-timeout
#   torch     scripts/cnn_torch_check.py: the cuda:cnn step's loss and gradients against
#             PyTorch (skipped, with its one line, without torch)
#   stage     one run, --recipe=imagenet_train --baseline=cuda: BM_H2D (pageable and pinned,
#             sync and async, batch 32..256, and the peak pinned copy of 256 MiB in the same
#             run), BM_TrainStep/cuda, the device batch operators (BM_Transform/<op>/device/...),
#             BM_Decode/nvjpeg against BM_Decode/turbo_full on the same round of files
#   e2e       for each recipe (imagenet_train, deit_train) and baseline (cuda, cuda:cnn), --baseline
#             always named: BM_TrainStep and the BM_EndToEnd sweep at --workers, then
#             bin/pipebench-report of the run
#   summary   summary.md: every figure (scripts/gpu_suite_summary.py, python3)
#
# Output (--out, default ./gpu-suite-out), at most 8 files:
#   summary.md        what ran, what was skipped and why, the time of each step, and the figures:
#                     H2D pinned against the peak (%), pageable against pinned, the training
#                     steps' ms and TFLOP/s, each recipe x baseline's verdict with its smallest
#                     compute-bound worker count and AU, the sanitizer's result, the device
#                     operators' times, nvJPEG's images/s against TurboJPEG's, the PyTorch check
#   tests.log         the tests' output, the sanitizer's (its ERROR SUMMARY lines), the PyTorch check
#   reports.md        pipebench-report of each end-to-end run
#   stage.json, e2e-<recipe>-<baseline>.json (4)   the runs (Google Benchmark JSON + pipebench's keys)
#
# Options:
#   --out DIR            output folder (default ./gpu-suite-out; made; files of an earlier suite replaced)
#   --data DIR           use this ImageFolder dataset instead of a synthetic one
#   --count N            synthetic images (default 1024)
#   --budget S           pipebench --budget: seconds per end-to-end case (default 3)
#   --steps N            pipebench --steps: fixed batches per end-to-end case (default: by --budget)
#   --workers LIST       the sweep's worker counts (default 1,2,4,8,16)
#   --sanitizer-timeout S  each test binary under compute-sanitizer (default 20; the step: 90)
#   --time-limit S       the whole suite (default 540); each step gets at most what is left
#   --bundle DIR         the bundle to run (default: the folder of this script)
#   --dry-run            print every command it would run, run nothing, write nothing
# Without a GPU (no nvidia-smi, no GPU listed, or pipebench's "CUDA cases not run") it writes
# summary.md with what it skipped and why and exits 0.
# Exit status: 0 every step ran and passed (or skipped without a GPU); 1 a step failed or
# timed out (summary.md says which); 2 bad arguments or no bundle.
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
bundle=""
out="./gpu-suite-out"
data=""
count=1024
budget=3
steps=""
workers="1,2,4,8,16"
san_timeout=20
limit=540
dry=0
recipes=(imagenet_train deit_train)
baselines=(cuda cuda:cnn)

usage() { sed -n '2,52p' "$0"; }
need() { [ -n "${2:-}" ] || { echo "gpu-suite: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out|--data|--count|--budget|--steps|--workers|--sanitizer-timeout|--time-limit|--bundle)
      need "$1" "${2:-}"; opt="$1"; val="$2"; shift 2 ;;
    --out=*|--data=*|--count=*|--budget=*|--steps=*|--workers=*|--sanitizer-timeout=*|--time-limit=*|--bundle=*)
      opt="${1%%=*}"; val="${1#*=}"; shift ;;
    --dry-run) dry=1; shift; continue ;;
    -h|--help) usage; exit 0 ;;
    *) echo "gpu-suite: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
  case "$opt" in
    --out) out="$val" ;;
    --data) data="$val" ;;
    --count) count="$val" ;;
    --budget) budget="$val" ;;
    --steps) steps="$val" ;;
    --workers) workers="$val" ;;
    --sanitizer-timeout) san_timeout="$val" ;;
    --time-limit) limit="$val" ;;
    --bundle) bundle="$val" ;;
  esac
done
for v in count san_timeout limit; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "gpu-suite: --${v//_/-} must be a whole number, got '${!v}'" >&2; exit 2; }
done
[ "$count" -ge 1 ] || { echo "gpu-suite: --count must be at least 1" >&2; exit 2; }
[[ "$budget" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "gpu-suite: --budget must be seconds, got '$budget'" >&2; exit 2; }
[ -z "$steps" ] || [[ "$steps" =~ ^[0-9]+$ ]] || { echo "gpu-suite: --steps must be a whole number, got '$steps'" >&2; exit 2; }
[[ "$workers" =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "gpu-suite: --workers must be a list such as 1,2,4, got '$workers'" >&2; exit 2; }
if [ -z "$bundle" ]; then
  if [ -x "$here/bin/pipebench" ]; then bundle="$here"; else
    echo "gpu-suite: no bundle at $here (bin/pipebench): run the bundle's gpu-suite.sh (scripts/bundle.sh makes it) or pass --bundle DIR" >&2
    exit 2
  fi
fi
bundle="$(cd "$bundle" 2>/dev/null && pwd)" || { echo "gpu-suite: --bundle: no such folder" >&2; exit 2; }
bin="$bundle/bin"
for b in pipebench pipebench-report pipebench-data; do
  [ -x "$bin/$b" ] || { echo "gpu-suite: $bin/$b is missing: not a pipebench bundle" >&2; exit 2; }
done
[ -z "$data" ] || [ -d "$data" ] || { echo "gpu-suite: --data $data is not a folder" >&2; exit 2; }
[ -z "$data" ] || data="$(cd "$data" && pwd)"

# Bounds of each step, seconds (the sum stays within the default --time-limit of 540 s with
# the default --budget; each is also cut to the time left).
n_workers=$(tr ',' '\n' <<<"$workers" | wc -l)
# Measured on 2 cores with the emulated step: a case takes its budget + about 1.5 s (loader
# start); a CUDA step adds its set-up (cuDNN's handle and algorithms, the 0.5 s warm-up of
# compute_ms). A run cut by its timeout writes no JSON (pipebench writes it at the end):
# summary.md then says "timed out"; rerun with a smaller --budget or fewer --workers.
case_s=$(awk -v b="$budget" 'BEGIN { printf "%d", b + 6 }')
[ -z "$steps" ] || case_s=$((steps / 2 + 6))                  # about 0.5 s per batch at 1 worker
bound_gpu=20
bound_data=30
bound_tests=45
bound_sanitizer=90    # each binary at most --sanitizer-timeout; the slow ones (cuDNN) run out first
bound_torch=40         # cnn_dump (cuDNN's start) and PyTorch's import and CUDA start
bound_stage=40
bound_e2e=$((n_workers * case_s + 15))  # the sweep, BM_TrainStep, start-up: 60 s by default
bound_report=5         # 20+30+45+90+40+40+4*(60+5) = 525 s by default

# pipebench's flags shared by every run: --presize=off and --shards=0 keep --data's folder
# untouched (no .pipebench-cache beside it).
common=(--presize=off --shards=0 --quiet)
run_sizing=(--budget="$budget")
[ -z "$steps" ] || run_sizing=(--steps="$steps")

start=$SECONDS
status_rows=()   # "step|result|seconds|note" for summary.md
failed=0
tmp=""
if [ "$dry" -eq 0 ]; then
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/gpu-suite.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$out" || { echo "gpu-suite: cannot make $out" >&2; exit 2; }
  out="$(cd "$out" && pwd)"
  rm -f "$out"/summary.md "$out"/tests.log "$out"/reports.md "$out"/stage.json "$out"/e2e-*.json
else
  tmp="${TMPDIR:-/tmp}/gpu-suite.XXXXXX"  # what mktemp would make
fi
data_dir="${data:-$tmp/data}"

say() { echo "gpu-suite: $*"; }
quote() {  # the words as a shell would read them back: plain, or in single quotes
  local a out="" q="'"
  for a in "$@"; do
    if [[ "$a" =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then out+="$a "; else out+="'${a//$q/$q\\$q$q}' "; fi
  done
  echo "${out% }"
}
elapsed() { echo $((SECONDS - start)); }
note_step() {  # a row of summary.md's steps table, and a line on the console (none in a dry run)
  [ "$dry" -eq 0 ] || return 0
  status_rows+=("$1|$2|$3|${4:-}")
  say "$1: $2 ($3 s; elapsed $(elapsed) s of $limit)${4:+: $4}"
}
# bounded BOUND LOG CMD...: CMD under `timeout` (cut to the time left), its output to the
# console and appended to LOG ("" for none). Sets step_rc; 124 when it ran out.
bounded() {
  local bound="$1" log="$2"; shift 2
  local left=$((limit - (SECONDS - start)))
  [ "$bound" -le "$left" ] || bound="$left"
  if [ "$dry" -eq 1 ]; then
    local shown="$log"
    [[ "$shown" != "$tmp"/* ]] || shown=""  # the runs' console output, kept for summary.md only
    echo "+ timeout $bound $(quote "$@")${shown:+ >> ${shown/#$out/\$OUT}}"
    step_rc=0
    return 0
  fi
  if [ "$bound" -lt 5 ]; then
    echo "gpu-suite: no time left for: $(quote "$@")"
    step_rc=124
    return 0
  fi
  echo "+ timeout $bound $(quote "$@")"
  if [ -n "$log" ]; then
    echo "+ $(quote "$@")" >>"$log"
    timeout -k 10 "$bound" "$@" 2>&1 | tee -a "$log"
    step_rc=${PIPESTATUS[0]}
  else
    timeout -k 10 "$bound" "$@"
    step_rc=$?
  fi
  [ "$step_rc" -ne 137 ] || step_rc=124
}
result_of() {  # step_rc -> passed / failed (exit N) / timed out
  case "$1" in
    0) echo passed ;;
    124) echo "timed out" ;;
    *) echo "failed (exit $1)" ;;
  esac
}

write_summary() {  # summary.md: the steps table, then the figures (python3) where anything ran
  [ "$dry" -eq 0 ] || return 0
  local s="$out/summary.md" row step result secs note
  {
    echo "# pipebench GPU suite"
    echo
    echo "- bundle: $bundle ($(sed -n 's/^commit: //p' "$bundle/MANIFEST.txt" 2>/dev/null | head -1))"
    echo "- host: $(hostname), $(nproc) cores; started $(date -u -d "@$suite_epoch" '+%Y-%m-%d %H:%M:%S UTC' 2>/dev/null || date -u)"
    echo "- GPU: ${gpu_line:-none}"
    echo "- data: ${data:-synthetic, $count JPEGs of 500 x 375, quality 90 (pipebench-data synthetic)}"
    echo "- budget: --budget=$budget${steps:+ --steps=$steps} per end-to-end case, workers $workers; time limit $limit s; total $(elapsed) s"
    echo
    if [ -n "$skipped_why" ]; then
      echo "**Nothing ran on a GPU: $skipped_why.** Each step below says what was skipped and why."
      echo
    fi
    echo "## Steps"
    echo
    echo "| step | result | seconds | note |"
    echo "|---|---|---:|---|"
    for row in "${status_rows[@]}"; do
      IFS='|' read -r step result secs note <<<"$row"
      echo "| $step | $result | $secs | ${note//|//} |"
    done
  } >"$s"
  # What pipebench said about each run (cases not run, warnings, errors), from its console output.
  local f said
  for f in "$tmp"/*.out; do
    [ -f "$f" ] || continue
    said="$(grep -h '^pipebench: ' "$f" | grep -v '^pipebench: CUDA cases not run' | sort -u | head -n 12)"
    [ -n "$said" ] || continue
    if [ -z "${said_header:-}" ]; then
      printf '\n## What pipebench said\n' >>"$s"
      said_header=1
    fi
    { printf '\n%s:\n\n' "$(basename "$f" .out)"; sed 's/^/- /' <<<"$said"; } >>"$s"
  done
  if ls "$out"/*.json >/dev/null 2>&1 || [ -s "$out/tests.log" ]; then
    if command -v python3 >/dev/null && [ -f "$bundle/scripts/gpu_suite_summary.py" ]; then
      python3 "$bundle/scripts/gpu_suite_summary.py" --out "$out" --report "$bin/pipebench-report" >>"$s" ||
        echo "(figures: gpu_suite_summary.py failed; the JSONs and tests.log hold them)" >>"$s"
    else
      echo "(figures not extracted: python3 or scripts/gpu_suite_summary.py missing; the JSONs and tests.log hold them)" >>"$s"
    fi
  fi
  say "summary: $s"
}

skipped_why=""
skip_all() {  # every step after $1 skipped for reason $2; summary; exit 0 (1 after a failure)
  local from="$1" reason="$2" step seen=0
  skipped_why="$reason"
  for step in gpu data tests sanitizer torch stage e2e; do
    if [ "$step" = "$from" ]; then seen=1; continue; fi
    [ "$seen" -eq 1 ] || continue
    if [ "$step" = e2e ]; then
      local r b
      for r in "${recipes[@]}"; do for b in "${baselines[@]}"; do
        note_step "e2e $r --baseline=$b" skipped 0 "$reason"
      done; done
    else
      note_step "$step" skipped 0 "$reason"
    fi
  done
  write_summary
  exit "$failed"
}

suite_epoch=$(date +%s)
say "bundle $bundle, output ${out}, time limit $limit s"
[ "$dry" -eq 0 ] || say "dry run: the commands, none run ($tmp: the temporary folder; \$OUT: $out)"

# --- gpu: is there a device? ------------------------------------------------------------------
t0=$SECONDS
gpu_line=""
if [ "$dry" -eq 1 ]; then
  echo "+ nvidia-smi -L"
elif ! command -v nvidia-smi >/dev/null; then
  note_step gpu skipped 0 "no GPU: nvidia-smi not found"
  skip_all gpu "no GPU (nvidia-smi not found)"
elif ! gpu_line="$(nvidia-smi -L 2>&1 | grep -m1 '^GPU ')"; then
  note_step gpu skipped 0 "no GPU: nvidia-smi -L lists none"
  skip_all gpu "no GPU (nvidia-smi -L lists none)"
fi

# --- data ---------------------------------------------------------------------------------------
t0=$SECONDS
if [ -n "$data" ]; then
  note_step data given 0 "$data"
else
  procs=$(nproc 2>/dev/null || echo 4)
  [ "$procs" -le 16 ] || procs=16
  [ "$procs" -le "$count" ] || procs=$count
  [ "$dry" -eq 1 ] || mkdir -p "$tmp/parts" "$data_dir"
  pids=()
  for ((i = 0; i < procs; i++)); do
    part=$(( count / procs + (i < count % procs ? 1 : 0) ))
    cmd=("$bin/pipebench-data" synthetic "$tmp/parts/$i" --count "$part" --classes $((part < 10 ? part : 10)) --width 500 --height 375
         --quality 90 --seed $((i + 1)))
    if [ "$dry" -eq 1 ]; then echo "+ $(quote "${cmd[@]}") &"; else timeout "$bound_data" "${cmd[@]}" >/dev/null & pids+=($!); fi
  done
  rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  if [ "$dry" -eq 1 ]; then
    echo "+ (move $tmp/parts/<i>/class_<c>/img_<n>.jpg to $tmp/data/class_<c>/p<i>_img_<n>.jpg)"
  elif [ "$rc" -eq 0 ]; then
    for ((i = 0; i < procs; i++)); do
      for cls in "$tmp/parts/$i"/*/; do
        c="$(basename "$cls")"
        mkdir -p "$data_dir/$c"
        for f in "$cls"*.jpg; do mv "$f" "$data_dir/$c/p${i}_$(basename "$f")"; done
      done
    done
    rm -rf "$tmp/parts"
    note_step data made $((SECONDS - t0)) "$count synthetic JPEGs, 500 x 375, q90, $procs processes"
  else
    note_step data "$(result_of "$rc")" $((SECONDS - t0)) "pipebench-data synthetic"
    failed=1
    skip_all data "no dataset"
  fi
fi

# pipebench's own view: where the driver or the runtime cannot use the GPU it says "CUDA cases
# not run" and registers no BM_H2D.
t0=$SECONDS
if [ "$dry" -eq 1 ]; then
  bounded "$bound_gpu" "" "$bin/pipebench" --data="$data_dir" --steps=1 "${common[@]}" --benchmark_list_tests=true \
    --benchmark_filter='^BM_H2D/'
else
  listing="$(timeout "$bound_gpu" "$bin/pipebench" --data="$data_dir" --steps=1 "${common[@]}" \
    --benchmark_list_tests=true --benchmark_filter='^BM_H2D/' 2>&1)"
  why="$(grep -m1 'CUDA cases not run' <<<"$listing")"
  if [ -n "$why" ] || ! grep -q '^BM_H2D/' <<<"$listing"; then
    why="${why#*baselines): }"
    note_step gpu skipped $((SECONDS - t0)) "pipebench: ${why:-registers no BM_H2D: $(tail -n 1 <<<"$listing")}"
    skip_all data "no usable GPU: ${why:-pipebench registers no BM_H2D}"
  fi
  note_step gpu ready $((SECONDS - t0)) "$gpu_line"
fi

# --- tests and the sanitizer ---------------------------------------------------------------------
log="$out/tests.log"
t0=$SECONDS
bounded "$bound_tests" "$log" "$bundle/tests/run-gpu-tests.sh" --tests-only --timeout "$bound_tests"
note_step tests "$(result_of "$step_rc")" $((SECONDS - t0)) "run-gpu-tests.sh --tests-only"
[ "$step_rc" -eq 0 ] || failed=1

t0=$SECONDS
if [ "$dry" -eq 0 ] && ! command -v compute-sanitizer >/dev/null && [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" ]; then
  note_step sanitizer skipped 0 "compute-sanitizer not found (PATH or \$CUDA_HOME/bin)"
else
  [ "$dry" -eq 1 ] || echo "== compute-sanitizer --tool memcheck" >>"$log"
  bounded "$bound_sanitizer" "$log" "$bundle/tests/run-gpu-tests.sh" --sanitizer-only --tests-only --timeout "$san_timeout"
  note_step sanitizer "$(result_of "$step_rc")" $((SECONDS - t0)) "memcheck, each binary at most $san_timeout s"
  [ "$step_rc" -eq 0 ] || failed=1
fi

# --- the CNN against PyTorch ----------------------------------------------------------------------
t0=$SECONDS
if [ ! -f "$bundle/scripts/cnn_torch_check.py" ]; then
  note_step torch skipped 0 "scripts/cnn_torch_check.py not in this bundle"
elif [ "$dry" -eq 0 ] && ! command -v python3 >/dev/null; then
  note_step torch skipped 0 "python3 not found"
else
  [ "$dry" -eq 1 ] || echo "== cnn_torch_check.py" >>"$log"
  bounded "$bound_torch" "$log" python3 "$bundle/scripts/cnn_torch_check.py" --bundle "$bundle"
  case "$step_rc" in
    77) note_step torch skipped $((SECONDS - t0)) "$(grep -m1 '^cnn_torch_check' "$log" | tail -n 1)" ;;
    *) note_step torch "$(result_of "$step_rc")" $((SECONDS - t0)) "cuda:cnn loss and gradients against PyTorch"
       [ "$step_rc" -eq 0 ] || failed=1 ;;
  esac
fi

# --- stage cases: H2D with its peak, the MLP step, the device operators -----------------------------
t0=$SECONDS
bounded "$bound_stage" "$tmp/stage.out" "$bin/pipebench" --data="$data_dir" --recipe=imagenet_train --baseline=cuda \
  --steps=3 "${common[@]}" --benchmark_min_time=0.1 \
  --benchmark_filter='^BM_H2D/|^BM_TrainStep/|^BM_Transform/[a-z_]+/device/|^BM_Decode/(turbo_full|nvjpeg)(/|$)' \
  --benchmark_out="$out/stage.json" --benchmark_out_format=json
note_step stage "$(result_of "$step_rc")" $((SECONDS - t0)) "BM_H2D, BM_TrainStep/cuda, device operators, nvJPEG against TurboJPEG: stage.json"
[ "$step_rc" -eq 0 ] || failed=1

# --- end-to-end sweeps and their reports ------------------------------------------------------------
for r in "${recipes[@]}"; do
  for b in "${baselines[@]}"; do
    t0=$SECONDS
    json="$out/e2e-$r-${b//:/_}.json"
    bounded "$bound_e2e" "$tmp/e2e-$r-${b//:/_}.out" "$bin/pipebench" --data="$data_dir" --recipe="$r" --baseline="$b" \
      --workers="$workers" "${run_sizing[@]}" "${common[@]}" \
      --benchmark_filter="^BM_TrainStep/|^BM_EndToEnd/$r/$b/workers:[0-9]+/iterations" \
      --benchmark_out="$json" --benchmark_out_format=json
    rc=$step_rc
    if [ "$dry" -eq 1 ]; then
      echo "+ $(quote "$bin/pipebench-report" "$json") >> \$OUT/reports.md"
    elif [ -s "$json" ]; then
      { echo "## $r, --baseline=$b"; echo; echo '```'; } >>"$out/reports.md"
      timeout "$bound_report" "$bin/pipebench-report" "$json" >>"$out/reports.md" 2>&1 ||
        echo "(pipebench-report exited $?)" >>"$out/reports.md"
      { echo '```'; echo; } >>"$out/reports.md"
    fi
    note_step "e2e $r --baseline=$b" "$(result_of "$rc")" $((SECONDS - t0)) "$(basename "$json")"
    [ "$rc" -eq 0 ] || failed=1
  done
done

write_summary
[ "$dry" -eq 1 ] || say "done in $(elapsed) s: $([ "$failed" -eq 0 ] && echo 'every step passed' || echo 'a step failed (summary.md)')"
exit "$failed"
