// mpsim's C++ errors as Python exceptions.
//
// Note [exception mapping]
// Every mpsim exception derives from mpsim.Error, itself a RuntimeError (what torch raises for
// most bad calls, so `except RuntimeError` keeps working when a test swaps torch for mpsim), and
// from the builtin exception that names its kind, so `except ValueError` works too:
//   ShapeError(Error, ValueError), InvalidArgumentError(Error, ValueError),
//   SignatureError(Error, TypeError)  (a call that matches no signature, as torch's TypeError),
//   DTypeError(Error, TypeError), OutOfMemoryError(Error, MemoryError) (torch.OutOfMemoryError
//   is a RuntimeError only), UnsupportedError(Error, NotImplementedError), DeviceError(Error),
//   LinAlgError(Error) (torch.linalg.LinAlgError is a RuntimeError).
#include <Python.h>

#include <exception>
#include <string>

#include "core/op_registry.h"
#include "python/src/common.h"

namespace mpsim::python {
namespace {

// Borrowed: the module holds the references (its attributes), for the life of the process.
struct ExceptionTypes {
  PyObject* error = nullptr;
  PyObject* shape = nullptr;
  PyObject* invalid_argument = nullptr;
  PyObject* signature = nullptr;
  PyObject* dtype = nullptr;
  PyObject* out_of_memory = nullptr;
  PyObject* unsupported = nullptr;
  PyObject* device = nullptr;
  PyObject* linalg = nullptr;
};
ExceptionTypes g_types;

PyObject* make_type(py::module_& m, const char* name, py::tuple bases, const char* doc) {
  const std::string qualified = std::string("mpsim.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (type == nullptr) throw py::error_already_set();
  m.add_object(name, py::reinterpret_steal<py::object>(type));
  return type;
}

}  // namespace

void init_errors(py::module_& m) {
  py::handle builtins = py::module_::import("builtins");
  auto base = [&](const char* name) { return builtins.attr(name); };
  g_types.error = make_type(m, "Error", py::make_tuple(base("RuntimeError")),
                            "Base of every mpsim error; a RuntimeError, as torch's.");
  py::handle error(g_types.error);
  g_types.shape = make_type(m, "ShapeError", py::make_tuple(error, base("ValueError")),
                            "Shapes that do not fit the op (broadcasting, dims, sizes).");
  g_types.invalid_argument =
      make_type(m, "InvalidArgumentError", py::make_tuple(error, base("ValueError")),
                "An argument value the op does not accept.");
  g_types.signature = make_type(m, "SignatureError", py::make_tuple(error, base("TypeError")),
                                "A call that matches no signature of the op.");
  g_types.dtype = make_type(m, "DTypeError", py::make_tuple(error, base("TypeError")),
                            "A dtype the op or the conversion does not support.");
  g_types.out_of_memory =
      make_type(m, "OutOfMemoryError", py::make_tuple(error, base("MemoryError")),
                "The device's memory (or its limit) is exhausted.");
  g_types.unsupported =
      make_type(m, "UnsupportedError", py::make_tuple(error, base("NotImplementedError")),
                "An op or dtype the device does not implement (see fallback).");
  g_types.device = make_type(m, "DeviceError", py::make_tuple(error),
                             "Bad device, device mix, or a device hazard (strict mode).");
  g_types.linalg = make_type(m, "LinAlgError", py::make_tuple(error),
                             "A matrix that cannot be factored as asked (singular, not "
                             "positive definite); a RuntimeError, as torch.linalg.LinAlgError.");

  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (const SignatureError& e) {  // before InvalidArgument, its base
      PyErr_SetString(g_types.signature, e.what());
    } catch (const ShapeError& e) {
      PyErr_SetString(g_types.shape, e.what());
    } catch (const InvalidArgument& e) {
      PyErr_SetString(g_types.invalid_argument, e.what());
    } catch (const DTypeError& e) {
      PyErr_SetString(g_types.dtype, e.what());
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(g_types.out_of_memory, e.what());
    } catch (const NotImplementedError& e) {
      PyErr_SetString(g_types.unsupported, e.what());
    } catch (const DeviceError& e) {
      PyErr_SetString(g_types.device, e.what());
    } catch (const LinAlgError& e) {
      PyErr_SetString(g_types.linalg, e.what());
    } catch (const Error& e) {
      PyErr_SetString(g_types.error, e.what());
    }
  });
}

}  // namespace mpsim::python
