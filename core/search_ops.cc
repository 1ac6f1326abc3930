// Searching sorted sequences, unique values, histograms and membership (core/search_ops.h).
#include "core/search_ops.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/op_checks.h"
#include "core/ops.h"
#include "core/scatter_ops.h"
#include "core/shape.h"

namespace mpsim {
namespace {

using detail::require_defined;
using detail::tag;

// (values, inverse, counts) of the runs of equal neighbours of `sorted` (n rows: elements of
// a 1-d tensor, or slices of a 2-d one), whose row i is input element order[i] (order: none
// for the identity).
std::vector<Tensor> runs(const Tensor& sorted, const std::optional<Tensor>& order) {
  const std::int64_t n = sorted.sizes()[0];
  const Device dev = sorted.device();
  const Tensor head = ones({1}, DType::Bool, dev);
  Tensor differs;
  if (sorted.dim() == 1) {
    differs = ne(sorted.narrow(0, 1, n - 1), sorted.narrow(0, 0, n - 1));
  } else {
    const Tensor d = ne(sorted.narrow(0, 1, n - 1), sorted.narrow(0, 0, n - 1)).to(DType::Int64);
    differs = gt(sum(d, {1}), 0);
  }
  const Tensor starts = cat({head, differs}, 0);
  const Tensor positions = nonzero(starts).reshape({-1});
  const std::int64_t k = positions.numel();
  const Tensor values = index_select(sorted, 0, positions);
  const Tensor ends = cat({positions, full({1}, n, DType::Int64, dev)}, 0);
  const Tensor counts = sub(ends.narrow(0, 1, k), ends.narrow(0, 0, k));
  const Tensor group = sub(cumsum(starts, 0), 1);
  Tensor inverse = group;
  if (order) inverse = scatter(zeros({n}, DType::Int64, dev), 0, *order, group);
  return {values, inverse, counts};
}

std::vector<Tensor> unique_of(std::string_view op, const Tensor& x, std::optional<std::int64_t> dim,
                              bool sorted) {
  require_defined(op, x, "input");
  const Device dev = x.device();
  if (!dim) {
    const Tensor flat = x.reshape({-1});
    if (flat.numel() == 0) {
      return {flat.clone(), zeros(x.sizes(), DType::Int64, dev), zeros({0}, DType::Int64, dev)};
    }
    std::vector<Tensor> r;
    if (sorted) {
      auto [v, perm] = sort(flat);
      r = runs(v, perm);
    } else {
      r = runs(flat, std::nullopt);
    }
    r[1] = r[1].reshape(x.sizes());
    return r;
  }
  const Tensor v = x.dim() == 0 ? x.reshape({1}) : x;
  const std::int64_t d = wrap_dim(op, *dim, v.dim());
  const std::int64_t s = v.sizes()[d];
  if (s == 0) return {v.clone(), zeros({0}, DType::Int64, dev), zeros({0}, DType::Int64, dev)};
  const Tensor moved = v.transpose(0, d).contiguous();
  const Tensor rows = moved.reshape({s, -1});
  const std::int64_t m = rows.sizes()[1];
  std::vector<Tensor> r;
  if (sorted && m > 0) {
    // Lexicographic order of the rows: stable sorts by each column, the last column first.
    Tensor perm = arange(Scalar(0), Scalar(s), Scalar(1), DType::Int64, dev);
    for (std::int64_t c = m - 1; c >= 0; --c) {
      const Tensor keys = index_select(rows.select(1, c), 0, perm);
      perm = index_select(perm, 0, sort(keys).second);
    }
    r = runs(index_select(rows, 0, perm), perm);
  } else {
    r = runs(rows, std::nullopt);
  }
  std::vector<std::int64_t> shape = moved.sizes().dims();
  shape[0] = r[0].sizes()[0];
  r[0] = r[0].reshape(Shape(shape)).transpose(0, d);
  if (x.dim() == 0) r[0] = r[0].reshape({-1});
  return r;
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  constexpr std::string_view kOp = "searchsorted";
  require_defined(kOp, sorted_sequence, "sorted_sequence");
  require_defined(kOp, values, "input");
  if (side) {
    if (*side != "left" && *side != "right") {
      throw InvalidArgument("[searchsorted] side can only be 'left' or 'right', got '" +
                            std::string(*side) + "'");
    }
    if (right && *side == "left") {
      throw InvalidArgument(
          "[searchsorted] side and right can't be set to opposites, got side of left while "
          "right was True");
    }
    right = *side == "right";
  }
  const Tensor& seq0 = sorted_sequence;
  if (seq0.dim() == 0) {
    throw ShapeError("[searchsorted] boundaries tensor should have positive dimension, got 0-d");
  }
  if (seq0.device() != values.device()) {
    throw DeviceError("[searchsorted] expected the boundaries and input on one device");
  }
  const bool batched = seq0.dim() > 1;
  if (batched) {
    bool match = values.dim() == seq0.dim();
    for (std::int64_t k = 0; match && k + 1 < seq0.dim(); ++k) {
      match = seq0.sizes()[k] == values.sizes()[k];
    }
    if (!match) {
      throw ShapeError(
          "[searchsorted] the first N-1 dimensions of boundaries tensor and input value tensor "
          "must match, got boundaries " +
          seq0.sizes().to_string() + " and input " + values.sizes().to_string());
    }
  }
  Tensor seq = seq0;
  if (sorter) {
    if (sorter->dtype() != DType::Int64) {
      throw DTypeError("[searchsorted] sorter must be an int64 tensor, got " +
                       std::string(dtype_name(sorter->dtype())));
    }
    if (sorter->sizes() != seq0.sizes()) {
      throw ShapeError("[searchsorted] boundaries and sorter must have the same size, got " +
                       seq0.sizes().to_string() + " and " + sorter->sizes().to_string());
    }
    if (seq0.numel() > 0) seq = gather(seq0, -1, *sorter);
  }
  // torch's binary search, all values at once: [lo, hi) halves bit_width(m) times. Left
  // moves past a boundary b while !(b >= v), right while !(b > v), so a NaN value passes
  // every boundary, and NaN boundaries (sorted last) are passed where the search meets them.
  const std::int64_t m = seq.dim() == 0 ? 0 : seq.sizes()[seq.dim() - 1];
  const Tensor v = batched ? values : values.reshape({-1});
  Tensor lo = zeros(v.sizes(), DType::Int64, v.device());
  Tensor hi = full(v.sizes(), m, DType::Int64, v.device());
  for (std::int64_t len = m; len > 0 && v.numel() > 0; len >>= 1) {
    const Tensor mid = div(add(lo, hi), Scalar(2), "floor");
    const Tensor at = clamp(mid, std::nullopt, std::optional<Scalar>(m - 1));
    const Tensor b = batched ? gather(seq, -1, at) : index_select(seq, 0, at.reshape({-1}));
    const Tensor stop = right ? gt(b, v) : ge(b, v);
    const Tensor active = lt(lo, hi);
    lo = where(where(active, eq(stop, Scalar(false)), Scalar(false)), add(mid, Scalar(1)), lo);
    hi = where(where(active, stop, Scalar(false)), mid, hi);
  }
  const Tensor out = lo.reshape(values.sizes());
  return out_int32 ? out.to(DType::Int32) : out;
}

Tensor histc(const Tensor& x, std::int64_t bins, double min, double max) {
  require_defined("histc", x, "input");
  if (!is_floating(x.dtype())) {
    throw DTypeError("[histc] expected a floating point input, got " +
                     std::string(dtype_name(x.dtype())));
  }
  if (bins <= 0) throw InvalidArgument("[histc] bins must be > 0, got " + std::to_string(bins));
  if (min > max) throw InvalidArgument("[histc] max must be larger than min");
  if (min == max && x.numel() > 0) {
    min = amin(x).item<double>();
    max = amax(x).item<double>();
  }
  if (min == max) {
    min -= 1;
    max += 1;
  }
  if (!std::isfinite(min) || !std::isfinite(max)) {
    throw InvalidArgument("[histc] range of [" + std::to_string(min) + ", " + std::to_string(max) +
                          "] is not finite");
  }
  const Device dev = x.device();
  // float32 and float64: torch's expression, each step rounded in the input's dtype (the same
  // bins as torch). float16 and bfloat16: the same expression in float32, where it picks the
  // exact bin of every half value (x - min is exact there and the one rounded quotient cannot
  // cross an edge at these precisions); torch's half kernels round each step to the half type
  // and then correct the bin against half-rounded edges, which a float32 evaluation matches
  // wherever those edges are exact (docs/conformance.md).
  const DType compute = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16
                            ? DType::Float32
                            : x.dtype();
  // the range in the input's dtype first, as torch's
  const Tensor lo = scalar_tensor(min, x.dtype(), dev).to(compute);
  const Tensor hi = scalar_tensor(max, x.dtype(), dev).to(compute);
  const Tensor flat = x.reshape({-1}).to(compute);
  const Tensor pos = div(mul(sub(flat, lo), Scalar(bins)), sub(hi, lo));
  const Tensor inside = where(ge(flat, lo), le(flat, hi), Scalar(false));
  const Tensor bin = clamp(mpsim::floor(where(inside, pos, Scalar(0))).to(DType::Int64),
                           std::optional<Scalar>(0), std::optional<Scalar>(bins - 1));
  // Elements outside go to a last slot that is dropped.
  const Tensor slot = where(inside, bin, Scalar(bins));
  const Tensor counts =
      put(zeros({bins + 1}, x.dtype(), dev), slot, ones(slot.sizes(), x.dtype(), dev), true);
  return counts.narrow(0, 0, bins).contiguous();
}

Tensor isin(const Tensor& elements, const Tensor& test_elements, bool invert) {
  require_defined("isin", elements, "elements");
  require_defined("isin", test_elements, "test_elements");
  const Tensor e = elements.reshape({-1, 1});
  const Tensor t = test_elements.reshape({1, -1});
  Tensor hit = t.numel() == 0 ? zeros({e.sizes()[0]}, DType::Bool, elements.device())
                              : gt(sum(eq(e, t).to(DType::Int64), {1}), 0);
  if (invert) hit = eq(hit, Scalar(false));
  return hit.reshape(elements.sizes());
}

std::vector<Tensor> unique(const Tensor& x, std::optional<std::int64_t> dim) {
  return unique_of("unique", x, dim, true);
}

std::vector<Tensor> unique_consecutive(const Tensor& x, std::optional<std::int64_t> dim) {
  return unique_of("unique_consecutive", x, dim, false);
}

}  // namespace mpsim
