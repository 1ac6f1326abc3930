// The resizing family: interpolate (nearest, bilinear).
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_resize_kernels(KernelTable& table);

}  // namespace mpsim::simd
