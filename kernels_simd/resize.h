// The resizing family: interpolate (nearest, bilinear).
#pragma once

#include "core/backend.h"

namespace mpsim::simd {

void register_resize_kernels(KernelTable& table);

}  // namespace mpsim::simd
