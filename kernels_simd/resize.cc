// interpolate over 4-d [N, C, H, W] views of any strides (the front end, core/pool_ops.cc,
// has validated the sizes and allocated the output in the input's memory format). Attributes:
// mode ("nearest" | "bilinear"), align_corners, and scale_h / scale_w (the user's
// scale_factor, 0 when the output size was given).
//
// nearest: PyTorch's legacy rule, the source index floor(dst * scale) computed in float32
// exactly as PyTorch computes it (so the same pixels are picked; an output the size of the
// input, or twice it, takes the index unchanged or halved), and the value copied bit for bit.
// bilinear: the source position, its two neighbours and their weights per dim in double
// (PyTorch's area-pixel rule, or align_corners), the four products of the weights, and the
// sum of the four taps in double in (top-left, top-right, bottom-left, bottom-right) order,
// rounded once (a channels-last pixel's channels in vectors, lane by lane the same: Note
// [pooled pixels] in pool_rows.cc). Every tap is multiplied, also one of weight 0, so an inf beside
// the sampled point gives NaN as in PyTorch. Outputs do not depend on the memory format, the thread
// count or the partition (Note [spatial rows]).
#include "kernels_simd/resize.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels_simd/pool_rows.h"
#include "kernels_simd/spatial_rows.h"

namespace mpsim::simd {
namespace {

// PyTorch's nearest_idx (legacy "nearest"), in float32 as there.
std::int64_t nearest_index(std::int64_t o, std::int64_t in, std::int64_t out, double scale) {
  if (out == in) return o;
  if (out == 2 * in) return o >> 1;
  const float s = scale > 0 ? static_cast<float>(1.0 / scale)
                            : static_cast<float>(in) / static_cast<float>(out);
  return std::min(static_cast<std::int64_t>(std::floor(static_cast<float>(o) * s)), in - 1);
}

// One dim of a bilinear sample: value = w0 * x[i0] + w1 * x[i1].
struct LinearTap {
  std::int64_t i0, i1;
  double w0, w1;
};

LinearTap linear_tap(std::int64_t o, std::int64_t in, std::int64_t out, bool align_corners,
                     double scale) {
  if (out == in) return {o, o, 1.0, 0.0};
  double src;
  if (align_corners) {
    const double ratio = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
    src = ratio * static_cast<double>(o);
  } else {
    const double ratio =
        scale > 0 ? 1.0 / scale : static_cast<double>(in) / static_cast<double>(out);
    src = std::max(ratio * (static_cast<double>(o) + 0.5) - 0.5, 0.0);
  }
  const std::int64_t i0 = std::min(static_cast<std::int64_t>(src), in - 1);
  const std::int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
  const double w1 = std::clamp(src - static_cast<double>(i0), 0.0, 1.0);
  return {i0, i1, 1.0 - w1, w1};
}

template <class T>
void nearest(const TensorView& x, const TensorView& out, const std::vector<std::int64_t>& hi,
             const std::vector<std::int64_t>& wi) {
  const T* xp = x.ptr<const T>();
  T* op = out.ptr<T>();
  const auto& xs = x.strides;
  const auto& os = out.strides;
  auto no_scratch = [] { return 0; };
  if (is_channels_last_walk(out)) {
    const std::int64_t channels = out.sizes[1];
    for_each_spatial_row(out, 1, no_scratch, [&](SpatialRow r, int) {
      const T* p = xp + r.n * xs[0] + hi[r.a] * xs[2] + wi[r.b] * xs[3];
      T* o = op + r.n * os[0] + r.a * os[2] + r.b * os[3];
      if (os[1] == 1 && xs[1] == 1) {  // a pixel's dense channels: one copy
        std::memcpy(o, p, static_cast<std::size_t>(channels) * sizeof(T));
        return;
      }
      for (std::int64_t c = 0; c < channels; ++c) o[c * os[1]] = p[c * xs[1]];
    });
    return;
  }
  const std::int64_t width = out.sizes[3];
  // Upsampling by 2 along w (every source value twice, the common x2 of a decoder): pairs
  // written straight from the source, which the compiler vectorizes, instead of the gather
  // through the index: [2, 320, 32, 32] -> [2, 320, 64, 64] float32, one thread, 0.44-0.45 ms
  // against 1.49-1.50 (`bench/torch_sweep.py --filter "nearest x2"`).
  bool doubled = width % 2 == 0;
  for (std::int64_t ow = 0; doubled && ow < width; ++ow) doubled = wi[ow] == ow / 2;
  for_each_spatial_row(out, 1, no_scratch, [&](SpatialRow r, int) {
    const T* p = xp + r.n * xs[0] + r.a * xs[1] + hi[r.b] * xs[2];
    T* o = op + r.n * os[0] + r.a * os[1] + r.b * os[2];
    if (os[3] == 1 && xs[3] == 1 && doubled) {
      for (std::int64_t i = 0; i < width / 2; ++i) {
        o[2 * i] = p[i];
        o[2 * i + 1] = p[i];
      }
      return;
    }
    if (os[3] == 1 && xs[3] == 1) {  // unit strides: the gather without the multiplies
      const std::int64_t* index = wi.data();
      for (std::int64_t ow = 0; ow < width; ++ow) o[ow] = p[index[ow]];
      return;
    }
    for (std::int64_t ow = 0; ow < width; ++ow) o[ow * os[3]] = p[wi[ow] * xs[3]];
  });
}

template <class T>
void bilinear(const TensorView& x, const TensorView& out, const std::vector<LinearTap>& ht,
              const std::vector<LinearTap>& wt) {
  const T* xp = x.ptr<const T>();
  T* op = out.ptr<T>();
  const auto& xs = x.strides;
  const auto& os = out.strides;
  // The four taps of a 2x2 neighbourhood at element offsets from a plane's origin.
  auto sample = [&](const T* plane, const LinearTap& h, const LinearTap& w) {
    const T* r0 = plane + h.i0 * xs[2];
    const T* r1 = plane + h.i1 * xs[2];
    return narrow<T>(h.w0 * w.w0 * widen(r0[w.i0 * xs[3]]) + h.w0 * w.w1 * widen(r0[w.i1 * xs[3]]) +
                     h.w1 * w.w0 * widen(r1[w.i0 * xs[3]]) + h.w1 * w.w1 * widen(r1[w.i1 * xs[3]]));
  };
  auto no_scratch = [] { return 0; };
  if (is_channels_last_walk(out) && xs[1] == 1) {  // Note [pooled pixels] in pool_rows.cc
    for_each_spatial_row(out, 4, no_scratch, [&](SpatialRow r, int) {
      const LinearTap& h = ht[r.a];
      const LinearTap& w = wt[r.b];
      BilinearPixel p;
      p.dtype = out.dtype;
      p.x = xp + r.n * xs[0];
      p.offset[0] = h.i0 * xs[2] + w.i0 * xs[3];
      p.offset[1] = h.i0 * xs[2] + w.i1 * xs[3];
      p.offset[2] = h.i1 * xs[2] + w.i0 * xs[3];
      p.offset[3] = h.i1 * xs[2] + w.i1 * xs[3];
      p.weight[0] = h.w0 * w.w0;
      p.weight[1] = h.w0 * w.w1;
      p.weight[2] = h.w1 * w.w0;
      p.weight[3] = h.w1 * w.w1;
      p.channels = out.sizes[1];
      p.out = op + r.n * os[0] + r.a * os[2] + r.b * os[3];
      bilinear_pixel(p);
    });
    return;
  }
  if (is_channels_last_walk(out)) {
    const std::int64_t channels = out.sizes[1];
    for_each_spatial_row(out, 4, no_scratch, [&](SpatialRow r, int) {
      const T* image = xp + r.n * xs[0];
      T* o = op + r.n * os[0] + r.a * os[2] + r.b * os[3];
      const LinearTap& h = ht[r.a];
      const LinearTap& w = wt[r.b];
      for (std::int64_t c = 0; c < channels; ++c) o[c * os[1]] = sample(image + c * xs[1], h, w);
    });
    return;
  }
  const std::int64_t width = out.sizes[3];
  for_each_spatial_row(out, 4, no_scratch, [&](SpatialRow r, int) {
    const T* plane = xp + r.n * xs[0] + r.a * xs[1];
    T* o = op + r.n * os[0] + r.a * os[1] + r.b * os[2];
    const LinearTap& h = ht[r.b];
    for (std::int64_t ow = 0; ow < width; ++ow) o[ow * os[3]] = sample(plane, h, wt[ow]);
  });
}

KernelStatus interpolate_kernel(const KernelCall& call) {
  const TensorView& x = call.inputs[0];
  const TensorView& out = call.outputs[0];
  const ResizeParams& p = call.params_as<ResizeParams>();
  const double scale_h = p.scale_h, scale_w = p.scale_w;
  const bool align = p.align_corners;
  const std::int64_t in_h = x.sizes[2], in_w = x.sizes[3];
  const std::int64_t out_h = out.sizes[2], out_w = out.sizes[3];
  if (p.mode == ResizeMode::Nearest) {
    std::vector<std::int64_t> hi(static_cast<std::size_t>(out_h)),
        wi(static_cast<std::size_t>(out_w));
    for (std::int64_t o = 0; o < out_h; ++o) hi[o] = nearest_index(o, in_h, out_h, scale_h);
    for (std::int64_t o = 0; o < out_w; ++o) wi[o] = nearest_index(o, in_w, out_w, scale_w);
    visit_dtype(out.dtype, [&]<class T>() {
      if constexpr (FloatingElement<T>) nearest<T>(x, out, hi, wi);
    });
    return KernelStatus::Ok;
  }
  std::vector<LinearTap> ht(static_cast<std::size_t>(out_h)), wt(static_cast<std::size_t>(out_w));
  for (std::int64_t o = 0; o < out_h; ++o) ht[o] = linear_tap(o, in_h, out_h, align, scale_h);
  for (std::int64_t o = 0; o < out_w; ++o) wt[o] = linear_tap(o, in_w, out_w, align, scale_w);
  visit_dtype(out.dtype, [&]<class T>() {
    if constexpr (FloatingElement<T>) bilinear<T>(x, out, ht, wt);
  });
  return KernelStatus::Ok;
}

}  // namespace

void register_resize_kernels(KernelTable& table) {
  table.set(op_id("interpolate"), interpolate_kernel, kFloatDTypes);
}

}  // namespace mpsim::simd
