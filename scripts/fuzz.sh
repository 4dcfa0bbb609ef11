#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz/ (fuzz preset: clang-14, ASan + UBSan, in
# build/fuzz) and runs each for a bounded time (CI: .ci/run calls it).
#
#   ./scripts/fuzz.sh [SECONDS] [TARGET ...]
#
# SECONDS per target (default 60); targets default to all six. Steps:
#   1. the seed corpus and spec dictionary, made by make_seed_corpus into
#      build/fuzz/seeds/ (real photos added from data/photos-in when it exists);
#   2. every saved input of tests/fuzz/regressions/<target>/ run once: they must pass;
#   3. each target for SECONDS (-max_total_time) on a fresh copy of its seeds, two targets
#      at a time on a machine with >= 2 cores, with its dictionary. The per-input limits
#      (malloc, RSS, time, length) are the harnesses' own, tests/fuzz/fuzz_common.h.
# Any crash, sanitizer report, leak, timeout or out-of-memory fails the run (exit 1): the
# input is kept as build/fuzz/artifacts/<target>/<kind>-<sha1>, the log beside it; a line
# per target gives executions, execs/s and libFuzzer's coverage (cov: edges, ft: features).
# To keep a found input as a regression test, copy it to tests/fuzz/regressions/<target>/
# and add a line to tests/fuzz/regressions/README.md saying what it found.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_DIR="${CCACHE_DIR:-$PWD/.cache/ccache}"
seconds="${1:-60}"
[ $# -gt 0 ] && shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_decode_turbo fuzz_decode_roi fuzz_decode_opencv fuzz_recipe fuzz_spec
           fuzz_report_json)
fi
build=build/fuzz
# clang-14 and libFuzzer's runtime (Debian: clang-14, libclang-rt-14-dev).
if ! command -v clang++-14 >/dev/null ||
   ! compgen -G "/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  echo "fuzz: needs clang++-14 and libFuzzer (apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 2
fi
t0=$(date +%s)
cmake --preset fuzz >/dev/null  # every time: a few seconds, and a changed preset applies
cmake --build --preset fuzz
echo "== fuzz: build took $(( $(date +%s) - t0 )) s"

# Sanitizer runtime options: leaks count (libFuzzer's -detect_leaks is on by default), UB is
# fatal, the suppressions are the asan preset's (tests/sanitizers/, each explained there).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$PWD/tests/sanitizers/ubsan.supp}"

photos=()
if [ -d data/photos-in ]; then photos=(--photos data/photos-in); fi
rm -rf "$build/seeds"
"$build/tests/fuzz/make_seed_corpus" "$build/seeds" "${photos[@]}"

seeds_of() {  # target -> seed directory
  case "$1" in
    fuzz_spec) echo "$build/seeds/spec" ;;
    fuzz_report_json) echo "$build/seeds/json" ;;
    *) echo "$build/seeds/images" ;;
  esac
}
dict_of() {
  case "$1" in
    fuzz_spec) echo "$build/seeds/spec.dict" ;;
    fuzz_report_json) echo "tests/fuzz/dicts/json.dict" ;;
    *) echo "tests/fuzz/dicts/image.dict" ;;
  esac
}

# 2. Regression inputs: a harness given files runs each once.
status=0
for t in "${targets[@]}"; do
  dir="tests/fuzz/regressions/$t"
  if compgen -G "$dir/*" >/dev/null; then
    if ! "$build/tests/fuzz/$t" "$dir"/* >"$build/regressions-$t.log" 2>&1; then
      echo "fuzz: $t fails on a saved regression input:" >&2
      tail -n 40 "$build/regressions-$t.log" >&2
      status=1
    fi
  fi
done

# 3. Time-bounded runs, two at a time.
run_target() {
  local t="$1" corpus="$build/corpus/$1" art="$build/artifacts/$1/"
  rm -rf "$corpus" "$art"
  mkdir -p "$corpus" "$art"
  cp "$(seeds_of "$t")"/* "$corpus"/
  "$build/tests/fuzz/$t" "$corpus" -max_total_time="$seconds" -print_final_stats=1 \
    -dict="$(dict_of "$t")" -artifact_prefix="$art" >"$build/fuzz-$t.log" 2>&1
}
summary() {
  local t="$1" log="$build/fuzz-$1.log" last execs rate
  last=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -n 1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  echo "fuzz: $t: ${execs:-?} executions, ${rate:-?} execs/s," \
       "$(grep -o 'cov: [0-9]* ft: [0-9]*' <<<"$last" || echo 'cov: ?'), corpus $(find "$build/corpus/$t" -type f | wc -l) files," \
       "peak RSS $(sed -n 's/^stat::peak_rss_mb: *//p' "$log") MB"
}

parallel=2
if [ "$(nproc)" -lt 2 ]; then parallel=1; fi
t0=$(date +%s)
pids=() names=()
for t in "${targets[@]}"; do
  run_target "$t" &
  pids+=($!) names+=("$t")
  if [ ${#pids[@]} -ge "$parallel" ]; then
    if ! wait "${pids[0]}"; then status=1; echo "fuzz: ${names[0]} FAILED" >&2; fi
    pids=("${pids[@]:1}") names=("${names[@]:1}")
  fi
done
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then status=1; echo "fuzz: ${names[$i]} FAILED" >&2; fi
done
for t in "${targets[@]}"; do
  summary "$t"
  if compgen -G "$build/artifacts/$t/*" >/dev/null; then
    status=1
    cp "$build/fuzz-$t.log" "$build/artifacts/$t/"
    echo "fuzz: $t found: $(find "$build/artifacts/$t" -type f ! -name '*.log' -printf '%f ')" >&2
    grep -m 3 -E 'ERROR: |SUMMARY: |fuzz finding|runtime error' "$build/fuzz-$t.log" >&2 || true
  fi
done
echo "== fuzz: ${#targets[@]} targets x ${seconds} s took $(( $(date +%s) - t0 )) s"
exit "$status"
