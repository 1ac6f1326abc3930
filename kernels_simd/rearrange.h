// The rearrange family: copies that reorder elements or replace some of them by zero
// (flip, tril, triu).
#pragma once

#include "core/backend.h"

namespace mpsim::simd {

void register_rearrange_kernels(KernelTable& table);

}  // namespace mpsim::simd
