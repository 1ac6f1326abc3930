// Peer mallocs behind alloc::Allocator for `mpsim alloc-replay` (alloc_peers.cc): glibc malloc,
// and jemalloc, mimalloc and tbbmalloc loaded at run time with dlopen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "allocator/allocator.h"
#include "core/error.h"

namespace mpsim::tools {

// The process's resident set in bytes (/proc/self/statm).
std::size_t resident_bytes();

// A peer malloc behind the Allocator interface. It has no common statistics API, so reserved
// memory is measured the same way for every peer: when `touch` is on, allocate() writes one
// byte per page of each block (so the pages the peer hands out become resident) and samples the
// process's resident set after every allocate and free; reserved_bytes is the resident set over
// the baseline taken at reset_peak_stats(), peak_reserved_bytes its peak. Timed passes run with
// touch off.
class PeerAllocator final : public alloc::Allocator {
 public:
  using AlignedMalloc = void* (*)(std::size_t alignment, std::size_t size);
  using Free = void (*)(void*);

  PeerAllocator(const char* name, AlignedMalloc allocate, Free release)
      : name_(name), allocate_(allocate), free_(release) {}

  void set_touch(bool touch) { touch_ = touch; }

  alloc::Block allocate(std::size_t size, std::size_t alignment) override {
    const std::size_t bytes =
        std::max<std::size_t>((size + alignment - 1) / alignment, 1) * alignment;
    void* ptr = allocate_(alignment, bytes);
    if (ptr == nullptr) throw OutOfMemoryError(std::string("[") + name_ + "] returned null");
    std::lock_guard lock(mu_);
    stats_.requested_bytes += size;
    stats_.allocated_bytes += bytes;
    stats_.active_blocks += 1;
    stats_.num_allocs += 1;
    if (touch_) {
      for (std::size_t i = 0; i < bytes; i += 4096) static_cast<volatile char*>(ptr)[i] = 1;
      sample_resident();
    }
    return alloc::Block{ptr, bytes, next_id_++, size};
  }
  void free(const alloc::Block& block) override {
    free_(block.ptr);
    std::lock_guard lock(mu_);
    stats_.requested_bytes -= block.requested;
    stats_.allocated_bytes -= block.size;
    stats_.active_blocks -= 1;
    stats_.num_frees += 1;
    if (touch_) sample_resident();
  }
  alloc::AllocatorStats stats() const override {
    std::lock_guard lock(mu_);
    return stats_;
  }
  void reset_peak_stats() override {
    std::lock_guard lock(mu_);
    baseline_ = resident_bytes();
    stats_.reserved_bytes = 0;
    stats_.peak_reserved_bytes = 0;
  }
  void set_limit(std::size_t) override {}
  const char* name() const override { return name_; }

 private:
  // Called with mu_ held.
  void sample_resident() {
    const std::size_t rss = resident_bytes();
    stats_.reserved_bytes = rss > baseline_ ? rss - baseline_ : 0;
    stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
  }

  const char* name_;
  AlignedMalloc allocate_;
  Free free_;
  bool touch_ = false;
  std::size_t baseline_ = 0;
  mutable std::mutex mu_;
  alloc::AllocatorStats stats_;
  std::uint64_t next_id_ = 1;
};

// Loaded peer entry points; the handles stay open for the life of the process because blocks
// may outlive any scope here.
struct PeerFunctions {
  PeerAllocator::AlignedMalloc allocate = nullptr;
  PeerAllocator::Free release = nullptr;
};

// Loads the peer `name` (malloc, jemalloc, mimalloc, tbbmalloc) into `out`; false with `error`
// set when its library is not installed.
bool load_peer(const std::string& name, PeerFunctions& out, std::string& error);

}  // namespace mpsim::tools
