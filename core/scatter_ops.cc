// Front ends of the scatter family: scatter, scatter_add, scatter_reduce, the index_* ops,
// index_put and put run the scatter kernel on an index and a source of one shape built here;
// masked_scatter and masked_select are made of nonzero, put and index_select.
#include "core/scatter_ops.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/dispatch.h"
#include "core/op_checks.h"
#include "core/ops.h"
#include "core/shape.h"

namespace mpsim {
namespace {

constexpr OpId kScatter = op_id("scatter");
constexpr OpId kNonzero = op_id("nonzero");

using detail::require_defined;
using detail::tag;

void require_same_device(std::string_view op, const Tensor& x, const Tensor& t,
                         std::string_view what) {
  if (t.device() != x.device()) {
    throw DeviceError(tag(op) + "expected all tensors to be on the same device, but " +
                      std::string(what) + " is on " + t.device().to_string() +
                      " and the input on " + x.device().to_string());
  }
}

void require_same_dtype(std::string_view op, const Tensor& x, const Tensor& t,
                        std::string_view what) {
  if (t.dtype() != x.dtype()) {
    throw DTypeError(tag(op) + "expected " + std::string(what) + " of input's dtype " +
                     std::string(dtype_name(x.dtype())) + ", got " +
                     std::string(dtype_name(t.dtype())));
  }
}

// Throws naming the first index outside the dim (the kernel has found that there is one).
void name_bad_index(std::string_view op, const Tensor& index, std::int64_t dim, std::int64_t size,
                    bool wrap_negative) {
  for (std::int64_t v : index.to_vector<std::int64_t>()) {
    if (v >= size || v < (wrap_negative ? -size : 0)) {
      throw ShapeError(tag(op) + "index " + std::to_string(v) + " is out of bounds for dimension " +
                       std::to_string(dim) + " with size " + std::to_string(size));
    }
  }
}

// out = input with src scattered by index along d (Note [scatter order]): index and src have
// input's number of dims (at least 1), src at least index's sizes (its leading part is read).
Tensor run_scatter(std::string_view op, const Tensor& input, std::int64_t d, const Tensor& index,
                   const Tensor& src, ScatterParams params) {
  Tensor out = empty(input.sizes(), input.dtype(), input.device());
  out.copy_(input);
  if (index.numel() == 0 || out.numel() == 0) {
    if (index.numel() > 0) name_bad_index(op, index.contiguous(), d, 0, params.wrap_negative);
    return out;
  }
  const Tensor idx = index.to(DType::Int64).contiguous();
  const Tensor source =
      src.as_strided(idx.sizes(), src.strides(), src.storage_offset()).contiguous();
  try {
    dispatch(OpCall{kScatter, out.dtype(), {idx, source}, {out}, params});
  } catch (const ShapeError&) {
    name_bad_index(op, idx, d, out.sizes()[d], params.wrap_negative);
    throw;
  }
  return out;
}

Tensor at_least_1d(const Tensor& t) { return t.dim() == 0 ? t.reshape({1}) : t; }

// scatter's checks (torch's scatter_gather_dtype_check and scatter_shape_check).
void check_scatter(std::string_view op, const Tensor& input, std::int64_t d, const Tensor& index,
                   const Tensor* src) {
  if (index.dtype() != DType::Int64) {
    throw DTypeError(tag(op) + "expected an index of dtype int64, got " +
                     std::string(dtype_name(index.dtype())));
  }
  require_same_device(op, input, index, "index");
  if (src != nullptr) {
    require_same_dtype(op, input, *src, "src");
    require_same_device(op, input, *src, "src");
  }
  if (index.numel() == 0) return;
  const Tensor x = at_least_1d(input), i = at_least_1d(index);
  if (i.dim() != x.dim()) {
    throw ShapeError(tag(op) + "index " + index.sizes().to_string() +
                     " must have as many dims as input " + input.sizes().to_string());
  }
  if (src != nullptr && at_least_1d(*src).dim() != i.dim()) {
    throw ShapeError(tag(op) + "index " + index.sizes().to_string() +
                     " must have as many dims as src " + src->sizes().to_string());
  }
  for (std::int64_t k = 0; k < i.dim(); ++k) {
    const bool too_big = (k != d && i.sizes()[k] > x.sizes()[k]) ||
                         (src != nullptr && i.sizes()[k] > at_least_1d(*src).sizes()[k]);
    if (too_big) {
      throw ShapeError(
          tag(op) + "expected index " + index.sizes().to_string() + " to be no larger than input " +
          input.sizes().to_string() + " apart from dimension " + std::to_string(d) +
          (src != nullptr ? " and no larger than src " + src->sizes().to_string() : std::string()));
    }
  }
}

ScatterParams params_of(std::int64_t d, ScatterReduce reduce, bool include_self = true,
                        bool wrap_negative = false, double alpha = 1) {
  return ScatterParams{d, reduce, include_self, wrap_negative, alpha};
}

ScatterReduce scatter_mode(std::optional<std::string_view> reduce) {
  if (!reduce) return ScatterReduce::None;
  if (*reduce == "add") return ScatterReduce::Sum;
  if (*reduce == "multiply") return ScatterReduce::Prod;
  throw InvalidArgument("[scatter] reduce must be 'add' or 'multiply', got '" +
                        std::string(*reduce) + "'");
}

Tensor scatter_with(std::string_view op, const Tensor& input, std::int64_t dim, const Tensor& index,
                    const Tensor* src, Scalar value, ScatterReduce mode, bool include_self) {
  require_defined(op, input, "input");
  require_defined(op, index, "index");
  if (src != nullptr) require_defined(op, *src, "src");
  const std::int64_t d = wrap_dim(op, dim, std::max<std::int64_t>(input.dim(), 1));
  check_scatter(op, input, d, index, src);
  const Tensor x = at_least_1d(input), i = at_least_1d(index);
  const Tensor s =
      src != nullptr ? at_least_1d(*src) : full(i.sizes(), value, x.dtype(), x.device());
  return run_scatter(op, x, d, i, s, params_of(d, mode, include_self)).reshape(input.sizes());
}

// The index_* ops' index, 1-d int64, and their shape checks: source has input's dims (a 0-d
// one counts as 1-d) and index.numel() slices along dim.
Tensor vector_index(std::string_view op, const Tensor& index, bool allow_int32) {
  require_defined(op, index, "index");
  if (index.dtype() != DType::Int64 && !(allow_int32 && index.dtype() == DType::Int32)) {
    throw DTypeError(tag(op) + "expected an index of dtype int64" +
                     (allow_int32 ? std::string(" or int32") : std::string()) + ", got " +
                     std::string(dtype_name(index.dtype())));
  }
  if (index.dim() > 1) {
    throw ShapeError(tag(op) + "index must be 0-d or 1-d, got shape " + index.sizes().to_string());
  }
  return index.reshape({-1}).to(DType::Int64);
}

// out = input with the slices of source along d scattered to index's positions.
Tensor index_scatter(std::string_view op, const Tensor& input, std::int64_t dim,
                     const Tensor& index, const Tensor& source, ScatterParams p) {
  const Tensor x = at_least_1d(input), s = at_least_1d(source);
  const std::int64_t d = wrap_dim(op, dim, x.dim());
  p.dim = d;
  if (s.dim() != x.dim()) {
    throw ShapeError(tag(op) + "source " + source.sizes().to_string() +
                     " must have as many dims as input " + input.sizes().to_string());
  }
  for (std::int64_t k = 0; k < x.dim(); ++k) {
    if (k != d && s.sizes()[k] != x.sizes()[k]) {
      throw ShapeError(tag(op) + "source " + source.sizes().to_string() + " and input " +
                       input.sizes().to_string() +
                       " must have the same sizes apart from dimension " + std::to_string(d));
    }
  }
  if (s.sizes()[d] != index.numel()) {
    throw ShapeError(tag(op) + "number of indices (" + std::to_string(index.numel()) +
                     ") should be equal to source.size(dim) (" + std::to_string(s.sizes()[d]) +
                     ")");
  }
  std::vector<std::int64_t> view(static_cast<std::size_t>(x.dim()), 1);
  view[static_cast<std::size_t>(d)] = index.numel();
  const Tensor full_index = index.reshape(view).expand(s.sizes());
  return run_scatter(op, x, d, full_index, s, p).reshape(input.sizes());
}

void check_source(std::string_view op, const Tensor& input, const Tensor& index,
                  const Tensor& source) {
  require_defined(op, input, "input");
  require_defined(op, source, "source");
  require_same_dtype(op, input, source, "source");
  require_same_device(op, input, source, "source");
  require_same_device(op, input, index, "index");
}

ScatterReduce reduction(std::string_view op, std::string_view reduce, bool with_sum) {
  if (with_sum && reduce == "sum") return ScatterReduce::Sum;
  if (reduce == "prod") return ScatterReduce::Prod;
  if (reduce == "mean") return ScatterReduce::Mean;
  if (reduce == "amax") return ScatterReduce::Amax;
  if (reduce == "amin") return ScatterReduce::Amin;
  throw InvalidArgument(tag(op) + "reduce must be one of " + (with_sum ? "'sum', " : "") +
                        "'prod', 'mean', 'amax' or 'amin', got '" + std::string(reduce) + "'");
}

// The flat positions of mask's true elements (bool, any shape), in row-major order.
Tensor true_positions(const Tensor& mask) { return nonzero(mask.reshape({-1})).reshape({-1}); }

// input and mask broadcast together; mask must be bool.
std::pair<Tensor, Tensor> broadcast_masked(std::string_view op, const Tensor& input,
                                           const Tensor& mask) {
  require_defined(op, input, "input");
  require_defined(op, mask, "mask");
  if (mask.dtype() != DType::Bool) {
    throw DTypeError(tag(op) + "expected a bool mask, got " +
                     std::string(dtype_name(mask.dtype())));
  }
  require_same_device(op, input, mask, "mask");
  const Shape shape = broadcast_shapes(op, input.sizes(), mask.sizes());
  return {input.expand(shape), mask.expand(shape)};
}

}  // namespace

Tensor scatter(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src,
               std::optional<std::string_view> reduce) {
  return scatter_with("scatter", input, dim, index, &src, 0, scatter_mode(reduce), true);
}

Tensor scatter(const Tensor& input, std::int64_t dim, const Tensor& index, Scalar value,
               std::optional<std::string_view> reduce) {
  return scatter_with("scatter", input, dim, index, nullptr, value, scatter_mode(reduce), true);
}

Tensor scatter_add(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_with("scatter_add", input, dim, index, &src, 0, ScatterReduce::Sum, true);
}

Tensor scatter_reduce(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self) {
  return scatter_with("scatter_reduce", input, dim, index, &src, 0,
                      reduction("scatter_reduce", reduce, true), include_self);
}

Tensor index_add(const Tensor& input, std::int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha) {
  const Tensor i = vector_index("index_add", index, true);
  check_source("index_add", input, index, source);
  if (!is_floating(input.dtype()) && alpha.is_floating()) {
    throw DTypeError("[index_add] a floating alpha needs a floating input, got " +
                     std::string(dtype_name(input.dtype())));
  }
  return index_scatter("index_add", input, dim, i, source,
                       params_of(0, ScatterReduce::Sum, true, false, alpha.to_double()));
}

Tensor index_copy(const Tensor& input, std::int64_t dim, const Tensor& index,
                  const Tensor& source) {
  const Tensor i = vector_index("index_copy", index, false);
  check_source("index_copy", input, index, source);
  return index_scatter("index_copy", input, dim, i, source, params_of(0, ScatterReduce::None));
}

Tensor index_fill(const Tensor& input, std::int64_t dim, const Tensor& index, Scalar value) {
  require_defined("index_fill", input, "input");
  const Tensor i = vector_index("index_fill", index, false);
  require_same_device("index_fill", input, index, "index");
  const Tensor x = at_least_1d(input);
  const std::int64_t d = wrap_dim("index_fill", dim, x.dim());
  std::vector<std::int64_t> sizes = x.sizes().dims();
  sizes[static_cast<std::size_t>(d)] = i.numel();
  const Tensor source = full(Shape(sizes), value, x.dtype(), x.device());
  return index_scatter("index_fill", x, d, i, source, params_of(d, ScatterReduce::None, true, true))
      .reshape(input.sizes());
}

Tensor index_reduce(const Tensor& input, std::int64_t dim, const Tensor& index,
                    const Tensor& source, std::string_view reduce, bool include_self) {
  const Tensor i = vector_index("index_reduce", index, true);
  check_source("index_reduce", input, index, source);
  return index_scatter("index_reduce", input, dim, i, source,
                       params_of(0, reduction("index_reduce", reduce, false), include_self));
}

Tensor put(const Tensor& input, const Tensor& index, const Tensor& source, bool accumulate) {
  require_defined("put", index, "index");
  check_source("put", input, index, source);
  if (index.dtype() != DType::Int64) {
    throw DTypeError("[put] expected an index of dtype int64, got " +
                     std::string(dtype_name(index.dtype())));
  }
  if (index.numel() != source.numel()) {
    throw ShapeError("[put] expected source and index to have the same number of elements, got " +
                     std::to_string(source.numel()) + " and " + std::to_string(index.numel()));
  }
  const Tensor flat = input.reshape({-1});
  const ScatterParams p =
      params_of(0, accumulate ? ScatterReduce::Sum : ScatterReduce::None, true, true);
  return run_scatter("put", flat, 0, index.reshape({-1}), source.reshape({-1}), p)
      .reshape(input.sizes());
}

Tensor index_put(const Tensor& input, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate) {
  constexpr std::string_view kOp = "index_put";
  require_defined(kOp, input, "input");
  require_defined(kOp, values, "values");
  require_same_dtype(kOp, input, values, "values");
  require_same_device(kOp, input, values, "values");
  // Bool indices stand for their nonzero coordinates, one index per dim they cover.
  std::vector<Tensor> idx;
  for (const Tensor& t : indices) {
    require_defined(kOp, t, "indices");
    require_same_device(kOp, input, t, "indices");
    if (t.dtype() == DType::Bool || t.dtype() == DType::UInt8) {
      const auto first = static_cast<std::int64_t>(idx.size());
      for (std::int64_t k = 0; k < t.dim(); ++k) {
        if (first + k >= input.dim() || t.sizes()[k] != input.sizes()[first + k]) {
          throw ShapeError("[index_put] the shape of the mask " + t.sizes().to_string() +
                           " at index " + std::to_string(k) +
                           " does not match the shape of the indexed tensor " +
                           input.sizes().to_string());
        }
      }
      const Tensor coords = nonzero(t.to(DType::Bool));
      for (std::int64_t k = 0; k < t.dim(); ++k) idx.push_back(coords.select(1, k));
    } else if (t.dtype() == DType::Int64 || t.dtype() == DType::Int32) {
      idx.push_back(t.to(DType::Int64));
    } else {
      throw DTypeError("[index_put] tensors used as indices must be int64, int32 or bool, got " +
                       std::string(dtype_name(t.dtype())));
    }
  }
  const auto k = static_cast<std::int64_t>(idx.size());
  if (k > input.dim()) {
    throw ShapeError("[index_put] too many indices for a tensor of dimension " +
                     std::to_string(input.dim()));
  }
  if (k == 0) {  // input[()] = values: every element
    return accumulate ? add(input, values.expand(input.sizes()))
                      : values.expand(input.sizes()).contiguous().clone();
  }
  Shape b = idx[0].sizes();
  for (const Tensor& t : idx) b = broadcast_shapes(kOp, b, t.sizes());
  // The flat position among the indexed dims, each index checked and wrapped first.
  Tensor lin = zeros(b, DType::Int64, input.device());
  for (std::int64_t j = 0; j < k; ++j) {
    const std::int64_t size = input.sizes()[j];
    const Tensor t = idx[static_cast<std::size_t>(j)];
    const Tensor bad = where(lt(t, -size), Scalar(true), ge(t, size));
    if (t.numel() > 0 && sum(bad.to(DType::Int64)).item<std::int64_t>() > 0) {
      name_bad_index(kOp, t.contiguous(), j, size, true);
    }
    lin = add(mul(lin, Scalar(size)), where(lt(t, 0), add(t, Scalar(size)), t).expand(b));
  }
  std::vector<std::int64_t> rest(input.sizes().dims().begin() + k, input.sizes().dims().end());
  std::int64_t lead = 1;
  for (std::int64_t j = 0; j < k; ++j) lead *= input.sizes()[j];
  std::vector<std::int64_t> flat_sizes{lead}, src_sizes = b.dims(), idx_view{b.numel()};
  flat_sizes.insert(flat_sizes.end(), rest.begin(), rest.end());
  src_sizes.insert(src_sizes.end(), rest.begin(), rest.end());
  if (broadcast_shapes(kOp, values.sizes(), Shape(src_sizes)) != Shape(src_sizes)) {
    throw ShapeError(
        "[index_put] shape mismatch: value tensor of shape " + values.sizes().to_string() +
        " cannot be broadcast to indexing result of shape " + Shape(src_sizes).to_string());
  }
  std::vector<std::int64_t> src_flat{b.numel()};
  src_flat.insert(src_flat.end(), rest.begin(), rest.end());
  idx_view.insert(idx_view.end(), rest.size(), 1);
  const Tensor src = values.expand(Shape(src_sizes)).reshape(src_flat);
  const Tensor index = lin.reshape(idx_view).expand(src.sizes());
  const Tensor x = input.reshape(flat_sizes);
  const ScatterParams p =
      params_of(0, accumulate ? ScatterReduce::Sum : ScatterReduce::None, true, false);
  return run_scatter(kOp, x, 0, index, src, p).reshape(input.sizes());
}

Tensor masked_scatter(const Tensor& input, const Tensor& mask, const Tensor& source) {
  auto [x, m] = broadcast_masked("masked_scatter", input, mask);
  require_defined("masked_scatter", source, "source");
  require_same_dtype("masked_scatter", input, source, "source");
  require_same_device("masked_scatter", input, source, "source");
  const Tensor positions = true_positions(m);
  if (positions.numel() > source.numel()) {
    throw ShapeError("[masked_scatter] source has " + std::to_string(source.numel()) +
                     " elements, fewer than the mask's " + std::to_string(positions.numel()) +
                     " true ones");
  }
  const Tensor src = source.reshape({-1}).narrow(0, 0, positions.numel());
  return run_scatter("masked_scatter", x.reshape({-1}), 0, positions, src,
                     params_of(0, ScatterReduce::None))
      .reshape(x.sizes());
}

Tensor masked_select(const Tensor& input, const Tensor& mask) {
  auto [x, m] = broadcast_masked("masked_select", input, mask);
  return index_select(x.reshape({-1}), 0, true_positions(m));
}

Tensor nonzero(const Tensor& input) {
  require_defined("nonzero", input, "input");
  const std::int64_t count =
      input.numel() == 0 ? 0 : sum(ne(input, 0).to(DType::Int64)).item<std::int64_t>();
  Tensor out = empty({count, input.dim()}, DType::Int64, input.device());
  if (count > 0 && input.dim() > 0) {
    dispatch(OpCall{kNonzero, input.dtype(), {input.contiguous()}, {out}, {}});
  }
  return out;
}

}  // namespace mpsim
