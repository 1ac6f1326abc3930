#!/usr/bin/env bash
# Configures and builds mpsim into build/ (or $MPSIM_BUILD_DIR). Extra arguments go to cmake;
# MPSIM_BUILD_TARGETS limits the build to those targets, MPSIM_JOBS sets the parallelism (2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MPSIM_BUILD_DIR:-$root/build}
# Every compile goes through scripts/compile_timer.py, which logs its time and memory to
# BUILD/compile_times.tsv (scripts/build_times.sh prints and checks them), then ccache.
launcher="/usr/bin/python3;$root/scripts/compile_timer.py;$build/compile_times.tsv"
# Paths inside the tree hash relative to it, so every clone shares the ccache entries.
export CCACHE_BASEDIR="$root"
# The precompiled headers (tests, CLI, Python module) are included with -include, which ccache
# caches under these sloppiness settings (ccache(1), "Precompiled headers").
export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
command -v ccache >/dev/null 2>&1 && launcher="$launcher;ccache"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${MPSIM_BUILD_TYPE:-Release}" \
  -DPython3_EXECUTABLE=/usr/bin/python3 "-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher" "$@" >/dev/null
# MPSIM_BUILD_TARGETS: build only these targets (space-separated); default: all.
targets=()
for t in ${MPSIM_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "${MPSIM_JOBS:-2}" "${targets[@]}"
