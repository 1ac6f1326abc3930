#include "allocator/host_allocator.h"

#include <algorithm>
#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <string>

#include "base/error.h"

namespace mpsim::alloc {
namespace {

constexpr std::size_t kPage = 4096;
// Note [huge pages]: blocks of at least one 2 MiB huge page are aligned to 2 MiB and advised
// MADV_HUGEPAGE (this machine runs transparent huge pages in "madvise" mode, like most
// distributions), so a tensor of N MiB costs N/2 page faults instead of 256 N, and strided kernels
// (a permute reads 320 rows 16 KiB apart) stop missing the TLB on every element: with 4 KiB pages
// the permute-to-channels-last benchmark varied widely from run to run (docs/measurements.md).
constexpr std::size_t kHugePage = std::size_t{2} << 20;

void* allocate_pages(std::size_t bytes) {
  const std::size_t alignment = bytes >= kHugePage ? kHugePage : kPage;
  // posix_memalign, not aligned_alloc: the size need not be a multiple of 2 MiB.
  void* ptr = nullptr;
  if (posix_memalign(&ptr, alignment, bytes) != 0) return nullptr;
#ifdef MADV_HUGEPAGE
  if (ptr != nullptr && bytes >= kHugePage) madvise(ptr, bytes, MADV_HUGEPAGE);  // advice only
#endif
  return ptr;
}

std::size_t round_up(std::size_t n, std::size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

}  // namespace

HostAllocator::~HostAllocator() { empty_cache(); }

Block HostAllocator::allocate(std::size_t size, std::size_t alignment) {
  alignment = std::max(alignment, kHostAlignment);
  if ((alignment & (alignment - 1)) != 0 || alignment > kPage) {
    throw InvalidArgument("[host allocator] alignment must be a power of two <= 4096, got " +
                          std::to_string(alignment));
  }
  // Cached sizes are whole pages (page-aligned blocks satisfy every allowed alignment); small
  // ones a multiple of the alignment, as aligned_alloc requires. A zero-byte request still gets
  // a distinct block so every live tensor has a unique address.
  if (size > (std::size_t{1} << 62)) {  // rounding up must not wrap; no machine has 4 EiB
    std::lock_guard lock(mu_);
    ++stats_.num_ooms;
    throw OutOfMemoryError("[host allocator] out of memory: a request of " + std::to_string(size) +
                           " bytes is beyond any machine's memory");
  }
  const bool cacheable = size >= kCacheMinBytes;
  const std::size_t rounded =
      cacheable ? round_up(size, kPage) : round_up(std::max<std::size_t>(size, 1), alignment);
  std::unique_lock lock(mu_);
  if (fail_countdown_ > 0 && --fail_countdown_ == 0) {
    ++stats_.num_ooms;
    throw OutOfMemoryError("[host allocator] injected allocation failure (fail_allocation) of " +
                           std::to_string(size) + " bytes");
  }
  if (limit_ != 0 && stats_.allocated_bytes + rounded > limit_) {
    ++stats_.num_ooms;
    throw OutOfMemoryError("[host allocator] out of memory: tried to allocate " +
                           std::to_string(size) + " bytes with " +
                           std::to_string(stats_.allocated_bytes) +
                           " bytes in use and a limit of " + std::to_string(limit_));
  }
  void* ptr = nullptr;
  bool reused = false;
  if (cacheable) {
    auto it = cache_.find(rounded);
    if (it != cache_.end()) {
      ptr = it->second.back().second;
      it->second.pop_back();
      if (it->second.empty()) cache_.erase(it);
      cached_ -= rounded;
      reused = true;
    }
  }
  if (ptr == nullptr) {
    lock.unlock();
    ptr = cacheable ? allocate_pages(rounded) : std::aligned_alloc(alignment, rounded);
    lock.lock();
    if (ptr == nullptr && cached_ > 0) {  // the cache may hold what the OS now refuses
      release_oldest_locked(cached_);
      lock.unlock();
      ptr = cacheable ? allocate_pages(rounded) : std::aligned_alloc(alignment, rounded);
      lock.lock();
    }
    if (ptr == nullptr) {
      ++stats_.num_ooms;
      throw OutOfMemoryError("[host allocator] out of memory: the OS refused " +
                             std::to_string(rounded) + " bytes");
    }
  }
  stats_.requested_bytes += size;
  stats_.allocated_bytes += rounded;
  if (!reused) stats_.reserved_bytes += rounded;
  stats_.active_blocks += 1;
  stats_.num_allocs += 1;
  stats_.peak_requested_bytes = std::max(stats_.peak_requested_bytes, stats_.requested_bytes);
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
  stats_.peak_active_blocks = std::max(stats_.peak_active_blocks, stats_.active_blocks);
  return Block{ptr, rounded, next_id_++, size};
}

void HostAllocator::free(const Block& block) {
  if (block.ptr == nullptr) return;
  std::lock_guard lock(mu_);
  stats_.allocated_bytes -= block.size;
  stats_.requested_bytes -= block.requested;
  stats_.active_blocks -= 1;
  stats_.num_frees += 1;
  if (block.requested >= kCacheMinBytes && block.size <= cache_limit_) {
    if (cached_ + block.size > cache_limit_)
      release_oldest_locked(cached_ + block.size - cache_limit_);
    cache_[block.size].emplace_back(free_order_++, block.ptr);
    cached_ += block.size;
    return;
  }
  std::free(block.ptr);
  stats_.reserved_bytes -= block.size;
}

void HostAllocator::release_oldest_locked(std::size_t bytes_needed) {
  std::size_t released = 0;
  while (released < bytes_needed && !cache_.empty()) {
    // The oldest block is the smallest free order over the buckets' fronts (buckets are few).
    auto oldest = cache_.begin();
    for (auto it = cache_.begin(); it != cache_.end(); ++it) {
      if (it->second.front().first < oldest->second.front().first) oldest = it;
    }
    std::free(oldest->second.front().second);
    oldest->second.erase(oldest->second.begin());
    released += oldest->first;
    cached_ -= oldest->first;
    stats_.reserved_bytes -= oldest->first;
    if (oldest->second.empty()) cache_.erase(oldest);
  }
}

void HostAllocator::empty_cache() {
  std::lock_guard lock(mu_);
  release_oldest_locked(cached_);
}

std::size_t HostAllocator::cached_bytes() const {
  std::lock_guard lock(mu_);
  return cached_;
}

AllocatorStats HostAllocator::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void HostAllocator::reset_peak_stats() {
  std::lock_guard lock(mu_);
  stats_.peak_requested_bytes = stats_.requested_bytes;
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
  stats_.peak_reserved_bytes = stats_.reserved_bytes;
  stats_.peak_active_blocks = stats_.active_blocks;
}

void HostAllocator::fail_allocation(std::int64_t n) {
  std::lock_guard lock(mu_);
  fail_countdown_ = n > 0 ? n : 0;
}

void HostAllocator::set_limit(std::size_t bytes) {
  std::lock_guard lock(mu_);
  limit_ = bytes;
}

HostAllocator& host_allocator() {
  static HostAllocator* instance = new HostAllocator();  // never destroyed: outlives all tensors
  return *instance;
}

}  // namespace mpsim::alloc
