// The backend interface, the kernel table a backend fills, and the views kernels receive.
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
#include "core/op_list.h"
#include "core/scalar.h"
#include "core/tensor.h"

namespace mpsim {

// Op attributes by name (alpha, rounding_mode, approximate, ...): the generic form lets the CLI
// and the Python module pass `k=v` pairs straight through.
using AttrValue = std::variant<Scalar, std::string, IntList>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> items) : items_(items) {}
  Attrs& set(std::string name, AttrValue value);
  bool has(std::string_view name) const { return find(name) != nullptr; }
  const AttrValue* find(std::string_view name) const;
  Scalar scalar(std::string_view name, Scalar fallback) const;
  std::string_view str(std::string_view name, std::string_view fallback) const;
  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, AttrValue>> items_;
};

// A plain strided view: what a kernel sees of a tensor. Strides are in elements. `data` points
// at the first element (storage offset applied). Valid for the duration of one kernel call.
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::Float32;
  std::span<const std::int64_t> sizes;
  std::span<const std::int64_t> strides;

  std::int64_t numel() const {
    std::int64_t n = 1;
    for (std::int64_t s : sizes) n *= s;
    return n;
  }
  template <class T>
  T* ptr() const {
    return static_cast<T*>(data);
  }
};

// What a kernel may report instead of throwing (kernels and TBB bodies never throw).
enum class KernelStatus : std::uint8_t {
  Ok,
  IntegerDivisionByZero,
  IndexOutOfRange,  // an index operand held a value outside the indexed dim (nothing read there)
};

// One kernel invocation. Inputs have already been validated, promoted to the op's compute
// dtype and broadcast (expanded) to the output's sizes by the op front end, unless the op's
// family says otherwise (Copy converts between dtypes; Where's condition is bool).
struct KernelCall {
  OpId op;
  std::span<const TensorView> inputs;
  std::span<const TensorView> outputs;
  const Attrs& attrs;
};

using KernelFn = KernelStatus (*)(const KernelCall&);

// A backend's kernels, one slot per op of the op list; an empty slot (or a dtype missing from
// its mask) means "unsupported" and sends the call to the fallback path.
class KernelTable {
 public:
  void set(OpId op, KernelFn fn, std::initializer_list<DType> dtypes);
  KernelFn kernel(OpId op) const { return slots_[op.index()].fn; }
  bool supports(OpId op, DType dtype) const {
    const Slot& s = slots_[op.index()];
    return s.fn != nullptr && (s.dtypes >> static_cast<int>(dtype) & 1u) != 0;
  }
  // Removes an op (e.g. MPSIM_MPS_DISABLE_OPS) so calls take the fallback path.
  void clear(OpId op) { slots_[op.index()] = Slot{}; }

 private:
  struct Slot {
    KernelFn fn = nullptr;
    std::uint32_t dtypes = 0;
  };
  std::array<Slot, kNumOps> slots_{};
};

inline constexpr std::initializer_list<DType> kAllDTypes = {
    DType::Bool,    DType::UInt8,    DType::Int32,   DType::Int64,
    DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
inline constexpr std::initializer_list<DType> kNumericDTypes = {
    DType::UInt8,    DType::Int32,   DType::Int64,  DType::Float16,
    DType::BFloat16, DType::Float32, DType::Float64};
inline constexpr std::initializer_list<DType> kFloatDTypes = {DType::Float16, DType::BFloat16,
                                                              DType::Float32, DType::Float64};

// One op call as the dispatcher hands it to a backend: owning tensors, so an asynchronous
// backend can keep the buffers alive until its work completes.
struct OpCall {
  OpId op;
  DType dtype;  // the dtype the op computes in (what supports() is asked about)
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  Attrs attrs;
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
