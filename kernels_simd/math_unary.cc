// The math family (core/math_op_list.h): every element evaluated in double and rounded once to
// the output dtype.
//
// Note [math family accuracy]
// Each function is glibc's double function (acos, asin, atan, acosh, asinh, atanh, cosh, sinh,
// tan, exp2, log2, log10, erfc, lgamma_r, j0, j1, y0, y1, expm1, log1p: within 1 double ULP,
// 2 for acosh, asinh, atanh, cosh, sinh, log10, 5 for erfc, by glibc's libm-test-ulps; measured
// in unary_accuracy_test's Float64Sample) or a formula below whose double error is a few double
// ULPs of the result (the reductions and series say why there is no cancellation). The float32
// result is the double result rounded once: its error is at most 1/2 ULP plus the double error
// scaled by 2^-29, within one float32 ULP; float16 and bfloat16 the same at their precision. The
// float32 results of acos, asin, atan, acosh, asinh, atanh, cosh, sinh, tan, exp2, log2, log10 and
// erfc are correctly rounded: Note [math family hard lanes] (math_hard.h). float64 results carry
// the double evaluation's own error (a few ULPs; more near a function's zeros, where the error is
// small in absolute terms: digamma near 1.4616, the Bessel functions near theirs).
// tests/python/test_ops.py compares every op with torch's float64 result, within one ULP, on the
// case database's inputs and special values.
#include "kernels_simd/math_unary.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>

#include "kernels_simd/elementwise.h"
#include "kernels_simd/math_hard.h"
#include "kernels_simd/table16.h"

namespace mpsim::simd {

namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kSqrtPi = 1.7724538509055160273;

// sin(pi x): the argument reduced exactly to r in [-1/2, 1/2] (x - 2 round(x / 2) is exact,
// and sin(pi r) = sin(pi (1 - r))), so pi r rounds once and sin is within its ULP there.
double sinpi(double x) {
  if (!std::isfinite(x)) return kNaN;
  double r = x - 2.0 * std::nearbyint(0.5 * x);
  if (r > 0.5) {
    r = 1.0 - r;
  } else if (r < -0.5) {
    r = -1.0 - r;
  }
  return std::sin(kPi * r);
}

// cos(pi x) = sin(pi (1/2 - |r|)), r = x reduced to [-1, 1] exactly.
double cospi(double x) {
  if (!std::isfinite(x)) return kNaN;
  const double r = std::fabs(x - 2.0 * std::nearbyint(0.5 * x));
  return sinpi(0.5 - r);
}

// psi(x): reflection below 0 (psi(1 - x) - pi cos(pi x) / sin(pi x), with the exact
// reductions above), the recurrence psi(x) = psi(x + 1) - 1/x up to 10, then the asymptotic
// series ln x - 1/(2x) - sum B_2k / (2k x^2k) through k = 7 (truncation below 1e-17 there).
double digamma(double x) {
  if (std::isnan(x)) return x;
  if (x == 0) return std::signbit(x) ? kInf : -kInf;  // PyTorch's signs
  if (x == kInf) return kInf;
  if (x == -kInf) return kNaN;
  double result = 0;
  if (x < 0) {
    if (x == std::floor(x)) return kNaN;
    result = -kPi * cospi(x) / sinpi(x);
    x = 1.0 - x;
  }
  while (x < 10) {
    result -= 1.0 / x;
    x += 1.0;
  }
  const double inv = 1.0 / x, inv2 = inv * inv;
  const double series =
      inv2 *
      (1.0 / 12 -
       inv2 * (1.0 / 120 -
               inv2 * (1.0 / 252 - inv2 * (1.0 / 240 - inv2 * (1.0 / 132 - inv2 * (691.0 / 32760 -
                                                                                   inv2 / 12))))));
  return result + (std::log(x) - 0.5 * inv - series);
}

// e^-x I_nu(x) for nu = 0, 1 and x >= 0: the power series sum (x/2)^(2k + nu) / (k! (k + nu)!)
// up to 30 (positive terms: no cancellation), times e^-x; above, the asymptotic series
// sum_k a_k / x^k / sqrt(2 pi x), a_k = a_(k-1) (-(4 nu^2 - (2k - 1)^2)) / (8k), summed while
// its terms shrink (below 1e-17 of the sum by k = 40 from x = 30).
double bessel_i_scaled(int nu, double x) {
  if (std::isnan(x)) return x;
  if (x <= 30) {
    const double q = 0.25 * x * x;
    double term = nu == 0 ? 1.0 : 0.5 * x;
    double sum = term;
    for (int k = 1; k < 200 && term > sum * 1e-18; ++k) {
      term *= q / (k * static_cast<double>(k + nu));
      sum += term;
    }
    return sum * std::exp(-x);
  }
  if (x == kInf) return 0.0;
  const double mu = 4.0 * nu * nu;
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 80; ++k) {
    const double odd = 2.0 * k - 1.0;
    const double next = term * -(mu - odd * odd) / (8.0 * k * x);
    if (std::fabs(next) >= std::fabs(term)) break;
    term = next;
    sum += term;
    if (std::fabs(term) < 1e-18 * std::fabs(sum)) break;
  }
  return sum / std::sqrt(2 * kPi * x);
}

// I_nu(x) for x >= 0: the scaled value times e^x; past 700 (where e^x nears double's range
// but I_nu does not) e^(x - log(2 pi x) / 2) times the asymptotic sum.
double bessel_i(int nu, double x) {
  if (x <= 700 || std::isnan(x)) return bessel_i_scaled(nu, x) * std::exp(x);
  if (x == kInf) return kInf;
  // bessel_i_scaled is sum / sqrt(2 pi x) here
  return bessel_i_scaled(nu, x) * std::sqrt(2 * kPi * x) *
         std::exp(x - 0.5 * std::log(2 * kPi * x));
}

// e^(x^2) erfc(x): the product, with x^2's rounding error restored (e^(hi + lo) =
// e^hi (1 + lo)), up to 26; above, the asymptotic series 1/(x sqrt(pi)) sum_k (-1)^k
// (2k - 1)!! / (2x^2)^k (terms below 1e-17 by k = 12).
double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x < 26) {
    if (x < -26.7) return kInf;
    const double x2 = x * x, x2_lo = std::fma(x, x, -x2);
    return std::exp(x2) * std::erfc(x) * (1.0 + x2_lo);
  }
  const double inv2x2 = 0.5 / (x * x);
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 30; ++k) {
    term *= -(2.0 * k - 1.0) * inv2x2;
    sum += term;
    if (std::fabs(term) < 1e-18) break;
  }
  return sum / (x * kSqrtPi);
}

// log(erfc(y)): directly below 1, else log(erfcx(y)) - y^2 (no underflow of erfc).
double log_erfc(double y) {
  if (y < 1) return std::log(std::erfc(y));
  const double y2 = y * y, y2_lo = std::fma(y, y, -y2);
  return std::log(erfcx(y)) - y2 - y2_lo;
}

// y >= 0 with erfc(y) = z, z in (0, 1): Newton's method on log erfc(y) = log z (concave in
// y, so it converges from Winitzki's approximation, 2e-3 off, in a few steps). The slope is
// -2 / (sqrt(pi) erfcx(y)).
double erfcinv_below_one(double z) {
  const double w = std::log(z) + std::log(2.0 - z);  // log(1 - (1 - z)^2), no cancellation
  constexpr double a = 0.147;
  const double t = 2.0 / (kPi * a) + 0.5 * w;
  double y = std::sqrt(std::sqrt(t * t - w / a) - t);
  const double target = std::log(z);
  for (int i = 0; i < 60; ++i) {
    const double f = log_erfc(y) - target;
    const double slope = -2.0 / (kSqrtPi * erfcx(y));
    const double step = f / slope;
    y -= step;
    if (std::fabs(step) <= 1e-17 * std::fabs(y)) break;
  }
  return y;
}

// erfinv: |x| <= 1/2 by Newton's method on erf(y) = |x| from y = |x| sqrt(pi) / 2 (erf has
// no cancellation there); above, the root of erfc(y) = 1 - |x| (exact), as above.
double erfinv(double x) {
  if (std::isnan(x)) return x;
  const double ax = std::fabs(x);
  if (ax > 1) return kNaN;
  if (ax == 1) return std::copysign(kInf, x);
  if (ax == 0) return x;
  double y;
  if (ax <= 0.5) {
    y = ax * kSqrtPi * 0.5;
    for (int i = 0; i < 60; ++i) {
      const double step = (std::erf(y) - ax) / (2.0 / kSqrtPi * std::exp(-y * y));
      y -= step;
      if (std::fabs(step) <= 1e-17 * y) break;
    }
  } else {
    y = erfcinv_below_one(1.0 - ax);
  }
  return std::copysign(y, x);
}

// The standard normal quantile: -sqrt2 erfcinv(2p) below 1/2 (2p exact), by symmetry above
// (1 - p is exact for p >= 1/2).
double ndtri(double p) {
  if (std::isnan(p)) return p;
  if (p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  if (p == 0.5) return 0.0;
  if (p > 0.5) return -ndtri(1.0 - p);
  const double z = 2.0 * p;
  // erfc(y) = z with z in (0, 1): y > 0
  return -std::numbers::sqrt2 * erfcinv_below_one(z);
}

double log_ndtr(double x) {
  if (std::isnan(x)) return x;
  if (x > -1) return std::log1p(-0.5 * std::erfc(x * kSqrtHalf));
  return std::log(0.5) + log_erfc(-x * kSqrtHalf);
}

// x - tanh(x) = (x cosh x - sinh x) / cosh x, and x cosh x - sinh x = sum_(n >= 1) 2n x^(2n+1)
// / (2n + 1)! has positive terms only: no cancellation below |x| = 1; above, the difference
// is at least 0.238 and loses at most 3 bits.
double tanhshrink(double x) {
  if (std::isnan(x) || std::fabs(x) >= 1) return x - std::tanh(x);
  const double x2 = x * x;
  double power = x;  // x^(2n + 1) / (2n + 1)!
  double sum = 0;
  for (int n = 1; n < 20; ++n) {
    power *= x2 / ((2.0 * n) * (2.0 * n + 1.0));
    const double term = 2.0 * n * power;
    sum += term;
    if (std::fabs(term) <= 1e-18 * std::fabs(sum)) break;
  }
  return sum / std::cosh(x);
}

double softplus_f64(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// K_nu(x) = integral over t >= 0 of e^(-x cosh t) cosh(nu t) (x > 0), scaled by e^x: the
// integrand decays double-exponentially and is analytic in the strip |Im t| < pi / 2, so the
// trapezoidal rule converges like e^(-pi^2 / h): h = 1/16 is exact in double, and h at most a
// quarter of the integrand's width 1 / sqrt(x) for large x.
// The sum stops where the terms fall below 2^-60 of it.
double scaled_bessel_k(double nu, double x) {
  if (std::isnan(x)) return x;
  if (x < 0) return kNaN;
  if (x == 0) return std::numeric_limits<double>::infinity();
  if (std::isinf(x)) return 0.0;
  // Near t = 0 the integrand is about e^(-x t^2 / 2): its width 1 / sqrt(x) must span several
  // steps (the trapezoid's error for a Gaussian of width w is e^(-2 pi^2 w^2 / h^2)).
  const double step = std::min(1.0 / 16, 0.25 / std::sqrt(x));
  double sum = 0.5;  // t = 0: e^0 cosh 0, half weight
  for (int i = 1; i < 100000; ++i) {
    const double t = i * step;
    const double term = std::exp(-x * (std::cosh(t) - 1.0)) * std::cosh(nu * t);
    sum += term;
    if (term < 0x1p-60 * sum) break;
  }
  return sum * step;
}

// The Hurwitz zeta function sum_(k >= 0) (k + q)^-s by Euler-Maclaurin summation: the first
// terms directly (at least 9, and until k + q > 9), then the integral of the tail and its
// Bernoulli corrections B_2j / (2j)! s (s + 1) ... (s + 2j - 2) a^(-s - 2j + 1), stopped when
// they fall below 2^-53 of the sum. Domain as torch's (Cephes'): s == 1 gives inf, s < 1 NaN,
// q a non-positive integer inf, another non-positive q NaN (unless s is an integer).
double hurwitz_zeta(double s, double q) {
  if (std::isnan(s) || std::isnan(q)) return kNaN;
  if (s == 1) return std::numeric_limits<double>::infinity();
  if (s < 1) return kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return std::numeric_limits<double>::infinity();
    if (s != std::floor(s)) return kNaN;
  }
  // (2j)! / B_2j for j = 1..12
  static constexpr double kFactorialOverBernoulli[] = {12.0,
                                                       -720.0,
                                                       30240.0,
                                                       -1209600.0,
                                                       47900160.0,
                                                       -1.8924375803183791606e9,
                                                       7.47242496e10,
                                                       -2.950130727918164224e12,
                                                       1.1646782814350067249e14,
                                                       -4.5979787224074726105e15,
                                                       1.8152105401943546773e17,
                                                       -7.1661652561756670113e18};
  double sum = std::pow(q, -s);
  double a = q;
  double b = 0;
  for (int i = 0; i < 9 || a <= 9.0; ++i) {
    a += 1.0;
    b = std::pow(a, -s);
    sum += b;
    if (std::fabs(b / sum) < 0x1p-53) return sum;
  }
  sum += b * a / (s - 1.0) - 0.5 * b;
  double rising = 1.0;  // s (s + 1) ... (s + 2j - 2)
  double k = 0.0;
  for (double c : kFactorialOverBernoulli) {
    rising *= s + k;
    b /= a;
    const double term = rising * b / c;
    sum += term;
    if (std::fabs(term / sum) < 0x1p-53) break;
    k += 1.0;
    rising *= s + k;
    b /= a;
    k += 1.0;
  }
  return sum;
}

// The regularized incomplete gamma functions P(a, x) (lower) and Q(a, x) = 1 - P: the series
// of P for x < a + 1, Lentz's continued fraction of Q otherwise; the other one as 1 minus it
// (where it is the smaller of the two, so the subtraction does not cancel). Domain as torch's:
// a or x negative or NaN: NaN; a == 0: P = 1 for x > 0, NaN at x == 0.
double incomplete_gamma(double a, double x, bool upper) {
  if (std::isnan(a) || std::isnan(x) || a < 0 || x < 0) return kNaN;
  if (a == 0) {
    if (x > 0) return upper ? 0.0 : 1.0;
    return kNaN;
  }
  if (x == 0) return upper ? 1.0 : 0.0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : (upper ? 1.0 : 0.0);
  if (std::isinf(x)) return upper ? 0.0 : 1.0;
  const double log_prefix = a * std::log(x) - x - std::lgamma(a);
  if (x < a + 1) {
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 100000; ++n) {
      term *= x / (a + n);
      sum += term;
      if (std::fabs(term) < std::fabs(sum) * 0x1p-54) break;
    }
    const double p = sum * std::exp(log_prefix);
    return upper ? 1.0 - p : p;
  }
  constexpr double kTiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / kTiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < 0x1p-54) break;
  }
  const double q = std::exp(log_prefix) * h;
  return upper ? q : 1.0 - q;
}

// The orthogonal polynomials of degree n = trunc(n_value) at x by their three-term
// recurrences in double, with torch's special values (n < 0: 0; x = +-1 for Chebyshev and
// Legendre; x = 0 for Laguerre; the shifted Chebyshev at 2x - 1, exact in double).
enum class Poly : std::uint8_t { T, U, V, W, H, He, L, P };

// Chebyshev polynomials of high degree in closed form (the recurrence would take n steps):
// with x = cos t (|x| < 1), T = cos(n t), U = sin((n + 1) t) / sin t, V = cos((n + 1/2) t) /
// cos(t / 2), W = sin((n + 1/2) t) / sin(t / 2); for |x| > 1 the same with cosh and sinh of
// t = acosh |x|, and the sign (-1)^n (V and W: their reflections W <-> V) for x < -1.
double chebyshev_closed_form(Poly kind, double x, double n) {
  if (std::fabs(x) < 1) {
    const double t = std::acos(x);
    switch (kind) {
      case Poly::T:
        return std::cos(n * t);
      case Poly::U:
        return std::sin((n + 1) * t) / std::sin(t);
      case Poly::V:
        return std::cos((n + 0.5) * t) / std::cos(0.5 * t);
      default:
        return std::sin((n + 0.5) * t) / std::sin(0.5 * t);
    }
  }
  const double t = std::acosh(std::fabs(x));
  const double sign = x < 0 && std::fmod(n, 2.0) != 0 ? -1.0 : 1.0;
  // V_n(-x) = (-1)^n W_n(x), W_n(-x) = (-1)^n V_n(x)
  const bool v_form = (kind == Poly::V) == (x > 0);
  switch (kind) {
    case Poly::T:
      return sign * std::cosh(n * t);
    case Poly::U:
      return sign * std::sinh((n + 1) * t) / std::sinh(t);
    default:
      return sign * (v_form ? std::cosh((n + 0.5) * t) / std::cosh(0.5 * t)
                            : std::sinh((n + 0.5) * t) / std::sinh(0.5 * t));
  }
}

double polynomial(Poly kind, double x, double n_value) {
  if (std::isnan(x) || std::isnan(n_value)) return kNaN;
  const double n = std::trunc(n_value);  // torch's degree: n truncated toward zero
  if (n < 0) return 0.0;
  const bool even = std::fmod(n, 2.0) == 0;
  switch (kind) {
    case Poly::T:
      if (std::fabs(x) == 1) return x > 0 || even ? 1.0 : -1.0;
      break;
    case Poly::U:
      if (std::fabs(x) == 1) return x > 0 || even ? n + 1 : -(n + 1);
      break;
    case Poly::V:
      if (std::fabs(x) == 1) return x > 0 ? 1.0 : (even ? n + n + 1 : -(n + n + 1));
      break;
    case Poly::W:
      if (std::fabs(x) == 1) return x > 0 ? n + n + 1 : (even ? 1.0 : -1.0);
      break;
    case Poly::L:
      if (x == 0) return 1.0;
      break;
    case Poly::P:
      if (std::fabs(x) == 1) return x > 0 || even ? 1.0 : -1.0;
      break;
    default:
      break;
  }
  if (n == 0) return 1.0;
  const bool chebyshev = kind == Poly::T || kind == Poly::U || kind == Poly::V || kind == Poly::W;
  if (chebyshev && n > 64) return chebyshev_closed_form(kind, x, n);
  if (n > 0x1p24) return kNaN;  // the recurrence's n steps; float32 holds no such degree
  double p0 = 1.0, p1 = 0.0;
  switch (kind) {
    case Poly::T:
    case Poly::He:
      p1 = x;
      break;
    case Poly::U:
    case Poly::H:
      p1 = 2 * x;
      break;
    case Poly::V:
      p1 = 2 * x - 1;
      break;
    case Poly::W:
      p1 = 2 * x + 1;
      break;
    case Poly::L:
      p1 = 1 - x;
      break;
    case Poly::P:
      p1 = x;
      break;
  }
  for (double k = 1; k < n; k += 1) {
    double next = 0;
    switch (kind) {
      case Poly::T:
      case Poly::U:
      case Poly::V:
      case Poly::W:
        next = 2 * x * p1 - p0;
        break;
      case Poly::H:
        next = 2 * x * p1 - 2 * k * p0;
        break;
      case Poly::He:
        next = x * p1 - k * p0;
        break;
      case Poly::L:
        next = ((2 * k + 1 - x) * p1 - k * p0) / (k + 1);
        break;
      case Poly::P:
        next = ((2 * k + 1) * x * p1 - k * p0) / (k + 1);
        break;
    }
    p0 = p1;
    p1 = next;
    if (!std::isfinite(p1)) break;  // Hermite's growth: inf (or NaN) from here on
  }
  return p1;
}

}  // namespace

double math_f64(MathKind kind, double x, const MathParams& p) {
  switch (kind) {
    case MathKind::special_modified_bessel_k0:
      return x > 0 ? scaled_bessel_k(0, x) * std::exp(-x) : scaled_bessel_k(0, x);
    case MathKind::special_modified_bessel_k1:
      return x > 0 ? scaled_bessel_k(1, x) * std::exp(-x) : scaled_bessel_k(1, x);
    case MathKind::special_scaled_modified_bessel_k0:
      return scaled_bessel_k(0, x);
    case MathKind::special_scaled_modified_bessel_k1:
      return scaled_bessel_k(1, x);
    case MathKind::acos:
      return std::acos(x);
    case MathKind::asin:
      return std::asin(x);
    case MathKind::atan:
      return std::atan(x);
    case MathKind::acosh:
      return std::acosh(x);
    case MathKind::asinh:
      return std::asinh(x);
    case MathKind::atanh:
      return std::atanh(x);
    case MathKind::cosh:
      return std::cosh(x);
    case MathKind::sinh:
      return std::sinh(x);
    case MathKind::tan:
      return std::tan(x);
    case MathKind::exp2:
      return std::exp2(x);
    case MathKind::log2:
      return std::log2(x);
    case MathKind::log10:
      return std::log10(x);
    case MathKind::erfc:
      return std::erfc(x);
    case MathKind::erfinv:
      return erfinv(x);
    case MathKind::lgamma: {
      int sign = 0;
      return ::lgamma_r(x, &sign);  // thread-safe: no write to signgam
    }
    case MathKind::digamma:
      return digamma(x);
    case MathKind::i0:
      return bessel_i(0, std::fabs(x));
    case MathKind::sinc:
      if (x == 0) return 1.0;
      return sinpi(x) / (kPi * x);
    case MathKind::deg2rad:
      return x * (kPi / 180.0);
    case MathKind::rad2deg:
      return x * (180.0 / kPi);
    case MathKind::special_ndtr:
      return 0.5 * std::erfc(-x * kSqrtHalf);
    case MathKind::special_ndtri:
      return ndtri(x);
    case MathKind::special_log_ndtr:
      return log_ndtr(x);
    case MathKind::special_erfcx:
      return erfcx(x);
    case MathKind::special_entr:
      if (std::isnan(x)) return x;
      if (x > 0) return -x * std::log(x);
      return x == 0 ? 0.0 : -kInf;
    case MathKind::special_i0e:
      return bessel_i_scaled(0, std::fabs(x));
    case MathKind::special_i1:
      return std::copysign(bessel_i(1, std::fabs(x)), x);
    case MathKind::special_i1e:
      return std::copysign(bessel_i_scaled(1, std::fabs(x)), x);
    case MathKind::special_bessel_j0:
      return ::j0(x);
    case MathKind::special_bessel_j1:
      return ::j1(x);
    case MathKind::special_bessel_y0:
      return x < 0 ? kNaN : ::y0(x);
    case MathKind::special_bessel_y1:
      return x < 0 ? kNaN : ::y1(x);
    case MathKind::special_spherical_bessel_j0:
      if (x == 0) return 1.0;
      if (std::isinf(x)) return 0.0;
      return std::sin(x) / x;
    case MathKind::softsign:
      if (std::isinf(x)) return std::copysign(1.0, x);
      return x / (1.0 + std::fabs(x));
    case MathKind::tanhshrink:
      return tanhshrink(x);
    case MathKind::selu: {
      constexpr double kAlpha = 1.6732632423543772848170429916717;
      constexpr double kScale = 1.0507009873554804934193349852946;
      return x <= 0 ? kScale * kAlpha * std::expm1(x) : kScale * x;
    }
    case MathKind::mish:
      return x * std::tanh(softplus_f64(x));
    case MathKind::hardsigmoid:
      if (std::isnan(x)) return x;
      return x <= -3 ? 0.0 : x >= 3 ? 1.0 : x / 6.0 + 0.5;
    case MathKind::hardswish:
      if (std::isnan(x)) return x;
      return x <= -3 ? x * 0.0 : x >= 3 ? x : x * (x + 3.0) / 6.0;
    case MathKind::logsigmoid:
      return std::fmin(x, 0.0) - std::log1p(std::exp(-std::fabs(x)));
    case MathKind::elu:
      return x <= 0 ? std::expm1(x * p.input_scale) * p.alpha * p.scale : x * p.scale;
    case MathKind::celu:
      return x <= 0 ? p.alpha * std::expm1(x / p.alpha) : x;
    case MathKind::floor:
      return std::floor(x);
    case MathKind::ceil:
      return std::ceil(x);
    case MathKind::trunc:
      return std::trunc(x);
    case MathKind::frac:
      return x - std::trunc(x);
    case MathKind::round: {
      if (p.decimals == 0) return std::nearbyint(x);
      // torch's: x scaled by 10^decimals, rounded half to even, scaled back
      if (p.decimals > 0) {
        const double ten = std::pow(10.0, static_cast<double>(p.decimals));
        return std::nearbyint(x * ten) / ten;
      }
      const double ten = std::pow(10.0, static_cast<double>(-p.decimals));
      return std::nearbyint(x / ten) * ten;
    }
    case MathKind::logit: {
      double z = x;
      if (!std::isnan(p.eps)) z = x < p.eps ? p.eps : x > 1.0 - p.eps ? 1.0 - p.eps : x;
      return std::log(z / (1.0 - z));
    }
  }
  return kNaN;
}

double binary_math_f64(BinaryMathKind kind, double a, double b) {
  switch (kind) {
    case BinaryMathKind::atan2:
      return std::atan2(a, b);
    case BinaryMathKind::hypot:
      return std::hypot(a, b);
    case BinaryMathKind::copysign:
      return std::copysign(a, b);
    case BinaryMathKind::nextafter:
      return std::nextafter(a, b);
    case BinaryMathKind::fmod:
      return std::fmod(a, b);  // exact
    case BinaryMathKind::remainder: {
      // PyTorch's: fmod, moved into other's sign (r + b is exact in double for float
      // operands, so the float result rounds once)
      double r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
    case BinaryMathKind::xlogy:
      if (std::isnan(b)) return b;
      return a == 0 ? 0.0 : a * std::log(b);
    case BinaryMathKind::special_xlog1py:
      if (std::isnan(b)) return b;
      return a == 0 ? 0.0 : a * std::log1p(b);
    case BinaryMathKind::logaddexp:
    case BinaryMathKind::logaddexp2: {
      if (std::isnan(a) || std::isnan(b)) return a + b;
      const double m = std::fmax(a, b);
      if (std::isinf(m) && a == b) return m;  // both +inf or both -inf
      const double d = -std::fabs(a - b);
      return kind == BinaryMathKind::logaddexp ? m + std::log1p(std::exp(d))
                                               : m + std::log1p(std::exp2(d)) / std::numbers::ln2;
    }
    case BinaryMathKind::heaviside:
      if (std::isnan(a)) return a;
      return a == 0 ? b : a > 0 ? 1.0 : 0.0;
    case BinaryMathKind::special_zeta:
      return hurwitz_zeta(a, b);
    case BinaryMathKind::igamma:
      return incomplete_gamma(a, b, false);
    case BinaryMathKind::igammac:
      return incomplete_gamma(a, b, true);
    case BinaryMathKind::special_chebyshev_polynomial_t:
      return polynomial(Poly::T, a, b);
    case BinaryMathKind::special_chebyshev_polynomial_u:
      return polynomial(Poly::U, a, b);
    case BinaryMathKind::special_chebyshev_polynomial_v:
      return polynomial(Poly::V, a, b);
    case BinaryMathKind::special_chebyshev_polynomial_w:
      return polynomial(Poly::W, a, b);
    case BinaryMathKind::special_shifted_chebyshev_polynomial_t:
      return polynomial(Poly::T, 2 * a - 1, b);
    case BinaryMathKind::special_shifted_chebyshev_polynomial_u:
      return polynomial(Poly::U, 2 * a - 1, b);
    case BinaryMathKind::special_shifted_chebyshev_polynomial_v:
      return polynomial(Poly::V, 2 * a - 1, b);
    case BinaryMathKind::special_shifted_chebyshev_polynomial_w:
      return polynomial(Poly::W, 2 * a - 1, b);
    case BinaryMathKind::special_hermite_polynomial_h:
      return polynomial(Poly::H, a, b);
    case BinaryMathKind::special_hermite_polynomial_he:
      return polynomial(Poly::He, a, b);
    case BinaryMathKind::special_laguerre_polynomial_l:
      return polynomial(Poly::L, a, b);
    case BinaryMathKind::special_legendre_polynomial_p:
      return polynomial(Poly::P, a, b);
  }
  return kNaN;
}

namespace {

// nextafter in a 16-bit format: one step of the bit pattern (IEEE order), as torch does.
template <class T>
T nextafter16(T a, T b) {
  const float fa = static_cast<float>(a), fb = static_cast<float>(b);
  if (std::isnan(fa) || std::isnan(fb)) return T(fa + fb);
  if (fa == fb) return b;
  if (fa == 0) return T::from_bits(static_cast<std::uint16_t>((fb > 0 ? 0x0000 : 0x8000) | 1));
  const bool away = (fb > fa) == (fa > 0);  // a step away from zero
  return T::from_bits(static_cast<std::uint16_t>(a.bits + (away ? 1 : -1)));
}

// One element of a binary math op. The kind is a run-time value (not a template argument): one
// instantiation per dtype keeps this file's compile time and memory within build_times.sh's
// limits under the sanitizers (a template per op and dtype did not).
template <class T>
T binary_math_value(BinaryMathKind kind, T a, T b, bool& div_by_zero) {
  if constexpr (std::is_integral_v<T>) {
    if (kind == BinaryMathKind::heaviside) return a == 0 ? b : a > 0 ? T(1) : T(0);
    if (b == 0) {
      div_by_zero = true;
      return T(0);
    }
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return T(0);  // INT_MIN % -1 overflows in C++; the result is 0
    }
    T r = static_cast<T>(a % b);
    if constexpr (std::is_signed_v<T>) {
      if (kind == BinaryMathKind::remainder && r != 0 && ((r < 0) != (b < 0))) {
        r = static_cast<T>(r + b);
      }
    }
    return r;
  } else {
    if (kind == BinaryMathKind::nextafter) {
      if constexpr (Float16Like<T>) {
        return nextafter16(a, b);
      } else {
        return std::nextafter(a, b);
      }
    }
    return static_cast<T>(binary_math_f64(kind, convert<double>(a), convert<double>(b)));
  }
}

KernelStatus binary_math_rows(BinaryMathKind kind, const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  std::atomic<bool> div_by_zero{false};
  visit_dtype(out.dtype, [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      for_each_row<3>({&out, &call.inputs[0], &call.inputs[1]}, [&](const RowPointers<3>& r,
                                                                    std::int64_t n) {
        bool zero = false;
        for (std::int64_t i = 0; i < n; ++i) {
          const T a = *reinterpret_cast<const T*>(r.ptr[1] + i * r.stride[1]);
          const T b = *reinterpret_cast<const T*>(r.ptr[2] + i * r.stride[2]);
          *reinterpret_cast<T*>(r.ptr[0] + i * r.stride[0]) = binary_math_value(kind, a, b, zero);
        }
        if (zero) div_by_zero.store(true);
      });
    }
  });
  return div_by_zero.load() ? KernelStatus::IntegerDivisionByZero : KernelStatus::Ok;
}

template <BinaryMathKind K>
KernelStatus binary_math_kernel(const KernelCall& call) {
  return binary_math_rows(K, call);
}

}  // namespace

void math_row_f32(MathKind kind, const float* in, float* out, std::size_t n) {
  const MathParams p{.alpha = 1.0, .scale = 1.0, .input_scale = 1.0, .eps = kNaN, .decimals = 0};
  const bool guarded = math_guarded(kind);
  for (std::size_t i = 0; i < n; ++i) {
    const float x = in[i];
    const double y = math_f64(kind, x, p);
    out[i] = guarded && !rounds_safely_to_f32(y) ? math_hard_f32(kind, x) : static_cast<float>(y);
  }
}

namespace {

KernelStatus math_rows(MathKind kind, const KernelCall& call) {
  MathParams p{.alpha = 1.0, .scale = 1.0, .input_scale = 1.0, .eps = kNaN, .decimals = 0};
  if (const auto* given = std::get_if<MathParams>(&call.params)) p = *given;
  const TensorView& out = call.outputs[0];
  visit_dtype(out.dtype, [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // integer inputs of the rounding ops (IntRule::Keep): already integers
      for_each_row<2>({&out, &call.inputs[0]}, [&](const RowPointers<2>& r, std::int64_t n) {
        for (std::int64_t i = 0; i < n; ++i) {
          *reinterpret_cast<T*>(r.ptr[0] + i * r.stride[0]) =
              *reinterpret_cast<const T*>(r.ptr[1] + i * r.stride[1]);
        }
      });
    } else if constexpr (std::is_same_v<T, float>) {
      // Note [math family hard lanes]: the guarded functions' results near a rounding boundary
      // are recomputed in long double
      const bool guarded = math_guarded(kind);
      for_each_row<2>({&out, &call.inputs[0]}, [&](const RowPointers<2>& r, std::int64_t n) {
        // contiguous rows of exp2, log2, log10, sinh, cosh, asinh, acosh, atanh, atan, tan,
        // asin and acos: float lanes where the target has them; erfc, and the others elsewhere:
        // double lanes (the same bits)
        if (r.stride[0] == 4 && r.stride[1] == 4) {
          const auto* in = reinterpret_cast<const float*>(r.ptr[1]);
          auto* out = reinterpret_cast<float*>(r.ptr[0]);
          const auto count = static_cast<std::size_t>(n);
          if (math_cr_row_f32(kind, in, out, count) || math_lanes_row_f32(kind, in, out, count)) {
            return;
          }
        }
        for (std::int64_t i = 0; i < n; ++i) {
          const float x = *reinterpret_cast<const float*>(r.ptr[1] + i * r.stride[1]);
          const double y = math_f64(kind, x, p);
          *reinterpret_cast<float*>(r.ptr[0] + i * r.stride[0]) =
              guarded && !rounds_safely_to_f32(y) ? math_hard_f32(kind, x) : static_cast<float>(y);
        }
      });
    } else if constexpr (std::is_floating_point_v<T> || Float16Like<T>) {
      // The modified Bessel functions of the second kind integrate per value: over all 65536
      // bfloat16 inputs a table would take seconds, far more than most rows.
      const bool table_ok =
          std::get_if<MathParams>(&call.params) == nullptr &&
          kind != MathKind::special_modified_bessel_k0 &&
          kind != MathKind::special_modified_bessel_k1 &&
          kind != MathKind::special_scaled_modified_bessel_k0 &&
          kind != MathKind::special_scaled_modified_bessel_k1;
      for_each_row<2>({&out, &call.inputs[0]}, [&](const RowPointers<2>& r, std::int64_t n) {
        if constexpr (Float16Like<T>) {
          // Note [16-bit unary tables]: long dense rows of a function without parameters
          if (table_ok && r.stride[0] == 2 && r.stride[1] == 2 &&
              static_cast<std::size_t>(n) >= kTable16MinValues) {
            auto compute = [&](const std::uint16_t* codes, std::uint16_t* results, std::size_t m) {
              for (std::size_t i = 0; i < m; ++i) {
                const double x = convert<double>(T::from_bits(codes[i]));
                results[i] = static_cast<T>(math_f64(kind, x, p)).bits;
              }
            };
            constexpr std::uint32_t kMathKeys = 256;  // after the unary family's
            static_assert(kMathKeys + 2 * kNumMathKinds <= kTable16Keys);
            const auto key = kMathKeys + static_cast<std::uint32_t>(kind) * 2 +
                             (std::is_same_v<T, BFloat16> ? 1 : 0);
            lookup16_row(table16(key, compute), reinterpret_cast<const std::uint16_t*>(r.ptr[1]),
                         reinterpret_cast<std::uint16_t*>(r.ptr[0]), static_cast<std::size_t>(n));
            return;
          }
        }
        for (std::int64_t i = 0; i < n; ++i) {
          const double x = convert<double>(*reinterpret_cast<const T*>(r.ptr[1] + i * r.stride[1]));
          *reinterpret_cast<T*>(r.ptr[0] + i * r.stride[0]) = static_cast<T>(math_f64(kind, x, p));
        }
      });
    }
  });
  return KernelStatus::Ok;
}

template <MathKind K>
KernelStatus math_kernel(const KernelCall& call) {
  return math_rows(K, call);
}

}  // namespace

void register_math_kernels(KernelTable& table) {
#define MPSIM_REGISTER_MATH(name, rule)                 \
  table.set(op_id(#name), &math_kernel<MathKind::name>, \
            IntRule::rule == IntRule::Keep ? kNumericDTypes : kFloatDTypes);
#define MPSIM_REGISTER_DOC_MATH(name, doc, rule) MPSIM_REGISTER_MATH(name, rule)
  MPSIM_MATH_OPS(MPSIM_REGISTER_DOC_MATH)
  MPSIM_MATH_OPS_WITH_PARAMS(MPSIM_REGISTER_MATH)
#undef MPSIM_REGISTER_DOC_MATH
#undef MPSIM_REGISTER_MATH
#define MPSIM_REGISTER_BINARY_MATH(name, doc, rule)                  \
  table.set(op_id(#name), &binary_math_kernel<BinaryMathKind::name>, \
            IntRule::rule == IntRule::Keep ? kNumericDTypes : kFloatDTypes);
  MPSIM_BINARY_MATH_OPS(MPSIM_REGISTER_BINARY_MATH)
#undef MPSIM_REGISTER_BINARY_MATH
}

}  // namespace mpsim::simd
