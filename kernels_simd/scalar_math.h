// Scalar double-precision unary functions: the f64 path of the unary family, and the path of
// f32 lanes the SIMD code does not cover (NaN, infinities, huge arguments). Built on glibc's
// double functions, which are within 1 ULP; the composites (sigmoid, silu, gelu, softplus)
// use formulations free of cancellation, within 4 ULP in double (docs/numerics.md).
#pragma once

#include <cmath>

#include "kernels_simd/unary.h"

namespace mpsim::simd {

inline double scalar_unary(UnaryKind kind, double x, const UnaryParams& p) {
  constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2/pi)
  constexpr double kSqrtHalf = 0.70710678118654752440;     // 1/sqrt(2)
  switch (kind) {
    case UnaryKind::Abs: return std::fabs(x);
    case UnaryKind::Neg: return -x;
    case UnaryKind::Exp: return std::exp(x);
    case UnaryKind::Log: return std::log(x);
    case UnaryKind::Log1p: return std::log1p(x);
    case UnaryKind::Expm1: return std::expm1(x);
    case UnaryKind::Sqrt: return std::sqrt(x);
    case UnaryKind::Rsqrt: return 1.0 / std::sqrt(x);
    case UnaryKind::Sin: return std::sin(x);
    case UnaryKind::Cos: return std::cos(x);
    case UnaryKind::Tanh: return std::tanh(x);
    case UnaryKind::Erf: return std::erf(x);
    // relu keeps NaN and maps -0.0 to +0.0, as PyTorch's clamp_min(x, 0).
    case UnaryKind::Relu: return (x > 0 || std::isnan(x)) ? x : 0.0;
    // As PyTorch: sigmoid(-inf) = 0, silu(-inf) = -inf/inf = NaN, gelu(-inf) = NaN.
    case UnaryKind::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case UnaryKind::Silu: return x / (1.0 + std::exp(-x));
    case UnaryKind::GeluErf: return 0.5 * x * std::erfc(-x * kSqrtHalf);
    case UnaryKind::GeluTanh: {
      // 0.5 x (1 + tanh(z)) = x / (1 + exp(-2z)): no cancellation for negative x.
      const double z = kSqrt2OverPi * (x + 0.044715 * x * x * x);
      return x / (1.0 + std::exp(-2.0 * z));
    }
    case UnaryKind::Softplus: {
      const double bx = x * p.beta;
      if (bx > p.threshold) return x;
      return (std::fmax(bx, 0.0) + std::log1p(std::exp(-std::fabs(bx)))) / p.beta;
    }
    case UnaryKind::Reciprocal: return 1.0 / x;
    case UnaryKind::Square: return x * x;
  }
  return x;
}

}  // namespace mpsim::simd
