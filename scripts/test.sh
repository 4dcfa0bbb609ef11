#!/usr/bin/env bash
# Sets up, builds and runs every test with ctest. Extra arguments go to ctest
# (e.g. ./scripts/test.sh -R Decode). Then checks that the suite left the checkout as it
# found it: no file outside build/, .cache/ and .git/ created or changed while ctest ran
# (results, pictures, __pycache__, datasets belong in temporary folders).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT
rc=0
ctest --preset release -j "$(nproc)" "$@" || rc=$?
written=$(find . \( -path ./build -o -path ./.cache -o -path ./.git \) -prune -o -newer "$stamp" -print)
if [ -n "$written" ]; then
  echo "test.sh: the test suite wrote into the checkout (each test must use a temporary folder):" >&2
  echo "$written" | head -20 >&2
  [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
