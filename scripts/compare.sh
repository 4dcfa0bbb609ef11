#!/usr/bin/env bash
# Compares two pipebench (Google Benchmark) JSON runs and gates on real_time regressions.
#   scripts/compare.sh BASE.json NEW.json [--max-regression PCT] [--filter REGEX]
#                      [--time real|cpu|auto] [--alpha P] [--all-rows] [--no-color]
# Prints compare.py's table (Google Benchmark's gbench package, U test included), one
# REGRESSION line per failing case and a summary line. A case fails when its median
# real_time (--time: real, cpu, or auto) grew by more than PCT percent (default 5) and,
# with >= 2 repetitions on both sides, the Mann-Whitney U test gives p < alpha (0.05).
# Exit status: 0 no regression, 1 regression, 2 bad input. See scripts/README.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python=/usr/bin/python3   # Debian's python3-scipy/numpy are visible only to this one
if [ ! -x "$python" ]; then
  echo "compare: error: $python not found; run scripts/setup.sh" >&2
  exit 2
fi
exec "$python" "$here/compare_gate.py" "$@"
