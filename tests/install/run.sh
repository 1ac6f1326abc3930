#!/usr/bin/env bash
# Installs the built mpsim into a temporary prefix, then configures, builds and runs a consumer
# project that finds it with find_package(mpsim) (tests/install/consumer). Usage:
#   tests/install/run.sh BUILD_DIR CXX_COMPILER
set -euo pipefail
build=$1
cxx=$2
here=$(cd "$(dirname "$0")" && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix/install" >/dev/null
cmake -S "$here/consumer" -B "$prefix/build" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix/install" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$prefix/build" >/dev/null
"$prefix/build/consumer"
