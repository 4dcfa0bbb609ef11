#!/usr/bin/env bash
# The main job: set up, build Release, make the default dataset (data/photos-in, real
# photographs from Debian's wallpaper packages) if it is missing, run every benchmark, and
# print the results, the verdict (pipebench-report) and where the JSON and the picture are.
# Extra arguments go to the pipebench binary, e.g.
#   ./scripts/run.sh --benchmark_filter=BM_Decode
#   ./scripts/run.sh --data=/path/to/imagenette2-320/train --workers=1,2,4,8
# pipebench runs in the caller's directory, so relative paths (--data, --benchmark_out,
# --trace, --pipeline) mean what they mean in the caller's shell. Without --data it reads
# the repository's data/photos-in; without --benchmark_out it writes out/run-*.json in the
# repository.
#
# Environment (for tests and scripted use):
#   PIPEBENCH_OUT_DIR    where out/run-*.json goes instead of the repository's out/
#   PIPEBENCH_BUILD_DIR  an existing build to run (its bench/ and datasets/ binaries):
#                        setup.sh and build.sh are skipped
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ -n "${PIPEBENCH_BUILD_DIR:-}" ]; then
  bin="$PIPEBENCH_BUILD_DIR"
else
  "$root/scripts/setup.sh"
  "$root/scripts/build.sh"
  bin="$root/build/release"
fi
out_dir="${PIPEBENCH_OUT_DIR:-$root/out}"
data=""
out=""
prev=""
for a in "$@"; do
  case "$a" in
    --data=*) data="${a#--data=}" ;;
    --benchmark_out=*) out="${a#--benchmark_out=}" ;;
  esac
  [ "$prev" = "--data" ] && data="$a"
  [ "$prev" = "--benchmark_out" ] && out="$a"
  prev="$a"
done

extra=()
if [ -z "$data" ]; then
  data="$root/data/photos-in"
  if [ ! -d "$data" ]; then
    echo "run: making the default dataset data/photos-in from Debian's wallpaper packages"
    "$bin/datasets/pipebench-data" photos "$root/data"
  fi
  extra+=(--data="$data")
fi
if [ -z "$out" ]; then
  mkdir -p "$out_dir"
  out="$out_dir/run-$(date +%Y%m%d-%H%M%S).json"
  extra+=(--benchmark_out="$out" --benchmark_out_format=json)
fi

echo "run: the cases' table comes first (compact; --counters=all for every counter), then the"
echo "run: verdict (pipebench-report) at the end, and the results in $out"
rc=0
"$bin/bench/pipebench" "${extra[@]}" "$@" || rc=$?
# Exit 3: the run finished and wrote its JSON, but some case reported an error (listed
# above); the verdict below still reads every case that ran. Anything else: stop here.
if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then exit "$rc"; fi

echo
echo "run: results in $out (Google Benchmark JSON; compare two runs with scripts/compare.sh)"
if grep -qE '"run_name": "BM_(EndToEnd|Loader)/' "$out" 2>/dev/null; then
  echo
  "$bin/bench/pipebench-report" "$out"
  png="${out%.json}.png"
  report_json="${out%.json}.report.json"
  plot_args=()
  if "$bin/bench/pipebench-report" --json "$out" >"$report_json" 2>/dev/null; then
    plot_args=(--report "$report_json")  # the what-if panel
  fi
  if /usr/bin/python3 "$root/scripts/plot.py" "$out" "$png" "${plot_args[@]}"; then
    echo
    echo "run: picture of the worker sweep and per-stage cost in $png"
  fi
else
  echo "run: this run has no loader or end-to-end case (the filter left none), so no verdict"
fi
exit "$rc"
