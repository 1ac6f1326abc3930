// The dispatcher: sends a validated op call to its device's backend, or to the cpu fallback.
#pragma once

#include <cstdint>

#include "core/backend.h"

namespace mpsim {

// Runs `call` on the backend of its outputs' device. When that backend lacks the (op, dtype)
// kernel and fallback is enabled, synchronizes the device and runs the cpu kernel on the same
// (unified) memory, warning once per op; otherwise throws NotImplementedError.
void dispatch(OpCall call);

// Fallback policy: initialised from MPSIM_ENABLE_FALLBACK=1, changeable at run time.
void set_fallback_enabled(bool enabled);
bool fallback_enabled();
// Counts a call of `op` that a front end runs on the cpu for a tensor on `device` (a
// composition with no device kernels: complex arithmetic in float64) and warns once per op, as
// the dispatcher's fallback; throws NotImplementedError naming the device when fallback is off.
void note_fallback(OpId op, Device device);
// Number of calls of `op` that ran on the cpu fallback path since start-up.
std::int64_t fallback_count(OpId op);

}  // namespace mpsim
