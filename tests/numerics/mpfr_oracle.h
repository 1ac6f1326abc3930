// MPFR oracle: the correctly rounded value of a unary op in a binary floating format, computed
// at 256 bits. Used where the long double oracle cannot decide (results within its error of a
// rounding boundary) and by the exhaustive sweep tool.
#pragma once

#include <string_view>

namespace mpsim::testing {

struct Format {
  int precision;  // significand bits, the implicit bit included
  int emin;       // exponent of the smallest normal: 2^emin
  int emax;       // exponent of the largest finite binade
};
inline constexpr Format kF16{11, -14, 15};
inline constexpr Format kBF16{8, -126, 127};
inline constexpr Format kF32{24, -126, 127};

// op(x) rounded to nearest-even in `format` (subnormals and overflow included), as a long
// double (exact: every format value is representable). Ops: the names of unary_cases().
long double mpfr_correctly_rounded(std::string_view op, long double x, Format format);

// Rounds a long double oracle value to `format`; when the value lies within the long double
// oracle's error (2^-58 relative) of a rounding boundary, asks MPFR instead.
long double correctly_rounded(std::string_view op, long double x, long double oracle_value,
                              Format format);

// x^y (long doubles holding values of `format`) correctly rounded to `format` by MPFR.
long double mpfr_pow_correctly_rounded(long double x, long double y, Format format);

// x^y correctly rounded to `format`: glibc's pow in double where its value lies more than 2^-44
// from a rounding boundary, else glibc's powl (x87 or binary128 long double, within ~2^-62)
// where that lies more than 2^-56 from one, else MPFR. For finite x^y of finite nonzero x;
// zeros, infinities and NaN are the caller's.
long double pow_oracle(long double x, long double y, Format format);

}  // namespace mpsim::testing
