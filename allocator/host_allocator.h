// The cpu device's allocator: 64-byte aligned blocks straight from the OS allocator.
#pragma once

#include <atomic>
#include <mutex>

#include "allocator/allocator.h"

namespace mpsim::alloc {

// Every block is aligned to at least kHostAlignment (one cache line, and one AVX-512 vector),
// so SIMD kernels may use aligned loads on a tensor's first element.
inline constexpr std::size_t kHostAlignment = 64;

class HostAllocator final : public Allocator {
 public:
  Block allocate(std::size_t size, std::size_t alignment) override;
  void free(const Block& block) override;
  AllocatorStats stats() const override;
  void reset_peak_stats() override;
  void set_limit(std::size_t bytes) override;
  const char* name() const override { return "host"; }

 private:
  mutable std::mutex mu_;
  AllocatorStats stats_;
  std::size_t limit_ = 0;
  std::uint64_t next_id_ = 1;
};

// The process-wide host allocator used by the cpu device.
HostAllocator& host_allocator();

}  // namespace mpsim::alloc
