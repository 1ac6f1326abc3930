// Inputs shared by the product suites (matmul, conv2d, conv_transpose2d, pooling, attention):
// random float32 tensors, uniform on [lo, hi) and reproducible from the seed, the rounding of
// an exact value to a 16-bit float, and the channels-last copy of an NCHW tensor.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/mpsim.h"

namespace mpsim::test {

inline Tensor random_tensor(const Shape& shape, unsigned seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(shape.numel()));
  for (float& x : v) x = d(rng);
  return from_vector(v, shape);
}

// v rounded to nearest even with `mantissa` stored bits (float16 10, bfloat16 7), subnormals
// and overflow to inf included.
inline float round16(double v, int mantissa) {
  if (!std::isfinite(v) || v == 0) return static_cast<float>(v);
  int e = 0;
  std::frexp(v, &e);
  const int min_e = mantissa == 10 ? -13 : -125;
  const long double unit = std::ldexp(1.0L, std::max(e, min_e) - 1 - mantissa);
  const long double q = std::nearbyint(static_cast<long double>(v) / unit) * unit;
  const long double max = mantissa == 10 ? 65504.0L : 0x1.fep127L;
  if (std::fabs(q) > max) return v > 0 ? INFINITY : -INFINITY;
  return static_cast<float>(q);
}

// The same values in channels-last memory order (strides of channels_last_strides).
inline Tensor to_channels_last(const Tensor& t) {
  return t.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
}

}  // namespace mpsim::test
