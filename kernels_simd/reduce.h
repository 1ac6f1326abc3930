// The reduction family (sum, mean, prod, var, std, amax, amin, logsumexp, argmax, argmin) and
// softmax / log_softmax.
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_reduce_kernels(KernelTable& table);
void register_softmax_kernels(KernelTable& table);

}  // namespace mpsim::simd
