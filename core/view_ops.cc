// Views, their scatters and the shape ops made of views and copies (core/view_ops.h).
#include "core/view_ops.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/op_checks.h"
#include "core/ops.h"
#include "core/shape.h"
#include "core/type_promotion.h"

namespace mpsim {
namespace {

using detail::require_defined;
using detail::tag;

// A copy of x with its own dense storage (row-major), for the scatters to write into.
Tensor fresh_copy(const Tensor& x) {
  Tensor out = empty(x.sizes(), x.dtype(), x.device());
  out.copy_(x);
  return out;
}

// src written into `view` (a view of a fresh copy): src must have the view's shape.
void write_exactly(std::string_view op, Tensor view, const Tensor& src) {
  require_defined(op, src, "src");
  if (src.sizes() != view.sizes()) {
    throw ShapeError(tag(op) + "expected src to have the shape of the written slice " +
                     view.sizes().to_string() + ", got " + src.sizes().to_string());
  }
  if (src.device() != view.device()) {
    throw DeviceError(tag(op) + "expected src on " + view.device().to_string() + ", got " +
                      src.device().to_string());
  }
  view.copy_(src);
}

}  // namespace

Tensor diagonal(const Tensor& x, std::int64_t offset, std::int64_t dim1, std::int64_t dim2) {
  require_defined("diagonal", x, "input");
  const std::int64_t d1 = wrap_dim("diagonal", dim1, x.dim());
  const std::int64_t d2 = wrap_dim("diagonal", dim2, x.dim());
  if (d1 == d2) {
    throw InvalidArgument("[diagonal] dimensions cannot be identical " + std::to_string(dim1) +
                          ", " + std::to_string(dim2));
  }
  const std::int64_t n1 = x.sizes()[d1], n2 = x.sizes()[d2];
  const std::int64_t len = std::max<std::int64_t>(
      0, offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2));
  std::int64_t start = x.storage_offset();
  if (len > 0) start += offset >= 0 ? offset * x.strides()[d2] : -offset * x.strides()[d1];
  std::vector<std::int64_t> sizes;
  Strides strides;
  for (std::int64_t k = 0; k < x.dim(); ++k) {
    if (k == d1 || k == d2) continue;
    sizes.push_back(x.sizes()[k]);
    strides.push_back(x.strides()[k]);
  }
  sizes.push_back(len);
  strides.push_back(x.strides()[d1] + x.strides()[d2]);
  return x.as_strided(Shape(sizes), strides, start);
}

Tensor diag(const Tensor& x, std::int64_t k) {
  require_defined("diag", x, "input");
  if (x.dim() == 2) return diagonal(x, k, 0, 1).clone();
  if (x.dim() != 1) {
    throw ShapeError("[diag] supports 1-d or 2-d tensors, got " + std::to_string(x.dim()) + "-d");
  }
  const std::int64_t n = x.sizes()[0] + (k >= 0 ? k : -k);
  Tensor out = zeros({n, n}, x.dtype(), x.device());
  diagonal(out, k, 0, 1).copy_(x);
  return out;
}

Tensor diag_embed(const Tensor& x, std::int64_t offset, std::int64_t dim1, std::int64_t dim2) {
  require_defined("diag_embed", x, "input");
  const std::int64_t nd = x.dim() + 1;
  const std::int64_t d1 = wrap_dim("diag_embed", dim1, nd);
  const std::int64_t d2 = wrap_dim("diag_embed", dim2, nd);
  if (d1 == d2) {
    throw InvalidArgument("[diag_embed] diagonal dimensions cannot be identical " +
                          std::to_string(dim1) + ", " + std::to_string(dim2));
  }
  const Tensor v = x.dim() == 0 ? x.reshape({1}) : x;
  const std::int64_t n = v.sizes()[v.dim() - 1] + (offset >= 0 ? offset : -offset);
  std::vector<std::int64_t> sizes;
  std::int64_t next = 0;
  for (std::int64_t k = 0; k < nd; ++k) {
    sizes.push_back(k == d1 || k == d2 ? n : v.sizes()[next++]);
  }
  Tensor out = zeros(Shape(sizes), x.dtype(), x.device());
  diagonal(out, offset, d1, d2).copy_(v);
  return out;
}

Tensor trace(const Tensor& x) {
  require_defined("trace", x, "input");
  if (x.dim() != 2) {
    throw ShapeError("[trace] expected a matrix, got a tensor of shape " + x.sizes().to_string());
  }
  const Tensor d = diagonal(x, 0, 0, 1);
  return is_floating(x.dtype()) ? sum(d) : sum(d, {}, false, DType::Int64);
}

Tensor select_scatter(const Tensor& x, const Tensor& src, std::int64_t dim, std::int64_t index) {
  require_defined("select_scatter", x, "input");
  Tensor out = fresh_copy(x);
  write_exactly("select_scatter", out.select(dim, index), src.to(x.dtype()));
  return out;
}

Tensor slice_scatter(const Tensor& x, const Tensor& src, std::int64_t dim,
                     std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                     std::int64_t step) {
  require_defined("slice_scatter", x, "input");
  Tensor out = fresh_copy(x);
  const std::int64_t d = wrap_dim("slice_scatter", dim, x.dim());
  const std::int64_t n = x.dim() == 0 ? 0 : x.sizes()[d];
  write_exactly("slice_scatter", out.slice(d, start.value_or(0), end.value_or(n), step),
                src.to(x.dtype()));
  return out;
}

Tensor diagonal_scatter(const Tensor& x, const Tensor& src, std::int64_t offset, std::int64_t dim1,
                        std::int64_t dim2) {
  require_defined("diagonal_scatter", x, "input");
  Tensor out = fresh_copy(x);
  write_exactly("diagonal_scatter", diagonal(out, offset, dim1, dim2), src.to(x.dtype()));
  return out;
}

Tensor as_strided_view(const Tensor& x, const IntList& size, const IntList& stride,
                       std::optional<std::int64_t> storage_offset) {
  require_defined("as_strided", x, "input");
  return x.as_strided(Shape(size), Strides(stride.begin(), stride.end()),
                      storage_offset.value_or(x.storage_offset()));
}

Tensor as_strided_scatter(const Tensor& x, const Tensor& src, const IntList& size,
                          const IntList& stride, std::optional<std::int64_t> storage_offset) {
  require_defined("as_strided_scatter", x, "input");
  Tensor out = fresh_copy(x);
  const Tensor view = out.as_strided(Shape(size), Strides(stride.begin(), stride.end()),
                                     storage_offset.value_or(0));
  write_exactly("as_strided_scatter", view, src.to(x.dtype()));
  return out;
}

std::vector<Tensor> tensor_split(const Tensor& x, std::int64_t sections, std::int64_t dim) {
  require_defined("tensor_split", x, "input");
  if (x.dim() == 0) throw ShapeError("[tensor_split] expected at least a 1-d tensor, got 0-d");
  if (sections <= 0) {
    throw InvalidArgument("[tensor_split] number of sections must be larger than 0, got " +
                          std::to_string(sections));
  }
  const std::int64_t d = wrap_dim("tensor_split", dim, x.dim());
  const std::int64_t n = x.sizes()[d];
  std::vector<Tensor> out;
  std::int64_t start = 0;
  for (std::int64_t s = 0; s < sections; ++s) {
    const std::int64_t len = n / sections + (s < n % sections ? 1 : 0);
    out.push_back(x.narrow(d, start, len));
    start += len;
  }
  return out;
}

std::vector<Tensor> tensor_split(const Tensor& x, const IntList& indices, std::int64_t dim) {
  require_defined("tensor_split", x, "input");
  if (x.dim() == 0) throw ShapeError("[tensor_split] expected at least a 1-d tensor, got 0-d");
  const std::int64_t d = wrap_dim("tensor_split", dim, x.dim());
  const std::int64_t n = x.sizes()[d];
  std::vector<Tensor> out;
  std::int64_t start = 0;
  for (std::int64_t i : indices) {
    out.push_back(x.slice(d, start, i));
    start = i;
  }
  out.push_back(x.slice(d, start, n));
  return out;
}

namespace {
// hsplit's, vsplit's and dsplit's dim, after the check of x's number of dims.
std::int64_t split_dim(const char* op, const Tensor& x) {
  const std::string name(op);
  const std::int64_t need = name == "hsplit" ? 1 : name == "vsplit" ? 2 : 3;
  if (x.dim() < need) {
    throw ShapeError(tag(op) + "requires a tensor with at least " + std::to_string(need) +
                     " dimension(s), got " + std::to_string(x.dim()));
  }
  if (name == "hsplit") return x.dim() == 1 ? 0 : 1;
  return name == "vsplit" ? 0 : 2;
}
}  // namespace

std::vector<Tensor> split_along(const char* op, const Tensor& x, std::int64_t sections) {
  require_defined(op, x, "input");
  const std::int64_t d = split_dim(op, x);
  if (sections <= 0 || x.sizes()[d] % sections != 0) {
    throw ShapeError(tag(op) + "attempted to split along dimension " + std::to_string(d) +
                     ", but the size of the dimension " + std::to_string(x.sizes()[d]) +
                     " is not divisible by the split_size " + std::to_string(sections));
  }
  return tensor_split(x, sections, d);
}

std::vector<Tensor> split_along(const char* op, const Tensor& x, const IntList& indices) {
  require_defined(op, x, "input");
  return tensor_split(x, indices, split_dim(op, x));
}

Tensor block_diag(const std::vector<Tensor>& tensors) {
  ResultType rt;
  std::vector<Tensor> blocks;
  std::int64_t rows = 0, cols = 0;
  for (const Tensor& t : tensors) {
    require_defined("block_diag", t, "tensors");
    if (t.dim() > 2) {
      throw ShapeError("[block_diag] input tensors must have 2 or fewer dimensions, got " +
                       std::to_string(t.dim()));
    }
    if (!blocks.empty() && t.device() != blocks[0].device()) {
      throw DeviceError("[block_diag] expected all tensors on one device");
    }
    rt.add(t);
    blocks.push_back(t.dim() == 2 ? t : t.reshape({1, -1}));
    rows += blocks.back().sizes()[0];
    cols += blocks.back().sizes()[1];
  }
  if (blocks.empty()) return empty({1, 0}, DType::Float32);
  Tensor out = zeros({rows, cols}, rt.result(), blocks[0].device());
  std::int64_t r = 0, c = 0;
  for (const Tensor& b : blocks) {
    out.narrow(0, r, b.sizes()[0]).narrow(1, c, b.sizes()[1]).copy_(b);
    r += b.sizes()[0];
    c += b.sizes()[1];
  }
  return out;
}

Tensor kron(const Tensor& a, const Tensor& b) {
  require_defined("kron", a, "input");
  require_defined("kron", b, "other");
  const std::int64_t nd = std::max(a.dim(), b.dim());
  std::vector<std::int64_t> av, bv, out;
  for (std::int64_t k = 0; k < nd; ++k) {
    const std::int64_t ka = k - (nd - a.dim()), kb = k - (nd - b.dim());
    const std::int64_t sa = ka >= 0 ? a.sizes()[ka] : 1, sb = kb >= 0 ? b.sizes()[kb] : 1;
    av.insert(av.end(), {sa, 1});
    bv.insert(bv.end(), {1, sb});
    out.push_back(sa * sb);
  }
  return mul(a.reshape(Shape(av)), b.reshape(Shape(bv))).reshape(Shape(out));
}

Tensor repeat_interleave(const Tensor& x, std::int64_t repeats, std::optional<std::int64_t> dim) {
  require_defined("repeat_interleave", x, "input");
  if (repeats < 0) throw InvalidArgument("[repeat_interleave] repeats can not be negative");
  const Tensor v = dim ? x : x.reshape({-1});
  const Tensor w = v.dim() == 0 ? v.reshape({1}) : v;
  const std::int64_t d = wrap_dim("repeat_interleave", dim.value_or(0), w.dim());
  std::vector<std::int64_t> sizes = w.sizes().dims();
  sizes.insert(sizes.begin() + d + 1, repeats);
  return w.unsqueeze(d + 1).expand(Shape(sizes)).flatten(d, d + 1);
}

Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<std::int64_t> dim) {
  require_defined("repeat_interleave", x, "input");
  require_defined("repeat_interleave", repeats, "repeats");
  if (repeats.dtype() != DType::Int64 && repeats.dtype() != DType::Int32) {
    throw DTypeError("[repeat_interleave] repeats has to be an integer tensor, got " +
                     std::string(dtype_name(repeats.dtype())));
  }
  if (repeats.dim() > 1) {
    throw ShapeError("[repeat_interleave] repeats must be 0-dim or 1-dim, got shape " +
                     repeats.sizes().to_string());
  }
  if (repeats.numel() == 1 && repeats.dim() == 0) {
    return repeat_interleave(x, repeats.item<std::int64_t>(), dim);
  }
  const Tensor v = dim ? x : x.reshape({-1});
  const Tensor w = v.dim() == 0 ? v.reshape({1}) : v;
  const std::int64_t d = wrap_dim("repeat_interleave", dim.value_or(0), w.dim());
  const std::vector<std::int64_t> counts = repeats.to_vector<std::int64_t>();
  if (counts.size() == 1) return repeat_interleave(x, counts[0], dim);
  if (static_cast<std::int64_t>(counts.size()) != w.sizes()[d]) {
    throw ShapeError(
        "[repeat_interleave] repeats must have the same size as input along dim, got " +
        std::to_string(counts.size()) + " and " + std::to_string(w.sizes()[d]));
  }
  std::vector<std::int64_t> index;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 0) throw InvalidArgument("[repeat_interleave] repeats can not be negative");
    index.insert(index.end(), static_cast<std::size_t>(counts[i]), static_cast<std::int64_t>(i));
  }
  return index_select(
      w, d, from_vector(index, Shape{static_cast<std::int64_t>(index.size())}, x.device()));
}

Tensor combinations(const Tensor& x, std::int64_t r, bool with_replacement) {
  require_defined("combinations", x, "input");
  if (x.dim() != 1) {
    throw ShapeError("[combinations] expect a 1D vector, but got shape " + x.sizes().to_string());
  }
  if (r < 0) {
    throw InvalidArgument("[combinations] expect a non-negative number, but got " +
                          std::to_string(r));
  }
  if (r == 0) return empty({0}, x.dtype(), x.device());
  const std::int64_t n = x.sizes()[0];
  // The combinations in itertools' order: each row's indices ascend (strictly without
  // replacement); the next row increments the last index that can grow.
  std::vector<std::vector<std::int64_t>> cols(static_cast<std::size_t>(r));
  std::vector<std::int64_t> row(static_cast<std::size_t>(r));
  for (std::int64_t k = 0; k < r; ++k) row[k] = with_replacement ? 0 : k;
  const auto last = [&](std::int64_t k) { return with_replacement ? n - 1 : n - r + k; };
  bool more = with_replacement ? n > 0 : r <= n;
  while (more) {
    for (std::int64_t k = 0; k < r; ++k) cols[k].push_back(row[k]);
    std::int64_t k = r - 1;
    while (k >= 0 && row[k] == last(k)) --k;
    if (k < 0) break;
    ++row[k];
    for (std::int64_t j = k + 1; j < r; ++j) row[j] = with_replacement ? row[k] : row[j - 1] + 1;
  }
  const auto count = static_cast<std::int64_t>(cols[0].size());
  std::vector<Tensor> parts;
  for (const auto& c : cols) {
    parts.push_back(index_select(x, 0, from_vector(c, Shape{count}, x.device())));
  }
  return stack(parts, 1);
}

}  // namespace mpsim
