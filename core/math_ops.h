// The math family: elementwise functions evaluated in double (glibc's functions, or
// kernels_simd/math_unary.cc's own within a few double ULPs) and rounded once to the output
// dtype, so float32, float16 and bfloat16 results are within one ULP of the exact value
// (docs/ops.md, "Math functions"); float64 results carry the double evaluation's error.
// The list of ops: core/math_op_list.h.
#pragma once

#include <optional>

#include "core/math_op_list.h"
#include "core/scalar.h"
#include "core/tensor.h"

namespace mpsim {

#define MPSIM_DECLARE_MATH_OP(name, doc, rule) Tensor name(const Tensor& x);
MPSIM_MATH_OPS(MPSIM_DECLARE_MATH_OP)
#undef MPSIM_DECLARE_MATH_OP

#define MPSIM_DECLARE_BINARY_MATH_OP(name, doc, rule)    \
  Tensor name(const Tensor& input, const Tensor& other); \
  Tensor name(const Tensor& input, Scalar other);
MPSIM_BINARY_MATH_OPS(MPSIM_DECLARE_BINARY_MATH_OP)
#undef MPSIM_DECLARE_BINARY_MATH_OP

Tensor elu(const Tensor& x, Scalar alpha = 1, Scalar scale = 1, Scalar input_scale = 1);
Tensor celu(const Tensor& x, Scalar alpha = 1);
Tensor logit(const Tensor& x, std::optional<double> eps = std::nullopt);
// Rounded half to even at `decimals` decimal places (negative: tens, hundreds, ...), in double.
Tensor round(const Tensor& x, std::int64_t decimals = 0);

}  // namespace mpsim
