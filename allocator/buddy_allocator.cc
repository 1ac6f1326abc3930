#include "allocator/buddy_allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>
#include <new>

#include "base/error.h"

namespace mpsim::alloc {

// Note [buddy runs]
// Every arena is a binary buddy tree over min_block units: a node is a power-of-two block
// aligned to its size; a leaf is free or used; allocating splits leaves, freeing merges two
// free buddies into their parent at once (so a free region is always its canonical, maximal
// decomposition and no two free buddies stay apart).
//
// A pure buddy system serves a request of s bytes with one block of 2^ceil(log2 s) bytes; on
// the shared traces that rounding alone costs 1.22x-1.31x of the peak requested bytes. Here an
// allocation is instead a *run*: the range [offset, offset + round_up(s, min_block)) at any
// unit offset, held as the O(log n) maximal buddy blocks that tile it. Unused tails are thus
// never handed out, they stay in the tree as smaller free buddies.
//
// To find a run in O(log n), every node keeps three summaries of its free space, in units: the
// longest free run inside it, the free run starting at its first unit and the free run ending
// at its last unit (the classic segment-tree allocator). The leftmost run that fits is found by
// one descent: go left while the left child's longest run fits, else take the run that
// straddles the middle if left.suffix + right.prefix fits, else go right. Marking a run used
// or free touches the O(log n) nodes of its canonical decomposition and their ancestors.
//
// Leftmost first fit keeps live blocks packed at low addresses, which is what keeps the
// committed granules (Note [lazy commit]) few.

// Note [lazy commit]
// An arena is address space (mmap with MAP_NORESERVE): the OS backs a page only when it is
// written. The allocator counts physical memory in commit granules: a granule counts in
// reserved_bytes from the first time a block covers any of it until empty_cache (or the
// release before an out-of-memory retry) finds it holds no live block and returns it to the OS
// (madvise MADV_DONTNEED). Granules stay committed while free in between: they are the cache,
// like the segments of PyTorch's caching allocator; counting by granule rather than by arena
// is what PyTorch's expandable segments do with CUDA's virtual memory API.

namespace {

constexpr unsigned char kGuardByte = 0xAB;

std::string format_bytes(std::size_t bytes) {
  char out[64];
  const double b = static_cast<double>(bytes);
  if (bytes >= (std::size_t{1} << 30)) {
    std::snprintf(out, sizeof out, "%.2f GiB", b / (1 << 30));
  } else if (bytes >= (std::size_t{1} << 20)) {
    std::snprintf(out, sizeof out, "%.2f MiB", b / (1 << 20));
  } else if (bytes >= 1024) {
    std::snprintf(out, sizeof out, "%.2f KiB", b / 1024);
  } else {
    std::snprintf(out, sizeof out, "%zu bytes", bytes);
  }
  return out;
}

bool is_pow2(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }

std::size_t round_up(std::size_t x, std::size_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

std::string hex(const void* p) {
  char out[32];
  std::snprintf(out, sizeof out, "%p", p);
  return out;
}

// Returns `o` when it is usable; throws InvalidArgument naming the bad option otherwise.
const BuddyOptions& validated(const BuddyOptions& o) {
  auto fail = [](const std::string& what) { throw InvalidArgument("[buddy allocator] " + what); };
  if (!is_pow2(o.min_block))
    fail("min_block must be a power of two, got " + std::to_string(o.min_block));
  if (!is_pow2(o.arena_size) || o.arena_size < o.min_block) {
    fail("arena_size must be a power of two >= min_block, got " + std::to_string(o.arena_size));
  }
  // Run lengths are kept in 32-bit unit counts.
  if (o.arena_size / o.min_block > (std::size_t{1} << 31)) {
    fail("arena_size / min_block must be at most 2^31, got " +
         std::to_string(o.arena_size / o.min_block));
  }
  if (!is_pow2(o.commit_granule) || o.commit_granule < 4096 || o.commit_granule > o.arena_size ||
      o.commit_granule < o.min_block) {
    fail("commit_granule must be a power of two in [max(4096, min_block), arena_size], got " +
         std::to_string(o.commit_granule));
  }
  return o;
}

}  // namespace

BuddyAllocator::BuddyAllocator(BuddyOptions options)
    : options_(validated(options)),
      arena_units_(static_cast<std::uint32_t>(options.arena_size / options.min_block)),
      granules_per_arena_(options.arena_size / options.commit_granule),
      limit_(options.limit) {
  nodes_.emplace_back();  // index 0 is never a child, so child == 0 marks a leaf
}

BuddyAllocator::~BuddyAllocator() {
  for (const Arena& arena : arenas_) {
    if (arena.base != nullptr) munmap(arena.base, options_.arena_size);
  }
  for (const auto& [address, live] : live_) {
    if (live.arena < 0) munmap(reinterpret_cast<void*>(address), live.size);
  }
}

std::uint32_t BuddyAllocator::new_children() {
  if (!free_pairs_.empty()) {
    const std::uint32_t child = free_pairs_.back();
    free_pairs_.pop_back();
    return child;
  }
  const auto child = static_cast<std::uint32_t>(nodes_.size());
  nodes_.resize(nodes_.size() + 2);
  return child;
}

void BuddyAllocator::drop_children(std::uint32_t child) {
  for (std::uint32_t c : {child, child + 1}) {
    if (nodes_[c].child != 0) drop_children(nodes_[c].child);
  }
  free_pairs_.push_back(child);
}

void BuddyAllocator::set_leaf(Node& node, bool used, std::uint32_t units) {
  node.child = 0;
  node.used = used;
  const std::uint32_t run = used ? 0 : units;
  node.longest = node.prefix = node.suffix = run;
}

// Recomputes a split node's summaries from its children and merges them when both are free
// leaves, so free buddies never stay apart.
void BuddyAllocator::pull_up(Node& node, std::uint32_t half) {
  const Node& left = nodes_[node.child];
  const Node& right = nodes_[node.child + 1];
  if (left.child == 0 && right.child == 0 && !left.used && !right.used) {
    free_pairs_.push_back(node.child);
    set_leaf(node, false, 2 * half);
    ++stats_.num_merges;
    return;
  }
  node.longest = std::max({left.longest, right.longest, left.suffix + right.prefix});
  node.prefix = left.prefix == half ? half + right.prefix : left.prefix;
  node.suffix = right.suffix == half ? half + left.suffix : right.suffix;
}

// Marks units [from, to) of the node at `index` (covering [lo, lo + units)) used or free. The
// range is entirely free (used) beforehand, so every node it covers whole is a leaf: eager
// merging leaves no split node over a free range, and an allocation's nodes are leaves.
void BuddyAllocator::mark(std::uint32_t index, std::uint32_t lo, std::uint32_t units,
                          std::uint32_t from, std::uint32_t to, bool used) {
  if (from <= lo && lo + units <= to) {
    MPSIM_DCHECK(nodes_[index].child == 0 && nodes_[index].used != used);
    set_leaf(nodes_[index], used, units);
    return;
  }
  if (nodes_[index].child == 0) {
    MPSIM_DCHECK(!nodes_[index].used);
    const std::uint32_t child = new_children();  // may grow nodes_: index, not reference
    set_leaf(nodes_[child], false, units / 2);
    set_leaf(nodes_[child + 1], false, units / 2);
    nodes_[index].child = child;
    ++stats_.num_splits;
  }
  const std::uint32_t half = units / 2;
  const std::uint32_t child = nodes_[index].child;
  if (from < lo + half) mark(child, lo, half, from, to, used);
  if (to > lo + half) mark(child + 1, lo + half, half, from, to, used);
  pull_up(nodes_[index], half);
}

// The first unit of the leftmost free run of `need` units; requires longest >= need.
std::uint32_t BuddyAllocator::first_fit(std::uint32_t index, std::uint32_t lo, std::uint32_t units,
                                        std::uint32_t need) const {
  while (nodes_[index].child != 0) {
    const std::uint32_t half = units / 2;
    const Node& left = nodes_[nodes_[index].child];
    const Node& right = nodes_[nodes_[index].child + 1];
    if (left.longest >= need) {
      index = nodes_[index].child;
    } else if (left.suffix + right.prefix >= need) {
      return lo + half - left.suffix;
    } else {
      index = nodes_[index].child + 1;
      lo += half;
    }
    units = half;
  }
  return lo;
}

std::size_t BuddyAllocator::uncommitted_bytes(const Arena& arena, std::size_t offset,
                                              std::size_t bytes) const {
  const std::size_t g = options_.commit_granule;
  std::size_t missing = 0;
  for (std::size_t i = offset / g; i <= (offset + bytes - 1) / g; ++i) {
    if (!(arena.committed[i / 64] >> (i % 64) & 1)) ++missing;
  }
  return missing * g;
}

void BuddyAllocator::commit(Arena& arena, std::size_t offset, std::size_t bytes) {
  const std::size_t g = options_.commit_granule;
  for (std::size_t i = offset / g; i <= (offset + bytes - 1) / g; ++i) {
    std::uint64_t& word = arena.committed[i / 64];
    const std::uint64_t bit = std::uint64_t{1} << (i % 64);
    if (!(word & bit)) {
      word |= bit;
      ++arena.committed_granules;
      stats_.reserved_bytes += g;
    }
  }
  stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
}

bool BuddyAllocator::find_placement(std::size_t units, std::size_t align_units,
                                    Placement& out) const {
  // Searching for units + align_units - 1 guarantees an aligned start inside the run found.
  const auto need = static_cast<std::uint32_t>(units + align_units - 1);
  for (std::size_t a = 0; a < arenas_.size(); ++a) {
    const Arena& arena = arenas_[a];
    if (arena.base == nullptr || nodes_[arena.root].longest < need) continue;
    const std::size_t start = round_up(first_fit(arena.root, 0, arena_units_, need), align_units);
    out.arena = static_cast<int>(a);
    out.offset = start * options_.min_block;
    out.new_commit = uncommitted_bytes(arena, out.offset, units * options_.min_block);
    return true;
  }
  return false;
}

int BuddyAllocator::add_arena() {
  // Map arena_size + g and trim so the base is aligned to g, the granule or the largest
  // alignment: offsets then carry the alignment of addresses, madvise works on whole granules.
  const std::size_t g = std::max(options_.commit_granule, kMaxBuddyAlignment);
  void* raw = mmap(nullptr, options_.arena_size + g, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return -1;
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t base = round_up(start, g);
  if (base > start) munmap(raw, base - start);
  if (base + options_.arena_size < start + options_.arena_size + g) {
    munmap(reinterpret_cast<void*>(base + options_.arena_size),
           start + options_.arena_size + g - (base + options_.arena_size));
  }
  auto slot = std::find_if(arenas_.begin(), arenas_.end(),
                           [](const Arena& a) { return a.base == nullptr; });
  if (slot == arenas_.end()) {
    arenas_.emplace_back();
    slot = arenas_.end() - 1;
    slot->root = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  slot->base = reinterpret_cast<char*>(base);
  slot->committed.assign((granules_per_arena_ + 63) / 64, 0);
  slot->committed_granules = 0;
  slot->live_blocks = 0;
  set_leaf(nodes_[slot->root], false, arena_units_);
  const int index = static_cast<int>(slot - arenas_.begin());
  arena_by_base_[base] = index;
  ++stats_.num_arenas;
  return index;
}

void BuddyAllocator::release_cache() {
  const std::size_t g = options_.commit_granule;
  for (Arena& arena : arenas_) {
    if (arena.base == nullptr) continue;
    if (arena.live_blocks == 0) {
      MPSIM_CHECK(nodes_[arena.root].child == 0 && !nodes_[arena.root].used);
      munmap(arena.base, options_.arena_size);
      arena_by_base_.erase(reinterpret_cast<std::uintptr_t>(arena.base));
      stats_.reserved_bytes -= arena.committed_granules * g;
      arena.base = nullptr;
      --stats_.num_arenas;
      continue;
    }
    // A granule is kept when any live block overlaps it.
    std::vector<std::uint64_t> keep(arena.committed.size(), 0);
    for (const auto& [address, live] : live_) {
      if (live.arena < 0 || &arenas_[live.arena] != &arena) continue;
      const std::size_t offset = address - reinterpret_cast<std::uintptr_t>(arena.base);
      for (std::size_t i = offset / g; i <= (offset + live.size - 1) / g; ++i) {
        keep[i / 64] |= std::uint64_t{1} << (i % 64);
      }
    }
    for (std::size_t i = 0; i < granules_per_arena_; ++i) {
      const std::uint64_t bit = std::uint64_t{1} << (i % 64);
      if ((arena.committed[i / 64] & bit) && !(keep[i / 64] & bit)) {
        madvise(arena.base + i * g, g, MADV_DONTNEED);
        arena.committed[i / 64] &= ~bit;
        --arena.committed_granules;
        stats_.reserved_bytes -= g;
      }
    }
  }
}

void BuddyAllocator::note_alloc(std::size_t size, std::size_t requested) {
  stats_.requested_bytes += requested;
  stats_.allocated_bytes += size;
  stats_.active_blocks += 1;
  stats_.num_allocs += 1;
  stats_.peak_requested_bytes = std::max(stats_.peak_requested_bytes, stats_.requested_bytes);
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  stats_.peak_active_blocks = std::max(stats_.peak_active_blocks, stats_.active_blocks);
}

void BuddyAllocator::throw_oom(std::size_t size, std::size_t needed_reserve) {
  ++stats_.num_ooms;
  const std::size_t cap = limit_ != 0 ? limit_ : stats_.reserved_bytes + needed_reserve;
  throw OutOfMemoryError(
      "MPS backend out of memory (MPS allocated: " + format_bytes(stats_.allocated_bytes) +
      ", other allocations: " + format_bytes(stats_.reserved_bytes - stats_.allocated_bytes) +
      ", max allowed: " + format_bytes(cap) + "). Tried to allocate " + format_bytes(size) +
      " on the buddy allocator, which needs " + format_bytes(needed_reserve) +
      " more reserved memory after releasing the free cache. Free some blocks or raise the limit "
      "with set_limit (0 lifts it).");
}

bool BuddyAllocator::allocate_dedicated(std::size_t size, std::size_t requested, Block& out,
                                        std::size_t& needed) {
  const std::size_t bytes = round_up(size, options_.commit_granule);
  for (int attempt = 0;; ++attempt) {
    if (limit_ == 0 || stats_.reserved_bytes + bytes <= limit_) break;
    if (attempt == 1) {
      needed = bytes;
      return false;
    }
    release_cache();
    ++stats_.num_alloc_retries;
  }
  void* ptr = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (ptr == MAP_FAILED) {
    needed = bytes;
    return false;
  }
  const std::uint64_t id = next_id_++;
  live_.emplace(reinterpret_cast<std::uintptr_t>(ptr), Live{id, bytes, requested, -1});
  dedicated_bytes_ += bytes;
  stats_.reserved_bytes += bytes;
  stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
  note_alloc(bytes, requested);
  out = Block{ptr, bytes, id, requested};
  return true;
}

void BuddyAllocator::check_alignment(std::size_t alignment) {
  if (!is_pow2(alignment) || alignment > kMaxBuddyAlignment) {
    throw InvalidArgument("[buddy allocator] alignment must be a power of two <= " +
                          std::to_string(kMaxBuddyAlignment) + ", got " +
                          std::to_string(alignment));
  }
}

bool BuddyAllocator::allocate_locked(std::size_t size, std::size_t alignment, bool may_grow,
                                     Block& out, std::size_t& needed) {
  if (size > (std::size_t{1} << 48)) {
    needed = size;
    return false;
  }
  // A zero-byte request still gets a distinct block so every live buffer has its own address.
  const std::size_t bytes =
      round_up(std::max<std::size_t>(size + options_.guard_bytes, 1), options_.min_block);
  if (bytes > options_.arena_size) {
    if (!may_grow) {
      needed = round_up(bytes, options_.commit_granule);
      return false;
    }
    return allocate_dedicated(bytes, size, out, needed);
  }
  const std::size_t units = bytes / options_.min_block;
  const std::size_t align_units = std::max(alignment / options_.min_block, std::size_t{1});
  Placement place;
  for (int attempt = 0;; ++attempt) {
    if (!find_placement(units, align_units, place)) {
      place = Placement{-1, 0, round_up(bytes, options_.commit_granule)};
    }
    if (!may_grow && place.new_commit != 0) {
      needed = place.new_commit;
      return false;
    }
    // A block that commits nothing more always fits, even under a lowered limit.
    if (limit_ == 0 || place.new_commit == 0 ||
        stats_.reserved_bytes + place.new_commit <= limit_) {
      break;
    }
    if (attempt == 1) {
      needed = place.new_commit;
      return false;
    }
    release_cache();
    ++stats_.num_alloc_retries;
  }
  if (place.arena < 0) {
    place.arena = add_arena();
    if (place.arena < 0) {
      needed = options_.arena_size;
      return false;
    }
  }
  Arena& arena = arenas_[place.arena];
  const auto from = static_cast<std::uint32_t>(place.offset / options_.min_block);
  mark(arena.root, 0, arena_units_, from, from + static_cast<std::uint32_t>(units), true);
  commit(arena, place.offset, bytes);
  ++arena.live_blocks;
  char* ptr = arena.base + place.offset;
  const std::uint64_t id = next_id_++;
  live_.emplace(reinterpret_cast<std::uintptr_t>(ptr), Live{id, bytes, size, place.arena});
  note_alloc(bytes, size);
  out = Block{ptr, bytes, id, size};
  return true;
}

Block BuddyAllocator::allocate(std::size_t size, std::size_t alignment) {
  if (alignment == 0) alignment = 1;
  check_alignment(alignment);
  Block block;
  {
    std::lock_guard lock(mu_);
    std::size_t needed = 0;
    if (!allocate_locked(size, alignment, /*may_grow=*/true, block, needed)) {
      throw_oom(size, needed);
    }
  }
  if (options_.guard_bytes != 0) {
    std::memset(static_cast<char*>(block.ptr) + size, kGuardByte, options_.guard_bytes);
  }
  return block;
}

bool BuddyAllocator::try_allocate(std::size_t size, std::size_t alignment, bool may_grow,
                                  Block& out) {
  if (alignment == 0) alignment = 1;
  check_alignment(alignment);
  {
    std::lock_guard lock(mu_);
    std::size_t needed = 0;
    if (!allocate_locked(size, alignment, may_grow, out, needed)) return false;
  }
  if (options_.guard_bytes != 0) {
    std::memset(static_cast<char*>(out.ptr) + size, kGuardByte, options_.guard_bytes);
  }
  return true;
}

std::vector<Block> BuddyAllocator::live_blocks() const {
  std::lock_guard lock(mu_);
  std::vector<Block> out;
  out.reserve(live_.size());
  for (const auto& [address, live] : live_) {
    out.push_back(Block{reinterpret_cast<void*>(address), live.size, live.id, live.requested});
  }
  std::sort(out.begin(), out.end(),
            [](const Block& x, const Block& y) { return std::less<>()(x.ptr, y.ptr); });
  return out;
}

bool BuddyAllocator::leaf_at_is_used(const Arena& arena, std::size_t offset) const {
  std::uint32_t index = arena.root;
  std::uint32_t lo = 0;
  std::uint32_t units = arena_units_;
  const auto unit = static_cast<std::uint32_t>(offset / options_.min_block);
  while (nodes_[index].child != 0) {
    units /= 2;
    if (unit < lo + units) {
      index = nodes_[index].child;
    } else {
      index = nodes_[index].child + 1;
      lo += units;
    }
  }
  return nodes_[index].used;
}

void BuddyAllocator::free(const Block& block) {
  if (block.ptr == nullptr) return;
  const auto address = reinterpret_cast<std::uintptr_t>(block.ptr);
  std::lock_guard lock(mu_);
  const auto it = live_.find(address);
  if (it == live_.end()) {
    const auto arena = arena_by_base_.upper_bound(address);
    if (arena != arena_by_base_.begin() &&
        address - std::prev(arena)->first < options_.arena_size) {
      const Arena& a = arenas_[std::prev(arena)->second];
      if (leaf_at_is_used(a, address - std::prev(arena)->first)) {
        throw InvalidArgument("[buddy allocator] free of an interior pointer " + hex(block.ptr) +
                              " (block id " + std::to_string(block.id) +
                              "): it lies inside a live block but is not its start");
      }
      throw InvalidArgument("[buddy allocator] double free: " + hex(block.ptr) + " (block id " +
                            std::to_string(block.id) + ") is not allocated");
    }
    for (const auto& [start, live] : live_) {
      if (live.arena < 0 && address > start && address < start + live.size) {
        throw InvalidArgument("[buddy allocator] free of an interior pointer " + hex(block.ptr) +
                              " (block id " + std::to_string(block.id) +
                              "): it lies inside a live block but is not its start");
      }
    }
    throw InvalidArgument("[buddy allocator] free of a foreign pointer " + hex(block.ptr) +
                          " (block id " + std::to_string(block.id) +
                          "): this allocator did not hand it out");
  }
  Live& live = it->second;
  if (live.id != block.id || live.size != block.size) {
    throw InvalidArgument("[buddy allocator] double free: block id " + std::to_string(block.id) +
                          " of " + std::to_string(block.size) + " bytes at " + hex(block.ptr) +
                          " was freed; the address now holds block id " + std::to_string(live.id) +
                          " of " + std::to_string(live.size) + " bytes");
  }
  if (options_.guard_bytes != 0) {
    const auto* guard = static_cast<const unsigned char*>(block.ptr) + live.requested;
    for (std::size_t i = 0; i < options_.guard_bytes; ++i) {
      if (guard[i] != kGuardByte) {
        throw InvalidArgument("[buddy allocator] buffer overrun: guard byte " + std::to_string(i) +
                              " after block id " + std::to_string(live.id) + " (" +
                              std::to_string(live.requested) + " bytes requested at " +
                              hex(block.ptr) + ") was overwritten");
      }
    }
  }
  if (live.arena < 0) {
    munmap(block.ptr, live.size);
    dedicated_bytes_ -= live.size;
    stats_.reserved_bytes -= live.size;
  } else {
    Arena& arena = arenas_[live.arena];
    const auto from = static_cast<std::uint32_t>(
        (address - reinterpret_cast<std::uintptr_t>(arena.base)) / options_.min_block);
    const auto units = static_cast<std::uint32_t>(live.size / options_.min_block);
    mark(arena.root, 0, arena_units_, from, from + units, false);
    --arena.live_blocks;
  }
  stats_.requested_bytes -= live.requested;
  stats_.allocated_bytes -= live.size;
  stats_.active_blocks -= 1;
  stats_.num_frees += 1;
  live_.erase(it);
}

AllocatorStats BuddyAllocator::stats() const {
  std::lock_guard lock(mu_);
  AllocatorStats out = stats_;
  std::size_t largest_units = 0;
  for (const Arena& arena : arenas_) {
    if (arena.base != nullptr)
      largest_units = std::max<std::size_t>(largest_units, nodes_[arena.root].longest);
  }
  out.largest_free_block = largest_units * options_.min_block;
  out.arena_free_bytes =
      stats_.num_arenas * options_.arena_size - (stats_.allocated_bytes - dedicated_bytes_);
  return out;
}

void BuddyAllocator::reset_peak_stats() {
  std::lock_guard lock(mu_);
  stats_.peak_requested_bytes = stats_.requested_bytes;
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
  stats_.peak_reserved_bytes = stats_.reserved_bytes;
  stats_.peak_active_blocks = stats_.active_blocks;
}

void BuddyAllocator::empty_cache() {
  std::lock_guard lock(mu_);
  release_cache();
}

void BuddyAllocator::set_limit(std::size_t bytes) {
  std::lock_guard lock(mu_);
  limit_ = bytes;
}

// Checks the subtree at `index` and appends its used leaves, in address order, as unit ranges.
void BuddyAllocator::check_node(std::uint32_t index, std::uint32_t lo, std::uint32_t units,
                                int arena,
                                std::vector<std::pair<std::size_t, std::size_t>>& used_runs,
                                std::vector<std::string>& errors) const {
  const Node& node = nodes_[index];
  auto where = [&] {
    return "arena " + std::to_string(arena) + " block [" + std::to_string(lo) + ", " +
           std::to_string(lo + units) + ") units: ";
  };
  if (node.child == 0) {
    const std::uint32_t run = node.used ? 0 : units;
    if (node.longest != run || node.prefix != run || node.suffix != run) {
      errors.push_back(where() + "leaf summary is wrong");
    }
    if (node.used) used_runs.emplace_back(lo, units);
    return;
  }
  if (units == 1) {
    errors.push_back(where() + "a min_block block is split");
    return;
  }
  const std::uint32_t half = units / 2;
  const Node& left = nodes_[node.child];
  const Node& right = nodes_[node.child + 1];
  if (left.child == 0 && right.child == 0 && !left.used && !right.used) {
    errors.push_back(where() + "two free buddies left unmerged");
  }
  check_node(node.child, lo, half, arena, used_runs, errors);
  check_node(node.child + 1, lo + half, half, arena, used_runs, errors);
  const std::uint32_t longest = std::max({left.longest, right.longest, left.suffix + right.prefix});
  const std::uint32_t prefix = left.prefix == half ? half + right.prefix : left.prefix;
  const std::uint32_t suffix = right.suffix == half ? half + left.suffix : right.suffix;
  if (node.longest != longest || node.prefix != prefix || node.suffix != suffix) {
    errors.push_back(where() + "free-run summary differs from its children's");
  }
}

std::vector<std::string> BuddyAllocator::check_invariants() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> errors;
  const std::size_t u = options_.min_block;
  const std::size_t g = options_.commit_granule;

  // Live allocations per arena, in address order.
  std::vector<std::vector<std::pair<std::size_t, const Live*>>> by_arena(arenas_.size());
  AllocatorStats recount;
  std::size_t dedicated = 0;
  for (const auto& [address, live] : live_) {
    recount.requested_bytes += live.requested;
    recount.allocated_bytes += live.size;
    ++recount.active_blocks;
    if (live.arena < 0) {
      dedicated += live.size;
      continue;
    }
    if (static_cast<std::size_t>(live.arena) >= arenas_.size() ||
        arenas_[live.arena].base == nullptr) {
      errors.push_back("live block id " + std::to_string(live.id) + " names an unmapped arena");
      continue;
    }
    by_arena[live.arena].emplace_back(
        address - reinterpret_cast<std::uintptr_t>(arenas_[live.arena].base), &live);
  }

  std::size_t committed_bytes = 0;
  std::size_t mapped = 0;
  for (std::size_t a = 0; a < arenas_.size(); ++a) {
    const Arena& arena = arenas_[a];
    if (arena.base == nullptr) continue;
    ++mapped;
    std::vector<std::pair<std::size_t, std::size_t>> used_runs;
    check_node(arena.root, 0, arena_units_, static_cast<int>(a), used_runs, errors);
    auto& blocks = by_arena[a];
    std::sort(blocks.begin(), blocks.end());
    if (blocks.size() != arena.live_blocks) {
      errors.push_back("arena " + std::to_string(a) + " counts " +
                       std::to_string(arena.live_blocks) + " live blocks, recount " +
                       std::to_string(blocks.size()));
    }
    // Used leaves, in address order, must tile the live blocks exactly: no overlap, no used
    // byte outside a live block, no live byte in a free block.
    std::size_t run = 0;
    std::size_t previous_end = 0;
    for (const auto& [offset, live] : blocks) {
      if (offset < previous_end) {
        errors.push_back("block id " + std::to_string(live->id) + " overlaps the block before it");
      }
      previous_end = offset + live->size;
      std::size_t at = offset / u;
      const std::size_t end = (offset + live->size) / u;
      while (at < end && run < used_runs.size() && used_runs[run].first == at) {
        at += used_runs[run].second;
        ++run;
      }
      if (at != end || offset % u != 0) {
        errors.push_back("block id " + std::to_string(live->id) +
                         " is not tiled exactly by used buddy blocks");
      }
      for (std::size_t i = offset / g; i <= (offset + live->size - 1) / g; ++i) {
        if (!(arena.committed[i / 64] >> (i % 64) & 1)) {
          errors.push_back("block id " + std::to_string(live->id) + " lies in granule " +
                           std::to_string(i) + ", which is not committed");
        }
      }
    }
    if (run != used_runs.size()) {
      errors.push_back("arena " + std::to_string(a) + " has " +
                       std::to_string(used_runs.size() - run) +
                       " used buddy blocks that belong to no live block");
    }
    std::size_t bits = 0;
    for (std::uint64_t word : arena.committed)
      bits += static_cast<std::size_t>(std::popcount(word));
    if (bits != arena.committed_granules) {
      errors.push_back("arena " + std::to_string(a) +
                       " committed granule count differs from its bitmap");
    }
    committed_bytes += bits * g;
    recount.largest_free_block =
        std::max<std::size_t>(recount.largest_free_block, nodes_[arena.root].longest * u);
  }

  auto compare = [&](const char* name, std::size_t kept, std::size_t counted) {
    compare_stat(errors, name, kept, counted);
  };
  compare("requested_bytes", stats_.requested_bytes, recount.requested_bytes);
  compare("allocated_bytes", stats_.allocated_bytes, recount.allocated_bytes);
  compare("active_blocks", stats_.active_blocks, recount.active_blocks);
  compare("reserved_bytes", stats_.reserved_bytes, committed_bytes + dedicated);
  compare("num_arenas", stats_.num_arenas, mapped);
  compare("num_allocs - num_frees", stats_.num_allocs - stats_.num_frees, recount.active_blocks);
  if (stats_.peak_reserved_bytes < stats_.reserved_bytes ||
      stats_.peak_allocated_bytes < stats_.allocated_bytes ||
      stats_.peak_requested_bytes < stats_.requested_bytes ||
      stats_.peak_active_blocks < stats_.active_blocks) {
    errors.push_back("a peak stat is below its current value");
  }
  return errors;
}

}  // namespace mpsim::alloc
