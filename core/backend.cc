#include "core/backend.h"

#include <array>
#include <mutex>

#include "core/error.h"

namespace mpsim {

void KernelTable::set(OpId op, KernelFn fn, std::initializer_list<DType> dtypes) {
  Slot& slot = slots_[op.index()];
  slot.fn = fn;
  slot.dtypes = 0;
  for (DType d : dtypes) slot.dtypes |= 1u << static_cast<int>(d);
}

void run_kernel(const KernelTable& table, const OpCall& call) {
  const KernelFn fn = table.kernel(call.op);
  MPSIM_CHECK(fn != nullptr);
  // The views of up to kLocal tensors lie on the stack (no allocation for a call's views);
  // more go to the heap.
  constexpr std::size_t kLocal = 8;
  std::array<TensorView, kLocal> local_in, local_out;
  std::vector<TensorView> heap_in, heap_out;
  auto make_views = [](const std::vector<Tensor>& tensors, std::array<TensorView, kLocal>& local,
                       std::vector<TensorView>& heap) {
    TensorView* views = local.data();
    if (tensors.size() > kLocal) {
      heap.resize(tensors.size());
      views = heap.data();
    }
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const Tensor& t = tensors[i];
      views[i] = TensorView{t.numel() == 0 ? nullptr : t.data_ptr(), t.dtype(), t.sizes().dims(),
                            t.strides()};
    }
    return std::span<const TensorView>(views, tensors.size());
  };
  const std::span<const TensorView> in = make_views(call.inputs, local_in, heap_in);
  const std::span<const TensorView> out = make_views(call.outputs, local_out, heap_out);
  const KernelStatus status = fn(KernelCall{call.op, in, out, call.params, call.precision});
  switch (status) {
    case KernelStatus::Ok:
      return;
    case KernelStatus::IntegerDivisionByZero:
      throw InvalidArgument("[" + std::string(call.op.name()) +
                            "] ZeroDivisionError: integer division by zero");
    case KernelStatus::IndexOutOfRange:
      throw ShapeError("[" + std::string(call.op.name()) +
                       "] index out of range: an index is negative or not smaller than the "
                       "size of the indexed dimension");
  }
}

namespace {
std::array<Backend*, kNumDeviceTypes>& backends() {
  static std::array<Backend*, kNumDeviceTypes> table{};
  return table;
}
}  // namespace

void register_backend(DeviceType type, Backend* backend) {
  MPSIM_CHECK(backends()[static_cast<int>(type)] == nullptr);
  backends()[static_cast<int>(type)] = backend;
}

bool has_backend(DeviceType type) { return backends()[static_cast<int>(type)] != nullptr; }

Backend& backend_for(Device device) {
  Backend* b = backends()[static_cast<int>(device.type())];
  if (b == nullptr) {
    throw DeviceError("[device] no backend for device '" + device.to_string() +
                      "' is available in this build");
  }
  if (device.index() < 0 || device.index() >= b->device_count()) {
    throw DeviceError("[device] invalid device index " + std::to_string(device.index()) + " for " +
                      std::string(device_type_name(device.type())) + " (" +
                      std::to_string(b->device_count()) + " device(s) available)");
  }
  return *b;
}

OpId find_op(std::string_view name) {
  for (int i = 0; i < kNumOps; ++i) {
    if (kOpDefs[i].name == name) return OpId(static_cast<std::uint16_t>(i));
  }
  throw InvalidArgument("[op] unknown op '" + std::string(name) + "'");
}

}  // namespace mpsim
