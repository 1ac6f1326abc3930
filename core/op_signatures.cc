// The table of op signatures: one row per op, grouped by family. A row names the op and its
// arguments as torch does and calls the C++ op through a captureless lambda over the bound
// arguments (core/op_registry.h). Adding an op: one row here and a case in
// tests/op_registry_test.cc.
#include <string>
#include <utility>

#include "core/op_registry.h"
#include "core/ops.h"

namespace mpsim {
namespace {

using K = ArgKind;
using Args = std::span<const ArgValue>;

// ---- Reading bound arguments (each holds its kind's canonical alternative). ----
struct Bound {
  Args v;
  const ArgValue& operator[](std::size_t i) const { return v[i]; }
  bool none(std::size_t i) const { return std::holds_alternative<std::monostate>(v[i]); }
  const Tensor& t(std::size_t i) const { return std::get<Tensor>(v[i]); }
  std::optional<Tensor> ot(std::size_t i) const {
    return none(i) ? std::nullopt : std::optional<Tensor>(t(i));
  }
  const std::vector<Tensor>& tl(std::size_t i) const { return std::get<std::vector<Tensor>>(v[i]); }
  std::int64_t i(std::size_t k) const { return std::get<std::int64_t>(v[k]); }
  std::optional<std::int64_t> oi(std::size_t k) const {
    return none(k) ? std::nullopt : std::optional<std::int64_t>(i(k));
  }
  const IntList& il(std::size_t k) const { return std::get<IntList>(v[k]); }
  IntList dims(std::size_t k) const { return none(k) ? IntList{} : il(k); }  // None: every dim
  double d(std::size_t k) const { return std::get<double>(v[k]); }
  std::optional<double> od(std::size_t k) const {
    return none(k) ? std::nullopt : std::optional<double>(d(k));
  }
  bool b(std::size_t k) const { return std::get<bool>(v[k]); }
  std::string_view s(std::size_t k) const { return std::get<std::string>(v[k]); }
  std::optional<std::string_view> os(std::size_t k) const {
    return none(k) ? std::nullopt : std::optional<std::string_view>(s(k));
  }
  Scalar sc(std::size_t k) const { return std::get<Scalar>(v[k]); }
  std::optional<Scalar> osc(std::size_t k) const {
    return none(k) ? std::nullopt : std::optional<Scalar>(sc(k));
  }
  DType dt(std::size_t k) const { return std::get<DType>(v[k]); }
  std::optional<DType> odt(std::size_t k) const {
    return none(k) ? std::nullopt : std::optional<DType>(dt(k));
  }
  DType dt_or(std::size_t k, DType fallback) const { return odt(k).value_or(fallback); }
  Device dev(std::size_t k) const { return std::get<Device>(v[k]); }
  std::optional<bool> ob(std::size_t k) const {
    return none(k) ? std::nullopt : std::optional<bool>(b(k));
  }
  std::optional<std::vector<double>> ofl(std::size_t k) const {
    if (none(k)) return std::nullopt;
    return std::get<std::vector<double>>(v[k]);
  }
};

// Calls f with the Tensor or the Scalar that a TensorOrScalar argument holds.
template <class F>
Tensor with_operand(const ArgValue& v, F&& f) {
  if (const Tensor* t = std::get_if<Tensor>(&v)) return f(*t);
  return f(std::get<Scalar>(v));
}

std::vector<Tensor> outputs(Tensor t) { return {std::move(t)}; }
std::vector<Tensor> outputs(std::vector<Tensor> ts) { return ts; }
std::vector<Tensor> outputs(std::pair<Tensor, Tensor> p) {
  return {std::move(p.first), std::move(p.second)};
}

// One row of the table: `body` is a captureless lambda (Bound) -> Tensor | vector | pair.
template <class F>
OpSignature op(std::string_view name, std::vector<ArgSpec> args, std::string_view doc, F) {
  return {name, std::move(args), [](Args v) { return outputs(F{}(Bound{v})); }, doc};
}

ArgSpec req(std::string_view name, ArgKind kind) { return {name, kind, std::nullopt}; }
ArgSpec opt(std::string_view name, ArgKind kind, ArgValue value) {
  return {name, kind, std::move(value)};
}
ArgSpec input() { return req("input", K::Tensor); }
ArgSpec operand(std::string_view name) { return req(name, K::TensorOrScalar); }
ArgSpec keepdim() { return opt("keepdim", K::Bool, false); }
ArgSpec dims() { return opt("dim", K::OptionalIntList, ArgValue{}); }
ArgSpec dtype_arg() { return opt("dtype", K::OptionalDType, ArgValue{}); }
ArgSpec device_arg() { return opt("device", K::Device, Device::cpu()); }
ArgValue i64(std::int64_t v) { return v; }
ArgValue str(const char* v) { return std::string(v); }

template <Tensor (*F)(const Tensor&)>
OpSignature unary(std::string_view name, std::string_view doc) {
  return {name, {input()}, [](Args v) { return outputs(F(std::get<Tensor>(v[0]))); }, doc};
}

std::vector<OpSignature> unary_ops() {
  return {
      unary<&abs>("abs", "|x|"),
      unary<&neg>("neg", "-x"),
      unary<&exp>("exp", "e^x"),
      unary<&log>("log", "natural logarithm"),
      unary<&log1p>("log1p", "log(1 + x)"),
      unary<&expm1>("expm1", "e^x - 1"),
      unary<&sqrt>("sqrt", "square root"),
      unary<&rsqrt>("rsqrt", "1 / sqrt(x)"),
      unary<&sin>("sin", "sine"),
      unary<&cos>("cos", "cosine"),
      unary<&tanh>("tanh", "hyperbolic tangent"),
      unary<&erf>("erf", "error function"),
      unary<&relu>("relu", "max(x, 0)"),
      unary<&sigmoid>("sigmoid", "1 / (1 + e^-x)"),
      unary<&silu>("silu", "x * sigmoid(x)"),
      unary<&reciprocal>("reciprocal", "1 / x"),
      unary<&square>("square", "x * x"),
      op("gelu", {input(), opt("approximate", K::String, str("none"))},
         "x * Phi(x); approximate 'none' or 'tanh'", [](Bound a) { return gelu(a.t(0), a.s(1)); }),
      op("softplus",
         {input(), opt("beta", K::Scalar, i64(1)), opt("threshold", K::Scalar, i64(20))},
         "log(1 + e^(beta x)) / beta; x where beta x > threshold",
         [](Bound a) { return softplus(a.t(0), a.sc(1), a.sc(2)); }),
  };
}

// Comparisons: (input, other: Tensor|Scalar) -> bool tensor.
template <class F>
OpSignature compare(std::string_view name, std::string_view doc, F) {
  return op(name, {input(), operand("other")}, doc, [](Bound a) {
    return with_operand(a[1], [&](const auto& o) { return F{}(a.t(0), o); });
  });
}

std::vector<OpSignature> binary_ops() {
  return {
      op("add", {input(), operand("other"), opt("alpha", K::Scalar, i64(1))},
         "input + alpha * other",
         [](Bound a) {
           return with_operand(a[1], [&](const auto& o) { return add(a.t(0), o, a.sc(2)); });
         }),
      op("sub", {input(), operand("other"), opt("alpha", K::Scalar, i64(1))},
         "input - alpha * other",
         [](Bound a) {
           return with_operand(a[1], [&](const auto& o) { return sub(a.t(0), o, a.sc(2)); });
         }),
      op("mul", {input(), operand("other")}, "input * other",
         [](Bound a) { return with_operand(a[1], [&](const auto& o) { return mul(a.t(0), o); }); }),
      op("div", {input(), operand("other"), opt("rounding_mode", K::OptionalString, ArgValue{})},
         "input / other; rounding_mode None, 'trunc' or 'floor'",
         [](Bound a) {
           return with_operand(a[1], [&](const auto& o) { return div(a.t(0), o, a.os(2)); });
         }),
      op("maximum", {input(), req("other", K::Tensor)}, "elementwise maximum (NaN propagates)",
         [](Bound a) { return maximum(a.t(0), a.t(1)); }),
      op("minimum", {input(), req("other", K::Tensor)}, "elementwise minimum (NaN propagates)",
         [](Bound a) { return minimum(a.t(0), a.t(1)); }),
      op("pow", {operand("input"), operand("exponent")}, "input ^ exponent",
         [](Bound a) {
           if (const Tensor* x = std::get_if<Tensor>(&a[0])) {
             return with_operand(a[1], [&](const auto& e) { return pow(*x, e); });
           }
           if (const Tensor* e = std::get_if<Tensor>(&a[1])) return pow(a.sc(0), *e);
           throw SignatureError("[pow] expected a tensor for input or exponent, got two numbers");
         }),
      compare("eq", "input == other", [](const Tensor& x, const auto& o) { return eq(x, o); }),
      compare("ne", "input != other", [](const Tensor& x, const auto& o) { return ne(x, o); }),
      compare("lt", "input < other", [](const Tensor& x, const auto& o) { return lt(x, o); }),
      compare("le", "input <= other", [](const Tensor& x, const auto& o) { return le(x, o); }),
      compare("gt", "input > other", [](const Tensor& x, const auto& o) { return gt(x, o); }),
      compare("ge", "input >= other", [](const Tensor& x, const auto& o) { return ge(x, o); }),
      op("where", {req("condition", K::Tensor), operand("input"), operand("other")},
         "condition ? input : other",
         [](Bound a) {
           return with_operand(a[1], [&](const auto& x) {
             return with_operand(a[2], [&](const auto& y) { return where(a.t(0), x, y); });
           });
         }),
      op("clamp",
         {input(), opt("min", K::OptionalTensorOrScalar, ArgValue{}),
          opt("max", K::OptionalTensorOrScalar, ArgValue{})},
         "min(max(input, min), max); min and max both numbers or both tensors",
         [](Bound a) {
           const bool tensors =
               std::holds_alternative<Tensor>(a[1]) || std::holds_alternative<Tensor>(a[2]);
           if (!tensors) return clamp(a.t(0), a.osc(1), a.osc(2));
           if (std::holds_alternative<Scalar>(a[1]) || std::holds_alternative<Scalar>(a[2])) {
             throw SignatureError("[clamp] expected min and max both numbers or both tensors");
           }
           return clamp(a.t(0), a.ot(1), a.ot(2));
         }),
      op("clamp_min", {input(), req("min", K::Scalar)}, "max(input, min)",
         [](Bound a) { return clamp_min(a.t(0), a.sc(1)); }),
      op("clamp_max", {input(), req("max", K::Scalar)}, "min(input, max)",
         [](Bound a) { return clamp_max(a.t(0), a.sc(1)); }),
  };
}

std::vector<OpSignature> reduce_ops() {
  const auto correction = [] { return opt("correction", K::Int, i64(1)); };
  return {
      op("sum", {input(), dims(), keepdim(), dtype_arg()}, "sum over dim (None: every dim)",
         [](Bound a) { return sum(a.t(0), a.dims(1), a.b(2), a.odt(3)); }),
      op("mean", {input(), dims(), keepdim(), dtype_arg()}, "mean over dim",
         [](Bound a) { return mean(a.t(0), a.dims(1), a.b(2), a.odt(3)); }),
      op("prod", {input(), dims(), keepdim(), dtype_arg()}, "product over dim",
         [](Bound a) { return prod(a.t(0), a.dims(1), a.b(2), a.odt(3)); }),
      op("var", {input(), dims(), correction(), keepdim()}, "variance with `correction`",
         [](Bound a) { return var(a.t(0), a.dims(1), a.i(2), a.b(3)); }),
      op("std", {input(), dims(), correction(), keepdim()}, "standard deviation",
         [](Bound a) { return std(a.t(0), a.dims(1), a.i(2), a.b(3)); }),
      op("var_mean", {input(), dims(), correction(), keepdim()}, "(variance, mean)",
         [](Bound a) { return var_mean(a.t(0), a.dims(1), a.i(2), a.b(3)); }),
      op("norm", {input(), opt("p", K::Double, 2.0), dims(), keepdim()},
         "the 2-norm over dim (p = 2 only)",
         [](Bound a) {
           if (a.d(1) != 2.0) {
             throw NotImplementedError("[norm] only p=2 is implemented, got p=" +
                                       arg_value_string(a[1]));
           }
           return norm(a.t(0), a.dims(2), a.b(3));
         }),
      op("amax", {input(), opt("dim", K::IntList, IntList{}), keepdim()},
         "maximum over dim (NaN propagates)",
         [](Bound a) { return amax(a.t(0), a.il(1), a.b(2)); }),
      op("amin", {input(), opt("dim", K::IntList, IntList{}), keepdim()},
         "minimum over dim (NaN propagates)",
         [](Bound a) { return amin(a.t(0), a.il(1), a.b(2)); }),
      op("logsumexp", {input(), req("dim", K::IntList), keepdim()}, "log(sum(exp(x))) over dim",
         [](Bound a) { return logsumexp(a.t(0), a.il(1), a.b(2)); }),
      op("argmax", {input(), opt("dim", K::OptionalInt, ArgValue{}), keepdim()},
         "int64 index of the first maximum",
         [](Bound a) { return argmax(a.t(0), a.oi(1), a.b(2)); }),
      op("argmin", {input(), opt("dim", K::OptionalInt, ArgValue{}), keepdim()},
         "int64 index of the first minimum",
         [](Bound a) { return argmin(a.t(0), a.oi(1), a.b(2)); }),
      op("softmax", {input(), req("dim", K::Int), dtype_arg()}, "softmax over dim",
         [](Bound a) { return softmax(a.t(0), a.i(1), a.odt(2)); }),
      op("log_softmax", {input(), req("dim", K::Int), dtype_arg()}, "log of softmax over dim",
         [](Bound a) { return log_softmax(a.t(0), a.i(1), a.odt(2)); }),
  };
}

std::vector<OpSignature> norm_ops() {
  const auto weight = [] { return opt("weight", K::OptionalTensor, ArgValue{}); };
  const auto bias = [] { return opt("bias", K::OptionalTensor, ArgValue{}); };
  const auto eps = [] { return opt("eps", K::Double, 1e-5); };
  return {
      op("layer_norm", {input(), req("normalized_shape", K::IntList), weight(), bias(), eps()},
         "normalize over the trailing normalized_shape dims",
         [](Bound a) { return layer_norm(a.t(0), a.il(1), a.ot(2), a.ot(3), a.d(4)); }),
      op("rms_norm",
         {input(), req("normalized_shape", K::IntList), weight(),
          opt("eps", K::OptionalDouble, ArgValue{})},
         "x / sqrt(mean(x^2) + eps) * weight (eps None: the dtype's epsilon)",
         [](Bound a) { return rms_norm(a.t(0), a.il(1), a.ot(2), a.od(3)); }),
      op("group_norm", {input(), req("num_groups", K::Int), weight(), bias(), eps()},
         "normalize each group of channels of [N, C, *]",
         [](Bound a) { return group_norm(a.t(0), a.i(1), a.ot(2), a.ot(3), a.d(4)); }),
      op("batch_norm",
         {input(), req("running_mean", K::Tensor), req("running_var", K::Tensor), weight(), bias(),
          opt("training", K::Bool, false), opt("momentum", K::Double, 0.1), eps()},
         "inference batch norm with running statistics per channel",
         [](Bound a) {
           return batch_norm(a.t(0), a.t(1), a.t(2), a.ot(3), a.ot(4), a.b(5), a.d(6), a.d(7));
         }),
  };
}

std::vector<OpSignature> linalg_ops() {
  const auto beta_alpha = [] {
    return std::vector<ArgSpec>{opt("beta", K::Scalar, i64(1)), opt("alpha", K::Scalar, i64(1))};
  };
  const auto with = [](std::vector<ArgSpec> head, std::vector<ArgSpec> tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  return {
      op("matmul", {input(), req("other", K::Tensor)}, "torch.matmul (1-d, 2-d, batched)",
         [](Bound a) { return matmul(a.t(0), a.t(1)); }),
      op("mm", {input(), req("mat2", K::Tensor)}, "[M, K] @ [K, N]",
         [](Bound a) { return mm(a.t(0), a.t(1)); }),
      op("bmm", {input(), req("mat2", K::Tensor)}, "[B, M, K] @ [B, K, N]",
         [](Bound a) { return bmm(a.t(0), a.t(1)); }),
      op("addmm", with({input(), req("mat1", K::Tensor), req("mat2", K::Tensor)}, beta_alpha()),
         "beta * input + alpha * (mat1 @ mat2)",
         [](Bound a) { return addmm(a.t(0), a.t(1), a.t(2), a.sc(3), a.sc(4)); }),
      op("baddbmm",
         with({input(), req("batch1", K::Tensor), req("batch2", K::Tensor)}, beta_alpha()),
         "beta * input + alpha * bmm(batch1, batch2)",
         [](Bound a) { return baddbmm(a.t(0), a.t(1), a.t(2), a.sc(3), a.sc(4)); }),
      op("linear", {input(), req("weight", K::Tensor), opt("bias", K::OptionalTensor, ArgValue{})},
         "input @ weight^T + bias", [](Bound a) { return linear(a.t(0), a.t(1), a.ot(2)); }),
  };
}

// Sizes, strides and paddings: one value for both spatial dims or two ({h, w}).
std::vector<OpSignature> spatial_ops() {
  const auto sizes = [](std::string_view name, std::int64_t v) {
    return opt(name, K::IntList, IntList{v});
  };
  const auto stride = [] { return opt("stride", K::OptionalIntList, ArgValue{}); };
  return {
      op("conv2d",
         {input(), req("weight", K::Tensor), opt("bias", K::OptionalTensor, ArgValue{}),
          sizes("stride", 1), opt("padding", K::IntListOrString, IntList{0}), sizes("dilation", 1),
          opt("groups", K::Int, i64(1))},
         "2-d convolution of [N, C, H, W] (or channels-last); padding sizes, 'same' or 'valid'",
         [](Bound a) {
           if (const auto* mode = std::get_if<std::string>(&a[4])) {
             return conv2d(a.t(0), a.t(1), a.ot(2), a.il(3), *mode, a.il(5), a.i(6));
           }
           return conv2d(a.t(0), a.t(1), a.ot(2), a.il(3), a.il(4), a.il(5), a.i(6));
         }),
      op("conv_transpose2d",
         {input(), req("weight", K::Tensor), opt("bias", K::OptionalTensor, ArgValue{}),
          sizes("stride", 1), sizes("padding", 0), sizes("output_padding", 0),
          opt("groups", K::Int, i64(1)), sizes("dilation", 1)},
         "transposed 2-d convolution of [N, C, H, W] (or channels-last); weight [C, Cout/groups, "
         "kH, kW]",
         [](Bound a) {
           return conv_transpose2d(a.t(0), a.t(1), a.ot(2), a.il(3), a.il(4), a.il(5), a.i(6),
                                   a.il(7));
         }),
      op("avg_pool2d",
         {input(), req("kernel_size", K::IntList), stride(), sizes("padding", 0),
          opt("ceil_mode", K::Bool, false), opt("count_include_pad", K::Bool, true),
          opt("divisor_override", K::OptionalInt, ArgValue{})},
         "average over each window (stride None: kernel_size)",
         [](Bound a) {
           return avg_pool2d(a.t(0), a.il(1), a.dims(2), a.il(3), a.b(4), a.b(5), a.oi(6));
         }),
      op("max_pool2d",
         {input(), req("kernel_size", K::IntList), stride(), sizes("padding", 0),
          sizes("dilation", 1), opt("ceil_mode", K::Bool, false),
          opt("return_indices", K::Bool, false)},
         "maximum over each window; return_indices adds int64 indices into each H * W plane",
         [](Bound a) {
           if (a.b(6)) {
             return outputs(
                 max_pool2d_with_indices(a.t(0), a.il(1), a.dims(2), a.il(3), a.il(4), a.b(5)));
           }
           return outputs(max_pool2d(a.t(0), a.il(1), a.dims(2), a.il(3), a.il(4), a.b(5)));
         }),
      op("adaptive_avg_pool2d", {input(), req("output_size", K::IntList)},
         "average pooling to output_size",
         [](Bound a) { return adaptive_avg_pool2d(a.t(0), a.il(1)); }),
      op("interpolate",
         {input(), opt("size", K::OptionalIntList, ArgValue{}),
          opt("scale_factor", K::OptionalFloatList, ArgValue{}),
          opt("mode", K::String, str("nearest")),
          opt("align_corners", K::OptionalBool, ArgValue{})},
         "F.interpolate of [N, C, H, W]: size or scale_factor; mode 'nearest' or 'bilinear'",
         [](Bound a) {
           const std::optional<IntList> size =
               a.none(1) ? std::nullopt : std::optional<IntList>(a.il(1));
           return interpolate(a.t(0), size, a.ofl(2), a.s(3), a.ob(4));
         }),
  };
}

std::vector<OpSignature> attention_ops() {
  return {
      op("scaled_dot_product_attention",
         {req("query", K::Tensor), req("key", K::Tensor), req("value", K::Tensor),
          opt("attn_mask", K::OptionalTensor, ArgValue{}), opt("dropout_p", K::Double, 0.0),
          opt("is_causal", K::Bool, false), opt("scale", K::OptionalDouble, ArgValue{}),
          opt("slice_size", K::OptionalInt, ArgValue{})},
         "softmax(query key^T scale + attn_mask) value, flash-style; slice_size bounds the "
         "batch x heads in flight",
         [](Bound a) {
           return scaled_dot_product_attention(a.t(0), a.t(1), a.t(2), a.ot(3), a.d(4), a.b(5),
                                               a.od(6), a.oi(7));
         }),
  };
}

// The Stable Diffusion fusions (ONNX Runtime contrib semantics).
std::vector<OpSignature> fused_ops() {
  const auto eps = [] { return opt("eps", K::Double, 1e-5); };
  return {
      op("bias_add", {input(), req("bias", K::Tensor), req("skip", K::Tensor)},
         "x + bias + skip (BiasAdd): x, skip [*, C], bias [C]",
         [](Bound a) { return bias_add(a.t(0), a.t(1), a.t(2)); }),
      op("bias_split_gelu", {input(), req("bias", K::Tensor)},
         "a * gelu(b) for the halves a, b of the last dim of x + bias (BiasSplitGelu)",
         [](Bound a) { return bias_split_gelu(a.t(0), a.t(1)); }),
      op("skip_layer_norm",
         {input(), req("skip", K::Tensor), req("gamma", K::Tensor),
          opt("beta", K::OptionalTensor, ArgValue{}), opt("bias", K::OptionalTensor, ArgValue{}),
          eps(), opt("return_sum", K::Bool, false)},
         "layer_norm(x + skip + bias) over the last dim (SkipLayerNormalization); return_sum: "
         "also the sum",
         [](Bound a) {
           if (a.b(6)) {
             return outputs(skip_layer_norm_with_sum(a.t(0), a.t(1), a.t(2), a.ot(3), a.ot(4),
                                                     a.d(5)));
           }
           return outputs(skip_layer_norm(a.t(0), a.t(1), a.t(2), a.ot(3), a.ot(4), a.d(5)));
         }),
      op("group_norm_nhwc",
         {input(), req("num_groups", K::Int), req("gamma", K::Tensor), req("beta", K::Tensor),
          eps(), opt("activation", K::String, str("none"))},
         "group norm of NHWC [N, H, W, C], then activation 'none' or 'silu' (GroupNorm)",
         [](Bound a) {
           return group_norm_nhwc(a.t(0), a.i(1), a.t(2), a.t(3), a.d(4), a.s(5));
         }),
      op("multi_head_attention",
         {req("query", K::Tensor), opt("key", K::OptionalTensor, ArgValue{}),
          opt("scale", K::OptionalDouble, ArgValue{})},
         "attention of packed QKV [B, S, H, 3, D], or of query [B, L, H * D] with packed KV "
         "[B, S, H, 2, D]; result [B, L, H * D] (MultiHeadAttention)",
         [](Bound a) { return multi_head_attention(a.t(0), a.ot(1), a.od(2)); }),
  };
}

std::vector<OpSignature> creation_ops() {
  const auto size = [] { return req("size", K::IntList); };
  return {
      op("zeros", {size(), dtype_arg(), device_arg()}, "a tensor of zeros",
         [](Bound a) { return zeros(a.il(0), a.dt_or(1, DType::Float32), a.dev(2)); }),
      op("ones", {size(), dtype_arg(), device_arg()}, "a tensor of ones",
         [](Bound a) { return ones(a.il(0), a.dt_or(1, DType::Float32), a.dev(2)); }),
      op("full", {size(), req("fill_value", K::Scalar), dtype_arg(), device_arg()},
         "a tensor of fill_value (dtype None: inferred from fill_value, as torch.full)",
         [](Bound a) {
           return full(a.il(0), a.sc(1), a.dt_or(2, a.sc(1).promotion_dtype()), a.dev(3));
         }),
      op("arange",
         {req("start", K::Scalar), opt("end", K::OptionalScalar, ArgValue{}),
          opt("step", K::Scalar, i64(1)), dtype_arg(), device_arg()},
         "[start, end) by step; one number: [0, start)",
         [](Bound a) {
           if (a.none(1)) return arange(Scalar(0), a.sc(0), a.sc(2), a.odt(3), a.dev(4));
           return arange(a.sc(0), a.sc(1), a.sc(2), a.odt(3), a.dev(4));
         }),
      op("linspace",
         {req("start", K::Double), req("end", K::Double), req("steps", K::Int), dtype_arg(),
          device_arg()},
         "steps values from start to end inclusive",
         [](Bound a) {
           return linspace(a.d(0), a.d(1), a.i(2), a.dt_or(3, DType::Float32), a.dev(4));
         }),
      op("rand", {size(), dtype_arg(), device_arg()}, "uniform on [0, 1) (Philox; manual_seed)",
         [](Bound a) { return rand(a.il(0), a.dt_or(1, DType::Float32), a.dev(2)); }),
      op("uniform",
         {size(), opt("low", K::Double, 0.0), opt("high", K::Double, 1.0), dtype_arg(),
          device_arg()},
         "uniform on [low, high)",
         [](Bound a) {
           return uniform(a.il(0), a.d(1), a.d(2), a.dt_or(3, DType::Float32), a.dev(4));
         }),
      op("randn", {size(), dtype_arg(), device_arg()}, "standard normal",
         [](Bound a) { return randn(a.il(0), a.dt_or(1, DType::Float32), a.dev(2)); }),
      op("normal",
         {req("mean", K::Double), req("std", K::Double), size(), dtype_arg(), device_arg()},
         "normal with mean and std",
         [](Bound a) {
           return normal(a.d(0), a.d(1), a.il(2), a.dt_or(3, DType::Float32), a.dev(4));
         }),
      op("randint", {req("low", K::Int), req("high", K::Int), size(), dtype_arg(), device_arg()},
         "integers in [low, high)",
         [](Bound a) {
           return randint(a.i(0), a.i(1), a.il(2), a.dt_or(3, DType::Int64), a.dev(4));
         }),
      op("bernoulli", {input()}, "1 with probability input, else 0",
         [](Bound a) { return bernoulli(a.t(0)); }),
      op("dropout", {input(), opt("p", K::Double, 0.5), opt("training", K::Bool, true)},
         "zero with probability p, scale the rest by 1 / (1 - p)",
         [](Bound a) { return dropout(a.t(0), a.d(1), a.b(2)); }),
  };
}

std::vector<OpSignature> movement_ops() {
  const auto dim0 = [] { return opt("dim", K::Int, i64(0)); };
  return {
      op("cat", {req("tensors", K::TensorList), dim0()}, "concatenate along dim",
         [](Bound a) { return cat(a.tl(0), a.i(1)); }),
      op("stack", {req("tensors", K::TensorList), dim0()}, "stack along a new dim",
         [](Bound a) { return stack(a.tl(0), a.i(1)); }),
      op("split",
         {req("tensor", K::Tensor), req("split_size_or_sections", K::IntOrIntList), dim0()},
         "pieces of split_size (an int) or of the given sizes (a list) along dim",
         [](Bound a) {
           if (std::holds_alternative<IntList>(a[1])) return split(a.t(0), a.il(1), a.i(2));
           return split(a.t(0), a.i(1), a.i(2));
         }),
      op("chunk", {input(), req("chunks", K::Int), dim0()}, "at most `chunks` equal pieces",
         [](Bound a) { return chunk(a.t(0), a.i(1), a.i(2)); }),
      op("index_select", {input(), req("dim", K::Int), req("index", K::Tensor)},
         "the entries at `index` along dim",
         [](Bound a) { return index_select(a.t(0), a.i(1), a.t(2)); }),
      op("gather", {input(), req("dim", K::Int), req("index", K::Tensor)},
         "out[i][j] = input[index[i][j]][j] (dim 0)",
         [](Bound a) { return gather(a.t(0), a.i(1), a.t(2)); }),
      op("flip", {input(), req("dims", K::IntList)}, "reverse along dims",
         [](Bound a) { return flip(a.t(0), a.il(1)); }),
      op("repeat", {input(), req("repeats", K::IntList)}, "tile (Tensor.repeat)",
         [](Bound a) { return repeat(a.t(0), a.il(1)); }),
      op("pad",
         {input(), req("pad", K::IntList), opt("mode", K::String, str("constant")),
          opt("value", K::OptionalDouble, ArgValue{})},
         "F.pad: (left, right) pairs from the last dim; constant, reflect or replicate",
         [](Bound a) { return pad(a.t(0), a.il(1), a.s(2), a.od(3).value_or(0.0)); }),
      op("tril", {input(), opt("diagonal", K::Int, i64(0))}, "lower triangle",
         [](Bound a) { return tril(a.t(0), a.i(1)); }),
      op("triu", {input(), opt("diagonal", K::Int, i64(0))}, "upper triangle",
         [](Bound a) { return triu(a.t(0), a.i(1)); }),
      // Tensor methods: views (the CLI writes them out contiguous) and copies.
      op("reshape", {input(), req("shape", K::IntList)}, "a view when possible, else a copy",
         [](Bound a) { return a.t(0).reshape(a.il(1)); }),
      op("permute", {input(), req("dims", K::IntList)}, "reorder dims",
         [](Bound a) { return a.t(0).permute(a.il(1)); }),
      op("transpose", {input(), req("dim0", K::Int), req("dim1", K::Int)}, "swap two dims",
         [](Bound a) { return a.t(0).transpose(a.i(1), a.i(2)); }),
      op("t", {input()}, "transpose of a <= 2-d tensor", [](Bound a) { return a.t(0).t(); }),
      op("expand", {input(), req("size", K::IntList)}, "broadcast to size (-1 keeps a size)",
         [](Bound a) { return a.t(0).expand(a.il(1)); }),
      op("squeeze", {input(), opt("dim", K::OptionalInt, ArgValue{})}, "drop size-1 dims",
         [](Bound a) { return a.none(1) ? a.t(0).squeeze() : a.t(0).squeeze(a.i(1)); }),
      op("unsqueeze", {input(), req("dim", K::Int)}, "insert a size-1 dim",
         [](Bound a) { return a.t(0).unsqueeze(a.i(1)); }),
      op("flatten", {input(), opt("start_dim", K::Int, i64(0)), opt("end_dim", K::Int, i64(-1))},
         "merge dims start_dim..end_dim", [](Bound a) { return a.t(0).flatten(a.i(1), a.i(2)); }),
      op("narrow", {input(), req("dim", K::Int), req("start", K::Int), req("length", K::Int)},
         "length entries from start along dim",
         [](Bound a) { return a.t(0).narrow(a.i(1), a.i(2), a.i(3)); }),
      op("select", {input(), req("dim", K::Int), req("index", K::Int)},
         "the slice at index along dim (drops dim)",
         [](Bound a) { return a.t(0).select(a.i(1), a.i(2)); }),
      op("contiguous", {input()}, "a row-major copy (input when already contiguous)",
         [](Bound a) { return a.t(0).contiguous(); }),
      op("clone", {input()}, "a copy", [](Bound a) { return a.t(0).clone(); }),
      op("to", {input(), req("dtype", K::DType)}, "cast (round to nearest even)",
         [](Bound a) { return a.t(0).to(a.dt(1)); }),
  };
}

}  // namespace

std::vector<OpSignature> detail::signature_rows() {
  std::vector<OpSignature> rows;
  for (auto family : {unary_ops, binary_ops, reduce_ops, norm_ops, linalg_ops, spatial_ops,
                      attention_ops, fused_ops, creation_ops, movement_ops}) {
    for (OpSignature& sig : family()) rows.push_back(std::move(sig));
  }
  return rows;
}

}  // namespace mpsim
