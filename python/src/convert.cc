// Conversions between Python objects (numbers, dtypes, devices, NumPy arrays) and mpsim values.
#include <Python.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "core/external_storage.h"
#include "device_sim/mps.h"
#include "python/src/common.h"

namespace mpsim::python {
namespace {

// Borrowed: the module's attributes float32, float16, ... hold the references.
std::array<PyObject*, kNumDTypes> g_dtype_objects{};

py::module_ numpy() { return py::module_::import("numpy"); }

// True once the interpreter is shutting down: no Python object may be touched then.
bool interpreter_gone() {
#if PY_VERSION_HEX >= 0x030D0000
  return !Py_IsInitialized() || Py_IsFinalizing();
#else
  return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

// Drops a reference from any thread (a storage may die on the mps queue's thread).
void decref_with_gil(PyObject* obj) {
  if (interpreter_gone()) return;  // the process is exiting: leak rather than crash
  py::gil_scoped_acquire gil;
  Py_DECREF(obj);
}

}  // namespace

void init_dtypes(py::module_& m) {
  py::class_<PyDType>(m, "dtype", "An element type: mpsim.float32, mpsim.bfloat16, ...")
      .def_property_readonly("is_floating_point",
                             [](const PyDType& d) { return is_floating(d.value); })
      .def_property_readonly("is_complex", [](const PyDType& d) { return is_complex(d.value); })
      .def_property_readonly(
          "is_signed",
          [](const PyDType& d) { return d.value != DType::Bool && d.value != DType::UInt8; })
      .def_property_readonly("itemsize", [](const PyDType& d) { return dtype_size(d.value); })
      .def("__repr__", [](const PyDType& d) { return "mpsim." + std::string(dtype_name(d.value)); })
      .def("__str__", [](const PyDType& d) { return "mpsim." + std::string(dtype_name(d.value)); })
      .def("__reduce__", [](const PyDType& d) {
        return py::make_tuple(
            py::module_::import("builtins").attr("getattr"),
            py::make_tuple(py::module_::import("mpsim"), std::string(dtype_name(d.value))));
      });
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto dtype = static_cast<DType>(i);
    py::object obj = py::cast(PyDType{dtype});
    g_dtype_objects[i] = obj.ptr();
    m.add_object(std::string(dtype_name(dtype)).c_str(), obj);
  }
  // torch's aliases.
  m.attr("float") = m.attr("float32");
  m.attr("half") = m.attr("float16");
  m.attr("double") = m.attr("float64");
  m.attr("int") = m.attr("int32");
  m.attr("long") = m.attr("int64");
  m.attr("char") = m.attr("int8");
  m.attr("short") = m.attr("int16");
  m.attr("chalf") = m.attr("complex32");
  m.attr("cfloat") = m.attr("complex64");
  m.attr("cdouble") = m.attr("complex128");
}

py::object dtype_object(DType dtype) {
  return py::reinterpret_borrow<py::object>(g_dtype_objects[static_cast<int>(dtype)]);
}

DType from_numpy_dtype(const py::dtype& dt) {
  const std::string name = py::str(py::handle(dt));
  if (dt.kind() == 'V' || dt.kind() == 'O' || dt.kind() == 'U' || dt.kind() == 'S' ||
      dt.kind() == 'M' || dt.kind() == 'm' || dt.itemsize() == 0 ||
      (dt.kind() == 'c' && dt.itemsize() != 8 && dt.itemsize() != 16)) {
    throw DTypeError("[from_numpy] NumPy dtype " + name +
                     " is not supported (expected bool, uint8, int8, int16, int32, int64, "
                     "float16, float32, float64, complex64 or complex128)");
  }
  const py::dtype native = dt.attr("newbyteorder")("=");
  return parse_dtype(std::string(py::str(native.attr("name"))));
}

DType to_dtype(py::handle obj) {
  if (py::isinstance<PyDType>(obj)) return obj.cast<const PyDType&>().value;
  if (py::isinstance<py::str>(obj)) return parse_dtype(obj.cast<std::string>());
  const std::string module =
      py::hasattr(obj, "__module__") ? py::str(obj.attr("__module__")).cast<std::string>() : "";
  if (module == "torch") return parse_dtype(py::str(obj).cast<std::string>());  // "torch.half"
  try {
    return from_numpy_dtype(numpy().attr("dtype")(obj));
  } catch (const py::error_already_set&) {
    throw DTypeError("[dtype] cannot interpret " + py::repr(obj).cast<std::string>() +
                     " as a dtype");
  }
}

Device to_device(py::handle obj) {
  if (py::isinstance<Device>(obj)) return obj.cast<Device>();
  if (py::isinstance<py::str>(obj)) return Device(obj.cast<std::string>());
  if (py::hasattr(obj, "type")) return Device(py::str(obj).cast<std::string>());  // torch.device
  throw DeviceError("[device] cannot interpret " + py::repr(obj).cast<std::string>() +
                    " as a device (expected 'cpu', 'mps' or 'mps:0')");
}

Tensor from_numpy(const py::array& a) {
  const DType dtype = from_numpy_dtype(a.dtype());
  const auto item = static_cast<py::ssize_t>(a.itemsize());
  bool shareable = a.writeable() && (a.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_) != 0 &&
                   a.dtype().attr("isnative").cast<bool>();
  Shape sizes(std::vector<std::int64_t>(a.shape(), a.shape() + a.ndim()));
  Strides strides(static_cast<std::size_t>(a.ndim()));
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    const py::ssize_t s = a.strides(i);
    shareable = shareable && s >= 0 && s % item == 0;
    strides[i] = s / item;
  }
  if (shareable) {
    PyObject* owner = a.ptr();
    Py_INCREF(owner);
    try {
      return from_blob(const_cast<void*>(a.data()), sizes, strides, dtype,
                       [owner] { decref_with_gil(owner); });
    } catch (...) {
      Py_DECREF(owner);
      throw;
    }
  }
  // Negative or odd strides, read-only, misaligned or byte-swapped: copy.
  const py::dtype native = a.dtype().attr("newbyteorder")("=");
  const py::array dense = numpy().attr("ascontiguousarray")(a, native);
  return from_blob_copy(dense.data(), dense.size(), dtype, sizes);
}

std::int64_t int64_of(py::handle obj) {
  const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    throw IntegerOverflow("integer " + py::str(index).cast<std::string>() +
                          " is outside the int64 range (Overflow when unpacking long)");
  }
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return static_cast<std::int64_t>(v);
}

std::optional<Scalar> to_scalar(py::handle obj) {
  if (PyBool_Check(obj.ptr())) return Scalar(obj.ptr() == Py_True);
  if (PyLong_Check(obj.ptr())) return Scalar(int64_of(obj));
  if (PyFloat_Check(obj.ptr())) return Scalar(obj.cast<double>());
  if (py::isinstance(obj, numpy().attr("generic"))) {
    const char kind = numpy().attr("dtype")(obj.get_type()).cast<py::dtype>().kind();
    if (kind == 'b' || kind == 'i' || kind == 'u' || kind == 'f') {
      return to_scalar(obj.attr("item")());
    }
  }
  return std::nullopt;
}

py::object scalar_object(const Scalar& s) {
  if (s.is_bool()) return py::bool_(s.to_double() != 0);
  if (s.is_integral()) return py::int_(s.to_int());
  return py::float_(s.to_double());
}

Tensor as_tensor(py::handle obj, std::optional<Device> device) {
  Tensor t;
  if (py::isinstance<Tensor>(obj)) {
    t = obj.cast<Tensor>();
  } else if (py::isinstance<py::array>(obj)) {
    t = from_numpy(py::reinterpret_borrow<py::array>(obj));
  } else if (py::hasattr(obj, "__dlpack__") && !py::isinstance<py::type>(obj)) {
    t = from_dlpack(obj);
  } else {
    py::array a = numpy().attr("asarray")(obj);
    // Python floats and complex numbers take torch's defaults (float32, complex64); NumPy
    // scalars keep their own.
    const bool python_data = !py::isinstance(obj, numpy().attr("generic"));
    t = from_numpy(a);
    if (python_data && t.dtype() == DType::Float64) t = t.to(DType::Float32);
    if (python_data && t.dtype() == DType::Complex128) t = t.to(DType::Complex64);
  }
  if (device && t.device() != *device) {
    py::gil_scoped_release nogil;
    t = t.to(*device);
  }
  return t;
}

// torch.tensor(data, dtype=<an integer dtype>) of Python numbers: refuses values the dtype cannot
// hold, as torch does (Note [checked scalar conversion]); the extremes decide, and a
// non-finite float is named.
void check_numbers_fit(const py::array& a, DType dtype) {
  const char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u' && kind != 'f') return;
  const py::module_ np = numpy();
  if (kind == 'f') {
    const py::array bad = np.attr("flatnonzero")(np.attr("logical_not")(np.attr("isfinite")(a)));
    if (bad.size() > 0) {
      const py::object first = a.attr("flat")[bad.attr("__getitem__")(0)];
      check_fits("tensor", Scalar(first.cast<double>()), dtype);
    }
  }
  for (const char* extreme : {"min", "max"}) {
    const py::object v = a.attr(extreme)();
    const Scalar s = kind == 'f' ? Scalar(v.cast<double>()) : Scalar(v.cast<std::int64_t>());
    check_fits("tensor", s, dtype);
  }
}

Tensor tensor_from_data(py::handle data, std::optional<DType> dtype, Device device) {
  Tensor t;
  if (py::isinstance<Tensor>(data) || py::isinstance<py::array>(data) ||
      (py::hasattr(data, "__dlpack__") && !py::isinstance<py::type>(data))) {
    t = as_tensor(data);
  } else {
    // Keep NumPy's float64 when a dtype is asked for: one rounding, by mpsim, to that dtype.
    py::array a = numpy().attr("asarray")(data);
    t = from_numpy(a);
    const bool python_data = !py::isinstance(data, numpy().attr("generic"));
    // Python floats and complex numbers take torch's defaults, float32 and complex64
    if (!dtype && python_data && t.dtype() == DType::Float64) dtype = DType::Float32;
    if (!dtype && python_data && t.dtype() == DType::Complex128) dtype = DType::Complex64;
    if (dtype && python_data && a.size() > 0 && is_integral(*dtype, false)) {
      check_numbers_fit(a, *dtype);
    }
  }
  py::gil_scoped_release nogil;
  // A fresh contiguous copy, as torch.tensor's: copied here unless a conversion below copies
  // anyway (into the source's layout, Note [copies keep the layout], so then made contiguous).
  const bool converts = (dtype && *dtype != t.dtype()) || device != t.device();
  if (!converts) {
    Tensor out = empty(t.sizes(), t.dtype(), t.device());
    out.copy_(t);
    return out;
  }
  if (dtype) t = t.to(*dtype);
  return t.to(device).contiguous();
}

py::array to_numpy(const Tensor& tensor) {
  Tensor t = tensor;
  if (!t.device().is_cpu()) wait_for(t);
  {
    py::gil_scoped_release nogil;
    if (!t.device().is_cpu()) t = t.to(Device::cpu());
    if (t.dtype() == DType::BFloat16) t = t.to(DType::Float32);
    if (t.dtype() == DType::Complex32) t = t.to(DType::Complex64);  // NumPy has no complex32
  }
  const py::dtype dt = numpy().attr("dtype")(std::string(dtype_name(t.dtype())));
  std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end());
  std::vector<py::ssize_t> strides(t.strides().begin(), t.strides().end());
  for (py::ssize_t& s : strides) s *= static_cast<py::ssize_t>(t.element_size());
  auto* keep = new Tensor(t);
  py::capsule base(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dt, shape, strides, t.data_ptr(), base);
}

void wait_for_device() {
  mps::Event done;
  {
    py::gil_scoped_release nogil;
    done.record();
  }
  // Polls with a growing sleep (10 us to 2 ms): short waits stay short, long ones cost little.
  auto sleep = std::chrono::microseconds(10);
  for (;;) {
    bool finished = false;
    {
      py::gil_scoped_release nogil;
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
      while (!(finished = done.query()) && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(sleep);
        sleep = std::min(sleep * 2, std::chrono::microseconds(2000));
      }
    }
    if (finished) break;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
  py::gil_scoped_release nogil;
  mps::synchronize();  // returns at once; rethrows a failure raised inside a command
}

void wait_for(const Tensor& t) {
  if (t.defined() && t.device().is_mps()) wait_for_device();
}

}  // namespace mpsim::python
