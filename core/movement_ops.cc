// Data movement: cat, stack, split, chunk, index_select, gather, flip, repeat, pad, tril, triu.
// cat, stack, split, chunk and repeat are compositions of views and the copy kernel;
// index_select and gather run the gather kernel on views built here; flip, pad, tril and triu
// have kernels of their own (kernels_simd/rearrange.cc).
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/checked_math.h"
#include "core/complex_ops.h"
#include "core/dispatch.h"
#include "core/ops.h"
#include "core/type_promotion.h"

namespace mpsim {
namespace {

constexpr OpId kCopy = op_id("copy");
constexpr OpId kGather = op_id("gather");
constexpr OpId kFlip = op_id("flip");
constexpr OpId kPad = op_id("pad");

void require_defined(std::string_view op, const Tensor& t, std::string_view what) {
  if (!t.defined()) {
    throw InvalidArgument("[" + std::string(op) + "] expected a defined tensor for " +
                          std::string(what));
  }
}

// Throws naming the first index of `index` outside [0, size); the kernel has already found
// that there is one (Note [index checks] in kernels_simd/index.cc).
void name_bad_index(std::string_view op, const Tensor& index, std::int64_t dim, std::int64_t size) {
  for (std::int64_t v : index.to_vector<std::int64_t>()) {
    if (v < 0 || v >= size) {
      throw ShapeError("[" + std::string(op) + "] index " + std::to_string(v) +
                       " is out of range for dimension " + std::to_string(dim) + " with size " +
                       std::to_string(size));
    }
  }
}

// out[e] = source[e + index[e] * stride]: `source` and `index` are views with the output's sizes
// (the gathered dim, `dim` of the input, has stride 0 in `source` and `size` elements).
Tensor run_gather(std::string_view op, const Tensor& source, const Tensor& index, std::int64_t dim,
                  std::int64_t size, std::int64_t stride, DType dtype) {
  Tensor out = empty(index.sizes(), dtype, source.device());
  if (out.numel() == 0) return out;
  try {
    dispatch(OpCall{kGather,
                    dtype,
                    {source, index},
                    {out},
                    GatherParams{stride, size}});
  } catch (const ShapeError&) {
    name_bad_index(op, index, dim, size);
    throw;
  }
  return out;
}

std::string list_position(std::size_t i) {
  return "tensor number " + std::to_string(i) + " in the list";
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
  if (tensors.empty()) throw InvalidArgument("[cat] expected a non-empty list of tensors");
  ResultType rt;
  std::vector<const Tensor*> parts;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    require_defined("cat", tensors[i], list_position(i));
    rt.add(tensors[i]);
    if (tensors[i].dim() == 0) {
      throw ShapeError("[cat] zero-dimensional tensor (" + list_position(i) +
                       ") cannot be concatenated");
    }
    if (!(tensors[i].dim() == 1 && tensors[i].numel() == 0)) parts.push_back(&tensors[i]);
  }
  const DType dtype = rt.result();
  if (parts.empty()) return empty({0}, dtype, tensors[0].device());
  const Tensor& ref = *parts[0];
  const std::int64_t d = wrap_dim("cat", dim, ref.dim());
  std::vector<std::int64_t> sizes = ref.sizes().dims();
  sizes[d] = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Tensor& t = *parts[i];
    if (t.device() != ref.device()) {
      throw DeviceError("[cat] expected all tensors on one device, got " +
                        ref.device().to_string() + " and " + t.device().to_string());
    }
    if (t.dim() != ref.dim()) {
      throw ShapeError("[cat] tensors must have the same number of dimensions: got " +
                       std::to_string(ref.dim()) + " and " + std::to_string(t.dim()));
    }
    for (std::int64_t k = 0; k < t.dim(); ++k) {
      if (k != d && t.sizes()[k] != ref.sizes()[k]) {
        throw ShapeError("[cat] sizes of tensors must match except in dimension " +
                         std::to_string(d) + ": expected size " + std::to_string(ref.sizes()[k]) +
                         " but got size " + std::to_string(t.sizes()[k]) + " at dimension " +
                         std::to_string(k) + " for a tensor of shape " + t.sizes().to_string());
      }
    }
    sizes[d] = checked_add("cat", sizes[d], t.sizes()[d], [&] {
      return "the size of dimension " + std::to_string(d) + " of the result";
    });
  }
  // As PyTorch's: channels-last when every part is a dense channels-last 4-d tensor, else
  // row-major (Note [elementwise output layout] in core/tensor.cc for other ops' rule).
  bool channels_last = ref.dim() == 4;
  for (const Tensor* t : parts) {
    channels_last =
        channels_last && !t->is_contiguous() && t->strides() == channels_last_strides(t->sizes());
  }
  Tensor out = channels_last ? empty_strided(Shape(sizes), channels_last_strides(Shape(sizes)),
                                             dtype, ref.device())
                             : empty(Shape(sizes), dtype, ref.device());
  // Each part is a copy into a fresh output on its device (no overlap, nothing to wait for).
  // The whole output's size goes with it: the copy kernel streams the stores of outputs too
  // large to stay in cache (Note [streaming stores]), and a cat's parts fill one such output.
  const CopyParams whole{static_cast<std::int64_t>(out.nbytes())};
  std::int64_t offset = 0;
  for (const Tensor* t : parts) {
    if (t->numel() > 0) {
      dispatch(OpCall{kCopy, dtype, {*t}, {out.narrow(d, offset, t->sizes()[d])}, whole});
    }
    offset += t->sizes()[d];
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim) {
  if (tensors.empty()) throw InvalidArgument("[stack] expected a non-empty list of tensors");
  require_defined("stack", tensors[0], list_position(0));
  const std::int64_t d = wrap_dim("stack", dim, tensors[0].dim() + 1);
  std::vector<Tensor> unsqueezed;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    require_defined("stack", tensors[i], list_position(i));
    if (tensors[i].sizes() != tensors[0].sizes()) {
      throw ShapeError("[stack] expects each tensor to be equal size, but got " +
                       tensors[0].sizes().to_string() + " at entry 0 and " +
                       tensors[i].sizes().to_string() + " at entry " + std::to_string(i));
    }
    unsqueezed.push_back(tensors[i].unsqueeze(d));
  }
  return cat(unsqueezed, d);
}

std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim) {
  require_defined("split", x, "input");
  if (x.dim() == 0) throw ShapeError("[split] cannot split a 0-dim tensor");
  const std::int64_t d = wrap_dim("split", dim, x.dim());
  const std::int64_t n = x.sizes()[d];
  if (split_size < 0 || (split_size == 0 && n != 0)) {
    throw InvalidArgument(
        "[split] split_size must be positive (0 only for an empty dimension), got " +
        std::to_string(split_size));
  }
  std::vector<Tensor> out;
  if (n == 0) return {x};
  for (std::int64_t off = 0; off < n; off += split_size)
    out.push_back(x.narrow(d, off, std::min(split_size, n - off)));
  return out;
}

std::vector<Tensor> split(const Tensor& x, const IntList& split_sizes, std::int64_t dim) {
  require_defined("split", x, "input");
  if (x.dim() == 0) throw ShapeError("[split] cannot split a 0-dim tensor");
  const std::int64_t d = wrap_dim("split", dim, x.dim());
  std::int64_t total = 0;
  for (std::int64_t s : split_sizes) {
    if (s < 0)
      throw InvalidArgument("[split] split sizes must be non-negative, got " +
                            to_string(split_sizes));
    total = checked_add("split", total, s, [] { return std::string("the sum of split_sizes"); });
  }
  if (total != x.sizes()[d]) {
    throw ShapeError("[split] split_sizes must sum exactly to " + std::to_string(x.sizes()[d]) +
                     " (the size of dimension " + std::to_string(d) +
                     "), but got split_sizes=" + to_string(split_sizes));
  }
  std::vector<Tensor> out;
  std::int64_t off = 0;
  for (std::int64_t s : split_sizes) {
    out.push_back(x.narrow(d, off, s));
    off += s;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim) {
  require_defined("chunk", x, "input");
  if (chunks <= 0)
    throw InvalidArgument("[chunk] chunks must be greater than 0, got " + std::to_string(chunks));
  if (x.dim() == 0) throw ShapeError("[chunk] cannot chunk a 0-dim tensor");
  const std::int64_t d = wrap_dim("chunk", dim, x.dim());
  const std::int64_t n = x.sizes()[d];
  // ceil(n / chunks), written so that no int64 chunks can overflow it.
  return split(x, std::max<std::int64_t>(1, n / chunks + (n % chunks != 0 ? 1 : 0)), d);
}

namespace {
// The index lives on the input's device (torch's rule: no implicit move between devices).
void check_index_device(const char* op, const Tensor& x, const Tensor& index) {
  if (index.device() != x.device()) {
    throw DeviceError(std::string("[") + op +
                      "] expected all tensors to be on the same device, but index is on " +
                      index.device().to_string() + " and the input on " + x.device().to_string());
  }
}
}  // namespace

// Note [complex moves]
// The gather, flip, pad and triangle kernels are real; a complex tensor moves as its [..., 2]
// parts (view_as_real), the same dims counted from the front, and the result is viewed back:
// the same elements, exactly.
namespace {
Tensor as_complex(const Tensor& parts) { return view_as_complex(parts.contiguous()); }
std::int64_t front_dim(std::string_view op, std::int64_t dim, const Tensor& x) {
  return wrap_dim(op, dim, std::max<std::int64_t>(x.dim(), 1));
}
}  // namespace

Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index) {
  require_defined("index_select", x, "input");
  require_defined("index_select", index, "index");
  if (is_complex(x.dtype())) {  // Note [complex moves]
    const Tensor src = x.dim() == 0 ? x.reshape({1}) : x;
    const Tensor out =
        as_complex(index_select(view_as_real(src), front_dim("index_select", dim, x), index));
    return x.dim() == 0 ? out.reshape({}) : out;
  }
  if (index.dtype() != DType::Int64 && index.dtype() != DType::Int32) {
    throw DTypeError("[index_select] expected an index of dtype int64 or int32, got " +
                     std::string(dtype_name(index.dtype())));
  }
  if (index.dim() > 1) {
    throw ShapeError("[index_select] index must be 0-d or 1-d, got shape " +
                     index.sizes().to_string());
  }
  check_index_device("index_select", x, index);
  const Tensor src = x.dim() == 0 ? x.reshape({1}) : x;
  const std::int64_t d = wrap_dim("index_select", dim, src.dim());
  const Tensor idx = index.reshape({-1}).to(DType::Int64).contiguous();
  std::vector<std::int64_t> sizes = src.sizes().dims();
  sizes[d] = idx.numel();
  const Shape out_sizes(sizes);
  Strides src_strides = src.strides(), idx_strides(sizes.size(), 0);
  src_strides[d] = 0;
  idx_strides[d] = 1;
  const Tensor source = src.as_strided(out_sizes, src_strides, src.storage_offset());
  const Tensor index_view = idx.as_strided(out_sizes, idx_strides, idx.storage_offset());
  Tensor out = run_gather("index_select", source, index_view, d, src.sizes()[d], src.strides()[d],
                          src.dtype());
  return x.dim() == 0 ? out.reshape({}) : out;
}

Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index) {
  require_defined("gather", x, "input");
  require_defined("gather", index, "index");
  if (is_complex(x.dtype()) && index.dim() == x.dim()) {  // Note [complex moves]
    const Tensor src = x.dim() == 0 ? x.reshape({1}) : x;
    const Tensor idx = index.dim() == 0 ? index.reshape({1}) : index;
    std::vector<std::int64_t> sizes(idx.sizes().begin(), idx.sizes().end());
    sizes.push_back(2);
    const Tensor out = as_complex(gather(view_as_real(src), front_dim("gather", dim, x),
                                        idx.unsqueeze(-1).expand(Shape(sizes))));
    return x.dim() == 0 ? out.reshape({}) : out;
  }
  if (index.dtype() != DType::Int64) {
    throw DTypeError("[gather] expected an index of dtype int64, got " +
                     std::string(dtype_name(index.dtype())));
  }
  if (index.dim() != x.dim()) {
    throw ShapeError("[gather] index " + index.sizes().to_string() + " and input " +
                     x.sizes().to_string() + " must have the same number of dimensions");
  }
  check_index_device("gather", x, index);
  const Tensor src = x.dim() == 0 ? x.reshape({1}) : x;
  const Tensor idx = index.dim() == 0 ? index.reshape({1}) : index;
  const std::int64_t d = wrap_dim("gather", dim, src.dim());
  for (std::int64_t k = 0; k < src.dim(); ++k) {
    if (k != d && idx.sizes()[k] > src.sizes()[k]) {
      throw ShapeError("[gather] index size " + std::to_string(idx.sizes()[k]) +
                       " exceeds input size " + std::to_string(src.sizes()[k]) + " at dimension " +
                       std::to_string(k));
    }
  }
  Strides src_strides = src.strides();
  src_strides[d] = 0;
  const Tensor source = src.as_strided(idx.sizes(), src_strides, src.storage_offset());
  Tensor out = run_gather("gather", source, idx, d, src.sizes()[d], src.strides()[d], src.dtype());
  return x.dim() == 0 ? out.reshape({}) : out;
}

Tensor flip(const Tensor& x, const IntList& dims) {
  require_defined("flip", x, "input");
  if (is_complex(x.dtype())) {  // Note [complex moves]
    IntList front;
    for (std::int64_t d : dims) front.push_back(front_dim("flip", d, x));
    return as_complex(flip(view_as_real(x), front));
  }
  std::vector<bool> seen(static_cast<std::size_t>(std::max<std::int64_t>(x.dim(), 1)), false);
  IntList flipped;
  for (std::int64_t dim : dims) {
    const std::int64_t d = wrap_dim("flip", dim, x.dim());
    if (seen[d])
      throw ShapeError("[flip] dim " + std::to_string(d) + " appears multiple times in " +
                       to_string(dims));
    seen[d] = true;
    if (x.dim() > 0) flipped.push_back(d);
  }
  // In x's layout, as PyTorch's (Note [elementwise output layout] in core/tensor.cc).
  Tensor out =
      empty_strided(x.sizes(), layout_strides(x.sizes(), {x}, true), x.dtype(), x.device());
  if (out.numel() > 0) dispatch(OpCall{kFlip, x.dtype(), {x}, {out}, FlipParams{flipped}});
  return out;
}

Tensor repeat(const Tensor& x, const IntList& repeats) {
  require_defined("repeat", x, "input");
  if (static_cast<std::int64_t>(repeats.size()) < x.dim()) {
    throw ShapeError("[repeat] the number of repeat dims (" + std::to_string(repeats.size()) +
                     ") cannot be smaller than the number of dimensions of the tensor (" +
                     std::to_string(x.dim()) + ")");
  }
  for (std::int64_t r : repeats) {
    if (r < 0)
      throw InvalidArgument("[repeat] repeats must be non-negative, got " + to_string(repeats));
  }
  // View the input as [1, ..., s0, s1, ...] (leading ones), then as (r_i, s_i) pairs with a
  // stride of 0 over each r_i, and copy that into the [r_i * s_i] result.
  std::vector<std::int64_t> padded(repeats.size() - static_cast<std::size_t>(x.dim()), 1);
  padded.insert(padded.end(), x.sizes().begin(), x.sizes().end());
  std::vector<std::int64_t> sizes, result;
  std::int64_t count = 1;  // checked before anything is copied (Note [checked sizes])
  for (std::size_t i = 0; i < repeats.size(); ++i) {
    sizes.insert(sizes.end(), {repeats[i], padded[i]});
    const auto what = [&] {
      return "the size of the result of repeating " + x.sizes().to_string() + " by " +
             to_string(repeats);
    };
    result.push_back(checked_mul("repeat", repeats[i], padded[i], what));
    count = checked_mul("repeat", count, result.back(), what);
  }
  const Tensor c = x.contiguous().reshape(Shape(padded));
  Strides strides;
  for (std::size_t i = 0; i < repeats.size(); ++i)
    strides.insert(strides.end(), {0, c.strides()[i]});
  const Tensor view = c.as_strided(Shape(sizes), strides, c.storage_offset());
  Tensor out = empty(Shape(sizes), x.dtype(), x.device());
  out.copy_(view);
  return out.reshape(Shape(result));
}

Tensor pad(const Tensor& x, const IntList& pads, std::string_view mode, double value) {
  require_defined("pad", x, "input");
  if (is_complex(x.dtype()) && static_cast<std::int64_t>(pads.size()) <= 2 * x.dim() &&
      pads.size() % 2 == 0) {  // Note [complex moves]: the parts dim unpadded
    IntList with_parts = {0, 0};
    with_parts.insert(with_parts.end(), pads.begin(), pads.end());
    const Tensor parts = view_as_real(x);
    Tensor out = pad(parts, with_parts, mode, value);
    if (mode == "constant" && value != 0) {  // the value is value + 0i
      out.select(-1, 1).copy_(pad(parts.select(-1, 1), pads, mode, 0.0));
    }
    return as_complex(out);
  }
  if (pads.size() % 2 != 0 || static_cast<std::int64_t>(pads.size()) > 2 * x.dim()) {
    throw InvalidArgument(
        "[pad] padding length must be even and at most twice the number of dims (" +
        std::to_string(x.dim()) + "), got " + to_string(pads));
  }
  if (mode != "constant" && mode != "reflect" && mode != "replicate") {
    throw InvalidArgument("[pad] mode must be 'constant', 'reflect' or 'replicate', got '" +
                          std::string(mode) + "'");
  }
  const std::int64_t nd = x.dim();
  std::vector<std::int64_t> sizes = x.sizes().dims();
  IntList all(static_cast<std::size_t>(2 * nd), 0);  // (left, right) of every dim, dim order
  for (std::size_t k = 0; k < pads.size() / 2; ++k) {
    const std::int64_t d = nd - 1 - static_cast<std::int64_t>(k);
    const std::int64_t left = pads[2 * k], right = pads[2 * k + 1], n = x.sizes()[d];
    if (mode != "constant") {
      if (left < 0 || right < 0)
        throw InvalidArgument("[pad] " + std::string(mode) + " padding must be non-negative, got " +
                              to_string(pads));
      if (mode == "reflect" && (left >= n || right >= n)) {
        throw ShapeError("[pad] reflect padding (" + std::to_string(left) + ", " +
                         std::to_string(right) + ") must be smaller than the size " +
                         std::to_string(n) + " of dimension " + std::to_string(d));
      }
      if (mode == "replicate" && n == 0 && left + right > 0) {
        throw ShapeError("[pad] replicate padding of an empty dimension " + std::to_string(d));
      }
    }
    const auto what = [&] { return "the padded size of dimension " + std::to_string(d); };
    sizes[d] = checked_add("pad", sizes[d], checked_add("pad", left, right, what), what);
    if (sizes[d] < 0) {
      throw ShapeError("[pad] padding " + to_string(pads) +
                       " gives a negative size for dimension " + std::to_string(d) + " of " +
                       x.sizes().to_string());
    }
    all[2 * d] = left;
    all[2 * d + 1] = right;
  }
  if (nd == 0) return x.clone();
  // Note [pad layout]
  // As PyTorch's: constant padding of a dense channels-last 4-d x gives a channels-last result, any
  // other a row-major one. The channels-last case pads x's dims in memory order (N, H, W, C: a
  // contiguous view) into a result contiguous in that order, viewed back, so the kernel writes
  // whole rows of a pixel's channels, far faster than padding into a row-major result
  // (`elementwise_bench --benchmark_filter=pad_channels_last`, beside a build that padded into a
  // row-major result; docs/measurements.md).
  std::vector<std::int64_t> order(static_cast<std::size_t>(nd));
  std::iota(order.begin(), order.end(), 0);
  if (mode == "constant" && nd == 4 && !x.is_contiguous() &&
      x.strides() == channels_last_strides(x.sizes())) {
    order = {0, 2, 3, 1};
  }
  IntList inverse(order.size()), permuted_pads(all.size());
  std::vector<std::int64_t> permuted_sizes(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto d = static_cast<std::size_t>(order[i]);
    inverse[d] = static_cast<std::int64_t>(i);
    permuted_pads[2 * i] = all[2 * d];
    permuted_pads[2 * i + 1] = all[2 * d + 1];
    permuted_sizes[i] = sizes[d];
  }
  Tensor out = empty(Shape(permuted_sizes), x.dtype(), x.device());
  if (out.numel() > 0) {
    dispatch(OpCall{
        kPad,
        x.dtype(),
        {x.permute(IntList(order.begin(), order.end()))},
        {out},
        PadParams{permuted_pads,
                  mode == "constant"  ? PadMode::Constant
                  : mode == "reflect" ? PadMode::Reflect
                                      : PadMode::Replicate,
                  Scalar(value)}});
  }
  return out.permute(inverse);
}

namespace {

Tensor triangle(OpId op, const Tensor& x, std::int64_t diagonal) {
  const std::string name(op.name());
  require_defined(name, x, "input");
  if (x.dim() < 2) {
    throw ShapeError("[" + name + "] input tensor must have at least 2 dimensions, got shape " +
                     x.sizes().to_string());
  }
  Tensor out = empty(x.sizes(), x.dtype(), x.device());
  if (out.numel() > 0) {
    dispatch(OpCall{op, x.dtype(), {x}, {out}, TriangleParams{diagonal}});
  }
  return out;
}

}  // namespace

namespace {

// A complex matrix batch's triangle: the parts dim moved to the front, so the matrix dims stay
// last (Note [complex moves]).
Tensor complex_triangle(const Tensor& x, std::int64_t diagonal, bool lower) {
  const std::int64_t n = x.dim();
  IntList front = {n}, back;
  for (std::int64_t d = 0; d < n; ++d) front.push_back(d);
  for (std::int64_t d = 1; d <= n; ++d) back.push_back(d);
  back.push_back(0);
  const Tensor parts = view_as_real(x).permute(front);
  return as_complex((lower ? tril(parts, diagonal) : triu(parts, diagonal)).permute(back));
}

}  // namespace

Tensor tril(const Tensor& x, std::int64_t diagonal) {
  if (x.defined() && is_complex(x.dtype()) && x.dim() >= 2) {
    return complex_triangle(x, diagonal, true);
  }
  return triangle(op_id("tril"), x, diagonal);
}
Tensor triu(const Tensor& x, std::int64_t diagonal) {
  if (x.defined() && is_complex(x.dtype()) && x.dim() >= 2) {
    return complex_triangle(x, diagonal, false);
  }
  return triangle(op_id("triu"), x, diagonal);
}

}  // namespace mpsim
