#!/usr/bin/env bash
# A relocatable bundle of pipebench for machines without our Debian packages (a GPU node:
# docs/gpu.md), made from an existing build; nothing is rebuilt.
#
#   ./scripts/bundle.sh [OUT] [--build DIR]    bundle DIR's binaries into OUT
#   ./scripts/bundle.sh --check OUT            only check an existing bundle (below)
#
# OUT (default build/pipebench-bundle) gets:
#   bin/      pipebench, pipebench-report, pipebench-data
#   tests/    the test binaries with CUDA tests (cuda_test, train_step_test,
#             train_step_cnn_test, loader_test, region_timer_test, nvml_test, device_ops_test,
#             nvjpeg_test),
#             cnn_dump (the cuda:cnn step's numbers for scripts/cnn_torch_check.py)
#             and run-gpu-tests.sh: first the cuDNN library check (which of cuDNN 9's
#             run-time libraries cuDNN will not find, and the LD_LIBRARY_PATH to set), then
#             their CUDA, pinned-memory, NVML and CUDA-event region-timer tests (optionally
#             under compute-sanitizer), then BM_TrainStep with --baseline=cuda and
#             --baseline=cuda:cnn on a tiny synthetic dataset where a GPU is visible
#   lib/      every shared library those need except the ones every target has or that
#             come with its CUDA: glibc (libc, libm, ld-linux, ...), libstdc++, libgcc_s,
#             the CUDA driver (libcuda, libnvidia-*), cuBLAS / cuBLASLt (about 570 MB,
#             far over the 64 MiB budget; taken from the target's CUDA 13) and cuDNN 9
#             (libcudnn*: its sub-libraries are loaded at run time next to it). The CUDA
#             runtime libcudart (0.7 MB) is bundled: the build's CUDA 13.0 runtime runs on
#             any CUDA 13 driver. OpenCV imgcodecs (GDAL and ~700 MB under it) is left out:
#             its plugin, libpipebench_opencv_codecs.so, is not copied, so the bundle
#             decodes JPEGs only and says so where PNG/WebP/... or the opencv backend are
#             asked for (transforms/opencv_codecs.h).
#   MANIFEST.txt   the build, each bundled library and its Debian package, the newest
#                  GLIBC / GLIBCXX symbol versions the bundle needs from the target.
#   gpu-suite.sh   every GPU figure in one call, within 7 minutes (scripts/gpu-suite.sh),
#                  with its helpers in scripts/ (gpu_suite_summary.py, cnn_torch_check.py)
# Binaries and tests get the RUNPATH $ORIGIN/../lib:/usr/local/cuda/lib64, libraries
# $ORIGIN (patchelf, Debian package patchelf: scripts/setup.sh). A CUDA 13 elsewhere than
# /usr/local/cuda is found through LD_LIBRARY_PATH, which the loader searches first;
# gpu-suite.sh sets it to the folders it finds (python3's NVIDIA packages first).
#
# It ships as one archive beside OUT, OUT.tar.gz (gzip; on the node: tar -xzf, then
# OUT/gpu-suite.sh, which finds cuBLAS and cuDNN there: docs/gpu.md).
# Checks (also --check): OUT.tar.gz together with the repository's files (tracked and
# untracked-not-ignored: what travels with it to a GPU node) is at most 64 MiB, and with
# LD_LIBRARY_PATH empty `ldd` resolves every library of every ELF file in it either inside
# the bundle or to one of the target's libraries above (cuBLAS and the driver may be
# missing on a machine without CUDA: reported, not an error). Every test binary the suite
# runs must be built (the bundle fails naming a missing one). Exit codes: 0 made and
# checked; 1 a check failed; 2 bad arguments, missing build, binaries or tools (patchelf,
# ldd, readelf).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
out=""
build=""
check_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="${2:?--build needs a directory}"; shift 2 ;;
    --build=*) build="${1#--build=}"; shift ;;
    --check) check_only=1; shift ;;
    -h|--help) sed -n '2,46p' "$0"; exit 0 ;;
    -*) echo "bundle: unknown option $1" >&2; exit 2 ;;
    *) out="$1"; shift ;;
  esac
done
[ -n "$out" ] || out="$repo/build/pipebench-bundle"
limit_bytes=$((64 * 1024 * 1024))

for tool in ldd readelf patchelf; do
  if ! command -v "$tool" >/dev/null; then
    echo "bundle: $tool not found (apt-get install patchelf binutils libc-bin; scripts/setup.sh)" >&2
    exit 2
  fi
done

# What a target has itself (glibc, the C++ runtime) or takes from its CUDA (driver, cuBLAS).
is_system_lib() {
  case "$1" in
    linux-vdso.so*|ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libutil.so*|\
    libresolv.so*|libmvec.so*|libstdc++.so*|libgcc_s.so*) return 0 ;;
  esac
  return 1
}
is_target_cuda_lib() {
  case "$1" in
    libcuda.so*|libnvidia-*|libcublas.so*|libcublasLt.so*|libcudnn*.so*) return 0 ;;
  esac
  return 1
}

elf_files() {  # every ELF file of the bundle
  find "$1" -type f | while read -r f; do
    if [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ]; then echo "$f"; fi
  done
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
# The archive that ships (OUT.tar.gz) with the repository's files (tracked, and untracked
# ones git does not ignore: what travels with it to a GPU node) must stay within 64 MiB.
check_archive() {
  local archive="$1" a r
  a=$(stat -c %s "$archive")
  r=$(cd "$repo" && { git ls-files -z -co --exclude-standard 2>/dev/null | xargs -0 -r stat -c %s 2>/dev/null || true; } |
    awk '{ s += $1 } END { print s + 0 }')
  if [ $((a + r)) -gt "$limit_bytes" ]; then
    echo "bundle: FAIL $archive ($(mib "$a") MiB) with the repository's files ($(mib "$r") MiB) is $(mib $((a + r))) MiB, over the 64 MiB limit" >&2
    return 1
  fi
  echo "bundle: $archive: $(mib "$a") MiB, with the repository's files ($(mib "$r") MiB) $(mib $((a + r))) MiB of 64 MiB"
}

check_bundle() {
  local dir="$1" failed=0 size
  size=$(du -sb "$dir" | cut -f1)
  local real_dir
  real_dir="$(cd "$dir" && pwd -P)"
  while read -r f; do
    # name => path (or "not found"); lines without "=>" are the vdso and the loader.
    while read -r name arrow path _; do
      [ "$arrow" = "=>" ] || continue
      if is_system_lib "$name"; then continue; fi
      if is_target_cuda_lib "$name"; then
        [ "$path" = "not" ] && echo "bundle: note: ${f#"$dir"/} needs $name from the target's CUDA (not on this machine)"
        continue
      fi
      if [ "$path" = "not" ]; then
        echo "bundle: FAIL ${f#"$dir"/}: $name not found" >&2
        failed=1
      elif [[ "$(readlink -f "$path")" != "$real_dir"/* ]]; then
        echo "bundle: FAIL ${f#"$dir"/}: $name resolves outside the bundle, to $path" >&2
        failed=1
      fi
    done < <(env -u LD_LIBRARY_PATH ldd "$f" 2>/dev/null || true)
  done < <(elf_files "$dir")
  if [ "$failed" -eq 0 ]; then
    echo "bundle: $dir checked: $(mib "$size") MiB unpacked, every library resolves inside it or to the target's glibc, libstdc++ and CUDA"
  fi
  return "$failed"
}

if [ "$check_only" -eq 1 ]; then
  [ -d "$out" ] || { echo "bundle: no bundle at $out" >&2; exit 2; }
  check_bundle "$out" || exit 1
  if [ -f "${out%/}.tar.gz" ]; then check_archive "${out%/}.tar.gz" || exit 1; fi
  exit 0
fi

if [ -z "$build" ]; then
  if [ -f "$repo/build/bundle/CMakeCache.txt" ]; then build="$repo/build/bundle"; else build="$repo/build/release"; fi
fi
[ -f "$build/CMakeCache.txt" ] || { echo "bundle: $build is not a CMake build directory" >&2; exit 2; }
build="$(cd "$build" && pwd)"

suite_tests="cuda_test train_step_test train_step_cnn_test loader_test region_timer_test nvml_test device_ops_test nvjpeg_test cnn_dump"
binaries=()
for b in bench/pipebench bench/pipebench-report datasets/pipebench-data; do
  [ -x "$build/$b" ] || { echo "bundle: $build/$b is missing: build it first (ninja -C $build pipebench pipebench-report pipebench-data)" >&2; exit 2; }
  binaries+=("$build/$b")
done
# Every test binary gpu-suite.sh and run-gpu-tests.sh use: a missing one is an error (the
# suite would skip its checks on the node and say nothing).
tests=()
missing=()
for t in $suite_tests; do
  if [ -x "$build/tests/$t" ]; then tests+=("$build/tests/$t"); else missing+=("tests/$t"); fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bundle: $build lacks ${missing[*]}, which the GPU suite runs: build them first (docs/gpu.md:" \
    "ninja -C $build pipebench pipebench-report pipebench-data $suite_tests)" >&2
  exit 2
fi

rm -rf "$out"
mkdir -p "$out/bin" "$out/tests" "$out/lib"
out="$(cd "$out" && pwd)"
cp "${binaries[@]}" "$out/bin/"
if [ ${#tests[@]} -gt 0 ]; then cp "${tests[@]}" "$out/tests/"; fi
# Symbols are not needed to run; Debian's own libraries come stripped already.
if command -v strip >/dev/null; then strip --strip-unneeded "$out"/bin/* "$out"/tests/* 2>/dev/null || true; fi

manifest="$out/MANIFEST.txt"
{
  echo "pipebench bundle (scripts/bundle.sh)"
  echo "commit: $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$repo" diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "build: $build ($(grep -E '^CMAKE_BUILD_TYPE:' "$build/CMakeCache.txt" | cut -d= -f2))"
  echo "cuda: $(grep -q 'PIPEBENCH_HAVE_CUDA=1' "$build/compile_commands.json" 2>/dev/null && echo on || echo off)"
  echo "opencv imgcodecs: left out (JPEG only; transforms/opencv_codecs.h)"
  echo
  echo "bundled libraries (lib/), from:"
} > "$manifest"

declare -A copied=()
for f in "${binaries[@]}" "${tests[@]}"; do
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    if is_system_lib "$name" || is_target_cuda_lib "$name"; then continue; fi
    if [ "$path" = "not" ]; then
      echo "bundle: $f needs $name, which this machine does not have" >&2
      exit 2
    fi
    [ -n "${copied[$name]:-}" ] && continue
    copied[$name]=1
    real="$(readlink -f "$path")"
    cp "$real" "$out/lib/$name"
    pkg="$(dpkg -S "$real" 2>/dev/null | head -1 | cut -d: -f1 || true)"
    [ -n "$pkg" ] || pkg="$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1 || true)"
    echo "  $name  $real  ${pkg:-not from a Debian package}" >> "$manifest"
  done < <(ldd "$f")
done

for f in "$out"/bin/* "$out"/tests/*; do
  if [ -f "$f" ]; then patchelf --set-rpath '$ORIGIN/../lib:/usr/local/cuda/lib64' "$f"; fi
done
for f in "$out"/lib/*; do
  chmod u+w "$f"
  patchelf --set-rpath '$ORIGIN' "$f"
done

newest() {  # the newest symbol version with prefix $1 that the bundle's ELF files need
  elf_files "$out" | while read -r f; do readelf -V --wide "$f" 2>/dev/null; done |
    grep -o "Name: $1_[0-9.]*" | sed 's/Name: //' | sort -u -V | tail -1
}
{
  echo
  echo "taken from the target: glibc (newest symbol version needed: $(newest GLIBC)), libstdc++ ($(newest GLIBCXX)), libgcc_s,"
  echo "  the CUDA 13 driver (libcuda), cuBLAS / cuBLASLt and cuDNN 9 (RUNPATH /usr/local/cuda/lib64, or LD_LIBRARY_PATH)"
} >> "$manifest"

cat > "$out/tests/run-gpu-tests.sh" <<'EOF'
#!/usr/bin/env bash
# The bundle's GPU checks, in order:
#   1. cuDNN 9's run-time libraries (CudnnLibraries.*): cuDNN dlopens its sub-libraries,
#      cuBLASLt and NVRTC through LD_LIBRARY_PATH and its own directory, not the bundle's
#      RUNPATH; this says which it will not find and the LD_LIBRARY_PATH to set.
#   2. The CUDA, pinned-memory, NVML, CUDA-event region-timer and device batch-operator
#      tests (what `ctest -R 'Cuda|Pinned|Nvml|RegionTimer.CudaEventClock'` runs in a
#      build tree).
#   3. Where a GPU is visible (nvidia-smi -L): BM_TrainStep of both real baselines, each
#      named with --baseline (on a GPU the default is the ~1-2 ms MLP, which a run must not
#      be mistaken for), on a tiny synthetic dataset in a temporary folder.
# Options (gpu-suite.sh uses them to run the tests and their sanitizer pass apart):
#   --sanitizer       also run compute-sanitizer --tool memcheck over the device-op, CUDA and
#                     region-timer tests (cuda_test, device_ops_test, region_timer_test; the
#                     timing tests filtered out)
#   --sanitizer-only  that memcheck pass only (no plain pass, no step 1)
#   --tests-only      no step 3
#   --timeout S       bound each test binary's run (each pass) by S seconds (`timeout
#                     --foreground`: the test stays in the caller's process group, so an outer
#                     timeout ends it too); one that runs out is reported ("timed out after S
#                     s") and fails the run
# compute-sanitizer refusing the device ("Device not supported") ends the memcheck pass with
# one line, "run-gpu-tests: compute-sanitizer: skipped: ...": exit 77 with --sanitizer-only.
# Exit status: 0 every check passed (or skipped without a device), 1 one failed, 2 usage or
# compute-sanitizer missing, 77 (--sanitizer-only) compute-sanitizer does not support the device.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="$here/../bin"
filter='*Cuda*:*Pinned*:Nvml.*:RegionTimer.CudaEventClock'
# memcheck: the device-op, CUDA and region-timer tests, no timing test (a wait that must not
# spin, a warm-up by time) and none of the cuBLAS / cuDNN steps.
sanitized=(cuda_test device_ops_test region_timer_test)
sanitizer_filter='Cuda.*:*Pinned*:CudaBatchOps.*:RegionTimer.CudaEventClock-*Spin*:*WarmsUp*:*Flops*'
sanitizer=""
plain=1
bench=1
limit=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitizer) sanitizer=1; shift ;;
    --sanitizer-only) sanitizer=1; plain=0; shift ;;
    --tests-only) bench=0; shift ;;
    --timeout) limit="${2:?--timeout needs seconds}"; shift 2 ;;
    --timeout=*) limit="${1#--timeout=}"; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "run-gpu-tests: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -z "$limit" ] || [[ "$limit" =~ ^[0-9]+$ ]] || { echo "run-gpu-tests: --timeout needs whole seconds, got '$limit'" >&2; exit 2; }
if [ -n "$sanitizer" ]; then
  sanitizer="$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")"
  [ -x "$sanitizer" ] || { echo "run-gpu-tests: compute-sanitizer not found (PATH or \$CUDA_HOME/bin)" >&2; exit 2; }
fi
bounded() {  # bounded NAME CMD...: CMD under `timeout --foreground $limit` when --timeout was given
  local name="$1" rc=0
  shift
  if [ -n "$limit" ]; then timeout --foreground -k 5 "$limit" "$@" || rc=$?; else "$@" || rc=$?; fi
  if [ -n "$limit" ] && { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; }; then
    echo "run-gpu-tests: $name timed out after $limit s"
  fi
  return "$rc"
}
rc=0
if [ "$plain" -eq 1 ] && [ -x "$here/train_step_cnn_test" ]; then
  echo "== cuDNN 9 run-time libraries"
  bounded train_step_cnn_test "$here/train_step_cnn_test" --gtest_filter='CudnnLibraries.*' --gtest_brief=1 || rc=1
fi
if [ "$plain" -eq 1 ]; then
  for t in "$here"/*_test; do
    echo "== $(basename "$t")"
    bounded "$(basename "$t")" "$t" --gtest_filter="$filter" || rc=1
  done
fi
if [ -n "$sanitizer" ]; then
  echo "== compute-sanitizer --tool memcheck"
  for name in "${sanitized[@]}"; do
    t="$here/$name"
    [ -x "$t" ] || { echo "run-gpu-tests: $name missing from the bundle"; rc=1; continue; }
    echo "== $name under compute-sanitizer memcheck"
    said="$(mktemp)"
    r=0
    bounded "$name under compute-sanitizer" "$sanitizer" --tool memcheck --error-exitcode 1 "$t" \
      --gtest_filter="$sanitizer_filter" >"$said" 2>&1 || r=$?
    if grep -q 'Device not supported' "$said"; then
      echo "run-gpu-tests: compute-sanitizer: skipped: $(grep -m1 'Device not supported' "$said" | sed 's/^=* *//')"
      rm -f "$said"
      [ "$plain" -eq 1 ] || exit 77
      break
    fi
    cat "$said"
    rm -f "$said"
    [ "$r" -eq 0 ] || rc=1
  done
fi
if [ "$bench" -eq 0 ]; then
  :
elif command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && [ -x "$bin/pipebench" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$bin/pipebench-data" synthetic "$tmp/data" --count 64 --classes 4 --width 500 --height 375 >/dev/null || rc=1
  for baseline in cuda cuda:cnn; do
    echo "== BM_TrainStep --baseline=$baseline"
    "$bin/pipebench" --data="$tmp/data" --baseline="$baseline" --benchmark_filter='^BM_TrainStep/' \
      --benchmark_out="$tmp/train_step.json" || rc=1
  done
else
  echo "== BM_TrainStep: skipped (no GPU visible: nvidia-smi -L)"
fi
exit $rc
EOF
chmod +x "$out/tests/run-gpu-tests.sh"
# The GPU suite (scripts/gpu-suite.sh) at the root, its helpers in scripts/ (not patched:
# they are not ELF files).
cp "$repo/scripts/gpu-suite.sh" "$out/gpu-suite.sh"
mkdir -p "$out/scripts"
for s in gpu_suite_summary.py cnn_torch_check.py; do
  if [ -f "$repo/scripts/$s" ]; then cp "$repo/scripts/$s" "$out/scripts/"; fi
done
chmod +x "$out/gpu-suite.sh"

echo "bundle: $out ($(du -sh "$out" | cut -f1)): ${#binaries[@]} binaries, ${#tests[@]} test binaries, ${#copied[@]} libraries"
check_bundle "$out" || exit 1
# What ships: one compressed archive beside the folder (on the node: tar -xzf, then
# <folder>/gpu-suite.sh; docs/gpu.md).
archive="$out.tar.gz"
rm -f "$archive"
tar -C "$(dirname "$out")" -czf "$archive" "$(basename "$out")"
check_archive "$archive" || exit 1
