// The binary family (arithmetic and comparison, with broadcasting done by the front end).
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_binary_kernels(KernelTable& table);

}  // namespace mpsim::simd
