// Libraries to link: the `mpsim_allocator` objects (or libmpsim) and ${CMAKE_DL_LIBS} (dlopen).
// The peers are loaded at run time, so none is a link dependency: jemalloc from
// libjemalloc.so.2 (Debian libjemalloc2), mimalloc from libmimalloc.so.2 (libmimalloc2.0),
// tbbmalloc from libtbbmalloc.so.2 (libtbbmalloc2); glibc malloc is the process's own.
#include "tools/alloc_replay.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "allocator/buddy_allocator.h"
#include "allocator/caching_allocator.h"
#include "allocator/trace.h"
#include "core/error.h"

namespace mpsim::tools {
namespace {

using alloc::AllocatorStats;
using alloc::Block;

constexpr const char* kUsage =
    "usage: mpsim alloc-replay TRACE "
    "[--allocator buddy|caching|malloc|jemalloc|mimalloc|tbbmalloc] [--cache-bytes N] [--json]\n"
    "       mpsim alloc-replay --stress [--allocator buddy|caching] [--threads N (1..8)] "
    "[--ops N] [--seed S] [--check-every N] [--cache-bytes N] [--json]\n"
    "--cache-bytes caps the caching allocator's cache (default 32 MiB; 0 turns it off).\n";

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  std::size_t resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// A peer malloc behind the Allocator interface. It has no common statistics API, so reserved
// memory is measured the same way for every peer: when `touch` is on, allocate() writes one
// byte per page of each block (so the pages the peer hands out become resident) and samples the
// process's resident set; peak_reserved_bytes is the peak resident set over the baseline taken
// at reset_peak_stats(). Timed passes run with touch off.
class PeerAllocator final : public alloc::Allocator {
 public:
  using AlignedMalloc = void* (*)(std::size_t alignment, std::size_t size);
  using Free = void (*)(void*);

  PeerAllocator(const char* name, AlignedMalloc allocate, Free release)
      : name_(name), allocate_(allocate), free_(release) {}

  void set_touch(bool touch) { touch_ = touch; }

  Block allocate(std::size_t size, std::size_t alignment) override {
    const std::size_t bytes =
        std::max<std::size_t>((size + alignment - 1) / alignment, 1) * alignment;
    void* ptr = allocate_(alignment, bytes);
    if (ptr == nullptr) throw OutOfMemoryError(std::string("[") + name_ + "] returned null");
    std::lock_guard lock(mu_);
    stats_.requested_bytes += size;
    stats_.allocated_bytes += bytes;
    stats_.active_blocks += 1;
    stats_.num_allocs += 1;
    if (touch_) {
      for (std::size_t i = 0; i < bytes; i += 4096) static_cast<volatile char*>(ptr)[i] = 1;
      const std::size_t rss = resident_bytes();
      stats_.reserved_bytes = rss > baseline_ ? rss - baseline_ : 0;
      stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
    }
    return Block{ptr, bytes, next_id_++, size};
  }
  void free(const Block& block) override {
    free_(block.ptr);
    std::lock_guard lock(mu_);
    stats_.requested_bytes -= block.requested;
    stats_.allocated_bytes -= block.size;
    stats_.active_blocks -= 1;
    stats_.num_frees += 1;
  }
  AllocatorStats stats() const override {
    std::lock_guard lock(mu_);
    return stats_;
  }
  void reset_peak_stats() override {
    std::lock_guard lock(mu_);
    baseline_ = resident_bytes();
    stats_.peak_reserved_bytes = 0;
  }
  void set_limit(std::size_t) override {}
  const char* name() const override { return name_; }

 private:
  const char* name_;
  AlignedMalloc allocate_;
  Free free_;
  bool touch_ = false;
  std::size_t baseline_ = 0;
  mutable std::mutex mu_;
  AllocatorStats stats_;
  std::uint64_t next_id_ = 1;
};

// Loaded peer entry points; the handles stay open for the life of the process because blocks
// may outlive any scope here.
struct PeerFunctions {
  PeerAllocator::AlignedMalloc allocate = nullptr;
  PeerAllocator::Free release = nullptr;
};

void* glibc_aligned(std::size_t alignment, std::size_t size) {
  return std::aligned_alloc(alignment, size);
}
void glibc_free(void* p) { std::free(p); }

// Swaps (size, alignment) order for the libraries whose aligned malloc takes size first.
template <auto& kFn>
void* size_first(std::size_t alignment, std::size_t size) {
  return kFn(size, alignment);
}
void* (*g_mi_malloc_aligned)(std::size_t, std::size_t) = nullptr;
void* (*g_scalable_aligned_malloc)(std::size_t, std::size_t) = nullptr;

bool load_peer(const std::string& name, PeerFunctions& out, std::string& error) {
  if (name == "malloc") {
    out = {glibc_aligned, glibc_free};
    return true;
  }
  struct Library {
    const char* name;
    const char* soname;
    const char* allocate;
    const char* release;
  };
  static constexpr Library kLibraries[] = {
      {"jemalloc", "libjemalloc.so.2", "aligned_alloc", "free"},
      {"mimalloc", "libmimalloc.so.2", "mi_malloc_aligned", "mi_free"},
      {"tbbmalloc", "libtbbmalloc.so.2", "scalable_aligned_malloc", "scalable_aligned_free"},
  };
  for (const Library& lib : kLibraries) {
    if (name != lib.name) continue;
    void* handle = dlopen(lib.soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      // jemalloc's initial-exec TLS needs static TLS room that glibc reserves only on request.
      error = std::string(lib.name) + " is not installed or cannot be loaded (" + dlerror() +
              "); for jemalloc's static TLS run with "
              "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384";
      return false;
    }
    void* allocate = dlsym(handle, lib.allocate);
    void* release = dlsym(handle, lib.release);
    if (allocate == nullptr || release == nullptr) {
      error = std::string(lib.soname) + " lacks " + lib.allocate + " or " + lib.release;
      return false;
    }
    out.release = reinterpret_cast<PeerAllocator::Free>(release);
    if (name == "jemalloc") {
      out.allocate = reinterpret_cast<PeerAllocator::AlignedMalloc>(allocate);
    } else if (name == "mimalloc") {
      g_mi_malloc_aligned = reinterpret_cast<void* (*)(std::size_t, std::size_t)>(allocate);
      out.allocate = size_first<g_mi_malloc_aligned>;
    } else {
      g_scalable_aligned_malloc = reinterpret_cast<void* (*)(std::size_t, std::size_t)>(allocate);
      out.allocate = size_first<g_scalable_aligned_malloc>;
    }
    return true;
  }
  error = "unknown allocator '" + name + "'";
  return false;
}

struct Args {
  std::string trace;
  std::string allocator = "buddy";
  bool json = false;
  bool stress = false;
  int threads = 4;
  std::uint64_t ops = 1'000'000;
  std::uint64_t seed = 1;
  std::uint64_t check_every = 100'000;
  std::uint64_t cache_bytes = alloc::CacheOptions{}.max_cached_bytes;
};

// The allocators of our own that replay and stress can drive, with their invariant checks.
bool is_own_allocator(const std::string& name) { return name == "buddy" || name == "caching"; }

bool parse_args(int argc, char** argv, Args& args, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::uint64_t& out) {
      if (i + 1 >= argc) return false;
      char* end = nullptr;
      out = std::strtoull(argv[++i], &end, 10);
      return *end == '\0';
    };
    std::uint64_t n = 0;
    if (a == "--json") {
      args.json = true;
    } else if (a == "--stress") {
      args.stress = true;
    } else if (a == "--allocator" && i + 1 < argc) {
      args.allocator = argv[++i];
    } else if (a == "--threads" && value(n) && n >= 1 && n <= 8) {
      args.threads = static_cast<int>(n);
    } else if (a == "--ops" && value(n) && n > 0) {
      args.ops = n;
    } else if (a == "--seed" && value(n)) {
      args.seed = n;
    } else if (a == "--check-every" && value(n) && n > 0) {
      args.check_every = n;
    } else if (a == "--cache-bytes" && value(n)) {
      args.cache_bytes = n;
    } else if (!a.starts_with("--") && args.trace.empty()) {
      args.trace = a;
    } else if (a == "--allocator" || a == "--threads" || a == "--ops" || a == "--seed" ||
               a == "--check-every" || a == "--cache-bytes") {
      error = "missing or bad value for " + a + (a == "--threads" ? " (1..8)" : "");
      return false;
    } else {
      error = "bad argument '" + a + "'";
      return false;
    }
  }
  if (args.stress == !args.trace.empty()) {
    error = "give either a TRACE or --stress";
    return false;
  }
  if (args.stress && !is_own_allocator(args.allocator)) {
    error = "--stress drives buddy or caching, not '" + args.allocator + "'";
    return false;
  }
  return true;
}

int run_replay(const Args& args) {
  const alloc::Trace trace = alloc::read_trace(args.trace);
  alloc::ReplayResult timed;
  alloc::ReplayResult checked;
  if (args.allocator == "buddy") {
    alloc::BuddyAllocator fast;
    timed = alloc::replay(trace, fast);
    alloc::BuddyAllocator slow;
    checked = alloc::replay(trace, slow, [&] { return slow.check_invariants(); });
  } else if (args.allocator == "caching") {
    const alloc::CacheOptions cache{.max_cached_bytes = args.cache_bytes};
    alloc::CachingAllocator fast({}, cache);
    timed = alloc::replay(trace, fast);
    alloc::CachingAllocator slow({}, cache);
    checked = alloc::replay(trace, slow, [&] { return slow.check_invariants(); });
  } else {
    PeerFunctions fns;
    std::string error;
    if (!load_peer(args.allocator, fns, error)) {
      std::fprintf(stderr, "alloc-replay: %s\n", error.c_str());
      return 2;
    }
    PeerAllocator peer(args.allocator == "malloc" ? "malloc" : args.allocator.c_str(), fns.allocate,
                       fns.release);
    timed = alloc::replay(trace, peer);
    peer.set_touch(true);
    checked = alloc::replay(trace, peer);
    timed.peak_reserved_bytes = checked.peak_reserved_bytes;
  }
  const double ratio = static_cast<double>(timed.peak_reserved_bytes) /
                       static_cast<double>(std::max<std::size_t>(timed.peak_requested_bytes, 1));
  if (args.json) {
    std::printf(
        "{\"allocator\": \"%s\", \"trace\": \"%s\", \"events\": %zu, "
        "\"peak_requested_bytes\": %zu, \"peak_reserved_bytes\": %zu, \"ratio\": %.4f, "
        "\"ns_per_alloc\": %.1f, \"ns_per_free\": %.1f, \"invariant_checks\": %zu, "
        "\"invariant_violations\": %zu}\n",
        args.allocator.c_str(), args.trace.c_str(), timed.events, timed.peak_requested_bytes,
        timed.peak_reserved_bytes, ratio, timed.ns_per_alloc, timed.ns_per_free,
        checked.invariant_checks, checked.invariant_violations);
  } else {
    std::printf("allocator            %s\ntrace                %s (%zu events)\n",
                args.allocator.c_str(), args.trace.c_str(), timed.events);
    std::printf("peak requested       %.2f MiB\npeak reserved        %.2f MiB%s\n",
                timed.peak_requested_bytes / 1048576.0, timed.peak_reserved_bytes / 1048576.0,
                is_own_allocator(args.allocator) ? "" : " (resident set, pages touched)");
    std::printf("reserved / requested %.4f\nns per alloc         %.1f\nns per free          %.1f\n",
                ratio, timed.ns_per_alloc, timed.ns_per_free);
    if (is_own_allocator(args.allocator)) {
      std::printf("invariant checks     %zu, violations %zu%s%s\n", checked.invariant_checks,
                  checked.invariant_violations, checked.first_violation.empty() ? "" : ": ",
                  checked.first_violation.c_str());
    } else {
      std::printf("invariant checks     none (a peer exposes no invariants)\n");
    }
  }
  return checked.invariant_violations == 0 ? 0 : 1;
}

// Random multi-threaded workload: each thread allocates with log-uniform sizes in
// [kMinSize, kMaxSize] and frees a random live block, half and half, holding at most
// kMaxLivePerThread blocks (so 4 threads stay near 1.3 GiB live at worst). Every block carries
// its id in its first and last 8 bytes, checked at free: an overlap of two live blocks shows
// as a corrupted id. Invariants are checked every `check_every` operations, process-wide.
int run_stress(const Args& args) {
  constexpr double kMinSize = 256;
  constexpr double kMaxSize = 64.0 * 1024 * 1024;
  constexpr std::size_t kMaxLivePerThread = 32;
  // Only the chosen allocator is constructed.
  std::optional<alloc::BuddyAllocator> buddy;
  std::optional<alloc::CachingAllocator> caching;
  alloc::Allocator* allocator = nullptr;
  alloc::InvariantChecker invariants;
  if (args.allocator == "caching") {
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
    });
  }
  for (std::thread& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  check();
  const AllocatorStats s = allocator->stats();
  const double ratio = static_cast<double>(s.peak_reserved_bytes) /
                       static_cast<double>(std::max<std::size_t>(s.peak_requested_bytes, 1));
  if (args.json) {
    std::printf(
        "{\"allocator\": \"%s\", \"mode\": \"stress\", \"threads\": %d, \"ops\": %llu, "
        "\"seed\": %llu, \"ops_per_second\": %.0f, \"peak_requested_bytes\": %zu, "
        "\"peak_reserved_bytes\": %zu, \"ratio\": %.4f, \"num_splits\": %llu, "
        "\"num_merges\": %llu, \"invariant_checks\": %llu, \"invariant_violations\": %llu, "
        "\"corrupted_blocks\": %llu}\n",
        args.allocator.c_str(), args.threads, static_cast<unsigned long long>(args.ops),
        static_cast<unsigned long long>(args.seed), static_cast<double>(args.ops) / seconds,
        s.peak_requested_bytes, s.peak_reserved_bytes, ratio,
        static_cast<unsigned long long>(s.num_splits),
        static_cast<unsigned long long>(s.num_merges),
        static_cast<unsigned long long>(checks.load()),
        static_cast<unsigned long long>(violations.load()),
        static_cast<unsigned long long>(corrupted.load()));
  } else {
    std::printf("stress               %s, %d threads, %llu ops, seed %llu, %.2f s (%.2f M ops/s)\n",
                args.allocator.c_str(), args.threads, static_cast<unsigned long long>(args.ops),
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
  return violations.load() == 0 && corrupted.load() == 0 && s.active_blocks == 0 ? 0 : 1;
}

}  // namespace

int alloc_replay_main(int argc, char** argv) {
  Args args;
  std::string error;
  if (!parse_args(argc, argv, args, error)) {
    std::fprintf(stderr, "alloc-replay: %s\n%s", error.c_str(), kUsage);
    return 2;
  }
  try {
    return args.stress ? run_stress(args) : run_replay(args);
  } catch (const Error& e) {
    std::fprintf(stderr, "alloc-replay: %s\n", e.what());
    return 2;
  }
}

}  // namespace mpsim::tools
