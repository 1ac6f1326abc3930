// The mps device's allocator: a buddy system over lazily committed arenas, searched first-fit
// through free-run summaries kept in the buddy tree. See docs/allocator.md for the design and
// the measured figures; Note [buddy runs] in buddy_allocator.cc for the algorithm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocator/allocator.h"

namespace mpsim::alloc {

// The largest alignment allocate() honours: 16 KiB is the page size of Apple silicon, the
// strictest alignment an MPS buffer needs.
inline constexpr std::size_t kMaxBuddyAlignment = 16 * 1024;

struct BuddyOptions {
  // Smallest block, a power of two: requests round up to a multiple of it.
  std::size_t min_block = 256;
  // Address space of one arena, a power of two; requests above it get a dedicated region.
  std::size_t arena_size = std::size_t{1} << 30;
  // Physical memory is committed (and counted in reserved_bytes) in granules of this size, a
  // power of two between 4 KiB and arena_size: 2 MiB is one huge page and the granule CUDA's
  // virtual memory API maps, so the figures compare with an expandable-segment allocator.
  std::size_t commit_granule = std::size_t{2} << 20;
  // Debug mode: this many bytes after each requested size are filled with a pattern on
  // allocate and checked on free, so an overrun is reported at free. 0 disables it.
  std::size_t guard_bytes = 0;
  // Cap on reserved_bytes; 0 means none.
  std::size_t limit = 0;
};

// Thread-safe (one mutex); allocate and free are O(log(arena_size / min_block)) for the block
// search, split and merge, plus O(size / commit_granule / 64) words of commit bookkeeping.
// Blocks are aligned to max(min_block, alignment); alignment must be a power of two no larger
// than kMaxBuddyAlignment.
class BuddyAllocator final : public Allocator {
 public:
  explicit BuddyAllocator(BuddyOptions options = {});
  ~BuddyAllocator() override;

  Block allocate(std::size_t size, std::size_t alignment) override;
  // allocate() without the exception: when the memory cannot be had (after the same release of
  // the free cache and one retry) it returns false and leaves `out` as it was, counting no
  // out-of-memory in num_ooms. With `may_grow` false it also returns false, at once and with
  // no state changed, when the block would raise reserved_bytes (commit a granule, map an
  // arena or a dedicated region). A front end that holds blocks of its own (CachingAllocator)
  // uses it to give those back before memory grows or an error reaches its caller. A bad
  // alignment still throws InvalidArgument.
  bool try_allocate(std::size_t size, std::size_t alignment, bool may_grow, Block& out);
  void free(const Block& block) override;
  AllocatorStats stats() const override;
  void reset_peak_stats() override;
  // Decommits every granule that holds no part of a live block and unmaps arenas that hold no
  // live block.
  void empty_cache() override;
  void set_limit(std::size_t bytes) override;
  const char* name() const override { return "buddy"; }

  // Walks every arena and returns one line per violated invariant (empty when all hold):
  // blocks tile each arena exactly (no overlap, no byte unaccounted for), used blocks tile the
  // live allocations exactly, no split node has two free children (unmerged buddies), every
  // node's free-run summary is right, live blocks lie in committed granules, and every stat
  // equals a recount. O(number of blocks).
  std::vector<std::string> check_invariants() const;

  // Every live block, in address order, as allocate() handed it out (`requested` is the size
  // asked for). O(number of live blocks); a front end's check_invariants compares it with its
  // own records.
  std::vector<Block> live_blocks() const;

  const BuddyOptions& options() const { return options_; }

 private:
  // One node of an arena's buddy tree. A leaf is a free or a used block; a split node has two
  // children at `child` and `child + 1` in nodes_. Run lengths count min_block units.
  struct Node {
    std::uint32_t child = 0;    // 0: leaf (index 0 is never a child)
    std::uint32_t longest = 0;  // longest free run inside the node
    std::uint32_t prefix = 0;   // free run starting at the node's first unit
    std::uint32_t suffix = 0;   // free run ending at the node's last unit
    bool used = false;          // leaves only: part of a live allocation
  };
  struct Arena {
    char* base = nullptr;
    std::uint32_t root = 0;
    std::vector<std::uint64_t> committed;  // one bit per commit granule
    std::size_t committed_granules = 0;
    std::size_t live_blocks = 0;
  };
  // A live allocation. arena < 0 marks a dedicated region of `size` bytes.
  struct Live {
    std::uint64_t id = 0;
    std::size_t size = 0;
    std::size_t requested = 0;
    int arena = -1;
  };
  struct Placement {
    int arena = -1;
    std::size_t offset = 0;      // bytes from the arena base
    std::size_t new_commit = 0;  // bytes of granules the block would newly commit
  };

  bool find_placement(std::size_t units, std::size_t align_units, Placement& out) const;
  std::size_t uncommitted_bytes(const Arena& arena, std::size_t offset, std::size_t bytes) const;
  void commit(Arena& arena, std::size_t offset, std::size_t bytes);
  int add_arena();
  void release_cache();
  // The body of allocate under mu_: false when the memory cannot be had, with `needed` the
  // reserve the request lacks (for the out-of-memory message); the state is then unchanged but
  // for the released cache and num_alloc_retries.
  bool allocate_locked(std::size_t size, std::size_t alignment, bool may_grow, Block& out,
                       std::size_t& needed);
  bool allocate_dedicated(std::size_t size, std::size_t requested, Block& out, std::size_t& needed);
  static void check_alignment(std::size_t alignment);
  [[noreturn]] void throw_oom(std::size_t size, std::size_t needed_reserve);

  std::uint32_t new_children();
  void drop_children(std::uint32_t child);
  void set_leaf(Node& node, bool used, std::uint32_t units);
  void pull_up(Node& node, std::uint32_t half);
  void mark(std::uint32_t index, std::uint32_t lo, std::uint32_t units, std::uint32_t from,
            std::uint32_t to, bool used);
  std::uint32_t first_fit(std::uint32_t index, std::uint32_t lo, std::uint32_t units,
                          std::uint32_t need) const;
  bool leaf_at_is_used(const Arena& arena, std::size_t offset) const;
  void check_node(std::uint32_t index, std::uint32_t lo, std::uint32_t units, int arena,
                  std::vector<std::pair<std::size_t, std::size_t>>& used_runs,
                  std::vector<std::string>& errors) const;
  void note_alloc(std::size_t size, std::size_t requested);

  const BuddyOptions options_;
  const std::uint32_t arena_units_;
  const std::size_t granules_per_arena_;

  mutable std::mutex mu_;
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> free_pairs_;  // recycled child pairs of nodes_
  std::vector<Arena> arenas_;              // an unmapped arena keeps its slot with base null
  std::map<std::uintptr_t, int> arena_by_base_;
  std::unordered_map<std::uintptr_t, Live> live_;
  std::size_t dedicated_bytes_ = 0;
  std::size_t limit_;
  std::uint64_t next_id_ = 1;
  AllocatorStats stats_;
};

}  // namespace mpsim::alloc
