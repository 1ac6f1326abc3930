// A size-class cache in front of the buddy allocator: freed blocks of the common small sizes
// are kept on per-size free lists and handed back on the next allocation of that size without
// touching the buddy tree. See docs/allocator.md ("The cache layer") for the design and the
// measured figures, Note [caching front end] in caching_allocator.cc for the contracts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocator/allocator.h"
#include "allocator/buddy_allocator.h"

namespace mpsim::alloc {

struct CacheOptions {
  // Largest block (a request rounded up to the buddy's min_block) that is cached at free;
  // larger blocks go back to the buddy at once. A multiple of min_block.
  std::size_t max_cached_block = std::size_t{1} << 20;
  // Cap on cached_bytes. A free that would pass it first gives the least recently freed
  // cached blocks back to the buddy; 0 turns the cache off (every call goes to the buddy).
  std::size_t max_cached_bytes = std::size_t{32} << 20;
};

// Thread-safe (one mutex, taken before the buddy's own). A cache hit, allocate or free, is
// O(1): a free-list pop or push and one hash lookup; a miss adds one buddy call, O(log n).
// Blocks, alignment, limits and out-of-memory behave as BuddyAllocator's; ids are this
// allocator's own. With BuddyOptions::guard_bytes set the cache is off, so that the buddy
// checks every block's guard at the size its caller asked for.
class CachingAllocator final : public Allocator {
 public:
  explicit CachingAllocator(BuddyOptions buddy = {}, CacheOptions cache = {});

  Block allocate(std::size_t size, std::size_t alignment) override;
  void free(const Block& block) override;
  // Live-block figures (requested, allocated, active, allocs, frees, their peaks) count the
  // blocks held by callers; cached_* count the cache; reserved, arena, split/merge and OOM
  // figures are the buddy's, which sees cached blocks as allocated.
  AllocatorStats stats() const override;
  void reset_peak_stats() override;
  // Gives every cached block back to the buddy, then has the buddy return its free memory.
  void empty_cache() override;
  void set_limit(std::size_t bytes) override;
  const char* name() const override { return "caching"; }

  // The buddy's invariants, plus: the buddy's live blocks are exactly this allocator's records
  // (blocks held by callers and blocks in the cache, nothing else), every cached block is on
  // the free list of its size and on the age list exactly once, live blocks are on neither,
  // cached_bytes is within the cap, and every stat equals a recount. One line per violation.
  std::vector<std::string> check_invariants() const;

  const BuddyAllocator& buddy() const { return buddy_; }
  const CacheOptions& cache_options() const { return cache_options_; }

 private:
  static constexpr std::uint32_t kNoClass = ~std::uint32_t{0};

  // One block obtained from the buddy, held by a caller (live) or by the cache.
  struct Entry {
    Block inner;                          // as the buddy handed it out (the buddy's id)
    std::uint64_t id = 0;                 // the id the current caller holds; 0 while cached
    std::size_t requested = 0;            // the current caller's size; 0 while cached
    std::uint32_t size_class = kNoClass;  // free-list index, kNoClass above max_cached_block
    bool live = false;
    // While cached: neighbours on its size's free list (most recently freed first) and on
    // the age list (oldest first, the eviction order).
    Entry* class_prev = nullptr;
    Entry* class_next = nullptr;
    Entry* older = nullptr;
    Entry* newer = nullptr;
  };

  void push_cached(Entry& e);
  void unlink_cached(Entry& e);
  // Gives the oldest cached block back to the buddy.
  void evict_oldest();
  void flush();
  void note_alloc(std::size_t size, std::size_t requested);

  BuddyAllocator buddy_;
  const CacheOptions cache_options_;
  const std::size_t min_block_;
  const bool enabled_;

  mutable std::mutex mu_;
  std::unordered_map<std::uintptr_t, Entry> entries_;  // by address; nodes stay put
  std::vector<Entry*> class_head_;                     // one free list per size class
  Entry* oldest_ = nullptr;
  Entry* newest_ = nullptr;
  std::uint64_t next_id_ = 1;
  AllocatorStats stats_;  // live-block and cache figures only; the rest come from buddy_
};

}  // namespace mpsim::alloc
