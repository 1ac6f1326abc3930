// The matmul family: matmul, mm, bmm, addmm, baddbmm, linear (one batched GEMM kernel).
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_matmul_kernels(KernelTable& table);

}  // namespace mpsim::simd
