// Front ends of the pooling and resizing ops: avg_pool2d, max_pool2d (+ indices),
// adaptive_avg_pool2d, interpolate. Each validates as PyTorch does (same conditions, messages
// that name the op, the argument, the expected and the given values), computes the output
// size, and dispatches one OpCall on 4-d [N, C, H, W] views (a 3-d input gains N = 1). The
// output takes the input's memory format: channels-last when the input's strides are exactly
// channels_last_strides(sizes) (Note [channels-last output]), else contiguous.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/dispatch.h"
#include "core/ops.h"

namespace mpsim {
namespace {

// "[op] ", the prefix of every message (appended, not concatenated from a literal: GCC 12
// warns falsely on `"[" + std::string`).
std::string tag(OpId op) {
  std::string s = "[";
  s.append(op.name());
  s.append("] ");
  return s;
}

void check_float_input(OpId op, const Tensor& x) {
  if (!x.defined()) throw InvalidArgument(tag(op) + "expected a defined input");
  if (!is_floating(x.dtype())) {
    throw DTypeError(tag(op) + "expected a floating point input, got " +
                     std::string(dtype_name(x.dtype())));
  }
}

// Note [channels-last output]
// PyTorch gives pooling and upsampling outputs the input's suggested memory format. mpsim
// takes channels-last only for an exact match of the dense channels-last strides, so an
// ambiguous input (C = 1 or H = W = 1, where both layouts describe the same bytes) and any
// other strided view give a contiguous output, as PyTorch does for them.
bool is_channels_last(const Tensor& x) {
  return x.dim() == 4 && !x.is_contiguous() && x.strides() == channels_last_strides(x.sizes());
}

Tensor empty_in_format(const Shape& sizes, const Tensor& like, DType dtype) {
  return is_channels_last(like)
             ? empty_strided(sizes, channels_last_strides(sizes), dtype, like.device())
             : empty(sizes, dtype, like.device());
}

// A {h, w} argument given as one value (both dims) or two; `empty_ok` takes {} as `fallback`.
struct Pair {
  std::int64_t h, w;
};

Pair pair_arg(OpId op, const IntList& v, const char* arg, const char* rule, bool empty_ok = false,
              Pair fallback = {0, 0}) {
  if (empty_ok && v.empty()) return fallback;
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  throw InvalidArgument(tag(op) + arg + " must " + rule + ", got " + to_string(v));
}

// Pooling arithmetic in 128 bits: sizes, pads, strides and dilations are any int64 here (the
// sign checks come after, in PyTorch's order), and their products must not overflow
// (pooled_size(kernel = INT64_MIN) did: found by tests/fuzz/op_fuzz). Every product of two int64
// and sum of a few fits in __int128.
using Wide = __int128;

Wide floor_div(Wide a, Wide b) {
  const Wide q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// PyTorch's pooling_output_shape, with its checks on stride and padding; the result saturates
// at the ends of int64 (the later checks reject such sizes).
std::int64_t pooled_size(OpId op, std::int64_t in, std::int64_t kernel, std::int64_t pad,
                         std::int64_t stride, std::int64_t dilation, bool ceil_mode) {
  if (stride == 0) throw InvalidArgument(tag(op) + "stride should not be zero");
  if (pad < 0) {
    throw InvalidArgument(tag(op) +
                          "pad must be non-negative, but got pad: " + std::to_string(pad));
  }
  if (Wide(pad) > ((Wide(kernel) - 1) * dilation + 1) / 2) {
    throw InvalidArgument(
        tag(op) +
        "pad should be at most half of effective kernel size, but got pad=" + std::to_string(pad) +
        ", kernel_size=" + std::to_string(kernel) + " and dilation=" + std::to_string(dilation));
  }
  Wide out = floor_div(Wide(in) + 2 * Wide(pad) - Wide(dilation) * (Wide(kernel) - 1) - 1 +
                           (ceil_mode ? Wide(stride) - 1 : 0),
                       stride) +
             1;
  // The last window must start inside the input or its left padding.
  if (ceil_mode && (out - 1) * stride >= Wide(in) + pad) --out;
  constexpr Wide kMax = std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(std::clamp<Wide>(out, -kMax, kMax));
}

struct PoolArgs {
  Pair kernel, stride, padding, dilation;
  bool ceil_mode;
};

PoolArgs pool_args(OpId op, const IntList& kernel_size, const IntList& stride,
                   const IntList& padding, const IntList& dilation, bool ceil_mode) {
  PoolArgs a;
  a.kernel =
      pair_arg(op, kernel_size, "kernel_size", "either be a single int, or a tuple of two ints");
  a.stride = pair_arg(op, stride, "stride",
                      "either be omitted, a single int, or a tuple of two ints", true, a.kernel);
  a.padding = pair_arg(op, padding, "padding", "either be a single int, or a tuple of two ints");
  a.dilation = pair_arg(op, dilation, "dilation", "either be a single int, or a tuple of two ints");
  a.ceil_mode = ceil_mode;
  return a;
}

// PyTorch's pooling_output_shape and pool2d_shape_check, in its order: the [N, C, OH, OW] (or
// [C, OH, OW]) output.
Shape pooled_shape(OpId op, const Tensor& x, const PoolArgs& a) {
  const std::string o = tag(op);
  const bool rank_ok = x.dim() == 3 || x.dim() == 4;
  bool sizes_ok = rank_ok;
  for (std::int64_t d = x.dim() - 3; rank_ok && d < x.dim(); ++d) sizes_ok &= x.size(d) > 0;
  if (!sizes_ok) {
    throw ShapeError(o + "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size " +
                     "for input, but got: " + x.sizes().to_string());
  }
  const std::int64_t c = x.size(-3), h = x.size(-2), w = x.size(-1);
  const std::int64_t oh =
      pooled_size(op, h, a.kernel.h, a.padding.h, a.stride.h, a.dilation.h, a.ceil_mode);
  const std::int64_t ow =
      pooled_size(op, w, a.kernel.w, a.padding.w, a.stride.w, a.dilation.w, a.ceil_mode);
  if (a.kernel.h <= 0 || a.kernel.w <= 0) {
    throw InvalidArgument(o + "kernel size should be greater than zero, but got kH: " +
                          std::to_string(a.kernel.h) + " kW: " + std::to_string(a.kernel.w));
  }
  if (a.stride.h <= 0 || a.stride.w <= 0) {
    throw InvalidArgument(o + "stride should be greater than zero, but got dH: " +
                          std::to_string(a.stride.h) + " dW: " + std::to_string(a.stride.w));
  }
  if (a.dilation.h <= 0 || a.dilation.w <= 0) {
    throw InvalidArgument(o + "dilation should be greater than zero, but got dilationH: " +
                          std::to_string(a.dilation.h) +
                          " dilationW: " + std::to_string(a.dilation.w));
  }
  if (a.kernel.w / 2 < a.padding.w || a.kernel.h / 2 < a.padding.h) {
    throw InvalidArgument(
        o + "pad should be smaller than or equal to half of kernel size, but " +
        "got padW = " + std::to_string(a.padding.w) + ", padH = " + std::to_string(a.padding.h) +
        ", kW = " + std::to_string(a.kernel.w) + ", kH = " + std::to_string(a.kernel.h));
  }
  if (oh < 1 || ow < 1) {
    throw ShapeError(o + "Given input size: (" + std::to_string(c) + "x" + std::to_string(h) + "x" +
                     std::to_string(w) + "). Calculated output size: (" + std::to_string(c) + "x" +
                     std::to_string(oh) + "x" + std::to_string(ow) + "). Output size is too small");
  }
  std::vector<std::int64_t> sizes(x.sizes().begin(), x.sizes().end());
  sizes[sizes.size() - 2] = oh;
  sizes[sizes.size() - 1] = ow;
  return Shape(sizes);
}

Tensor as_4d(const Tensor& t) { return t.dim() == 3 ? t.unsqueeze(0) : t; }

// Runs `op` from x into `outputs` (all of x's rank) unless there is nothing to compute.
void run(OpId op, const Tensor& x, std::vector<Tensor> outputs, OpParams params) {
  if (outputs[0].numel() == 0) return;
  for (Tensor& t : outputs) t = as_4d(t);
  dispatch(OpCall{op, x.dtype(), {as_4d(x)}, std::move(outputs), std::move(params)});
}

// Note [NCHW pools on channels-last copies]
// The pools' vector rows (and interpolate's bilinear ones) take a channels-last pixel's channels in
// vectors (Note [pooled pixels] in kernels_simd/pool_rows.cc). An input of kVectorChannels channels
// or more whose channels are not dense (NCHW) is pooled from a channels-last copy into a
// channels-last output, which is then copied into the NCHW output: the same bits as the scalar
// loops over the NCHW planes, for two copies of x's and the output's size (the extra memory while
// the op runs). The copies cost far less than the vector rows save over the scalar loops, in
// float32 and float16 (`MPSIM_NUM_THREADS=1 elementwise_bench --benchmark_filter=pool/`, beside a
// build of the scalar loops; docs/measurements.md).
constexpr std::int64_t kVectorChannels = 16;

void run_pool(OpId op, const Tensor& x, const std::vector<Tensor>& outputs, OpParams params) {
  const Tensor x4 = as_4d(x);
  const bool staged = outputs[0].numel() > 0 && x4.size(1) >= kVectorChannels && x4.stride(1) != 1;
  if (!staged) return run(op, x, outputs, std::move(params));
  const Tensor xc = x4.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
  std::vector<Tensor> cl;
  for (const Tensor& o : outputs) {
    const Shape sizes = as_4d(o).sizes();
    cl.push_back(empty_strided(sizes, channels_last_strides(sizes), o.dtype(), o.device()));
  }
  run(op, xc, cl, std::move(params));
  for (std::size_t i = 0; i < outputs.size(); ++i) as_4d(outputs[i]).copy_(cl[i]);
}

PoolParams pool_params(const PoolArgs& a, bool count_include_pad,
                       std::int64_t divisor_override) {
  return PoolParams{{a.kernel.h, a.kernel.w},   {a.stride.h, a.stride.w},
                    {a.padding.h, a.padding.w},  {a.dilation.h, a.dilation.w},
                    count_include_pad,           divisor_override};
}

std::pair<Tensor, Tensor> max_pool(const Tensor& x, const IntList& kernel_size,
                                   const IntList& stride, const IntList& padding,
                                   const IntList& dilation, bool ceil_mode, bool with_indices) {
  constexpr OpId kMax = op_id("max_pool2d");
  check_float_input(kMax, x);
  const PoolArgs a = pool_args(kMax, kernel_size, stride, padding, dilation, ceil_mode);
  const Shape shape = pooled_shape(kMax, x, a);
  Tensor out = empty_in_format(shape, x, x.dtype());
  Tensor indices = with_indices ? empty_in_format(shape, x, DType::Int64) : Tensor();
  std::vector<Tensor> outputs = {out};
  if (with_indices) outputs.push_back(indices);
  run_pool(kMax, x, outputs, pool_params(a, false, 0));  // max: no divisor
  return {out, indices};
}

}  // namespace

Tensor avg_pool2d(const Tensor& x, const IntList& kernel_size, const IntList& stride,
                  const IntList& padding, bool ceil_mode, bool count_include_pad,
                  std::optional<std::int64_t> divisor_override) {
  constexpr OpId kAvg = op_id("avg_pool2d");
  check_float_input(kAvg, x);
  const PoolArgs a = pool_args(kAvg, kernel_size, stride, padding, {1}, ceil_mode);
  if (divisor_override && *divisor_override == 0) {
    throw InvalidArgument("[avg_pool2d] divisor must be not zero, got divisor_override=0");
  }
  const Shape shape = pooled_shape(kAvg, x, a);
  Tensor out = empty_in_format(shape, x, x.dtype());
  run_pool(kAvg, x, {out}, pool_params(a, count_include_pad, divisor_override.value_or(0)));
  return out;
}

Tensor max_pool2d(const Tensor& x, const IntList& kernel_size, const IntList& stride,
                  const IntList& padding, const IntList& dilation, bool ceil_mode) {
  return max_pool(x, kernel_size, stride, padding, dilation, ceil_mode, false).first;
}

std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const IntList& kernel_size,
                                                  const IntList& stride, const IntList& padding,
                                                  const IntList& dilation, bool ceil_mode) {
  return max_pool(x, kernel_size, stride, padding, dilation, ceil_mode, true);
}

Tensor adaptive_avg_pool2d(const Tensor& x, const IntList& output_size) {
  constexpr OpId kAdaptive = op_id("adaptive_avg_pool2d");
  check_float_input(kAdaptive, x);
  const Pair size = pair_arg(kAdaptive, output_size, "output_size",
                             "either be a single int, or a tuple of two ints");
  if (size.h < 0 || size.w < 0) {
    throw InvalidArgument(
        "[adaptive_avg_pool2d] elements of output_size must be greater than or equal to 0, got " +
        to_string(output_size));
  }
  if (x.dim() != 3 && x.dim() != 4) {
    throw ShapeError("[adaptive_avg_pool2d] expected a 3D or 4D tensor, got " +
                     x.sizes().to_string());
  }
  for (std::int64_t d : {x.dim() - 2, x.dim() - 1}) {
    if (x.size(d) == 0) {
      throw ShapeError(
          "[adaptive_avg_pool2d] expected input to have non-zero size for non-batch dimensions, "
          "but input has sizes " +
          x.sizes().to_string() + " with dimension " + std::to_string(d) + " being empty");
    }
  }
  std::vector<std::int64_t> sizes(x.sizes().begin(), x.sizes().end());
  sizes[sizes.size() - 2] = size.h;
  sizes[sizes.size() - 1] = size.w;
  Tensor out = empty_in_format(Shape(sizes), x, x.dtype());
  run_pool(kAdaptive, x, {out}, OpParams{});
  return out;
}

Tensor interpolate(const Tensor& x, const std::optional<IntList>& size,
                   const std::optional<std::vector<double>>& scale_factor, std::string_view mode,
                   std::optional<bool> align_corners) {
  constexpr OpId kInterp = op_id("interpolate");
  check_float_input(kInterp, x);
  const std::string m(mode);
  const bool known = m == "nearest" || m == "linear" || m == "bilinear" || m == "bicubic" ||
                     m == "trilinear" || m == "area" || m == "nearest-exact";
  if (!known) {
    throw InvalidArgument(
        "[interpolate] mode must be one of nearest | linear | bilinear | bicubic | trilinear | "
        "area | nearest-exact, got '" +
        m + "'");
  }
  if (align_corners && (m == "nearest" || m == "area" || m == "nearest-exact")) {
    throw InvalidArgument(
        "[interpolate] align_corners option can only be set with the interpolating modes: "
        "linear | bilinear | bicubic | trilinear, got mode '" +
        m + "'");
  }
  if (size && scale_factor) {
    throw InvalidArgument("[interpolate] only one of size or scale_factor should be defined");
  }
  if (!size && !scale_factor) {
    throw InvalidArgument("[interpolate] either size or scale_factor should be defined");
  }
  if (m != "nearest" && m != "bilinear") {
    throw NotImplementedError("[interpolate] mode '" + m +
                              "' is not implemented in mpsim (nearest and bilinear are)");
  }
  if (x.dim() != 4) {
    if (m == "bilinear") {
      throw NotImplementedError("[interpolate] got " + std::to_string(x.dim()) +
                                "D input, but bilinear mode needs 4D input");
    }
    if (x.dim() == 3 || x.dim() == 5) {
      throw NotImplementedError("[interpolate] mpsim implements nearest for 4D input, got " +
                                std::to_string(x.dim()) + "D input " + x.sizes().to_string());
    }
    throw ShapeError("[interpolate] only 3D, 4D and 5D input tensors are supported, got " +
                     std::to_string(x.dim()) + "D input " + x.sizes().to_string());
  }
  const std::int64_t in_h = x.size(2), in_w = x.size(3);
  const std::string spatial = to_string(IntList{in_h, in_w});
  std::int64_t out_h = 0, out_w = 0;
  double scale_h = 0, scale_w = 0;
  if (size) {
    if (size->size() != 1 && size->size() != 2) {
      throw InvalidArgument(
          "[interpolate] input and output must have the same number of spatial dimensions, but "
          "got input with spatial dimensions of " +
          spatial + " and output size of " + to_string(*size));
    }
    out_h = size->front();
    out_w = size->back();
  } else {
    const std::vector<double>& s = *scale_factor;
    if (s.size() != 1 && s.size() != 2) {
      std::string given = "[";
      for (std::size_t i = 0; i < s.size(); ++i) given += (i ? ", " : "") + std::to_string(s[i]);
      throw InvalidArgument(
          "[interpolate] input and scale_factor must have the same number of spatial "
          "dimensions, but got input with spatial dimensions of " +
          spatial + " and scale_factor of shape " + given + "]");
    }
    scale_h = s.front();
    scale_w = s.back();
    if (!std::isfinite(scale_h) || !std::isfinite(scale_w)) {
      throw InvalidArgument("[interpolate] scale_factor must be finite, got " +
                            std::to_string(scale_h) + ", " + std::to_string(scale_w));
    }
    // PyTorch: floor(float(in) * scale) in double.
    // A size beyond int64 is refused before the conversion, which would be undefined.
    const auto scaled = [&](std::int64_t in, double scale, const char* dim) {
      const double v = std::floor(static_cast<double>(in) * scale);
      if (!(v < 0x1p63)) {
        char text[96];
        std::snprintf(text, sizeof(text), "%lld * %.17g", static_cast<long long>(in), scale);
        throw ShapeError(std::string("[interpolate] the output ") + dim + " " + text +
                         " overflows int64: storage size calculation overflowed");
      }
      return static_cast<std::int64_t>(v);
    };
    out_h = scaled(in_h, scale_h, "height");
    out_w = scaled(in_w, scale_w, "width");
  }
  if (in_h <= 0 || in_w <= 0 || out_h <= 0 || out_w <= 0) {
    throw ShapeError(
        "[interpolate] input and output sizes should be greater than 0, but got "
        "input (H: " +
        std::to_string(in_h) + ", W: " + std::to_string(in_w) +
        ") output (H: " + std::to_string(out_h) + ", W: " + std::to_string(out_w) + ")");
  }
  if (x.size(1) == 0) {
    throw ShapeError(
        "[interpolate] non-empty 4D data tensor expected but got a tensor with sizes " +
        x.sizes().to_string());
  }
  Tensor out = empty_in_format(Shape({x.size(0), x.size(1), out_h, out_w}), x, x.dtype());
  OpParams params = ResizeParams{m == "bilinear" ? ResizeMode::Bilinear : ResizeMode::Nearest,
                                 align_corners.value_or(false), scale_h, scale_w};
  // Bilinear samples in vectors of channels (Note [NCHW pools on channels-last copies]); a
  // nearest sample is a copy, as fast along NCHW rows.
  if (m == "bilinear") {
    run_pool(kInterp, x, {out}, std::move(params));
  } else {
    run(kInterp, x, {out}, std::move(params));
  }
  return out;
}

}  // namespace mpsim
