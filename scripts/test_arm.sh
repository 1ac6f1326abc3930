#!/usr/bin/env bash
# Builds mpsim for 64-bit ARM (cross-compiled on x86-64 Debian) and runs every test under
# qemu-aarch64, where the kernels dispatch to NEON. Not part of CI: a cold build takes about
# 25 minutes on 2 cores (ccache makes the next ones fast); the tests about 5 more.
#   scripts/test_arm.sh [ctest args...]      build dir: $MPSIM_ARM_BUILD_DIR or build-arm
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MPSIM_ARM_BUILD_DIR:-$root/build-arm}
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $sudo dpkg --add-architecture arm64
  $sudo apt-get update -q
fi
pkgs=(g++-aarch64-linux-gnu qemu-user ccache libhwy-dev:arm64 libtbb-dev:arm64
      libgtest-dev:arm64 libgmock-dev:arm64 libmpfr-dev:arm64)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi
cmake -S "$root" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DMPSIM_BUILD_TESTS=ON
cmake --build "$build" -j "$(nproc)"
cd "$build"
ctest --output-on-failure -j "$(nproc)" --timeout 1200 "$@"
