#!/usr/bin/env bash
# Compares two pipebench (Google Benchmark) JSON runs and gates on regressions.
#   scripts/compare.sh BASE.json NEW.json [--max-regression PCT] [--max-cv PCT]
#                      [--filter REGEX] [--time real|cpu|auto] [--alpha P] [--force]
#                      [--all-rows] [--no-color]
# Refuses runs whose dataset fingerprint, batch, crop, pipeline or build differ (exit 2)
# unless --force, and warns when either was measured on a busy machine. Prints compare.py's
# table (Google Benchmark's gbench package, U test included), then fails on a case the base
# had that NEW lost or newly errored, and on a case whose median real_time (--time: real,
# cpu, or auto) grew by more than PCT percent (default 5) with, at >= 2 repetitions on both
# sides, a Mann-Whitney U p < alpha (0.05). A case whose CV over repetitions exceeds
# --max-cv (default PCT) is "too noisy to judge" (a warning); a base time of 0 is "base 0".
# Exit status: 0 pass, 1 regression/lost/errored, 2 bad input. See scripts/README.md.
#
#   scripts/compare.sh --ab BASE_BIN NEW_BIN [--threshold PCT] [--blocks N] [--confirm K]
#                      [--confirm-max M] [--filter REGEX] [--out FILE.json] [--data DIR]
#                      [-- pipebench flags...]
# runs the two builds itself in alternating ABBA blocks on this machine and gates on the
# paired ratio NEW/BASE per case, the suspects measured again in rounds of their own
# (scripts/ab_gate.py; docs/ab-gate.md). Same exit statuses.
# --ab ... --metric=instructions runs each case of both builds once under Valgrind and
# gates on instructions per iteration instead (scripts/instr_gate.py, its own options).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python=/usr/bin/python3   # Debian's python3-scipy/numpy are visible only to this one
if [ ! -x "$python" ]; then
  echo "compare: error: $python not found; run scripts/setup.sh" >&2
  exit 2
fi
if [ "${1:-}" = "--ab" ]; then
  shift
  exec "$python" "$here/ab_gate.py" "$@"
fi
exec "$python" "$here/compare_gate.py" "$@"
