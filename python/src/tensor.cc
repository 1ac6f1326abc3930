// mpsim.Tensor, mpsim.device and the tensor constructors.
#include <Python.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python/src/common.h"

namespace mpsim::python {
namespace {

using namespace pybind11::literals;

py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }

py::tuple to_tuple(const std::vector<std::int64_t>& v) {
  py::tuple out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = py::int_(v[i]);
  return out;
}

// Sizes given as varargs (t.view(2, 3)) or as one sequence (t.view((2, 3))); `op` names the
// method in errors.
std::vector<std::int64_t> int_varargs(const py::args& args, const char* op) {
  const py::object items =
      args.size() == 1 && !PyLong_Check(args[0].ptr()) && !PyIndex_Check(args[0].ptr())
          ? py::reinterpret_borrow<py::object>(args[0])
          : py::reinterpret_borrow<py::object>(args);
  const std::string where = std::string("[") + op + "] size: ";
  if (py::isinstance<PyDType>(items)) {
    throw InvalidArgument(where + "expected ints, got a dtype");
  }
  if (!py::isinstance<py::sequence>(items) || py::isinstance<py::str>(items)) {
    throw InvalidArgument(where + "expected ints or a sequence of ints, got " +
                          py::str(items.get_type().attr("__name__")).cast<std::string>());
  }
  std::vector<std::int64_t> out;
  for (py::handle item : items) {
    if (PyBool_Check(item.ptr()) || !PyIndex_Check(item.ptr())) {
      throw InvalidArgument(where + "expected ints, got " +
                            py::str(item.get_type().attr("__name__")).cast<std::string>());
    }
    out.push_back(with_context(where, [&] { return int64_of(item); }));
  }
  return out;
}

// A Python index as an int, or nullopt (bools are not ints here, as in torch's indexing).
std::optional<std::int64_t> index_int(py::handle obj) {
  if (PyBool_Check(obj.ptr()) || py::isinstance<Tensor>(obj) || py::isinstance<py::array>(obj)) {
    return std::nullopt;
  }
  if (PyLong_Check(obj.ptr()) || PyIndex_Check(obj.ptr())) {
    return with_context("[index] ", [&] { return int64_of(obj); });
  }
  return std::nullopt;
}

struct Indexed {
  Tensor view;
  bool copied = false;  // an integer-array index gathered a copy (not assignable)
};

// Basic indexing: ints, slices (positive steps), None, Ellipsis, and one 1-d integer index array
// (index_select). Errors are IndexError / ValueError, as Python sequences raise them.
Indexed index(const Tensor& t, py::handle idx) {
  const py::tuple items =
      py::isinstance<py::tuple>(idx) ? py::reinterpret_borrow<py::tuple>(idx) : py::make_tuple(idx);
  std::int64_t consumed = 0;
  bool ellipsis = false;
  for (py::handle item : items) {
    if (item.is_none()) continue;
    if (item.ptr() == Py_Ellipsis) {
      if (ellipsis) throw py::index_error("an index can only have a single ellipsis ('...')");
      ellipsis = true;
      continue;
    }
    ++consumed;
  }
  if (consumed > t.dim()) {
    throw py::index_error("too many indices for tensor of dimension " + std::to_string(t.dim()));
  }
  Indexed out{t};
  std::int64_t d = 0;
  for (py::handle item : items) {
    Tensor& r = out.view;
    if (item.is_none()) {
      r = r.unsqueeze(d++);
    } else if (item.ptr() == Py_Ellipsis) {
      d += t.dim() - consumed;
    } else if (std::optional<std::int64_t> i = index_int(item)) {
      const std::int64_t n = r.size(d);
      if (*i < -n || *i >= n) {
        throw py::index_error("index " + std::to_string(*i) + " is out of bounds for dimension " +
                              std::to_string(d) + " with size " + std::to_string(n));
      }
      r = r.select(d, *i);
    } else if (py::isinstance<py::slice>(item)) {
      py::ssize_t start = 0, stop = 0, step = 0, length = 0;
      if (!item.cast<py::slice>().compute(r.size(d), &start, &stop, &step, &length)) {
        throw py::error_already_set();
      }
      if (step <= 0) throw py::value_error("step must be greater than zero");
      const std::int64_t end = length == 0 ? start : start + (length - 1) * step + 1;
      r = r.slice(d, start, end, step);
      ++d;
    } else if (PyBool_Check(item.ptr())) {
      throw py::index_error("boolean indices are not supported");
    } else {
      if (out.copied) throw py::index_error("only one integer-array index is supported");
      Tensor positions = as_tensor(item, r.device());
      if (positions.dim() == 0) {
        positions = positions.unsqueeze(0);
        r = index_select(r, d, positions).squeeze(d);
      } else if (positions.dim() == 1 && is_integral(positions.dtype(), false)) {
        r = index_select(r, d, positions);
        ++d;
      } else {
        throw py::index_error(
            "only 1-d integer index arrays are supported (boolean masks and multi-dimensional "
            "index arrays are not)");
      }
      out.copied = true;
    }
  }
  return out;
}

// Applies a binary operator: f(Tensor, Tensor), f(Tensor, Scalar) or (reflected) f(Scalar,
// Tensor). NumPy arrays and nested sequences convert (onto self's device); anything else gives
// NotImplemented, so Python tries the other operand or raises TypeError.
template <bool kReflected, class F>
py::object binary(const Tensor& self, py::handle other, F f, const char* name) {
  const std::optional<Scalar> s =
      with_context(std::string("[") + name + "] other: ", [&] { return to_scalar(other); });
  if (s) {
    Tensor out;
    {
      py::gil_scoped_release nogil;
      if constexpr (kReflected) {
        out = f(*s, self);
      } else {
        out = f(self, *s);
      }
    }
    return py::cast(std::move(out));
  }
  Tensor o;
  try {
    // An mpsim tensor stays on its device: the op raises for mixed devices, as torch (0-dim cpu
    // tensors excepted); arrays and sequences convert onto self's.
    o = py::isinstance<Tensor>(other) ? other.cast<Tensor>() : as_tensor(other, self.device());
  } catch (const py::error_already_set&) {
    return not_implemented();
  } catch (const DTypeError&) {
    return not_implemented();
  }
  Tensor out;
  {
    py::gil_scoped_release nogil;
    out = kReflected ? f(o, self) : f(self, o);
  }
  return py::cast(std::move(out));
}

// The overload set of an operator or op, as one callable.
#define MPSIM_OVERLOADS(expr) [](const auto& a, const auto& b) -> Tensor { return expr; }

// `name` and, when rname is given, its reflected form (2 - t calls t.__rsub__(2)).
template <class F>
void def_binary(py::class_<Tensor>& cls, const char* name, F f) {
  cls.def(
      name, [f, name](const Tensor& self, py::handle o) { return binary<false>(self, o, f, name); },
      py::is_operator());
}
template <class F>
void def_binary(py::class_<Tensor>& cls, const char* name, const char* rname, F f) {
  def_binary(cls, name, f);
  cls.def(
      rname,
      [f, rname](const Tensor& self, py::handle o) { return binary<true>(self, o, f, rname); },
      py::is_operator());
}

py::object item(const Tensor& t) {
  wait_for(t);
  if (is_complex(t.dtype())) {  // a Python complex, from the exact complex128 parts
    Tensor parts;
    {
      py::gil_scoped_release nogil;
      parts = view_as_real(t.to(Device::cpu()).reshape({-1}).to(DType::Complex128));
    }
    if (t.numel() != 1) {
      throw InvalidArgument("[item] a Tensor with " + std::to_string(t.numel()) +
                            " elements cannot be converted to a scalar");
    }
    const std::vector<double> v = parts.to_vector<double>();
    return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(v[0], v[1]));
  }
  py::gil_scoped_release nogil;
  if (is_floating(t.dtype())) {
    const double v = t.item<double>();
    py::gil_scoped_acquire gil;
    return py::float_(v);
  }
  if (t.dtype() == DType::Bool) {
    const bool v = t.item<bool>();
    py::gil_scoped_acquire gil;
    return py::bool_(v);
  }
  const std::int64_t v = t.item<std::int64_t>();
  py::gil_scoped_acquire gil;
  return py::int_(v);
}

// memory_format= of to() and the conversions, as torch's objects or their names:
// preserve_format keeps the layout (what mpsim's conversions do), contiguous_format makes the
// result contiguous, channels_last stores a 4-d result as NHWC.
Tensor with_memory_format(Tensor out, py::handle format) {
  if (format.is_none()) return out;
  std::string name = py::str(format);
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  if (name == "preserve_format") return out;
  if (name == "contiguous_format") return out.contiguous();
  if (name == "channels_last" && out.dim() == 4) {
    return out.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  }
  throw InvalidArgument(
      "[to] memory_format must be preserve_format, contiguous_format or "
      "channels_last (for a 4-d tensor), got " +
      name);
}

// t.to(device), t.to(dtype), t.to(device, dtype), t.to(other), with keywords dtype=/device=,
// and torch's trailing non_blocking and copy (positional or keyword) and memory_format=.
Tensor to(const Tensor& t, const py::args& args, const py::kwargs& kwargs) {
  std::optional<DType> dtype;
  std::optional<Device> device;
  auto take = [&](py::handle a) {
    if (a.is_none()) return;
    if (py::isinstance<Tensor>(a)) {
      dtype = a.cast<const Tensor&>().dtype();
      device = a.cast<const Tensor&>().device();
    } else if (py::isinstance<py::str>(a) || py::isinstance<Device>(a) ||
               py::str(a.get_type().attr("__name__")).cast<std::string>() == "device") {
      device = to_device(a);
    } else {
      dtype = to_dtype(a);
    }
  };
  bool copy = false;
  int bools = 0;  // non_blocking, then copy
  for (py::handle a : args) {
    if (py::isinstance<py::bool_>(a)) {
      if (bools++ == 1) copy = a.cast<bool>();
    } else {
      take(a);
    }
  }
  py::object memory_format = py::none();
  for (auto [key, value] : kwargs) {
    const std::string k = py::str(key);
    if (k == "dtype") {
      if (!value.is_none()) dtype = to_dtype(value);
    } else if (k == "device") {
      if (!value.is_none()) device = to_device(value);
    } else if (k == "copy") {
      copy = value.cast<bool>();
    } else if (k == "memory_format") {
      memory_format = py::reinterpret_borrow<py::object>(value);
    } else if (k != "non_blocking") {
      throw py::type_error("to() got an unexpected keyword argument '" + k + "'");
    }
  }
  if (device && device->is_cpu() && t.device().is_mps()) wait_for(t);
  Tensor out = t;
  {
    py::gil_scoped_release nogil;
    if (dtype) out = out.to(*dtype);
    if (device) out = out.to(*device);
    if (copy && out.storage() == t.storage()) out = out.clone();
  }
  return with_memory_format(out, memory_format);
}

// t.float(), t.half(), ...: to(dtype) with torch's memory_format=.
auto conversion(DType dtype) {
  return [dtype](const Tensor& t, py::object memory_format) {
    Tensor out;
    {
      py::gil_scoped_release release;
      out = t.to(dtype);
    }
    return with_memory_format(out, memory_format);
  };
}

// Wraps a Tensor -> Tensor member call with the GIL released.
template <class F>
auto nogil(F f) {
  return [f](const Tensor& t) {
    py::gil_scoped_release release;
    return f(t);
  };
}

}  // namespace

void init_tensor(py::module_& m) {
  py::class_<Device>(m, "device",
                     "Where a tensor lives: device('cpu'), device('mps'), "
                     "device('mps', 0).")
      .def(py::init([](py::handle spec, std::optional<int> index) {
             Device d = to_device(spec);
             return index ? Device(d.type(), *index) : d;
           }),
           "type"_a, "index"_a = py::none())
      .def_property_readonly("type",
                             [](Device d) { return std::string(device_type_name(d.type())); })
      .def_property_readonly("index", &Device::index)
      .def("__str__", &Device::to_string)
      .def("__repr__",
           [](Device d) {
             return "device(type='" + std::string(device_type_name(d.type())) +
                    "', index=" + std::to_string(d.index()) + ")";
           })
      .def("__eq__",
           [](Device d, py::handle other) {
             try {
               return to_device(other) == d;
             } catch (const Error&) {
               return false;
             }
           })
      .def("__hash__", [](Device d) { return std::hash<Device>()(d); });

  py::class_<Tensor> cls(m, "Tensor",
                         "A strided view over cpu or (simulated) mps memory. Create one with "
                         "mpsim.tensor, mpsim.from_numpy, mpsim.from_dlpack or a factory.");
  cls.def_property_readonly("shape", [](const Tensor& t) { return to_tuple(t.sizes().dims()); })
      .def_property_readonly("dtype", [](const Tensor& t) { return dtype_object(t.dtype()); })
      .def_property_readonly("device", &Tensor::device)
      .def_property_readonly("ndim", &Tensor::dim)
      .def_property_readonly("is_mps", [](const Tensor& t) { return t.device().is_mps(); })
      .def_property_readonly("is_cpu", [](const Tensor& t) { return t.device().is_cpu(); })
      .def_property_readonly("nbytes", &Tensor::nbytes)
      .def_property_readonly("itemsize", &Tensor::element_size)
      .def(
          "size",
          [](const Tensor& t, std::optional<std::int64_t> dim) -> py::object {
            if (dim) return py::int_(t.size(*dim));
            return to_tuple(t.sizes().dims());
          },
          "dim"_a = py::none())
      .def(
          "stride",
          [](const Tensor& t, std::optional<std::int64_t> dim) -> py::object {
            if (dim) return py::int_(t.stride(*dim));
            return to_tuple(t.strides());
          },
          "dim"_a = py::none())
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("element_size", &Tensor::element_size)
      .def("storage_offset", &Tensor::storage_offset)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def(
          "set_",
          [](py::object self, const Tensor& source) {
            self.cast<Tensor&>() = source;
            return self;
          },
          "source"_a,
          "torch's Tensor.set_(source): self becomes a view of source's storage with its "
          "size, strides and offset; returns self.")
      .def("data_ptr",
           [](const Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.data_ptr()); })
      .def("numpy", &to_numpy,
           "The values as an ndarray: shares memory for a cpu tensor; an mps tensor is "
           "synchronized and copied; bfloat16 gives float32 values.")
      .def(
          "__array__",
          [](const Tensor& t, py::object dtype) -> py::object {
            py::array a = to_numpy(t);
            if (dtype.is_none()) return a;
            return a.attr("astype")(dtype);
          },
          "dtype"_a = py::none())
      .def("tolist", [](const Tensor& t) { return to_numpy(t).attr("tolist")(); })
      .def("item", &item)
      .def("to", &to)
      .def("cpu", [](const Tensor& t) { return to(t, py::make_tuple("cpu"), py::kwargs()); })
      .def("mps", [](const Tensor& t) { return to(t, py::make_tuple("mps"), py::kwargs()); })
      .def("float", conversion(DType::Float32), py::kw_only(),
           py::arg("memory_format") = py::none())
      .def("double", conversion(DType::Float64), py::kw_only(),
           py::arg("memory_format") = py::none())
      .def("half", conversion(DType::Float16), py::kw_only(), py::arg("memory_format") = py::none())
      .def("bfloat16", conversion(DType::BFloat16), py::kw_only(),
           py::arg("memory_format") = py::none())
      .def("int", conversion(DType::Int32), py::kw_only(), py::arg("memory_format") = py::none())
      .def("long", conversion(DType::Int64), py::kw_only(), py::arg("memory_format") = py::none())
      .def("bool", conversion(DType::Bool), py::kw_only(), py::arg("memory_format") = py::none())
      .def("byte", conversion(DType::UInt8), py::kw_only(), py::arg("memory_format") = py::none())
      .def("char", conversion(DType::Int8), py::kw_only(), py::arg("memory_format") = py::none())
      .def("short", conversion(DType::Int16), py::kw_only(), py::arg("memory_format") = py::none())
      .def("contiguous", nogil([](const Tensor& t) { return t.contiguous(); }))
      .def("clone", nogil([](const Tensor& t) { return t.clone(); }))
      .def("view",
           [](const Tensor& t, py::args s, py::kwargs kw) {
             // view(dtype): the same bytes as another dtype (an mpsim, torch or NumPy dtype,
             // positional or dtype=); else view(*sizes)
             const bool by_keyword = kw.contains("dtype");
             if (by_keyword || (s.size() == 1 && !PyIndex_Check(s[0].ptr()) &&
                                (PySequence_Check(s[0].ptr()) == 0 ||
                                 py::isinstance<py::str>(s[0])))) {
               if (kw.size() > (by_keyword ? 1u : 0u) || (by_keyword && !s.empty())) {
                 throw InvalidArgument("[view] takes sizes or one dtype");
               }
               const py::object d = by_keyword ? py::object(kw["dtype"]) : py::object(s[0]);
               return t.view(to_dtype(d));
             }
             if (!kw.empty()) throw InvalidArgument("[view] takes sizes or one dtype");
             return t.view(Shape(int_varargs(s, "view")));
           })
      .def("reshape",
           [](const Tensor& t, py::args s) {
             const Shape shape(int_varargs(s, "reshape"));
             py::gil_scoped_release nogil;
             return t.reshape(shape);
           })
      .def("permute",
           [](const Tensor& t, py::args d) { return t.permute(int_varargs(d, "permute")); })
      .def("expand",
           [](const Tensor& t, py::args s) { return t.expand(Shape(int_varargs(s, "expand"))); })
      .def("transpose", &Tensor::transpose, "dim0"_a, "dim1"_a)
      .def("t", &Tensor::t)
      .def_property_readonly("T", &Tensor::t)
      .def("unsqueeze", &Tensor::unsqueeze, "dim"_a)
      .def(
          "squeeze",
          [](const Tensor& t, std::optional<std::int64_t> dim) {
            return dim ? t.squeeze(*dim) : t.squeeze();
          },
          "dim"_a = py::none())
      .def("flatten", &Tensor::flatten, "start_dim"_a = 0, "end_dim"_a = -1)
      .def("narrow", &Tensor::narrow, "dim"_a, "start"_a, "length"_a)
      .def("select", &Tensor::select, "dim"_a, "index"_a)
      .def("copy_",
           [](Tensor& t, py::handle src) -> Tensor& {
             const Tensor s = as_tensor(src, t.device());
             py::gil_scoped_release nogil;
             return t.copy_(s);
           })
      .def("__getitem__", [](const Tensor& t, py::handle idx) { return index(t, idx).view; })
      .def("__setitem__",
           [](const Tensor& t, py::handle idx, py::handle value) {
             Indexed target = index(t, idx);
             if (target.copied) {
               throw py::index_error("assignment through an integer-array index is not supported");
             }
             Tensor src;
             if (std::optional<Scalar> s =
                     with_context("[__setitem__] value: ", [&] { return to_scalar(value); })) {
               check_fits("__setitem__", *s, t.dtype());  // Note [checked scalar conversion]
               src = scalar_tensor(*s, t.dtype(), t.device());
             } else {
               src = as_tensor(value, t.device());
             }
             py::gil_scoped_release nogil;
             target.view.copy_(src);
           })
      .def("__len__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
             return t.size(0);
           })
      .def("__iter__",
           [](py::object self) {
             const Tensor& t = self.cast<const Tensor&>();
             if (t.dim() == 0) throw py::type_error("iteration over a 0-d tensor");
             py::list rows;
             for (std::int64_t i = 0; i < t.size(0); ++i) rows.append(t.select(0, i));
             return py::iter(rows);
           })
      .def("__bool__", [](const Tensor& t) { return item(t).cast<bool>(); })
      .def("__float__", [](const Tensor& t) { return item(t).cast<double>(); })
      .def("__int__", [](const Tensor& t) { return py::int_(item(t)); })
      .def("__index__",
           [](const Tensor& t) {
             if (!is_integral(t.dtype(), true)) {
               throw py::type_error(
                   "only integer tensors of a single element can be "
                   "converted to an index");
             }
             return item(t).cast<std::int64_t>();
           })
      .def("__repr__",
           [](const Tensor& t) {
             wait_for(t);
             py::gil_scoped_release nogil;
             return t.to_string();
           })
      .def("__hash__",
           [](py::handle self) {
             return static_cast<py::ssize_t>(reinterpret_cast<std::uintptr_t>(self.ptr()) >> 4);
           })
      .def("__neg__", nogil([](const Tensor& t) { return -t; }))
      .def("__pos__", [](const Tensor& t) { return t; })
      .def("__abs__", nogil([](const Tensor& t) { return abs(t); }));
  // NumPy defers to these operators (ndarray + Tensor calls Tensor.__radd__).
  cls.attr("__array_priority__") = 1000;
  cls.attr("__array_ufunc__") = py::none();

  def_binary(cls, "__add__", "__radd__", MPSIM_OVERLOADS(a + b));
  def_binary(cls, "__sub__", "__rsub__", MPSIM_OVERLOADS(a - b));
  def_binary(cls, "__mul__", "__rmul__", MPSIM_OVERLOADS(a * b));
  def_binary(cls, "__truediv__", "__rtruediv__", MPSIM_OVERLOADS(a / b));
  def_binary(cls, "__pow__", "__rpow__", MPSIM_OVERLOADS(pow(a, b)));
  // Python reflects comparisons itself (2 < t is t > 2): no reflected forms.
  def_binary(cls, "__eq__", MPSIM_OVERLOADS(eq(a, b)));
  def_binary(cls, "__ne__", MPSIM_OVERLOADS(ne(a, b)));
  def_binary(cls, "__lt__", MPSIM_OVERLOADS(lt(a, b)));
  def_binary(cls, "__le__", MPSIM_OVERLOADS(le(a, b)));
  def_binary(cls, "__gt__", MPSIM_OVERLOADS(gt(a, b)));
  def_binary(cls, "__ge__", MPSIM_OVERLOADS(ge(a, b)));

  m.def(
      "tensor",
      [](py::handle data, py::handle dtype, py::handle device) {
        return tensor_from_data(data,
                                dtype.is_none() ? std::nullopt : std::optional(to_dtype(dtype)),
                                to_device(device));
      },
      "data"_a, "dtype"_a = py::none(), "device"_a = "cpu",
      "A new tensor holding a copy of `data` (array-like, NumPy array, mpsim or torch tensor). "
      "Python floats give float32, ints int64, bools bool, as torch.tensor; NumPy arrays keep "
      "their dtype.");
  m.def("from_numpy", &from_numpy, "array"_a,
        "A cpu tensor that shares the ndarray's memory (the array stays alive while the tensor "
        "does). Read-only, misaligned, byte-swapped or negatively strided arrays are copied.");
  m.def(
      "as_tensor",
      [](py::handle data, py::handle dtype, py::handle device) {
        Tensor t = as_tensor(data);
        const std::optional<DType> d =
            dtype.is_none() ? std::nullopt : std::optional(to_dtype(dtype));
        const std::optional<Device> dev =
            device.is_none() ? std::nullopt : std::optional(to_device(device));
        py::gil_scoped_release nogil;
        if (d) t = t.to(*d);
        if (dev) t = t.to(*dev);
        return t;
      },
      "data"_a, "dtype"_a = py::none(), "device"_a = py::none(),
      "Like tensor(), but shares memory with NumPy arrays and DLPack objects when it can.");
}

}  // namespace mpsim::python
