// DLPack exchange (zero-copy, both ways) with torch, NumPy and any __dlpack__ producer.
//
// Note [DLPack and the mps device]
// The simulated mps device keeps its tensors in unified (host) memory, as Apple GPUs do. Its
// tensors are exported as kDLCPU after the device queue has drained (__dlpack__ synchronizes),
// so a consumer reads finished values through the same memory. Imports are always cpu tensors.
// Bool tensors carry DLPack 0.8's kDLBool code (6, 8 bits): consumers of DLPack 0.6 (torch
// 1.13, NumPy 1.24) reject them, as they reject their own bool tensors.
#include <Python.h>
#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/external_storage.h"
#include "python/src/common.h"

namespace mpsim::python {
namespace {

using namespace pybind11::literals;

constexpr std::uint8_t kDLBoolCode = 6;  // DLPack >= 0.8; the installed header is 0.6
constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";

DLDataType to_dl_dtype(DType dtype) {
  const auto bits = static_cast<std::uint8_t>(dtype_size(dtype) * 8);
  switch (dtype) {
    case DType::Bool:
      return {kDLBoolCode, 8, 1};
    case DType::UInt8:
      return {kDLUInt, bits, 1};
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
      return {kDLInt, bits, 1};
    case DType::BFloat16:
      return {kDLBfloat, bits, 1};
    case DType::Float16:
    case DType::Float32:
    case DType::Float64:
      return {kDLFloat, bits, 1};
    case DType::Complex32:
    case DType::Complex64:
    case DType::Complex128:
      return {kDLComplex, bits, 1};
  }
  __builtin_unreachable();
}

DType from_dl_dtype(DLDataType t) {
  if (t.lanes == 1) {
    if (t.code == kDLBoolCode && t.bits == 8) return DType::Bool;
    if (t.code == kDLUInt && t.bits == 8) return DType::UInt8;
    if (t.code == kDLInt && t.bits == 8) return DType::Int8;
    if (t.code == kDLInt && t.bits == 16) return DType::Int16;
    if (t.code == kDLInt && t.bits == 32) return DType::Int32;
    if (t.code == kDLInt && t.bits == 64) return DType::Int64;
    if (t.code == kDLBfloat && t.bits == 16) return DType::BFloat16;
    if (t.code == kDLFloat && t.bits == 16) return DType::Float16;
    if (t.code == kDLFloat && t.bits == 32) return DType::Float32;
    if (t.code == kDLFloat && t.bits == 64) return DType::Float64;
    if (t.code == kDLComplex && t.bits == 32) return DType::Complex32;
    if (t.code == kDLComplex && t.bits == 64) return DType::Complex64;
    if (t.code == kDLComplex && t.bits == 128) return DType::Complex128;
  }
  throw DTypeError("[from_dlpack] DLPack dtype (code " + std::to_string(t.code) + ", bits " +
                   std::to_string(t.bits) + ", lanes " + std::to_string(t.lanes) +
                   ") has no mpsim dtype");
}

// What a DLManagedTensor exported by mpsim owns: the tensor (so its storage) and the arrays the
// DLTensor points at.
struct ExportContext {
  Tensor tensor;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  DLManagedTensor managed{};
};

void delete_export(DLManagedTensor* managed) {
  delete static_cast<ExportContext*>(managed->manager_ctx);
}

// A capsule nobody consumed still owns its tensor.
void capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kCapsuleName)) {
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
    if (managed->deleter != nullptr) managed->deleter(managed);
  }
}

// Calls a producer's deleter, taking the GIL: NumPy's drops a Python reference.
void release_managed(DLManagedTensor* managed) {
  if (managed->deleter == nullptr) return;
#if PY_VERSION_HEX >= 0x030D0000
  const bool gone = !Py_IsInitialized() || Py_IsFinalizing();
#else
  const bool gone = !Py_IsInitialized() || _Py_IsFinalizing();
#endif
  if (gone) return;  // the process is exiting
  py::gil_scoped_acquire gil;
  managed->deleter(managed);
}

}  // namespace

py::capsule to_dlpack(const Tensor& t) {
  wait_for(t);  // Note [DLPack and the mps device]
  auto* ctx = new ExportContext{t, t.sizes().dims(), t.strides()};
  DLTensor& dl = ctx->managed.dl_tensor;
  dl.data = t.numel() == 0 ? nullptr : t.data_ptr();
  dl.device = {kDLCPU, 0};
  dl.ndim = static_cast<std::int32_t>(t.dim());
  dl.dtype = to_dl_dtype(t.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = &delete_export;
  PyObject* capsule = PyCapsule_New(&ctx->managed, kCapsuleName, &capsule_destructor);
  if (capsule == nullptr) {
    delete ctx;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

Tensor from_dlpack(py::handle obj) {
  py::object capsule;
  if (py::hasattr(obj, "__dlpack__")) {
    if (py::hasattr(obj, "__dlpack_device__")) {
      const auto [type, index] = obj.attr("__dlpack_device__")().cast<std::pair<int, int>>();
      if (type != kDLCPU) {
        throw DeviceError("[from_dlpack] the tensor lives on DLPack device type " +
                          std::to_string(type) + " (index " + std::to_string(index) +
                          "); mpsim imports host (kDLCPU) memory only");
      }
    }
    capsule = obj.attr("__dlpack__")();
  } else if (PyCapsule_CheckExact(obj.ptr())) {
    capsule = py::reinterpret_borrow<py::object>(obj);
  } else {
    throw py::type_error("from_dlpack expects an object with __dlpack__ or a DLPack capsule, got " +
                         py::str(obj.get_type().attr("__name__")).cast<std::string>());
  }
  if (!PyCapsule_IsValid(capsule.ptr(), kCapsuleName)) {
    throw InvalidArgument("[from_dlpack] the capsule is not an unused 'dltensor' capsule");
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
  const DLTensor& dl = managed->dl_tensor;
  if (dl.device.device_type != kDLCPU) {
    throw DeviceError("[from_dlpack] DLPack device type " + std::to_string(dl.device.device_type) +
                      " is not host memory (kDLCPU)");
  }
  const DType dtype = from_dl_dtype(dl.dtype);
  const Shape sizes(std::vector<std::int64_t>(dl.shape, dl.shape + dl.ndim));
  Strides strides =
      dl.strides != nullptr ? Strides(dl.strides, dl.strides + dl.ndim) : contiguous_strides(sizes);
  bool negative = false;
  for (std::int64_t s : strides) negative = negative || s < 0;
  if (negative) {
    // mpsim views have non-negative strides: a NumPy array with a reversed axis is copied.
    if (py::isinstance<py::array>(obj)) return from_numpy(py::reinterpret_borrow<py::array>(obj));
    throw InvalidArgument("[from_dlpack] negative strides " + to_string(strides) +
                          " are not supported; pass a contiguous copy");
  }
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  Tensor t = from_blob(data, sizes, strides, dtype, [managed] { release_managed(managed); });
  // Consumed: from here the tensor's storage owns the producer's memory.
  PyCapsule_SetName(capsule.ptr(), kUsedCapsuleName);
  return t;
}

void init_dlpack(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def(
         "__dlpack__",
         [](const Tensor& t, py::object stream) {
           if (!stream.is_none() && stream.cast<std::int64_t>() != -1) {
             throw py::buffer_error("mpsim tensors are host memory: stream must be None");
           }
           return to_dlpack(t);
         },
         "stream"_a = py::none(),
         "A DLPack capsule sharing this tensor's memory (an mps tensor is synchronized first "
         "and exported as kDLCPU: its memory is unified).")
      .def("__dlpack_device__",
           [](const Tensor&) { return py::make_tuple(static_cast<int>(kDLCPU), 0); });
  m.def("from_dlpack", &from_dlpack, "obj"_a,
        "A cpu tensor sharing the memory of a DLPack producer (torch tensor, NumPy array, ...), "
        "or of a 'dltensor' capsule.");
}

}  // namespace mpsim::python
