// Value conversion between element types, as to(dtype) and copy_ define it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/dtype.h"

namespace mpsim {

// Note [dtype conversion]
// - Between floating types: round to nearest even, once (Note [16-bit float conversions]);
//   NaN stays NaN, overflow gives inf.
// - Floating to integer: truncation toward zero. NaN and values outside the target's range
//   give the x86 "integer indefinite" value (the minimum of int32/int64), which is what
//   PyTorch produces on x86; uint8 takes the low byte of the int64 conversion, as PyTorch.
// - Integer to floating: round to nearest even (int64 to float16/bfloat16 goes through double,
//   exact below 2^53).
// - To bool: x != 0 (NaN is true). From bool: 0 or 1.
template <Element To, Element From>
constexpr To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (Float16Like<From>)
      return static_cast<float>(v) != 0.0f;
    else
      return v != From(0);
  } else if constexpr (std::is_same_v<From, bool>) {
    return convert<To>(static_cast<std::uint8_t>(v ? 1 : 0));
  } else if constexpr (FloatingElement<To>) {
    if constexpr (Float16Like<To>) {
      if constexpr (std::is_same_v<From, float> || Float16Like<From>)
        return To(static_cast<float>(v));
      else
        return To(static_cast<double>(v));
    } else if constexpr (Float16Like<From>) {
      return static_cast<To>(static_cast<float>(v));
    } else {
      return static_cast<To>(v);
    }
  } else if constexpr (FloatingElement<From>) {  // floating -> integer
    const double d =
        static_cast<double>(static_cast<std::conditional_t<Float16Like<From>, float, From>>(v));
    if constexpr (std::is_same_v<To, std::uint8_t>) {
      return static_cast<std::uint8_t>(static_cast<std::uint64_t>(convert<std::int64_t>(d)));
    } else {
      // Valid range: (min - 1, max + 1) exclusive; both bounds are exact powers of two.
      constexpr double kLimit = static_cast<double>(std::numeric_limits<To>::max()) + 1.0;
      if (!(d > -kLimit - 1.0 && d < kLimit)) return std::numeric_limits<To>::min();
      return static_cast<To>(d);
    }
  } else {  // integer -> integer: modular (two's complement)
    return static_cast<To>(v);
  }
}

}  // namespace mpsim
