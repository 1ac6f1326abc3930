#include "device_sim/device_allocator.h"

#include <cstdio>
#include <utility>

#include "core/error.h"

namespace mpsim::mps::detail {
namespace {

std::string format_bytes(std::size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.2f %s", v, units[u]);
  return buf;
}

std::size_t scaled(std::size_t base, double ratio) {
  return static_cast<std::size_t>(static_cast<double>(base) * ratio);
}

void check_ratios(double high, double low) {
  if (!(high >= 0 && high <= 2)) {
    throw InvalidArgument("[set_watermark_ratios] invalid high watermark ratio " +
                          std::to_string(high) + ": expected a value in [0, 2]");
  }
  if (!(low >= 0 && low <= 2) || (high != 0 && low > high)) {
    throw InvalidArgument("[set_watermark_ratios] invalid low watermark ratio " +
                          std::to_string(low) + ": expected 0 <= low <= high (" +
                          std::to_string(high) + ") <= 2");
  }
}

}  // namespace

DeviceAllocator::DeviceAllocator(WatermarkOptions options, const std::string& trace_path,
                                 std::function<void()> drain, StrictTracker& strict)
    : caching_(
          alloc::BuddyOptions{.limit = scaled(options.recommended_max_memory, options.high_ratio)}),
      inner_([&]() -> alloc::Allocator& {
        if (trace_path.empty()) return caching_;
        trace_file_.open(trace_path);
        if (!trace_file_) {
          std::fprintf(stderr,
                       "mpsim warning: MPSIM_ALLOC_TRACE='%s' cannot be written; not tracing\n",
                       trace_path.c_str());
          return caching_;
        }
        tracing_ = std::make_unique<alloc::TracingAllocator>(caching_, trace_file_);
        return *tracing_;
      }()),
      drain_(std::move(drain)),
      strict_(strict),
      recommended_(options.recommended_max_memory),
      high_ratio_(options.high_ratio),
      low_ratio_(options.low_ratio),
      low_bytes_(scaled(options.recommended_max_memory, options.low_ratio)) {}

void DeviceAllocator::set_watermark_ratios(double high, double low) {
  check_ratios(high, low);
  std::lock_guard lock(mu_);
  high_ratio_ = high;
  low_ratio_ = low;
  caching_.set_limit(scaled(recommended_, high));
  low_bytes_.store(scaled(recommended_, low));
}

double DeviceAllocator::high_ratio() const {
  std::lock_guard lock(mu_);
  return high_ratio_;
}

double DeviceAllocator::low_ratio() const {
  std::lock_guard lock(mu_);
  return low_ratio_;
}

alloc::Block DeviceAllocator::allocate(std::size_t size, std::size_t alignment) {
  if (fail_countdown_.load(std::memory_order_relaxed) > 0 && fail_countdown_.fetch_sub(1) == 1) {
    throw OutOfMemoryError("[mps] injected allocation failure (mps::fail_allocation) of " +
                           format_bytes(size));
  }
  const std::size_t low = low_bytes_.load(std::memory_order_relaxed);
  // Emptying the cache may unmap a block a queued command still reads (Note [strict mode]).
  if (low != 0 && !(strict_.watching() && strict_.has_freed_in_flight())) {
    const alloc::AllocatorStats s = caching_.stats();
    if (s.reserved_bytes + size > low &&
        (s.cached_bytes > 0 || s.reserved_bytes > s.allocated_bytes)) {
      caching_.empty_cache();
      collections_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  try {
    return served(inner_.allocate(size, alignment));
  } catch (const OutOfMemoryError&) {
  }
  // Blocks the queue's commands still hold come back as those commands complete.
  drain_();
  caching_.empty_cache();
  try {
    return served(inner_.allocate(size, alignment));
  } catch (const OutOfMemoryError&) {
    throw_oom(size);
  }
}

alloc::Block DeviceAllocator::served(const alloc::Block& block) {
  if (strict_.watching()) strict_.on_allocate(block);
  return block;
}

void DeviceAllocator::free(const alloc::Block& block) {
  if (strict_.watching()) strict_.on_free(block);
  inner_.free(block);
}

void DeviceAllocator::throw_oom(std::size_t size) const {
  const alloc::AllocatorStats s = caching_.stats();
  const double high = high_ratio();
  throw OutOfMemoryError(
      "[mps] MPS backend out of memory (MPS allocated: " + format_bytes(s.allocated_bytes) +
      ", other allocations: " + format_bytes(s.reserved_bytes - s.allocated_bytes) +
      ", max allowed: " + format_bytes(scaled(recommended_, high)) + "). Tried to allocate " +
      format_bytes(size) + " (" + std::to_string(size) +
      " bytes) on shared pool. Use MPSIM_MPS_HIGH_WATERMARK_RATIO=0.0 (or "
      "mps::set_per_process_memory_fraction(0)) to disable upper limit for memory allocations "
      "(may cause system failure). Stats: allocated " +
      std::to_string(s.allocated_bytes) + " B, reserved " + std::to_string(s.reserved_bytes) +
      " B, peak reserved " + std::to_string(s.peak_reserved_bytes) + " B, active blocks " +
      std::to_string(s.active_blocks) + ", cached " + std::to_string(s.cached_bytes) +
      " B, largest free block " + std::to_string(s.largest_free_block) + " B, OOMs " +
      std::to_string(s.num_ooms));
}

}  // namespace mpsim::mps::detail
