// Scalar definitions of the binary ops for every dtype: the reference semantics the SIMD rows
// of binary.cc must match bit for bit, and the path for everything they do not cover.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "core/kernel_call.h"
#include "core/dtype.h"
#include "kernels_simd/pow_cr.h"

namespace mpsim::simd {

enum class BinaryKind : std::uint8_t { Add, Sub, Mul, Div, Maximum, Minimum, Pow };
enum class CompareKind : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge };

struct BinaryParams {
  double alpha = 1;            // add/sub on floating dtypes: a +- alpha * b, applied in double
  std::int64_t alpha_int = 1;  // the same on integer dtypes
  RoundingMode mode = RoundingMode::None;
};

// IEEE 754-2019 maximum/minimum: NaN if either is NaN, and +0 > -0. For equal operands the
// bitwise and (max) / or (min) picks +0 (resp. -0) and is the identity otherwise.
template <class T>
T ieee_maximum(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
template <class T>
T ieee_minimum(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// Floor division as Python and PyTorch define it: the floor of the exact quotient, computed
// from the exact remainder fmod(a, b). Division by zero gives the IEEE quotient; an infinite
// dividend gives NaN (fmod(inf, b) is NaN) and -5 // inf is -1, as Python.
inline double div_floor_f64(double a, double b) {
  if (b == 0) return a / b;
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  const double floor_div = std::floor(div);
  return div - floor_div > 0.5 ? floor_div + 1.0 : floor_div;
}
// Truncated division of the exact quotient: the quotient (a - fmod(a, b)) / b is within an ulp
// of an integer, which nearbyint recovers.
inline double div_trunc_f64(double a, double b) {
  if (b == 0 || !std::isfinite(a) || std::isnan(b)) return std::trunc(a / b);
  const double q = (a - std::fmod(a, b)) / b;
  if (q == 0) return std::copysign(0.0, a / b);
  return std::nearbyint(q);
}

template <class T>
T binary_scalar(BinaryKind kind, T a, T b, const BinaryParams& p, KernelStatus& status) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (kind) {
      case BinaryKind::Add:
        return a || (p.alpha_int != 0 && b);
      case BinaryKind::Mul:
      case BinaryKind::Minimum:
        return a && b;
      case BinaryKind::Maximum:
        return a || b;
      default:
        return a;  // the front end rejects sub, div and pow on bool
    }
  } else if constexpr (FloatingElement<T>) {
    // float16/bfloat16 compute in float: one correctly rounded float op, rounded again to 16
    // bits, equals the correctly rounded 16-bit result for + - * / (float has >= 2p + 2 bits).
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const C x = static_cast<C>(a), y = static_cast<C>(b);
    const double xd = x, yd = y;
    switch (kind) {
      case BinaryKind::Add:
        return p.alpha == 1 ? T(x + y) : T(xd + p.alpha * yd);
      case BinaryKind::Sub:
        return p.alpha == 1 ? T(x - y) : T(xd - p.alpha * yd);
      case BinaryKind::Mul:
        return T(x * y);
      case BinaryKind::Div:
        // For float inputs the double quotient is never rounded across an integer, so its
        // trunc is that of the exact quotient.
        switch (p.mode) {
          case RoundingMode::None:
            return T(x / y);
          case RoundingMode::Trunc:
            return T(std::is_same_v<T, double> ? div_trunc_f64(xd, yd) : std::trunc(xd / yd));
          case RoundingMode::Floor:
            return T(div_floor_f64(xd, yd));
        }
        return T(x / y);
      case BinaryKind::Maximum:
        return T(ieee_maximum(x, y));
      case BinaryKind::Minimum:
        return T(ieee_minimum(x, y));
      case BinaryKind::Pow:  // Note [correctly rounded pow] (pow_cr.h); float64: glibc's pow
        if constexpr (std::is_same_v<T, double>) {
          return std::pow(xd, yd);
        } else {
          return pow_correctly_rounded<T>(xd, yd);
        }
    }
    return a;
  } else {
    // Integers wrap in two's complement (computed unsigned, 8- and 16-bit types in unsigned
    // int, since uint16 * uint16 would promote to a signed int and could overflow).
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned,
                                 std::make_unsigned_t<T>>;
    const U ua = static_cast<U>(a), ub = static_cast<U>(b);
    switch (kind) {
      case BinaryKind::Add:
        return static_cast<T>(ua + static_cast<U>(p.alpha_int) * ub);
      case BinaryKind::Sub:
        return static_cast<T>(ua - static_cast<U>(p.alpha_int) * ub);
      case BinaryKind::Mul:
        return static_cast<T>(ua * ub);
      case BinaryKind::Div: {
        if (b == 0) {
          status = KernelStatus::IntegerDivisionByZero;
          return 0;
        }
        if constexpr (std::is_signed_v<T>) {
          if (b == -1) return static_cast<T>(U(0) - ua);  // INT_MIN / -1 wraps
          T q = static_cast<T>(a / b);
          if (p.mode == RoundingMode::Floor && (a % b != 0) && ((a < 0) != (b < 0))) --q;
          return q;
        } else {
          return static_cast<T>(a / b);
        }
      }
      case BinaryKind::Maximum:
        return a > b ? a : b;
      case BinaryKind::Minimum:
        return a < b ? a : b;
      case BinaryKind::Pow: {
        if constexpr (std::is_signed_v<T>) {
          if (b < 0) return a == 1 ? T(1) : a == -1 ? ((b & 1) ? T(-1) : T(1)) : T(0);
        }
        U result = 1, base = ua;
        for (U e = static_cast<U>(b); e != 0; e >>= 1) {
          if (e & 1) result *= base;
          base *= base;
        }
        return static_cast<T>(result);
      }
    }
    return a;
  }
}

template <class T>
bool compare_scalar(CompareKind kind, T a, T b) {
  if constexpr (Float16Like<T>) {
    return compare_scalar(kind, static_cast<float>(a), static_cast<float>(b));
  } else {
    switch (kind) {
      case CompareKind::Eq:
        return a == b;
      case CompareKind::Ne:
        return a != b;
      case CompareKind::Lt:
        return a < b;
      case CompareKind::Le:
        return a <= b;
      case CompareKind::Gt:
        return a > b;
      case CompareKind::Ge:
        return a >= b;
    }
    return false;
  }
}

}  // namespace mpsim::simd
