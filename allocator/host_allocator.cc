#include "allocator/host_allocator.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>

#include "core/error.h"

namespace mpsim::alloc {

Block HostAllocator::allocate(std::size_t size, std::size_t alignment) {
  alignment = std::max(alignment, kHostAlignment);
  if ((alignment & (alignment - 1)) != 0) {
    throw InvalidArgument("[host allocator] alignment must be a power of two, got " +
                          std::to_string(alignment));
  }
  // aligned_alloc needs a size that is a multiple of the alignment; a zero-byte request still
  // gets a distinct block so every live tensor has a unique address.
  const std::size_t rounded = std::max<std::size_t>((size + alignment - 1) / alignment, 1) * alignment;
  {
    std::lock_guard lock(mu_);
    if (limit_ != 0 && stats_.allocated_bytes + rounded > limit_) {
      ++stats_.num_ooms;
      throw OutOfMemoryError("[host allocator] out of memory: tried to allocate " +
                             std::to_string(size) + " bytes with " +
                             std::to_string(stats_.allocated_bytes) + " bytes in use and a limit of " +
                             std::to_string(limit_));
    }
  }
  void* ptr = std::aligned_alloc(alignment, rounded);
  if (ptr == nullptr) {
    std::lock_guard lock(mu_);
    ++stats_.num_ooms;
    throw OutOfMemoryError("[host allocator] out of memory: the OS refused " +
                           std::to_string(rounded) + " bytes");
  }
  std::lock_guard lock(mu_);
  stats_.requested_bytes += size;
  stats_.allocated_bytes += rounded;
  stats_.reserved_bytes += rounded;
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
  std::free(block.ptr);
  std::lock_guard lock(mu_);
  stats_.allocated_bytes -= block.size;
  stats_.reserved_bytes -= block.size;
  stats_.requested_bytes -= block.requested;
  stats_.active_blocks -= 1;
  stats_.num_frees += 1;
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

void HostAllocator::set_limit(std::size_t bytes) {
  std::lock_guard lock(mu_);
  limit_ = bytes;
}

HostAllocator& host_allocator() {
  static HostAllocator* instance = new HostAllocator();  // never destroyed: outlives all tensors
  return *instance;
}

}  // namespace mpsim::alloc
