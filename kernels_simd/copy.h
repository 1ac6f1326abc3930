// The copy family: strided copy with dtype conversion, fill, arange.
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_copy_kernels(KernelTable& table);

}  // namespace mpsim::simd
