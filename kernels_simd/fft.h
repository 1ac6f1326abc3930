// The Fourier family's kernel (kernels_simd/fft.cc, Note [Fourier transforms]).
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_fft_kernels(KernelTable& table);

}  // namespace mpsim::simd
