// The float32 inputs of the guarded unary ops whose long double evaluation misrounds (the exact
// value lies within 2^-64 of a rounding boundary), with their correctly rounded results (MPFR).
// Generated over all 2^32 inputs of every guarded op by
//     build/tests/numerics/ulp_sweep --hard-table 1
// (Note [hard lanes] in vec_math-inl.h). All lie near 0, where a short series is a midpoint
// and its next term decides: log1p(x) = x - x^2/2 + x^3/3 at x = +-(3 2^21 +- 3) 2^-42 (x^3/3
// 2^-66.4 away), sigmoid(x) = 1/2 + x/4 - x^3/48 at five x of 2^-23..2^-20.
#pragma once

#include "kernels_simd/unary.h"

namespace mpsim::simd {

struct HardCase {
  UnaryKind kind;
  float x;
  float y;
};

inline constexpr HardCase kHardCases[] = {
    {UnaryKind::Log1p, -0x1.7ffffap-21f, -0x1.800002p-21f},
    {UnaryKind::Log1p, 0x1.800006p-21f, 0x1.7ffffep-21f},
    {UnaryKind::Sigmoid, -0x1.6p-21f, 0x1.fffff6p-2f},
    {UnaryKind::Sigmoid, -0x1.cp-22f, 0x1.fffffap-2f},
    {UnaryKind::Sigmoid, -0x1.8p-23f, 0x1.fffffep-2f},
    {UnaryKind::Sigmoid, 0x1.8p-22f, 0x1.000002p-1f},
    {UnaryKind::Sigmoid, 0x1.cp-21f, 0x1.000006p-1f},
};

}  // namespace mpsim::simd
