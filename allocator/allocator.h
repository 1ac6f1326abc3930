// The allocator interface: raw blocks of memory, no knowledge of tensors.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpsim::alloc {

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
  std::size_t requested_bytes = 0;       // sum of the sizes asked for, live blocks
  std::size_t allocated_bytes = 0;       // sum of the sizes handed out (rounded), live blocks
  std::size_t reserved_bytes = 0;        // memory held from the OS
  std::size_t peak_requested_bytes = 0;
  std::size_t peak_allocated_bytes = 0;
  std::size_t peak_reserved_bytes = 0;
  std::size_t active_blocks = 0;
  std::size_t peak_active_blocks = 0;
  std::uint64_t num_allocs = 0;
  std::uint64_t num_frees = 0;
  std::uint64_t num_ooms = 0;
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
