// pow(x, y) of float32, float16 and bfloat16 values, correctly rounded (Note [correctly
// rounded pow]).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/dtype.h"

namespace mpsim::simd {

// Note [correctly rounded pow]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// pow of a float32, float16 or bfloat16 x and y returns the exact x^y rounded once to the
// output type (ties to even, subnormals and overflow included), with glibc's results for
// zeros, infinities, NaN and negative x (x^y of a negative x is NaN unless y is an integer).
// Three stages, each only for what the one before cannot decide:
//  1. glibc's pow in double, within 0.52 double ULP of x^y (glibc's stated bound). The output
//     rounding of every double within kGlibcMarginUlps = 4 ULP of it (8x the bound) is the
//     same unless x^y lies within 2^-50 of a rounding boundary of the output type: then the
//     two ends of that interval round differently and stage 2 decides. For irrational powers
//     about 2^-27 of float32 results get there (11-38 of the 2^32 inputs of y = 2.2, 0.1, -0.3,
//     1/3, ...: tests/numerics/power_sweep), besides the exact midpoints.
//  2. Exact powers (pow_bracket): x^y is a dyadic rational only when x = a 2^ex (a odd) and
//     y = p / 2^k (p odd, or k = 0) with a a perfect 2^k-th power c^(2^k), ex p / 2^k an
//     integer and p > 0 (or a = 1). Since a < 2^24, c >= 3 forces 2^k <= 15, so only k <= 3
//     can be exact. Those powers, c^p 2^(ex p / 2^k), are computed exactly in 128-bit integers
//     (c^p < 2^128) and rounded once. Every x^y that is a midpoint of the output type (25 or
//     fewer significant bits) is among them, and ties take the even neighbour as IEEE rounding.
//  3. Otherwise x^y is irrational or a dyadic of more than 128 bits, and quad precision
//     decides: powq (libquadmath, x86-64) or powl (binary128 long double, AArch64), taken as
//     within 2^-100 relative (the quad routines are Cody-Waite and table based to about 2^-112;
//     correct_rounding_test measures them against 256-bit MPFR on stage-2 inputs). Both ends of
//     that interval are rounded to odd in double (exact for the later rounding to 24 or fewer
//     bits) and to the output type; they agree unless x^y lies within 2^-100 of a boundary.
//     No float32 pair is known to: by the counting argument (2^62 finite pairs, uniform
//     distances to the nearest midpoint) the chance that one does is about 2^-14, and the
//     exhaustive sweeps over x for fixed y (tests/numerics/power_sweep against MPFR; docs/
//     numerics.md) meet none. Where the ends did differ, the quad value's rounding is returned.
// Dense float32 rows with a scalar exponent evaluate stage 0 in double lanes (PowCrRowF32,
// binary.cc) and send only the lanes it cannot decide here.
inline constexpr std::uint64_t kGlibcMarginUlps = 4;

// Round-to-odd doubles of x^y: lo and hi bracket it (equal when x^y is computed exactly), mid is
// the best estimate. For finite nonzero x and y whose power lies in double's normal range;
// x < 0 only with an integral y.
struct PowBracket {
  double lo, mid, hi;
};
PowBracket pow_bracket(double x, double y);

template <class T>
std::uint32_t pow_result_bits(T v) {
  if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<std::uint32_t>(v);
  } else {
    return v.bits;
  }
}

// x^y rounded once to T (float, Half or BFloat16); x and y are values of T.
template <class T>
T pow_correctly_rounded(double x, double y) {
  const double r = std::pow(x, y);
  const std::uint64_t u = std::bit_cast<std::uint64_t>(r);
  const std::uint64_t magnitude = u & ~(std::uint64_t{1} << 63);
  // Zeros, infinities, NaN, and results far outside T's range (below 2^-1000 or above 2^1000)
  // round as r does.
  if (magnitude < 0x0170000000000000ULL || magnitude > 0x7e70000000000000ULL) return T(r);
  const T lo = T(std::bit_cast<double>(u - kGlibcMarginUlps));
  const T hi = T(std::bit_cast<double>(u + kGlibcMarginUlps));
  if (pow_result_bits(lo) == pow_result_bits(hi)) return lo;
  const PowBracket b = pow_bracket(x, y);
  return T(b.mid);
}

}  // namespace mpsim::simd
