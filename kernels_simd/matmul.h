// The matmul family: matmul, mm, bmm, addmm, baddbmm, linear (one batched GEMM kernel).
#pragma once

#include "core/backend.h"

namespace mpsim::simd {

void register_matmul_kernels(KernelTable& table);

}  // namespace mpsim::simd
