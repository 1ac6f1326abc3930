// The convolution family: conv2d as an implicit GEMM (gemm.h, Im2Col), and conv_transpose2d
// as one such GEMM per output phase (conv_transpose.cc, Note [transposed phases]).
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_conv_kernels(KernelTable& table);

// Defined in conv_transpose.cc; registered by register_conv_kernels.
KernelStatus conv_transpose2d_kernel(const KernelCall& call);

}  // namespace mpsim::simd
