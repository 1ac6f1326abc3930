// Process settings: precision (with a per-thread scope), threads, random seed, cpu fallback.
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "python/src/common.h"

namespace mpsim::python {
namespace {

using namespace pybind11::literals;

// `with mpsim.precision("fast"):` — a PrecisionGuard for the with-block. PrecisionGuard is per
// thread, so the block must exit on the thread that entered it (asyncio tasks that hop threads
// would corrupt another thread's setting: that raises RuntimeError instead).
class PrecisionScope {
 public:
  explicit PrecisionScope(Precision p) : precision_(p) {}

  PrecisionScope& enter() {
    if (guard_) throw py::value_error("this precision scope is already active");
    guard_.emplace(precision_);
    thread_ = std::this_thread::get_id();
    return *this;
  }
  void exit() {
    if (!guard_) throw py::value_error("this precision scope is not active");
    if (thread_ != std::this_thread::get_id()) {
      throw std::runtime_error("a precision scope must exit on the thread that entered it");
    }
    guard_.reset();
  }
  std::string name() const { return std::string(precision_name(precision_)); }

 private:
  Precision precision_;
  std::optional<PrecisionGuard> guard_;
  std::thread::id thread_;
};

}  // namespace

void init_runtime(py::module_& m) {
  m.def(
      "set_precision", [](const std::string& name) { set_precision(parse_precision(name)); },
      "precision"_a,
      "Sets the process-wide precision: 'golden' (the default) or 'fast' (docs/numerics.md).");
  m.def(
      "get_precision", [] { return std::string(precision_name(precision())); },
      "The precision an op called now on this thread uses ('golden' or 'fast').");
  py::class_<PrecisionScope>(m, "precision",
                             "with mpsim.precision('fast'): ... — the precision for the block, "
                             "on this thread only (nestable).")
      .def(py::init([](const std::string& name) {
             return std::make_unique<PrecisionScope>(parse_precision(name));
           }),
           "precision"_a)
      .def("__enter__", &PrecisionScope::enter, py::return_value_policy::reference_internal)
      .def("__exit__",
           [](PrecisionScope& s, py::args) {
             s.exit();
             return false;
           })
      .def("__repr__",
           [](const PrecisionScope& s) { return "mpsim.precision('" + s.name() + "')"; });

  m.def("set_num_threads", &set_num_threads, "n"_a,
        "Caps the threads every cpu kernel may use; results never depend on it.");
  m.def("get_num_threads", &num_threads);
  m.def("manual_seed", &manual_seed, "seed"_a,
        "Restarts the Philox stream that rand/randn/... draw from (the same numbers on cpu and "
        "mps, for any thread count).");
  m.def("initial_seed", &initial_seed);
  m.def("set_fallback_enabled", &set_fallback_enabled, "enabled"_a,
        "Whether ops the mps device lacks run on the cpu kernels (MPSIM_ENABLE_FALLBACK=1).");
  m.def("fallback_enabled", &fallback_enabled);
  m.def(
      "fallback_count", [](const std::string& op) { return fallback_count(find_op(op)); }, "op"_a,
      "Calls of `op` (an op-list name) that ran on the cpu fallback path.");
}

}  // namespace mpsim::python
