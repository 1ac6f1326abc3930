// Stages 2 and 3 of Note [correctly rounded pow] (pow_cr.h): exact powers in 128-bit integers,
// the rest in quad precision.
#include "kernels_simd/pow_cr.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <optional>

#if defined(__x86_64__) && defined(__SIZEOF_FLOAT128__)
extern "C" __float128 powq(__float128, __float128);  // libquadmath
#endif

namespace mpsim::simd {
namespace {

#if defined(__x86_64__) && defined(__SIZEOF_FLOAT128__)
using Quad = __float128;
Quad quad_pow(Quad x, Quad y) { return powq(x, y); }
#elif LDBL_MANT_DIG == 113
using Quad = long double;
Quad quad_pow(Quad x, Quad y) { return std::pow(x, y); }
#else
#error "pow_cr.cc needs a binary128 type: __float128 with libquadmath, or a 113-bit long double"
#endif

using U128 = unsigned __int128;

// q rounded to double with round-to-odd: truncated, the last bit set when inexact. Rounding
// that once more to 24 or fewer bits gives q's correct rounding.
double round_odd(Quad q) {
  double d = static_cast<double>(q);
  if (static_cast<Quad>(d) == q || std::isinf(d)) return d;
  const Quad dq = static_cast<Quad>(d);
  if ((dq < 0 ? -dq : dq) > (q < 0 ? -q : q)) d = std::nextafter(d, 0.0);
  return std::bit_cast<double>(std::bit_cast<std::uint64_t>(d) | 1);
}

// m 2^e (m > 0) rounded to double with round-to-odd.
double round_odd(U128 m, std::int64_t e) {
  int bits = 0;
  for (U128 t = m; t != 0; t >>= 1) ++bits;
  if (bits <= 53) return std::ldexp(static_cast<double>(static_cast<std::uint64_t>(m)), e);
  const int shift = bits - 53;
  std::uint64_t kept = static_cast<std::uint64_t>(m >> shift);
  if ((m & ((U128{1} << shift) - 1)) != 0) kept |= 1;
  return std::ldexp(static_cast<double>(kept), static_cast<int>(e + shift));
}

bool is_odd_integer(double y) { return std::fabs(std::fmod(y, 2.0)) == 1.0; }

// Integer square root of a perfect square a (< 2^64), or 0 when a is not one.
std::uint64_t exact_sqrt(std::uint64_t a) {
  auto s = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(a)));
  while (s * s > a) --s;
  while ((s + 1) * (s + 1) <= a) ++s;
  return s * s == a ? s : 0;
}

// x^y as a round-to-odd double when it is a dyadic rational of at most 128 significant bits
// (stage 2 of Note [correctly rounded pow]).
std::optional<double> exact_power(double x, double y) {
  const bool negative = x < 0 && is_odd_integer(y);
  int ex = 0;
  const double mx = std::frexp(std::fabs(x), &ex);
  auto a = static_cast<std::uint64_t>(std::ldexp(mx, 53));
  ex -= 53;
  const int tz = __builtin_ctzll(a);
  a >>= tz;
  ex += tz;
  double value = 0;
  if (a == 1) {  // x = 2^ex: x^y = 2^(ex y), exact when ex y is an integer (ex y is exact)
    const double e = ex * y;
    if (e != std::nearbyint(e) || std::fabs(e) > 4000) return std::nullopt;
    value = std::ldexp(1.0, static_cast<int>(e));
  } else {
    // y = p / 2^k with p odd (or k = 0): only k <= 3 can be exact for a < 2^53 (c >= 3).
    int ey = 0;
    const double my = std::frexp(y, &ey);
    auto p = static_cast<std::int64_t>(std::ldexp(my, 53));
    int k = 53 - ey;
    while (k > 0 && p % 2 == 0) {
      p /= 2;
      --k;
    }
    if (k < 0 || k > 3 || p <= 0) return std::nullopt;  // |y| >= 2^53, or 1 / c^p not dyadic
    for (int i = 0; i < k; ++i) {
      a = exact_sqrt(a);
      if (a == 0) return std::nullopt;
    }
    U128 m = 1;  // a^p, p < 81 when it fits (a >= 3)
    for (std::int64_t i = 0; i < p; ++i) {
      if (__builtin_mul_overflow(m, static_cast<U128>(a), &m)) return std::nullopt;
    }
    if ((static_cast<std::int64_t>(ex) * p) % (std::int64_t{1} << k) != 0) return std::nullopt;
    value = round_odd(m, static_cast<std::int64_t>(ex) * p / (std::int64_t{1} << k));
  }
  return negative ? -value : value;
}

}  // namespace

PowBracket pow_bracket(double x, double y) {
  if (const std::optional<double> exact = exact_power(x, y)) return {*exact, *exact, *exact};
  const Quad q = quad_pow(static_cast<Quad>(x), static_cast<Quad>(y));
  const Quad err = (q < 0 ? -q : q) * static_cast<Quad>(0x1p-100);
  return {round_odd(q - err), round_odd(q), round_odd(q + err)};
}

}  // namespace mpsim::simd
