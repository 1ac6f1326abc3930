// The sort family's kernel (kernels_simd/sort.cc).
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_sort_kernels(KernelTable& table);

}  // namespace mpsim::simd
