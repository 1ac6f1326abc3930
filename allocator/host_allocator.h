// The cpu device's allocator: 64-byte aligned blocks, with a cache of large freed blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "allocator/allocator.h"

namespace mpsim::alloc {

// Every block is aligned to at least kHostAlignment (one cache line, and one AVX-512 vector),
// so SIMD kernels may use aligned loads on a tensor's first element.
inline constexpr std::size_t kHostAlignment = 64;

// Note [host block cache]
// A fresh multi-megabyte block from the OS costs a page fault per 4 KiB on first touch (for 64 MiB,
// more than the op that writes it: docs/measurements.md),
// and glibc returns such blocks to the OS on free. So blocks of at least kCacheMinBytes are kept on
// free, keyed by their page-rounded size, and handed out again for a request of the same rounded
// size; at most cache_limit bytes stay cached (the oldest are released first). empty_cache()
// releases all. Smaller blocks come from and go back to malloc, which reuses them without faults.
class HostAllocator final : public Allocator {
 public:
  static constexpr std::size_t kCacheMinBytes = std::size_t{1} << 20;
  static constexpr std::size_t kDefaultCacheLimit = std::size_t{2} << 30;

  explicit HostAllocator(std::size_t cache_limit = kDefaultCacheLimit)
      : cache_limit_(cache_limit) {}
  ~HostAllocator() override;

  Block allocate(std::size_t size, std::size_t alignment) override;
  void free(const Block& block) override;
  AllocatorStats stats() const override;
  void reset_peak_stats() override;
  void empty_cache() override;
  void set_limit(std::size_t bytes) override;
  const char* name() const override { return "host"; }
  // Bytes held in the cache (counted in reserved_bytes, not in allocated_bytes).
  std::size_t cached_bytes() const;
  // Fault injection (tests): the `n`-th allocate() from now (1 = the next) fails with an
  // OutOfMemoryError saying "injected", as a refused request would, changing nothing; 0 cancels.
  void fail_allocation(std::int64_t n);

 private:
  void release_oldest_locked(std::size_t bytes_needed);

  mutable std::mutex mu_;
  AllocatorStats stats_;
  std::size_t limit_ = 0;
  std::int64_t fail_countdown_ = 0;  // fail_allocation's: 0 when none is armed
  std::size_t cache_limit_;
  std::size_t cached_ = 0;
  std::uint64_t next_id_ = 1;
  std::uint64_t free_order_ = 0;
  // rounded size -> cached blocks of that size, each with the order it was freed in.
  std::map<std::size_t, std::vector<std::pair<std::uint64_t, void*>>> cache_;
};

// The process-wide host allocator used by the cpu device.
HostAllocator& host_allocator();

}  // namespace mpsim::alloc
