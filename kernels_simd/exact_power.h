// pow(x, y) of a float32, float16 or bfloat16 x for the exponents whose power is a few exact
// IEEE operations: y = 0, 1/2, 1, 2, 3, -1, -2 (Note [exact powers]).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace mpsim::simd {

// Note [exact powers]
// pow of a float32, float16 or bfloat16 is x^y correctly rounded (Note [correctly rounded pow],
// pow_cr.h), with glibc's results for zeros, infinities and NaN. For the exponents below,
// the power of a float32, float16 or bfloat16 x (24 or fewer significant bits) is one or two IEEE
// operations in double, and exact_power returns that double:
//   y = 1/2: sqrt(x); y = -1: 1 / x; y = 2: x * x (exact); y = 0, 1: 1 and x;
//   y = 3:   (x * x) * x, the square exact, the product rounded once;
//   y = -2:  1 / (x * x), the square exact, the quotient rounded once.
// Rounding that double to the output type gives the exact power's rounding: for a square root
// or quotient of floats the second rounding is harmless (53 >= 2 * 24 + 2), and for the
// others it could differ only where the double lands exactly on a rounding boundary of the
// output type with a nonzero remainder, which no float32, float16 or bfloat16 x does (the
// cube and inverse square depend only on x's mantissa for normal results, so the 2^23 float
// mantissas and the inputs of subnormal results were checked with fma's exact remainders;
// the 16-bit types by PowTest's exhaustive comparison), so the result is correctly rounded;
// a comparison of all 2^32 float32 inputs per exponent with MPFR finds no difference
// (`tests/numerics/power_sweep`, which runs mpsim::pow itself on every SIMD target). Zeros,
// infinities and NaN take glibc's own special-case steps (x^2, sign-flipped for an odd y and
// a negative x, NaN included, inverted for y < 0), a negative finite x with y = 1/2 glibc's
// (x - x) / (x - x): glibc's NaN payloads and signs. In vectors: PowRow in binary.cc.
enum class ExactPower : std::uint8_t { None, Zero, Half, One, Two, Three, MinusOne, MinusTwo };

inline ExactPower exact_power_of(double y) {
  if (y == 0) return ExactPower::Zero;
  if (y == 0.5) return ExactPower::Half;
  if (y == 1) return ExactPower::One;
  if (y == 2) return ExactPower::Two;
  if (y == 3) return ExactPower::Three;
  if (y == -1) return ExactPower::MinusOne;
  if (y == -2) return ExactPower::MinusTwo;
  return ExactPower::None;
}

// pow(x, y) for y of kind e (not None), x a value of at most 24 significant bits.
inline double exact_power(double x, ExactPower e) {
  if (e == ExactPower::Zero) return 1;  // glibc: pow(x, 0) = 1, NaN x included
  const bool odd = e == ExactPower::One || e == ExactPower::Three || e == ExactPower::MinusOne;
  const bool negative_y = e == ExactPower::MinusOne || e == ExactPower::MinusTwo;
  if (x == 0 || !std::isfinite(x)) {  // glibc's zero, infinity and NaN steps
    double x2 = x * x;
    // The sign flips as bits: the compiler may rewrite -(x * x) as (-x) * x, whose NaN is
    // either operand's.
    if (std::signbit(x) && odd) {
      x2 = std::bit_cast<double>(std::bit_cast<std::uint64_t>(x2) ^ (std::uint64_t{1} << 63));
    }
    return negative_y ? 1 / x2 : x2;
  }
  switch (e) {
    case ExactPower::Half:
      return x < 0 ? (x - x) / (x - x) : std::sqrt(x);
    case ExactPower::One:
      return x;
    case ExactPower::Two:
      return x * x;
    case ExactPower::Three:
      return x * x * x;
    case ExactPower::MinusOne:
      return 1 / x;
    case ExactPower::MinusTwo:
      return 1 / (x * x);
    default:
      return x;
  }
}

// Note [integer powers] (binary.cc): the integral exponents 4 <= |y| <= kIntPowMax, which
// binary powering in double lanes serves.
inline constexpr float kIntPowMax = 64;
inline bool integer_power(float y) {
  return std::nearbyint(y) == y && std::fabs(y) >= 4 && std::fabs(y) <= kIntPowMax;
}
// y an odd integer: x^y keeps a negative x's sign.
inline bool odd_integer(float y) {
  return std::nearbyint(y) == y && std::fabs(std::fmod(y, 2.0f)) == 1.0f;
}

}  // namespace mpsim::simd
