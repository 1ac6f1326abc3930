// What the trace replay (alloc_replay.cc) and the stress workload (alloc_stress.cc) of `mpsim
// alloc-replay` share: the parsed options, the progress line, and the stress entry point.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "allocator/caching_allocator.h"

namespace mpsim::tools {

// A progress line on stderr for long work, shown only when stderr is a terminal and the output
// is text (--json output stays machine-readable, a log file stays clean). Redrawn at most every
// 100 ms; cleared by done() or at destruction.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { done(); }

  // `what` names the work ("buddy: timed pass"); `done_count` of `total` `unit` are through.
  void update(const std::string& what, std::uint64_t done_count, std::uint64_t total,
              const char* unit = "events") {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    shown_ = true;
    const double percent =
        total == 0 ? 100.0 : 100.0 * static_cast<double>(done_count) / static_cast<double>(total);
    std::fprintf(stderr, "\r\033[Kalloc-replay: %s: %llu / %llu %s (%.0f%%)", what.c_str(),
                 static_cast<unsigned long long>(done_count),
                 static_cast<unsigned long long>(total), unit, percent);
    std::fflush(stderr);
  }
  void done() {
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }
  bool enabled() const { return enabled_; }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_;
};

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
