// Fuzz target: the allocators. The input drives a buddy allocator and a caching allocator in
// front of another with the same sequence of allocate (sizes from 0 to past an arena, every
// alignment up to past the largest honoured), free, set_limit, empty_cache and
// reset_peak_stats; after every step each one's check_invariants() must report nothing, every
// live block must keep the bytes written into it, and an error must be an mpsim::Error
// (OutOfMemoryError under a limit, InvalidArgument for a bad alignment) that changes nothing.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "allocator/buddy_allocator.h"
#include "allocator/caching_allocator.h"
#include "core/error.h"
#include "tests/fuzz/fuzz_input.h"

namespace mpsim::fuzz {
namespace {

struct Live {
  alloc::Block block;
  std::size_t size = 0;  // as asked for
  std::uint8_t fill = 0;
};

void fail(const char* who, const std::string& what) {
  std::fprintf(stderr, "alloc_fuzz: %s: %s\n", who, what.c_str());
  std::abort();
}

template <class A>
void check(const char* who, const A& a) {
  const std::vector<std::string> problems = a.check_invariants();
  if (!problems.empty()) fail(who, problems.front());
}

// Every byte of a block's first and last 64 bytes holds its fill value.
void check_contents(const char* who, const Live& l) {
  const auto* p = static_cast<const std::uint8_t*>(l.block.ptr);
  const std::size_t n = l.size, edge = n < 64 ? n : 64;
  for (std::size_t i = 0; i < edge; ++i) {
    if (p[i] != l.fill || p[n - 1 - i] != l.fill) fail(who, "a live block's bytes changed");
  }
}

std::size_t any_size(FuzzInput& in) {
  switch (in.below(8)) {
    case 0:
      return 0;
    case 1:
      return std::size_t{1} << in.in_range(20, 31);  // up to past the 1 GiB arena
    case 2:
      return static_cast<std::size_t>(in.u64());  // anything, most far too big
    default:
      return static_cast<std::size_t>(in.in_range(1, 1 << 17));
  }
}

template <class A>
void step(const char* who, A& a, std::vector<Live>& live, FuzzInput& in, int op) {
  switch (op) {
    case 0:
    case 1:
    case 2: {
      const std::size_t size = any_size(in);
      const std::size_t alignment = std::size_t{1} << in.in_range(0, 15);
      try {
        Live l{a.allocate(size, alignment), size, in.byte()};
        if (l.block.ptr == nullptr && size != 0) fail(who, "allocate returned null");
        if (reinterpret_cast<std::uintptr_t>(l.block.ptr) % alignment != 0) {
          fail(who, "misaligned block");
        }
        // Touch the ends only: a block may be an arena's worth of committed-on-demand memory.
        auto* p = static_cast<std::uint8_t*>(l.block.ptr);
        const std::size_t edge = size < 64 ? size : 64;
        std::memset(p, l.fill, edge);
        std::memset(p + size - edge, l.fill, edge);
        live.push_back(l);
      } catch (const Error&) {
      }
      break;
    }
    case 3:
    case 4:
      if (!live.empty()) {
        const std::size_t i = static_cast<std::size_t>(in.below(live.size()));
        check_contents(who, live[i]);
        a.free(live[i].block);
        live[i] = live.back();
        live.pop_back();
      }
      break;
    case 5:
      a.set_limit(in.flag() ? 0 : std::size_t{1} << in.in_range(20, 32));
      break;
    case 6:
      a.empty_cache();
      break;
    default:
      a.reset_peak_stats();
      break;
  }
  check(who, a);
}

}  // namespace
}  // namespace mpsim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mpsim;
  fuzz::FuzzInput in(data, size);
  alloc::BuddyOptions options;
  options.guard_bytes = in.flag() ? 16 : 0;
  alloc::BuddyAllocator buddy(options);
  alloc::CachingAllocator caching(options);
  std::vector<fuzz::Live> buddy_live, caching_live;
  for (int steps = 0; steps < 256 && !in.empty(); ++steps) {
    const int op = static_cast<int>(in.below(8));
    fuzz::step("buddy", buddy, buddy_live, in, op);
    fuzz::step("caching", caching, caching_live, in, op);
  }
  for (const fuzz::Live& l : buddy_live) buddy.free(l.block);
  for (const fuzz::Live& l : caching_live) caching.free(l.block);
  fuzz::check("buddy", buddy);
  fuzz::check("caching", caching);
  if (buddy.stats().allocated_bytes != 0 || caching.stats().allocated_bytes != 0) {
    fuzz::fail("both", "bytes still allocated after every block was freed");
  }
  return 0;
}
