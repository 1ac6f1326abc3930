// How the sort and scan kernels compare elements of any dtype: 16-bit floats as float, bool as
// int, NaN found apart (it compares false with everything).
#pragma once

#include <cmath>
#include <type_traits>

#include "core/dtype.h"

namespace mpsim::simd {

template <class T>
auto order_key(T v) {
  if constexpr (Float16Like<T>) {
    return static_cast<float>(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return static_cast<int>(v);
  } else {
    return v;
  }
}

template <class K>
bool is_nan_key(K v) {
  if constexpr (std::is_floating_point_v<K>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

}  // namespace mpsim::simd
