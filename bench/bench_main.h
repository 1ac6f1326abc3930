// The main of the benchmark binaries: MPSIM_NUM_THREADS (default: all) caps mpsim's threads
// and is reported in the context; a value that is not a thread count stops the binary (exit 2).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/mpsim.h"

inline int run_benchmarks(int argc, char** argv) {
  if (const char* n = std::getenv("MPSIM_NUM_THREADS"); n != nullptr && *n != '\0') {
    char* end = nullptr;
    const long t = std::strtol(n, &end, 10);
    if (*end != '\0' || t < 1 || t > 4096) {
      std::fprintf(stderr, "MPSIM_NUM_THREADS='%s': expected a thread count from 1 to 4096\n", n);
      return 2;  // a benchmark on the wrong thread count would be a wrong number
    }
    mpsim::set_num_threads(static_cast<int>(t));
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("mpsim_threads", std::to_string(mpsim::num_threads()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
