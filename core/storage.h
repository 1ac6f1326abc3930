// Storage: a ref-counted block of device memory that tensors view.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "allocator/allocator.h"
#include "core/device.h"

namespace mpsim {

// Owns one allocator block for its lifetime; tensors share it through std::shared_ptr.
// Thread-compatible: the bytes are the user's to synchronize, the object itself is immutable.
class Storage {
 public:
  // Allocates `nbytes` (>= 0) from `allocator`; throws OutOfMemoryError.
  Storage(Device device, alloc::Allocator& allocator, std::size_t nbytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return block_.ptr; }
  std::size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  // Storages alive in the process: tests use it to prove that no failed call leaks.
  static std::int64_t live_count();

 private:
  Device device_;
  alloc::Allocator* allocator_;
  alloc::Block block_;
  std::size_t nbytes_;
};

}  // namespace mpsim
