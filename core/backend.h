// The backend interface and the op calls it executes (owning tensors). What kernels see is in
// core/kernel_call.h.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "allocator/allocator.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/kernel_call.h"
#include "core/op_list.h"
#include "core/tensor.h"

namespace mpsim {

// One op call as the dispatcher hands it to a backend: owning tensors, so an asynchronous
// backend can keep the buffers alive until its work completes.
struct OpCall {
  OpId op;
  DType dtype;  // the dtype the op computes in (what supports() is asked about)
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  OpParams params = {};  // the op's (core/kernel_call.h); std::monostate for none
  // Stamped by dispatch() from the calling thread's precision() (an mps op runs later, on its
  // queue, with the precision it was called with).
  Precision precision = Precision::Golden;
};

// Runs `call` with the kernel from `table`, synchronously, on the calling thread; maps a
// KernelStatus to an Error. Shared by every backend that executes kernels_simd kernels.
void run_kernel(const KernelTable& table, const OpCall& call);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceType type() const = 0;
  virtual std::string_view name() const = 0;
  virtual int device_count() const { return 1; }
  virtual alloc::Allocator& allocator(int index) = 0;
  virtual bool supports(OpId op, DType dtype) const = 0;
  // Validates nothing (the front end did): runs, or enqueues, the call.
  virtual void execute(OpCall call) = 0;
  // Waits for all queued work; rethrows a failure raised inside it.
  virtual void synchronize() {}
  // The fallback path for a call this backend does not support: runs it with `cpu`'s kernel on
  // this device's (unified) memory once the device is idle. A backend overrides it to observe
  // fallbacks (its profiler); the override must keep this order.
  virtual void execute_fallback(OpCall call, Backend& cpu) {
    synchronize();
    cpu.execute(std::move(call));
  }
  // Called by empty_strided before a tensor of `shape` and `dtype` (`nbytes` of storage) is
  // allocated on this device: throws an Error for what the device cannot hold (a dtype it
  // lacks, a buffer above its maximum length).
  virtual void check_allocation(const Shape& /*shape*/, DType /*dtype*/,
                                std::size_t /*nbytes*/) const {}
  // Called by Tensor::data_ptr for a storage of this device: a host pointer is about to be
  // handed out. A backend may throw an Error for a hazard (strict mode's in-flight writes).
  virtual void check_host_access(const Storage& /*storage*/) const {}
  // Called by from_blob_copy before it reads `nbytes` of host memory at `data`: a device whose
  // memory the host can address may throw an Error for a pointer into memory it freed (strict
  // mode's use after free).
  virtual void check_host_read(const void* /*data*/, std::size_t /*nbytes*/) const {}
};

// Called once per device type from the backend's own file (a static initializer).
void register_backend(DeviceType type, Backend* backend);
// The backend that owns `device`; throws DeviceError when there is none or the index is bad.
Backend& backend_for(Device device);
bool has_backend(DeviceType type);

}  // namespace mpsim
