// The pooling family: avg_pool2d, max_pool2d (with indices), adaptive_avg_pool2d.
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_pool_kernels(KernelTable& table);

}  // namespace mpsim::simd
