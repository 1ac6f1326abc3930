// Front ends of sorting: sort (values and indices along a dim), and the ops made of it (argsort,
// msort, topk, kthvalue, median, nanmedian: core/op_signatures.cc).
#include "core/sort_ops.h"

#include <string>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/dispatch.h"
#include "core/ops.h"
#include "core/shape.h"

namespace mpsim {

std::pair<Tensor, Tensor> sort(const Tensor& x, std::int64_t dim, bool descending) {
  constexpr OpId kSort = op_id("sort");
  if (!x.defined()) throw InvalidArgument("[sort] expected a tensor, got an undefined one");
  if (x.dim() == 0) {
    wrap_dim("sort", dim, 0);
    return {x.clone(), zeros({}, DType::Int64, x.device())};
  }
  const std::int64_t d = wrap_dim("sort", dim, x.dim());
  // The kernel sorts the contiguous rows of the last dim: dim moved there and back.
  const Tensor rows = x.transpose(d, -1).contiguous();
  Tensor values = empty(rows.sizes(), x.dtype(), x.device());
  Tensor indices = empty(rows.sizes(), DType::Int64, x.device());
  if (rows.numel() > 0) {
    dispatch(OpCall{kSort, x.dtype(), {rows}, {values, indices}, SortParams{descending}});
  }
  return {values.transpose(d, -1), indices.transpose(d, -1)};
}

namespace {

// Runs a scan op on the contiguous rows of dim moved last; outputs of `dtypes`, moved back.
std::vector<Tensor> scan(OpId op, const Tensor& x, std::int64_t dim, DType compute,
                         std::vector<DType> dtypes) {
  const std::string name(op.name());
  if (!x.defined()) throw InvalidArgument("[" + name + "] expected a tensor, got an undefined one");
  const Tensor input = x.dim() == 0 ? x.reshape({1}) : x;
  const std::int64_t d = wrap_dim(name, dim, x.dim());
  const Tensor rows = input.transpose(d, -1).contiguous().to(compute);
  std::vector<Tensor> outs;
  for (DType t : dtypes) outs.push_back(empty(rows.sizes(), t, x.device()));
  if (rows.numel() > 0) dispatch(OpCall{op, compute, {rows}, outs, {}});
  for (Tensor& t : outs) {
    t = t.transpose(d, -1);
    if (x.dim() == 0) t = t.reshape({});
  }
  return outs;
}

DType accumulating(const Tensor& x, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_floating(x.dtype()) ? x.dtype() : DType::Int64;
}

}  // namespace

Tensor cumsum(const Tensor& x, std::int64_t dim, std::optional<DType> dtype) {
  const DType t = accumulating(x, dtype);
  return scan(op_id("cumsum"), x, dim, t, {t})[0];
}

Tensor cumprod(const Tensor& x, std::int64_t dim, std::optional<DType> dtype) {
  const DType t = accumulating(x, dtype);
  return scan(op_id("cumprod"), x, dim, t, {t})[0];
}

Tensor logcumsumexp(const Tensor& x, std::int64_t dim) {
  if (!is_floating(x.dtype())) {
    throw DTypeError("[logcumsumexp] expected a floating point tensor, got " +
                     std::string(dtype_name(x.dtype())));
  }
  return scan(op_id("logcumsumexp"), x, dim, x.dtype(), {x.dtype()})[0];
}

std::pair<Tensor, Tensor> cummax(const Tensor& x, std::int64_t dim) {
  auto outs = scan(op_id("cummax"), x, dim, x.dtype(), {x.dtype(), DType::Int64});
  return {outs[0], outs[1]};
}

std::pair<Tensor, Tensor> cummin(const Tensor& x, std::int64_t dim) {
  auto outs = scan(op_id("cummin"), x, dim, x.dtype(), {x.dtype(), DType::Int64});
  return {outs[0], outs[1]};
}

}  // namespace mpsim
