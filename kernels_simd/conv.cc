// conv2d as an implicit GEMM per (image, group): rows are the output pixels, columns the
// group's output channels, K the taps (kh, kw, c) with c fastest (gemm.h, Im2Col). The front
// end (core/conv_ops.cc) hands over x [N, C, H, W] in any memory format, the weight permuted
// to [kH, kW, C / groups, Cout] (dense), an optional bias [Cout], the output [N, Cout, OH, OW]
// (NCHW or channels-last, dense), and the attributes stride, padding (top, left), dilation
// and groups. Numerics: Note [gemm numerics]; a pixel's chain does not depend on x's memory
// format, so NCHW and channels-last results are bit-identical.
#include "kernels_simd/conv.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/convert.h"
#include "kernels_simd/depthwise_taps.h"
#include "kernels_simd/gemm.h"

namespace mpsim::simd {
namespace {

IntList int_list(const Attrs& attrs, std::string_view name) {
  const AttrValue* v = attrs.find(name);
  return std::get<IntList>(*v);
}

// Note [depthwise]
// A depthwise convolution (one input and one output channel per group) is a GEMM with N = 1
// and K = kH kW: the engine would fill 1/kNr of its tile. It runs directly instead, over
// channels-last rows (the front end hands x channels-last), with the Golden chain in both
// precisions: per channel, acc = 0 + x w over the taps (kh, kw) in order, products exact in
// double, then acc + bias rounded once. These are the engine's Golden bits (Note [gemm
// numerics]): its taps in the padding add 0 x w = +-0, which changes no sum; the one
// difference is a non-finite weight on the border, whose 0 x inf the engine turns into NaN and
// this path skips, as PyTorch does. float32 with dense channels runs each pixel's chain over a
// vector of channels, the sums in registers across the taps (depthwise_taps.cc; the same
// bits): [2, 320, 64, 64] 3x3 channels-last in about 1.25 ms on 2 threads
// (`linalg_bench --filter depthwise`). Fast shares the Golden chain.
template <class T>
void depthwise(const TensorView& x, const TensorView& w, const TensorView* bias,
               const TensorView& out, const Im2Col& g) {
  const std::int64_t images = out.sizes[0], channels = out.sizes[1];
  const std::int64_t oh = out.sizes[2], ow = out.sizes[3];
  const T* xp = x.ptr<T>();
  const T* wp = w.ptr<T>();  // [kH, kW, 1, C], dense
  T* op = out.ptr<T>();
  // One task per block of output rows: rows are independent, so the cut changes no bit. A
  // row's sums [ow][C] are kept until it is stored, so an NCHW output is written along rows.
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, images * oh, 4),
      [&](const tbb::blocked_range<std::int64_t>& rows) {
        std::vector<double> sums(static_cast<std::size_t>(ow * channels));
        const std::size_t kernel = static_cast<std::size_t>(g.kernel_h * g.kernel_w);
        std::vector<const T*> srcs(kernel), weights(kernel);
        auto add_bias = [&](double* acc) {
          if (bias == nullptr) return;
          for (std::int64_t c = 0; c < channels; ++c) {
            acc[c] = acc[c] + convert<double>(bias->ptr<T>()[c * bias->strides[0]]);
          }
        };
        for (std::int64_t row = rows.begin(); row < rows.end(); ++row) {
          const std::int64_t n = row / oh, i = row % oh;
          std::fill(sums.begin(), sums.end(), 0.0);
          for (std::int64_t j = 0; j < ow; ++j) {
            double* acc = sums.data() + j * channels;
            if constexpr (std::is_same_v<T, float>) {
              if (g.c_stride == 1) {  // vectorized, the same chain and bits (depthwise_taps.h)
                std::int64_t taps = 0;
                for (std::int64_t kh = 0; kh < g.kernel_h; ++kh) {
                  const std::int64_t ih = i * g.stride_h - g.pad_h + kh * g.dilation_h;
                  if (ih < 0 || ih >= g.height) continue;
                  for (std::int64_t kw = 0; kw < g.kernel_w; ++kw) {
                    const std::int64_t iw = j * g.stride_w - g.pad_w + kw * g.dilation_w;
                    if (iw < 0 || iw >= g.width) continue;
                    srcs[static_cast<std::size_t>(taps)] =
                        xp + n * x.strides[0] + ih * g.h_stride + iw * g.w_stride;
                    weights[static_cast<std::size_t>(taps++)] =
                        wp + (kh * g.kernel_w + kw) * channels;
                  }
                }
                depthwise_pixel_f32(srcs.data(), weights.data(), taps, acc, channels);
                add_bias(acc);
                continue;
              }
            }
            for (std::int64_t kh = 0; kh < g.kernel_h; ++kh) {
              const std::int64_t ih = i * g.stride_h - g.pad_h + kh * g.dilation_h;
              if (ih < 0 || ih >= g.height) continue;
              for (std::int64_t kw = 0; kw < g.kernel_w; ++kw) {
                const std::int64_t iw = j * g.stride_w - g.pad_w + kw * g.dilation_w;
                if (iw < 0 || iw >= g.width) continue;
                const T* src = xp + n * x.strides[0] + ih * g.h_stride + iw * g.w_stride;
                const T* tap = wp + (kh * g.kernel_w + kw) * channels;
                if (g.c_stride == 1) {
                  for (std::int64_t c = 0; c < channels; ++c) {
                    acc[c] += convert<double>(src[c]) * convert<double>(tap[c]);
                  }
                } else {
                  for (std::int64_t c = 0; c < channels; ++c) {
                    acc[c] += convert<double>(src[c * g.c_stride]) * convert<double>(tap[c]);
                  }
                }
              }
            }
            add_bias(acc);
          }
          T* base = op + n * out.strides[0] + i * out.strides[2];
          if (out.strides[1] == 1) {
            for (std::int64_t j = 0; j < ow; ++j) {
              for (std::int64_t c = 0; c < channels; ++c) {
                base[j * out.strides[3] + c] =
                    convert<T>(sums[static_cast<std::size_t>(j * channels + c)]);
              }
            }
          } else {
            for (std::int64_t c = 0; c < channels; ++c) {
              for (std::int64_t j = 0; j < ow; ++j) {
                base[c * out.strides[1] + j * out.strides[3]] =
                    convert<T>(sums[static_cast<std::size_t>(j * channels + c)]);
              }
            }
          }
        }
      },
      tbb::simple_partitioner());
}

KernelStatus conv2d_kernel(const KernelCall& call) {
  const TensorView& x = call.inputs[0];
  const TensorView& w = call.inputs[1];  // [kH, kW, C / groups, Cout]
  const TensorView* bias = call.inputs.size() > 2 ? &call.inputs[2] : nullptr;
  const TensorView& out = call.outputs[0];
  const IntList stride = int_list(call.attrs, "stride");
  const IntList padding = int_list(call.attrs, "padding");
  const IntList dilation = int_list(call.attrs, "dilation");
  const std::int64_t groups = call.attrs.scalar("groups", Scalar(1)).to_int();
  const std::int64_t images = out.sizes[0], cout = out.sizes[1];
  const std::int64_t cout_g = cout / groups, cin_g = w.sizes[2];

  Im2Col g;
  g.channels = cin_g;
  g.height = x.sizes[2];
  g.width = x.sizes[3];
  g.kernel_h = w.sizes[0];
  g.kernel_w = w.sizes[1];
  g.stride_h = stride[0];
  g.stride_w = stride[1];
  g.pad_h = padding[0];
  g.pad_w = padding[1];
  g.dilation_h = dilation[0];
  g.dilation_w = dilation[1];
  g.out_w = out.sizes[3];
  g.c_stride = x.strides[1];
  g.h_stride = x.strides[2];
  g.w_stride = x.strides[3];

  if (groups > 1 && cin_g == 1 && cout_g == 1) {  // Note [depthwise]
    visit_dtype(out.dtype, [&]<class T>() {
      if constexpr (FloatingElement<T>) depthwise<T>(x, w, bias, out, g);
    });
    return KernelStatus::Ok;
  }
  GemmConfig config;
  config.dtype = out.dtype;
  config.beta = bias == nullptr ? 0.0 : 1.0;
  config.fast = call.attrs.str("precision", "golden") == "fast";
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(out.dtype));
  auto at = [elem](const TensorView& v, std::int64_t offset) {
    return static_cast<char*>(v.data) + offset * elem;
  };
  std::vector<GemmProblem> problems;
  problems.reserve(static_cast<std::size_t>(images * groups));
  for (std::int64_t n = 0; n < images; ++n) {
    for (std::int64_t grp = 0; grp < groups; ++grp) {
      GemmProblem p;
      p.m = out.sizes[2] * out.sizes[3];
      p.n = cout_g;
      p.k = g.kernel_h * g.kernel_w * cin_g;
      p.a = at(x, n * x.strides[0] + grp * cin_g * x.strides[1]);
      p.b = at(w, grp * cout_g * w.strides[3]);
      p.b_rs = w.strides[2];  // k = (kh, kw, c) walks the dense [kH, kW, C/g] prefix
      p.b_cs = w.strides[3];
      if (bias != nullptr) {
        p.c = at(*bias, grp * cout_g * bias->strides[0]);
        p.c_rs = 0;
        p.c_cs = bias->strides[0];
      }
      // Pixel p = oh * OW + ow sits at oh * sH + ow * sW = p * sW (dense NCHW or NHWC).
      p.out = at(out, n * out.strides[0] + grp * cout_g * out.strides[1]);
      p.o_rs = out.strides[3];
      p.o_cs = out.strides[1];
      problems.push_back(p);
    }
  }
  gemm_im2col(config, g, problems);
  return KernelStatus::Ok;
}

}  // namespace

void register_conv_kernels(KernelTable& table) {
  table.set(op_id("conv2d"), conv2d_kernel, kFloatDTypes);
  table.set(op_id("conv_transpose2d"), conv_transpose2d_kernel, kFloatDTypes);
}

}  // namespace mpsim::simd
