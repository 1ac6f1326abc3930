// Front ends of conv2d and conv_transpose2d: validation as PyTorch, the output shape and
// memory format, and the operands their kernels take. conv2d's implicit GEMM
// (kernels_simd/conv.cc) takes the weight permuted to [kH, kW, C / groups, Cout] so that
// K = (kh, kw, c) is one stride of it; conv_transpose2d's (kernels_simd/conv_transpose.cc)
// takes the weight as given and a workspace (Note [transposed workspace]).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.h"
#include "core/checked_math.h"
#include "core/dispatch.h"
#include "core/ops.h"
#include "core/runtime.h"

namespace mpsim {
namespace {

constexpr OpId kConv = op_id("conv2d");
constexpr OpId kConvTranspose = op_id("conv_transpose2d");

// "[op] ", the start of every message.
std::string tag(std::string_view op) {
  std::string s = "[";
  s.append(op).append("] ");
  return s;
}

// A (height, width) pair from a list of one or two values.
IntList pair_of(const IntList& v, const char* what, std::string_view op = "conv2d") {
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return v;
  throw InvalidArgument(tag(op) + "expected " + what + " to have 1 or 2 elements, got " +
                        to_string(v));
}

void check_operand(const Tensor& t, const char* what, DType dtype, Device device,
                   std::string_view op = "conv2d") {
  if (!t.defined()) throw InvalidArgument(tag(op) + "expected a defined " + what);
  if (t.dtype() != dtype) {
    throw DTypeError(tag(op) + "expected " + what + " of dtype " + std::string(dtype_name(dtype)) +
                     " (the input's), got " + std::string(dtype_name(t.dtype())));
  }
  if (t.device() != device) {
    throw DeviceError(tag(op) +
                      "expected all tensors to be on the same device, but found at least "
                      "two devices, " +
                      device.to_string() + " and " + t.device().to_string());
  }
}

// The output keeps a channels-last input's memory format (PyTorch's suggest_memory_format).
bool is_channels_last(const Tensor& x) {
  return !x.is_contiguous() && x.strides() == channels_last_strides(x.sizes());
}

Tensor empty_like_format(const Shape& shape, const Tensor& x, bool channels_last) {
  return channels_last ? empty_strided(shape, channels_last_strides(shape), x.dtype(), x.device())
                       : empty(shape, x.dtype(), x.device());
}

// The kernels gather runs of channels: a channels-last copy of any other layout makes them
// dense (the same values in the same chains, so the same bits). The copy costs a fraction of
// the convolution: compare the nchw and nhwc rows of `linalg_bench --filter conv`.
Tensor channels_last_operand(const Tensor& x, bool channels_last) {
  return channels_last ? x : x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
}

// pad_begin/pad_end: top/left and bottom/right (they differ for 'same' with an even kernel).
Tensor conv2d_impl(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                   const IntList& stride_arg, const IntList& pad_begin, const IntList& pad_end,
                   const IntList& dilation_arg, std::int64_t groups) {
  if (!input.defined()) throw InvalidArgument("[conv2d] expected a defined input");
  if (!is_floating(input.dtype())) {
    throw DTypeError(
        "[conv2d] supports floating point tensors (float16, bfloat16, float32, float64), got "
        "input of dtype " +
        std::string(dtype_name(input.dtype())));
  }
  check_operand(weight, "weight", input.dtype(), input.device());
  const bool has_bias = bias && bias->defined();
  if (has_bias) check_operand(*bias, "bias", input.dtype(), input.device());
  if (input.dim() != 3 && input.dim() != 4) {
    throw ShapeError("[conv2d] expected 3-d (unbatched) or 4-d (batched) input, got shape " +
                     input.sizes().to_string());
  }
  if (weight.dim() != 4) {
    throw ShapeError(
        "[conv2d] expected a 4-d weight [out_channels, in_channels / groups, kH, "
        "kW], got shape " +
        weight.sizes().to_string());
  }
  const IntList stride = pair_of(stride_arg, "stride");
  const IntList dilation = pair_of(dilation_arg, "dilation");
  for (int d = 0; d < 2; ++d) {
    if (stride[d] <= 0)
      throw InvalidArgument("[conv2d] stride must be positive, got " + to_string(stride));
    if (dilation[d] <= 0) {
      throw InvalidArgument("[conv2d] dilation must be positive, got " + to_string(dilation));
    }
    if (pad_begin[d] < 0 || pad_end[d] < 0) {
      throw InvalidArgument("[conv2d] negative padding is not supported, got " +
                            to_string(pad_begin));
    }
  }
  const Tensor x = input.dim() == 3 ? input.unsqueeze(0) : input;
  const std::int64_t n = x.size(0), c = x.size(1), cout = weight.size(0);
  if (groups <= 0) {
    throw InvalidArgument("[conv2d] non-positive groups is not supported, got " +
                          std::to_string(groups));
  }
  if (cout % groups != 0) {
    throw InvalidArgument("[conv2d] given groups=" + std::to_string(groups) +
                          ", expected weight to be divisible by " + std::to_string(groups) +
                          " at dimension 0, but got weight of size " + weight.sizes().to_string());
  }
  if (weight.size(1) * groups != c) {
    throw ShapeError("[conv2d] given groups=" + std::to_string(groups) + ", weight of size " +
                     weight.sizes().to_string() + ", expected input " + x.sizes().to_string() +
                     " to have " + std::to_string(weight.size(1) * groups) + " channels, but got " +
                     std::to_string(c) + " channels instead");
  }
  if (has_bias && bias->sizes() != Shape({cout})) {
    throw ShapeError("[conv2d] expected bias of shape [" + std::to_string(cout) + "], got " +
                     bias->sizes().to_string());
  }
  // Note [checked sizes]: paddings and dilations come from the user and may be near 2^63.
  std::int64_t out_hw[2], padded[2], span[2];
  for (int d = 0; d < 2; ++d) {
    const auto what = [&] { return "the padded input size of spatial dim " + std::to_string(d); };
    padded[d] = checked_add("conv2d", checked_add("conv2d", x.size(2 + d), pad_begin[d], what),
                            pad_end[d], what);
    const auto kernel = [&] {
      return "the dilated kernel size of spatial dim " + std::to_string(d);
    };
    span[d] = checked_add(
        "conv2d", checked_mul("conv2d", dilation[d], weight.size(2 + d) - 1, kernel), 1, kernel);
  }
  for (int d = 0; d < 2; ++d) {
    if (padded[d] < span[d]) {
      throw ShapeError("[conv2d] calculated padded input size per channel: (" +
                       std::to_string(padded[0]) + " x " + std::to_string(padded[1]) +
                       "). Kernel size: (" + std::to_string(weight.size(2)) + " x " +
                       std::to_string(weight.size(3)) +
                       "). Kernel size can't be greater than actual input size");
    }
    out_hw[d] = (padded[d] - span[d]) / stride[d] + 1;
  }
  const Shape out_shape({n, cout, out_hw[0], out_hw[1]});
  const bool channels_last = is_channels_last(x);
  // The kernel writes channels-last, and an NCHW result is a copy of that: written directly, each
  // pixel's Cout values would land H * W elements apart, a cache line each, far slower than the
  // channels-last write. The copy is the streamed transpose (Note [streamed transpose]), exact, a
  // small part of the convolution's time. A depthwise convolution with stride_w 1 is the exception
  // (every dtype): its kernel reads and writes NCHW planes along their rows, with no copy either
  // way, faster than the copies at every plane size measured, 7 x 7 to 64 x 64 (Note [depthwise],
  // kernels_simd/conv.cc).
  // So is a pointwise (1x1, stride 1, unpadded) convolution: out[n] = W x[n] over NCHW planes is a
  // plain product whose rows are the output's planes (Note [pointwise conv]), faster than copying
  // to channels-last and back (the nchw row of `linalg_bench --filter conv1x1`, beside a build that
  // copies to channels-last and back; docs/measurements.md).
  const bool depthwise = groups > 1 && weight.size(1) == 1 && cout == groups;
  const bool depthwise_nchw = !channels_last && depthwise && stride[1] == 1;
  const bool pointwise_nchw = !channels_last && !depthwise && weight.size(2) == 1 &&
                              weight.size(3) == 1 && stride[0] == 1 && stride[1] == 1 &&
                              pad_begin[0] == 0 && pad_begin[1] == 0 && pad_end[0] == 0 &&
                              pad_end[1] == 0;
  const bool nchw_kernel = depthwise_nchw || pointwise_nchw;
  Tensor out = empty_like_format(out_shape, x, !nchw_kernel);
  if (out.numel() > 0) {
    std::vector<Tensor> inputs = {
        nchw_kernel ? x.contiguous() : channels_last_operand(x, channels_last),
        // The GEMM routes read the weight through its strides: a contiguous weight goes as
        // its [kH, kW, C / groups, Cout] view, packed straight from it (no permuted copy), and
        // [Cout, C / groups] of a pointwise one is a row-major matrix the NCHW product reads in
        // place (Note [pointwise conv]). The depthwise kernels take a dense copy.
        weight.is_contiguous() && !depthwise ? weight.permute({2, 3, 1, 0})
                                             : weight.permute({2, 3, 1, 0}).contiguous()};
    if (has_bias) inputs.push_back(*bias);
    dispatch(OpCall{kConv,
                    x.dtype(),
                    std::move(inputs),
                    {out},
                    ConvParams{stride, pad_begin, dilation, groups}});
  }
  if (!channels_last && !nchw_kernel) out = out.contiguous();
  return input.dim() == 3 ? out.squeeze(0) : out;
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
              const IntList& stride, const IntList& padding, const IntList& dilation,
              std::int64_t groups) {
  const IntList pad = pair_of(padding, "padding");
  return conv2d_impl(x, weight, bias, stride, pad, pad, dilation, groups);
}

Tensor detail::conv2d_padding_mode(const Tensor& x, const Tensor& weight,
                                   const std::optional<Tensor>& bias, const IntList& stride,
                                   std::string_view padding, const IntList& dilation,
                                   std::int64_t groups) {
  if (padding == "valid")
    return conv2d_impl(x, weight, bias, stride, {0, 0}, {0, 0}, dilation, groups);
  if (padding != "same") {
    throw InvalidArgument("[conv2d] invalid padding string '" + std::string(padding) +
                          "', expected 'same' or 'valid'");
  }
  const IntList s = pair_of(stride, "stride");
  if (s[0] != 1 || s[1] != 1) {
    throw InvalidArgument("[conv2d] padding='same' is not supported for strided convolutions");
  }
  if (!weight.defined() || weight.dim() != 4) {
    return conv2d_impl(x, weight, bias, stride, {0, 0}, {0, 0}, dilation, groups);  // its error
  }
  // The total padding d (k - 1) splits with the odd one on the bottom / right, as PyTorch.
  const IntList d = pair_of(dilation, "dilation");
  IntList begin(2), end(2);
  for (int i = 0; i < 2; ++i) {
    const std::int64_t total = d[i] * (weight.size(2 + i) - 1);
    begin[i] = total / 2;
    end[i] = total - begin[i];
  }
  return conv2d_impl(x, weight, bias, stride, begin, end, dilation, groups);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, const IntList& stride_arg,
                        const IntList& padding_arg, const IntList& output_padding_arg,
                        std::int64_t groups, const IntList& dilation_arg) {
  constexpr std::string_view op = "conv_transpose2d";
  const std::string t = tag(op);
  if (!input.defined()) throw InvalidArgument(t + "expected a defined input");
  if (!is_floating(input.dtype())) {
    throw DTypeError(t +
                     "supports floating point tensors (float16, bfloat16, float32, float64), "
                     "got input of dtype " +
                     std::string(dtype_name(input.dtype())));
  }
  check_operand(weight, "weight", input.dtype(), input.device(), op);
  const bool has_bias = bias && bias->defined();
  if (has_bias) check_operand(*bias, "bias", input.dtype(), input.device(), op);
  if (input.dim() != 3 && input.dim() != 4) {
    throw ShapeError(t + "expected 3-d (unbatched) or 4-d (batched) input, got shape " +
                     input.sizes().to_string());
  }
  if (weight.dim() != 4) {
    throw ShapeError(t +
                     "expected a 4-d weight [in_channels, out_channels / groups, kH, kW], got "
                     "shape " +
                     weight.sizes().to_string());
  }
  const IntList stride = pair_of(stride_arg, "stride", op);
  const IntList padding = pair_of(padding_arg, "padding", op);
  const IntList output_padding = pair_of(output_padding_arg, "output_padding", op);
  const IntList dilation = pair_of(dilation_arg, "dilation", op);
  for (int d = 0; d < 2; ++d) {
    if (stride[d] <= 0) {
      throw InvalidArgument(t + "non-positive stride is not supported, got stride " +
                            to_string(stride));
    }
    if (dilation[d] <= 0) {
      throw InvalidArgument(t + "dilation must be positive, got dilation " + to_string(dilation));
    }
    if (padding[d] < 0) {
      throw InvalidArgument(t + "negative padding is not supported, got padding " +
                            to_string(padding));
    }
    if (output_padding[d] < 0) {
      throw InvalidArgument(t + "negative output_padding is not supported, got output_padding " +
                            to_string(output_padding));
    }
    // PyTorch's rule: each output_padding must be smaller than its stride or its dilation.
    if (output_padding[d] >= stride[d] && output_padding[d] >= dilation[d]) {
      throw InvalidArgument(t +
                            "expected output_padding smaller than either stride or dilation, "
                            "got output_padding " +
                            to_string(output_padding) + ", stride " + to_string(stride) +
                            " and dilation " + to_string(dilation));
    }
  }
  if (groups <= 0) {
    throw InvalidArgument(
        t + "non-positive groups is not supported, got groups=" + std::to_string(groups));
  }
  const Tensor x = input.dim() == 3 ? input.unsqueeze(0) : input;
  const std::int64_t n = x.size(0), c = x.size(1);
  if (c == 0 || x.size(2) == 0 || x.size(3) == 0) {
    throw ShapeError(t +
                     "expected non-zero channels, height and width (only the batch may be "
                     "empty), got input of shape " +
                     x.sizes().to_string());
  }
  if (weight.size(0) % groups != 0) {
    throw InvalidArgument(t + "given groups=" + std::to_string(groups) +
                          ", expected weight to be divisible by " + std::to_string(groups) +
                          " at dimension 0, but got weight of size " + weight.sizes().to_string());
  }
  if (weight.size(0) != c) {
    throw ShapeError(t + "given weight of size " + weight.sizes().to_string() +
                     ", expected input " + x.sizes().to_string() + " to have " +
                     std::to_string(weight.size(0)) + " channels, but got " + std::to_string(c) +
                     " channels instead");
  }
  const std::int64_t cout = weight.size(1) * groups;
  if (has_bias && bias->sizes() != Shape({cout})) {
    throw ShapeError(t + "expected bias of shape [" + std::to_string(cout) +
                     "] (out_channels = weight.size(1) * groups), got " +
                     bias->sizes().to_string());
  }
  std::int64_t out_hw[2];
  for (int d = 0; d < 2; ++d) {  // Note [checked sizes]: every term may come near 2^63
    const auto what = [&] { return "the output size of spatial dim " + std::to_string(d); };
    const char* op = "conv_transpose2d";
    std::int64_t v = checked_mul(op, x.size(2 + d) - 1, stride[d], what);
    v = checked_add(op, v, -checked_mul(op, 2, padding[d], what), what);
    v = checked_add(op, v, checked_mul(op, dilation[d], weight.size(2 + d) - 1, what), what);
    out_hw[d] = checked_add(op, checked_add(op, v, output_padding[d], what), 1, what);
  }
  if (out_hw[0] <= 0 || out_hw[1] <= 0) {
    throw ShapeError(t + "given input size per channel (" + std::to_string(x.size(2)) + " x " +
                     std::to_string(x.size(3)) + "), the calculated output size per channel (" +
                     std::to_string(out_hw[0]) + " x " + std::to_string(out_hw[1]) +
                     ") is too small: expected it to be positive");
  }
  const Shape out_shape({n, cout, out_hw[0], out_hw[1]});
  const bool channels_last = is_channels_last(x);
  Tensor out = empty_like_format(out_shape, x, channels_last);
  if (out.numel() > 0) {
    // Note [transposed workspace] (kernels_simd/conv_transpose.cc).
    std::int64_t workspace = weight.numel();
    if (stride[0] > 1 || stride[1] > 1) {
      const auto what = [] { return std::string("the workspace's element count"); };
      const char* op = "conv_transpose2d";
      // ceil(out / stride) per dim, without forming out + stride - 1.
      const std::int64_t ph = out_hw[0] / stride[0] + (out_hw[0] % stride[0] != 0);
      const std::int64_t pw = out_hw[1] / stride[1] + (out_hw[1] % stride[1] != 0);
      workspace = checked_add(
          op, workspace,
          checked_mul(op, checked_mul(op, checked_mul(op, n, ph, what), pw, what), cout, what),
          what);
    }
    std::vector<Tensor> inputs = {channels_last_operand(x, channels_last), weight};
    if (has_bias) inputs.push_back(*bias);
    dispatch(OpCall{kConvTranspose,
                    x.dtype(),
                    std::move(inputs),
                    {out, empty({workspace}, x.dtype(), x.device())},
                    ConvParams{stride, padding, dilation, groups}});
  }
  return input.dim() == 3 ? out.squeeze(0) : out;
}

}  // namespace mpsim
