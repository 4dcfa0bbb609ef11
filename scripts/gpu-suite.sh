#!/usr/bin/env bash
# gpu-suite.sh: every GPU figure of pipebench in one call on a GPU node, within 7 minutes
# (--time-limit 420 s: the call that runs it can allow about 540 s) on a 16-core H200 node,
# each step bounded by `timeout`, the figures that matter most first. Shipped at the root of
# the bundle (scripts/bundle.sh; docs/gpu.md); run it from there:
#
#   ./gpu-suite.sh [--out DIR] [--data DIR] [OPTIONS]
#
# Steps, in order:
#   gpu        nvidia-smi -L must list a GPU (none: every step skipped, exit 0)
#   libraries  the folders holding what the bundle needs from the node (cuBLAS, cuBLASLt,
#              cuDNN 9, nvJPEG, NVRTC): python3's nvidia/*/lib (the pip packages
#              nvidia-cudnn-cu13, nvidia-cublas, ...), then ldconfig -p, then
#              /usr/local/cuda*/lib64; exported in LD_LIBRARY_PATH, each named with where it
#              was found; then `ldd` over every ELF file of the bundle: a library "not found"
#              fails the suite naming it and who needs it; then tests/cnn_dump --versions:
#              cuBLAS loaded (pipebench loads it at run time, so ldd cannot see it; not
#              loadable fails the suite with the loader's reason), the cuDNN built with and
#              the one loaded (a warning when that one is older)
#   data       a synthetic ImageNet-like dataset (pipebench-data synthetic: --count JPEGs of
#              500 x 375, quality 90, 10 classes, one process per core) in a temporary folder,
#              removed at the end; or --data=DIR, used as it is
#   device     pipebench must see the GPU (registers BM_H2D): a listed GPU that pipebench
#              cannot use fails the suite (exit 1) with pipebench's reason
#   stage      --baseline=cuda: BM_H2D (pageable and pinned, sync and async, batch 32..256,
#              and the peak pinned copy of 256 MiB in the same run) and BM_TrainStep/cuda
#   cnn step   --baseline=cuda:cnn: BM_TrainStep/cuda:cnn
#   e2e        per recipe (imagenet_train, deit_train) with --baseline=cuda:cnn: BM_TrainStep
#              and the BM_EndToEnd sweep at --workers, then bin/pipebench-report of the run
#   ops        the device batch operators (BM_Transform/<op>/device/...) and BM_Decode/nvjpeg
#              against BM_Decode/turbo_full on the same round of files
#   tests      the CUDA tests (tests/run-gpu-tests.sh --tests-only, each binary at most 15 s)
#   torch      scripts/cnn_torch_check.py: the cuda:cnn step's loss and gradients against
#              PyTorch (skipped, with its one line, without torch)
#   e2e        per recipe with --baseline=cuda, as above
#   sanitizer  compute-sanitizer --tool memcheck over the device-op, CUDA and region-timer
#              tests (run-gpu-tests.sh --sanitizer-only), each at most --sanitizer-timeout;
#              "Device not supported" is a skip with one line
# Every step is cut to what is left of --time-limit; one with under 5 s left is not run.
#
# Output (--out, default ./gpu-suite-out), at most 10 files:
#   summary.md        rewritten before and after every step, so that a call cut off from
#                     outside still returns what ran: the bundle and its size, the libraries
#                     and where each was found, the cuDNN versions, each step's result and
#                     time (a step still "running" was cut off there), the steps not reached,
#                     then the figures (scripts/gpu_suite_summary.py, python3): H2D pinned
#                     against the peak (%), pageable against pinned, the training steps' ms and
#                     TFLOP/s, each recipe x baseline's verdict with its smallest compute-bound
#                     worker count and AU, the device operators' times, nvJPEG's images/s
#                     against TurboJPEG's, the tests, the PyTorch check, the sanitizer's result
#   console.log       every step's output, appended as it runs (line-buffered where stdbuf
#                     exists): what a step printed before it was cut off is there
#   reports.md        pipebench-report of each end-to-end run
#   stage.json, cnn-step.json, ops.json, e2e-<recipe>-<baseline>.json (4)   the runs (Google
#                     Benchmark JSON + pipebench's keys; pipebench writes each at its end)
#
# Options:
#   --out DIR            output folder (default ./gpu-suite-out; made; files of an earlier suite replaced)
#   --data DIR           use this ImageFolder dataset instead of a synthetic one
#   --count N            synthetic images (default 1024)
#   --budget S           pipebench --budget: seconds per end-to-end case (default 3)
#   --steps N            pipebench --steps: fixed batches per end-to-end case (default: by --budget)
#   --workers LIST       the sweep's worker counts (default 1,2,4,8,16)
#   --sanitizer-timeout S  each test binary under compute-sanitizer (default 30; the step: 90)
#   --time-limit S       the whole suite (default 420); each step gets at most what is left
#   --bundle DIR         the bundle to run (default: the folder of this script)
#   --no-system-libs     find the node's libraries in python3's nvidia packages and
#                        LD_LIBRARY_PATH only (no ldconfig -p, no /usr/local/cuda*), and check
#                        them with the loader's cache off (ld.so --inhibit-cache, as ldd runs it): what a
#                        node whose CUDA libraries come only from pip sees (the rehearsal test)
#   --dry-run            print every command it would run, run nothing, write nothing
# Without a GPU (no nvidia-smi, or no GPU listed) it writes summary.md with what it skipped
# and why and exits 0. Killed (TERM, INT, HUP): it stops the running step, marks it cut off in
# summary.md and exits 1.
# Exit status: 0 every step ran and passed (or skipped without a GPU); 1 a step failed, timed
# out, was not reached in the time limit, or the suite was cut off (summary.md says which);
# 2 bad arguments or no bundle.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
bundle=""
out="./gpu-suite-out"
data=""
count=1024
budget=3
steps=""
workers="1,2,4,8,16"
san_timeout=30
limit=420
dry=0
system_libs=1
recipes=(imagenet_train deit_train)
first_baseline=cuda:cnn   # the first sweep of each recipe; the second baseline's come after the tests
second_baseline=cuda

usage() { sed -n '2,75p' "$0"; }
need() { [ -n "${2:-}" ] || { echo "gpu-suite: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --out|--data|--count|--budget|--steps|--workers|--sanitizer-timeout|--time-limit|--bundle)
      need "$1" "${2:-}"; opt="$1"; val="$2"; shift 2 ;;
    --out=*|--data=*|--count=*|--budget=*|--steps=*|--workers=*|--sanitizer-timeout=*|--time-limit=*|--bundle=*)
      opt="${1%%=*}"; val="${1#*=}"; shift ;;
    --dry-run) dry=1; shift; continue ;;
    --no-system-libs) system_libs=0; shift; continue ;;
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

# Bounds of each step, seconds; each is also cut to the time left. The steps up to the
# PyTorch check fit in the default 420 s at their bounds (20 + 20 + 30 + 20 + 40 + 30 +
# 2 x (60 + 5) + 25 + 60 + 40 = 415 s); the second baseline's sweeps and the sanitizer get
# what is left (on a 16-core node most steps end well within their bounds).
n_workers=$(tr ',' '\n' <<<"$workers" | wc -l)
# A case takes its budget + about 1.5 s (loader start); a CUDA step adds its set-up (cuDNN's
# handle and algorithms, the 0.5 s warm-up of compute_ms). A run cut by its timeout writes
# no JSON (pipebench writes it at the end): its rows so far are in console.log.
case_s=$(awk -v b="$budget" 'BEGIN { printf "%d", b + 6 }')
[ -z "$steps" ] || case_s=$((steps / 2 + 6))                  # about 0.5 s per batch at 1 worker
bound_device=20
bound_versions=20
bound_data=30
bound_stage=40
bound_cnn=30
bound_e2e=$((n_workers * case_s + 15))  # the sweep, BM_TrainStep, start-up: 60 s by default
bound_report=5
bound_ops=25
bound_tests=60         # each test binary at most 15 s (run-gpu-tests.sh --timeout)
test_timeout=15
bound_torch=40         # cnn_dump (cuDNN's start) and PyTorch's import and CUDA start
bound_sanitizer=90     # each binary at most --sanitizer-timeout

# pipebench's flags shared by every run: --presize=off and --shards=0 keep --data's folder
# untouched (no .pipebench-cache beside it).
common=(--presize=off --shards=0 --quiet)
run_sizing=(--budget="$budget")
[ -z "$steps" ] || run_sizing=(--steps="$steps")

# The steps in their order (summary.md lists those not reached).
e2e_step() { echo "e2e $1 --baseline=$2"; }
plan=(gpu libraries data device stage "cnn step")
for r in "${recipes[@]}"; do plan+=("$(e2e_step "$r" "$first_baseline")"); done
plan+=(ops tests torch)
for r in "${recipes[@]}"; do plan+=("$(e2e_step "$r" "$second_baseline")"); done
plan+=(sanitizer)

start=$SECONDS
status_rows=()   # "step|result|seconds|note" for summary.md
declare -A done_steps=()
failed=0
tmp=""
console=""
running_step=""
running_since=0
step_pid=""
data_pids=()
lib_notes=()     # summary.md's lines about the libraries
if [ "$dry" -eq 0 ]; then
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/gpu-suite.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$out" || { echo "gpu-suite: cannot make $out" >&2; exit 2; }
  out="$(cd "$out" && pwd)"
  rm -f "$out"/summary.md "$out"/console.log "$out"/tests.log "$out"/reports.md "$out"/stage.json \
    "$out"/cnn-step.json "$out"/ops.json "$out"/e2e-*.json
  console="$out/console.log"
  : >"$console"
else
  tmp="${TMPDIR:-/tmp}/gpu-suite.XXXXXX"  # what mktemp would make
fi
data_dir="${data:-$tmp/data}"
# Line-buffered output where coreutils' stdbuf is there: a step cut off keeps what it printed.
linebuf=()
if command -v stdbuf >/dev/null; then linebuf=(stdbuf -oL -eL); fi

say() { echo "gpu-suite: $*"; }
quote() {  # the words as a shell would read them back: plain, or in single quotes
  local a text="" q="'"
  for a in "$@"; do
    if [[ "$a" =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then text+="$a "; else text+="'${a//$q/$q\\$q$q}' "; fi
  done
  echo "${text% }"
}
elapsed() { echo $((SECONDS - start)); }
bundle_size() {  # "N.N MiB in M files"
  local bytes files
  bytes=$(du -sb "$bundle" 2>/dev/null | cut -f1 || echo 0)
  files=$(find "$bundle" -type f 2>/dev/null | wc -l)
  awk -v b="${bytes:-0}" -v f="$files" 'BEGIN { printf "%.1f MiB in %d files", b / 1048576, f }'
}

write_summary() {  # summary.md: what is known now (called before and after every step)
  [ "$dry" -eq 0 ] || return 0
  local s="$out/summary.md" row step result secs note l
  {
    echo "# pipebench GPU suite"
    echo
    echo "- bundle: $bundle ($(bundle_size); commit $(sed -n 's/^commit: //p' "$bundle/MANIFEST.txt" 2>/dev/null | head -1))"
    echo "- host: ${HOSTNAME:-$(uname -n)}, $(nproc) cores; started $(date -u -d "@$suite_epoch" '+%Y-%m-%d %H:%M:%S UTC' 2>/dev/null || date -u)"
    echo "- GPU: ${gpu_line:-none}"
    for l in "${lib_notes[@]}"; do echo "- $l"; done
    echo "- data: ${data:-synthetic, $count JPEGs of 500 x 375, quality 90 (pipebench-data synthetic)}"
    echo "- budget: --budget=$budget${steps:+ --steps=$steps} per end-to-end case, workers $workers; time limit $limit s; $(elapsed) s so far"
    echo "- every step's output: console.log"
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
    if [ -n "$running_step" ]; then
      echo "| $running_step | running | $((SECONDS - running_since)) | started at $((running_since - start)) s; if the suite has stopped, it was cut off here (console.log holds the step's output so far) |"
    fi
    local waiting=()
    for step in "${plan[@]}"; do
      [ -n "${done_steps[$step]:-}" ] || [ "$step" = "$running_step" ] || waiting+=("$step")
    done
    if [ ${#waiting[@]} -gt 0 ] && [ -z "$skipped_why" ]; then
      echo
      echo "Not reached (yet): $(IFS=,; echo "${waiting[*]}" | sed 's/,/, /g')."
    fi
  } >"$s"
  if ls "$out"/*.json >/dev/null 2>&1 || grep -q '^>>> gpu-suite: step \(tests\|torch\|sanitizer\|stage\|cnn step\|ops\|e2e\)' "$console" 2>/dev/null; then
    if command -v python3 >/dev/null && [ -f "$bundle/scripts/gpu_suite_summary.py" ]; then
      python3 "$bundle/scripts/gpu_suite_summary.py" --out "$out" --report "$bin/pipebench-report" >>"$s" 2>/dev/null ||
        echo "(figures: gpu_suite_summary.py failed; the JSONs and console.log hold them)" >>"$s"
    else
      echo "(figures not extracted: python3 or scripts/gpu_suite_summary.py missing; the JSONs and console.log hold them)" >>"$s"
    fi
  fi
}
note_step() {  # a row of summary.md's steps table, a line on the console, summary.md rewritten
  [ "$dry" -eq 0 ] || return 0
  status_rows+=("$1|$2|$3|${4:-}")
  done_steps[$1]=1
  say "$1: $2 ($3 s; elapsed $(elapsed) s of $limit)${4:+: $4}"
  write_summary
}
# bounded STEP BOUND CMD...: CMD under `timeout` (cut to the time left) in its own process
# group, its output appended to console.log as it runs. Sets step_rc: 124 when it ran out,
# 125 when there was no time left to start it.
bounded() {
  local step="$1" bound="$2"; shift 2
  local left=$((limit - (SECONDS - start)))
  [ "$bound" -le "$left" ] || bound="$left"
  step_rc=0
  if [ "$dry" -eq 1 ]; then
    echo "+ timeout $bound $(quote "$@")"
    return 0
  fi
  if [ "$bound" -lt 5 ]; then
    echo "gpu-suite: no time left for: $(quote "$@")"
    step_rc=125
    return 0
  fi
  echo "+ timeout $bound $(quote "$@")"
  echo ">>> gpu-suite: step $step: timeout $bound $(quote "$@")" >>"$console"
  running_step="$step"
  running_since=$SECONDS
  write_summary
  timeout -k 10 "$bound" "${linebuf[@]}" "$@" >>"$console" 2>&1 </dev/null &
  step_pid=$!
  wait "$step_pid" || step_rc=$?
  step_pid=""
  running_step=""
  [ "$step_rc" -ne 137 ] || step_rc=124
  echo "<<< gpu-suite: step $step: exit $step_rc after $((SECONDS - running_since)) s" >>"$console"
}
result_of() {  # step_rc -> passed / failed (exit N) / timed out / not run
  case "$1" in
    0) echo passed ;;
    124) echo "timed out" ;;
    125) echo "not run" ;;
    *) echo "failed (exit $1)" ;;
  esac
}
note_of() {  # the note for a step that did not pass: its last lines, or why it was not run
  case "$1" in
    0) echo "${2:-}" ;;
    125) echo "no time left ($(elapsed) s of the $limit s limit)" ;;
    *) echo "${2:-}${2:+; }$(step_tail 1)" ;;
  esac
}
step_tail() {  # the last N lines the running step wrote to console.log (before its <<< line)
  [ -n "$console" ] && [ -f "$console" ] || return 0
  sed -n '/^>>> gpu-suite: step /h; /^>>> gpu-suite: step /!H; ${x;p}' "$console" | grep -v '^[<>]\{3\} gpu-suite: ' |
    grep -v '^\s*$' | tail -n "$1" | cut -c1-300 || true
}
show_failure() {  # the console's last lines of a step that did not pass
  [ "$dry" -eq 0 ] && [ "$step_rc" -ne 0 ] && [ "$step_rc" -ne 125 ] || return 0
  step_tail 12 | sed 's/^/  | /'
}

on_signal() {  # killed from outside: stop the step, keep what ran, say so
  trap - TERM INT HUP
  if [ -n "$step_pid" ]; then kill -TERM -- "-$step_pid" 2>/dev/null || kill -TERM "$step_pid" 2>/dev/null || true; fi
  local p
  for p in "${data_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  if [ -n "$running_step" ]; then
    status_rows+=("$running_step|cut off (SIG$1)|$((SECONDS - running_since))|the suite was stopped from outside; console.log holds the step's output up to the cut")
    done_steps[$running_step]=1
    echo "<<< gpu-suite: step $running_step: cut off by SIG$1 after $((SECONDS - running_since)) s" >>"$console"
    running_step=""
  fi
  failed=1
  write_summary
  say "stopped by SIG$1 after $(elapsed) s: summary.md and console.log keep what ran"
  exit 1
}
if [ "$dry" -eq 0 ]; then
  trap 'on_signal TERM' TERM
  trap 'on_signal INT' INT
  trap 'on_signal HUP' HUP
fi

skipped_why=""
skip_all() {  # every step not run yet skipped for reason $1; summary; exit 0 (1 after a failure)
  local reason="$1" step
  [ "$failed" -eq 1 ] || skipped_why="$reason"
  for step in "${plan[@]}"; do
    [ -z "${done_steps[$step]:-}" ] || continue
    status_rows+=("$step|$([ "$failed" -eq 1 ] && echo "not run" || echo skipped)|0|$reason")
    done_steps[$step]=1
  done
  write_summary
  say "summary: $out/summary.md"
  exit "$failed"
}

suite_epoch=$(date +%s)
gpu_line=""
say "bundle $bundle ($(bundle_size)), output ${out}, time limit $limit s"
[ "$dry" -eq 0 ] || say "dry run: the commands, none run ($tmp: the temporary folder; \$OUT: $out)"

# --- gpu: is there a device? -----------------------------------------------------------------
# nvidia-smi's listing captured first, then read: `nvidia-smi -L | grep -m1` under pipefail
# fails when grep stops before nvidia-smi has written every GPU (SIGPIPE on a multi-GPU node).
if [ "$dry" -eq 1 ]; then
  echo "+ nvidia-smi -L"
elif ! command -v nvidia-smi >/dev/null; then
  note_step gpu skipped 0 "no GPU: nvidia-smi not found"
  skip_all "no GPU (nvidia-smi not found)"
else
  smi_rc=0
  smi_out="$(timeout 20 nvidia-smi -L 2>&1)" || smi_rc=$?
  gpu_line="$(grep '^GPU ' <<<"$smi_out" | head -n 1 || true)"
  gpu_count="$(grep -c '^GPU ' <<<"$smi_out" || true)"
  if [ -z "$gpu_line" ]; then
    note_step gpu skipped 0 "no GPU: nvidia-smi -L lists none (exit $smi_rc: $(head -n 1 <<<"$smi_out"))"
    skip_all "no GPU (nvidia-smi -L lists none)"
  fi
  [ "$gpu_count" -le 1 ] || gpu_line="$gpu_line (and $((gpu_count - 1)) more)"
  note_step gpu listed 0 "$gpu_line"
fi

# --- libraries: find what the bundle needs from the node, then ldd --------------------------
# Candidate folders, best first, as "folder<TAB>where from" lines.
candidate_dirs() {
  local py d
  py="$(command -v python3 || true)"
  if [ -n "$py" ]; then
    # NVIDIA's pip packages (nvidia-cudnn-cu13, nvidia-cublas, ...): site-packages/nvidia/*/lib
    timeout 20 "$py" - 2>/dev/null <<'PY' | sed "s|\$|\tpython3 ($py) nvidia package|" || true
import glob, os
try:
    import nvidia
except Exception:
    raise SystemExit(0)
for base in list(getattr(nvidia, "__path__", [])):
    for d in sorted(glob.glob(os.path.join(base, "*", "lib"))):
        print(os.path.realpath(d))
PY
  fi
  if [ "$system_libs" -eq 1 ]; then
    { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null || true; } |
      sed -n 's|.* => \(/.*\)/[^/]*$|\1|p' | awk '!seen[$0]++ { print $0 "\tldconfig -p" }'
    for d in /usr/local/cuda*/lib64 /usr/local/cuda*/targets/*/lib; do
      [ -d "$d" ] && printf '%s\t%s\n' "$d" "/usr/local/cuda*" || true
    done
  fi
}
elf_files() {  # every ELF file of the bundle
  local d f
  for d in "$bundle/bin" "$bundle/tests" "$bundle/lib"; do
    [ -d "$d" ] || continue
    find "$d" -type f | sort | while read -r f; do
      if [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ]; then echo "$f"; fi
    done
  done
}
ldso="$(ls /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 2>/dev/null | head -n 1 || true)"
list_libs() {  # the loader's view of one ELF file: "name => path" lines
  if [ "$system_libs" -eq 0 ] && [ -n "$ldso" ]; then
    LD_TRACE_LOADED_OBJECTS=1 "$ldso" --inhibit-cache "$1" 2>/dev/null || true  # ldd's way, the cache off
  else
    ldd "$1" 2>/dev/null || true
  fi
}
missing_libs() {  # "library<TAB>needed by" for every library the loader does not find
  local f rel name arrow path
  while read -r f; do
    rel="${f#"$bundle"/}"
    while read -r name arrow path _; do
      if [ "$arrow" = "=>" ] && [ "$path" = "not" ]; then printf '%s\t%s\n' "$name" "$rel"; fi
    done < <(list_libs "$f")
  done < <(elf_files) | sort -u
}

t0=$SECONDS
# cnn_dump --versions: cuBLAS and cuDNN are found by dlopen, which reads the loader's cache
# too; with --no-system-libs it runs with the cache off, as the ldd pass does.
versions_cmd=("$bundle/tests/cnn_dump" --versions)
if [ "$system_libs" -eq 0 ] && [ -n "$ldso" ]; then versions_cmd=("$ldso" --inhibit-cache "${versions_cmd[@]}"); fi
if [ "$dry" -eq 1 ]; then
  echo "+ (the libraries the bundle needs: python3's nvidia/*/lib$([ "$system_libs" -eq 1 ] && echo ", ldconfig -p, /usr/local/cuda*/lib64"); exported in LD_LIBRARY_PATH)"
  echo "+ ldd <every ELF file of the bundle>"
  bounded libraries "$bound_versions" "${versions_cmd[@]}"
else
  echo ">>> gpu-suite: step libraries: find, export, ldd" >>"$console"
  orig_ld="${LD_LIBRARY_PATH:-}"
  # What the loader does not find (the bundle's lib/ through its RUNPATH, and what the node
  # has set), and what pipebench and cuDNN open at run time: nvJPEG, NVRTC (cuDNN's
  # runtime-compiled engines); cuDNN's sub-libraries sit beside libcudnn.so.9. Only the
  # folders found go into LD_LIBRARY_PATH (not the bundle's lib/: python3 and NVIDIA's
  # tools run under it too).
  wanted="$(missing_libs | cut -f1 | sort -u)"
  for w in libcudnn.so.9 libcublas.so.13 libcublasLt.so.13 libnvjpeg.so.13 libnvrtc.so.13; do
    grep -qx "$w" <<<"$wanted" || wanted+=$'\n'"$w"
  done
  mapfile -t candidates < <(candidate_dirs)
  added=()
  found_notes=()
  while read -r w; do
    [ -n "$w" ] || continue
    for c in "${candidates[@]}"; do
      dir="${c%%$'\t'*}"
      if [ -e "$dir/$w" ]; then
        found_notes+=("$w: $dir (${c#*$'\t'})")
        [[ " ${added[*]} " == *" $dir "* ]] || added+=("$dir")
        continue 2
      fi
    done
    case "$w" in
      libnvjpeg.so.13) found_notes+=("$w: not found (BM_Decode/nvjpeg will say so)") ;;
      libnvrtc.so.13) found_notes+=("$w: not found (optional: cuDNN's runtime-compiled engines)") ;;
      *) found_notes+=("$w: not found") ;;
    esac
  done <<<"$wanted"
  if [ ${#added[@]} -gt 0 ]; then
    LD_LIBRARY_PATH="$(IFS=:; echo "${added[*]}")${orig_ld:+:$orig_ld}"
  fi
  export LD_LIBRARY_PATH
  {
    echo "library folders searched (best first):"
    printf '  %s\n' "${candidates[@]}"
    echo "found:"
    printf '  %s\n' "${found_notes[@]}"
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  } >>"$console"
  if [ ${#found_notes[@]} -gt 0 ]; then
    lib_notes+=("libraries found: $(IFS=';'; echo "${found_notes[*]}" | sed 's/;/; /g')")
  else
    lib_notes+=("libraries found: none outside the bundle (candidates: ${#candidates[@]} folders)")
  fi
  if [ "$system_libs" -eq 1 ]; then lib_notes+=("LD_LIBRARY_PATH=$LD_LIBRARY_PATH"); else
    lib_notes+=("LD_LIBRARY_PATH=$LD_LIBRARY_PATH (--no-system-libs: no ldconfig -p, no /usr/local/cuda*, the loader's cache off)")
  fi
  missing="$(missing_libs)"
  echo "ldd over $(elf_files | wc -l) ELF files: $(if [ -n "$missing" ]; then echo "$(wc -l <<<"$missing") missing"; else echo "every library found"; fi)" >>"$console"
  if [ -n "$missing" ]; then
    # One line per library: "libX.so.N not found (needed by bin/pipebench, tests/cuda_test, ...)"
    what="$(awk -F'\t' '{ by[$1] = by[$1] (by[$1] ? ", " : "") $2 } END { for (l in by) print l " not found (needed by " by[l] ")" }' <<<"$missing" | sort)"
    echo "$what" | sed 's/^/  /' >>"$console"
    echo "$what" | sed 's/^/gpu-suite: libraries: /' >&2
    failed=1
    note_step libraries failed $((SECONDS - t0)) "$(tr '\n' ';' <<<"$what" | sed 's/;$//; s/;/; /g'); searched python3's nvidia/*/lib$([ "$system_libs" -eq 1 ] && echo ", ldconfig -p, /usr/local/cuda*/lib64") (console.log lists the folders)"
    skip_all "the bundled binaries do not load: a library is missing (libraries step)"
  fi
  # cuBLAS loaded (device/cublas.h: not linked), and the cuDNN loaded against the one built with.
  bounded libraries "$bound_versions" "${versions_cmd[@]}"
  versions="$(step_tail 4 | grep '^cnn_dump: ' || true)"
  cublas_line="$(grep -m1 'cuBLAS loaded' <<<"$versions" | sed 's/^cnn_dump: //' || true)"
  case "$step_rc" in
    0|77) [ -z "$cublas_line" ] || lib_notes+=("$cublas_line") ;;
  esac
  case "$step_rc" in
    0) lib_notes+=("$(grep -m1 'cuDNN built with' <<<"$versions" | sed 's/^cnn_dump: //')")
       if grep -q 'warning' <<<"$versions"; then
         lib_notes+=("**warning:** $(grep -m1 warning <<<"$versions" | sed 's/^cnn_dump: warning: //')")
         say "libraries: warning: $(grep -m1 warning <<<"$versions" | sed 's/^cnn_dump: warning: //')"
       fi
       note_step libraries passed $((SECONDS - t0)) "ldd: every library of every bundled binary found; $(grep -m1 'cuDNN built with' <<<"$versions" | sed 's/^cnn_dump: //; s/ (.*//')" ;;
    77) note_step libraries passed $((SECONDS - t0)) "ldd: every library found; $(grep -v 'cuBLAS loaded' <<<"$versions" | sed 's/^cnn_dump: //' | tail -n 1 || true)" ;;
    *) failed=1
       note_step libraries "$(result_of "$step_rc")" $((SECONDS - t0)) "$(note_of "$step_rc" "cnn_dump --versions (cuBLAS or cuDNN does not load)")"
       show_failure
       skip_all "the bundled binaries do not load (libraries step)" ;;
  esac
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
  [ "$dry" -eq 1 ] || echo ">>> gpu-suite: step data: $procs x pipebench-data synthetic" >>"$console"
  for ((i = 0; i < procs; i++)); do
    part=$(( count / procs + (i < count % procs ? 1 : 0) ))
    cmd=("$bin/pipebench-data" synthetic "$tmp/parts/$i" --count "$part" --classes $((part < 10 ? part : 10)) --width 500 --height 375
         --quality 90 --seed $((i + 1)))
    if [ "$dry" -eq 1 ]; then echo "+ $(quote "${cmd[@]}") &"; else timeout "$bound_data" "${cmd[@]}" >>"$console" 2>&1 </dev/null & data_pids+=($!); fi
  done
  rc=0
  for p in "${data_pids[@]}"; do wait "$p" || rc=$?; done
  data_pids=()
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
    failed=1
    note_step data "$(result_of "$rc")" $((SECONDS - t0)) "pipebench-data synthetic"
    skip_all "no dataset"
  fi
fi

# --- device: pipebench's own view -----------------------------------------------------------------
# Where the driver or the runtime cannot use the GPU, pipebench says "CUDA cases not run" and
# registers no BM_H2D: with a GPU listed, that is a failure, not a machine without a GPU.
t0=$SECONDS
bounded device "$bound_device" "$bin/pipebench" --data="$data_dir" --steps=1 "${common[@]}" --benchmark_list_tests=true \
  --benchmark_filter='^BM_H2D/'
if [ "$dry" -eq 0 ]; then
  listing="$(step_tail 200)"
  why="$(grep -m1 'CUDA cases not run' <<<"$listing" || true)"
  if [ "$step_rc" -ne 0 ] || [ -n "$why" ] || ! grep -q '^BM_H2D/' <<<"$listing"; then
    why="${why#*baselines): }"
    failed=1
    note_step device failed $((SECONDS - t0)) "nvidia-smi lists a GPU but pipebench cannot use it: ${why:-exit $step_rc, registers no BM_H2D: $(tail -n 1 <<<"$listing")}"
    show_failure
    skip_all "pipebench cannot use the GPU (device step)"
  fi
  note_step device ready $((SECONDS - t0)) "pipebench registers BM_H2D"
fi

# run_case STEP BOUND JSON NOTE PIPEBENCH-ARGS...: one pipebench run into $out/JSON.
run_case() {
  local step="$1" bound="$2" json="$3" note="$4"; shift 4
  local t=$SECONDS
  bounded "$step" "$bound" "$bin/pipebench" --data="$data_dir" "$@" "${common[@]}" \
    --benchmark_out="$out/$json" --benchmark_out_format=json
  note_step "$step" "$(result_of "$step_rc")" $((SECONDS - t)) "$(note_of "$step_rc" "$note")"
  show_failure
  [ "$step_rc" -eq 0 ] || failed=1
}
# e2e RECIPE BASELINE: the sweep, then its report.
e2e() {
  local r="$1" b="$2" t=$SECONDS rc json
  json="$out/e2e-$r-${b//:/_}.json"
  bounded "$(e2e_step "$r" "$b")" "$bound_e2e" "$bin/pipebench" --data="$data_dir" --recipe="$r" --baseline="$b" \
    --workers="$workers" "${run_sizing[@]}" "${common[@]}" \
    --benchmark_filter="^BM_TrainStep/|^BM_EndToEnd/$r/$b/workers:[0-9]+/iterations" \
    --benchmark_out="$json" --benchmark_out_format=json
  rc=$step_rc
  if [ "$dry" -eq 1 ]; then
    echo "+ $(quote "$bin/pipebench-report" "$json") >> \$OUT/reports.md"
  elif [ -s "$json" ]; then
    local report_s=$((limit - (SECONDS - start)))
    [ "$report_s" -le "$bound_report" ] || report_s=$bound_report
    [ "$report_s" -ge 1 ] || report_s=1
    { echo "## $r, --baseline=$b"; echo; echo '```'; } >>"$out/reports.md"
    timeout "$report_s" "$bin/pipebench-report" "$json" >>"$out/reports.md" 2>&1 ||
      echo "(pipebench-report exited $?)" >>"$out/reports.md"
    { echo '```'; echo; } >>"$out/reports.md"
  fi
  step_rc=$rc
  note_step "$(e2e_step "$r" "$b")" "$(result_of "$rc")" $((SECONDS - t)) "$(note_of "$rc" "$(basename "$json")")"
  show_failure
  [ "$rc" -eq 0 ] || failed=1
}

# --- the figures, most wanted first -----------------------------------------------------------------
run_case stage "$bound_stage" stage.json "BM_H2D against its peak, BM_TrainStep/cuda: stage.json" \
  --recipe=imagenet_train --baseline=cuda --steps=3 --benchmark_min_time=0.1 \
  --benchmark_filter='^BM_H2D/|^BM_TrainStep/'
run_case "cnn step" "$bound_cnn" cnn-step.json "BM_TrainStep/cuda:cnn: cnn-step.json" \
  --recipe=imagenet_train --baseline=cuda:cnn --steps=3 --benchmark_filter='^BM_TrainStep/'
for r in "${recipes[@]}"; do e2e "$r" "$first_baseline"; done
run_case ops "$bound_ops" ops.json "device batch operators, nvJPEG against TurboJPEG: ops.json" \
  --recipe=imagenet_train --baseline=cuda --steps=3 --benchmark_min_time=0.1 \
  --benchmark_filter='^BM_Transform/[a-z_]+/device/|^BM_Decode/(turbo_full|nvjpeg)(/|$)'

# --- the tests, the CNN against PyTorch ----------------------------------------------------------------
t0=$SECONDS
bounded tests "$bound_tests" "$bundle/tests/run-gpu-tests.sh" --tests-only --timeout "$test_timeout"
note_step tests "$(result_of "$step_rc")" $((SECONDS - t0)) "$(note_of "$step_rc" "run-gpu-tests.sh --tests-only, each binary at most $test_timeout s")"
show_failure
[ "$step_rc" -eq 0 ] || failed=1

t0=$SECONDS
if [ ! -f "$bundle/scripts/cnn_torch_check.py" ]; then
  note_step torch skipped 0 "scripts/cnn_torch_check.py not in this bundle"
elif [ "$dry" -eq 0 ] && ! command -v python3 >/dev/null; then
  note_step torch skipped 0 "python3 not found"
else
  bounded torch "$bound_torch" python3 "$bundle/scripts/cnn_torch_check.py" --bundle "$bundle"
  case "$step_rc" in
    77) note_step torch skipped $((SECONDS - t0)) "$(step_tail 5 | grep -m1 '^cnn_torch_check' || true)" ;;
    *) note_step torch "$(result_of "$step_rc")" $((SECONDS - t0)) "$(note_of "$step_rc" "cuda:cnn loss and gradients against PyTorch")"
       show_failure
       [ "$step_rc" -eq 0 ] || failed=1 ;;
  esac
fi

# --- the second baseline's sweeps, the sanitizer last --------------------------------------------------
for r in "${recipes[@]}"; do e2e "$r" "$second_baseline"; done

t0=$SECONDS
if [ "$dry" -eq 0 ] && ! command -v compute-sanitizer >/dev/null && [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" ]; then
  note_step sanitizer skipped 0 "compute-sanitizer not found (PATH or \$CUDA_HOME/bin)"
else
  bounded sanitizer "$bound_sanitizer" "$bundle/tests/run-gpu-tests.sh" --sanitizer-only --tests-only --timeout "$san_timeout"
  case "$step_rc" in
    77) note_step sanitizer skipped $((SECONDS - t0)) "compute-sanitizer: $(step_tail 5 | grep -m1 'compute-sanitizer: skipped' | sed 's/^run-gpu-tests: compute-sanitizer: //' || true)" ;;
    *) note_step sanitizer "$(result_of "$step_rc")" $((SECONDS - t0)) "$(note_of "$step_rc" "memcheck over cuda_test, device_ops_test, region_timer_test, each at most $san_timeout s")"
       show_failure
       [ "$step_rc" -eq 0 ] || failed=1 ;;
  esac
fi

write_summary
[ "$dry" -eq 1 ] || say "done in $(elapsed) s: $([ "$failed" -eq 0 ] && echo 'every step passed' || echo 'a step failed (summary.md)'); summary: $out/summary.md"
exit "$failed"
