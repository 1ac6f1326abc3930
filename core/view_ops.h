// Views, their scatters and the shape ops made of views and copies (core/view_ops.cc): no
// kernel of their own. Values are moved, never computed, except trace (the sum reduction's
// rounding) and kron (one product per element, rounded once).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"

namespace mpsim {

// A view of the elements (i, i + offset) of dims dim1 and dim2, moved to a last dim.
Tensor diagonal(const Tensor& x, std::int64_t offset = 0, std::int64_t dim1 = 0,
                std::int64_t dim2 = 1);
// 1-d: the square matrix with x on its `diagonal`-th diagonal; 2-d: a copy of that diagonal.
Tensor diag(const Tensor& x, std::int64_t diagonal = 0);
// Zeros with x's last dim on the offset diagonal of (dim1, dim2) of the result.
Tensor diag_embed(const Tensor& x, std::int64_t offset = 0, std::int64_t dim1 = -2,
                  std::int64_t dim2 = -1);
// The sum of a matrix's diagonal (the sum reduction: double, rounded once).
Tensor trace(const Tensor& x);
// Copies of x with src written into a view: the slice at index, a stepped range, a diagonal,
// a strided view of x's elements in row-major order.
Tensor select_scatter(const Tensor& x, const Tensor& src, std::int64_t dim, std::int64_t index);
Tensor slice_scatter(const Tensor& x, const Tensor& src, std::int64_t dim,
                     std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                     std::int64_t step);
Tensor diagonal_scatter(const Tensor& x, const Tensor& src, std::int64_t offset, std::int64_t dim1,
                        std::int64_t dim2);
// A view of x's storage; storage_offset None: x's own.
Tensor as_strided_view(const Tensor& x, const IntList& size, const IntList& stride,
                       std::optional<std::int64_t> storage_offset);
Tensor as_strided_scatter(const Tensor& x, const Tensor& src, const IntList& size,
                          const IntList& stride, std::optional<std::int64_t> storage_offset);
// Views along dim: `sections` pieces (the first size % sections one longer), or the pieces
// between the given indices (Python slice bounds).
std::vector<Tensor> tensor_split(const Tensor& x, std::int64_t sections, std::int64_t dim);
std::vector<Tensor> tensor_split(const Tensor& x, const IntList& indices, std::int64_t dim);
// torch.hsplit (dim 1, 0 for 1-d), vsplit (dim 0), dsplit (dim 2): equal sections must divide.
std::vector<Tensor> split_along(const char* op, const Tensor& x, std::int64_t sections);
std::vector<Tensor> split_along(const char* op, const Tensor& x, const IntList& indices);
// The inputs (0-d and 1-d as rows) on the diagonal of a zero matrix; promoted dtype.
Tensor block_diag(const std::vector<Tensor>& tensors);
// Kronecker product: out[i * b.shape + j] = a[i] * b[j] over every dim.
Tensor kron(const Tensor& a, const Tensor& b);
// Each element (dim None: of the flattened input) repeated; repeats: one count or one per
// element along dim (the counts are read back from the device).
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<std::int64_t> dim);
Tensor repeat_interleave(const Tensor& x, std::int64_t repeats, std::optional<std::int64_t> dim);
// The r-element combinations of a 1-d tensor's elements (itertools order), [count, r].
Tensor combinations(const Tensor& x, std::int64_t r, bool with_replacement);

}  // namespace mpsim
