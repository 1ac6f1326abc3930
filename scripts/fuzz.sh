#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ (clang-14, ASan+UBSan, coverage-guided) and runs each
# from its committed corpus for a bounded time. A crash, a sanitizer report, a leak or a hang
# fails the script; the input that caused it is copied to tests/fuzz/regressions/<target>/, where the
# replay tests of every build (ctest -R fuzz_replay) keep running it.
#
# Usage: scripts/fuzz.sh [SECONDS per target, default 60] [TARGET ...]
# Prints one line per target: executions, corpus size, findings (docs/reliability.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(op_fuzz alloc_fuzz trace_fuzz npy_fuzz attr_fuzz output_fuzz)

"$root/scripts/install_deps.sh" --fuzz
build=${MPSIM_FUZZ_BUILD_DIR:-$root/build-fuzz}
launcher=()
export CCACHE_BASEDIR="$root"
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# -O1 and AVX2 + the portable target, as the ASan build of scripts/test.sh.
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DMPSIM_SIMD_BUILD=avx2 -DMPSIM_SANITIZE=address \
  -DMPSIM_BUILD_FUZZERS=ON -DMPSIM_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j "${MPSIM_JOBS:-2}" --target "${targets[@]}"

status=0
for t in "${targets[@]}"; do
  work=$(mktemp -d)
  artifacts=$(mktemp -d)
  cp "$root/tests/fuzz/corpus/$t/"* "$work/"
  log="$artifacts/log"
  # -timeout: one input running 30 s is a hang; -rss_limit_mb: the targets cap their own memory.
  if "$build/tests/fuzz/$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$artifacts/" "$work" >"$log" 2>&1; then
    result="no findings"
  else
    result="FINDING"
    status=1
    mkdir -p "$root/tests/fuzz/regressions/$t"
    for f in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*; do
      [ -e "$f" ] && cp "$f" "$root/tests/fuzz/regressions/$t/" && result="$result: tests/fuzz/regressions/$t/$(basename "$f")"
    done
    grep -m 5 -E "ERROR|runtime error|abort|deadly" "$log" >&2 || tail -20 "$log" >&2
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  echo "fuzz: $t: $execs executions in ${seconds} s, corpus $(ls "$work" | wc -l) inputs, $result"
  rm -rf "$work" "$artifacts"
done
exit $status
