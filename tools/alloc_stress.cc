// `mpsim alloc-replay --stress`: the random multi-threaded workload on one allocator of our
// own, with block corruption and invariant checks (options parsed in alloc_replay.cc).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "allocator/buddy_allocator.h"
#include "allocator/caching_allocator.h"
#include "allocator/trace.h"
#include "tools/alloc_replay_common.h"
#include "tools/commands.h"

namespace mpsim::tools {

using alloc::AllocatorStats;
using alloc::Block;
using json = nlohmann::ordered_json;

// Random multi-threaded workload: each thread allocates with log-uniform sizes in
// [kMinSize, kMaxSize] and frees a random live block, half and half, holding at most
// kMaxLivePerThread blocks (so 4 threads stay near 1.3 GiB live at worst). Every block carries
// its id in its first and last 8 bytes, checked at free: an overlap of two live blocks shows
// as a corrupted id. Invariants are checked every `check_every` operations, process-wide.
int run_alloc_stress(const AllocReplayArgs& args) {
  constexpr double kMinSize = 256;
  constexpr double kMaxSize = 64.0 * 1024 * 1024;
  constexpr std::size_t kMaxLivePerThread = 32;
  // Only the chosen allocator is constructed.
  std::optional<alloc::BuddyAllocator> buddy;
  std::optional<alloc::CachingAllocator> caching;
  alloc::Allocator* allocator = nullptr;
  alloc::InvariantChecker invariants;
  if (args.allocators.front() == "caching") {
    allocator = &caching.emplace(alloc::BuddyOptions{},
                                 alloc::CacheOptions{.max_cached_bytes = args.cache_bytes});
    invariants = [&] { return caching->check_invariants(); };
  } else {
    allocator = &buddy.emplace();
    invariants = [&] { return buddy->check_invariants(); };
  }
  std::atomic<std::uint64_t> done_ops{0};
  std::atomic<std::uint64_t> corrupted{0};
  std::atomic<std::uint64_t> violations{0};
  std::atomic<std::uint64_t> checks{0};
  std::mutex error_mu;
  std::string first_error;
  auto check = [&] {
    const std::vector<std::string> errors = invariants();
    checks.fetch_add(1);
    if (!errors.empty()) {
      violations.fetch_add(errors.size());
      std::lock_guard lock(error_mu);
      if (first_error.empty()) first_error = errors.front();
    }
  };
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int> running{args.threads};
  std::vector<std::thread> threads;
  for (int t = 0; t < args.threads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(args.seed * 1000003 + static_cast<std::uint64_t>(t));
      std::uniform_real_distribution<double> log_size(std::log(kMinSize), std::log(kMaxSize));
      std::vector<Block> live;
      const std::uint64_t ops = args.ops / static_cast<std::uint64_t>(args.threads) +
                                (static_cast<std::uint64_t>(t) < args.ops % args.threads ? 1 : 0);
      auto release = [&](std::size_t i) {
        const Block b = live[i];
        std::uint64_t head = 0;
        std::uint64_t tail = 0;
        std::memcpy(&head, b.ptr, 8);
        std::memcpy(&tail, static_cast<char*>(b.ptr) + b.size - 8, 8);
        if (head != b.id || tail != b.id) corrupted.fetch_add(1);
        allocator->free(b);
        live[i] = live.back();
        live.pop_back();
      };
      for (std::uint64_t i = 0; i < ops; ++i) {
        if (live.size() < kMaxLivePerThread && (live.empty() || rng() % 2 == 0)) {
          const auto size = static_cast<std::size_t>(std::exp(log_size(rng)));
          const Block b = allocator->allocate(size, 256);
          std::memcpy(b.ptr, &b.id, 8);
          std::memcpy(static_cast<char*>(b.ptr) + b.size - 8, &b.id, 8);
          live.push_back(b);
        } else {
          release(rng() % live.size());
        }
        if (done_ops.fetch_add(1) % args.check_every == args.check_every - 1) check();
      }
      while (!live.empty()) release(live.size() - 1);
      running.fetch_sub(1);
    });
  }
  {
    Progress progress("alloc-replay", !args.json && isatty(STDERR_FILENO) == 1);
    const std::string what = "stress, " + args.allocators.front();
    while (progress.enabled() && running.load() > 0) {
      progress.update(what, std::min(done_ops.load(), args.ops), args.ops, "operations");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  for (std::thread& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  check();
  const AllocatorStats s = allocator->stats();
  const double ratio = static_cast<double>(s.peak_reserved_bytes) /
                       static_cast<double>(std::max<std::size_t>(s.peak_requested_bytes, 1));
  if (args.json) {
    const json j = {{"allocator", args.allocators.front()},
                    {"mode", "stress"},
                    {"threads", args.threads},
                    {"ops", args.ops},
                    {"seed", args.seed},
                    {"ops_per_second", static_cast<double>(args.ops) / seconds},
                    {"peak_requested_bytes", s.peak_requested_bytes},
                    {"peak_reserved_bytes", s.peak_reserved_bytes},
                    {"ratio", ratio},
                    {"num_splits", s.num_splits},
                    {"num_merges", s.num_merges},
                    {"invariant_checks", checks.load()},
                    {"invariant_violations", violations.load()},
                    {"corrupted_blocks", corrupted.load()}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("stress               %s, %d threads, %llu ops, seed %llu, %.2f s (%.2f M ops/s)\n",
                args.allocators.front().c_str(), args.threads,
                static_cast<unsigned long long>(args.ops),
                static_cast<unsigned long long>(args.seed), seconds, args.ops / seconds / 1e6);
    std::printf(
        "peak requested       %.2f MiB\npeak reserved        %.2f MiB\n"
        "reserved / requested %.4f\nsplits / merges      %llu / %llu\n",
        s.peak_requested_bytes / 1048576.0, s.peak_reserved_bytes / 1048576.0, ratio,
        static_cast<unsigned long long>(s.num_splits),
        static_cast<unsigned long long>(s.num_merges));
    std::printf("invariant checks     %llu, violations %llu%s%s\ncorrupted blocks     %llu\n",
                static_cast<unsigned long long>(checks.load()),
                static_cast<unsigned long long>(violations.load()), first_error.empty() ? "" : ": ",
                first_error.c_str(), static_cast<unsigned long long>(corrupted.load()));
  }
  return violations.load() == 0 && corrupted.load() == 0 && s.active_blocks == 0 ? kExitOk
                                                                                 : kExitFailed;
}

}  // namespace mpsim::tools
