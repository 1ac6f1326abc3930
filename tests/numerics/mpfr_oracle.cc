#include "tests/numerics/mpfr_oracle.h"

#include <mpfr.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace mpsim::testing {
namespace {

constexpr mpfr_prec_t kWorkingBits = 256;

class Mp {
 public:
  Mp() { mpfr_init2(v_, kWorkingBits); }
  ~Mp() { mpfr_clear(v_); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  mpfr_ptr get() { return v_; }

 private:
  mpfr_t v_;
};

// out = sigmoid(x) = 1 / (1 + e^-x) (x >= 0) or e^x / (1 + e^x) (x < 0).
void sigmoid(mpfr_ptr out, mpfr_srcptr x) {
  Mp e, den;
  mpfr_abs(e.get(), x, MPFR_RNDN);
  mpfr_neg(e.get(), e.get(), MPFR_RNDN);
  mpfr_exp(e.get(), e.get(), MPFR_RNDN);
  mpfr_add_ui(den.get(), e.get(), 1, MPFR_RNDN);
  if (mpfr_sgn(x) < 0) {
    mpfr_div(out, e.get(), den.get(), MPFR_RNDN);
  } else {
    mpfr_ui_div(out, 1, den.get(), MPFR_RNDN);
  }
}

void evaluate(std::string_view op, mpfr_ptr r, mpfr_srcptr x) {
  Mp t, u;
  if (op == "abs")
    mpfr_abs(r, x, MPFR_RNDN);
  else if (op == "neg")
    mpfr_neg(r, x, MPFR_RNDN);
  else if (op == "exp")
    mpfr_exp(r, x, MPFR_RNDN);
  else if (op == "log")
    mpfr_log(r, x, MPFR_RNDN);
  else if (op == "log1p")
    mpfr_log1p(r, x, MPFR_RNDN);
  else if (op == "expm1")
    mpfr_expm1(r, x, MPFR_RNDN);
  else if (op == "sqrt")
    mpfr_sqrt(r, x, MPFR_RNDN);
  else if (op == "rsqrt")
    mpfr_rec_sqrt(r, x, MPFR_RNDN);
  else if (op == "sin")
    mpfr_sin(r, x, MPFR_RNDN);
  else if (op == "cos")
    mpfr_cos(r, x, MPFR_RNDN);
  else if (op == "tanh")
    mpfr_tanh(r, x, MPFR_RNDN);
  else if (op == "erf")
    mpfr_erf(r, x, MPFR_RNDN);
  else if (op == "acos")
    mpfr_acos(r, x, MPFR_RNDN);
  else if (op == "asin")
    mpfr_asin(r, x, MPFR_RNDN);
  else if (op == "atan")
    mpfr_atan(r, x, MPFR_RNDN);
  else if (op == "acosh")
    mpfr_acosh(r, x, MPFR_RNDN);
  else if (op == "asinh")
    mpfr_asinh(r, x, MPFR_RNDN);
  else if (op == "atanh")
    mpfr_atanh(r, x, MPFR_RNDN);
  else if (op == "cosh")
    mpfr_cosh(r, x, MPFR_RNDN);
  else if (op == "sinh")
    mpfr_sinh(r, x, MPFR_RNDN);
  else if (op == "tan")
    mpfr_tan(r, x, MPFR_RNDN);
  else if (op == "exp2")
    mpfr_exp2(r, x, MPFR_RNDN);
  else if (op == "log2")
    mpfr_log2(r, x, MPFR_RNDN);
  else if (op == "log10")
    mpfr_log10(r, x, MPFR_RNDN);
  else if (op == "erfc")
    mpfr_erfc(r, x, MPFR_RNDN);
  else if (op == "reciprocal")
    mpfr_ui_div(r, 1, x, MPFR_RNDN);
  else if (op == "square")
    mpfr_sqr(r, x, MPFR_RNDN);
  else if (op == "relu") {
    if (mpfr_nan_p(x) || mpfr_sgn(x) >= 0)  // zeros of both signs stay (PyTorch 1.13)
      mpfr_set(r, x, MPFR_RNDN);
    else
      mpfr_set_zero(r, 1);
  } else if (op == "sigmoid") {
    sigmoid(r, x);
  } else if (op == "silu") {
    sigmoid(t.get(), x);
    mpfr_mul(r, x, t.get(), MPFR_RNDN);
  } else if (op == "gelu") {  // x/2 erfc(-x/sqrt2)
    mpfr_set_ui(t.get(), 2, MPFR_RNDN);
    mpfr_sqrt(t.get(), t.get(), MPFR_RNDN);
    mpfr_div(t.get(), x, t.get(), MPFR_RNDN);
    mpfr_neg(t.get(), t.get(), MPFR_RNDN);
    mpfr_erfc(t.get(), t.get(), MPFR_RNDN);
    mpfr_mul(r, x, t.get(), MPFR_RNDN);
    mpfr_div_2ui(r, r, 1, MPFR_RNDN);
  } else if (op == "gelu_tanh") {  // x sigmoid(2z), z = sqrt(2/pi) (x + 0.044715 x^3)
    mpfr_set_str(u.get(), "0.044715", 10, MPFR_RNDN);
    mpfr_pow_ui(t.get(), x, 3, MPFR_RNDN);
    mpfr_mul(t.get(), t.get(), u.get(), MPFR_RNDN);
    mpfr_add(t.get(), t.get(), x, MPFR_RNDN);
    mpfr_const_pi(u.get(), MPFR_RNDN);
    mpfr_ui_div(u.get(), 2, u.get(), MPFR_RNDN);
    mpfr_sqrt(u.get(), u.get(), MPFR_RNDN);
    mpfr_mul(t.get(), t.get(), u.get(), MPFR_RNDN);
    mpfr_mul_2ui(t.get(), t.get(), 1, MPFR_RNDN);
    sigmoid(u.get(), t.get());
    mpfr_mul(r, x, u.get(), MPFR_RNDN);
  } else if (op == "softplus") {  // beta 1, threshold 20
    if (mpfr_cmp_ui(x, 20) > 0) {
      mpfr_set(r, x, MPFR_RNDN);
    } else {
      mpfr_abs(t.get(), x, MPFR_RNDN);
      mpfr_neg(t.get(), t.get(), MPFR_RNDN);
      mpfr_exp(t.get(), t.get(), MPFR_RNDN);
      mpfr_log1p(t.get(), t.get(), MPFR_RNDN);
      mpfr_set(u.get(), x, MPFR_RNDN);
      if (mpfr_sgn(u.get()) < 0) mpfr_set_zero(u.get(), 1);
      mpfr_add(r, t.get(), u.get(), MPFR_RNDN);
    }
  } else {
    throw std::invalid_argument("mpfr oracle: unknown op " + std::string(op));
  }
}

// The exact value rounded to nearest-even in `format` (subnormals and overflow included).
long double round_to_format(mpfr_ptr exact, Format format) {
  if (mpfr_nan_p(exact)) return NAN;
  // MPFR writes x = 0.m * 2^e with m in [1/2, 1): the smallest subnormal 2^(emin - p + 1) has
  // e = emin - p + 2, and the largest finite binade [2^emax, 2^(emax+1)) has e = emax + 1.
  const mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
  mpfr_t r;
  mpfr_init2(r, format.precision);
  mpfr_set_emin(format.emin - format.precision + 2);
  mpfr_set_emax(format.emax + 1);
  int t = mpfr_set(r, exact, MPFR_RNDN);
  t = mpfr_check_range(r, t, MPFR_RNDN);
  mpfr_subnormalize(r, t, MPFR_RNDN);
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  const long double out = mpfr_get_ld(r, MPFR_RNDN);
  mpfr_clear(r);
  return out;
}

// v (an oracle value within 2^-guard_bits relative of the exact one, with room to spare)
// rounded to `format`, or `decide()` where v lies too near a rounding boundary or the overflow
// threshold for that to be sure. Long double oracles take guard_bits 56 (they are good to
// ~2^-60).
template <class Decide>
long double round_oracle(long double v, Format format, Decide decide, int guard_bits = 56) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  const long double a = std::fabs(v);
  int e = 0;
  std::frexp(a, &e);
  const int exponent = std::max(e - 1, format.emin);
  const long double quantum = std::ldexp(1.0L, exponent - (format.precision - 1));
  const long double units = a / quantum;  // exact: a power-of-two scaling
  const long double frac = units - std::floor(units);
  const bool near_boundary = std::fabs(frac - 0.5L) < std::ldexp(units, -guard_bits) + 0x1p-60L;
  const long double overflow = std::ldexp(2.0L - std::ldexp(1.0L, -format.precision), format.emax);
  const bool near_overflow = std::fabs(a - overflow) < std::ldexp(a, -guard_bits);
  if (near_boundary || near_overflow) return decide();
  if (a >= overflow) return std::copysign(INFINITY, v);
  return std::copysign(std::nearbyint(units) * quantum, v);
}

}  // namespace

long double mpfr_correctly_rounded(std::string_view op, long double x, Format format) {
  Mp in, exact;
  mpfr_set_ld(in.get(), x, MPFR_RNDN);
  evaluate(op, exact.get(), in.get());
  return round_to_format(exact.get(), format);
}

long double correctly_rounded(std::string_view op, long double x, long double v, Format format) {
  return round_oracle(v, format, [&] { return mpfr_correctly_rounded(op, x, format); });
}

long double mpfr_pow_correctly_rounded(long double x, long double y, Format format) {
  Mp bx, by, exact;
  mpfr_set_ld(bx.get(), x, MPFR_RNDN);
  mpfr_set_ld(by.get(), y, MPFR_RNDN);
  mpfr_pow(exact.get(), bx.get(), by.get(), MPFR_RNDN);
  return round_to_format(exact.get(), format);
}

long double pow_oracle(long double x, long double y, Format format) {
  auto by_powl = [&] {
    const long double v = std::pow(x, y);
    return round_oracle(v, format, [&] { return mpfr_pow_correctly_rounded(x, y, format); });
  };
  // glibc's pow in double first (30 times faster than powl), trusted to 2^-44: 2^9 double ULPs,
  // 1000 times its stated 0.52 ULP and 128 times the margin mpsim's own stage 1 assumes, so an
  // input where glibc were off by more than that margin still reaches powl and MPFR here.
  const double d = std::pow(static_cast<double>(x), static_cast<double>(y));
  if (d == 0 || !std::isfinite(d) || std::fabs(d) < 0x1p-1000 || std::fabs(d) > 0x1p1000) {
    return by_powl();
  }
  if (format.precision == kF32.precision && format.emin == kF32.emin &&
      format.emax == kF32.emax) {  // the same test in float casts, faster
    const auto u = std::bit_cast<std::uint64_t>(d);
    const float lo = static_cast<float>(std::bit_cast<double>(u - 512));
    const float hi = static_cast<float>(std::bit_cast<double>(u + 512));
    return std::bit_cast<std::uint32_t>(lo) == std::bit_cast<std::uint32_t>(hi) ? lo : by_powl();
  }
  return round_oracle(d, format, by_powl, 44);
}

}  // namespace mpsim::testing
