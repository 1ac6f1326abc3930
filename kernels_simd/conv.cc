// conv2d as an implicit GEMM per (image, group): rows are the output pixels, columns the
// group's output channels, K the taps (kh, kw, c) with c fastest (gemm.h, Im2Col). The front
// end (core/conv_ops.cc) hands over x [N, C, H, W] in any memory format, the weight permuted
// to [kH, kW, C / groups, Cout] (dense for depthwise; else any view with strides[0] = kW
// strides[1] where kW > 1: a contiguous weight's permuted view), an
// optional bias [Cout], the output [N, Cout, OH, OW]
// (NCHW or channels-last, dense), and the attributes stride, padding (top, left), dilation
// and groups. Numerics: Note [gemm numerics]; a pixel's chain does not depend on x's memory
// format, so NCHW and channels-last results are bit-identical.
#include "kernels_simd/conv.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <memory>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/convert.h"
#include "kernels_simd/depthwise_rows.h"
#include "kernels_simd/gemm.h"

namespace mpsim::simd {
namespace {

// Note [depthwise]
// A depthwise convolution (one input and one output channel per group) is a GEMM with N = 1
// and K = kH kW: the engine would fill 1/kNr of its tile. It runs directly instead, one chain
// per output: acc = 0, acc = acc + x w over its taps (kh, kw) inside x in order, then
// acc + bias, rounded once. Golden runs it in double, products exact: the engine's Golden bits
// (Note [gemm numerics]; both skip the taps in the padding, as PyTorch, Note [conv in
// registers] in gemm_engine-inl.h). Fast runs float32 on its own chain, acc = fma(x, w, acc) in
// float over the same taps, then + bias in float (fused where the target has FMA): the bound of
// Note [gemm numerics] with K = kH kW.
// Every floating dtype runs on the row kernels (depthwise_rows.h), output rows at a time, the
// sums in registers across the taps and rounded straight into the output: channels-last rows as
// vectors of channels, NCHW planes (which the front end hands over for stride_w 1, with no copy)
// as vectors along their rows. A chain does not depend on the layout, the vector or the task, so
// either layout and any thread count give the same bits in both precisions. Channels-last 3x3
// kernels hold their weights in registers across rows (Note [held weights] in
// depthwise_rows-inl.h), and NCHW 3x3 kernels read x's planes in place (Note [direct NCHW rows]).
// Figures for [2, 320, 64, 64] 3x3 pad 1 with bias on 2 threads, both layouts and precisions,
// beside PyTorch 1.13: `bench/report.py` (docs/measurements.md).
// float16 and bfloat16 x widens in registers, exactly, and the sums round once to the 16-bit
// type on their store: Fast's float sums to nearest even, Golden's double sums through float by
// round-to-odd, which gives the double's correctly rounded 16-bit value (StoreOut in
// depthwise_rows-inl.h): the scalar loop's bits. float64 runs the double chain unfused, Fast as
// Golden (its products round: an FMA would change the bits between targets). Layouts the
// kernels do not take (channels neither dense nor along dense rows) take the scalar loop below,
// on the Golden chain in both precisions.
template <class T>
void depthwise(const TensorView& x, const TensorView& w, const TensorView* bias,
               const TensorView& out, const Im2Col& g) {
  auto round = [](double v) { return convert<T>(v); };
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
        for (std::int64_t row = rows.begin(); row < rows.end(); ++row) {
          const std::int64_t n = row / oh, i = row % oh;
          std::fill(sums.begin(), sums.end(), 0.0);
          for (std::int64_t j = 0; j < ow; ++j) {
            double* acc = sums.data() + j * channels;
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
            if (bias != nullptr) {
              for (std::int64_t c = 0; c < channels; ++c) {
                acc[c] = acc[c] + convert<double>(bias->ptr<T>()[c * bias->strides[0]]);
              }
            }
          }
          T* base = op + n * out.strides[0] + i * out.strides[2];
          if (out.strides[1] == 1) {
            for (std::int64_t j = 0; j < ow; ++j) {
              for (std::int64_t c = 0; c < channels; ++c) {
                base[j * out.strides[3] + c] =
                    round(sums[static_cast<std::size_t>(j * channels + c)]);
              }
            }
          } else {
            for (std::int64_t c = 0; c < channels; ++c) {
              for (std::int64_t j = 0; j < ow; ++j) {
                base[c * out.strides[1] + j * out.strides[3]] =
                    round(sums[static_cast<std::size_t>(j * channels + c)]);
              }
            }
          }
        }
      },
      tbb::simple_partitioner());
}

// A task of the row kernels: whole output rows, about this many outputs (at least one row). Rows
// are independent, so the cut changes no bit. 2^15 float32 outputs are work well above TBB's cost
// per task on one core (Fast to Golden), and [2, 320, 64, 64] still makes 80 tasks (2^17 measured
// no faster on 2 threads; docs/measurements.md).
constexpr std::int64_t kDepthwiseTaskOutputs = std::int64_t{1} << 15;
// The same for the held-weights kernels (Note [held weights] in depthwise_rows-inl.h), which take
// one vector of channels across all of a task's rows: a task's first two x rows are read again for
// each vector, so a task takes more rows: on [2, 320, 64, 64], 2 threads, 2^17 and 2^18 outputs run
// faster than 2^15 (one row) (docs/measurements.md).
constexpr std::int64_t kDepthwiseHeldTaskOutputs = std::int64_t{1} << 18;

// The row kernels, where the layout allows (Note [depthwise]): channels dense in x and out
// (channels-last), or columns dense in both with stride_w 1 (NCHW). False otherwise.
bool depthwise_rows(const TensorView& x, const TensorView& w, const TensorView* bias,
                    const TensorView& out, const Im2Col& g, bool fast) {
  const std::int64_t images = out.sizes[0], channels = out.sizes[1];
  const std::int64_t oh = out.sizes[2], ow = out.sizes[3];
  const bool nhwc = g.c_stride == 1 && out.strides[1] == 1;
  const bool nchw = !nhwc && g.w_stride == 1 && out.strides[3] == 1 && g.stride_w == 1;
  if (!nhwc && !nchw) return false;
  DepthwiseArgs a;
  a.channels = channels;
  a.height = g.height;
  a.width = g.width;
  a.out_w = ow;
  a.kernel_h = g.kernel_h;
  a.kernel_w = g.kernel_w;
  a.stride_h = g.stride_h;
  a.stride_w = g.stride_w;
  a.pad_h = g.pad_h;
  a.pad_w = g.pad_w;
  a.dilation_h = g.dilation_h;
  a.dilation_w = g.dilation_w;
  a.x_h_stride = g.h_stride;
  a.x_w_stride = g.w_stride;
  a.out_h_stride = out.strides[2];
  a.out_w_stride = out.strides[3];
  a.dtype = out.dtype;
  a.fast = fast;
  // The weights and bias in the chain's type (exactly: float holds every 16-bit value), the
  // weights [taps][C] (channels-last) or [C][taps] (NCHW), converted once per call.
  const std::int64_t taps = g.kernel_h * g.kernel_w;
  auto stage = [&]<class T>(std::vector<T>& weights, std::vector<T>& biases) {
    visit_dtype(out.dtype, [&]<class E>() {
      if constexpr (FloatingElement<E>) {
        const E* wp = w.ptr<E>();  // [kH, kW, 1, C], dense
        weights.resize(static_cast<std::size_t>(taps * channels));
        for (std::int64_t t = 0; t < taps; ++t) {
          for (std::int64_t c = 0; c < channels; ++c) {
            weights[static_cast<std::size_t>(nhwc ? t * channels + c : c * taps + t)] =
                convert<T>(wp[t * channels + c]);
          }
        }
        if (bias == nullptr) return;
        biases.resize(static_cast<std::size_t>(channels));
        for (std::int64_t c = 0; c < channels; ++c) {
          biases[static_cast<std::size_t>(c)] = convert<T>(bias->ptr<E>()[c * bias->strides[0]]);
        }
      }
    });
    a.weights = weights.data();
    a.bias = bias == nullptr ? nullptr : biases.data();
  };
  std::vector<double> golden_w, golden_b;
  std::vector<float> fast_w, fast_b;
  if (depthwise_double_chain(a)) {
    stage(golden_w, golden_b);
  } else {
    stage(fast_w, fast_b);
  }
  // Rows of planes: an image's rows (channels-last) or a channel's (NCHW).
  const std::int64_t planes = nhwc ? images : images * channels;
  const std::int64_t row_outputs = std::max<std::int64_t>(1, nhwc ? ow * channels : ow);
  const std::int64_t task_outputs =
      nhwc && depthwise_nhwc_held(a) ? kDepthwiseHeldTaskOutputs : kDepthwiseTaskOutputs;
  const std::int64_t grain = std::max<std::int64_t>(1, task_outputs / row_outputs);
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(out.dtype));
  const char* xp = static_cast<const char*>(x.data);
  char* op = static_cast<char*>(out.data);
  // Scratch of the NCHW kernels, in doubles (aligned for any element type).
  const std::size_t scratch_doubles =
      nhwc ? 0 : static_cast<std::size_t>((depthwise_nchw_scratch(a) * elem + 7) / 8);
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, planes * oh, grain),
      [&](const tbb::blocked_range<std::int64_t>& rows) {
        // Uninitialized: the NCHW kernels write every staged value they read (Note [staged rows]
        // in depthwise_rows-inl.h); zeroing it took 5% of a one-thread [2, 320, 64, 64] call
        // (perf).
        const std::unique_ptr<double[]> scratch(nhwc ? nullptr : new double[scratch_doubles]);
        for (std::int64_t row = rows.begin(); row < rows.end();) {
          const std::int64_t plane = row / oh, i = row % oh;
          const std::int64_t end = std::min(rows.end(), row - i + oh);
          if (nhwc) {
            depthwise_rows_nhwc(a, xp + plane * x.strides[0] * elem,
                                op + plane * out.strides[0] * elem, i, i + end - row);
          } else {
            const std::int64_t n = plane / channels, c = plane % channels;
            depthwise_rows_nchw(a, xp + (n * x.strides[0] + c * g.c_stride) * elem,
                                op + (n * out.strides[0] + c * out.strides[1]) * elem, c, i,
                                i + end - row, scratch.get());
          }
          row = end;
        }
      },
      tbb::simple_partitioner());
  return true;
}

KernelStatus conv2d_kernel(const KernelCall& call) {
  const TensorView& x = call.inputs[0];
  const TensorView& w = call.inputs[1];  // [kH, kW, C / groups, Cout]
  const TensorView* bias = call.inputs.size() > 2 ? &call.inputs[2] : nullptr;
  const TensorView& out = call.outputs[0];
  const ConvParams& p = call.params_as<ConvParams>();
  const std::vector<std::int64_t>&stride = p.stride, &padding = p.padding, &dilation = p.dilation;
  const std::int64_t groups = p.groups;
  const std::int64_t images = out.sizes[0], cout = out.sizes[1];
  const std::int64_t cout_g = cout / groups, cin_g = w.sizes[2];
  const bool fast = call.fast();

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
    if (depthwise_rows(x, w, bias, out, g, fast)) return KernelStatus::Ok;
    visit_dtype(out.dtype, [&]<class T>() {
      if constexpr (FloatingElement<T>) depthwise<T>(x, w, bias, out, g);
    });
    return KernelStatus::Ok;
  }
  GemmConfig config;
  config.dtype = out.dtype;
  config.beta = bias == nullptr ? 0.0 : 1.0;
  config.fast = fast;
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
      p.b_rs = w.strides[2];  // k = (kh, kw, c): the taps' runs of channels
      p.b_cs = w.strides[3];
      p.b_taps = g.kernel_h * g.kernel_w;
      // Tap (kh, kw) lies at kh strides[0] + kw strides[1] = tap strides[1], or kh strides[0]
      // for a kernel one wide (whose strides[1], of a size-1 dim, may be anything).
      p.b_tap_stride = g.kernel_w == 1 ? w.strides[0] : w.strides[1];
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
  // Note [pointwise conv] A 1x1 kernel with stride 1 and no padding reads pixel p's channels at x[p
  // * w_stride]: a is x itself, a strided matrix, and the plain engine takes it instead of the
  // Im2Col gather. Channels-last, a's rows are read in place (Note [thin gemm] in
  // gemm_engine-inl.h), a little faster than the gather on [1, 320, 64, 64] 320 -> 320
  // (docs/measurements.md). With NCHW planes (which the front end passes as they are) the product
  // runs transposed, out[o, p] = sum_c w[c, o] x[c, p]: the weight is the row operand (read in
  // place where the front end passes a contiguous weight's view), each plane of x the column
  // operand, rows of out the planes, so neither x nor out is copied to channels-last and back.
  // Products commute exactly and each chain runs over c in order either way: the same bits as the
  // gathered route, in both layouts.
  if (g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_h == 0 &&
      g.pad_w == 0 && out.sizes[2] == g.height && g.out_w == g.width &&
      g.h_stride == g.width * g.w_stride) {
    for (GemmProblem& p : problems) {
      p.a_rs = g.w_stride;
      p.a_cs = g.c_stride;
      if (g.c_stride != 1 && g.w_stride == 1 && out.strides[3] == 1) p = transposed(p);
    }
    gemm(config, problems);
    return KernelStatus::Ok;
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
