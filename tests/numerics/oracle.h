// Independent oracles for the unary ops: long double (x87, 64-bit significand) formulas written
// for the tests, free of the cancellations the kernels avoid, and an MPFR variant for the sweep
// tool. Nothing here calls mpsim code.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/mpsim.h"

namespace mpsim::testing {

struct UnaryCase {
  std::string_view name;
  std::function<Tensor(const Tensor&)> op;
  std::function<long double(long double)> oracle;
};

inline long double gelu_oracle(long double x) { return 0.5L * x * std::erfc(-x / std::sqrt(2.0L)); }
inline long double gelu_tanh_oracle(long double x) {
  const long double z =
      std::sqrt(2.0L / 3.14159265358979323846264338327950288L) * (x + 0.044715L * x * x * x);
  return x / (1.0L + std::exp(-2.0L * z));  // = x/2 (1 + tanh z), without cancellation
}
inline long double softplus_oracle(long double x) {  // beta = 1, threshold = 20
  if (x > 20) return x;
  return std::fmax(x, 0.0L) + std::log1p(std::exp(-std::fabs(x)));
}

// Every unary op with its oracle (default attributes). Special values follow PyTorch: the
// oracles use the same formulas PyTorch's kernels use at infinities (silu(-inf) = NaN etc.).
inline std::vector<UnaryCase> unary_cases() {
  using L = long double;
  return {
      {"abs", [](const Tensor& x) { return abs(x); }, [](L x) { return std::fabs(x); }},
      {"neg", [](const Tensor& x) { return neg(x); }, [](L x) { return -x; }},
      {"exp", [](const Tensor& x) { return exp(x); }, [](L x) { return std::exp(x); }},
      {"log", [](const Tensor& x) { return log(x); }, [](L x) { return std::log(x); }},
      {"log1p", [](const Tensor& x) { return log1p(x); }, [](L x) { return std::log1p(x); }},
      {"expm1", [](const Tensor& x) { return expm1(x); }, [](L x) { return std::expm1(x); }},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }, [](L x) { return std::sqrt(x); }},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }, [](L x) { return 1.0L / std::sqrt(x); }},
      {"sin", [](const Tensor& x) { return sin(x); }, [](L x) { return std::sin(x); }},
      {"cos", [](const Tensor& x) { return cos(x); }, [](L x) { return std::cos(x); }},
      {"tanh", [](const Tensor& x) { return tanh(x); }, [](L x) { return std::tanh(x); }},
      {"erf", [](const Tensor& x) { return erf(x); }, [](L x) { return std::erf(x); }},
      {"relu", [](const Tensor& x) { return relu(x); },
       [](L x) { return (x >= 0 || std::isnan(x)) ? x : 0.0L; }},  // -0 stays -0 (PyTorch)
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); },
       [](L x) { return 1.0L / (1.0L + std::exp(-x)); }},
      {"silu", [](const Tensor& x) { return silu(x); },
       [](L x) { return x / (1.0L + std::exp(-x)); }},
      {"gelu", [](const Tensor& x) { return gelu(x); }, gelu_oracle},
      {"gelu_tanh", [](const Tensor& x) { return gelu(x, "tanh"); }, gelu_tanh_oracle},
      {"softplus", [](const Tensor& x) { return softplus(x); }, softplus_oracle},
      {"reciprocal", [](const Tensor& x) { return reciprocal(x); }, [](L x) { return 1.0L / x; }},
      {"square", [](const Tensor& x) { return square(x); }, [](L x) { return x * x; }},
      // the math family's correctly rounded functions (Note [math family hard lanes])
      {"acos", [](const Tensor& x) { return acos(x); }, [](L x) { return std::acos(x); }},
      {"asin", [](const Tensor& x) { return asin(x); }, [](L x) { return std::asin(x); }},
      {"atan", [](const Tensor& x) { return atan(x); }, [](L x) { return std::atan(x); }},
      {"acosh", [](const Tensor& x) { return acosh(x); }, [](L x) { return std::acosh(x); }},
      {"asinh", [](const Tensor& x) { return asinh(x); }, [](L x) { return std::asinh(x); }},
      {"atanh", [](const Tensor& x) { return atanh(x); }, [](L x) { return std::atanh(x); }},
      {"cosh", [](const Tensor& x) { return cosh(x); }, [](L x) { return std::cosh(x); }},
      {"sinh", [](const Tensor& x) { return sinh(x); }, [](L x) { return std::sinh(x); }},
      {"tan", [](const Tensor& x) { return tan(x); }, [](L x) { return std::tan(x); }},
      {"exp2", [](const Tensor& x) { return exp2(x); }, [](L x) { return std::exp2(x); }},
      {"log2", [](const Tensor& x) { return log2(x); }, [](L x) { return std::log2(x); }},
      {"log10", [](const Tensor& x) { return log10(x); }, [](L x) { return std::log10(x); }},
      {"erfc", [](const Tensor& x) { return erfc(x); }, [](L x) { return std::erfc(x); }},
  };
}

// ULP of the float32 grid at |v| (subnormal spacing below 2^-126; the spacing of FLT_MAX above).
inline long double f32_ulp(long double v) {
  v = std::fabs(v);
  if (v < 0x1p-126L) return 0x1p-149L;
  int e = 0;
  std::frexp(v, &e);  // v = m 2^e, m in [0.5, 1)
  if (e > 128) e = 128;
  return std::ldexp(1.0L, e - 24);
}

// Error of a float result in ULPs of the exact value; 0 when both are NaN or the same infinity,
// and a float result of +-inf counts as exact when the exact value rounds to it.
inline double ulp_error(float got, long double exact) {
  if (std::isnan(exact) || std::isnan(got))
    return std::isnan(exact) && std::isnan(got) ? 0.0 : INFINITY;
  if (std::isinf(got) || std::isinf(exact)) {
    return static_cast<float>(exact) == got ? 0.0 : INFINITY;
  }
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) / f32_ulp(exact));
}

inline std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline float float_of(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Rounds v to nearest, ties to even, on the grid of a binary format with p significand bits
// and minimum normal exponent emin; |v| >= overflow gives inf. Independent of mpsim's code.
inline long double round_to_format(long double v, int p, int emin, long double overflow) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  const long double a = std::fabs(v);
  if (a >= overflow) return std::copysign(INFINITY, v);
  int e = 0;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  const int exponent = std::max(e - 1, emin);
  const long double quantum = std::ldexp(1.0L, exponent - (p - 1));
  const long double r = std::nearbyint(a / quantum) * quantum;  // ties to even quotient
  return std::copysign(r, v);
}
inline long double round_to_f16(long double v) { return round_to_format(v, 11, -14, 65520.0L); }
inline long double round_to_bf16(long double v) {
  return round_to_format(v, 8, -126, std::ldexp(2.0L - 0x1p-8L, 127));
}

// Same float (bitwise), treating every NaN as equal.
inline bool same_float(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || bits_of(a) == bits_of(b);
}

// The fixed CI sample: every special and boundary value, then one bit pattern from each run of
// 4096 consecutive patterns over the whole float range (2^20 values: both signs, normals,
// subnormals, inf and NaN encodings), its low 12 bits scrambled so mantissas are not all round.
// Every float16 or bfloat16 bit pattern (values[b] has bits b), laid out three ways: one dense
// row of 65536 (long enough for Note [16-bit unary tables]'s lookup), eight dense rows of 8192
// (below kTable16MinValues: the row kernels) and every other element of a wider tensor
// (strided). Each view's elements in row-major order are `values`.
template <class T>
struct AllSixteenBit {
  std::vector<T> values;
  Tensor dense, short_rows, strided;
};
template <class T>
AllSixteenBit<T> all_sixteen_bit() {
  std::vector<T> xs(65536), padded(2 * 65536), pairs(2 * 65536);
  for (std::uint32_t b = 0; b < 65536; ++b) {
    xs[b] = T::from_bits(static_cast<std::uint16_t>(b));
    padded[b / 8192 * 16384 + b % 8192] = xs[b];
    pairs[2 * b] = pairs[2 * b + 1] = xs[b];
  }
  return {xs, from_vector(xs), from_vector(padded, {8, 16384}).slice(1, 0, 8192),
          from_vector(pairs, {65536, 2}).select(1, 0)};
}

inline std::vector<float> f32_sample() {
  std::vector<float> xs = {0.0f,
                           -0.0f,
                           INFINITY,
                           -INFINITY,
                           NAN,
                           -NAN,
                           std::numeric_limits<float>::denorm_min(),
                           -std::numeric_limits<float>::denorm_min(),
                           0x1.fffffcp-127f,
                           std::numeric_limits<float>::min(),
                           -std::numeric_limits<float>::min(),
                           std::numeric_limits<float>::max(),
                           -std::numeric_limits<float>::max(),
                           1.0f,
                           -1.0f,
                           0.5f,
                           -0.5f,
                           2.0f,
                           0.35f,
                           -0.35f,
                           88.72283f,
                           88.72284f,
                           89.0f,
                           -87.33654f,
                           -103.97208f,
                           -103.97209f,
                           -104.0f,
                           104.0f,
                           0x1p18f,
                           -0x1p18f,
                           0x1.000002p18f,
                           3.9192059f,
                           9.01f,
                           20.0f,
                           20.000002f,
                           -20.0f,
                           26.0f * 1.41421356f,
                           3.1415927f,
                           1.5707964f,
                           0x1p-29f,
                           -0x1p-29f,
                           0x1p-24f,
                           1e-30f,
                           -0.99999994f,
                           -1.0f};
  for (std::uint64_t k = 0; k < (std::uint64_t{1} << 20); ++k) {
    const std::uint64_t low = (k * 2654435761u) >> 7 & 0xfff;
    xs.push_back(float_of(static_cast<std::uint32_t>(k << 12 | low)));
  }
  return xs;
}

}  // namespace mpsim::testing
