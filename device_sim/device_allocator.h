// The mps device's allocator: unified memory from a CachingAllocator over the buddy allocator,
// behind the watermark policy of PyTorch's MPS allocator, with optional tracing and fault
// injection.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "allocator/allocator.h"
#include "allocator/caching_allocator.h"
#include "allocator/trace.h"
#include "device_sim/strict.h"

namespace mpsim::mps::detail {

struct WatermarkOptions {
  std::size_t recommended_max_memory = 0;  // the base the ratios multiply
  double high_ratio = 1.7;                 // 0: no cap
  double low_ratio = 1.4;                  // 0: no early collection
};

// Thread-safe. Watermarks apply to reserved memory (what the device holds from the system):
// - above low_ratio x recommended: the cache is emptied before a block that would grow it;
// - above high_ratio x recommended: the allocation fails. Before failing, the queue is drained
//   (`drain`, which completes the commands whose buffers are the pending frees) and the cache
//   emptied, and the allocation retried once; then OutOfMemoryError with PyTorch's MPS message
//   and the allocator stats.
// A failed allocate changes no live-block stat. free() may run on the queue's worker thread.
class DeviceAllocator final : public alloc::Allocator {
 public:
  // `trace_path` non-empty: every allocate/free is recorded there (allocator/trace.h format).
  // `strict` sees every allocate and free while it is watching (Note [strict mode]).
  DeviceAllocator(WatermarkOptions options, const std::string& trace_path,
                  std::function<void()> drain, StrictTracker& strict);

  alloc::Block allocate(std::size_t size, std::size_t alignment) override;
  void free(const alloc::Block& block) override;
  alloc::AllocatorStats stats() const override { return caching_.stats(); }
  void reset_peak_stats() override { caching_.reset_peak_stats(); }
  void empty_cache() override { caching_.empty_cache(); }
  // Caps reserved memory directly (0: no cap), as set_watermark_ratios' high ratio does.
  void set_limit(std::size_t bytes) override { caching_.set_limit(bytes); }
  const char* name() const override { return "mps"; }

  // Throws InvalidArgument unless 0 <= low <= high <= 2, or high == 0 (no cap, any low).
  void set_watermark_ratios(double high, double low);
  double high_ratio() const;
  double low_ratio() const;
  // Allocations that found reserved memory above the low watermark and emptied the cache.
  std::uint64_t low_watermark_collections() const { return collections_.load(); }
  // The n-th allocate from now (1: the next) throws OutOfMemoryError; 0 cancels.
  void fail_allocation(std::int64_t n) { fail_countdown_.store(n); }

 private:
  [[noreturn]] void throw_oom(std::size_t size) const;
  alloc::Block served(const alloc::Block& block);

  alloc::CachingAllocator caching_;
  std::ofstream trace_file_;
  std::unique_ptr<alloc::TracingAllocator> tracing_;
  alloc::Allocator& inner_;  // tracing_ when tracing, else caching_
  const std::function<void()> drain_;
  StrictTracker& strict_;
  const std::size_t recommended_;

  mutable std::mutex mu_;  // guards the ratios
  double high_ratio_;
  double low_ratio_;
  std::atomic<std::size_t> low_bytes_;
  std::atomic<std::uint64_t> collections_{0};
  std::atomic<std::int64_t> fail_countdown_{0};
};

}  // namespace mpsim::mps::detail
