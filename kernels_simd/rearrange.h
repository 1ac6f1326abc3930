// The rearrange family: copies that reorder elements or replace some of them by zero
// (flip, tril, triu).
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_rearrange_kernels(KernelTable& table);

}  // namespace mpsim::simd
