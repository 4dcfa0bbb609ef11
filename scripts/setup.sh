#!/usr/bin/env bash
# Installs every Debian package pipebench needs to build, test, run and plot.
# Idempotent: packages already present are left alone, and apt is not touched at all
# when nothing is missing. Run as root, or as a user with sudo.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ ccache pkg-config
  # benchmark and test frameworks (libbenchmark-tools ships compare.py)
  libbenchmark-dev libbenchmark-tools libgtest-dev
  # pipeline, image codecs and transforms
  libtbb-dev libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
  libturbojpeg0-dev libjpeg62-turbo-dev libjpeg-turbo-progs
  # command-line parsing, JSON, and YAML pipeline specs
  libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
  # scripts: compare.py needs scipy and numpy; plot.py needs matplotlib
  python3 python3-scipy python3-numpy python3-matplotlib
  # pipebench-data photos: apt-get download + dpkg -x
  apt dpkg
)

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
