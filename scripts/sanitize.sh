#!/usr/bin/env bash
# The test suite under sanitizers (CI: .ci/run calls it after test.sh).
#
#   ./scripts/sanitize.sh asan   build/asan (clang-14): every ctest test under ASan + UBSan
#                                (+ LSan)
#   ./scripts/sanitize.sh tsan   build/tsan: the loader, sampler, trace, bound and resource
#                                tests under TSan, 3 times each (--repeat until-fail:3)
#   ./scripts/sanitize.sh        both
# Extra arguments after the first go to ctest (e.g. -R Loader).
#
# TSan needs a oneTBB built with TBB_SANITIZE=thread: Debian's libtbb is not instrumented,
# so TSan cannot see its synchronisation and reports ~250 races that are not there (issue
# 15). The first tsan run builds Debian's own onetbb source package (the version of the
# installed libtbb-dev, so headers and ABI match what OpenCV was built against) into
# .cache/tbb-tsan: 107 s measured on a shared 2-core machine, then reused while libtbb-dev
# keeps its version.
# The source is fetched with apt-get through a private sources list and lists directory,
# without touching the system's apt configuration.
#
# Runtime options (the same as the asan/tsan test presets of CMakePresets.json):
# suppressions in tests/sanitizers/, each one explained there. Exit status: ctest's, or the
# failing build step's.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_DIR="${CCACHE_DIR:-$PWD/.cache/ccache}"
what="${1:-all}"
[ $# -gt 0 ] && shift
jobs="$(nproc)"
tbb_prefix="$PWD/.cache/tbb-tsan"

elapsed() { echo "== sanitize: $1 took $(( $(date +%s) - $2 )) s"; }

# Runs "$@" with address-space randomisation off where the kernel allows it: TSan's
# (and occasionally ASan's) fixed shadow layout does not fit the high mmap entropy of
# recent kernels ("FATAL: ThreadSanitizer: unexpected memory mapping").
no_aslr() {
  if setarch "$(uname -m)" -R true 2>/dev/null; then
    setarch "$(uname -m)" -R "$@"
  else
    "$@"
  fi
}

configure_build() {  # preset (configured every time: a few seconds, and a changed preset applies)
  local dir="build/$1" want have fresh=()
  # A folder configured with another compiler than the preset's (build/asan was GCC's until
  # the preset moved to clang-14) is configured afresh: CMake would drop its cache by itself,
  # but then configure without the preset's variables (no sanitizer) until the next time.
  if [ -f "$dir/CMakeCache.txt" ]; then
    want=$(cmake --preset "$1" -N | sed -n 's/^ *CMAKE_CXX_COMPILER="\(.*\)"$/\1/p')
    have=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt")
    if [ -n "$want" ] && [ "$(basename "$have")" != "$(basename "$want")" ]; then
      echo "== sanitize: $dir was configured with $have, the $1 preset uses $want: configured afresh"
      fresh=(--fresh)
    fi
  fi
  cmake --preset "$1" "${fresh[@]}" >/dev/null
  cmake --build --preset "$1"
}

run_asan() {
  local t0
  t0=$(date +%s)
  configure_build asan
  elapsed "asan build" "$t0"
  t0=$(date +%s)
  no_aslr ctest --preset asan -j "$jobs" "$@"
  elapsed "asan tests" "$t0"
}

build_tsan_tbb() {
  local version
  version="$(dpkg-query -W -f='${Version}' libtbb-dev)"
  if [ -f "$tbb_prefix/.version" ] && [ "$(cat "$tbb_prefix/.version")" = "$version" ]; then
    return
  fi
  if ! command -v dpkg-source >/dev/null; then
    echo "sanitize: tsan needs dpkg-source to unpack oneTBB's source (apt-get install dpkg-dev)" >&2
    return 2
  fi
  echo "== sanitize: building oneTBB $version with TBB_SANITIZE=thread into $tbb_prefix"
  local t0 apt
  t0=$(date +%s)
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/sources" "$work/lists/partial"
  cat >"$work/sources/bookworm-src.sources" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt=(apt-get -qq -o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$work/sources"
       -o Dir::State::Lists="$work/lists" -o Debug::NoLocking=1)
  # (as root apt warns that it downloads unsandboxed: expected here, filtered out)
  { "${apt[@]}" update 2>&1 | grep -v unsandboxed; } || true
  { (cd "$work" && "${apt[@]}" source --download-only "onetbb=$version") 2>&1 |
      grep -v unsandboxed; } || true
  if ! ls "$work"/onetbb_*.dsc >/dev/null 2>&1; then
    echo "sanitize: could not download the onetbb $version source package (network?)" >&2
    return 1
  fi
  if ! dpkg-source -x "$work"/onetbb_*.dsc "$work/src" >"$work/dpkg-source.log" 2>&1; then
    cat "$work/dpkg-source.log" >&2
    echo "sanitize: dpkg-source could not unpack onetbb $version" >&2
    return 1
  fi
  rm -rf "$tbb_prefix"
  # Only libtbb: pipebench and OpenCV use neither tbbmalloc nor tbbbind.
  cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTBB_SANITIZE=thread -DTBB_TEST=OFF -DTBB_EXAMPLES=OFF -DTBB_STRICT=OFF \
    -DTBBMALLOC_BUILD=OFF -DTBB_DISABLE_HWLOC_AUTOMATIC_SEARCH=ON \
    -DCMAKE_INSTALL_PREFIX="$tbb_prefix" >/dev/null
  cmake --build "$work/build" -j "$jobs" >/dev/null
  cmake --install "$work/build" >/dev/null
  echo "$version" >"$tbb_prefix/.version"
  elapsed "oneTBB (TSan) build" "$t0"
}

run_tsan() {
  local t0
  build_tsan_tbb
  t0=$(date +%s)
  configure_build tsan
  elapsed "tsan build" "$t0"
  t0=$(date +%s)
  # Three passes: a race that shows one time in three still fails the run.
  no_aslr ctest --preset tsan -j "$jobs" --repeat until-fail:3 "$@"
  elapsed "tsan tests" "$t0"
}

case "$what" in
  asan) run_asan "$@" ;;
  tsan) run_tsan "$@" ;;
  all) run_asan "$@"; run_tsan "$@" ;;
  *) echo "usage: scripts/sanitize.sh [asan|tsan|all] [ctest arguments]" >&2; exit 2 ;;
esac
