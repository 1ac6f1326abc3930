#include "allocator/caching_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"

namespace mpsim::alloc {
namespace {

constexpr std::size_t kKiB = 1024;

// The buddy of buddy_allocator_test.cc: 256 units of 256 B in one 64 KiB arena, committed in
// 4 KiB granules, so every placement and granule is visible.
BuddyOptions small_buddy() {
  BuddyOptions o;
  o.min_block = 256;
  o.arena_size = 64 * kKiB;
  o.commit_granule = 4 * kKiB;
  return o;
}

CacheOptions cache_of(std::size_t max_cached_bytes, std::size_t max_cached_block = 16 * kKiB) {
  CacheOptions c;
  c.max_cached_bytes = max_cached_bytes;
  c.max_cached_block = max_cached_block;
  return c;
}

std::string violations(const CachingAllocator& a) {
  std::string out;
  for (const std::string& e : a.check_invariants()) out += e + "\n";
  return out;
}

#define EXPECT_INVARIANTS(a) EXPECT_EQ(violations(a), "")

std::uintptr_t addr(const Block& b) { return reinterpret_cast<std::uintptr_t>(b.ptr); }

// The cache's view and the buddy's must add up: the buddy sees cached blocks as allocated.
void expect_split_between_caller_and_cache(const CachingAllocator& a) {
  const AllocatorStats s = a.stats();
  const AllocatorStats b = a.buddy().stats();
  EXPECT_EQ(b.allocated_bytes, s.allocated_bytes + s.cached_bytes);
  EXPECT_EQ(b.active_blocks, s.active_blocks + s.cached_blocks);
  EXPECT_EQ(b.reserved_bytes, s.reserved_bytes);
  EXPECT_EQ(b.peak_reserved_bytes, s.peak_reserved_bytes);
}

TEST(CachingAllocator, FreedBlockIsHandedBackWithoutTouchingTheTree) {
  CachingAllocator a(small_buddy(), cache_of(64 * kKiB));
  EXPECT_STREQ(a.name(), "caching");
  const Block x = a.allocate(1000, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(x.size, 1024u);
  EXPECT_EQ(x.requested, 1000u);
  const AllocatorStats after_miss = a.stats();
  EXPECT_EQ(after_miss.num_splits, 6u);  // the buddy placed it: 64 KiB halved down to 1 KiB
  EXPECT_EQ(after_miss.reserved_bytes, 4 * kKiB);

  a.free(x);
  EXPECT_INVARIANTS(a);
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.allocated_bytes, 0u);
  EXPECT_EQ(s.requested_bytes, 0u);
  EXPECT_EQ(s.active_blocks, 0u);
  EXPECT_EQ(s.cached_bytes, 1024u);
  EXPECT_EQ(s.cached_blocks, 1u);
  EXPECT_EQ(s.num_merges, 0u);  // still allocated in the buddy
  EXPECT_EQ(s.num_frees, 1u);
  expect_split_between_caller_and_cache(a);

  // 900 B rounds to the same 1024 B class: the cached block comes back, with a new id.
  const Block y = a.allocate(900, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(y.ptr, x.ptr);
  EXPECT_EQ(y.size, 1024u);
  EXPECT_EQ(y.requested, 900u);
  EXPECT_NE(y.id, x.id);
  s = a.stats();
  EXPECT_EQ(s.num_cache_hits, 1u);
  EXPECT_EQ(s.num_allocs, 2u);
  EXPECT_EQ(s.num_splits, 6u);  // the hit touched no buddy node
  EXPECT_EQ(s.num_merges, 0u);
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.allocated_bytes, 1024u);
  EXPECT_EQ(s.requested_bytes, 900u);
  EXPECT_EQ(s.reserved_bytes, 4 * kKiB);
  EXPECT_EQ(s.peak_requested_bytes, 1000u);
  expect_split_between_caller_and_cache(a);
  a.free(y);
  EXPECT_INVARIANTS(a);
}

TEST(CachingAllocator, OtherSizeClassMissesAndCachedBlockStays) {
  CachingAllocator a(small_buddy(), cache_of(64 * kKiB));
  const Block x = a.allocate(1024, 1);
  a.free(x);
  const Block y = a.allocate(1025, 1);  // 1280 B: another class, served by the buddy after x
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(y.size, 1280u);
  EXPECT_EQ(addr(y), addr(x) + 1024);
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.num_cache_hits, 0u);
  EXPECT_EQ(s.cached_bytes, 1024u);
  EXPECT_EQ(s.allocated_bytes, 1280u);
  expect_split_between_caller_and_cache(a);
  a.free(y);
  EXPECT_INVARIANTS(a);
  s = a.stats();
  EXPECT_EQ(s.cached_bytes, 2304u);
  EXPECT_EQ(s.cached_blocks, 2u);
}

TEST(CachingAllocator, CapEvictsLeastRecentlyFreedFirst) {
  CachingAllocator a(small_buddy(), cache_of(2048));
  const Block p = a.allocate(1024, 1);
  const Block q = a.allocate(1024, 1);
  const Block r = a.allocate(1024, 1);
  EXPECT_EQ(addr(q), addr(p) + 1024);
  EXPECT_EQ(addr(r), addr(p) + 2048);
  a.free(p);
  a.free(q);
  EXPECT_INVARIANTS(a);
  a.free(r);  // the cap holds two blocks: p, the oldest, goes back to the buddy
  EXPECT_INVARIANTS(a);
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.cached_bytes, 2048u);
  EXPECT_EQ(s.cached_blocks, 2u);
  EXPECT_EQ(s.num_cache_evictions, 1u);
  EXPECT_EQ(a.buddy().stats().allocated_bytes, 2048u);
  // Most recently freed first: r, then q; then the buddy's leftmost run, where p was.
  const Block r2 = a.allocate(1000, 1);
  const Block q2 = a.allocate(1000, 1);
  const Block p2 = a.allocate(1000, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(r2.ptr, r.ptr);
  EXPECT_EQ(q2.ptr, q.ptr);
  EXPECT_EQ(p2.ptr, p.ptr);
  s = a.stats();
  EXPECT_EQ(s.num_cache_hits, 2u);
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.allocated_bytes, 3072u);
  expect_split_between_caller_and_cache(a);
  for (const Block& b : {r2, q2, p2}) a.free(b);
  EXPECT_INVARIANTS(a);
}

TEST(CachingAllocator, BlockLargerThanCapOrMaxBlockGoesStraightBack) {
  CachingAllocator a(small_buddy(), cache_of(16 * kKiB, 4 * kKiB));
  const Block big = a.allocate(8 * kKiB, 1);  // above max_cached_block
  a.free(big);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().cached_bytes, 0u);
  EXPECT_EQ(a.buddy().stats().allocated_bytes, 0u);
  EXPECT_EQ(a.stats().num_merges, a.stats().num_splits);

  CachingAllocator tiny(small_buddy(), cache_of(512));
  const Block b = tiny.allocate(1024, 1);  // cacheable size, but larger than the whole cap
  tiny.free(b);
  EXPECT_INVARIANTS(tiny);
  EXPECT_EQ(tiny.stats().cached_bytes, 0u);
  EXPECT_EQ(tiny.buddy().stats().allocated_bytes, 0u);
}

TEST(CachingAllocator, StricterAlignmentTakesAnAlignedCachedBlock) {
  CachingAllocator a(small_buddy(), cache_of(64 * kKiB));
  const Block x = a.allocate(256, 1);  // offset 0: granule, hence 4 KiB, aligned
  const Block y = a.allocate(256, 1);  // offset 256
  EXPECT_EQ(addr(x) % (4 * kKiB), 0u);
  a.free(x);
  a.free(y);  // y heads the 256 B list
  const Block aligned = a.allocate(200, 4 * kKiB);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(aligned.ptr, x.ptr);
  const Block any = a.allocate(200, 1);
  EXPECT_EQ(any.ptr, y.ptr);
  EXPECT_EQ(a.stats().num_cache_hits, 2u);
  EXPECT_THROW(a.allocate(256, 3), InvalidArgument);
  EXPECT_THROW(a.allocate(256, 32 * kKiB), InvalidArgument);
  a.free(aligned);
  a.free(any);
  EXPECT_INVARIANTS(a);
}

TEST(CachingAllocator, EmptyCacheGivesBlocksBackAndReleasesArenas) {
  CachingAllocator a(small_buddy(), cache_of(64 * kKiB));
  const Block x = a.allocate(1024, 1);
  const Block y = a.allocate(6 * kKiB, 1);
  a.free(x);
  a.free(y);
  EXPECT_INVARIANTS(a);
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.cached_bytes, 1024u + 6 * kKiB);
  EXPECT_EQ(s.reserved_bytes, 8 * kKiB);
  a.empty_cache();
  EXPECT_INVARIANTS(a);
  s = a.stats();
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.cached_blocks, 0u);
  EXPECT_EQ(s.reserved_bytes, 0u);
  EXPECT_EQ(s.num_arenas, 0u);
  EXPECT_EQ(s.num_merges, s.num_splits);
  EXPECT_EQ(a.buddy().stats().active_blocks, 0u);
}

// While blocks are cached the buddy may only serve a miss from memory it holds: a miss that
// would commit a granule first gets the cache back, so the cache never makes memory grow.
TEST(CachingAllocator, MissThatWouldGrowMemoryFlushesTheCacheFirst) {
  CachingAllocator a(small_buddy(), cache_of(64 * kKiB));
  const Block x = a.allocate(4 * kKiB, 1);  // granule 0
  a.free(x);
  EXPECT_EQ(a.stats().reserved_bytes, 4 * kKiB);
  // Without the flush it would land at 4 KiB and commit two granules (12 KiB reserved).
  const Block y = a.allocate(8 * kKiB, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(y.ptr, x.ptr);
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.reserved_bytes, 8 * kKiB);
  EXPECT_EQ(s.cached_bytes, 0u);
  EXPECT_EQ(s.num_cache_evictions, 0u);  // a flush is not an eviction under the cap
  a.free(y);
  EXPECT_INVARIANTS(a);
}

TEST(CachingAllocator, MissThatFitsCommittedMemoryLeavesTheCacheAlone) {
  CachingAllocator a(small_buddy(), cache_of(64 * kKiB));
  const Block p = a.allocate(1024, 1);
  const Block q = a.allocate(1024, 1);
  a.free(p);
  const Block r = a.allocate(2048, 1);  // another class; fits in committed granule 0
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(addr(r), addr(p) + 2048);
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.cached_bytes, 1024u);
  EXPECT_EQ(s.reserved_bytes, 4 * kKiB);
  a.free(q);
  a.free(r);
  EXPECT_INVARIANTS(a);
}

TEST(CachingAllocator, OutOfMemoryAfterTheCacheIsGivenBack) {
  BuddyOptions o = small_buddy();
  o.limit = 4 * kKiB;
  CachingAllocator a(o, cache_of(64 * kKiB));
  const Block x = a.allocate(4 * kKiB, 1);
  a.free(x);
  EXPECT_EQ(a.stats().cached_bytes, 4 * kKiB);
  try {
    a.allocate(8 * kKiB, 1);
    ADD_FAILURE() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("MPS backend out of memory"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("Tried to allocate 8.00 KiB"), std::string::npos)
        << e.what();
  }
  EXPECT_INVARIANTS(a);
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.num_ooms, 1u);
  EXPECT_EQ(s.cached_bytes, 0u);  // given back before failing
  EXPECT_EQ(s.active_blocks, 0u);
  EXPECT_EQ(s.num_allocs, 1u);
  EXPECT_EQ(s.reserved_bytes, 0u);  // the buddy released the free granule to retry
  // A fitting request still succeeds afterwards.
  const Block y = a.allocate(4 * kKiB, 1);
  EXPECT_INVARIANTS(a);
  a.free(y);

  // A cached block is served even after the limit drops below what is reserved.
  a.set_limit(0);
  const Block big = a.allocate(8 * kKiB, 1);
  a.free(big);
  a.set_limit(4 * kKiB);
  const Block again = a.allocate(8 * kKiB, 1);
  EXPECT_EQ(again.ptr, big.ptr);
  EXPECT_EQ(a.stats().num_ooms, 1u);
  a.free(again);
  EXPECT_INVARIANTS(a);
}

TEST(CachingAllocator, MisuseIsReportedAndChangesNothing) {
  CachingAllocator a(small_buddy(), cache_of(64 * kKiB));
  const Block x = a.allocate(1024, 1);
  const Block y = a.allocate(1024, 1);
  auto expect_invalid = [&](const Block& b, const std::string& words) {
    const AllocatorStats before = a.stats();
    try {
      a.free(b);
      ADD_FAILURE() << "expected InvalidArgument containing '" << words << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    EXPECT_INVARIANTS(a);
    const AllocatorStats after = a.stats();
    EXPECT_EQ(after.num_frees, before.num_frees);
    EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
    EXPECT_EQ(after.cached_bytes, before.cached_bytes);
  };
  Block interior = x;
  interior.ptr = static_cast<char*>(x.ptr) + 256;
  expect_invalid(interior, "interior pointer");
  int local = 0;
  expect_invalid(Block{&local, 4, 99, 4}, "foreign pointer");
  Block beyond = y;
  beyond.ptr = static_cast<char*>(y.ptr) + 4096;  // in the arena, in free space
  expect_invalid(beyond, "double free");

  a.free(x);  // cached now
  expect_invalid(x, "[caching allocator] double free");
  const Block again = a.allocate(1024, 1);  // the cached block, under a new id
  EXPECT_EQ(again.ptr, x.ptr);
  expect_invalid(x, "now holds block id " + std::to_string(again.id));
  a.free(again);
  a.free(y);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().active_blocks, 0u);
  EXPECT_NO_THROW(a.free(Block{}));  // a null block is a no-op
}

TEST(CachingAllocator, GuardBytesTurnTheCacheOff) {
  BuddyOptions o = small_buddy();
  o.guard_bytes = 16;
  CachingAllocator a(o, cache_of(64 * kKiB));
  const Block b = a.allocate(1000, 1);
  EXPECT_EQ(b.size, 1024u);  // 1000 + 16 guard bytes
  static_cast<char*>(b.ptr)[1003] = 0;
  try {
    a.free(b);
    ADD_FAILURE() << "overrun not caught";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("guard byte 3"), std::string::npos) << e.what();
  }
  static_cast<unsigned char*>(b.ptr)[1003] = 0xAB;
  a.free(b);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().cached_bytes, 0u);
  EXPECT_EQ(a.buddy().stats().allocated_bytes, 0u);
}

TEST(CachingAllocator, BadOptionsAreRejected) {
  EXPECT_THROW(CachingAllocator(small_buddy(), cache_of(kKiB, 300)), InvalidArgument);
  EXPECT_THROW(CachingAllocator(small_buddy(), cache_of(kKiB, 128 * kKiB)), InvalidArgument);
}

TEST(CachingAllocator, ResetPeakStatsResetsBothLayers) {
  CachingAllocator a(small_buddy(), cache_of(64 * kKiB));
  const Block x = a.allocate(8 * kKiB, 1);
  a.free(x);
  a.reset_peak_stats();
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.peak_allocated_bytes, 0u);
  EXPECT_EQ(s.peak_requested_bytes, 0u);
  EXPECT_EQ(s.peak_active_blocks, 0u);
  EXPECT_EQ(s.peak_reserved_bytes, 8 * kKiB);  // the cached block still holds its granules
  EXPECT_INVARIANTS(a);
}

// Random sizes and free order against a model of what the caller holds; every step checked.
TEST(CachingAllocator, RandomOperationsKeepInvariantsAndStats) {
  CachingAllocator a(small_buddy(), cache_of(8 * kKiB, 4 * kKiB));
  std::mt19937_64 rng(3);
  std::vector<Block> live;
  std::size_t requested = 0;
  std::size_t allocated = 0;
  for (int i = 0; i < 3000; ++i) {
    if (live.empty() || (live.size() < 40 && rng() % 2 == 0)) {
      const std::size_t bytes = 1 + rng() % (6 * kKiB);
      const std::size_t alignment = std::size_t{1} << (rng() % 13);
      const Block b = a.allocate(bytes, alignment);
      EXPECT_EQ(addr(b) % std::max<std::size_t>(alignment, 256), 0u);
      EXPECT_EQ(b.size, (bytes + 255) / 256 * 256);
      requested += bytes;
      allocated += b.size;
      live.push_back(b);
    } else {
      const std::size_t k = rng() % live.size();
      requested -= live[k].requested;
      allocated -= live[k].size;
      a.free(live[k]);
      live[k] = live.back();
      live.pop_back();
    }
    ASSERT_EQ(violations(a), "") << "after step " << i;
    const AllocatorStats s = a.stats();
    ASSERT_EQ(s.requested_bytes, requested);
    ASSERT_EQ(s.allocated_bytes, allocated);
    ASSERT_EQ(s.active_blocks, live.size());
    ASSERT_LE(s.cached_bytes, 8 * kKiB);
  }
  EXPECT_GT(a.stats().num_cache_hits, 0u);
  for (const Block& b : live) a.free(b);
  a.empty_cache();
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().num_merges, a.stats().num_splits);
  EXPECT_EQ(a.stats().reserved_bytes, 0u);
}

// Four threads allocate, fill, verify and free concurrently while a fifth checks invariants.
TEST(CachingAllocator, ConcurrentThreadsKeepBlocksDisjoint) {
  BuddyOptions o;
  o.arena_size = 16 << 20;
  CachingAllocator a(o, cache_of(1 << 20, 64 * kKiB));
  constexpr int kThreads = 4;
  constexpr int kOps = 4000;
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      std::vector<Block> mine;
      for (int i = 0; i < kOps; ++i) {
        if (mine.empty() || rng() % 2 == 0) {
          // Few sizes, so that most allocations are cache hits.
          const std::size_t bytes = 256 << (rng() % 9);
          const Block b = a.allocate(bytes, 256);
          std::memset(b.ptr, t + 1, std::min<std::size_t>(b.requested, 4096));
          mine.push_back(b);
        } else {
          const std::size_t k = rng() % mine.size();
          const Block b = mine[k];
          const auto* p = static_cast<const unsigned char*>(b.ptr);
          for (std::size_t j = 0; j < std::min<std::size_t>(b.requested, 4096); ++j) {
            if (p[j] != t + 1) {
              bad.fetch_add(1);
              break;
            }
          }
          a.free(b);
          mine[k] = mine.back();
          mine.pop_back();
        }
      }
      for (const Block& b : mine) a.free(b);
    });
  }
  std::thread checker([&] {
    while (!done.load()) {
      if (!a.check_invariants().empty()) bad.fetch_add(1000);
      std::this_thread::yield();
    }
  });
  for (std::thread& t : threads) t.join();
  done = true;
  checker.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_INVARIANTS(a);
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.active_blocks, 0u);
  EXPECT_EQ(s.num_allocs, s.num_frees);
  EXPECT_EQ(s.allocated_bytes, 0u);
  EXPECT_GT(s.num_cache_hits, 0u);
  EXPECT_EQ(a.buddy().stats().allocated_bytes, s.cached_bytes);
}

}  // namespace
}  // namespace mpsim::alloc
