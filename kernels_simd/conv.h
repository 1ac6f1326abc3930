// The convolution family: conv2d as an implicit GEMM (gemm.h, Im2Col).
#pragma once

#include "core/backend.h"

namespace mpsim::simd {

void register_conv_kernels(KernelTable& table);

}  // namespace mpsim::simd
