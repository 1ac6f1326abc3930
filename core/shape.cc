#include "core/shape.h"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "core/checked_math.h"
#include "core/error.h"

namespace mpsim {

std::int64_t Shape::numel() const {
  // Checked (Note [checked sizes]); a zero anywhere makes the count 0 whatever the rest.
  std::int64_t n = 1;
  bool zero = false;
  for (std::int64_t d : dims_) zero = zero || d == 0;
  if (zero) return 0;
  for (std::int64_t d : dims_) {
    if (__builtin_mul_overflow(n, d, &n)) {
      throw ShapeError("[numel] the number of elements of shape " + to_string() +
                       " overflows int64: storage size calculation overflowed");
    }
  }
  return n;
}

std::string to_string(std::span<const std::int64_t> list) {
  std::string s = "[";
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(list[i]);
  }
  return s + "]";
}

std::string Shape::to_string() const { return mpsim::to_string(dims_); }

std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << shape.to_string(); }

Strides contiguous_strides(const Shape& shape) {
  Strides strides(shape.size());
  std::int64_t s = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s = checked_mul("contiguous_strides", s, std::max<std::int64_t>(shape[i], 1),
                    [&] { return "the stride of shape " + shape.to_string(); });
  }
  return strides;
}

Strides channels_last_strides(const Shape& shape) {
  MPSIM_CHECK(shape.size() == 4);
  const std::int64_t c = std::max<std::int64_t>(shape[1], 1);
  const std::int64_t h = std::max<std::int64_t>(shape[2], 1);
  const std::int64_t w = std::max<std::int64_t>(shape[3], 1);
  return {h * w * c, 1, w * c, c};
}

bool non_overlapping_and_dense(std::span<const std::int64_t> sizes,
                               std::span<const std::int64_t> strides) {
  // The dims of more than one element as (stride, size), in order: in place for up to 8 dims
  // (no allocation, Note [dim vectors]), on the heap beyond.
  using Dim = std::pair<std::int64_t, std::int64_t>;
  std::array<Dim, 8> local;
  std::vector<Dim> heap;
  Dim* dims = local.data();
  if (sizes.size() > local.size()) {
    heap.resize(sizes.size());
    dims = heap.data();
  }
  std::size_t n = 0;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] != 1) dims[n++] = {strides[d], sizes[d]};
  }
  std::sort(dims, dims + n);
  std::int64_t expected = 1;
  for (std::size_t i = 0; i < n; ++i) {
    if (dims[i].first != expected) return false;
    expected *= dims[i].second;
  }
  return true;
}

Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b) {
  const std::size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Align from the right; a missing dimension acts as size 1.
    const std::int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const std::int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw ShapeError("[" + std::string(op) + "] shapes " + a.to_string() + " and " +
                       b.to_string() + " cannot be broadcast: " + std::to_string(da) + " vs " +
                       std::to_string(db) + " at dimension " + std::to_string(i));
    }
    out[i] = da == 1 ? db : da;
  }
  return Shape(std::move(out));
}

std::int64_t wrap_dim(std::string_view op, std::int64_t dim, std::int64_t ndim) {
  // A 0-dim tensor accepts dims -1 and 0, as in PyTorch.
  const std::int64_t n = std::max<std::int64_t>(ndim, 1);
  if (dim < -n || dim >= n) {
    throw ShapeError("[" + std::string(op) + "] dim " + std::to_string(dim) +
                     " is out of range for a " + std::to_string(ndim) + "-d tensor (expected " +
                     std::to_string(-n) + ".." + std::to_string(n - 1) + ")");
  }
  return dim < 0 ? dim + n : dim;
}

}  // namespace mpsim
