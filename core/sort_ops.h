// Sorting along a dim (core/sort_ops.cc; kernel: kernels_simd/sort.cc).
#pragma once

#include <cstdint>
#include <utility>

#include "core/tensor.h"

namespace mpsim {

// (values, int64 indices) of x ordered along dim: ascending with NaN last, or descending with
// NaN first (torch's order); equal values keep their order (stable).
std::pair<Tensor, Tensor> sort(const Tensor& x, std::int64_t dim = -1, bool descending = false);

}  // namespace mpsim
