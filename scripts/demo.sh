#!/usr/bin/env bash
# The main job: installs what is missing, builds, prints `mpsim info` and runs the demo.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install_deps.sh"
"$root/scripts/build.sh" -DMPSIM_BUILD_TESTS=OFF -DMPSIM_BUILD_BENCH=OFF
bin=${MPSIM_BUILD_DIR:-$root/build}/tools/mpsim
"$bin" info
"$bin" demo
