// Shape: the sizes of a tensor, and the rules on them (numel, contiguous strides, broadcasting).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dim_vector.h"

namespace mpsim {

// Element strides (not bytes), one per dimension; may be 0 (expanded) but never negative.
// Held in place up to 6 dims (Note [dim vectors]).
using Strides = DimVector;
// Dimension lists (`dims` arguments): braced lists work, `sum(x, {-1})`.
using IntList = std::vector<std::int64_t>;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims) : dims_(dims) {}
  Shape(const std::vector<std::int64_t>& dims) : dims_(dims) {}  // NOLINT: implicit
  Shape(DimVector dims) : dims_(std::move(dims)) {}              // NOLINT: implicit
  Shape(std::span<const std::int64_t> dims) : dims_(dims.begin(), dims.end()) {}  // NOLINT

  std::size_t size() const { return dims_.size(); }
  std::int64_t ndim() const { return static_cast<std::int64_t>(dims_.size()); }
  bool empty() const { return dims_.empty(); }
  std::int64_t operator[](std::size_t i) const { return dims_[i]; }
  std::int64_t& operator[](std::size_t i) { return dims_[i]; }
  auto begin() const { return dims_.begin(); }
  auto end() const { return dims_.end(); }
  const DimVector& dims() const { return dims_; }
  std::int64_t numel() const;
  std::string to_string() const;  // "[2, 3]"; "[]" for a 0-dim shape
  friend bool operator==(const Shape&, const Shape&) = default;

 private:
  DimVector dims_;  // Note [dim vectors]
};

std::ostream& operator<<(std::ostream& os, const Shape& shape);
std::string to_string(std::span<const std::int64_t> list);  // "[1, 2]"

// Row-major strides of a dense tensor of this shape.
Strides contiguous_strides(const Shape& shape);
// Strides for the channels-last layout of a 4-d NCHW shape (C fastest, then W, H, N).
Strides channels_last_strides(const Shape& shape);
// Whether the dims of more than one element, taken in some order, lay the elements out
// contiguously (a contiguous, channels-last or otherwise permuted dense layout): no gap, no
// overlap. Strides in elements.
bool non_overlapping_and_dense(std::span<const std::int64_t> sizes,
                               std::span<const std::int64_t> strides);

// PyTorch broadcasting of two shapes; throws ShapeError naming `op`:
//   [add] shapes [2, 3] and [4] cannot be broadcast: 3 vs 4 at dimension 1
Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b);

// Wraps a possibly negative dim into [0, ndim); throws ShapeError (IndexError in PyTorch):
//   [sum] dim 3 is out of range for a 2-d tensor (expected -2..1)
std::int64_t wrap_dim(std::string_view op, std::int64_t dim, std::int64_t ndim);

}  // namespace mpsim

template <>
struct std::hash<mpsim::Shape> {
  std::size_t operator()(const mpsim::Shape& s) const noexcept {
    std::size_t h = s.size();
    for (std::int64_t d : s) h = h * 1000003u ^ std::hash<std::int64_t>()(d);
    return h;
  }
};
