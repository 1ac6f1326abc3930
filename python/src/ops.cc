// Every op of the op registry (core/op_registry.h) as a module function with torch's name and
// keyword arguments: one generic function per signature converts the Python arguments to
// ArgValues, binds them with bind_arguments and calls the op with the GIL released.
#include <Python.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/op_registry.h"
#include "core/ops.h"
#include "python/src/common.h"

namespace mpsim::python {
namespace {

using namespace pybind11::literals;

// Signatures whose results form a tuple even when there is one (torch returns a tuple).
constexpr std::array<std::string_view, 5> kTupleResults = {"chunk", "split", "std_mean", "unbind",
                                                           "var_mean"};

bool is_tensor_like(py::handle obj) {
  return py::isinstance<Tensor>(obj) || py::isinstance<py::array>(obj) ||
         (py::hasattr(obj, "__dlpack__") && !py::isinstance<py::type>(obj));
}

bool is_int_like(py::handle obj) {
  if (PyBool_Check(obj.ptr())) return false;
  if (PyLong_Check(obj.ptr())) return true;
  return to_scalar(obj).has_value() && to_scalar(obj)->is_integral();
}

// The device that array-like arguments move to: that of the first mpsim tensor argument.
std::optional<Device> first_device(const py::args& args, const py::kwargs& kwargs) {
  auto find = [](py::handle obj) -> std::optional<Device> {
    if (py::isinstance<Tensor>(obj)) return obj.cast<const Tensor&>().device();
    if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
      for (py::handle item : obj) {
        if (py::isinstance<Tensor>(item)) return item.cast<const Tensor&>().device();
      }
    }
    return std::nullopt;
  };
  for (py::handle a : args) {
    if (auto d = find(a)) return d;
  }
  for (auto [k, v] : kwargs) {
    if (auto d = find(v)) return d;
  }
  return std::nullopt;
}

// A Python value as the ArgValue alternative `spec` wants (bind_arguments finishes the job:
// int -> float, number -> Scalar, str -> DType, ...). `spec` is null for an argument the
// signature lacks; bind_arguments then names it in its error.
ArgValue to_arg(py::handle obj, const ArgSpec* spec, std::optional<Device> device) {
  auto kind_is = [spec](auto... kinds) {
    return spec != nullptr && ((spec->kind == kinds) || ...);
  };
  if (obj.is_none()) return std::monostate{};
  if (py::isinstance<Tensor>(obj)) return obj.cast<Tensor>();
  if (PyBool_Check(obj.ptr())) return obj.ptr() == Py_True;
  if (PyLong_Check(obj.ptr())) return int64_of(obj);
  if (PyFloat_Check(obj.ptr())) return obj.cast<double>();
  if (py::isinstance<py::str>(obj)) return obj.cast<std::string>();
  if (py::isinstance<PyDType>(obj)) return obj.cast<const PyDType&>().value;
  if (py::isinstance<Device>(obj)) return obj.cast<Device>();
  if (kind_is(ArgKind::TensorList)) {
    std::vector<Tensor> tensors;
    for (py::handle item : obj) {  // mpsim tensors stay on their devices (the op checks them)
      tensors.push_back(py::isinstance<Tensor>(item) ? item.cast<Tensor>()
                                                     : as_tensor(item, device));
    }
    return tensors;
  }
  if (kind_is(ArgKind::DType, ArgKind::OptionalDType)) return to_dtype(obj);
  if (kind_is(ArgKind::Device)) return to_device(obj);
  if (std::optional<Scalar> s = to_scalar(obj)) {  // a NumPy scalar
    if (kind_is(ArgKind::Tensor, ArgKind::OptionalTensor)) {
      return as_tensor(obj, device);
    }
    if (s->is_bool()) return s->to_double() != 0;
    if (s->is_integral()) return s->to_int();
    return s->to_double();
  }
  if (is_tensor_like(obj)) return as_tensor(obj, device);
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    if (kind_is(ArgKind::Tensor, ArgKind::OptionalTensor, ArgKind::TensorOrScalar,
                ArgKind::OptionalTensorOrScalar)) {
      return as_tensor(obj, device);
    }
    if (kind_is(ArgKind::OptionalFloatList)) {  // scale_factor=(2.0, 1.5): numbers
      std::vector<double> values;
      for (py::handle item : obj) {
        const std::optional<Scalar> s = to_scalar(item);
        if (!s || s->is_bool()) {
          throw SignatureError("[" + std::string(spec->name) +
                               "] expected a list of numbers, got an element of type " +
                               py::str(item.get_type().attr("__name__")).cast<std::string>());
        }
        values.push_back(s->to_double());
      }
      return values;
    }
    bool ints = true, tensors = py::len(obj) > 0;
    for (py::handle item : obj) {
      ints = ints && is_int_like(item);
      tensors = tensors && is_tensor_like(item);
    }
    if (ints) {
      IntList values;
      for (py::handle item : obj) values.push_back(to_scalar(item)->to_int());
      return values;
    }
    if (tensors) {
      std::vector<Tensor> out;
      for (py::handle item : obj) out.push_back(as_tensor(item, device));
      return out;
    }
  }
  throw SignatureError("[" + std::string(spec ? spec->name : "argument") + "] cannot pass a " +
                       py::str(obj.get_type().attr("__name__")).cast<std::string>() + " here" +
                       (spec ? " (expected " + std::string(arg_kind_name(spec->kind)) + ")" : ""));
}

py::object arg_object(const ArgValue& v) {
  return std::visit(
      [](const auto& x) -> py::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return py::none();
        } else if constexpr (std::is_same_v<T, Scalar>) {
          return scalar_object(x);
        } else if constexpr (std::is_same_v<T, DType>) {
          return dtype_object(x);
        } else {
          return py::cast(x);
        }
      },
      v);
}

py::object call(const OpSignature& sig, const py::args& args, const py::kwargs& kwargs) {
  const std::optional<Device> device = first_device(args, kwargs);
  std::vector<ArgValue> positional;
  // torch's varargs sizes: zeros(2, 3) as zeros((2, 3)) when size is the only required argument.
  std::size_t required = 0;
  for (const ArgSpec& a : sig.args) required += !a.default_value.has_value();
  // An int outside int64 is named with the op and the argument (Overflow when unpacking long).
  const auto convert = [&](py::handle obj, const ArgSpec* spec, std::string_view name) {
    const std::string where =
        "[" + std::string(sig.name) + "] argument '" + std::string(name) + "': ";
    return with_context(where, [&] { return to_arg(obj, spec, device); });
  };
  const bool pack_sizes =
      !sig.args.empty() && sig.args[0].name == "size" && required == 1 && args.size() > 1 &&
      std::all_of(args.begin(), args.end(),
                  [](py::handle a) { return PyLong_Check(a.ptr()) || is_int_like(a); });
  if (pack_sizes) {
    positional.push_back(convert(py::tuple(args), &sig.args[0], "size"));
  } else {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const ArgSpec* spec = i < sig.args.size() ? &sig.args[i] : nullptr;
      positional.push_back(convert(args[i], spec, spec ? spec->name : std::string_view("?")));
    }
  }
  std::vector<std::pair<std::string, ArgValue>> named;
  for (auto [key, value] : kwargs) {
    const std::string name = py::str(key);
    const ArgSpec* spec = nullptr;
    for (const ArgSpec& a : sig.args) {
      if (a.name == name) spec = &a;
    }
    named.emplace_back(name, convert(value, spec, name));
  }
  std::vector<Tensor> results;
  {
    py::gil_scoped_release nogil;
    std::vector<ArgValue> bound = bind_arguments(sig, std::move(positional), std::move(named));
    results = call_op(sig, bound);
  }
  const bool tuple = results.size() != 1 || std::find(kTupleResults.begin(), kTupleResults.end(),
                                                      sig.name) != kTupleResults.end();
  if (!tuple) return py::cast(std::move(results[0]));
  py::tuple out(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) out[i] = py::cast(std::move(results[i]));
  return out;
}

}  // namespace

void init_ops(py::module_& m) {
  py::list signatures;
  py::options options;
  options.disable_function_signatures();  // the docstring's first line is the signature
  for (const OpSignature& sig : op_signatures()) {
    py::list params;
    for (const ArgSpec& a : sig.args) {
      params.append(py::make_tuple(std::string(a.name), std::string(arg_kind_name(a.kind)),
                                   a.default_value.has_value(),
                                   a.default_value ? arg_object(*a.default_value) : py::none()));
    }
    const std::string text = signature_string(sig);
    signatures.append(py::dict("name"_a = std::string(sig.name), "args"_a = params,
                               "doc"_a = std::string(sig.doc), "signature"_a = text,
                               "returns"_a = std::string(sig.returns)));
    const std::string name(sig.name);
    if (py::hasattr(m, name.c_str())) continue;  // a hand-written binding of that name wins
    const std::string doc = text + "\n\n" + std::string(sig.doc);
    m.def(
        name.c_str(),
        [&sig](const py::args& args, const py::kwargs& kwargs) { return call(sig, args, kwargs); },
        doc.c_str());
  }
  m.attr("_signatures") = signatures;
  // fn(*args, **kwargs) with `out` offered to the elementwise op named `op` (Note [out
  // destination], core/ops.cc): (result, wrote), wrote when that op wrote its result into out
  // and fn returned out's elements themselves.
  m.def("_call_into", [](const Tensor& out, const std::string& op, const py::function& fn,
                         const py::args& args, const py::kwargs& kwargs) {
    // Offered only when every tensor argument may be read while out is written (an op may
    // read one after its elementwise step); not past a list of them.
    bool offer = true;
    const auto check = [&](py::handle a) {
      if (py::isinstance<Tensor>(a)) {
        offer = offer && OutDestination::may_read_while_writing(a.cast<const Tensor&>(), out);
      } else if (py::isinstance<py::list>(a) || py::isinstance<py::tuple>(a)) {
        offer = false;
      }
    };
    for (py::handle a : args) check(a);
    for (auto item : kwargs) check(item.second);
    if (!offer) return py::make_tuple(fn(*args, **kwargs), false);
    py::object result;
    bool used = false;
    {
      OutDestination destination(out, op);
      result = fn(*args, **kwargs);
      used = destination.used();
    }
    bool wrote = false;
    if (used && py::isinstance<Tensor>(result)) {
      const Tensor& r = result.cast<const Tensor&>();
      wrote = r.storage() == out.storage() && r.storage_offset() == out.storage_offset() &&
              r.sizes() == out.sizes() && r.strides() == out.strides() &&
              r.dtype() == out.dtype();
    }
    return py::make_tuple(result, wrote);
  });
  py::list tuple_results;
  for (std::string_view name : kTupleResults) tuple_results.append(std::string(name));
  m.attr("_tuple_results") = tuple_results;  // for the stub generator (python/gen_stub.py)
}

}  // namespace mpsim::python
