// conv_transpose2d by gathering: per output phase an ordinary convolution on the implicit-GEMM
// engine of conv2d (Note [transposed phases]). The front end (core/conv_ops.cc) hands over x
// [N, C, H, W] (channels-last), the weight [C, Cout / groups, kH, kW] in any strides, an
// optional bias [Cout], the output [N, Cout, OH, OW] (NCHW or channels-last, dense) and a
// workspace (Note [transposed workspace]), with the attributes stride, padding, dilation and
// groups; output_padding is implied by OH and OW.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <numeric>
#include <variant>
#include <vector>

#include "core/convert.h"
#include "kernels_simd/conv.h"
#include "kernels_simd/gemm.h"

namespace mpsim::simd {
namespace {

// Note [transposed phases]
// conv_transpose2d scatters x[ih] w[kh] onto output row oh = ih s - p + kh d. Gathered
// instead, row oh receives tap kh exactly when s divides oh + p - kh d, from input row
// ih = (oh + p - kh d) / s. Divisibility depends only on the phase ph = oh mod s, so the rows
// oh = ph + i s of one phase form an ordinary stride-1 convolution over i. Its taps are the kh
// with s | ph + p - kh d, taken in decreasing kh (increasing ih): kh_t = kh_0 - t s / g with
// g = gcd(s, d), so ih = i - pad' + t d' with d' = d / g and pad' = (kh_0 d - ph - p) / s
// (may be negative). Every tap belongs to exactly one phase, so the phases partition the
// kernel; columns likewise. Each phase pair (ph, pw) runs conv2d's implicit GEMM (gemm.h,
// Im2Col) with K = (th, tw, c), c fastest, over the weight's taps regrouped in that order:
// every output is one chain of K = Th Tw C / groups terms (Note [gemm numerics]: Golden and
// Fast exactly as conv2d), fixed by the geometry alone, so the bits do not depend on the
// thread count, the partition or x's memory format. No float is ever scatter-added. A phase
// with no tap (stride above the dilated kernel) is the bias, or +0.

// Note [transposed workspace]
// The caller provides the workspace (outputs[1], in the op's dtype): first the weight's taps
// regrouped by phase pair, C x Cout / groups x kH x kW values; then, when a stride exceeds 1,
// one phase's output for every image, N x ceil(OH / sH) x ceil(OW / sW) x Cout values. A
// phase's pixels are not one stride apart in the output (row i of the phase is output row
// ph + i s), so the GEMM writes the phase densely there and it is copied into place, exactly.
// With stride 1 there is one phase and the GEMM writes the output directly.

// Note [non-finite weights]
// A tap whose input row or column lies outside x contributes nothing in PyTorch's scatter-add; in
// the GEMM such a tap lies in its im2col's padding, where it forms no product (Note [conv in
// registers] in gemm_engine-inl.h), so an inf or NaN weight reaches exactly the outputs PyTorch's
// reaches.

// One phase of one spatial dim (Note [transposed phases]).
struct Phase {
  std::int64_t taps = 0;      // Th
  std::int64_t first = 0;     // kh_0, the largest tap of the phase
  std::int64_t step = 1;      // s / gcd(s, d): kh_t = first - t step
  std::int64_t pad = 0;       // pad'
  std::int64_t dilation = 1;  // d'
  std::int64_t rows = 0;      // outputs ph, ph + s, ... below the output size
};

Phase make_phase(std::int64_t ph, std::int64_t s, std::int64_t p, std::int64_t d, std::int64_t k,
                 std::int64_t out) {
  Phase r;
  const std::int64_t g = std::gcd(s, d);
  r.step = s / g;
  r.dilation = d / g;
  for (std::int64_t kh = k - 1; kh >= 0; --kh) {
    if (((ph + p - kh * d) % s + s) % s != 0) continue;
    if (r.taps++ == 0) r.first = kh;
  }
  if (r.taps > 0) r.pad = (r.first * d - ph - p) / s;  // exact: s divides it
  r.rows = out > ph ? (out - ph + s - 1) / s : 0;
  return r;
}

struct Geometry {
  std::vector<Phase> h, w;           // per phase of each dim
  std::vector<std::int64_t> offset;  // of phase pair (ph, pw) in the regrouped weight
  std::int64_t groups = 1, cin_g = 0, cout_g = 0, cout = 0;
};

// The regrouped weight (Note [transposed workspace]): phase pair (ph, pw) holds
// [Th, Tw, C / groups, Cout] at offset[ph * sW + pw], column grp * Cout/groups + o reading
// weight[grp * C/groups + c, o, kh, kw].
template <class T>
void regroup_weight(const TensorView& w, const Geometry& geo, T* dst) {
  const T* src = w.ptr<T>();
  const std::int64_t sw = static_cast<std::int64_t>(geo.w.size());
  for (std::size_t ph = 0; ph < geo.h.size(); ++ph) {
    for (std::size_t pw = 0; pw < geo.w.size(); ++pw) {
      const Phase& a = geo.h[ph];
      const Phase& b = geo.w[pw];
      T* block = dst + geo.offset[ph * static_cast<std::size_t>(sw) + pw];
      for (std::int64_t th = 0; th < a.taps; ++th) {
        for (std::int64_t tw = 0; tw < b.taps; ++tw) {
          const std::int64_t kh = a.first - th * a.step, kw = b.first - tw * b.step;
          for (std::int64_t c = 0; c < geo.cin_g; ++c) {
            T* row = block + ((th * b.taps + tw) * geo.cin_g + c) * geo.cout;
            for (std::int64_t grp = 0; grp < geo.groups; ++grp) {
              for (std::int64_t o = 0; o < geo.cout_g; ++o) {
                const T v = src[(grp * geo.cin_g + c) * w.strides[0] + o * w.strides[1] +
                                kh * w.strides[2] + kw * w.strides[3]];
                row[grp * geo.cout_g + o] = v;
              }
            }
          }
        }
      }
    }
  }
}

// Output pixel (n, oh, ow), channel oc.
template <class T>
T& at(const TensorView& out, std::int64_t n, std::int64_t oc, std::int64_t oh, std::int64_t ow) {
  return out.ptr<T>()[n * out.strides[0] + oc * out.strides[1] + oh * out.strides[2] +
                      ow * out.strides[3]];
}

// Copies phase (ph, pw), dense [N, rows x cols, Cout] in `phase`, to its output pixels.
template <class T>
void place_phase(const T* phase, const TensorView& out, std::int64_t ph, std::int64_t pw,
                 const Phase& a, const Phase& b, std::int64_t sh, std::int64_t sw) {
  const std::int64_t images = out.sizes[0], cout = out.sizes[1];
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, images * a.rows, 8),
      [&](const tbb::blocked_range<std::int64_t>& r) {
        for (std::int64_t row = r.begin(); row < r.end(); ++row) {
          const std::int64_t n = row / a.rows, i = row % a.rows;
          for (std::int64_t j = 0; j < b.rows; ++j) {
            const T* src = phase + (row * b.rows + j) * cout;
            T* dst = &at<T>(out, n, 0, ph + i * sh, pw + j * sw);
            for (std::int64_t oc = 0; oc < cout; ++oc) dst[oc * out.strides[1]] = src[oc];
          }
        }
      },
      tbb::simple_partitioner());
}

// A phase pair with no term: every output is 0 + bias, which is the bias (or +0).
template <class T>
void fill_phase(const TensorView* bias, const TensorView& out, std::int64_t ph, std::int64_t pw,
                const Phase& a, const Phase& b, std::int64_t sh, std::int64_t sw) {
  for (std::int64_t n = 0; n < out.sizes[0]; ++n) {
    for (std::int64_t i = 0; i < a.rows; ++i) {
      for (std::int64_t j = 0; j < b.rows; ++j) {
        for (std::int64_t oc = 0; oc < out.sizes[1]; ++oc) {
          at<T>(out, n, oc, ph + i * sh, pw + j * sw) =
              bias == nullptr ? convert<T>(0.0) : bias->ptr<T>()[oc * bias->strides[0]];
        }
      }
    }
  }
}

}  // namespace

KernelStatus conv_transpose2d_kernel(const KernelCall& call) {
  const TensorView& x = call.inputs[0];
  const TensorView& w = call.inputs[1];  // [C, Cout / groups, kH, kW]
  const TensorView* bias = call.inputs.size() > 2 ? &call.inputs[2] : nullptr;
  const TensorView& out = call.outputs[0];
  const TensorView& workspace = call.outputs[1];
  const ConvParams& p = call.params_as<ConvParams>();
  const std::vector<std::int64_t>&stride = p.stride, &padding = p.padding, &dilation = p.dilation;
  const bool fast = call.fast();
  const std::int64_t images = out.sizes[0];
  const std::int64_t sh = stride[0], sw = stride[1];

  Geometry geo;
  geo.groups = p.groups;
  geo.cin_g = w.sizes[0] / geo.groups;
  geo.cout_g = w.sizes[1];
  geo.cout = out.sizes[1];
  for (std::int64_t ph = 0; ph < sh; ++ph) {
    geo.h.push_back(make_phase(ph, sh, padding[0], dilation[0], w.sizes[2], out.sizes[2]));
  }
  for (std::int64_t pw = 0; pw < sw; ++pw) {
    geo.w.push_back(make_phase(pw, sw, padding[1], dilation[1], w.sizes[3], out.sizes[3]));
  }
  std::int64_t offset = 0;
  for (const Phase& a : geo.h) {
    for (const Phase& b : geo.w) {
      geo.offset.push_back(offset);
      offset += a.taps * b.taps * geo.cin_g * geo.cout;
    }
  }

  visit_dtype(out.dtype, [&]<class T>() {
    if constexpr (FloatingElement<T>) {
      T* regrouped = workspace.ptr<T>();
      regroup_weight<T>(w, geo, regrouped);      // Note [non-finite weights]
      const bool in_place = sh == 1 && sw == 1;  // Note [transposed workspace]
      T* phase_out = regrouped + offset;
      GemmConfig config;
      config.dtype = out.dtype;
      config.beta = bias == nullptr ? 0.0 : 1.0;
      config.fast = fast;
      std::vector<GemmProblem> problems;
      for (std::int64_t ph = 0; ph < sh; ++ph) {
        for (std::int64_t pw = 0; pw < sw; ++pw) {
          const Phase& a = geo.h[static_cast<std::size_t>(ph)];
          const Phase& b = geo.w[static_cast<std::size_t>(pw)];
          const std::int64_t pixels = a.rows * b.rows, k = a.taps * b.taps * geo.cin_g;
          if (pixels == 0) continue;
          if (k == 0) {
            fill_phase<T>(bias, out, ph, pw, a, b, sh, sw);
            continue;
          }
          Im2Col g;
          g.channels = geo.cin_g;
          g.height = x.sizes[2];
          g.width = x.sizes[3];
          g.kernel_h = a.taps;
          g.kernel_w = b.taps;
          g.pad_h = a.pad;
          g.pad_w = b.pad;
          g.dilation_h = a.dilation;
          g.dilation_w = b.dilation;
          g.out_w = b.rows;
          g.c_stride = x.strides[1];
          g.h_stride = x.strides[2];
          g.w_stride = x.strides[3];
          const T* block = regrouped + geo.offset[static_cast<std::size_t>(ph * sw + pw)];
          problems.clear();
          for (std::int64_t n = 0; n < images; ++n) {
            for (std::int64_t grp = 0; grp < geo.groups; ++grp) {
              GemmProblem p;
              p.m = pixels;
              p.n = geo.cout_g;
              p.k = k;
              p.a = x.ptr<T>() + n * x.strides[0] + grp * geo.cin_g * x.strides[1];
              p.b = block + grp * geo.cout_g;
              p.b_rs = geo.cout;
              p.b_cs = 1;
              if (bias != nullptr) {
                p.c = bias->ptr<T>() + grp * geo.cout_g * bias->strides[0];
                p.c_rs = 0;
                p.c_cs = bias->strides[0];
              }
              if (in_place) {  // pixel oh OW + ow sits at (oh OW + ow) sW in a dense output
                p.out = &at<T>(out, n, grp * geo.cout_g, 0, 0);
                p.o_rs = out.strides[3];
                p.o_cs = out.strides[1];
              } else {
                p.out = phase_out + (n * pixels * geo.cout + grp * geo.cout_g);
                p.o_rs = geo.cout;
                p.o_cs = 1;
              }
              problems.push_back(p);
            }
          }
          gemm_im2col(config, g, problems);
          if (!in_place) place_phase<T>(phase_out, out, ph, pw, a, b, sh, sw);
        }
      }
    }
  });
  return KernelStatus::Ok;
}

}  // namespace mpsim::simd
