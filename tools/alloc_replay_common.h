// What the trace replay (alloc_replay.cc) and the stress workload (alloc_stress.cc) of `mpsim
// alloc-replay` share: the parsed options and the stress entry point.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "allocator/caching_allocator.h"
#include "tools/progress.h"

namespace mpsim::tools {

struct AllocReplayArgs {
  std::string trace;
  std::vector<std::string> allocators;
  bool json = false;
  bool stress = false;
  int threads = 4;
  std::uint64_t ops = 1'000'000;
  std::uint64_t seed = 1;
  std::uint64_t check_every = 100'000;
  std::uint64_t cache_bytes = alloc::CacheOptions{}.max_cached_bytes;
  std::string timeline;     // empty: no timeline
  std::uint64_t limit = 0;  // 0: no limit
  bool min_limit = false;
};

// The random multi-threaded workload of --stress on one allocator of our own (alloc_stress.cc);
// returns the process exit status.
int run_alloc_stress(const AllocReplayArgs& args);

}  // namespace mpsim::tools
