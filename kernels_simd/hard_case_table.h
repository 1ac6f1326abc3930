// The float32 inputs of the guarded unary ops whose long double evaluation misrounds (the exact
// value lies within 2^-64 of a rounding boundary), with their correctly rounded results (MPFR).
// Generated over all 2^32 inputs of every guarded op by
//     build/tests/numerics/ulp_sweep --hard-table 1
// (Note [hard lanes] in vec_math-inl.h). Both are log1p(x) = x - x^2/2 + x^3/3 - ... with
// x = +-(3 2^21 +- 3) 2^-42, where x - x^2/2 is a midpoint and x^3/3 decides, 2^-66.4 away.
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
};

}  // namespace mpsim::simd
