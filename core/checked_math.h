// Overflow-checked int64 arithmetic for sizes, strides and byte counts.
//
// Note [checked sizes]
// Every product or sum that makes a tensor's element count, a storage extent or a byte count
// from user-given sizes goes through these, so a shape whose element count does not fit in
// int64 (empty({1LL << 40, 1LL << 40})) is a ShapeError naming the op and the shape, as
// PyTorch's "Storage size calculation overflowed", instead of a wrapped count. The checks sit
// at the bottom of the arrows: Shape::numel(), contiguous_strides(), empty_strided()'s extent
// and byte count, and the ops that compute an output size before making a Shape (cat's sum,
// repeat's products, pad's sums). A tensor that exists has a valid count, so kernels need none.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace mpsim {

// a * b, or a ShapeError whose message is "[op] " + what() + " overflows int64 ...". `what` is
// called only on overflow, so a caller's message costs nothing on the common path.
template <class What>
std::int64_t checked_mul(std::string_view op, std::int64_t a, std::int64_t b, What&& what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw ShapeError("[" + std::string(op) + "] " + std::string(what()) + " overflows int64 (" +
                     std::to_string(a) + " * " + std::to_string(b) +
                     "): storage size calculation overflowed");
  }
  return r;
}

// a + b, or a ShapeError as checked_mul's.
template <class What>
std::int64_t checked_add(std::string_view op, std::int64_t a, std::int64_t b, What&& what) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    throw ShapeError("[" + std::string(op) + "] " + std::string(what()) + " overflows int64 (" +
                     std::to_string(a) + " + " + std::to_string(b) +
                     "): storage size calculation overflowed");
  }
  return r;
}

}  // namespace mpsim
