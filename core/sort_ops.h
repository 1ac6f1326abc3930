// Sorting and scans along a dim (core/sort_ops.cc; kernels: kernels_simd/sort.cc, scan.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "core/tensor.h"

namespace mpsim {

// (values, int64 indices) of x ordered along dim: ascending with NaN last, or descending with
// NaN first (torch's order); equal values keep their order (stable).
std::pair<Tensor, Tensor> sort(const Tensor& x, std::int64_t dim = -1, bool descending = false);

// Running reductions along dim. cumsum and cumprod: integer and bool inputs accumulate in int64
// (torch's), dtype casts the input first; floats accumulate in double (compensated sums) and
// round once per output. logcumsumexp: floats only. cummax, cummin: (values, int64 indices),
// NaN sticks once seen, an equal value takes the later index (torch's).
Tensor cumsum(const Tensor& x, std::int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, std::int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor logcumsumexp(const Tensor& x, std::int64_t dim);
std::pair<Tensor, Tensor> cummax(const Tensor& x, std::int64_t dim);
std::pair<Tensor, Tensor> cummin(const Tensor& x, std::int64_t dim);

}  // namespace mpsim
