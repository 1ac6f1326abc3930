// Front ends of the reductions, argmax/argmin and softmax: dims, keepdim and PyTorch's dtype
// rules. The kernels see the input permuted so the reduced dims come last.
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/complex_ops.h"
#include "core/dispatch.h"
#include "core/ops.h"

namespace mpsim {
namespace {

std::string name_of(OpId op) { return std::string(op.name()); }

void check_defined(OpId op, const Tensor& x) {
  if (!x.defined()) throw InvalidArgument("[" + name_of(op) + "] expected a defined tensor");
}

struct ReducePlan {
  Tensor permuted;      // kept dims first (in order), then the reduced dims
  Shape kept_sizes;     // the result's sizes without keepdim
  Shape keepdim_sizes;  // ... and with it (reduced dims of size 1)
  std::int64_t num_reduced = 0;
  std::int64_t count = 1;  // elements per reduction
};

ReducePlan plan_reduction(OpId op, const Tensor& x, const IntList& dims) {
  const std::int64_t nd = x.dim();
  std::vector<bool> reduced(static_cast<std::size_t>(nd), dims.empty());
  for (std::int64_t d : dims) {
    const std::int64_t w = wrap_dim(op.name(), d, nd);
    if (nd == 0) continue;  // a 0-dim tensor accepts dim 0 / -1: the full reduction
    if (reduced[w]) {
      throw ShapeError("[" + name_of(op) + "] dim " + std::to_string(w) +
                       " appears multiple times in the list of dims " + to_string(dims));
    }
    reduced[w] = true;
  }
  ReducePlan plan;
  IntList perm;
  std::vector<std::int64_t> kept, keep;
  for (std::int64_t d = 0; d < nd; ++d) {
    keep.push_back(reduced[d] ? 1 : x.sizes()[d]);
    if (!reduced[d]) {
      perm.push_back(d);
      kept.push_back(x.sizes()[d]);
    }
  }
  for (std::int64_t d = 0; d < nd; ++d) {
    if (reduced[d]) {
      perm.push_back(d);
      plan.count *= x.sizes()[d];
      ++plan.num_reduced;
    }
  }
  plan.permuted = x.permute(perm);
  plan.kept_sizes = Shape(std::move(kept));
  plan.keepdim_sizes = Shape(std::move(keep));
  return plan;
}

// Runs the reduction `op` of `input` (already in the kernel's dtype) into a new tensor of
// `out_dtype`.
// Note [strided reductions made dense]
// amax, amin, prod, logsumexp, argmax and argmin walk each output's elements in the row-major order
// of the reduced dims; where the innermost of those is strided (the channels of NCHW, the rows of a
// column), each step reads a new cache line. Of a tensor of kDenseCopyMinElements or more, such
// reductions run on a copy with the reduced dims last (one transposing copy, the input's size while
// the op runs): the same elements in the same order, so the same result, over dense runs; the copy
// costs far less than a cache line per step
// (`elementwise_bench --benchmark_filter=reduce_channels`, beside a build without the copy;
// docs/measurements.md). sum, mean, norm, var and std sweep
// such layouts as rows (Note [lane-major column sums], Note [peeled outer dims]), and so do float32
// amax, amin and prod of a contiguous input over one dim but the last (Note [extreme columns],
// Note [product columns] in kernels_simd/row_stats.h; faster still than the copy).
constexpr std::int64_t kDenseCopyMinElements = std::int64_t{1} << 16;

bool made_dense(OpId op) {
  return op == op_id("amax") || op == op_id("amin") || op == op_id("prod") ||
         op == op_id("logsumexp") || op == op_id("argmax") || op == op_id("argmin");
}

Tensor run_reduction(OpId op, const Tensor& input, const IntList& dims, bool keepdim,
                     DType out_dtype, std::int64_t correction = 0) {
  const ReducePlan plan = plan_reduction(op, input, dims);
  Tensor out = empty(plan.kept_sizes, out_dtype, input.device());
  Tensor source = plan.permuted;
  // float32 amax, amin and prod of a contiguous input over one dim that is not the last sweep
  // their rows as columns in the kernel (Note [extreme columns], Note [product columns] in
  // kernels_simd/row_stats.h): no copy.
  const bool columns = (op == op_id("amax") || op == op_id("amin") || op == op_id("prod")) &&
                       input.dtype() == DType::Float32 && input.is_contiguous() &&
                       plan.num_reduced == 1 && dims.size() == 1 &&
                       wrap_dim(op.name(), dims[0], input.dim()) != input.dim() - 1;
  if (made_dense(op) && !columns && plan.count > 1 && source.numel() >= kDenseCopyMinElements &&
      !source.is_contiguous()) {
    std::int64_t inner = 1;  // the innermost reduced dim of more than one element
    for (std::int64_t d = source.dim() - 1; d >= source.dim() - plan.num_reduced; --d) {
      if (source.size(d) > 1) {
        inner = source.stride(d);
        break;
      }
    }
    if (inner != 1) source = source.contiguous();
  }
  dispatch(OpCall{op, input.dtype(), {source}, {out}, ReduceParams{plan.num_reduced, correction}});
  return keepdim ? out.view(plan.keepdim_sizes) : out;
}

void require_floating(OpId op, DType d) {
  if (!is_floating(d)) {
    throw DTypeError("[" + name_of(op) + "] expected a floating point input (or dtype), got " +
                     std::string(dtype_name(d)));
  }
}

// sum and prod: integer and bool inputs accumulate and return int64, as PyTorch.
Tensor sum_like(OpId op, const Tensor& x, const IntList& dims, bool keepdim,
                std::optional<DType> dtype) {
  check_defined(op, x);
  const DType out = dtype.value_or(is_integral(x.dtype(), true) ? DType::Int64 : x.dtype());
  if (out == DType::Bool) {  // dtype=bool: torch's bool sum and prod (any and all), via int64
    return ne(run_reduction(op, x.to(DType::Int64), dims, keepdim, DType::Int64), Scalar(0));
  }
  return run_reduction(op, x.to(out), dims, keepdim, out);
}

void require_nonempty(OpId op, const Tensor& x, const IntList& dims) {
  const ReducePlan plan = plan_reduction(op, x, dims);
  if (plan.count == 0) {
    throw InvalidArgument(
        "[" + name_of(op) +
        "] expected a non-empty reduction: the reduced dims of a tensor of shape " +
        x.sizes().to_string() + " hold no elements (specify non-empty dims)");
  }
}

Tensor softmax_like(OpId op, const Tensor& x, std::int64_t dim, std::optional<DType> dtype) {
  check_defined(op, x);
  const DType d = dtype.value_or(x.dtype());
  require_floating(op, d);
  const Tensor input = x.to(d);
  const std::int64_t w = wrap_dim(op.name(), dim, input.dim());
  IntList perm;
  for (std::int64_t i = 0; i < input.dim(); ++i) {
    if (i != w) perm.push_back(i);
  }
  if (input.dim() > 0) perm.push_back(w);
  Tensor out = empty(input.sizes(), d, input.device());
  dispatch(OpCall{op, d, {input.permute(perm)}, {out.permute(perm)}, {}});
  return out;
}

Tensor arg_reduce(OpId op, const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  check_defined(op, x);
  if (x.numel() == 0) {
    throw InvalidArgument("[" + name_of(op) + "] expected a non-empty input, got shape " +
                          x.sizes().to_string());
  }
  if (!dim) {
    const Tensor r = run_reduction(op, x.reshape({-1}), {0}, false, DType::Int64);
    return keepdim ? r.view(Shape(std::vector<std::int64_t>(static_cast<std::size_t>(x.dim()), 1)))
                   : r;
  }
  require_nonempty(op, x, {*dim});
  // A 0-dim input (dim 0 or -1) reduces as its one-element view: index 0, 0-dim, as PyTorch.
  if (x.dim() == 0) return run_reduction(op, x.reshape({1}), {0}, false, DType::Int64);
  return run_reduction(op, x, {*dim}, keepdim, DType::Int64);
}

}  // namespace

Tensor sum(const Tensor& x, const IntList& dims, bool keepdim, std::optional<DType> dtype) {
  if (x.defined() && is_complex(x.dtype()) && (!dtype || *dtype == x.dtype())) {
    return complex_reduce(op_id("sum"), x, dims, keepdim);
  }
  return sum_like(op_id("sum"), x, dims, keepdim, dtype);
}

Tensor prod(const Tensor& x, const IntList& dims, bool keepdim, std::optional<DType> dtype) {
  return sum_like(op_id("prod"), x, dims, keepdim, dtype);
}

Tensor mean(const Tensor& x, const IntList& dims, bool keepdim, std::optional<DType> dtype) {
  constexpr OpId kMean = op_id("mean");
  check_defined(kMean, x);
  if (is_complex(x.dtype()) && (!dtype || *dtype == x.dtype())) {
    return complex_reduce(kMean, x, dims, keepdim);
  }
  const DType d = dtype.value_or(x.dtype());
  require_floating(kMean, d);
  return run_reduction(kMean, x.to(d), dims, keepdim, d);
}

Tensor var(const Tensor& x, const IntList& dims, std::int64_t correction, bool keepdim) {
  constexpr OpId kVar = op_id("var");
  check_defined(kVar, x);
  require_floating(kVar, x.dtype());
  return run_reduction(kVar, x, dims, keepdim, x.dtype(),
                       correction);
}

Tensor std(const Tensor& x, const IntList& dims, std::int64_t correction, bool keepdim) {
  constexpr OpId kStd = op_id("std");
  check_defined(kStd, x);
  require_floating(kStd, x.dtype());
  return run_reduction(kStd, x, dims, keepdim, x.dtype(),
                       correction);
}

std::pair<Tensor, Tensor> var_mean(const Tensor& x, const IntList& dims, std::int64_t correction,
                                   bool keepdim) {
  constexpr OpId kVarMean = op_id("var_mean");
  check_defined(kVarMean, x);
  require_floating(kVarMean, x.dtype());
  const ReducePlan plan = plan_reduction(kVarMean, x, dims);
  Tensor v = empty(plan.kept_sizes, x.dtype(), x.device());
  Tensor m = empty(plan.kept_sizes, x.dtype(), x.device());
  dispatch(
      OpCall{kVarMean,
             x.dtype(),
             {plan.permuted},
             {v, m},
             ReduceParams{plan.num_reduced, correction}});
  if (keepdim) return {v.view(plan.keepdim_sizes), m.view(plan.keepdim_sizes)};
  return {v, m};
}

Tensor norm(const Tensor& x, const IntList& dims, bool keepdim) {
  constexpr OpId kNorm = op_id("norm");
  check_defined(kNorm, x);
  require_floating(kNorm, x.dtype());
  return run_reduction(kNorm, x, dims, keepdim, x.dtype());
}

Tensor amax(const Tensor& x, const IntList& dims, bool keepdim) {
  constexpr OpId kAmax = op_id("amax");
  check_defined(kAmax, x);
  require_nonempty(kAmax, x, dims);
  return run_reduction(kAmax, x, dims, keepdim, x.dtype());
}

Tensor amin(const Tensor& x, const IntList& dims, bool keepdim) {
  constexpr OpId kAmin = op_id("amin");
  check_defined(kAmin, x);
  require_nonempty(kAmin, x, dims);
  return run_reduction(kAmin, x, dims, keepdim, x.dtype());
}

Tensor logsumexp(const Tensor& x, const IntList& dims, bool keepdim) {
  constexpr OpId kLse = op_id("logsumexp");
  check_defined(kLse, x);
  const DType d = is_floating(x.dtype()) ? x.dtype() : DType::Float32;
  const ReducePlan plan = plan_reduction(kLse, x, dims);
  if (plan.count == 0) {  // log of an empty sum: -inf, as torch.logsumexp
    const Tensor out =
        full(plan.kept_sizes, -std::numeric_limits<double>::infinity(), d, x.device());
    return keepdim ? out.view(plan.keepdim_sizes) : out;
  }
  return run_reduction(kLse, x.to(d), dims, keepdim, d);
}

Tensor argmax(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  return arg_reduce(op_id("argmax"), x, dim, keepdim);
}
Tensor argmin(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  return arg_reduce(op_id("argmin"), x, dim, keepdim);
}

Tensor softmax(const Tensor& x, std::int64_t dim, std::optional<DType> dtype) {
  return softmax_like(op_id("softmax"), x, dim, dtype);
}
Tensor log_softmax(const Tensor& x, std::int64_t dim, std::optional<DType> dtype) {
  return softmax_like(op_id("log_softmax"), x, dim, dtype);
}

}  // namespace mpsim
