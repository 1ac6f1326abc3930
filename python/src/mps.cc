// mpsim.mps: the simulated device's memory API (torch.mps names), events, profiler and the
// knobs tests use (support table, strict mode, fault injection).
#include "device_sim/mps.h"

#include <map>
#include <string>

#include "python/src/common.h"

namespace mpsim::python {
namespace {

using namespace pybind11::literals;

// Blocking calls that wait for the queue release the GIL: a queued command may drop the last
// reference to a NumPy-backed tensor, which needs the GIL to release the array.
template <class R>
auto released(R (*f)()) {
  return [f] {
    py::gil_scoped_release nogil;
    return f();
  };
}

py::dict stats_dict(const std::map<std::string, double>& stats) {
  py::dict out;
  for (const auto& [key, value] : stats) {
    // Counters and byte counts are integers; ratios and fragmentation are fractions.
    const bool fraction = key.find("ratio") != std::string::npos || key == "external_fragmentation";
    if (fraction) {
      out[key.c_str()] = value;
    } else {
      out[key.c_str()] = static_cast<long long>(value);
    }
  }
  return out;
}

py::dict record_dict(const mps::OpRecord& r) {
  return py::dict("op"_a = r.op, "shapes"_a = r.shapes, "dtype"_a = dtype_object(r.dtype),
                  "device"_a = r.device.to_string(), "fallback"_a = r.fallback,
                  "queued_ns"_a = r.queued_ns, "start_ns"_a = r.start_ns, "end_ns"_a = r.end_ns,
                  "bytes"_a = r.bytes, "flops"_a = r.flops,
                  "simulated_device_s"_a = r.simulated_device_s);
}

py::dict summary_dict(const mps::OpSummary& s) {
  return py::dict("op"_a = s.op, "calls"_a = s.calls, "fallbacks"_a = s.fallbacks,
                  "wall_s"_a = s.wall_s, "simulated_device_s"_a = s.simulated_device_s,
                  "bytes"_a = s.bytes, "flops"_a = s.flops);
}

}  // namespace

void init_mps(py::module_& parent) {
  py::module_ m = parent.def_submodule("mps", "The simulated Apple GPU (torch.mps's API).");
  m.def("is_available", &mps::is_available);
  m.def("device_count", &mps::device_count);
  m.def("synchronize", &wait_for_device,
        "Waits for every queued command (Ctrl-C interrupts the wait, not the commands); raises "
        "the first failure raised inside one.");
  m.def("current_allocated_memory", released(&mps::current_allocated_memory));
  m.def("driver_allocated_memory", released(&mps::driver_allocated_memory));
  m.def("recommended_max_memory", &mps::recommended_max_memory);
  m.def("memory_allocated", released(&mps::memory_allocated));
  m.def("memory_reserved", released(&mps::memory_reserved));
  m.def("max_memory_allocated", released(&mps::max_memory_allocated));
  m.def("max_memory_reserved", released(&mps::max_memory_reserved));
  m.def("reset_peak_memory_stats", released(&mps::reset_peak_memory_stats));
  m.def("memory_stats", [] {
    std::map<std::string, double> stats;
    {
      py::gil_scoped_release nogil;
      stats = mps::memory_stats();
    }
    return stats_dict(stats);
  });
  m.def("empty_cache", released(&mps::empty_cache));
  m.def("set_per_process_memory_fraction", &mps::set_per_process_memory_fraction, "fraction"_a);
  m.def("set_watermark_ratios", &mps::set_watermark_ratios, "high"_a, "low"_a);
  m.def("high_watermark_ratio", &mps::high_watermark_ratio);
  m.def("low_watermark_ratio", &mps::low_watermark_ratio);
  m.def("properties", [] {
    const mps::DeviceProperties& p = mps::properties();
    return py::dict("name"_a = p.name, "profile"_a = p.profile, "memory_bytes"_a = p.memory_bytes,
                    "recommended_max_memory"_a = p.recommended_max_memory,
                    "max_buffer_length"_a = p.max_buffer_length,
                    "bandwidth_bytes_per_s"_a = p.bandwidth_bytes_per_s,
                    "fp32_flops_per_s"_a = p.fp32_flops_per_s,
                    "fp16_flops_per_s"_a = p.fp16_flops_per_s,
                    "launch_overhead_s"_a = p.launch_overhead_s);
  });
  m.def(
      "supports",
      [](const std::string& op, py::handle dtype) {
        return mps::supports(find_op(op), to_dtype(dtype));
      },
      "op"_a, "dtype"_a, "Whether the device runs (op, dtype) itself (else: fallback).");
  m.def(
      "set_op_enabled",
      [](const std::string& op, bool enabled) { mps::set_op_enabled(find_op(op), enabled); },
      "op"_a, "enabled"_a, "Disables an op on the device to exercise the fallback path.");
  m.def(
      "op_enabled", [](const std::string& op) { return mps::op_enabled(find_op(op)); }, "op"_a);
  m.def("set_strict", &mps::set_strict, "enabled"_a);
  m.def("strict", &mps::strict);
  m.def("fail_allocation", &mps::fail_allocation, "n"_a,
        "Tests: the n-th device allocation from now fails with OutOfMemoryError (0 cancels).");
  m.def("fail_command", &mps::fail_command, "n"_a,
        "Tests: the n-th command submitted from now fails when it runs (0 cancels).");

  py::class_<mps::Event>(m, "Event", "A marker in the device queue (torch.mps.Event).")
      .def(py::init([](bool /*enable_timing*/) { return mps::Event(); }), "enable_timing"_a = false,
           "Events always record times; enable_timing is accepted "
           "for torch compatibility.")
      .def("record", &mps::Event::record, py::call_guard<py::gil_scoped_release>())
      .def("wait", &mps::Event::wait, py::call_guard<py::gil_scoped_release>())
      .def("query", &mps::Event::query)
      .def("synchronize", &mps::Event::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("elapsed_time", &mps::Event::elapsed_time, "end_event"_a,
           "Milliseconds from this event to end_event, both recorded and completed.");

  py::module_ prof = m.def_submodule("profiler", "Per-op records of the mps device.");
  prof.def("start", &mps::profiler::start);
  prof.def("stop", &mps::profiler::stop);
  prof.def("enabled", &mps::profiler::enabled);
  prof.def("records", [] {
    py::list out;
    for (const mps::OpRecord& r : mps::profiler::records()) out.append(record_dict(r));
    return out;
  });
  prof.def("summary", [] {
    py::list out;
    for (const mps::OpSummary& s : mps::profiler::summary()) out.append(summary_dict(s));
    return out;
  });
  prof.def("summary_table", &mps::profiler::summary_table);
  prof.def("chrome_trace_json", &mps::profiler::chrome_trace_json);
  prof.def("export_chrome_trace", &mps::profiler::export_chrome_trace, "path"_a);
}

}  // namespace mpsim::python
