#!/usr/bin/env bash
# Sets up, builds and runs every test with ctest. Extra arguments go to ctest
# (e.g. ./scripts/test.sh -R Decode).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
ctest --preset release -j "$(nproc)" "$@"
