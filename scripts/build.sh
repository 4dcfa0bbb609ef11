#!/usr/bin/env bash
# Configures and builds the Release preset into build/release (shared by run.sh and
# test.sh, so a CI run builds the tree once). Extra arguments go to `cmake --build`.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_DIR="${CCACHE_DIR:-$PWD/.cache/ccache}"
if [ ! -f build/release/CMakeCache.txt ]; then
  cmake --preset release >/dev/null
fi
cmake --build --preset release "$@"
