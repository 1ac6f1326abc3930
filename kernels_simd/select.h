// The selection family: where and clamp.
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_select_kernels(KernelTable& table);

}  // namespace mpsim::simd
