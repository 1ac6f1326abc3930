// The scatter family's kernels: scatter and nonzero (kernels_simd/scatter.cc; Notes [scatter
// order] and [scatter rounding] there).
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_scatter_kernels(KernelTable& table);

}  // namespace mpsim::simd
