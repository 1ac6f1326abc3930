// Random float32 inputs shared by the product suites (matmul, conv2d, conv_transpose2d,
// attention): uniform on [lo, hi), reproducible from the seed.
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

}  // namespace mpsim::test
