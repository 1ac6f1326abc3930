#include "core/dispatch.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/env.h"
#include "core/error.h"
#include "core/runtime.h"

namespace mpsim {
namespace {

struct FallbackState {
  std::atomic<bool> enabled{[] { return detail::env_flag("MPSIM_ENABLE_FALLBACK", false); }()};
  std::array<std::atomic<std::int64_t>, kNumOps> counts{};
  std::array<std::atomic<bool>, kNumOps> warned{};
};

FallbackState& fallback_state() {
  static FallbackState state;
  return state;
}

}  // namespace

void set_fallback_enabled(bool enabled) { fallback_state().enabled.store(enabled); }
bool fallback_enabled() { return fallback_state().enabled.load(); }
std::int64_t fallback_count(OpId op) { return fallback_state().counts[op.index()].load(); }

void note_fallback(OpId op, Device device) {
  const std::string name(op.name());
  if (!fallback_enabled()) {
    throw NotImplementedError("[" + name + "] the operator '" + name +
                              "' is not implemented on device " + device.to_string() +
                              " for these dtypes (it runs in float64 on the cpu). Set "
                              "MPSIM_ENABLE_FALLBACK=1 (or call "
                              "mpsim::set_fallback_enabled(true)) to run it on the cpu instead");
  }
  FallbackState& state = fallback_state();
  state.counts[op.index()].fetch_add(1);
  if (!state.warned[op.index()].exchange(true)) {
    std::fprintf(stderr,
                 "mpsim warning: the operator '%s' is not supported on %s; it falls back to the "
                 "cpu (this warning is shown once per op)\n",
                 name.c_str(), device.to_string().c_str());
  }
}

void dispatch(OpCall call) {
  MPSIM_CHECK(!call.outputs.empty());
  call.precision = precision();  // the caller's, now (an mps op runs later on its queue)
  const Device device = call.outputs.front().device();
  Backend& backend = backend_for(device);
  if (backend.supports(call.op, call.dtype)) {
    backend.execute(std::move(call));
    return;
  }
  const std::string op(call.op.name());
  if (device.is_cpu() || !fallback_enabled()) {
    throw NotImplementedError("[" + op + "] the operator '" + op + "' for dtype " +
                              std::string(dtype_name(call.dtype)) +
                              " is not implemented on device " + device.to_string() +
                              (device.is_cpu() ? std::string()
                                               : ". Set MPSIM_ENABLE_FALLBACK=1 (or call "
                                                 "mpsim::set_fallback_enabled(true)) to run it on "
                                                 "the cpu instead"));
  }
  FallbackState& state = fallback_state();
  state.counts[call.op.index()].fetch_add(1);
  if (!state.warned[call.op.index()].exchange(true)) {
    std::fprintf(stderr,
                 "mpsim warning: the operator '%s' is not supported on %s; it falls back to the "
                 "cpu (this warning is shown once per op)\n",
                 op.c_str(), device.to_string().c_str());
  }
  // Unified memory: the cpu kernel runs on the device's buffers once the device is idle.
  backend.execute_fallback(std::move(call), backend_for(Device::cpu()));
}

}  // namespace mpsim
