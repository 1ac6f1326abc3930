#include "core/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>

#include "core/backend.h"
#include "core/checked_math.h"
#include "core/dispatch.h"

namespace mpsim {
namespace {

constexpr OpId kCopy = op_id("copy");
constexpr OpId kFill = op_id("fill");
constexpr OpId kArange = op_id("arange");

// Sizes of a new tensor: none negative, and an element count that fits in int64 (Note
// [checked sizes]; a zero size makes the count 0 whatever the others).
void check_sizes(std::string_view op, const Shape& shape) {
  bool zero = false;
  for (std::int64_t d : shape) {
    if (d < 0) {
      throw ShapeError("[" + std::string(op) + "] negative dimension " + std::to_string(d) +
                       " in size " + shape.to_string());
    }
    zero = zero || d == 0;
  }
  std::int64_t count = 1;
  for (std::int64_t d : shape) {
    if (zero) break;
    count = checked_mul(op, count, d,
                        [&] { return "the number of elements of shape " + shape.to_string(); });
  }
}

// Replaces a single -1 in `shape` so that it holds `numel` elements.
Shape infer_size(std::string_view op, const Shape& shape, std::int64_t numel) {
  DimVector dims = shape.dims();
  std::optional<std::size_t> infer;
  std::int64_t known = 1;
  bool overflow = false;  // the known dims hold more than int64 counts: no input fits them
  const bool has_zero = std::find(dims.begin(), dims.end(), 0) != dims.end();
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (infer) throw ShapeError("[" + std::string(op) + "] only one dimension can be inferred");
      infer = i;
    } else if (dims[i] < 0) {
      throw ShapeError("[" + std::string(op) + "] invalid shape dimension " +
                       std::to_string(dims[i]));
    } else if (!has_zero) {
      overflow = overflow || __builtin_mul_overflow(known, dims[i], &known);
    }
  }
  if (has_zero) known = 0;
  if (overflow) {  // found by tests/fuzz/op_fuzz: the product wrapped (Note [checked sizes])
    throw ShapeError("[" + std::string(op) + "] shape " + shape.to_string() +
                     " is invalid for input of size " + std::to_string(numel));
  }
  if (infer) {
    if (known == 0 || numel % known != 0) {
      throw ShapeError("[" + std::string(op) + "] shape " + shape.to_string() +
                       " is invalid for input of size " + std::to_string(numel));
    }
    dims[*infer] = numel / known;
  } else if (known != numel) {
    throw ShapeError("[" + std::string(op) + "] shape " + shape.to_string() +
                     " is invalid for input of size " + std::to_string(numel));
  }
  return Shape(std::move(dims));
}

// Strides that let `new_sizes` view memory laid out as (old_sizes, old_strides), or nothing if
// no such strides exist (the reshape then copies). Works chunk by chunk: a chunk is a run of
// old dims that is contiguous in memory; new dims must tile each chunk exactly.
std::optional<Strides> view_strides(const Shape& old_sizes, const Strides& old_strides,
                                    const Shape& new_sizes) {
  const std::size_t nd = new_sizes.size();
  Strides out(nd);
  if (old_sizes.numel() == 0) return contiguous_strides(new_sizes);
  if (old_sizes.empty()) {  // 0-dim: any all-ones shape
    for (std::size_t i = 0; i < nd; ++i) out[i] = 1;
    return out;
  }
  std::int64_t view_d = static_cast<std::int64_t>(nd) - 1;
  std::int64_t chunk_base = old_strides.back();
  std::int64_t tensor_numel = 1, view_numel = 1;
  for (std::int64_t d = old_sizes.ndim() - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    const bool chunk_ends =
        d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
      out[view_d] = view_numel * chunk_base;
      view_numel *= new_sizes[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      chunk_base = old_strides[d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

bool storages_overlap(const Tensor& a, const Tensor& b) {
  if (a.storage() != b.storage() || a.numel() == 0 || b.numel() == 0) return false;
  auto extent = [](const Tensor& t) {
    std::int64_t last = t.storage_offset();
    for (std::int64_t i = 0; i < t.dim(); ++i) last += (t.sizes()[i] - 1) * t.strides()[i];
    return std::pair<std::int64_t, std::int64_t>(t.storage_offset() * t.element_size(),
                                                 (last + 1) * t.element_size());
  };
  const auto [a0, a1] = extent(a);
  const auto [b0, b1] = extent(b);
  return a0 < b1 && b0 < a1;
}

}  // namespace

Tensor::Tensor(std::shared_ptr<Storage> storage, Shape sizes, Strides strides, std::int64_t offset,
               DType dtype)
    : storage_(std::move(storage)),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      offset_(offset),
      dtype_(dtype) {
  MPSIM_CHECK(sizes_.size() == strides_.size());
}

Device Tensor::device() const { return storage_ ? storage_->device() : Device::cpu(); }

std::int64_t Tensor::size(std::int64_t d) const {
  if (dim() == 0) wrap_dim("size", d, 0);
  return dim() == 0 ? 1 : sizes_[wrap_dim("size", d, dim())];
}

std::int64_t Tensor::stride(std::int64_t d) const {
  if (dim() == 0) wrap_dim("stride", d, 0);
  return dim() == 0 ? 1 : strides_[wrap_dim("stride", d, dim())];
}

bool Tensor::is_contiguous() const {
  std::int64_t expected = 1;
  for (std::int64_t i = dim() - 1; i >= 0; --i) {
    if (sizes_[i] == 0) return true;
    if (sizes_[i] != 1 && strides_[i] != expected) return false;
    expected *= sizes_[i];
  }
  return true;
}

void* Tensor::data_ptr() const {
  if (!storage_) throw InvalidArgument("[data_ptr] the tensor is undefined");
  if (!storage_->device().is_cpu()) backend_for(storage_->device()).check_host_access(*storage_);
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<std::int64_t>(element_size());
}

void Tensor::throw_dtype_mismatch(const char* what, DType requested) const {
  throw DTypeError("[" + std::string(what) + "] expected a tensor of dtype " +
                   std::string(dtype_name(requested)) + ", got " + std::string(dtype_name(dtype_)));
}

Tensor Tensor::view(const Shape& shape) const {
  const Shape target = infer_size("view", shape, numel());
  std::optional<Strides> strides = view_strides(sizes_, strides_, target);
  if (!strides) {
    throw ShapeError("[view] size " + target.to_string() +
                     " is not compatible with the input's size " + sizes_.to_string() +
                     " and stride " + mpsim::to_string(strides_) +
                     " (at least one dimension spans two contiguous subspaces); use reshape");
  }
  return Tensor(storage_, target, std::move(*strides), offset_, dtype_);
}

Tensor Tensor::view(DType dtype) const {
  const auto from = static_cast<std::int64_t>(element_size());
  const auto to = static_cast<std::int64_t>(dtype_size(dtype));
  if (from == to) return Tensor(storage_, sizes_, strides_, offset_, dtype);
  const std::string what = " to view " + std::string(dtype_name(dtype_)) + " as " +
                           std::string(dtype_name(dtype)) + " (different element sizes)";
  if (dim() == 0) throw ShapeError("[view] self.dim() cannot be 0" + what);
  if (stride(-1) != 1) {
    throw ShapeError("[view] self.stride(-1) must be 1" + what + ", but got " +
                     std::to_string(stride(-1)));
  }
  DimVector sizes = sizes_.dims(), strides = strides_;
  std::int64_t offset = offset_;
  if (from > to) {
    const std::int64_t r = from / to;
    for (std::size_t d = 0; d + 1 < strides.size(); ++d) strides[d] *= r;
    sizes.back() *= r;
    offset *= r;
  } else {
    const std::int64_t r = to / from;
    if (sizes.back() % r != 0) {
      throw ShapeError("[view] self.size(-1) must be divisible by " + std::to_string(r) + what +
                       ", but got " + std::to_string(sizes.back()));
    }
    if (offset % r != 0) {
      throw ShapeError("[view] self.storage_offset() must be divisible by " + std::to_string(r) +
                       what + ", but got " + std::to_string(offset));
    }
    for (std::size_t d = 0; d + 1 < strides.size(); ++d) {
      if (strides[d] % r != 0) {
        throw ShapeError("[view] self.stride(" + std::to_string(d) + ") must be divisible by " +
                         std::to_string(r) + what + ", but got " + std::to_string(strides[d]));
      }
      strides[d] /= r;
    }
    sizes.back() /= r;
    offset /= r;
  }
  return Tensor(storage_, Shape(std::move(sizes)), std::move(strides), offset, dtype);
}

Tensor Tensor::reshape(const Shape& shape) const {
  const Shape target = infer_size("reshape", shape, numel());
  if (std::optional<Strides> strides = view_strides(sizes_, strides_, target)) {
    return Tensor(storage_, target, std::move(*strides), offset_, dtype_);
  }
  return contiguous().view(target);
}

Tensor Tensor::permute(const IntList& dims) const {
  if (static_cast<std::int64_t>(dims.size()) != dim()) {
    throw ShapeError("[permute] number of dims don't match: the tensor has " +
                     std::to_string(dim()) + " dims, the permutation " + mpsim::to_string(dims) +
                     " has " + std::to_string(dims.size()));
  }
  DimVector sizes(dims.size());
  Strides strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t d = wrap_dim("permute", dims[i], dim());
    if (seen[d])
      throw ShapeError("[permute] repeated dim " + std::to_string(dims[i]) + " in " +
                       mpsim::to_string(dims));
    seen[d] = true;
    sizes[i] = sizes_[d];
    strides[i] = strides_[d];
  }
  return Tensor(storage_, Shape(std::move(sizes)), std::move(strides), offset_, dtype_);
}

Tensor Tensor::transpose(std::int64_t dim0, std::int64_t dim1) const {
  if (dim() == 0) {
    wrap_dim("transpose", dim0, 0);
    wrap_dim("transpose", dim1, 0);
    return *this;
  }
  dim0 = wrap_dim("transpose", dim0, dim());
  dim1 = wrap_dim("transpose", dim1, dim());
  IntList perm(dim());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[dim0], perm[dim1]);
  return permute(perm);
}

Tensor Tensor::t() const {
  if (dim() > 2) {
    throw ShapeError("[t] expects a tensor with <= 2 dimensions, got " + std::to_string(dim()));
  }
  return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::slice(std::int64_t d, std::int64_t start, std::int64_t end,
                     std::int64_t step) const {
  if (dim() == 0) throw ShapeError("[slice] cannot slice a 0-dim tensor");
  d = wrap_dim("slice", d, dim());
  if (step <= 0)
    throw InvalidArgument("[slice] step must be positive, got " + std::to_string(step));
  const std::int64_t n = sizes_[d];
  // Python slice semantics: negative indices count from the end, then clamp to [0, n].
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<std::int64_t>(start, 0, n);
  end = std::clamp<std::int64_t>(end, start, n);
  DimVector sizes = sizes_.dims();
  Strides strides = strides_;
  // ceil((end - start) / step) and the stepped stride, written so that no int64 step overflows
  // them (found by tests/fuzz/op_fuzz): a dim of at most one element keeps its stride.
  sizes[d] = end > start ? (end - start - 1) / step + 1 : 0;
  if (sizes[d] > 1) strides[d] *= step;  // step < n here: within the storage's extent
  return Tensor(storage_, Shape(std::move(sizes)), std::move(strides),
                offset_ + start * strides_[d], dtype_);
}

Tensor Tensor::select(std::int64_t d, std::int64_t index) const {
  if (dim() == 0) throw ShapeError("[select] cannot select on a 0-dim tensor");
  d = wrap_dim("select", d, dim());
  const std::int64_t n = sizes_[d];
  if (index < -n || index >= n) {
    throw ShapeError("[select] index " + std::to_string(index) + " is out of range for dimension " +
                     std::to_string(d) + " with size " + std::to_string(n));
  }
  if (index < 0) index += n;
  DimVector sizes = sizes_.dims();
  Strides strides = strides_;
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return Tensor(storage_, Shape(std::move(sizes)), std::move(strides),
                offset_ + index * strides_[d], dtype_);
}

Tensor Tensor::narrow(std::int64_t d, std::int64_t start, std::int64_t length) const {
  if (dim() == 0) throw ShapeError("[narrow] cannot narrow a 0-dim tensor");
  d = wrap_dim("narrow", d, dim());
  const std::int64_t n = sizes_[d];
  if (start < 0) start += n;
  if (start < 0 || start > n || length < 0 || length > n - start) {
    throw ShapeError("[narrow] start " + std::to_string(start) + " + length " +
                     std::to_string(length) + " exceeds dimension " + std::to_string(d) +
                     " of size " + std::to_string(n));
  }
  return slice(d, start, start + length, 1);
}

Tensor Tensor::expand(const Shape& shape) const {
  if (shape.ndim() < dim()) {
    throw ShapeError("[expand] the number of sizes provided (" + std::to_string(shape.size()) +
                     ") must be greater or equal to the number of dimensions in the tensor (" +
                     std::to_string(dim()) + ")");
  }
  const std::size_t lead = shape.size() - sizes_.size();
  DimVector sizes(shape.size());
  Strides strides(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i < lead) {
      if (shape[i] < 0)
        throw ShapeError("[expand] size -1 is not allowed in a leading, non-existing dimension " +
                         std::to_string(i));
      sizes[i] = shape[i];
      strides[i] = 0;
      continue;
    }
    const std::int64_t cur = sizes_[i - lead];
    const std::int64_t want = shape[i] == -1 ? cur : shape[i];
    if (cur == want) {
      sizes[i] = cur;
      strides[i] = strides_[i - lead];
    } else if (cur == 1 && want >= 0) {
      sizes[i] = want;
      strides[i] = 0;
    } else {
      throw ShapeError("[expand] the expanded size of the tensor (" + std::to_string(want) +
                       ") must match the existing size (" + std::to_string(cur) +
                       ") at non-singleton dimension " + std::to_string(i) + ": target " +
                       shape.to_string() + ", tensor " + sizes_.to_string());
    }
  }
  Shape result(std::move(sizes));
  check_sizes("expand", result);
  return Tensor(storage_, std::move(result), std::move(strides), offset_, dtype_);
}

Tensor Tensor::squeeze() const {
  DimVector sizes;
  Strides strides;
  for (std::int64_t i = 0; i < dim(); ++i) {
    if (sizes_[i] != 1) {
      sizes.push_back(sizes_[i]);
      strides.push_back(strides_[i]);
    }
  }
  return Tensor(storage_, Shape(std::move(sizes)), std::move(strides), offset_, dtype_);
}

Tensor Tensor::squeeze(std::int64_t d) const {
  d = wrap_dim("squeeze", d, dim());
  if (dim() == 0 || sizes_[d] != 1) return *this;
  DimVector sizes = sizes_.dims();
  Strides strides = strides_;
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return Tensor(storage_, Shape(std::move(sizes)), std::move(strides), offset_, dtype_);
}

Tensor Tensor::unsqueeze(std::int64_t d) const {
  d = wrap_dim("unsqueeze", d, dim() + 1);
  DimVector sizes = sizes_.dims();
  Strides strides = strides_;
  const std::int64_t stride = d < dim() ? sizes_[d] * strides_[d] : 1;
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return Tensor(storage_, Shape(std::move(sizes)), std::move(strides), offset_, dtype_);
}

Tensor Tensor::flatten(std::int64_t start_dim, std::int64_t end_dim) const {
  if (dim() == 0) return reshape({1});
  start_dim = wrap_dim("flatten", start_dim, dim());
  end_dim = wrap_dim("flatten", end_dim, dim());
  if (start_dim > end_dim) {
    throw ShapeError("[flatten] start_dim " + std::to_string(start_dim) +
                     " cannot come after end_dim " + std::to_string(end_dim));
  }
  DimVector sizes(sizes_.begin(), sizes_.begin() + start_dim);
  std::int64_t merged = 1;
  for (std::int64_t i = start_dim; i <= end_dim; ++i) merged *= sizes_[i];
  sizes.push_back(merged);
  sizes.insert(sizes.end(), sizes_.begin() + end_dim + 1, sizes_.end());
  return reshape(Shape(std::move(sizes)));
}

Tensor Tensor::as_strided(const Shape& sizes, const Strides& strides, std::int64_t offset) const {
  if (sizes.size() != strides.size()) {
    throw ShapeError("[as_strided] sizes " + sizes.to_string() + " and strides " +
                     mpsim::to_string(strides) + " differ in length");
  }
  check_sizes("as_strided", sizes);
  std::int64_t last = offset;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (strides[i] < 0) throw ShapeError("[as_strided] negative strides are not supported");
    if (sizes[i] > 0) {
      const auto what = [&] {
        return "the extent of the view of sizes " + sizes.to_string() + " and strides " +
               mpsim::to_string(strides);
      };
      last = checked_add("as_strided", last,
                         checked_mul("as_strided", sizes[i] - 1, strides[i], what), what);
    }
  }
  const std::int64_t capacity = static_cast<std::int64_t>(storage_->nbytes() / element_size());
  if (offset < 0 || (sizes.numel() > 0 && last >= capacity)) {
    throw ShapeError("[as_strided] view of sizes " + sizes.to_string() + ", strides " +
                     mpsim::to_string(strides) + ", offset " + std::to_string(offset) +
                     " is out of bounds for a storage of " + std::to_string(capacity) +
                     " elements");
  }
  return Tensor(storage_, sizes, strides, offset, dtype_);
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  Tensor out = empty(sizes_, dtype_, device());
  out.copy_(*this);
  return out;
}

// Note [copies keep the layout]
// clone, to(dtype) and to(device) give a copy in the source's memory format, as PyTorch's
// preserve_format: the source's own strides where it is non-overlapping and dense (contiguous,
// channels-last, transposed, any permutation), else dense in the order of its strides
// (layout_strides: a sliced channels-last tensor copies to channels-last). The copy runs in memory
// order (Note [flat copies]), so a channels-last source converts far faster into a channels-last
// result than into an NCHW one (`elementwise_bench --benchmark_filter=to_f16_channels_last`, beside
// a build of each; docs/measurements.md). `contiguous` is
// the row-major copy.

// Note [elementwise output layout]
// An elementwise result takes its inputs' memory layout, as PyTorch's TensorIterator gives it (and
// a copy, clone / to, its source's: Note [copies keep the layout]): where every tensor operand has
// the result's shape and all share one dense layout (contiguous, channels-last, transposed), the
// result has their strides; otherwise its dims are ordered by the operands' strides (the first
// operand whose strides differ on two dims decides their order; a broadcast dim, stride 0, leaves
// it to the next; equal strides put the smaller dim inside) and the result is dense in that order.
// So relu or add on channels-last tensors stay channels-last, and the kernels walk them in memory
// order (for_each_row in kernels_simd/elementwise.h): silu then a residual add on channels-last
// tensors runs far faster with channels-last results than with NCHW ones
// (`elementwise_bench --benchmark_filter=channels_last`, beside a build of each;
// docs/measurements.md).
Strides layout_strides(const Shape& shape, const std::vector<Tensor>& expanded, bool same_shape) {
  const std::int64_t ndim = static_cast<std::int64_t>(shape.size());
  for (const Tensor& t : expanded) {
    if (!t.defined() || t.sizes() != shape) {
      throw InvalidArgument("[layout_strides] expected operands of shape " + shape.to_string() +
                            ", got " + (t.defined() ? t.sizes().to_string() : "an undefined one"));
    }
  }
  if (same_shape && !expanded.empty()) {
    const Strides& first = expanded.front().strides();
    const Tensor& t0 = expanded.front();
    bool shared = non_overlapping_and_dense(t0.sizes(), t0.strides());
    for (const Tensor& t : expanded) shared = shared && t.strides() == first;
    if (shared) return first;
  }
  // perm[0] is the innermost dim, as PyTorch's reorder_dimensions.
  std::vector<std::int64_t> perm(static_cast<std::size_t>(ndim));
  for (std::int64_t i = 0; i < ndim; ++i) perm[static_cast<std::size_t>(i)] = ndim - 1 - i;
  // 1: d0 goes outside d1; -1: inside; 0: no operand decides.
  auto order = [&](std::int64_t d0, std::int64_t d1) {
    for (const Tensor& t : expanded) {
      const std::int64_t s0 = t.stride(d0), s1 = t.stride(d1);
      if (s0 == 0 || s1 == 0) continue;
      if (s0 != s1) return s0 < s1 ? -1 : 1;
      if (shape[static_cast<std::size_t>(d0)] > shape[static_cast<std::size_t>(d1)]) return 1;
    }
    return 0;
  };
  for (std::int64_t i = 1; i < ndim; ++i) {  // insertion sort that keeps undecided pairs
    std::int64_t d1 = i;
    for (std::int64_t d0 = i - 1; d0 >= 0; --d0) {
      const int c = order(perm[static_cast<std::size_t>(d0)], perm[static_cast<std::size_t>(d1)]);
      if (c > 0) {
        std::swap(perm[static_cast<std::size_t>(d0)], perm[static_cast<std::size_t>(d1)]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  Strides strides(static_cast<std::size_t>(ndim));
  std::int64_t next = 1;
  for (const std::int64_t d : perm) {
    strides[static_cast<std::size_t>(d)] = next;
    next *= std::max<std::int64_t>(shape[static_cast<std::size_t>(d)], 1);
  }
  return strides;
}

Tensor Tensor::clone() const {
  Tensor out = empty_strided(sizes_, layout_strides(sizes_, {*this}, true), dtype_, device());
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(DType dtype) const {
  if (dtype == dtype_) return *this;
  Tensor out = empty_strided(sizes_, layout_strides(sizes_, {*this}, true), dtype, device());
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(Device device) const {
  if (device == this->device()) return *this;
  Tensor out = empty_strided(sizes_, layout_strides(sizes_, {*this}, true), dtype_, device);
  out.copy_(*this);
  return out;
}

Tensor& Tensor::copy_(const Tensor& src) {
  if (!defined() || !src.defined()) throw InvalidArgument("[copy_] undefined tensor");
  if (broadcast_shapes("copy_", sizes_, src.sizes()) != sizes_) {
    throw ShapeError("[copy_] a source of shape " + src.sizes().to_string() +
                     " cannot be broadcast to the destination shape " + sizes_.to_string());
  }
  if (is_complex(src.dtype()) && !is_complex(dtype_) && dtype_ != DType::Bool) {
    // torch warns and keeps the real part; a reference refuses to lose the imaginary part
    // silently (an op that converts its input would compute on the real part alone)
    throw DTypeError("[copy_] converting " + std::string(dtype_name(src.dtype())) + " to " +
                     std::string(dtype_name(dtype_)) +
                     " would discard the imaginary part: use x.real for the real part or "
                     "x.abs() for the modulus");
  }
  Tensor source = src.expand(sizes_);
  if (storages_overlap(*this, source)) source = source.clone();
  // The destination's backend reads the source through unified memory: first let the source's
  // device finish the work that writes it.
  if (source.device() != device()) backend_for(source.device()).synchronize();
  dispatch(OpCall{kCopy, dtype_, {source}, {*this}, {}});
  return *this;
}

std::vector<std::uint8_t> Tensor::read_bytes_as(DType dtype) const {
  if (!defined()) throw InvalidArgument("[to_vector] the tensor is undefined");
  Tensor host = to(Device::cpu()).to(dtype).contiguous();
  if (host.device() != device()) backend_for(device()).synchronize();
  backend_for(host.device()).synchronize();
  std::vector<std::uint8_t> bytes(host.nbytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), host.data_ptr(), bytes.size());
  return bytes;
}

// ---- printing ----

namespace {

// PyTorch's formatter: one format for every element (chosen from all finite values), right
// aligned to a common width. Integral floats print as "1."; scientific notation when the
// values span more than 1000x, exceed 1e8, or go below 1e-4.
class ElementFormat {
 public:
  ElementFormat(const std::vector<double>& values, DType dtype) : dtype_(dtype) {
    if (!is_floating(dtype)) return;
    double lo = INFINITY, hi = 0;
    int_mode_ = true;
    for (double v : values) {
      if (!std::isfinite(v)) continue;
      if (v != std::nearbyint(v)) int_mode_ = false;
      const double a = std::fabs(v);
      if (a != 0) {
        lo = std::fmin(lo, a);
        hi = std::fmax(hi, a);
      }
    }
    // torch's _Formatter: integer-valued floats too print in scientific notation when their
    // nonzero magnitudes span more than 1000x or exceed 1e8
    if (hi > 0) sci_ = hi / lo > 1000 || hi > 1e8 || (!int_mode_ && lo < 1e-4);
  }

  std::string raw(double v) const {
    if (dtype_ == DType::Bool) return v != 0 ? "True" : "False";
    if (!is_floating(dtype_)) return std::to_string(static_cast<std::int64_t>(v));
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[48];
    std::snprintf(buf, sizeof(buf), sci_ ? "%.4e" : int_mode_ ? "%.0f." : "%.4f", v);
    return buf;
  }

 private:
  DType dtype_;
  bool int_mode_ = false;
  bool sci_ = false;
};

}  // namespace

std::string Tensor::to_string() const {
  if (!defined()) return "tensor(undefined)";
  // Summarize like PyTorch: above 1000 elements, print 3 items at each edge of every dim.
  constexpr std::int64_t kThreshold = 1000, kEdge = 3;
  const bool summarize = numel() > kThreshold;
  // A complex element prints as torch's: real part, the imaginary part's sign, |imag|, "j";
  // each part formatted over every part of its kind.
  const bool is_c = is_complex(dtype_);
  std::vector<double> values, imags;
  if (is_c) {
    const std::vector<double> parts =
        to(Device::cpu()).reshape({-1}).to(DType::Complex128).contiguous().view(DType::Float64)
            .to_vector<double>();
    for (std::size_t i = 0; i < parts.size(); i += 2) {
      values.push_back(parts[i]);
      imags.push_back(parts[i + 1]);
    }
  } else {
    values = to_vector<double>();
  }
  const Strides strides = contiguous_strides(sizes_);
  const DType part = real_dtype(dtype_);
  const ElementFormat format(values, part);
  std::vector<double> magnitudes;
  for (double v : imags) magnitudes.push_back(std::fabs(v));
  const ElementFormat imag_format(magnitudes, part);
  // torch pads a complex element's real part to the widest real part, and nothing else.
  std::size_t real_width = 0;
  if (is_c) {
    for (double v : values) real_width = std::max(real_width, format.raw(v).size());
  }
  const auto element = [&](std::size_t i) {
    if (!is_c) return format.raw(values[i]);
    const double im = imags[i];
    const std::string re = format.raw(values[i]);
    return std::string(real_width - re.size(), ' ') + re +
           (std::signbit(im) && !std::isnan(im) ? "-" : "+") + imag_format.raw(std::fabs(im)) +
           "j";
  };
  std::size_t width = 0;
  for (std::size_t i = 0; i < values.size() && !is_c; ++i) {
    width = std::max(width, element(i).size());
  }
  std::string out = "tensor(";
  std::function<void(std::int64_t, std::int64_t)> emit = [&](std::int64_t d, std::int64_t base) {
    if (d == dim()) {
      const std::string s = element(static_cast<std::size_t>(base));
      out += std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
      return;
    }
    out += "[";
    const std::int64_t n = sizes_[d];
    for (std::int64_t i = 0; i < n; ++i) {
      if (summarize && n > 2 * kEdge && i == kEdge) {
        out += "..., ";
        i = n - kEdge - 1;
        continue;
      }
      emit(d + 1, base + i * strides[d]);
      if (i + 1 < n) out += d + 1 == dim() ? ", " : ",\n" + std::string(7 + d + 1, ' ');
    }
    out += "]";
  };
  if (numel() == 0) {
    out += "[]";
    if (dim() != 1) {
      std::string size = "(";
      for (std::int64_t i = 0; i < dim(); ++i) size += (i ? ", " : "") + std::to_string(sizes_[i]);
      out += ", size=" + size + ")";
    }
  } else {
    emit(0, 0);
  }
  if (device() != Device::cpu()) out += ", device='" + device().to_string() + "'";
  // torch names every dtype but the defaults (float32, int64, bool, complex64), and every
  // dtype but float32 of an empty tensor
  const bool default_dtype = dtype_ == DType::Float32 || dtype_ == DType::Int64 ||
                             dtype_ == DType::Bool || dtype_ == DType::Complex64;
  if (dtype_ != DType::Float32 && (!default_dtype || numel() == 0)) {
    out += ", dtype=" + std::string(dtype_name(dtype_));
  }
  return out + ")";
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

// ---- factories ----

Tensor empty_strided(const Shape& shape, const Strides& strides, DType dtype, Device device) {
  check_sizes("empty_strided", shape);
  if (shape.size() != strides.size()) {
    throw ShapeError("[empty_strided] sizes " + shape.to_string() + " and strides " +
                     mpsim::to_string(strides) + " differ in length");
  }
  std::int64_t extent = shape.numel() == 0 ? 0 : 1;
  for (std::size_t i = 0; i < shape.size() && extent > 0; ++i) {
    if (strides[i] < 0) throw ShapeError("[empty_strided] negative strides are not supported");
    const auto what = [&] {
      return "the storage extent of sizes " + shape.to_string() + " and strides " +
             mpsim::to_string(strides);
    };
    extent = checked_add("empty_strided", extent,
                         checked_mul("empty_strided", shape[i] - 1, strides[i], what), what);
  }
  Backend& backend = backend_for(device);
  const auto nbytes = static_cast<std::size_t>(
      checked_mul("empty_strided", extent, static_cast<std::int64_t>(dtype_size(dtype)),
                  [&] { return "the byte count of shape " + shape.to_string(); }));
  backend.check_allocation(shape, dtype, nbytes);
  auto storage = std::make_shared<Storage>(device, backend.allocator(device.index()), nbytes);
  return Tensor(std::move(storage), shape, strides, 0, dtype);
}

Tensor empty(const Shape& shape, DType dtype, Device device) {
  check_sizes("empty", shape);
  return empty_strided(shape, contiguous_strides(shape), dtype, device);
}

Tensor empty_like(const Tensor& t) { return empty(t.sizes(), t.dtype(), t.device()); }

Tensor full(const Shape& shape, Scalar value, DType dtype, Device device) {
  check_sizes("full", shape);
  check_fits("full", value, dtype);  // Note [checked scalar conversion]
  Tensor out = empty(shape, dtype, device);
  dispatch(OpCall{kFill, dtype, {}, {out}, FillParams{value}});
  return out;
}

Tensor zeros(const Shape& shape, DType dtype, Device device) {
  check_sizes("zeros", shape);
  return full(shape, 0, dtype, device);
}
Tensor ones(const Shape& shape, DType dtype, Device device) {
  check_sizes("ones", shape);
  return full(shape, 1, dtype, device);
}

Tensor scalar_tensor(Scalar value, DType dtype, Device device) {
  return full({}, value, dtype, device);
}

Tensor arange(Scalar end) { return arange(0, end); }

Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<DType> dtype, Device device) {
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  if (st == 0) throw InvalidArgument("[arange] step must be nonzero");
  if (!std::isfinite(s) || !std::isfinite(e) || !std::isfinite(st)) {
    throw InvalidArgument("[arange] unsupported range: " + start.to_string() + " -> " +
                          end.to_string() + " by " + step.to_string());
  }
  if ((st > 0 && e < s) || (st < 0 && e > s)) {
    throw InvalidArgument(
        "[arange] upper bound and larger bound inconsistent with step sign: start " +
        start.to_string() + ", end " + end.to_string() + ", step " + step.to_string());
  }
  const bool all_int = !start.is_floating() && !end.is_floating() && !step.is_floating();
  const DType out_dtype = dtype.value_or(all_int ? DType::Int64 : DType::Float32);
  // As torch.arange: the count is computed in double. An integer result takes start and step
  // truncated to int64 (torch's accumulate type) for its values, and int64 also counts with
  // the truncated ends: arange(1.0, 5.000001, 2.0) is [1, 3, 5] in int32 but [1, 3] in int64.
  double count = std::ceil((e - s) / st);
  Scalar first = start, increment = step;
  if (is_integral(out_dtype, true)) {
    first = Scalar(start.to_int());
    increment = Scalar(step.to_int());
    if (increment.to_int() == 0) throw InvalidArgument("[arange] step must be nonzero");
    if (out_dtype == DType::Int64) {
      count = std::ceil(static_cast<double>(end.to_int() - first.to_int()) /
                        static_cast<double>(increment.to_int()));
    }
  }
  if (!(count < 0x1p63)) {  // Note [checked sizes]: the cast below would be undefined
    throw ShapeError("[arange] the range " + start.to_string() + " -> " + end.to_string() + " by " +
                     step.to_string() +
                     " holds more elements than int64 can count: storage size calculation "
                     "overflowed");
  }
  const auto n = static_cast<std::int64_t>(count);
  Tensor out = empty({n}, out_dtype, device);
  dispatch(OpCall{kArange, out_dtype, {}, {out}, ArangeParams{first, increment}});
  return out;
}

Tensor from_blob_copy(const void* data, std::int64_t count, DType dtype, const Shape& shape,
                      Device device) {
  check_sizes("from_vector", shape);
  if (count != shape.numel()) {
    throw ShapeError("[from_vector] " + std::to_string(count) + " values cannot fill shape " +
                     shape.to_string() + " (" + std::to_string(shape.numel()) + " elements)");
  }
  const std::size_t nbytes = static_cast<std::size_t>(count) * dtype_size(dtype);
  for (int type = 0; type < kNumDeviceTypes; ++type) {
    if (type != static_cast<int>(DeviceType::CPU) && has_backend(static_cast<DeviceType>(type)))
      backend_for(Device(static_cast<DeviceType>(type), 0)).check_host_read(data, nbytes);
  }
  Tensor out = empty(shape, dtype, device);
  if (count > 0) std::memcpy(out.data_ptr(), data, nbytes);
  return out;
}

}  // namespace mpsim
