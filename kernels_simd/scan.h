// The scan family's kernels (kernels_simd/scan.cc).
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_scan_kernels(KernelTable& table);

}  // namespace mpsim::simd
