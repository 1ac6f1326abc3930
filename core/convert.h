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
// - Floating to int32/int64: truncation toward zero. NaN, +-inf and values whose truncation
//   lies outside the target's range give the target's minimum (0x80...0, the x86 "integer
//   indefinite" that cvttss2si/cvttsd2si return): int32(2^31) = int32(-2^31 - 1) = INT32_MIN,
//   int64(2^63) = INT64_MIN, int32(-2147483648.5) = INT32_MIN (in range after truncation).
// - Floating to uint8: the low byte of the int64 conversion above, so negative and large
//   values wrap (-1 -> 255, -2.5 -> 254, 300 -> 44, 2^32 + 5 -> 5) and NaN, +-inf and
//   |x| >= 2^63 give 0. (For float32/16-bit sources the int32 conversion would give the same
//   bytes: their values of 2^31 or more are multiples of 256.)
// - Floating to int8/int16: the low byte/word of the int32 conversion (the one x86 compilers
//   emit for them), so 200 -> int8 -56, 40000 -> int16 -25536, and NaN, +-inf and |x| >= 2^31
//   give 0.
// - To bool: x != 0, so NaN is true and -0.0 false. From bool: 0 or 1.
// - Integer to floating: round to nearest even (int64 to float16/bfloat16 goes through double,
//   exact below 2^53). Integer to integer: modular (two's complement).
// This is PyTorch's behaviour on x86-64, where its casts compile to static_cast, which is
// undefined behaviour in C++ for NaN and out-of-range values and executes the cvtt*
// instructions there (recorded from PyTorch 1.13 by tests/torch_cast_table.py; tested in
// tests/dtype_test.cc). mpsim defines it without UB: the range is checked in double before
// any cast. On AArch64 the same casts saturate (fcvtzs: NaN -> 0, 2^31 -> INT32_MAX), so
// PyTorch differs there; mpsim gives the x86 results on every machine.
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
    } else if constexpr (std::is_same_v<To, std::int8_t> || std::is_same_v<To, std::int16_t>) {
      return static_cast<To>(convert<std::int32_t>(d));  // modular narrowing (C++20)
    } else {
      // In range after truncation: min - 1 < d < max + 1 (NaN fails both). max + 1 = 2^31 or
      // 2^63 is exact; min - 1 is exact for int32 and rounds to min = -2^63 for int64, which
      // then takes the out-of-range branch and still gets min.
      constexpr double kLimit = static_cast<double>(std::numeric_limits<To>::max()) + 1.0;
      if (!(d > -kLimit - 1.0 && d < kLimit)) return std::numeric_limits<To>::min();
      return static_cast<To>(d);
    }
  } else {  // integer -> integer: modular (two's complement)
    return static_cast<To>(v);
  }
}

}  // namespace mpsim
