// Front ends of sorting: sort (values and indices along a dim), and the ops made of it (argsort,
// msort, topk, kthvalue, median, nanmedian: core/op_signatures.cc).
#include <string>
#include <utility>

#include "core/backend.h"
#include "core/dispatch.h"
#include "core/ops.h"
#include "core/shape.h"
#include "core/sort_ops.h"

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

}  // namespace mpsim
