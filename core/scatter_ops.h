// Scattering into a tensor and selecting by a mask (core/scatter_ops.cc; kernels:
// kernels_simd/scatter.cc). Every op returns a new tensor (torch's out-of-place forms).
// Several sources reaching one output element are taken in source (row-major) order: without
// a reduction the last one is written, a reduction combines them in that order, floats in
// double rounded once (Notes [scatter order] and [scatter rounding] in kernels_simd/scatter.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"

namespace mpsim {

// out = input; out[..., index[e], ...] (index[e] at `dim`, e's coordinates elsewhere) = src[e]
// for every e of index, or combined by reduce ('add', 'multiply'). index: int64 with input's
// number of dims, no larger than input apart from dim and no larger than src; indices in
// [0, size of dim). A scalar src fills.
Tensor scatter(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src,
               std::optional<std::string_view> reduce = std::nullopt);
Tensor scatter(const Tensor& input, std::int64_t dim, const Tensor& index, Scalar value,
               std::optional<std::string_view> reduce = std::nullopt);
Tensor scatter_add(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src);
// reduce: 'sum', 'prod', 'mean', 'amax', 'amin'; include_self: input's values take part.
Tensor scatter_reduce(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self = true);

// The index_* ops: index (int64, or int32 for index_add, 0-d or 1-d) picks the slices of input
// along dim that source's slices (source.size(dim) == index.numel()) go to.
Tensor index_add(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha = 1);
Tensor index_copy(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& source);
// A negative index counts from the end. value: a number or a 0-d tensor.
Tensor index_fill(const Tensor& input, std::int64_t dim, const Tensor& index, Scalar value);
// reduce: 'prod', 'mean', 'amax', 'amin'.
Tensor index_reduce(const Tensor& input, std::int64_t dim, const Tensor& index,
                    const Tensor& source, std::string_view reduce, bool include_self = true);
// input[indices] = values (or += with accumulate): integer index tensors (negative counts from
// the end) broadcast together, bool ones standing for their nonzero coordinates, indexing the
// leading dims.
Tensor index_put(const Tensor& input, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate = false);
// input read as one flat row: out[index[e]] = source[e] (or += with accumulate); negative
// indices count from the end.
Tensor put(const Tensor& input, const Tensor& index, const Tensor& source, bool accumulate = false);

// input and a bool mask broadcast together; the elements where mask is true, in row-major
// order: replaced by source's first elements (masked_scatter) or returned as a 1-d tensor
// (masked_select).
Tensor masked_scatter(const Tensor& input, const Tensor& mask, const Tensor& source);
Tensor masked_select(const Tensor& input, const Tensor& mask);
// [count, ndim] int64 coordinates of the nonzero elements in row-major order (NaN is nonzero).
// The count is read back from the device: on mps, a synchronization.
Tensor nonzero(const Tensor& input);

}  // namespace mpsim
