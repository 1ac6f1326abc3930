#include "allocator/buddy_allocator.h"

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

// A small arena makes every split, merge and granule visible: 256 units of 256 B, committed in
// 4 KiB granules (16 units).
BuddyOptions small_options() {
  BuddyOptions o;
  o.min_block = 256;
  o.arena_size = 64 * kKiB;
  o.commit_granule = 4 * kKiB;
  return o;
}

// Joins the violated invariants into one message; empty when all hold.
std::string violations(const BuddyAllocator& a) {
  std::string out;
  for (const std::string& e : a.check_invariants()) out += e + "\n";
  return out;
}

#define EXPECT_INVARIANTS(a) EXPECT_EQ(violations(a), "")

std::uintptr_t addr(const Block& b) { return reinterpret_cast<std::uintptr_t>(b.ptr); }

TEST(BuddyAllocator, FirstBlockSplitsDownToMinBlockAndMergesBack) {
  BuddyAllocator a(small_options());
  const Block b = a.allocate(1, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(b.size, 256u);
  EXPECT_EQ(b.requested, 1u);
  EXPECT_EQ(addr(b) % (4 * kKiB), 0u);  // the arena base is granule aligned
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.num_splits, 8u);  // 64 KiB -> 32 -> ... -> 256 B: eight halvings
  EXPECT_EQ(s.num_merges, 0u);
  EXPECT_EQ(s.allocated_bytes, 256u);
  EXPECT_EQ(s.requested_bytes, 1u);
  EXPECT_EQ(s.internal_fragmentation_bytes(), 255u);
  EXPECT_EQ(s.reserved_bytes, 4 * kKiB);  // one granule committed
  EXPECT_EQ(s.num_arenas, 1u);
  EXPECT_EQ(s.largest_free_block, 64 * kKiB - 256);
  EXPECT_EQ(s.arena_free_bytes, 64 * kKiB - 256);
  EXPECT_DOUBLE_EQ(s.external_fragmentation(), 0.0);

  a.free(b);
  EXPECT_INVARIANTS(a);
  s = a.stats();
  EXPECT_EQ(s.num_merges, 8u);
  EXPECT_EQ(s.allocated_bytes, 0u);
  EXPECT_EQ(s.largest_free_block, 64 * kKiB);
  EXPECT_EQ(s.reserved_bytes, 4 * kKiB);  // the granule stays cached until empty_cache
}

TEST(BuddyAllocator, UnusedTailStaysFreeAsSmallerBuddies) {
  BuddyAllocator a(small_options());
  // 700 B rounds to 3 units, not to a 4-unit buddy: its tail unit is free for the next block.
  const Block x = a.allocate(700, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(x.size, 768u);
  const Block y = a.allocate(200, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(addr(y), addr(x) + 768);
  // 1000 B (4 units) takes the run [4, 8) right after.
  const Block z = a.allocate(1000, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(addr(z), addr(x) + 1024);
  EXPECT_EQ(z.size, 1024u);
  // Splits: 8 to reach units [0,1)..; the leaves [0,2) [2,4) [4,8) ... exist after the first.
  EXPECT_EQ(a.stats().num_splits, 8u);
  EXPECT_EQ(a.stats().largest_free_block, 64 * kKiB - 2048);

  // Freeing y leaves unit 3 free next to the used [0,3): [2,4) cannot merge yet.
  a.free(y);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().num_merges, 0u);
  a.free(x);  // x was the leaves [0,2) and [2,3): [2,3)+[3,4) -> [2,4), then -> [0,4)
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().num_merges, 2u);
  a.free(z);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().num_merges, a.stats().num_splits);
  EXPECT_EQ(a.stats().largest_free_block, 64 * kKiB);
}

TEST(BuddyAllocator, RunStraddlesBuddyBoundaryAndHoleIsReused) {
  BuddyAllocator a(small_options());
  std::vector<Block> blocks;
  for (int i = 0; i < 4; ++i) {
    blocks.push_back(a.allocate(1024, 1));  // units [0,4) [4,8) [8,12) [12,16)
    EXPECT_INVARIANTS(a);
  }
  const std::uintptr_t base = addr(blocks[0]);
  a.free(blocks[1]);
  EXPECT_INVARIANTS(a);
  a.free(blocks[2]);
  EXPECT_INVARIANTS(a);
  // [4,12) is free but is two buddy blocks [4,8) and [8,12) of different parents: a pure buddy
  // could not place 2 KiB there; a run can.
  const Block big = a.allocate(2048, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(addr(big), base + 1024);
  // The first fit fills the lowest hole: a 256 B block lands after the last 1 KiB block.
  const Block small = a.allocate(256, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(addr(small), base + 4096);
  for (const Block& b : {blocks[0], blocks[3], big, small}) {
    a.free(b);
    EXPECT_INVARIANTS(a);
  }
  EXPECT_EQ(a.stats().active_blocks, 0u);
  EXPECT_EQ(a.stats().largest_free_block, 64 * kKiB);
}

TEST(BuddyAllocator, AlignmentIsHonoured) {
  BuddyAllocator a(small_options());
  const Block first = a.allocate(256, 1);
  const Block aligned = a.allocate(100, 4096);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(addr(aligned), addr(first) + 4096);
  EXPECT_EQ(addr(aligned) % 4096, 0u);
  // The gap before the aligned block stays free: the next small block fills it.
  const Block next = a.allocate(256, 256);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(addr(next), addr(first) + 256);
  const Block page = a.allocate(1, kMaxBuddyAlignment);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(addr(page) % kMaxBuddyAlignment, 0u);
  EXPECT_THROW(a.allocate(1, 3), InvalidArgument);
  EXPECT_THROW(a.allocate(1, 2 * kMaxBuddyAlignment), InvalidArgument);
  EXPECT_INVARIANTS(a);
  for (const Block& b : {first, aligned, next, page}) a.free(b);
  EXPECT_INVARIANTS(a);
}

TEST(BuddyAllocator, ZeroByteRequestsGetDistinctBlocks) {
  BuddyAllocator a(small_options());
  const Block x = a.allocate(0, 1);
  const Block y = a.allocate(0, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_NE(x.ptr, y.ptr);
  EXPECT_EQ(x.size, 256u);
  EXPECT_EQ(a.stats().requested_bytes, 0u);
  a.free(x);
  a.free(y);
  EXPECT_INVARIANTS(a);
}

TEST(BuddyAllocator, RequestAboveArenaGetsDedicatedRegion) {
  BuddyAllocator a(small_options());
  const Block small = a.allocate(256, 1);
  const Block huge = a.allocate(100 * kKiB, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(huge.size, 100 * kKiB);  // rounded up to the 4 KiB granule: already a multiple
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.reserved_bytes, 4 * kKiB + 100 * kKiB);
  EXPECT_EQ(s.num_arenas, 1u);
  std::memset(huge.ptr, 1, huge.size);  // the region is writable end to end
  a.free(huge);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().reserved_bytes, 4 * kKiB);  // dedicated regions are not cached
  EXPECT_EQ(a.stats().peak_reserved_bytes, 104 * kKiB);
  a.free(small);
  EXPECT_INVARIANTS(a);
}

TEST(BuddyAllocator, ArenasGrowAndEmptyCacheReturnsFreeOnes) {
  BuddyAllocator a(small_options());
  const Block x = a.allocate(64 * kKiB, 1);  // fills arena 0
  const Block y = a.allocate(32 * kKiB, 1);  // opens arena 1
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().num_arenas, 2u);
  EXPECT_EQ(a.stats().reserved_bytes, 96 * kKiB);
  EXPECT_EQ(a.stats().arena_free_bytes, 32 * kKiB);
  a.free(x);
  EXPECT_INVARIANTS(a);
  a.empty_cache();
  EXPECT_INVARIANTS(a);
  // Arena 0 held no live block: unmapped. Arena 1 keeps the 8 granules under y.
  EXPECT_EQ(a.stats().num_arenas, 1u);
  EXPECT_EQ(a.stats().reserved_bytes, 32 * kKiB);
  a.free(y);
  a.empty_cache();
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().num_arenas, 0u);
  EXPECT_EQ(a.stats().reserved_bytes, 0u);
  // The allocator starts over cleanly in a reused arena slot.
  const Block z = a.allocate(300, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().num_arenas, 1u);
  a.free(z);
  EXPECT_INVARIANTS(a);
}

TEST(BuddyAllocator, EmptyCacheDecommitsOnlyGranulesWithoutLiveBlocks) {
  BuddyAllocator a(small_options());
  const Block x = a.allocate(8 * kKiB, 1);  // granules 0-1
  const Block y = a.allocate(100, 1);       // granule 2
  const Block z = a.allocate(5 * kKiB, 1);  // granules 2-3 (starts at 8 KiB + 256)
  a.free(x);
  a.free(z);
  EXPECT_EQ(a.stats().reserved_bytes, 16 * kKiB);
  a.empty_cache();
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().reserved_bytes, 4 * kKiB);  // only granule 2, under y
  a.free(y);
  EXPECT_INVARIANTS(a);
}

TEST(BuddyAllocator, OutOfMemoryMessageAndNoStateChange) {
  BuddyOptions o = small_options();
  o.limit = 16 * kKiB;
  BuddyAllocator a(o);
  const Block x = a.allocate(12 * kKiB, 1);
  const AllocatorStats before = a.stats();
  try {
    a.allocate(8 * kKiB, 1);
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("MPS backend out of memory (MPS allocated: 12.00 KiB, other allocations: "
                       "0 bytes, max allowed: 16.00 KiB). Tried to allocate 8.00 KiB"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("needs 8.00 KiB more reserved memory"), std::string::npos) << msg;
  }
  EXPECT_INVARIANTS(a);
  const AllocatorStats after = a.stats();
  EXPECT_EQ(after.num_ooms, before.num_ooms + 1);
  EXPECT_EQ(after.num_alloc_retries, before.num_alloc_retries + 1);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.reserved_bytes, before.reserved_bytes);
  EXPECT_EQ(after.num_allocs, before.num_allocs);
  EXPECT_EQ(after.num_splits, before.num_splits);
  EXPECT_EQ(after.largest_free_block, before.largest_free_block);
  // What still fits under the limit is served.
  const Block y = a.allocate(4 * kKiB, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(addr(y), addr(x) + 12 * kKiB);
  a.free(x);
  a.free(y);
  EXPECT_INVARIANTS(a);
}

TEST(BuddyAllocator, OverLimitReleasesCacheAndRetries) {
  BuddyOptions o = small_options();
  o.limit = 16 * kKiB;
  BuddyAllocator a(o);
  std::vector<Block> b;
  for (int i = 0; i < 4; ++i) b.push_back(a.allocate(4 * kKiB, 1));  // granules 0..3
  a.free(b[0]);
  a.free(b[2]);
  EXPECT_EQ(a.stats().reserved_bytes, 16 * kKiB);  // freed granules are cached
  // 8 KiB needs two adjacent free granules: only [16 KiB, 24 KiB) has them, over the limit
  // until the cached granules 0 and 2 are returned.
  const Block c = a.allocate(8 * kKiB, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(addr(c), addr(b[1]) + 12 * kKiB);
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.num_alloc_retries, 1u);
  EXPECT_EQ(s.num_ooms, 0u);
  EXPECT_EQ(s.reserved_bytes, 16 * kKiB);
  EXPECT_EQ(s.peak_reserved_bytes, 16 * kKiB);
  a.free(b[1]);
  a.free(b[3]);
  a.free(c);
  EXPECT_INVARIANTS(a);
}

TEST(BuddyAllocator, SetLimitBelowReservedStillServesCachedMemory) {
  BuddyAllocator a(small_options());
  const Block x = a.allocate(8 * kKiB, 1);
  a.free(x);
  a.set_limit(4 * kKiB);
  // The 8 KiB cached in granules 0-1 needs no new commit, so it is served.
  const Block y = a.allocate(8 * kKiB, 1);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(y.ptr, x.ptr);
  EXPECT_THROW(a.allocate(256, 1), OutOfMemoryError);  // granule 2 would pass the limit
  a.set_limit(0);
  const Block z = a.allocate(256, 1);
  EXPECT_INVARIANTS(a);
  a.free(y);
  a.free(z);
  EXPECT_INVARIANTS(a);
}

TEST(BuddyAllocator, MisuseIsReportedAndChangesNothing) {
  BuddyAllocator a(small_options());
  const Block x = a.allocate(1024, 1);
  const Block y = a.allocate(1024, 1);
  const AllocatorStats before = a.stats();
  auto expect_invalid = [&](const Block& b, const std::string& words) {
    try {
      a.free(b);
      ADD_FAILURE() << "expected InvalidArgument containing '" << words << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    EXPECT_INVARIANTS(a);
    EXPECT_EQ(a.stats().num_frees, before.num_frees);
    EXPECT_EQ(a.stats().allocated_bytes, before.allocated_bytes);
  };
  Block interior = x;
  interior.ptr = static_cast<char*>(x.ptr) + 256;
  expect_invalid(interior, "interior pointer");
  int local = 0;
  expect_invalid(Block{&local, 4, 99, 4}, "foreign pointer");
  Block beyond = y;
  beyond.ptr = static_cast<char*>(y.ptr) + 4096;  // inside the arena, in free space
  expect_invalid(beyond, "double free");

  a.free(x);
  EXPECT_INVARIANTS(a);
  const AllocatorStats after_free = a.stats();
  try {
    a.free(x);
    ADD_FAILURE() << "double free not caught";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("double free"), std::string::npos) << e.what();
  }
  // The same address handed out again: the stale block is still caught, by its id.
  const Block again = a.allocate(1024, 1);
  EXPECT_EQ(again.ptr, x.ptr);
  try {
    a.free(x);
    ADD_FAILURE() << "stale free not caught";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("now holds block id " + std::to_string(again.id)),
              std::string::npos)
        << e.what();
  }
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().num_frees, after_free.num_frees);
  a.free(again);
  a.free(y);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().active_blocks, 0u);
}

TEST(BuddyAllocator, GuardBytesCatchOverrunAtFree) {
  BuddyOptions o = small_options();
  o.guard_bytes = 16;
  BuddyAllocator a(o);
  const Block b = a.allocate(100, 1);
  EXPECT_EQ(b.size, 256u);
  EXPECT_INVARIANTS(a);
  char* p = static_cast<char*>(b.ptr);
  std::memset(p, 7, 100);  // writing exactly the requested bytes is fine
  const char saved = p[105];
  p[105] = 0;
  try {
    a.free(b);
    FAIL() << "overrun not caught";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("buffer overrun: guard byte 5 after block id"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(a.stats().active_blocks, 1u);  // the failed free changed nothing
  p[105] = saved;
  a.free(b);
  EXPECT_INVARIANTS(a);
}

TEST(BuddyAllocator, BadOptionsAreRejected) {
  BuddyOptions o = small_options();
  o.min_block = 300;
  EXPECT_THROW(BuddyAllocator{o}, InvalidArgument);
  o = small_options();
  o.commit_granule = 128 * kKiB;  // above the arena
  EXPECT_THROW(BuddyAllocator{o}, InvalidArgument);
}

TEST(BuddyAllocator, ResetPeakStats) {
  BuddyAllocator a(small_options());
  const Block x = a.allocate(8 * kKiB, 1);
  const Block y = a.allocate(1000, 1);
  a.free(x);
  EXPECT_EQ(a.stats().peak_allocated_bytes, 8 * kKiB + 1024);
  a.reset_peak_stats();
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.peak_allocated_bytes, 1024u);
  EXPECT_EQ(s.peak_requested_bytes, 1000u);
  EXPECT_EQ(s.peak_active_blocks, 1u);
  EXPECT_EQ(s.peak_reserved_bytes, s.reserved_bytes);
  a.free(y);
  EXPECT_INVARIANTS(a);
}

// Random sizes and free order, invariants after every step, and every block's contents kept
// intact by the blocks around it.
TEST(BuddyAllocator, RandomOperationsKeepInvariants) {
  BuddyOptions o = small_options();
  o.arena_size = 256 * kKiB;
  BuddyAllocator a(o);
  std::mt19937_64 rng(42);
  std::vector<Block> live;
  std::size_t requested = 0;
  for (int step = 0; step < 3000; ++step) {
    if (live.empty() || rng() % 100 < 55) {
      const std::size_t size = std::size_t{1} << (rng() % 17);  // 1 B .. 64 KiB
      const std::size_t bytes = size - rng() % (size / 2 + 1);
      const Block b = a.allocate(bytes, std::size_t{1} << (rng() % 10));
      std::memset(b.ptr, static_cast<int>(b.id & 0xFF), b.requested);
      live.push_back(b);
      requested += bytes;
    } else {
      const std::size_t i = rng() % live.size();
      const Block b = live[i];
      const auto* p = static_cast<const unsigned char*>(b.ptr);
      for (std::size_t k = 0; k < b.requested; k += 97) ASSERT_EQ(p[k], b.id & 0xFF);
      a.free(b);
      live[i] = live.back();
      live.pop_back();
      requested -= b.requested;
    }
    ASSERT_EQ(violations(a), "") << "step " << step;
    ASSERT_EQ(a.stats().requested_bytes, requested);
    if (step % 500 == 499) a.empty_cache();
  }
  for (const Block& b : live) a.free(b);
  EXPECT_INVARIANTS(a);
  EXPECT_EQ(a.stats().num_merges, a.stats().num_splits);
}

// Four threads allocate, fill, verify and free concurrently while a fifth checks invariants.
TEST(BuddyAllocator, ConcurrentThreadsKeepBlocksDisjoint) {
  BuddyOptions o;
  o.arena_size = 16 << 20;
  BuddyAllocator a(o);
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
          const std::size_t bytes = 1 + rng() % (256 * 1024);
          const Block b = a.allocate(bytes, 256);
          std::memset(b.ptr, t + 1, std::min<std::size_t>(b.requested, 4096));
          mine.push_back(b);
        } else {
          const std::size_t i2 = rng() % mine.size();
          const Block b = mine[i2];
          const auto* p = static_cast<const unsigned char*>(b.ptr);
          for (std::size_t k = 0; k < std::min<std::size_t>(b.requested, 4096); ++k) {
            if (p[k] != t + 1) {
              bad.fetch_add(1);
              break;
            }
          }
          a.free(b);
          mine[i2] = mine.back();
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
}

}  // namespace
}  // namespace mpsim::alloc
