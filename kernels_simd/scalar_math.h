// Scalar double-precision unary functions: the f64 path of the unary family, and the path of
// f32 lanes the SIMD code does not cover (NaN, infinities, huge arguments). Built on glibc's
// double functions, which are within 1 ULP; the composites (sigmoid, silu, gelu, softplus)
// use formulations free of cancellation, within 4 ULP in double (docs/numerics.md).
#pragma once

#include <cmath>

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
inline double gelu_erf_f64(double x) {
  constexpr double kSqrtHalfHi = 0.70710678118654757274;   // double(1/sqrt2)
  constexpr double kSqrtHalfLo = -4.8336466567264567e-17;  // 1/sqrt2 - kSqrtHalfHi
  if (!(x < 0)) return 0.5 * x * std::erfc(-x * kSqrtHalfHi);
  const double y = -x * kSqrtHalfHi;
  const double d = std::fma(-x, kSqrtHalfHi, -y) + (-x) * kSqrtHalfLo;  // exact y - y_rounded
  const double deriv = 1.12837916709551257390 * std::exp(-y * y);  // -erfc'(y) = 2/sqrt(pi) e^-y^2
  return 0.5 * x * (std::erfc(y) - d * deriv);
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
      return x * sigmoid_f64(x);
    case UnaryKind::GeluErf:
      return gelu_erf_f64(x);
    case UnaryKind::GeluTanh:
      return gelu_tanh_f64(x);
    case UnaryKind::Softplus: {
      const double bx = x * p.beta;
      if (bx > p.threshold) return x;
      return (std::fmax(bx, 0.0) + std::log1p(std::exp(-std::fabs(bx)))) / p.beta;
    }
    case UnaryKind::Reciprocal:
      return 1.0 / x;
    case UnaryKind::Square:
      return x * x;
  }
  return x;
}

}  // namespace mpsim::simd
