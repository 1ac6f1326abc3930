#include "allocator/caching_allocator.h"

#include <algorithm>
#include <cstdio>

#include "base/error.h"

namespace mpsim::alloc {

// Note [caching front end]
// The buddy allocator (Note [buddy runs]) pays O(log n) node visits per call: a small run in a
// large free leaf splits it down level by level and the free merges every level back, a cost paid
// on every pair (docs/measurements.md). Programs allocate
// the same few sizes over and over (a model's activations come back every step), so the front end
// keeps the blocks it frees, per exact size, and hands one back to the next request of that size:
// the buddy tree is not touched on a hit.
//
// Size classes are exact: class c holds blocks of (c + 1) * min_block bytes, the size the
// buddy gives a request of c * min_block + 1 .. (c + 1) * min_block bytes. A hit therefore hands
// out exactly the block the buddy would have, with no rounding beyond the buddy's own, and
// allocated_bytes means the same with or without the cache. Only blocks up to
// max_cached_block are cached (the latency target is for <= 1 MiB; large blocks are few and
// holding them would pin the most memory); larger ones are recorded and go straight back.
//
// The cache is bounded by max_cached_bytes. A free that would pass the cap first gives the
// least recently freed blocks back to the buddy (the age list), so a size that stops being
// used drains out instead of pinning memory forever. Cached blocks stay allocated in the
// buddy, so reserved_bytes is unchanged by a hit or a cached free; what the cache costs is at
// most the cap in blocks the buddy cannot coalesce, which docs/allocator.md measures on the
// shared traces.
//
// Every block the caller holds has an Entry, keyed by address, whatever its size: the entry
// carries the id this allocator handed out (a reused block gets a fresh id, so a stale Block
// of an earlier holder is caught) and the block as the buddy knows it. The buddy's live blocks
// are thus exactly the entries, which check_invariants proves. Misuse is caught here for
// addresses with an entry (double free of a cached block, stale id) and by the buddy for every
// other address (interior, foreign, free space), which it classifies the same way.
//
// Memory pressure: when the buddy cannot serve a miss within the limit, the cache is given
// back to the buddy and the request retried once before OutOfMemoryError reaches the caller,
// so cached memory never causes an out-of-memory that an empty cache would have avoided.
//
// Locking: mu_ guards the entries, lists and counters and is held across buddy calls, so the
// buddy's state always matches the entries when mu_ is free; the buddy's own mutex is only
// ever taken inside mu_ (one lock order).

namespace {

bool is_pow2(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }

std::string hex(const void* p) {
  char out[32];
  std::snprintf(out, sizeof out, "%p", p);
  return out;
}

// Returns `o` when it fits `buddy`; throws InvalidArgument naming the bad option otherwise.
const CacheOptions& validated(const CacheOptions& o, const BuddyOptions& buddy) {
  if (o.max_cached_block % buddy.min_block != 0 || o.max_cached_block > buddy.arena_size ||
      o.max_cached_block / buddy.min_block > (std::size_t{1} << 20)) {
    throw InvalidArgument(
        "[caching allocator] max_cached_block must be a multiple of min_block, at most "
        "arena_size and at most 2^20 min_blocks, got " +
        std::to_string(o.max_cached_block));
  }
  return o;
}

}  // namespace

CachingAllocator::CachingAllocator(BuddyOptions buddy, CacheOptions cache)
    : buddy_(buddy),
      cache_options_(validated(cache, buddy)),
      min_block_(buddy.min_block),
      enabled_(cache.max_cached_bytes != 0 && cache.max_cached_block != 0 &&
               buddy.guard_bytes == 0) {
  if (enabled_) class_head_.assign(cache_options_.max_cached_block / min_block_, nullptr);
}

void CachingAllocator::note_alloc(std::size_t size, std::size_t requested) {
  stats_.requested_bytes += requested;
  stats_.allocated_bytes += size;
  stats_.active_blocks += 1;
  stats_.num_allocs += 1;
  stats_.peak_requested_bytes = std::max(stats_.peak_requested_bytes, stats_.requested_bytes);
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  stats_.peak_active_blocks = std::max(stats_.peak_active_blocks, stats_.active_blocks);
}

void CachingAllocator::push_cached(Entry& e) {
  Entry*& head = class_head_[e.size_class];
  e.class_prev = nullptr;
  e.class_next = head;
  if (head != nullptr) head->class_prev = &e;
  head = &e;
  e.newer = nullptr;
  e.older = newest_;
  if (newest_ != nullptr) newest_->newer = &e;
  newest_ = &e;
  if (oldest_ == nullptr) oldest_ = &e;
  stats_.cached_bytes += e.inner.size;
  stats_.cached_blocks += 1;
}

void CachingAllocator::unlink_cached(Entry& e) {
  if (e.class_prev != nullptr) {
    e.class_prev->class_next = e.class_next;
  } else {
    class_head_[e.size_class] = e.class_next;
  }
  if (e.class_next != nullptr) e.class_next->class_prev = e.class_prev;
  if (e.older != nullptr) {
    e.older->newer = e.newer;
  } else {
    oldest_ = e.newer;
  }
  if (e.newer != nullptr) {
    e.newer->older = e.older;
  } else {
    newest_ = e.older;
  }
  e.class_prev = e.class_next = e.older = e.newer = nullptr;
  stats_.cached_bytes -= e.inner.size;
  stats_.cached_blocks -= 1;
}

void CachingAllocator::evict_oldest() {
  Entry& e = *oldest_;
  unlink_cached(e);
  const Block inner = e.inner;
  entries_.erase(reinterpret_cast<std::uintptr_t>(inner.ptr));
  buddy_.free(inner);
  stats_.num_cache_evictions += 1;
}

void CachingAllocator::flush() {
  while (oldest_ != nullptr) {
    Entry& e = *oldest_;
    unlink_cached(e);
    const Block inner = e.inner;
    entries_.erase(reinterpret_cast<std::uintptr_t>(inner.ptr));
    buddy_.free(inner);
  }
}

Block CachingAllocator::allocate(std::size_t size, std::size_t alignment) {
  if (!enabled_) return buddy_.allocate(size, alignment);
  if (alignment == 0) alignment = 1;
  if (!is_pow2(alignment) || alignment > kMaxBuddyAlignment) {
    throw InvalidArgument("[caching allocator] alignment must be a power of two <= " +
                          std::to_string(kMaxBuddyAlignment) + ", got " +
                          std::to_string(alignment));
  }
  // The buddy's rounding (guard bytes are 0 whenever the cache is on); the comparison first
  // keeps a huge size from overflowing, it then takes the miss path and the buddy's OOM.
  const std::size_t bytes =
      size <= cache_options_.max_cached_block
          ? (std::max<std::size_t>(size, 1) + min_block_ - 1) / min_block_ * min_block_
          : 0;
  std::lock_guard lock(mu_);
  if (bytes != 0) {
    // Most recently freed first (its memory is likeliest to be in the CPU cache). Every block
    // is min_block aligned; a stricter alignment takes the first cached block that has it.
    Entry* e = class_head_[bytes / min_block_ - 1];
    if (alignment > min_block_) {
      while (e != nullptr && reinterpret_cast<std::uintptr_t>(e->inner.ptr) % alignment != 0) {
        e = e->class_next;
      }
    }
    if (e != nullptr) {
      unlink_cached(*e);
      e->live = true;
      e->id = next_id_++;
      e->requested = size;
      note_alloc(bytes, size);
      stats_.num_cache_hits += 1;
      return Block{e->inner.ptr, bytes, e->id, size};
    }
  }
  // A miss. While blocks are cached, the buddy may only serve it from memory it already
  // holds: a request that would raise reserved_bytes (or fail) first gets the cache back, so
  // the cache never makes memory grow (Note [caching front end]).
  Block inner;
  if (stats_.cached_blocks == 0 ||
      !buddy_.try_allocate(size, alignment, /*may_grow=*/false, inner)) {
    flush();
    inner = buddy_.allocate(size, alignment);  // throws OutOfMemoryError, counted by the buddy
  }
  Entry& e = entries_[reinterpret_cast<std::uintptr_t>(inner.ptr)];
  e.inner = inner;
  e.id = next_id_++;
  e.requested = size;
  e.live = true;
  e.size_class = inner.size <= cache_options_.max_cached_block
                     ? static_cast<std::uint32_t>(inner.size / min_block_ - 1)
                     : kNoClass;
  note_alloc(inner.size, size);
  return Block{inner.ptr, inner.size, e.id, size};
}

void CachingAllocator::free(const Block& block) {
  if (!enabled_) return buddy_.free(block);
  if (block.ptr == nullptr) return;
  std::lock_guard lock(mu_);
  const auto it = entries_.find(reinterpret_cast<std::uintptr_t>(block.ptr));
  if (it == entries_.end()) {
    // No block of ours starts here. Every block the buddy holds has an entry, so the buddy
    // finds none either and throws, naming the misuse (interior, foreign, double free).
    buddy_.free(block);
    MPSIM_CHECK(false && "the buddy freed a block the caching allocator has no entry for");
  }
  Entry& e = it->second;
  if (!e.live) {
    throw InvalidArgument("[caching allocator] double free: " + hex(block.ptr) + " (block id " +
                          std::to_string(block.id) + ") is not allocated");
  }
  if (e.id != block.id || e.inner.size != block.size) {
    throw InvalidArgument("[caching allocator] double free: block id " + std::to_string(block.id) +
                          " of " + std::to_string(block.size) + " bytes at " + hex(block.ptr) +
                          " was freed; the address now holds block id " + std::to_string(e.id) +
                          " of " + std::to_string(e.inner.size) + " bytes");
  }
  stats_.requested_bytes -= e.requested;
  stats_.allocated_bytes -= e.inner.size;
  stats_.active_blocks -= 1;
  stats_.num_frees += 1;
  e.live = false;
  e.id = 0;
  e.requested = 0;
  if (e.size_class != kNoClass && e.inner.size <= cache_options_.max_cached_bytes) {
    while (stats_.cached_bytes + e.inner.size > cache_options_.max_cached_bytes) evict_oldest();
    push_cached(e);
    return;
  }
  const Block inner = e.inner;
  entries_.erase(it);
  buddy_.free(inner);
}

AllocatorStats CachingAllocator::stats() const {
  if (!enabled_) return buddy_.stats();
  std::lock_guard lock(mu_);
  AllocatorStats out = buddy_.stats();
  out.requested_bytes = stats_.requested_bytes;
  out.allocated_bytes = stats_.allocated_bytes;
  out.active_blocks = stats_.active_blocks;
  out.peak_requested_bytes = stats_.peak_requested_bytes;
  out.peak_allocated_bytes = stats_.peak_allocated_bytes;
  out.peak_active_blocks = stats_.peak_active_blocks;
  out.num_allocs = stats_.num_allocs;
  out.num_frees = stats_.num_frees;
  out.cached_bytes = stats_.cached_bytes;
  out.cached_blocks = stats_.cached_blocks;
  out.num_cache_hits = stats_.num_cache_hits;
  out.num_cache_evictions = stats_.num_cache_evictions;
  return out;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard lock(mu_);
  stats_.peak_requested_bytes = stats_.requested_bytes;
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
  stats_.peak_active_blocks = stats_.active_blocks;
  buddy_.reset_peak_stats();
}

void CachingAllocator::empty_cache() {
  std::lock_guard lock(mu_);
  flush();
  buddy_.empty_cache();
}

void CachingAllocator::set_limit(std::size_t bytes) { buddy_.set_limit(bytes); }

std::vector<std::string> CachingAllocator::check_invariants() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> errors;
  for (const std::string& e : buddy_.check_invariants()) errors.push_back("buddy: " + e);
  if (!enabled_) return errors;

  // The buddy's live blocks are exactly the entries' blocks.
  const std::vector<Block> held = buddy_.live_blocks();
  if (held.size() != entries_.size()) {
    errors.push_back("the buddy holds " + std::to_string(held.size()) + " blocks, the cache has " +
                     std::to_string(entries_.size()) + " entries");
  }
  for (const Block& b : held) {
    const auto it = entries_.find(reinterpret_cast<std::uintptr_t>(b.ptr));
    if (it == entries_.end()) {
      errors.push_back("buddy block id " + std::to_string(b.id) + " at " + hex(b.ptr) +
                       " has no entry");
    } else if (it->second.inner.id != b.id || it->second.inner.size != b.size) {
      errors.push_back("the entry at " + hex(b.ptr) + " differs from the buddy's block id " +
                       std::to_string(b.id));
    }
  }

  // Recount the stats; every entry's class follows from its size.
  AllocatorStats recount;
  for (const auto& [address, e] : entries_) {
    if (reinterpret_cast<std::uintptr_t>(e.inner.ptr) != address) {
      errors.push_back("the entry at " + hex(reinterpret_cast<void*>(address)) +
                       " is keyed by the wrong address");
    }
    const std::uint32_t size_class = e.inner.size <= cache_options_.max_cached_block
                                         ? static_cast<std::uint32_t>(e.inner.size / min_block_ - 1)
                                         : kNoClass;
    if (e.size_class != size_class) {
      errors.push_back("the entry at " + hex(e.inner.ptr) + " has the wrong size class");
    }
    if (e.live) {
      recount.requested_bytes += e.requested;
      recount.allocated_bytes += e.inner.size;
      recount.active_blocks += 1;
      if (e.id == 0 || e.id >= next_id_) {
        errors.push_back("live block at " + hex(e.inner.ptr) + " has an id never handed out");
      }
    } else {
      recount.cached_bytes += e.inner.size;
      recount.cached_blocks += 1;
      if (e.size_class == kNoClass) {
        errors.push_back("a block above max_cached_block is cached at " + hex(e.inner.ptr));
      }
    }
  }

  // Every cached entry is on its size's list once and on the age list once; live ones on
  // neither. Lists are walked with a bound so a cycle shows as an error, not a hang.
  std::size_t on_class_lists = 0;
  for (std::size_t c = 0; c < class_head_.size(); ++c) {
    const Entry* prev = nullptr;
    for (const Entry* e = class_head_[c]; e != nullptr; prev = e, e = e->class_next) {
      if (++on_class_lists > entries_.size()) break;
      if (e->live || e->size_class != c || e->class_prev != prev) {
        errors.push_back("free list " + std::to_string(c) +
                         " holds a live, missized or "
                         "mislinked block at " +
                         hex(e->inner.ptr));
      }
    }
  }
  std::size_t on_age_list = 0;
  const Entry* older = nullptr;
  for (const Entry* e = oldest_; e != nullptr; older = e, e = e->newer) {
    if (++on_age_list > entries_.size()) break;
    if (e->live || e->older != older) {
      errors.push_back("the age list holds a live or mislinked block at " + hex(e->inner.ptr));
    }
  }
  if (older != newest_) errors.push_back("the age list does not end at its newest block");
  if (on_class_lists != recount.cached_blocks || on_age_list != recount.cached_blocks) {
    errors.push_back(std::to_string(recount.cached_blocks) + " blocks are cached, " +
                     std::to_string(on_class_lists) + " are on free lists and " +
                     std::to_string(on_age_list) + " on the age list");
  }
  if (stats_.cached_bytes > cache_options_.max_cached_bytes) {
    errors.push_back("cached_bytes " + std::to_string(stats_.cached_bytes) + " exceeds the cap " +
                     std::to_string(cache_options_.max_cached_bytes));
  }

  auto compare = [&](const char* name, std::size_t kept, std::size_t counted) {
    compare_stat(errors, name, kept, counted);
  };
  compare("requested_bytes", stats_.requested_bytes, recount.requested_bytes);
  compare("allocated_bytes", stats_.allocated_bytes, recount.allocated_bytes);
  compare("active_blocks", stats_.active_blocks, recount.active_blocks);
  compare("cached_bytes", stats_.cached_bytes, recount.cached_bytes);
  compare("cached_blocks", stats_.cached_blocks, recount.cached_blocks);
  compare("num_allocs - num_frees", stats_.num_allocs - stats_.num_frees, recount.active_blocks);
  if (stats_.peak_allocated_bytes < stats_.allocated_bytes ||
      stats_.peak_requested_bytes < stats_.requested_bytes ||
      stats_.peak_active_blocks < stats_.active_blocks) {
    errors.push_back("a peak stat is below its current value");
  }
  return errors;
}

}  // namespace mpsim::alloc
