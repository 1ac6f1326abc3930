// The normalization family: layer_norm, rms_norm, group_norm, batch_norm (inference).
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_norm_kernels(KernelTable& table);

}  // namespace mpsim::simd
