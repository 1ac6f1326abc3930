#!/usr/bin/env bash
# Installs the Debian packages mpsim needs, and only the ones that are missing.
# Idempotent: a second run installs nothing. Usage: scripts/install_deps.sh [--tests] [--bench] [--fuzz]
set -euo pipefail
pkgs=(cmake g++ make ccache python3 libhwy-dev libtbb-dev libeigen3-dev libcli11-dev nlohmann-json3-dev)
for arg in "$@"; do
  case "$arg" in
    --tests) pkgs+=(libgtest-dev libgmock-dev libmpfr-dev python3-numpy python3-torch python3-mpmath
                   pybind11-dev python3-pybind11 python3-pytest libdlpack-dev python3-distributed
                   python3-pip python3-venv python3-setuptools python3-wheel) ;;
    --bench) pkgs+=(libbenchmark-dev python3-numpy python3-torch libopenblas-dev libdnnl-dev python3-matplotlib
                    libjemalloc2 libmimalloc2.0) ;;  # the last two: alloc-replay's peers in bench/report.py
    --fuzz) pkgs+=(clang-14 libfuzzer-14-dev) ;;  # scripts/fuzz.sh: libFuzzer needs clang
    *) echo "install_deps.sh: unknown option '$arg' (expected --tests, --bench or --fuzz)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install_deps.sh: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
