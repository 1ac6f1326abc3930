// The extension module mpsim._C; the package mpsim (python/mpsim/__init__.py) re-exports it.
#include "python/src/common.h"

PYBIND11_MODULE(_C, m) {
  using namespace mpsim::python;
  m.doc() = "mpsim's C++ core: tensors, ops, DLPack, the simulated mps device.";
  init_errors(m);
  init_dtypes(m);
  init_tensor(m);
  init_dlpack(m);
  init_runtime(m);
  init_mps(m);
  init_ops(m);  // last: hand-written bindings of the same name take precedence
}
