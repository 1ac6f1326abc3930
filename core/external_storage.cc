#include "core/external_storage.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "allocator/allocator.h"
#include "core/storage.h"

namespace mpsim {
namespace {

// Hands out the one external block it wraps, and releases its owner when Storage frees it. One
// per storage, deleted with it (Storage keeps a plain pointer to its allocator).
class ExternalAllocator final : public alloc::Allocator {
 public:
  ExternalAllocator(void* data, std::size_t nbytes, std::function<void()> release)
      : data_(data), nbytes_(nbytes), release_(std::move(release)) {}

  alloc::Block allocate(std::size_t size, std::size_t /*alignment*/) override {
    MPSIM_CHECK(size == nbytes_);
    return alloc::Block{data_, nbytes_, 1, nbytes_};
  }
  void free(const alloc::Block& /*block*/) override {
    if (release_) std::exchange(release_, nullptr)();
  }
  alloc::AllocatorStats stats() const override { return {}; }
  void reset_peak_stats() override {}
  void set_limit(std::size_t /*bytes*/) override {}
  const char* name() const override { return "external"; }

 private:
  void* data_;
  std::size_t nbytes_;
  std::function<void()> release_;
};

}  // namespace

Tensor from_blob(void* data, const Shape& sizes, const Strides& strides, DType dtype,
                 std::function<void()> release) {
  if (sizes.size() != strides.size()) {
    throw ShapeError("[from_blob] sizes " + sizes.to_string() + " and strides " +
                     to_string(strides) + " differ in length");
  }
  // The bytes the view spans from element 0: (sum of (size - 1) * stride) + 1 elements.
  std::int64_t last = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0 || strides[i] < 0) {
      throw ShapeError("[from_blob] sizes " + sizes.to_string() + " and strides " +
                       to_string(strides) + " must be non-negative");
    }
    if (sizes[i] > 0) last += (sizes[i] - 1) * strides[i];
  }
  const std::size_t item = dtype_size(dtype);
  const std::size_t nbytes = sizes.numel() == 0 ? 0 : static_cast<std::size_t>(last + 1) * item;
  if (nbytes > 0 && (data == nullptr || reinterpret_cast<std::uintptr_t>(data) % item != 0)) {
    throw InvalidArgument("[from_blob] data must be a non-null pointer aligned to the " +
                          std::to_string(item) + "-byte elements of " +
                          std::string(dtype_name(dtype)));
  }
  auto allocator = std::make_unique<ExternalAllocator>(data, nbytes, std::move(release));
  Storage* raw = new Storage(Device::cpu(), *allocator, nbytes);
  // The allocator outlives the storage that frees through it; from here the deleter owns both
  // (shared_ptr calls it if its own allocation fails).
  std::shared_ptr<Storage> storage(raw, [a = allocator.release()](Storage* s) {
    delete s;
    delete a;
  });
  return Tensor(std::move(storage), sizes, strides, 0, dtype);
}

}  // namespace mpsim
