// Correctly rounded float32 results for the math family's elementary functions (Note [math
// family hard lanes]): the test of a double result against the float grid's rounding boundaries,
// the long double slow path, and its table of the inputs long double misrounds.
#pragma once

#include <array>
#include <cmath>

#include "kernels_simd/math_unary.h"
#include "kernels_simd/scalar_math.h"  // rounds_safely_to_f32

namespace mpsim::simd {

// Note [math family hard lanes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// acos, asin, atan, acosh, asinh, atanh, cosh, sinh, tan, exp2, log2, log10 and erfc evaluate
// glibc's double function (within 5 double ulps, 2^-50.6 relative: glibc's libm-test-ulps for
// x86_64, erfc the largest) and round it to float once. That is the correctly rounded float
// unless the exact value lies within the double error of a rounding boundary (a midpoint of the
// float grid, subnormal grid and overflow threshold included). rounds_safely_to_f32 tests each
// double result against a margin of 2^10 double ulps (2^-42 relative, 2^8 times the error), as
// Note [hard lanes] does for the unary family; the lanes it rejects (probability ~2^-18) are
// recomputed by math_hard_f32 in long double (glibc's x87 functions, within a few ulps of a
// 64-bit significand, 2^-61 relative), correct unless the exact value is within 2^-61 of a
// boundary. kMathHardCases would list every float32 input where that happens, with its
// correctly rounded result (MPFR at 256 bits); over all 2^32 inputs of each function
//     build/tests/numerics/ulp_sweep --hard-table 1 --op NAME
// finds none, so it is empty.
// The exhaustive sweep (ulp_sweep --op NAME --stride 1) checks every result against MPFR
// (docs/numerics.md). These kernels are scalar code, the same on every SIMD target; on targets
// with FMA, contiguous float32 rows of 12 of the functions run float lanes first and send here
// only the lanes those cannot certify (Note [correctly rounded float lanes], unary_cr-inl.h).

inline bool math_guarded(MathKind kind) {
  switch (kind) {
    case MathKind::acos:
    case MathKind::asin:
    case MathKind::atan:
    case MathKind::acosh:
    case MathKind::asinh:
    case MathKind::atanh:
    case MathKind::cosh:
    case MathKind::sinh:
    case MathKind::tan:
    case MathKind::exp2:
    case MathKind::log2:
    case MathKind::log10:
    case MathKind::erfc:
      return true;
    default:
      return false;
  }
}

struct MathHardCase {
  MathKind kind;
  float x;
  float y;
};

inline constexpr std::array<MathHardCase, 0> kMathHardCases = {};

// The correctly rounded float of f(x) for a guarded function's hard lane.
inline float math_hard_f32(MathKind kind, float x) {
  for (const MathHardCase& h : kMathHardCases) {
    if (h.kind == kind && h.x == x) return h.y;
  }
  const long double v = x;
  long double r = v;
  switch (kind) {
    case MathKind::acos:
      r = std::acos(v);
      break;
    case MathKind::asin:
      r = std::asin(v);
      break;
    case MathKind::atan:
      r = std::atan(v);
      break;
    case MathKind::acosh:
      r = std::acosh(v);
      break;
    case MathKind::asinh:
      r = std::asinh(v);
      break;
    case MathKind::atanh:
      r = std::atanh(v);
      break;
    case MathKind::cosh:
      r = std::cosh(v);
      break;
    case MathKind::sinh:
      r = std::sinh(v);
      break;
    case MathKind::tan:
      r = std::tan(v);
      break;
    case MathKind::exp2:
      r = std::exp2(v);
      break;
    case MathKind::log2:
      r = std::log2(v);
      break;
    case MathKind::log10:
      r = std::log10(v);
      break;
    case MathKind::erfc:
      r = std::erfc(v);
      break;
    default:
      break;
  }
  return static_cast<float>(r);
}

}  // namespace mpsim::simd
