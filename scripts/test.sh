#!/usr/bin/env bash
# The test command (CI runs it with no option): installs what is missing, builds and runs the
# suites. Usage: scripts/test.sh [--release] [--asan] [--tsan]   (none: all three, in order)
#   --release  Release build in build/ (or $MPSIM_BUILD_DIR): every test, Python included.
#   --asan     ASan + UBSan (float-cast-overflow included) in build-asan/: every C++ suite, the
#              CLI tests and the fuzz corpus replays (the Python module is not built: it would
#              need the sanitizer runtime preloaded into the interpreter).
#   --tsan     TSan in build-tsan/: the queue, device, dispatch, allocator, fault and
#              concurrency suites, with one TBB thread (MPSIM_NUM_THREADS=1: oneTBB is not
#              TSan-built, so work spread over its threads would be reported as races inside it).
# The sanitizer builds are optimized at -O1 and compile fewer SIMD targets (MPSIM_SIMD_BUILD:
# ASan AVX2 and the portable target, TSan the portable target), so the three fit in CI; the
# Release build tests every target. docs/reliability.md.
# After each build, the ten slowest compiles are printed and every compile is checked against
# the limits of scripts/build_times.sh (60 s, 120 s in a sanitizer build, 1.5 GiB): a file that
# crosses them fails the run (docs/getting-started.md, "Build times").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(--release --asan --tsan)
for m in "${modes[@]}"; do
  case "$m" in
    --release | --asan | --tsan) ;;
    *) echo "test.sh: unknown option '$m' (expected --release, --asan or --tsan)" >&2; exit 2 ;;
  esac
done
"$root/scripts/install_deps.sh" --tests
tsan_suites='^Mps|Dispatch|Buddy|Caching|Trace|Allocator|FaultSweep|QueuedFaults|Concurrency'
for m in "${modes[@]}"; do
  start=$SECONDS
  case "$m" in
    --release)
      build=${MPSIM_BUILD_DIR:-$root/build}
      MPSIM_BUILD_DIR=$build "$root/scripts/build.sh" -DMPSIM_BUILD_TESTS=ON -DMPSIM_BUILD_PYTHON=ON
      "$root/scripts/build_times.sh" "$build" --check
      (cd "$build" && ctest --output-on-failure -j 2)
      ;;
    --asan)
      build=$root/build-asan
      MPSIM_BUILD_DIR=$build "$root/scripts/build.sh" -DMPSIM_BUILD_TESTS=ON \
        -DMPSIM_BUILD_PYTHON=OFF -DMPSIM_SANITIZE=address -DMPSIM_SIMD_BUILD=avx2 \
        -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG"
      "$root/scripts/build_times.sh" "$build" --check
      (cd "$build" && ctest --output-on-failure -j 2)
      ;;
    --tsan)
      build=$root/build-tsan
      MPSIM_BUILD_DIR=$build MPSIM_BUILD_TARGETS="mps_device_test mps_memory_test dispatch_test \
allocator_test reliability_test" "$root/scripts/build.sh" -DMPSIM_BUILD_TESTS=ON \
        -DMPSIM_BUILD_PYTHON=OFF -DMPSIM_SANITIZE=thread -DMPSIM_SIMD_BUILD=scalar \
        -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG"
      "$root/scripts/build_times.sh" "$build" --check
      # One TBB thread: the kernels run on the thread that calls them (the queue's, the tests'),
      # so every race TSan can see is between mpsim's own threads.
      # scripts/tsan.supp: reports inside oneTBB itself (not TSan-built) are dropped. The tests
      # that raise TBB's thread count on purpose (...ForAnyThreadCount) hand work to TBB's
      # workers through its uninstrumented task queue, which TSan reports as races in the
      # kernels; they run in the Release and ASan suites.
      (cd "$build" && MPSIM_NUM_THREADS=1 TSAN_OPTIONS="suppressions=$root/scripts/tsan.supp" \
        ctest --output-on-failure -j 2 -R "$tsan_suites" -E "ForAnyThreadCount")
      ;;
  esac
  echo "test.sh: $m passed in $((SECONDS - start)) s"
done
