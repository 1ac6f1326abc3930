// Every kernel family of kernels_simd, for backends that run them (cpu, and the simulated mps
// device, which runs the same kernels on its queue).
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

// Fills `table` with every family's kernels; the one list is in cpu_backend.cc.
void register_all_kernels(KernelTable& table);

}  // namespace mpsim::simd
