// The binary family (arithmetic and comparison, with broadcasting done by the front end).
#pragma once

#include "core/backend.h"

namespace mpsim::simd {

void register_binary_kernels(KernelTable& table);

}  // namespace mpsim::simd
