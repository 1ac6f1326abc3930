// conv2d as an implicit GEMM per (image, group): rows are the output pixels, columns the
// group's output channels, K the taps (kh, kw, c) with c fastest (gemm.h, Im2Col). The front
// end (core/conv_ops.cc) hands over x [N, C, H, W] in any memory format, the weight permuted
// to [kH, kW, C / groups, Cout] (dense), an optional bias [Cout], the output [N, Cout, OH, OW]
// (NCHW or channels-last, dense), and the attributes stride, padding (top, left), dilation
// and groups. Numerics: Note [gemm numerics]; a pixel's chain does not depend on x's memory
// format, so NCHW and channels-last results are bit-identical.
#include "kernels_simd/conv.h"

#include <variant>
#include <vector>

#include "kernels_simd/gemm.h"

namespace mpsim::simd {
namespace {

IntList int_list(const Attrs& attrs, std::string_view name) {
  const AttrValue* v = attrs.find(name);
  return std::get<IntList>(*v);
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
}

}  // namespace mpsim::simd
