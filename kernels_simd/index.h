// The gather family (gather, index_select): out[e] = source[e + index[e] * stride].
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_index_kernels(KernelTable& table);

}  // namespace mpsim::simd
