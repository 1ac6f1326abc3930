// Scalar double-precision unary functions: the f64 path of the unary family, and the path of
// f32 lanes the SIMD code does not cover (NaN, infinities, huge arguments). Built on glibc's
// double functions, which are within 1 ULP; the composites (sigmoid, silu, gelu, softplus)
// use formulations free of cancellation, within 4 ULP in double (docs/numerics.md).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "kernels_simd/hard_case_table.h"
#include "kernels_simd/unary.h"

namespace mpsim::simd {

// sigmoid without overflow: e^-|x| only. sigmoid(-inf) = 0, as PyTorch.
inline double sigmoid_f64(double x) {
  const double e = std::exp(-std::fabs(x));
  return (x < 0 ? e : 1.0) / (1.0 + e);
}

// gelu(x) = x/2 erfc(-x/sqrt2). For x < 0 the rounding error d of y = -x/sqrt2 would cost
// 2 y^2 d/y relative (1000 ULP at x = -38); erfc(y + d) = erfc(y) - d erfc'(y) restores it,
// with d from an exact product (fma) against the two-part constant 1/sqrt2.
// From y = 26 (x < -36.77) erfc(y) nears and then enters the subnormal range while gelu, 18x
// larger, is still normal: the subnormal's lost bits cost up to 19 ULP. There gelu =
// -e^{-(y+d)^2} S(y) / sqrt(2 pi) (x / (y + d) = -sqrt2 exactly), S the asymptotic series
// sum_k (-1)^k (2k-1)!! / (2y^2)^k, whose first omitted term (k = 7) is below 2^-55; (y + d)^2
// = y2 + y2_lo + 2yd (y2_lo from an fma), and e^{-y2} is scaled by 2^128 so it stays normal:
// the exponent kScaleHi - y2, with kScaleHi = 128 ln2 rounded to y2's ULP (2^-43), is exact.
// Within 3.2 ULP (quad-precision oracle on aarch64, x in [-39, -36.75] in steps of 5e-6).
inline double gelu_erf_f64(double x) {
  constexpr double kSqrtHalfHi = 0.70710678118654757274;   // double(1/sqrt2)
  constexpr double kSqrtHalfLo = -4.8336466567264567e-17;  // 1/sqrt2 - kSqrtHalfHi
  // NaN: the input quieted, on every target (through the product below its sign would be
  // x's or -x's as the compiler orders the operands: the scalar target gave -x's)
  if (std::isnan(x)) return x + x;
  if (!(x < 0)) return 0.5 * x * std::erfc(-x * kSqrtHalfHi);
  const double y = -x * kSqrtHalfHi;
  const double d = std::fma(-x, kSqrtHalfHi, -y) + (-x) * kSqrtHalfLo;  // exact y - y_rounded
  if (y >= 26) {
    if (y > 27.5) return x * 0.0;  // below half the smallest subnormal: -0, or NaN for -inf
    constexpr double kScaleHi = 0x1.62e42fefa39f0p+6, kScaleLo = -1.124247479347874e-14;
    constexpr double kInvSqrt2PiHi = 0.3989422804014327, kInvSqrt2PiLo = -2.49232720227773e-17;
    const double y2 = y * y, y2_lo = std::fma(y, y, -y2);
    const double u = 0.5 / y2;
    const double s1 = u * (-1 + u * (3 + u * (-15 + u * (105 + u * (-945 + u * 10395)))));
    // e^{-(y+d)^2 + 128 ln2} = e^{kScaleHi - y2} (1 + t) to first order (|t| < 2^-42).
    const double t = s1 + (kScaleLo - y2_lo - 2 * y * d);
    const double scaled = kInvSqrt2PiHi + std::fma(kInvSqrt2PiHi, t, kInvSqrt2PiLo);
    return -(scaled * std::exp(kScaleHi - y2)) * 0x1p-128;
  }
  const double deriv = 1.12837916709551257390 * std::exp(-y * y);  // -erfc'(y) = 2/sqrt(pi) e^-y^2
  return 0.5 * x * (std::erfc(y) - d * deriv);
}

// silu(x) = x sigmoid(x). Below x = -708 sigmoid(x) = e^x is subnormal while x e^x stays normal
// down to -715 (and is subnormal with more bits than e^x below): x e^{x/2} e^{x/2}, formed
// left to right, keeps them (372 units of the last place lost at x = -745 otherwise).
inline double silu_f64(double x) {
  if (std::isnan(x)) return x + x;  // the input quieted, as gelu's (not x times sigmoid's NaN)
  if (x < -708) {  // 1 + e^x = 1 in double
    const double h = std::exp(0.5 * x);
    return (x * h) * h;
  }
  return x * sigmoid_f64(x);
}

// gelu(tanh) = x sigmoid(2z), z = sqrt(2/pi) (x + 0.044715 x^3). Where the result is small
// (z << 0), sigmoid(2z) ~ e^{2z} turns an absolute error d in z into a relative error 2d, so
// z is carried as hi + lo (fma products, two-part constants) and e^{2z} = (e^{hi} (1 + lo))^2.
inline double gelu_tanh_f64(double x) {
  constexpr double kCHi = 0.7978845608028654, kCLo = -4.98465440455546e-17;  // sqrt(2/pi)
  constexpr double kKHi = 0.044715, kKLo = 2.1960211427085595e-18;           // 0.044715
  if (std::isnan(x) || x == -INFINITY) return NAN;                           // PyTorch: -inf * 0
  // Beyond 1e10 the result is x or -0 to double precision (and x^3 could overflow below).
  if (std::fabs(x) > 1e10) return x > 0 ? x : -0.0;
  const double x2 = x * x, x2_lo = std::fma(x, x, -x2);
  const double x3 = x2 * x, x3_lo = std::fma(x2, x, -x3) + x2_lo * x;
  const double t = kKHi * x3, t_lo = std::fma(kKHi, x3, -t) + kKHi * x3_lo + kKLo * x3;
  const double s = x + t;
  const double s_lo =
      ((std::fabs(x) >= std::fabs(t)) ? (x - s) + t : (t - s) + x) + t_lo;  // Fast2Sum
  const double z = kCHi * s, z_lo = std::fma(kCHi, s, -z) + kCHi * s_lo + kCLo * s;
  // sigmoid(2z) from e1 = e^{-|z|} (corrected by the low part), e = e1^2. For z < 0 the
  // numerator x e1 e1 is formed left to right so it stays normal as long as the result is.
  const double e0 = std::exp(-std::fabs(z));
  const double e1 = std::fma(e0, z < 0 ? z_lo : -z_lo, e0);
  const double e = e1 * e1;
  return z < 0 ? (x * e1) * e1 / (1.0 + e) : x / (1.0 + e);
}

inline double scalar_unary(UnaryKind kind, double x, const UnaryParams& p) {
  switch (kind) {
    case UnaryKind::Abs:
      return std::fabs(x);
    case UnaryKind::Neg:
      return -x;
    case UnaryKind::Exp:
      return std::exp(x);
    case UnaryKind::Log:
      return std::log(x);
    case UnaryKind::Log1p:
      return std::log1p(x);
    case UnaryKind::Expm1:
      return std::expm1(x);
    case UnaryKind::Sqrt:
      return std::sqrt(x);
    case UnaryKind::Rsqrt:
      return 1.0 / std::sqrt(x);
    case UnaryKind::Sin:
      return std::sin(x);
    case UnaryKind::Cos:
      return std::cos(x);
    case UnaryKind::Tanh:
      return std::tanh(x);
    case UnaryKind::Erf:
      return std::erf(x);
    // relu keeps NaN and -0.0 (-0 >= 0), as PyTorch 1.13's clamp_min(x, 0).
    case UnaryKind::Relu:
      return (x >= 0 || std::isnan(x)) ? x : 0.0;
    case UnaryKind::Sigmoid:
      return sigmoid_f64(x);
    // silu(-inf) = -inf * 0 = NaN and gelu(-inf) = NaN, as PyTorch.
    case UnaryKind::Silu:
      return silu_f64(x);
    case UnaryKind::GeluErf:
      return gelu_erf_f64(x);
    case UnaryKind::GeluTanh:
      return gelu_tanh_f64(x);
    case UnaryKind::Softplus: {
      const double bx = x * p.beta;
      if (bx > p.threshold) return x;
      // log1p(e^bx) = e^bx to double precision; below bx = -708 e^bx is subnormal while
      // e^bx / beta (beta < 1) may not be: e^{bx/2} / beta * e^{bx/2}, as silu's.
      if (bx < -708) {
        const double h = std::exp(0.5 * bx);
        return (h / p.beta) * h;
      }
      return (std::fmax(bx, 0.0) + std::log1p(std::exp(-std::fabs(bx)))) / p.beta;
    }
    case UnaryKind::Reciprocal:
      return 1.0 / x;
    case UnaryKind::Square:
      return x * x;
  }
  return x;
}

// True where every value within 2^10 double ulps of y (2^-42 |y|) rounds to the same float as
// y: zeros, infinities and NaN (a glibc function returns them only where the exact value
// rounds to them), values 2^-25 or more beyond the overflow threshold, and values 2^10 double
// ulps or more from the nearest midpoint of the float grid (the subnormal grid below 2^-126).
inline bool rounds_safely_to_f32(double y) {
  constexpr std::uint64_t kMinNormal = 0x3810000000000000ULL;  // 2^-126
  constexpr std::uint64_t kFltMax = 0x47efffffe0000000ULL;     // FLT_MAX
  constexpr std::uint64_t kMargin = std::uint64_t{1} << 10;
  const double a = std::fabs(y);
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(a);
  if (bits - kMinNormal <= kFltMax - kMinNormal) {
    // a normal float's binade: the 29 bits below float precision measure the distance to the
    // midpoint 2^28 in double ulps
    const std::uint64_t low = bits & ((std::uint64_t{1} << 29) - 1);
    const std::uint64_t distance = low > (std::uint64_t{1} << 28) ? low - (std::uint64_t{1} << 28)
                                                                  : (std::uint64_t{1} << 28) - low;
    return distance > kMargin;
  }
  if (!(a > 0) || a >= 0x1p128) return true;  // 0, NaN, or at least 2^-25 above the threshold
  // the subnormal grid (quantum 2^-149) or [FLT_MAX, 2^128) (quantum 2^104, the midpoint
  // 0x1.ffffffp127 the overflow threshold): a / quantum and its fraction are exact
  const double units = a < 0x1p-126 ? a * 0x1p149 : a * 0x1p-104;
  return std::fabs(units - std::floor(units) - 0.5) > units * 0x1p-42;
}

// The correctly rounded float of a guarded op's hard lanes (Note [hard lanes] in
// vec_math-inl.h), evaluated in long double: x87's 64-bit significand on x86 (glibc's expl is
// within 1 ulp of it, 2^-63), IEEE quad on aarch64. A platform whose long double is double
// would round these lanes as the double path does.
// Lanes the double path rounds correctly by construction, which long double would not: silu,
// gelu and gelu(tanh) below |x| = 2^-54, x/2 + c x^2 with x/2 a tie of the subnormal grid that
// only c x^2 breaks (HalfXNearZero in unary_ops-inl.h steps the double result toward +inf).
// The guard leaves them.
inline bool hard_lane_exempt(UnaryKind kind, float x) {
  return (kind == UnaryKind::Silu || kind == UnaryKind::GeluErf || kind == UnaryKind::GeluTanh) &&
         std::fabs(x) < 0x1p-54f;
}

// gelu(x) = x/2 erfc(y), y = -x/sqrt2, in long double. y = yh + yl with yh = -x c_hi exact
// (c_hi: 1/sqrt2 to 40 bits, x has 24) and yl = -x c_lo; erfc(yh + yl) = erfc(yh) - yl 2/sqrt(pi)
// e^{-yh^2} to second order (yl/yh < 2^-39). Without the split, y's rounding would cost
// 2 y^2 2^-64 relative (2^-56 at y = 10).
inline long double gelu_erf_f80(long double x) {
  constexpr long double kCHi = 0x1.6a09e667f2p-1L, kCLo = 0x1.bcc908b2fb1366eap-41L;
  constexpr long double kTwoOverSqrtPi = 0x1.20dd750429b6d11ap+0L;
  const long double yh = -x * kCHi, yl = -x * kCLo;
  const long double e = std::erfc(yh) - yl * kTwoOverSqrtPi * std::exp(-yh * yh);
  return 0.5L * x * e;
}

// gelu(tanh) = x sigmoid(2z), z = sqrt(2/pi) (x + 0.044715 x^3), in long double with z carried
// as zh + zl (exact products by fma, two-part constants): e^{2z} turns an error d in z into 2d
// relative, and |2z| reaches 100 where results are still float subnormals.
inline long double gelu_tanh_f80(long double x) {
  constexpr long double kCHi = 0x1.9884533d436508d0p-1L, kCLo = 0x1.f9678a017571c5fep-66L;
  constexpr long double kKHi = 0x1.6e4e26d4801f7510p-5L, kKLo = 0x1.355475a31a4bdba0p-71L;
  const long double x2 = x * x;  // exact: x has 24 bits
  const long double x3 = x2 * x, x3_lo = std::fma(x2, x, -x3);
  const long double t = kKHi * x3, t_lo = std::fma(kKHi, x3, -t) + kKHi * x3_lo + kKLo * x3;
  const long double s = x + t;
  const long double s_lo = (std::fabs(x) >= std::fabs(t) ? (x - s) + t : (t - s) + x) + t_lo;
  const long double zh = kCHi * s, zl = std::fma(kCHi, s, -zh) + kCHi * s_lo + kCLo * s;
  // e = e^{-2|z|} = e0 (1 - 2 sign(zh) zl), e0 = e^{-2|zh|}, formed as e0 - e0 (...): where e0
  // underflows the correction may exceed 1, and e stays +0 (x e carries x's sign)
  const long double e0 = std::exp(-2 * std::fabs(zh));
  const long double e = e0 - e0 * (2 * (zh < 0 ? -zl : zl));
  return zh < 0 ? x * e / (1 + e) : x / (1 + e);
}

// softplus = (max(bx, 0) + log1p(e^{-|bx|})) / b in long double, with bx = bh + bl exact (fma):
// e^{-|bx|} = e^{-|bh|} (1 - sign(bh) bl). The threshold switch is the double path's (x b in
// double), so both paths switch at the same input.
inline long double softplus_f80(float x, const UnaryParams& p) {
  if (static_cast<double>(x) * p.beta > p.threshold) return x;
  const long double b = p.beta, v = x;
  const long double bh = v * b, bl = std::fma(v, b, -bh);
  const long double e0 = std::exp(-std::fabs(bh));
  const long double e = e0 - e0 * (bh < 0 ? -bl : bl);  // +0 where e0 underflows
  return ((bh > 0 ? bh + bl : 0.0L) + std::log1p(e)) / b;
}

// The few inputs where that misrounds (within 2^-64 of a boundary) come from a table.
inline float scalar_unary_hard_f32(UnaryKind kind, float x, const UnaryParams& p) {
  for (const HardCase& h : kHardCases) {
    if (h.kind == kind && h.x == x) return h.y;
  }
  const long double v = x;
  switch (kind) {
    case UnaryKind::Exp:
      return static_cast<float>(std::exp(v));
    case UnaryKind::Expm1:
      return static_cast<float>(std::expm1(v));
    case UnaryKind::Log:
      return static_cast<float>(std::log(v));
    case UnaryKind::Log1p:
      return static_cast<float>(std::log1p(v));
    case UnaryKind::Rsqrt:
      return static_cast<float>(1.0L / std::sqrt(v));
    case UnaryKind::Sin:
      return static_cast<float>(std::sin(v));
    case UnaryKind::Cos:
      return static_cast<float>(std::cos(v));
    case UnaryKind::Tanh:
      return static_cast<float>(std::tanh(v));
    case UnaryKind::Erf:
      return static_cast<float>(std::erf(v));
    case UnaryKind::Sigmoid:
    case UnaryKind::Silu: {
      const long double e = std::exp(-std::fabs(v));
      const long double sigmoid = (v < 0 ? e : 1.0L) / (1.0L + e);
      return static_cast<float>(kind == UnaryKind::Silu ? v * sigmoid : sigmoid);
    }
    case UnaryKind::GeluErf:
      return static_cast<float>(gelu_erf_f80(v));
    case UnaryKind::GeluTanh:
      return static_cast<float>(gelu_tanh_f80(v));
    case UnaryKind::Softplus:
      return static_cast<float>(softplus_f80(x, p));
    default:
      return static_cast<float>(scalar_unary(kind, static_cast<double>(x), p));
  }
}

}  // namespace mpsim::simd
