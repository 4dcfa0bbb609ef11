#!/usr/bin/env bash
# Builds a git ref of this repository into a folder, for the paired A/B gate
# (scripts/compare.sh --ab BASE/bench/pipebench NEW/bench/pipebench; docs/ab-gate.md).
#
#   scripts/build_ref.sh [--dry-run] REF DIR [-- extra cmake configure arguments]
#
# REF is anything git resolves to a commit (a branch, tag, sha, origin/main, HEAD~1). The
# ref is checked out in a temporary git worktree (your checkout and its uncommitted changes
# are not touched; the worktree is removed afterwards, also on failure) and built with the
# Release preset's settings (Ninja, CMAKE_BUILD_TYPE=Release, PIPEBENCH_CUDA=AUTO; extra
# arguments after `--`, e.g. -DPIPEBENCH_CUDA=OFF, are added to the configure step) inside
# the worktree's build/release. The compiler goes through ccache with
# CCACHE_DIR=<repo>/.cache/ccache (unless set) and CCACHE_BASEDIR=<the worktree>, so paths
# are hashed relative to the tree and objects hit across worktrees and refs: a file that
# two refs share is compiled once (also shared with a build of this checkout made in a
# two-level folder such as build/release with CCACHE_BASEDIR set to the checkout and the
# same configure arguments).
#
# DIR then holds the build's runtime layout, the binaries copied out of the worktree:
#   DIR/bench/pipebench, DIR/bench/pipebench-report, DIR/datasets/pipebench-data,
#   DIR/lib/*.so (the OpenCV codecs plugin, found beside the executable's ../lib),
#   DIR/BUILD_REF.txt (the ref, its commit, the date and the configure arguments).
# DIR must be empty, absent, or an earlier build_ref.sh output (BUILD_REF.txt), which is
# replaced.
#
# --dry-run checks the arguments (the ref resolves, DIR is usable), says what it would
# build and exits 0 without building (tests/scripts/ab_gate_test.py runs the example
# workflow's build steps so).
#
# Exit status: 0 built (or, with --dry-run, would build); 1 the configure or the build failed; 2 bad arguments: a missing
# argument, an unknown ref (named), DIR not empty and not an earlier output, not inside a
# git repository, cmake / ninja / git missing.
set -euo pipefail

usage() {
  echo "usage: scripts/build_ref.sh [--dry-run] REF DIR [-- extra cmake configure arguments]" >&2
  exit 2
}
err() {
  echo "build_ref: error: $*" >&2
  exit 2
}

dry_run=0
if [ "${1:-}" = "--dry-run" ]; then
  dry_run=1
  shift
fi
[ $# -ge 2 ] || usage
ref="$1"
dir="$2"
shift 2
extra=()
if [ $# -gt 0 ]; then
  [ "$1" = "--" ] || usage
  shift
  extra=("$@")
fi
[ -n "$ref" ] || err "REF is empty"
[ -n "$dir" ] || err "DIR is empty"

for tool in git cmake ninja; do
  command -v "$tool" >/dev/null 2>&1 || err "$tool not found; run scripts/setup.sh"
done
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(git -C "$here" rev-parse --show-toplevel 2>/dev/null)" ||
  err "$here is not inside a git repository"
sha="$(git -C "$repo" rev-parse --verify --quiet "${ref}^{commit}")" ||
  err "unknown ref '$ref': git rev-parse finds no commit of that name in $repo (fetch it first, e.g. git fetch origin; CI checkouts need fetch-depth: 0)"

if [ -e "$dir" ] && [ ! -d "$dir" ]; then
  err "DIR $dir exists and is not a folder"
fi
if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ] && [ ! -f "$dir/BUILD_REF.txt" ]; then
  err "DIR $dir is not empty and not an earlier build_ref.sh output (no BUILD_REF.txt); pick an empty or new folder"
fi

if [ "$dry_run" = 1 ]; then
  echo "build_ref: would build $ref = ${sha:0:12} (configure: -G Ninja -DCMAKE_BUILD_TYPE=Release -DPIPEBENCH_CUDA=AUTO ${extra[*]:-}) into $dir/bench/pipebench (--dry-run: nothing built)"
  exit 0
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/pipebench-ref.XXXXXX")"
src="$tmp/src"
cleanup() {
  git -C "$repo" worktree remove --force "$src" >/dev/null 2>&1 || true
  rm -rf "$tmp"
  git -C "$repo" worktree prune >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "build_ref: $ref = ${sha:0:12} in a temporary worktree $src"
git -C "$repo" worktree add --detach --quiet "$src" "$sha"

export CCACHE_DIR="${CCACHE_DIR:-$repo/.cache/ccache}"
export CCACHE_BASEDIR="$src"
export CCACHE_NOHASHDIR=1
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
build="$src/build/release"
configure=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DPIPEBENCH_CUDA=AUTO "${launcher[@]}" "${extra[@]}")
start=$(date +%s)
if ! cmake -S "$src" -B "$build" "${configure[@]}" >"$tmp/configure.log" 2>&1; then
  tail -40 "$tmp/configure.log" >&2
  echo "build_ref: error: configuring $ref (${sha:0:12}) failed (above)" >&2
  exit 1
fi
targets=(pipebench pipebench-data pipebench-report)
if ! cmake --build "$build" --target "${targets[@]}" >"$tmp/build.log" 2>&1; then
  tail -60 "$tmp/build.log" >&2
  echo "build_ref: error: building $ref (${sha:0:12}) failed (above)" >&2
  exit 1
fi

rm -rf "${dir:?}/bench" "${dir:?}/datasets" "${dir:?}/lib" "${dir:?}/BUILD_REF.txt"
mkdir -p "$dir/bench" "$dir/datasets" "$dir/lib"
cp -p "$build/bench/pipebench" "$build/bench/pipebench-report" "$dir/bench/"
cp -p "$build/datasets/pipebench-data" "$dir/datasets/"
if compgen -G "$build/lib/*.so*" >/dev/null; then
  cp -pP "$build"/lib/*.so* "$dir/lib/"
fi
{
  echo "ref: $ref"
  echo "commit: $sha"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) in $(( $(date +%s) - start )) s"
  echo "configure: ${configure[*]}"
  echo "ccache: CCACHE_DIR=$CCACHE_DIR CCACHE_BASEDIR=<worktree>"
} >"$dir/BUILD_REF.txt"
echo "build_ref: built $ref (${sha:0:12}) in $(( $(date +%s) - start )) s: $dir/bench/pipebench"
