// The oracles shared by the binary-op tests (binary_test.cc, compare_where_clamp_test.cc,
// broadcast_test.cc): double/__int128 arithmetic and an independent rounding to the result
// dtype (static_cast<float> for float32, a frexp/nearbyint rounding for float16/bfloat16,
// explicit modular wrapping for integers), value generators, bitwise comparison, and the float
// ops paired with their oracles (float_cases). No oracle calls mpsim code.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/mpsim.h"

namespace mpsim::testing {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- Oracles ----

// Nearest-even rounding of x to a binary format with `mant` stored mantissa bits, minimum
// normal exponent `emin` and largest finite value `max`: scale to the quantum (exact, a power
// of two), round with nearbyint (ties to even in the default mode), scale back.
inline double round_format(double x, int mant, int emin, double max) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  int e;
  std::frexp(std::fabs(x), &e);  // |x| in [2^(e-1), 2^e)
  const int lead = std::max(e - 1, emin);
  const double q = std::ldexp(1.0, lead - mant);
  const double r = std::nearbyint(x / q) * q;
  return std::fabs(r) > max ? std::copysign(kInf, x) : r;
}
inline double round_to(DType d, double x) {
  switch (d) {
    case DType::Float16:
      return round_format(x, 10, -14, 65504.0);
    case DType::BFloat16:
      return round_format(x, 7, -126, std::ldexp(255.0, 120));
    case DType::Float32:
      return static_cast<float>(x);
    default:
      return x;
  }
}

// Two's-complement wrap of an exact integer into T.
template <class T>
T wrap(__int128 v) {
  constexpr int kBits = 8 * sizeof(T);
  const unsigned __int128 m =
      static_cast<unsigned __int128>(v) & ((static_cast<unsigned __int128>(1) << kBits) - 1);
  if constexpr (std::is_signed_v<T>) {
    const __int128 half = static_cast<__int128>(1) << (kBits - 1);
    return static_cast<T>(static_cast<__int128>(m) >= half ? static_cast<__int128>(m) - 2 * half
                                                           : static_cast<__int128>(m));
  } else {
    return static_cast<T>(m);
  }
}

struct Rng {
  std::uint64_t s = 0x2545F4914F6CDD1Dull;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1p-53;
  }
};

// Values of dtype d (exactly representable), with specials mixed in.
inline std::vector<double> float_values(DType d, std::size_t n, Rng& rng, bool specials = true) {
  static const double kSpecials[] = {0.0, -0.0, kInf, -kInf, kNaN, 1.0, -1.0, 65504.0, 1e-7, 3.0};
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = rng.next();
    double x;
    if (specials && r % 13 == 0) {
      x = kSpecials[(r >> 8) % 10];
    } else {
      const int scale = static_cast<int>((r >> 16) % 40) - 20;  // magnitudes 2^-20 .. 2^20
      x = std::ldexp(rng.uniform(-1, 1), scale);
    }
    v[i] = round_to(d, x);
  }
  return v;
}

inline Tensor make(const std::vector<double>& v, DType d, const Shape& shape) {
  return from_vector(v, shape).to(d);  // exact: every value is representable in d
}

inline std::string fmt(double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", x);
  return buf;
}

// Same value and sign of zero; any NaN matches any NaN.
inline bool same(double got, double want) {
  return std::isnan(want) ? std::isnan(got)
                          : std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(want);
}
inline void expect_same(double got, double want, const std::string& what) {
  EXPECT_TRUE(same(got, want)) << what << ": got " << fmt(got) << ", want " << fmt(want);
}

inline const DType kFloatTypes[] = {DType::Float16, DType::BFloat16, DType::Float32,
                                    DType::Float64};

// IEEE 754-2019 maximum/minimum, written from the definition.
inline double ieee_max_ref(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == 0 && b == 0) return (std::signbit(a) && std::signbit(b)) ? -0.0 : 0.0;
  return a > b ? a : b;
}
inline double ieee_min_ref(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == 0 && b == 0) return (std::signbit(a) || std::signbit(b)) ? -0.0 : 0.0;
  return a < b ? a : b;
}

// Python/PyTorch floor division of floats (b == 0 gives the IEEE quotient; an infinite
// dividend gives nan; a finite x // inf is 0 or -1 by the signs).
inline double floor_div_ref(double a, double b) {
  if (b == 0 || std::isnan(a) || std::isnan(b)) return a / b;
  if (std::isinf(a)) return kNaN;
  if (std::isinf(b)) {
    if (a == 0 || std::signbit(a) == std::signbit(b)) return std::copysign(0.0, a / b);
    return -1.0;
  }
  const long double q = std::floor(static_cast<long double>(a) / static_cast<long double>(b));
  return q == 0 ? std::copysign(0.0, a / b) : static_cast<double>(q);
}
inline double trunc_div_ref(double a, double b) {
  return static_cast<double>(std::trunc(static_cast<long double>(a) / static_cast<long double>(b)));
}

using TensorOp = std::function<Tensor(const Tensor&, const Tensor&)>;
using Ref = std::function<double(double, double)>;

// The float binary ops, each with its oracle.
struct FloatCase {
  const char* name;
  TensorOp op;
  Ref ref;  // exact or correctly rounded in double; round_to() does the final rounding
};

inline std::vector<FloatCase> float_cases() {
  return {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); },
       [](double a, double b) { return a + b; }},
      {"add_alpha2", [](const Tensor& a, const Tensor& b) { return add(a, b, 2); },
       [](double a, double b) { return a + 2 * b; }},
      {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); },
       [](double a, double b) { return a - b; }},
      {"sub_alpha-0.5", [](const Tensor& a, const Tensor& b) { return sub(a, b, -0.5); },
       [](double a, double b) { return a + 0.5 * b; }},
      {"mul", [](const Tensor& a, const Tensor& b) { return a * b; },
       [](double a, double b) { return a * b; }},
      {"div", [](const Tensor& a, const Tensor& b) { return a / b; },
       [](double a, double b) { return a / b; }},
      {"div_trunc", [](const Tensor& a, const Tensor& b) { return div(a, b, "trunc"); },
       trunc_div_ref},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }, ieee_max_ref},
      {"minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }, ieee_min_ref},
  };
}

}  // namespace mpsim::testing
