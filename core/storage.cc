#include "core/storage.h"

#include <atomic>

#include "allocator/host_allocator.h"

namespace mpsim {
namespace {
std::atomic<std::int64_t> g_live_storages{0};
}  // namespace

Storage::Storage(Device device, alloc::Allocator& allocator, std::size_t nbytes)
    : device_(device),
      allocator_(&allocator),
      block_(allocator.allocate(nbytes, alloc::kHostAlignment)),
      nbytes_(nbytes) {
  g_live_storages.fetch_add(1, std::memory_order_relaxed);
}

Storage::~Storage() {
  allocator_->free(block_);
  g_live_storages.fetch_sub(1, std::memory_order_relaxed);
}

std::int64_t Storage::live_count() { return g_live_storages.load(std::memory_order_relaxed); }

}  // namespace mpsim
