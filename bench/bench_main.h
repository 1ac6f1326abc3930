// The main of the benchmark binaries: MPSIM_NUM_THREADS (default: all) caps mpsim's threads
// and is reported in the context.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "core/mpsim.h"

inline int run_benchmarks(int argc, char** argv) {
  if (const char* n = std::getenv("MPSIM_NUM_THREADS")) mpsim::set_num_threads(std::atoi(n));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("mpsim_threads", std::to_string(mpsim::num_threads()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
