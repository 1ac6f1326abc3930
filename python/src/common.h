// Shared pieces of the `mpsim` Python module: conversions between Python objects and mpsim
// values. The binding layer holds no numerics: it converts, calls the library, converts back.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "core/mpsim.h"

namespace mpsim::python {

namespace py = pybind11;

// The Python face of a DType: one object per dtype (mpsim.float32 is mpsim.float32).
struct PyDType {
  DType value;
};

// mpsim.dtype objects are created once; dtype_object returns that object.
void init_dtypes(py::module_& m);
py::object dtype_object(DType dtype);
// Accepts an mpsim.dtype, a name ("float16", "half", "torch.float16"), a NumPy dtype or scalar
// type (np.float16) or a torch dtype (torch.float16). Throws DTypeError otherwise.
DType to_dtype(py::handle obj);
// Accepts an mpsim.device or a string ("cpu", "mps", "mps:0"); a torch.device by its str().
Device to_device(py::handle obj);

// The DType of a NumPy dtype; DTypeError for dtypes mpsim lacks (complex, int16, ...).
DType from_numpy_dtype(const py::dtype& dt);

// A cpu tensor sharing the array's memory when its layout allows (aligned, writeable, native
// byte order, non-negative strides that are multiples of the item size); a copy otherwise.
Tensor from_numpy(const py::array& a);
// Anything tensor-like as a tensor on `device`: an mpsim tensor (as is, when already there), a
// NumPy array (shared when it can be, then moved), an object with __dlpack__ (shared), a NumPy
// scalar, or nested sequences of numbers (copied; Python floats become float32 as in torch).
Tensor as_tensor(py::handle obj, std::optional<Device> device = std::nullopt);
// torch.tensor semantics: always a new tensor (a copy), converted to `dtype` when given.
Tensor tensor_from_data(py::handle data, std::optional<DType> dtype, Device device);

// t's values as an ndarray. A cpu tensor of a NumPy dtype shares its memory with the result;
// an mps tensor is synchronized and copied to the host first; bfloat16 gives float32 values
// (exact; NumPy has no bfloat16).
py::array to_numpy(const Tensor& t);

// Waits for the mps queue with the GIL released, polling for signals: Ctrl-C raises
// KeyboardInterrupt and leaves the queued work running (the device stays usable). Rethrows a
// failure raised inside a queued command, as mps::synchronize.
void wait_for_device();
// wait_for_device() when t lives on the mps device.
void wait_for(const Tensor& t);

// A Python int outside int64 (2**70), where an int64 is needed. Its message lacks the op:
// with_context adds it ("[view] size: integer ... (Overflow when unpacking long)").
class IntegerOverflow : public InvalidArgument {
  using InvalidArgument::InvalidArgument;
};

// A Python int (or an object with __index__) as int64; IntegerOverflow when it does not fit.
std::int64_t int64_of(py::handle obj);

// Runs f(); an IntegerOverflow it raises becomes an InvalidArgument whose message starts with
// `where` ("[add] other: ").
template <class F>
decltype(auto) with_context(const std::string& where, F&& f) {
  try {
    return f();
  } catch (const IntegerOverflow& e) {
    throw InvalidArgument(where + e.what());
  }
}

// A Python number (bool, int, float or NumPy scalar) as a Scalar; nullopt for anything else.
// IntegerOverflow for an int outside int64.
std::optional<Scalar> to_scalar(py::handle obj);
// A Scalar as the Python number it holds.
py::object scalar_object(const Scalar& s);

void init_errors(py::module_& m);
void init_tensor(py::module_& m);
void init_dlpack(py::module_& m);
void init_runtime(py::module_& m);
void init_mps(py::module_& m);
void init_ops(py::module_& m);

// DLPack exchange (dlpack.cc): a "dltensor" capsule that shares t's memory, and the reverse.
py::capsule to_dlpack(const Tensor& t);
Tensor from_dlpack(py::handle obj);

}  // namespace mpsim::python
