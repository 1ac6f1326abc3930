// Inputs shared by the product suites (matmul, conv2d, conv_transpose2d, pooling, attention):
// random float32 tensors, uniform on [lo, hi) and reproducible from the seed, and the
// channels-last copy of an NCHW tensor.
#pragma once

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

// The same values in channels-last memory order (strides of channels_last_strides).
inline Tensor to_channels_last(const Tensor& t) {
  return t.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
}

}  // namespace mpsim::test
