#!/usr/bin/env bash
# The test command: installs what is missing, builds everything, runs every test under ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install_deps.sh" --tests
"$root/scripts/build.sh" -DMPSIM_BUILD_TESTS=ON -DMPSIM_BUILD_PYTHON=ON
cd "${MPSIM_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j 2
