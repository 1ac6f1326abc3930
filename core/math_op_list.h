// The math family's ops, one row each: name, a one-line doc, and how integer inputs are treated
// (core/op_list.h's IntRule). core/math_ops.h declares them; kernels_simd/math_unary.cc
// evaluates them.
#pragma once

// X(name, doc, int rule)
#define MPSIM_MATH_OPS(X)                                                                        \
  X(acos, "arccosine", ToFloat)                                                                  \
  X(asin, "arcsine", ToFloat)                                                                    \
  X(atan, "arctangent", ToFloat)                                                                 \
  X(acosh, "inverse hyperbolic cosine", ToFloat)                                                 \
  X(asinh, "inverse hyperbolic sine", ToFloat)                                                   \
  X(atanh, "inverse hyperbolic tangent", ToFloat)                                                \
  X(cosh, "hyperbolic cosine", ToFloat)                                                          \
  X(sinh, "hyperbolic sine", ToFloat)                                                            \
  X(tan, "tangent", ToFloat)                                                                     \
  X(exp2, "2^x", ToFloat)                                                                        \
  X(log2, "base-2 logarithm", ToFloat)                                                           \
  X(log10, "base-10 logarithm", ToFloat)                                                         \
  X(erfc, "1 - erf(x), without the cancellation", ToFloat)                                       \
  X(erfinv, "the inverse of erf on [-1, 1]", ToFloat)                                            \
  X(lgamma, "log |Gamma(x)|", ToFloat)                                                           \
  X(digamma, "d/dx log Gamma(x); -inf at +0, +inf at -0, NaN at negative integers", ToFloat)     \
  X(i0, "modified Bessel function of the first kind, order 0", ToFloat)                          \
  X(sinc, "sin(pi x) / (pi x); 1 at 0", ToFloat)                                                 \
  X(deg2rad, "x pi / 180", ToFloat)                                                              \
  X(rad2deg, "x 180 / pi", ToFloat)                                                              \
  X(special_ndtr, "the standard normal distribution function", ToFloat)                          \
  X(special_ndtri, "the inverse of the standard normal distribution function", ToFloat)          \
  X(special_log_ndtr, "log of the standard normal distribution function", ToFloat)               \
  X(special_erfcx, "e^(x^2) erfc(x)", ToFloat)                                                   \
  X(special_entr, "-x log x; 0 at 0, -inf below 0", ToFloat)                                     \
  X(special_i0e, "e^-|x| i0(x)", ToFloat)                                                        \
  X(special_i1, "modified Bessel function of the first kind, order 1", ToFloat)                  \
  X(special_i1e, "e^-|x| i1(x)", ToFloat)                                                        \
  X(special_bessel_j0, "Bessel function of the first kind, order 0", ToFloat)                    \
  X(special_bessel_j1, "Bessel function of the first kind, order 1", ToFloat)                    \
  X(special_bessel_y0, "Bessel function of the second kind, order 0", ToFloat)                   \
  X(special_bessel_y1, "Bessel function of the second kind, order 1", ToFloat)                   \
  X(special_spherical_bessel_j0, "sin(x) / x; 1 at 0", ToFloat)                                  \
  X(softsign, "x / (1 + |x|)", ToFloat)                                                          \
  X(tanhshrink, "x - tanh(x), without the cancellation near 0", ToFloat)                         \
  X(selu, "scale (max(0, x) + min(0, alpha (e^x - 1))), SELU's constants", FloatOnly)            \
  X(mish, "x tanh(softplus(x))", FloatOnly)                                                      \
  X(hardsigmoid, "clamp(x / 6 + 1/2, 0, 1)", FloatOnly)                                          \
  X(hardswish, "x clamp(x / 6 + 1/2, 0, 1)", FloatOnly)                                          \
  X(logsigmoid, "log(sigmoid(x)), without overflow", FloatOnly)                                  \
  X(floor, "the largest integer not above x", Keep)                                              \
  X(ceil, "the smallest integer not below x", Keep)                                              \
  X(trunc, "x rounded toward zero", Keep)                                                        \
  X(frac, "x - trunc(x), exactly", FloatOnly)                                                    \
  X(special_modified_bessel_k0, "modified Bessel function of the second kind, order 0", ToFloat) \
  X(special_modified_bessel_k1, "modified Bessel function of the second kind, order 1", ToFloat) \
  X(special_scaled_modified_bessel_k0, "e^x K0(x)", ToFloat)                                     \
  X(special_scaled_modified_bessel_k1, "e^x K1(x)", ToFloat)

// The math ops with parameters, declared one by one in core/op_signatures.cc: X(name, int rule)
#define MPSIM_MATH_OPS_WITH_PARAMS(X) \
  X(elu, FloatOnly)                   \
  X(celu, FloatOnly)                  \
  X(logit, ToFloat)                   \
  X(round, Keep)

// The binary math ops (elementwise, broadcasting, torch's type promotion), evaluated in double
// and rounded once: X(name, doc, int rule). ToFloat: integer operands compute in float32;
// FloatOnly: integer operands are rejected; Keep: integers keep integer semantics.
#define MPSIM_BINARY_MATH_OPS(X)                                                                   \
  X(atan2, "the angle of the point (other, input), in (-pi, pi]", ToFloat)                         \
  X(hypot, "sqrt(input^2 + other^2) without overflow", FloatOnly)                                  \
  X(copysign, "|input| with other's sign", ToFloat)                                                \
  X(nextafter, "the next value of the dtype after input toward other", FloatOnly)                  \
  X(fmod, "input - trunc(input / other) other, exactly (C's %)", Keep)                             \
  X(remainder, "input - floor(input / other) other: the sign of other (Python's %)", Keep)         \
  X(xlogy, "input log(other); 0 where input is 0 and other is not NaN", ToFloat)                   \
  X(special_xlog1py, "input log1p(other); 0 where input is 0 and other is not NaN", ToFloat)       \
  X(logaddexp, "log(e^input + e^other) without overflow", FloatOnly)                               \
  X(logaddexp2, "log2(2^input + 2^other) without overflow", FloatOnly)                             \
  X(heaviside, "0 below 0, other at 0, 1 above; NaN stays NaN", Keep)                              \
  X(special_zeta, "the Hurwitz zeta function sum_k (k + other)^-input", ToFloat)                   \
  X(igamma, "the regularized lower incomplete gamma function P(input, other)", ToFloat)            \
  X(igammac, "the regularized upper incomplete gamma function Q(input, other)", ToFloat)           \
  X(special_chebyshev_polynomial_t, "T_n(input), n = trunc(other)", ToFloat)                       \
  X(special_chebyshev_polynomial_u, "U_n(input), n = trunc(other)", ToFloat)                       \
  X(special_chebyshev_polynomial_v, "V_n(input), n = trunc(other)", ToFloat)                       \
  X(special_chebyshev_polynomial_w, "W_n(input), n = trunc(other)", ToFloat)                       \
  X(special_shifted_chebyshev_polynomial_t, "T_n(2 input - 1), n = trunc(other)", ToFloat)         \
  X(special_shifted_chebyshev_polynomial_u, "U_n(2 input - 1), n = trunc(other)", ToFloat)         \
  X(special_shifted_chebyshev_polynomial_v, "V_n(2 input - 1), n = trunc(other)", ToFloat)         \
  X(special_shifted_chebyshev_polynomial_w, "W_n(2 input - 1), n = trunc(other)", ToFloat)         \
  X(special_hermite_polynomial_h, "the physicists' Hermite H_n(input), n = trunc(other)", ToFloat) \
  X(special_hermite_polynomial_he, "the probabilists' Hermite He_n(input)", ToFloat)               \
  X(special_laguerre_polynomial_l, "the Laguerre L_n(input), n = trunc(other)", ToFloat)           \
  X(special_legendre_polynomial_p, "the Legendre P_n(input), n = trunc(other)", ToFloat)
