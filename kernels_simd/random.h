// The random family: uniform, normal, randint, bernoulli and dropout from Philox4x32-10.
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_random_kernels(KernelTable& table);

}  // namespace mpsim::simd
