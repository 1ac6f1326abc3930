// Element types: the DType enum, the 16-bit float storage types with exact conversions,
// PyTorch type promotion, and the one dtype visitor.
#pragma once

#include <bit>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <string_view>

namespace mpsim {

enum class DType : std::uint8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex32,
  Complex64,
  Complex128
};
inline constexpr int kNumDTypes = 13;

// Note [16-bit float conversions]
// Half and BFloat16 are storage types: arithmetic widens to float (or double), computes, and
// narrows once. Narrowing rounds to nearest, ties to even, keeps NaN a (quiet) NaN, overflows to
// inf and produces subnormals; it never flushes. Narrowing from double goes through a float
// rounded to odd, which (float has >= p+2 bits for both formats) makes the two-step rounding
// equal to one correct rounding of the double.

namespace detail {

constexpr std::uint16_t f32_to_f16_bits(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  std::uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u | ((a >> 13) & 0x3ffu);  // NaN, quieted
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 = halfway between 65504 and 2^16
  if (a < 0x38800000u) {
    // |f| < 2^-14: the result is subnormal. Adding 0.5f puts the half's unit (2^-24) in the last
    // mantissa place of the sum, so the FPU's round-to-nearest-even does the rounding.
    const float sum = std::bit_cast<float>(a) + 0.5f;
    return sign | static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(sum) - 0x3f000000u);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits, ties to
  // even; a carry out of the mantissa correctly bumps the exponent.
  a += 0xc8000fffu + ((a >> 13) & 1u);
  return sign | static_cast<std::uint16_t>(a >> 13);
}

// Branch-free: the half's exponent and mantissa shifted into a float's fields read as the
// half's value times 2^-112, normal or subnormal, so one exact multiply by 2^112 rebiases both
// (a subnormal half reads as a subnormal float there: mpsim assumes IEEE gradual underflow, no
// denormals-are-zero mode, docs/numerics.md); infinities and NaNs (payload kept, not quieted)
// take the top exponent instead. The GEMM's packing widens every float16 element through this, so
// its cost shows in float16 conv2d: the multiply beats both a branch per exponent class and selects
// with the subnormals as m 2^-24 (`linalg_bench --filter "f16 conv3x3"`, beside builds with the
// others; docs/measurements.md).
constexpr float f16_bits_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t fields = static_cast<std::uint32_t>(h & 0x7fffu) << 13;
  const std::uint32_t finite =
      std::bit_cast<std::uint32_t>(std::bit_cast<float>(fields) * 0x1p112f);
  return std::bit_cast<float>(sign | (fields >= 0x0f800000u ? fields | 0x7f800000u : finite));
}

constexpr std::uint16_t f32_to_bf16_bits(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(x >> 16);
}

constexpr float bf16_bits_to_f32(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

// Rounds a double to float with "round to odd": truncate, and set the last bit if inexact.
constexpr float f64_to_f32_round_odd(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d || d != d) return f;
  std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const bool rounded_away = (d > 0) ? static_cast<double>(f) > d : static_cast<double>(f) < d;
  // Stepping one ulp toward zero turns "rounded away" into "truncated"; inf steps to FLT_MAX.
  if (rounded_away) bits -= 1;
  return std::bit_cast<float>(bits | 1u);
}

}  // namespace detail

struct Half {
  std::uint16_t bits = 0;
  constexpr Half() = default;
  constexpr explicit Half(float f) : bits(detail::f32_to_f16_bits(f)) {}
  constexpr explicit Half(double d)
      : bits(detail::f32_to_f16_bits(detail::f64_to_f32_round_odd(d))) {}
  static constexpr Half from_bits(std::uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
  constexpr operator float() const { return detail::f16_bits_to_f32(bits); }
};

struct BFloat16 {
  std::uint16_t bits = 0;
  constexpr BFloat16() = default;
  constexpr explicit BFloat16(float f) : bits(detail::f32_to_bf16_bits(f)) {}
  constexpr explicit BFloat16(double d)
      : bits(detail::f32_to_bf16_bits(detail::f64_to_f32_round_odd(d))) {}
  static constexpr BFloat16 from_bits(std::uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  constexpr operator float() const { return detail::bf16_bits_to_f32(bits); }
};

// Note [complex dtypes]
// complex32, complex64 and complex128 store (real, imag) pairs of float16, float32 and float64,
// as torch's chalf/cfloat/cdouble. They are storage and transform types: conversions (copy,
// to), views (view_as_real, view_as_complex, real, imag, and every dtype-free view), creation,
// the Fourier transforms and linalg.eig produce and read them; the other kernels are real-only,
// so visit_dtype never instantiates a kernel for them (it throws) and an op without a complex
// kernel refuses a complex tensor with its own name (docs/ops.md, "Complex tensors").
struct ComplexHalf {
  Half real;
  Half imag;
};

// The C++ element type of each DType.
template <DType D>
struct DTypeTraits;
template <>
struct DTypeTraits<DType::Bool> {
  using type = bool;
};
template <>
struct DTypeTraits<DType::UInt8> {
  using type = std::uint8_t;
};
template <>
struct DTypeTraits<DType::Int8> {
  using type = std::int8_t;
};
template <>
struct DTypeTraits<DType::Int16> {
  using type = std::int16_t;
};
template <>
struct DTypeTraits<DType::Int32> {
  using type = std::int32_t;
};
template <>
struct DTypeTraits<DType::Int64> {
  using type = std::int64_t;
};
template <>
struct DTypeTraits<DType::Float16> {
  using type = Half;
};
template <>
struct DTypeTraits<DType::BFloat16> {
  using type = BFloat16;
};
template <>
struct DTypeTraits<DType::Float32> {
  using type = float;
};
template <>
struct DTypeTraits<DType::Float64> {
  using type = double;
};
template <>
struct DTypeTraits<DType::Complex32> {
  using type = ComplexHalf;
};
template <>
struct DTypeTraits<DType::Complex64> {
  using type = std::complex<float>;
};
template <>
struct DTypeTraits<DType::Complex128> {
  using type = std::complex<double>;
};
template <DType D>
using dtype_t = typename DTypeTraits<D>::type;

template <class T>
struct TypeToDType;
template <>
struct TypeToDType<bool> {
  static constexpr DType value = DType::Bool;
};
template <>
struct TypeToDType<std::uint8_t> {
  static constexpr DType value = DType::UInt8;
};
template <>
struct TypeToDType<std::int8_t> {
  static constexpr DType value = DType::Int8;
};
template <>
struct TypeToDType<std::int16_t> {
  static constexpr DType value = DType::Int16;
};
template <>
struct TypeToDType<std::int32_t> {
  static constexpr DType value = DType::Int32;
};
template <>
struct TypeToDType<std::int64_t> {
  static constexpr DType value = DType::Int64;
};
template <>
struct TypeToDType<Half> {
  static constexpr DType value = DType::Float16;
};
template <>
struct TypeToDType<BFloat16> {
  static constexpr DType value = DType::BFloat16;
};
template <>
struct TypeToDType<float> {
  static constexpr DType value = DType::Float32;
};
template <>
struct TypeToDType<double> {
  static constexpr DType value = DType::Float64;
};
template <>
struct TypeToDType<ComplexHalf> {
  static constexpr DType value = DType::Complex32;
};
template <>
struct TypeToDType<std::complex<float>> {
  static constexpr DType value = DType::Complex64;
};
template <>
struct TypeToDType<std::complex<double>> {
  static constexpr DType value = DType::Complex128;
};
template <class T>
inline constexpr DType dtype_of = TypeToDType<T>::value;

template <class T>
concept Element = requires {
  TypeToDType<T>::value;
};
template <class T>
concept Float16Like = std::same_as<T, Half> || std::same_as<T, BFloat16>;
template <class T>
concept FloatingElement = Float16Like<T> || std::same_as<T, float> || std::same_as<T, double>;
template <class T>
concept ComplexElement = std::same_as<T, ComplexHalf> || std::same_as<T, std::complex<float>> ||
                         std::same_as<T, std::complex<double>>;
template <class T>
concept IntegralElement = std::same_as<T, std::uint8_t> || std::same_as<T, std::int8_t> ||
                          std::same_as<T, std::int16_t> || std::same_as<T, std::int32_t> ||
                          std::same_as<T, std::int64_t>;

namespace detail {
[[noreturn]] void throw_complex_kernel(DType dtype);  // a DTypeError naming the dtype
}  // namespace detail

// Calls f.template operator()<T>() with T the element type of `dtype`, a real dtype: kernels
// are real (Note [complex dtypes]); a complex dtype throws, and visit_complex_dtype visits those.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Bool:
      return f.template operator()<bool>();
    case DType::UInt8:
      return f.template operator()<std::uint8_t>();
    case DType::Int8:
      return f.template operator()<std::int8_t>();
    case DType::Int16:
      return f.template operator()<std::int16_t>();
    case DType::Int32:
      return f.template operator()<std::int32_t>();
    case DType::Int64:
      return f.template operator()<std::int64_t>();
    case DType::Float16:
      return f.template operator()<Half>();
    case DType::BFloat16:
      return f.template operator()<BFloat16>();
    case DType::Float32:
      return f.template operator()<float>();
    case DType::Float64:
      return f.template operator()<double>();
    case DType::Complex32:
    case DType::Complex64:
    case DType::Complex128:
      detail::throw_complex_kernel(dtype);
  }
  __builtin_unreachable();
}

// Calls f.template operator()<T>() with T the element type of `dtype`, a complex dtype.
template <class F>
decltype(auto) visit_complex_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Complex32:
      return f.template operator()<ComplexHalf>();
    case DType::Complex64:
      return f.template operator()<std::complex<float>>();
    default:
      return f.template operator()<std::complex<double>>();
  }
}

std::string_view dtype_name(DType dtype);  // "float32", as torch prints it without "torch."
std::size_t dtype_size(DType dtype);
DType parse_dtype(std::string_view name);  // accepts "float32", "float", "half", "f16", ...
inline bool is_floating(DType d) {
  return d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32 || d == DType::Float64;
}
inline bool is_complex(DType d) {
  return d == DType::Complex32 || d == DType::Complex64 || d == DType::Complex128;
}
// complex32 -> float16, complex64 -> float32, complex128 -> float64; a real dtype is its own.
DType real_dtype(DType d);
// float16 -> complex32, float32 -> complex64, float64 -> complex128 (bfloat16 has none: throws).
DType complex_dtype(DType d);
inline bool is_integral(DType d, bool include_bool) {
  return d == DType::UInt8 || d == DType::Int8 || d == DType::Int16 || d == DType::Int32 ||
         d == DType::Int64 ||
         (include_bool && d == DType::Bool);
}
std::ostream& operator<<(std::ostream& os, DType dtype);

// torch.promote_types for two dtypes.
DType promote_types(DType a, DType b);

}  // namespace mpsim

template <>
struct std::hash<mpsim::DType> {
  std::size_t operator()(mpsim::DType d) const noexcept { return static_cast<std::size_t>(d); }
};
