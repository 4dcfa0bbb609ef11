#!/usr/bin/env bash
# Installs every Debian package pipebench needs to build, test, run and plot.
# Idempotent: packages already present are left alone, and apt is not touched at all
# when nothing is missing. Run as root, or as a user with sudo.
#
#   ./scripts/setup.sh              the packages above
#   ./scripts/setup.sh --reference  also python3-torchvision (and torch, large), the
#                                   reference of tests/scripts/torchvision_reference_test.py,
#                                   and python3-skimage, that of tests/fidelity_test.cpp's
#                                   PSNR / SSIM, which skip without them; CI (.ci/run)
#                                   installs them
#   ./scripts/setup.sh --history    also chromium (Debian 12's package, about 100 MB), the
#                                   headless browser tests/scripts/history_test.py renders
#                                   scripts/history.py's page in; it skips that without it
#   ./scripts/setup.sh --sanitize   also what scripts/sanitize.sh and scripts/fuzz.sh need
#                                   beyond the build packages: clang-14 and libFuzzer's
#                                   runtime (libclang-rt-14-dev) for the fuzz harnesses,
#                                   dpkg-dev (dpkg-source, to unpack Debian's onetbb source
#                                   for the TSan-built oneTBB) and debian-archive-keyring
#                                   (apt-get verifies that source with it); GCC's ASan,
#                                   UBSan and TSan runtimes come with g++. CI passes it.
# The options combine (./scripts/setup.sh --reference --history --sanitize).
set -euo pipefail

reference=0
history=0
sanitize=0
for arg in "$@"; do
  case "$arg" in
    --reference) reference=1 ;;
    --history) history=1 ;;
    --sanitize) sanitize=1 ;;
    *) echo "setup: unknown option $arg (expected --reference, --history or --sanitize)" >&2; exit 2 ;;
  esac
done

packages=(
  # build
  cmake ninja-build g++ ccache pkg-config
  # benchmark and test frameworks (libbenchmark-tools ships compare.py)
  libbenchmark-dev libbenchmark-tools libgtest-dev
  # pipeline, image codecs and transforms
  libtbb-dev libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
  libturbojpeg0-dev libjpeg62-turbo-dev libjpeg-turbo-progs
  # OpenCV's quality module (opencv_contrib): PSNR and SSIM of a what-if candidate's pixels
  # against today's (transforms/fidelity.h); Debian ships its headers only in this package
  libopencv-contrib-dev
  # command-line parsing, JSON, and YAML pipeline specs; Boost.Math's Student t quantile
  # (header-only) for the paired comparisons' intervals (model/paired.h)
  libcli11-dev nlohmann-json3-dev libyaml-cpp-dev libboost-dev
  # scripts: compare.py needs scipy and numpy; plot.py needs matplotlib
  python3 python3-scipy python3-numpy python3-matplotlib
  # pipebench-data photos: apt-get download + dpkg -x
  apt dpkg
  # scripts/bundle.sh: the bundle's RUNPATH
  patchelf
  # compare.sh --ab --metric=instructions: instruction counts under Valgrind's Callgrind
  # (scripts/instr_gate.py)
  valgrind
  # data-parallel runs under mpirun (optional in the build: PIPEBENCH_MPI, pipeline/dist/)
  openmpi-bin libopenmpi-dev
)
if [ "$reference" -eq 1 ]; then
  # torchvision 0.14 (Debian 12) as the independent reference for the pixel kernels
  packages+=(python3-torch python3-torchvision)
  # scikit-image 0.19 (Debian 12): the independent PSNR / SSIM of tests/fidelity_test.cpp
  packages+=(python3-skimage)
fi
if [ "$history" -eq 1 ]; then
  # a real browser for the history page's test (headless: no display needed)
  packages+=(chromium)
fi
if [ "$sanitize" -eq 1 ]; then
  # libFuzzer (clang only), and Debian's onetbb source unpacked for the TSan-built oneTBB
  packages+=(clang-14 libclang-rt-14-dev dpkg-dev debian-archive-keyring)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
