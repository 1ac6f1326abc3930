// The allocator interface: raw blocks of memory, no knowledge of tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mpsim::alloc {

// For check_invariants(): records a stat that differs from its recount.
inline void compare_stat(std::vector<std::string>& errors, const char* name, std::size_t kept,
                         std::size_t counted) {
  if (kept != counted) {
    errors.push_back(std::string("stat ") + name + " is " + std::to_string(kept) + ", recount " +
                     std::to_string(counted));
  }
}

// A block handed out by an allocator. `size` is the usable size (>= `requested`, the size asked
// for); `id` is unique per allocator for the block's lifetime (traces and misuse checks use it).
struct Block {
  void* ptr = nullptr;
  std::size_t size = 0;
  std::uint64_t id = 0;
  std::size_t requested = 0;
};

// Counters every allocator keeps; "current" and "peak" follow PyTorch's memory_stats names.
struct AllocatorStats {
  std::size_t requested_bytes = 0;  // sum of the sizes asked for, live blocks
  std::size_t allocated_bytes = 0;  // sum of the sizes handed out (rounded), live blocks
  std::size_t reserved_bytes = 0;   // memory held from the OS
  std::size_t peak_requested_bytes = 0;
  std::size_t peak_allocated_bytes = 0;
  std::size_t peak_reserved_bytes = 0;
  std::size_t active_blocks = 0;
  std::size_t peak_active_blocks = 0;
  std::uint64_t num_allocs = 0;
  std::uint64_t num_frees = 0;
  std::uint64_t num_ooms = 0;
  // Set by allocators that split and coalesce blocks (the buddy allocator); 0 elsewhere.
  std::uint64_t num_splits = 0;         // a free block split into two buddies
  std::uint64_t num_merges = 0;         // two free buddies merged into their parent
  std::uint64_t num_alloc_retries = 0;  // over the limit: cache released, allocation retried
  std::size_t num_arenas = 0;           // arenas mapped now
  std::size_t arena_free_bytes = 0;     // arena address space not in any block
  std::size_t largest_free_block = 0;   // longest run of free arena space, in bytes
  // Set by a caching front end (CachingAllocator); 0 elsewhere. Cached blocks are free for the
  // caller but held by the cache for reuse: they count in reserved_bytes, not in requested,
  // allocated or active, and the arena figures above see them as occupied.
  std::size_t cached_bytes = 0;           // bytes of blocks held in the cache
  std::size_t cached_blocks = 0;          // blocks held in the cache
  std::uint64_t num_cache_hits = 0;       // allocations served from the cache
  std::uint64_t num_cache_evictions = 0;  // cached blocks given back to make room under the cap

  // Bytes handed out beyond what was asked for (rounding, alignment, guard bytes).
  std::size_t internal_fragmentation_bytes() const { return allocated_bytes - requested_bytes; }
  // 1 - largest_free_block / arena_free_bytes: 0 when the free space is one run, near 1 when
  // it is scattered into pieces too small for a large request.
  double external_fragmentation() const {
    return arena_free_bytes == 0 ? 0.0
                                 : 1.0 - static_cast<double>(largest_free_block) /
                                             static_cast<double>(arena_free_bytes);
  }
};

// Thread-safe. allocate() throws OutOfMemoryError when the memory cannot be had; a failed call
// changes no state. free() of a block this allocator did not hand out throws InvalidArgument.
class Allocator {
 public:
  Allocator() = default;
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;
  virtual ~Allocator() = default;

  virtual Block allocate(std::size_t size, std::size_t alignment) = 0;
  virtual void free(const Block& block) = 0;
  virtual AllocatorStats stats() const = 0;
  virtual void reset_peak_stats() = 0;
  // Returns cached memory that holds no live block to the OS.
  virtual void empty_cache() {}
  // Caps reserved_bytes; 0 means no cap.
  virtual void set_limit(std::size_t bytes) = 0;
  virtual const char* name() const = 0;
};

}  // namespace mpsim::alloc
