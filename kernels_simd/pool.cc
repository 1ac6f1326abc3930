// Pooling kernels over 4-d [N, C, H, W] views of any strides (core/pool_ops.cc makes 3-d
// inputs 4-d and allocates the output in the input's memory format). The front end has
// validated the geometry: attributes kernel_size, stride, padding, dilation ({h, w} lists),
// count_include_pad and divisor_override (0: none) describe windows that fit the output sizes.
//
// Channels-last pixels run on the vector rows of pool_rows.cc (Note [pooled pixels]), with the
// bits of the loops below, which run the other layouts.
//
// Numerics: an average is the window's sum, accumulated in double in (ih, iw) row-major
// order, divided by the divisor in double and rounded once to the output dtype: for
// float32/16-bit inputs the sum is exact up to ~2^-50 relative, so the result is the correctly
// rounded mean or 1 ulp from it. max is exact. Outputs do not depend on the memory format,
// the thread count or the partition (Note [spatial rows]).
#include "kernels_simd/pool.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <variant>
#include <vector>

#include "kernels_simd/pool_rows.h"
#include "kernels_simd/spatial_rows.h"

namespace mpsim::simd {
namespace {

struct Geometry {
  std::int64_t kernel, stride, padding, dilation;
};

// avg_pool2d, as PyTorch: the window [o*s - p, o*s - p + k) clipped to the padded input gives
// the count_include_pad divisor; clipped to the input, the taps and the other divisor.
std::vector<Span> avg_spans(std::int64_t in, std::int64_t out, const Geometry& g,
                            bool count_include_pad) {
  std::vector<Span> spans(static_cast<std::size_t>(out));
  for (std::int64_t o = 0; o < out; ++o) {
    const std::int64_t start = o * g.stride - g.padding;
    const std::int64_t padded_end = std::min(start + g.kernel, in + g.padding);
    Span& s = spans[static_cast<std::size_t>(o)];
    s.begin = std::max<std::int64_t>(start, 0);
    s.end = std::min(padded_end, in);
    s.count = count_include_pad ? padded_end - start : std::max<std::int64_t>(s.end - s.begin, 0);
  }
  return spans;
}

// max_pool2d, as PyTorch: taps o*s - p + j*d for j < k that lie in the input.
std::vector<Span> max_spans(std::int64_t in, std::int64_t out, const Geometry& g) {
  std::vector<Span> spans(static_cast<std::size_t>(out));
  for (std::int64_t o = 0; o < out; ++o) {
    std::int64_t start = o * g.stride - g.padding;
    Span& s = spans[static_cast<std::size_t>(o)];
    s.end = std::min(start + (g.kernel - 1) * g.dilation + 1, in);
    while (start < 0) start += g.dilation;
    s.begin = start;
    s.step = g.dilation;
  }
  return spans;
}

// adaptive_avg_pool2d, as PyTorch: [floor(o*in/out), ceil((o+1)*in/out)).
std::vector<Span> adaptive_spans(std::int64_t in, std::int64_t out) {
  std::vector<Span> spans(static_cast<std::size_t>(out));
  for (std::int64_t o = 0; o < out; ++o) {
    Span& s = spans[static_cast<std::size_t>(o)];
    s.begin = o * in / out;
    s.end = ((o + 1) * in + out - 1) / out;
    s.count = s.end - s.begin;
  }
  return spans;
}

// The window along dim 0 (h) or 1 (w).
Geometry geometry(const PoolParams& p, std::size_t dim) {
  return {p.kernel_size[dim], p.stride[dim], p.padding[dim], p.dilation[dim]};
}

std::int64_t max_taps(const std::vector<Span>& spans) {
  std::int64_t taps = 1;
  for (const Span& s : spans) taps = std::max(taps, (s.end - s.begin + s.step - 1) / s.step);
  return taps;
}

// Channels-last pixels of every float dtype run on the vector rows (Note [pooled pixels] in
// pool_rows.cc), other layouts on the loops below.
template <class T>
constexpr bool kVectorPixels = FloatingElement<T>;

// Output pixel r of a channels-last output (channels dense in x and out) and its window.
template <class T>
PooledPixel pixel(const TensorView& x, const TensorView& out, SpatialRow r, const Span& h,
                  const Span& w) {
  PooledPixel p;
  p.dtype = out.dtype;
  p.x = x.ptr<const T>() + r.n * x.strides[0];
  p.h_stride = x.strides[2];
  p.w_stride = x.strides[3];
  p.channels = out.sizes[1];
  p.h = h;
  p.w = w;
  p.out = out.ptr<T>() + r.n * out.strides[0] + r.a * out.strides[2] + r.b * out.strides[3];
  return p;
}

// The averages of the windows spans_h x spans_w; divisor_override != 0 replaces the divisor.
// An empty window (only in padding) gives 0, as PyTorch.
template <class T>
void average(const TensorView& x, const TensorView& out, const std::vector<Span>& hs,
             const std::vector<Span>& ws, std::int64_t divisor_override) {
  const T* xp = x.ptr<const T>();
  T* op = out.ptr<T>();
  const auto& xs = x.strides;
  const auto& os = out.strides;
  auto divisor = [&](const Span& h, const Span& w) {
    return divisor_override != 0 ? static_cast<double>(divisor_override)
                                 : static_cast<double>(h.count * w.count);
  };
  auto empty = [](const Span& h, const Span& w) { return h.begin >= h.end || w.begin >= w.end; };
  const std::int64_t taps = max_taps(hs) * max_taps(ws);
  if (is_channels_last_walk(out) && kVectorPixels<T> && xs[1] == 1) {  // Note [pooled pixels]
    for_each_spatial_row(
        out, taps, [] { return 0; },
        [&](SpatialRow r, int) {
          const Span& h = hs[static_cast<std::size_t>(r.a)];
          const Span& w = ws[static_cast<std::size_t>(r.b)];
          pool_average_pixel(pixel<T>(x, out, r, h, w), divisor(h, w));
        });
    return;
  }
  if (is_channels_last_walk(out)) {
    const std::int64_t channels = out.sizes[1];
    auto scratch = [&] { return std::vector<double>(static_cast<std::size_t>(channels)); };
    for_each_spatial_row(out, taps, scratch, [&](SpatialRow r, std::vector<double>& acc) {
      const Span& h = hs[static_cast<std::size_t>(r.a)];
      const Span& w = ws[static_cast<std::size_t>(r.b)];
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::int64_t ih = h.begin; ih < h.end; ++ih) {
        for (std::int64_t iw = w.begin; iw < w.end; ++iw) {
          const T* p = xp + r.n * xs[0] + ih * xs[2] + iw * xs[3];
          for (std::int64_t c = 0; c < channels; ++c) acc[c] += widen(p[c * xs[1]]);
        }
      }
      T* o = op + r.n * os[0] + r.a * os[2] + r.b * os[3];
      const double d = divisor(h, w);
      const bool zero = empty(h, w);
      for (std::int64_t c = 0; c < channels; ++c) {
        o[c * os[1]] = zero ? T(0.0f) : narrow<T>(acc[c] / d);
      }
    });
    return;
  }
  const std::int64_t width = out.sizes[3];
  auto no_scratch = [] { return 0; };
  for_each_spatial_row(out, taps, no_scratch, [&](SpatialRow r, int) {
    const Span& h = hs[static_cast<std::size_t>(r.b)];
    const T* plane = xp + r.n * xs[0] + r.a * xs[1];
    T* o = op + r.n * os[0] + r.a * os[1] + r.b * os[2];
    for (std::int64_t ow = 0; ow < width; ++ow) {
      const Span& w = ws[static_cast<std::size_t>(ow)];
      double sum = 0.0;
      for (std::int64_t ih = h.begin; ih < h.end; ++ih) {
        for (std::int64_t iw = w.begin; iw < w.end; ++iw)
          sum += widen(plane[ih * xs[2] + iw * xs[3]]);
      }
      o[ow * os[3]] = empty(h, w) ? T(0.0f) : narrow<T>(sum / divisor(h, w));
    }
  });
}

// Note [max pool NaN]
// As PyTorch: a tap replaces the running maximum when it is greater or NaN, so the first of
// equal maxima wins (-0.0 and 0.0 are equal) and a NaN in the window gives the last NaN (its
// bits, payload included, and its index). The running maximum starts at -inf with the
// window's first tap as index, so an all -inf (or empty) window gives -inf at that index.
// Indices count in the flattened H*W plane of one (n, c).
template <class T>
struct MaxState {
  double value;
  T bits;
  std::int64_t index;
  void start(std::int64_t first) {
    value = -std::numeric_limits<double>::infinity();
    bits = narrow<T>(value);
    index = first;
  }
  void add(T v, std::int64_t at) {
    const double d = widen(v);
    if (d > value || std::isnan(d)) {
      value = d;
      bits = v;
      index = at;
    }
  }
};

template <class T>
void maximum(const TensorView& x, const TensorView& out, const TensorView* indices,
             const std::vector<Span>& hs, const std::vector<Span>& ws) {
  const T* xp = x.ptr<const T>();
  T* op = out.ptr<T>();
  std::int64_t* ip = indices == nullptr ? nullptr : indices->ptr<std::int64_t>();
  const auto& xs = x.strides;
  const auto& os = out.strides;
  const std::int64_t in_w = x.sizes[3];
  const std::int64_t taps = max_taps(hs) * max_taps(ws);
  if (is_channels_last_walk(out) && kVectorPixels<T> && xs[1] == 1 &&
      (ip == nullptr || indices->strides[1] == 1)) {  // Note [pooled pixels]
    for_each_spatial_row(
        out, taps, [] { return 0; },
        [&](SpatialRow r, int) {
          const Span& h = hs[static_cast<std::size_t>(r.a)];
          const Span& w = ws[static_cast<std::size_t>(r.b)];
          const std::int64_t at = r.n * os[0] + r.a * os[2] + r.b * os[3];
          pool_max_pixel(pixel<T>(x, out, r, h, w), in_w, ip == nullptr ? nullptr : ip + at);
        });
    return;
  }
  if (is_channels_last_walk(out)) {
    const std::int64_t channels = out.sizes[1];
    auto scratch = [&] { return std::vector<MaxState<T>>(static_cast<std::size_t>(channels)); };
    for_each_spatial_row(out, taps, scratch, [&](SpatialRow r, std::vector<MaxState<T>>& acc) {
      const Span& h = hs[static_cast<std::size_t>(r.a)];
      const Span& w = ws[static_cast<std::size_t>(r.b)];
      for (MaxState<T>& s : acc) s.start(h.begin * in_w + w.begin);
      for (std::int64_t ih = h.begin; ih < h.end; ih += h.step) {
        for (std::int64_t iw = w.begin; iw < w.end; iw += w.step) {
          const T* p = xp + r.n * xs[0] + ih * xs[2] + iw * xs[3];
          for (std::int64_t c = 0; c < channels; ++c) acc[c].add(p[c * xs[1]], ih * in_w + iw);
        }
      }
      const std::int64_t at = r.n * os[0] + r.a * os[2] + r.b * os[3];
      for (std::int64_t c = 0; c < channels; ++c) {
        op[at + c * os[1]] = acc[c].bits;
        if (ip != nullptr) ip[at + c * os[1]] = acc[c].index;
      }
    });
    return;
  }
  const std::int64_t width = out.sizes[3];
  auto no_scratch = [] { return 0; };
  for_each_spatial_row(out, taps, no_scratch, [&](SpatialRow r, int) {
    const Span& h = hs[static_cast<std::size_t>(r.b)];
    const T* plane = xp + r.n * xs[0] + r.a * xs[1];
    const std::int64_t at = r.n * os[0] + r.a * os[1] + r.b * os[2];
    for (std::int64_t ow = 0; ow < width; ++ow) {
      const Span& w = ws[static_cast<std::size_t>(ow)];
      MaxState<T> s;
      s.start(h.begin * in_w + w.begin);
      for (std::int64_t ih = h.begin; ih < h.end; ih += h.step) {
        for (std::int64_t iw = w.begin; iw < w.end; iw += w.step) {
          s.add(plane[ih * xs[2] + iw * xs[3]], ih * in_w + iw);
        }
      }
      op[at + ow * os[3]] = s.bits;
      if (ip != nullptr) ip[at + ow * os[3]] = s.index;
    }
  });
}

KernelStatus avg_pool_kernel(const KernelCall& call) {
  const TensorView& x = call.inputs[0];
  const TensorView& out = call.outputs[0];
  const PoolParams& p = call.params_as<PoolParams>();
  const std::int64_t divisor = p.divisor_override;
  const auto hs = avg_spans(x.sizes[2], out.sizes[2], geometry(p, 0), p.count_include_pad);
  const auto ws = avg_spans(x.sizes[3], out.sizes[3], geometry(p, 1), p.count_include_pad);
  visit_dtype(out.dtype, [&]<class T>() {
    if constexpr (FloatingElement<T>) average<T>(x, out, hs, ws, divisor);
  });
  return KernelStatus::Ok;
}

KernelStatus adaptive_avg_pool_kernel(const KernelCall& call) {
  const TensorView& x = call.inputs[0];
  const TensorView& out = call.outputs[0];
  const auto hs = adaptive_spans(x.sizes[2], out.sizes[2]);
  const auto ws = adaptive_spans(x.sizes[3], out.sizes[3]);
  visit_dtype(out.dtype, [&]<class T>() {
    if constexpr (FloatingElement<T>) average<T>(x, out, hs, ws, 0);
  });
  return KernelStatus::Ok;
}

// outputs: the maxima and, when present, their int64 indices (same sizes and strides).
KernelStatus max_pool_kernel(const KernelCall& call) {
  const TensorView& x = call.inputs[0];
  const TensorView& out = call.outputs[0];
  const TensorView* indices = call.outputs.size() > 1 ? &call.outputs[1] : nullptr;
  const PoolParams& p = call.params_as<PoolParams>();
  const auto hs = max_spans(x.sizes[2], out.sizes[2], geometry(p, 0));
  const auto ws = max_spans(x.sizes[3], out.sizes[3], geometry(p, 1));
  visit_dtype(out.dtype, [&]<class T>() {
    if constexpr (FloatingElement<T>) maximum<T>(x, out, indices, hs, ws);
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_pool_kernels(KernelTable& table) {
  table.set(op_id("avg_pool2d"), avg_pool_kernel, kFloatDTypes);
  table.set(op_id("max_pool2d"), max_pool_kernel, kFloatDTypes);
  table.set(op_id("adaptive_avg_pool2d"), adaptive_avg_pool_kernel, kFloatDTypes);
}

}  // namespace mpsim::simd
