// flip, pad, tril and triu. Each output element is an input element, zero or the pad value,
// so results are the same bytes for any split of the work; elements move as unsigned
// integers of their size.
#include "kernels_simd/rearrange.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/convert.h"
#include "kernels_simd/elementwise.h"
#include "kernels_simd/transpose.h"

namespace mpsim::simd {
namespace {

template <class F>
void visit_element_size(std::size_t size, F&& f) {
  switch (size) {
    case 1:
      return f.template operator()<std::uint8_t>();
    case 2:
      return f.template operator()<std::uint16_t>();
    case 4:
      return f.template operator()<std::uint32_t>();
    default:
      return f.template operator()<std::uint64_t>();
  }
}

// flip: the input is read through a view with the flipped dims' strides negated, starting at
// their last element, so flip is a copy; for_each_row merges dims as for any copy, and a row
// that runs backwards (the last dim flipped) is a vector reversed run.
KernelStatus flip_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  const TensorView& in = call.inputs[0];
  const auto e = static_cast<std::int64_t>(dtype_size(in.dtype));
  std::vector<std::int64_t> strides(in.strides.begin(), in.strides.end());
  char* data = static_cast<char*>(in.data);
  for (std::int64_t d : call.params_as<FlipParams>().dims) {
    data += (in.sizes[d] - 1) * strides[d] * e;
    strides[d] = -strides[d];
  }
  const TensorView src{data, in.dtype, in.sizes, strides};
  visit_element_size(dtype_size(in.dtype), [&]<class U>() {
    for_each_row<2>({&out, &src}, [&](const RowPointers<2>& r, std::int64_t n) {
      if (r.stride[0] == e && r.stride[1] == e) {
        std::memcpy(r.ptr[0], r.ptr[1], static_cast<std::size_t>(n * e));
      } else if (r.stride[0] == e && r.stride[1] == -e) {
        reverse_run(r.ptr[0], r.ptr[1], n, sizeof(U));
      } else {
        for (std::int64_t k = 0; k < n; ++k) {
          *reinterpret_cast<U*>(r.ptr[0] + k * r.stride[0]) =
              *reinterpret_cast<const U*>(r.ptr[1] + k * r.stride[1]);
        }
      }
    });
  });
  return KernelStatus::Ok;
}

// The bits of `value` converted to the dtype, as the unsigned integer of its size.
template <class U>
U element_bits(DType dtype, const Scalar& value) {
  U bits = 0;
  visit_dtype(dtype, [&]<class T>() {
    T v;
    if constexpr (std::is_same_v<T, bool>) {
      v = value.to_double() != 0;
    } else if constexpr (FloatingElement<T>) {
      v = convert<T>(value.to_double());
    } else {
      v = value.is_floating() ? convert<T>(value.to_double()) : static_cast<T>(value.to_int());
    }
    if constexpr (sizeof(T) == sizeof(U)) std::memcpy(&bits, &v, sizeof(U));
  });
  return bits;
}

// pad, one output row (along the last dim) at a time, rows in parallel. The outer dims map
// the row to one input row, or to a constant border (the row is all value); along the row,
// `left` elements, the centre and `right` elements are a fill and a copy for constant
// padding (negative pads crop), reversed runs of the row's first and last elements for
// reflect, and the edge elements repeated for replicate. The output is contiguous.
KernelStatus pad_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  const TensorView& in = call.inputs[0];
  const PadParams& p = call.params_as<PadParams>();
  const std::vector<std::int64_t>& pads = p.pads;
  const bool constant = p.mode == PadMode::Constant, reflect = p.mode == PadMode::Reflect;
  const std::int64_t nd = static_cast<std::int64_t>(out.sizes.size());
  const std::int64_t w = out.sizes[nd - 1], n = in.sizes[nd - 1], left = pads[2 * (nd - 1)];
  const auto e = static_cast<std::int64_t>(dtype_size(out.dtype));
  const std::int64_t is = in.strides[nd - 1] * e;
  // The input index of output index i along a dim, or -1 for the constant border.
  auto source = [&](std::int64_t i, std::int64_t before, std::int64_t size) -> std::int64_t {
    i -= before;
    if (constant) return i >= 0 && i < size ? i : -1;
    if (reflect) return i < 0 ? -i : i >= size ? 2 * (size - 1) - i : i;
    return std::clamp<std::int64_t>(i, 0, size - 1);
  };
  visit_element_size(dtype_size(out.dtype), [&]<class U>() {
    const U value = element_bits<U>(out.dtype, p.value);
    auto fill = [](U* o, std::int64_t count, U v) {
      for (std::int64_t k = 0; k < count; ++k) o[k] = v;
    };
    auto at = [&](const char* x, std::int64_t i) {
      return *reinterpret_cast<const U*>(x + i * is);
    };
    auto copy = [&](U* o, const char* x, std::int64_t count) {
      if (is == e) {
        std::memcpy(o, x, static_cast<std::size_t>(count * e));
      } else {
        for (std::int64_t k = 0; k < count; ++k) o[k] = at(x, k);
      }
    };
    auto reversed = [&](U* o, const char* x_last, std::int64_t count) {  // o[k] = x_last[-k]
      if (is == e) {
        reverse_run(o, x_last, count, sizeof(U));
      } else {
        for (std::int64_t k = 0; k < count; ++k) o[k] = at(x_last, -k);
      }
    };
    auto run = [&](std::int64_t r) {
      U* o = reinterpret_cast<U*>(static_cast<char*>(out.data) + r * w * e);
      const char* x = static_cast<const char*>(in.data);
      std::int64_t b = r;
      for (std::int64_t d = nd - 2; d >= 0; --d) {
        const std::int64_t s = source(b % out.sizes[d], pads[2 * d], in.sizes[d]);
        b /= out.sizes[d];
        if (s < 0) return fill(o, w, value);
        x += s * in.strides[d] * e;
      }
      if (constant) {
        const std::int64_t c0 = std::clamp<std::int64_t>(left, 0, w);
        const std::int64_t c1 = std::clamp<std::int64_t>(left + n, 0, w);
        fill(o, c0, value);
        if (c1 > c0) copy(o + c0, x + (c0 - left) * is, c1 - c0);
        fill(o + std::max(c0, c1), w - std::max(c0, c1), value);
        return;
      }
      const std::int64_t right = w - left - n;
      if (reflect) {
        reversed(o, x + left * is, left);                 // x[left], ..., x[1]
        reversed(o + left + n, x + (n - 2) * is, right);  // x[n - 2], x[n - 3], ...
      } else {
        fill(o, left, at(x, 0));
        fill(o + left + n, right, at(x, n - 1));
      }
      copy(o + left, x, n);
    };
    const std::int64_t rows = out.numel() / w;
    const std::int64_t grain = std::max<std::int64_t>(1, kElementwiseGrain / w);
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows, grain),
                      [&](const tbb::blocked_range<std::int64_t>& range) {
                        for (std::int64_t r = range.begin(); r < range.end(); ++r) run(r);
                      });
  });
  return KernelStatus::Ok;
}

// tril / triu over the last two dims [h, w]: row i keeps columns j with j - i <= diagonal
// (tril) or j - i >= diagonal (triu) and zeroes the rest (all-zero bits are zero in every
// dtype). Rows run in parallel, each a run copy and a run fill.
KernelStatus triangle_kernel(const KernelCall& call) {
  const TensorView& out = call.outputs[0];
  const TensorView& in = call.inputs[0];
  const bool lower = call.op == op_id("tril");
  const std::int64_t nd = static_cast<std::int64_t>(out.sizes.size());
  const std::int64_t h = out.sizes[nd - 2], w = out.sizes[nd - 1];
  // Past -h or w every row is whole on one side: clamped there, i + diagonal + 1 cannot
  // overflow for any int64 diagonal (tril(x, INT64_MAX), found by tests/fuzz/op_fuzz).
  const std::int64_t diagonal =
      std::clamp<std::int64_t>(call.params_as<TriangleParams>().diagonal, -h - 1, w + 1);
  const std::int64_t rows = out.numel() / std::max<std::int64_t>(w, 1);
  if (out.numel() == 0) return KernelStatus::Ok;
  const auto e = static_cast<std::int64_t>(dtype_size(out.dtype));
  const std::int64_t os = out.strides[nd - 1] * e, is = in.strides[nd - 1] * e;
  // Byte offsets of row r (batch index r / h, row r % h) in the output and the input.
  auto row_offsets = [&](std::int64_t r) {
    std::int64_t o = (r % h) * out.strides[nd - 2], x = (r % h) * in.strides[nd - 2];
    std::int64_t b = r / h;
    for (std::int64_t d = nd - 3; d >= 0; --d) {
      o += (b % out.sizes[d]) * out.strides[d];
      x += (b % out.sizes[d]) * in.strides[d];
      b /= out.sizes[d];
    }
    return std::pair<std::int64_t, std::int64_t>(o * e, x * e);
  };
  visit_element_size(dtype_size(out.dtype), [&]<class U>() {
    auto copy = [&](char* o, const char* x, std::int64_t n) {
      if (os == e && is == e) {
        std::memcpy(o, x, static_cast<std::size_t>(n * e));
      } else {
        for (std::int64_t k = 0; k < n; ++k) {
          *reinterpret_cast<U*>(o + k * os) = *reinterpret_cast<const U*>(x + k * is);
        }
      }
    };
    auto zero = [&](char* o, std::int64_t n) {
      if (os == e) {
        std::memset(o, 0, static_cast<std::size_t>(n * e));
      } else {
        for (std::int64_t k = 0; k < n; ++k) *reinterpret_cast<U*>(o + k * os) = 0;
      }
    };
    auto run = [&](std::int64_t r) {
      const auto [oo, xo] = row_offsets(r);
      char* o = static_cast<char*>(out.data) + oo;
      const char* x = static_cast<const char*>(in.data) + xo;
      const std::int64_t i = r % h;
      // Columns [0, split) are on one side of the diagonal, [split, w) on the other.
      const std::int64_t split = std::clamp<std::int64_t>(i + diagonal + (lower ? 1 : 0), 0, w);
      if (lower) {
        copy(o, x, split);
        zero(o + split * os, w - split);
      } else {
        zero(o, split);
        copy(o + split * os, x + split * is, w - split);
      }
    };
    const std::int64_t grain =
        std::max<std::int64_t>(1, kElementwiseGrain / std::max<std::int64_t>(w, 1));
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows, grain),
                      [&](const tbb::blocked_range<std::int64_t>& range) {
                        for (std::int64_t r = range.begin(); r < range.end(); ++r) run(r);
                      });
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_rearrange_kernels(KernelTable& table) {
  table.set(op_id("flip"), &flip_kernel, kAllDTypes);
  table.set(op_id("pad"), &pad_kernel, kAllDTypes);
  table.set(op_id("tril"), &triangle_kernel, kAllDTypes);
  table.set(op_id("triu"), &triangle_kernel, kAllDTypes);
}

}  // namespace mpsim::simd
