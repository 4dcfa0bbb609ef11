#!/usr/bin/env bash
# The main job: set up, build Release, make the default dataset (data/photos-in, real
# photographs from Debian's wallpaper packages) if it is missing, run every benchmark, and
# print the results, the verdict (pipebench-report) and where the JSON and the picture are.
# Extra arguments go to the pipebench binary, e.g.
#   ./scripts/run.sh --benchmark_filter=BM_Decode
#   ./scripts/run.sh --data=/path/to/imagenette2-320/train --workers=1,2,4,8
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh

bin=build/release
data=data/photos-in
out=""
prev=""
for a in "$@"; do
  case "$a" in
    --data=*) data="${a#--data=}" ;;
    --benchmark_out=*) out="${a#--benchmark_out=}" ;;
  esac
  [ "$prev" = "--data" ] && data="$a"
  prev="$a"
done

if [ "$data" = "data/photos-in" ] && [ ! -d data/photos-in ]; then
  echo "run: making the default dataset data/photos-in from Debian's wallpaper packages"
  "$bin/datasets/pipebench-data" photos data
fi

extra=()
if [ -z "$out" ]; then
  mkdir -p out
  out="out/run-$(date +%Y%m%d-%H%M%S).json"
  extra=(--benchmark_out="$out" --benchmark_out_format=json)
fi

"$bin/bench/pipebench" --data="$data" "${extra[@]}" "$@"

echo
echo "run: results in $out (Google Benchmark JSON; compare two runs with scripts/compare.sh)"
if grep -qE '"run_name": "BM_(EndToEnd|Loader)/' "$out" 2>/dev/null; then
  echo
  "$bin/bench/pipebench-report" "$out"
  png="${out%.json}.png"
  if /usr/bin/python3 scripts/plot.py "$out" "$png"; then
    echo
    echo "run: picture of the worker sweep and per-stage cost in $png"
  fi
else
  echo "run: no loader or end-to-end case in this run, so no verdict (drop the filter for one)"
fi
